"""Rate_max search (``rsp_sdk.matrix.ratesearch``): doubling then bisecting over probe cells.

The search itself is checked against a known threshold (no engine, no clock); the whole path —
probe cells run by the matrix, judged by the oracle, resumed from their cell.json — on the Python
fixture engine with a configured throughput ceiling (``triple_cost_us``: every triple of a push
sleeps that long), which no rate above the ceiling can be sustained against.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from rsp_sdk.cli.matrix_progress import CellLines
from rsp_sdk.engine import registry
from rsp_sdk.matrix.ratesearch import Probe, search, sustained
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import RateSearch, load_spec
from tests.fixtures.adapters import ToyPyAdapter
from tests.test_matrix import write_inputs, write_spec


def test_search_doubles_then_bisects_to_the_threshold() -> None:
    asked: list[float] = []

    def probe(rate: float) -> Probe:
        asked.append(rate)
        return Probe(rate=rate, sustained=rate <= 1000, why="threshold 1000")

    cfg = RateSearch(start=100, max_rate=6400, bisect_steps=3)
    assert search(probe, cfg) == (1000.0, False)
    assert asked == [100, 200, 400, 800, 1600, 1200, 1000, 1100]
    asked.clear()  # sustained up to the cap: capped, never above it
    assert search(probe, RateSearch(start=300, max_rate=900)) == (900.0, True)
    assert asked == [300, 600, 900]
    asked.clear()  # not even the start: halve to a floor, then bisect
    assert search(probe, RateSearch(start=5000, max_rate=9000)) == (938.0, False)
    assert asked == [5000, 2500, 1250, 625, 938, 1094, 1016]
    asked.clear()  # no floor within the halvings: no Rate_max at all
    assert search(probe, RateSearch(start=5000, max_rate=9000, bisect_steps=1)) == (None, False)
    assert asked == [5000, 2500]


def test_a_probe_is_sustained_only_when_fed_in_time_and_correct() -> None:
    ok = {"key": "k", "state": "ok", "verdict": "correct", "rate_achieved": 950.0, "relations": 3}
    assert sustained({**ok, "latency_ms_max": 200.0}, 1000, 1000, 0.9).sustained
    slow = sustained({**ok, "rate_achieved": 600.0}, 1000, 1000, 0.9)
    assert not slow.sustained and "feeder reached 600 of 1000" in slow.why
    late = sustained({**ok, "latency_ms_max": 1500.0}, 1000, 1000, 0.9)
    assert not late.sustained and "1500 ms after closing" in late.why
    wrong = sustained({**ok, "verdict": "incorrect"}, 1000, 1000, 0.9)
    assert not wrong.sustained and wrong.why == "verdict incorrect"
    crashed = sustained({"state": "failed", "reason": "boom"}, 1000, 1000, 0.9)
    assert not crashed.sustained and crashed.why == "failed: boom"
    # specruns12: CQELS fed at a rate answered nothing, was not judged, and "sustained"
    unjudged = {**ok, "verdict": "not_judged", "reason": "fed off real time"}
    blind = sustained(unjudged, 1000, 1000, 0.9)
    assert not blind.sustained and blind.why == "verdict not_judged (fed off real time)"
    silent = sustained({**ok, "relations": 0}, 1000, 1000, 0.9)
    assert not silent.sustained and silent.why == "no window answered"
    # a spec that asks for no verdict: in time and answering is enough
    assert sustained({**unjudged, "latency_ms_max": 200.0}, 1000, 1000, 0.9, judged=False).sustained


def test_the_warm_up_windows_are_left_out_of_the_step_rule_and_listed() -> None:
    """C-SPARQL on lsbench: the first window 412 ms late (first evaluation), the others within
    45 ms; STEP 300 ms. With the default one warm-up window the rate is sustained and the probe
    names the window left out; with none the first window fails it."""
    ok = {"key": "k", "state": "ok", "verdict": "correct", "rate_achieved": 990.0}
    windows = [("q", 0, 1000.0, 412.0), ("q", 1, 2000.0, 45.0), ("q", 2, 3000.0, 17.0)]
    warm = sustained(ok, 1000, 300, 0.9, windows, RateSearch(start=1, max_rate=2).warmup_windows)
    assert warm.sustained, warm.why
    assert [(w.query, w.seq, w.latency_ms) for w in warm.warmup_excluded] == [("q", 0, 412.0)]
    assert "latency max 45 ms (warm-up left out: 1 window(s))" in warm.why
    # a stream too short at this rate: every answered window was warm-up, nothing shows
    # the engine kept up (C-SPARQL 0.9's probes of ren16 above 4,000 triples/s "sustained")
    short = sustained(ok, 1000, 300, 0.9, windows[:1], 1)
    assert not short.sustained and "no window answered after the warm-up" in short.why
    assert "too short at this rate" in short.why
    cold = sustained(ok, 1000, 300, 0.9, windows, 0)
    assert not cold.sustained and "412 ms after closing" in cold.why
    assert cold.warmup_excluded == []
    # per query: two instances each lose their own first window, a late later one still fails
    two = [*windows, ("q#2", 0, 1000.0, 400.0), ("q#2", 1, 2000.0, 350.0)]
    late = sustained(ok, 1000, 300, 0.9, two, 1)
    assert not late.sustained and "350 ms after closing" in late.why
    assert {(w.query, w.seq) for w in late.warmup_excluded} == {("q", 0), ("q#2", 0)}


@pytest.fixture
def toy() -> Iterator[None]:
    registry.register(ToyPyAdapter())
    yield
    registry.unregister("toy-py")


# perf only: the oracle's verdict is part of "sustained" (checked above, on rows), not of what
# the ceiling decides, and leaving Spark out keeps this test to seconds
CEILING_SPEC = """
metrics = ["perf"]
[[engines]]
name = "toy-py"
engine_config = { triple_cost_us = 2000 }
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
[rate_search]
start = 200
max_rate = 3200
bisect_steps = 1
"""


def test_rate_max_stays_under_the_engines_ceiling_and_resumes(toy: None, tmp_path: Path) -> None:
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, CEILING_SPEC)
    out = tmp_path / "out"
    log = io.StringIO()
    lines = CellLines("t", Console(file=log, width=300))
    first = run_matrix(load_spec(spec_path), spec_path, out, progress=lines)
    [found] = json.loads((out / "ratesearch.json").read_text())
    probes = found["probes"]
    # in a log, the probes after the one planned cell are numbered on their own ([3/1] before)
    ended = [line for line in log.getvalue().splitlines() if line.startswith("t [")]
    assert ended[0].startswith("t [1/1] ") and len(ended) == 1 + len(probes)
    for n, (line, p) in enumerate(zip(ended[1:], probes, strict=True), 1):
        assert line.startswith(f"t [Rate_max probe {n}] "), line
        assert f"/rate={p['rate']:g}/" in line, line
    # 2000 µs per triple: at most 500 triples/s, so every probe above 500 / 0.9 fails
    assert all(not p["sustained"] for p in probes if p["rate"] > 556)
    assert any(not p["sustained"] and "feeder reached" in p["why"] for p in probes)
    assert found["rate_max"] is not None and found["rate_max"] <= 556 and not found["capped"]
    assert first.ran == 1 + len(probes) and first.probe_keys == {p["key"] for p in probes}
    entry = [e for e in json.loads((out / "summary.json").read_text()) if "rate_max" in e]
    assert [e["rate_max"] for e in entry] == [found["rate_max"]]
    again = run_matrix(load_spec(spec_path), spec_path, out)  # every probe read back
    assert again.ran == 0
    assert json.loads((out / "ratesearch.json").read_text()) == [found]
    # the report's Rate_max table is the search's answer, not a rule of its own
    from rsp_sdk.report.build import build_report

    build_report(out, tmp_path / "report")
    table = (tmp_path / "report" / "tables" / "rate-max.md").read_text()
    row = next(line for line in table.splitlines() if "toy-py@subprocess" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == f"{found['rate_max']:,.0f}", row
    failed = [p for p in probes if not p["sustained"]]
    assert failed and all(f"{p['rate']:,.0f} ✗" in row for p in failed)


def test_memory_consumption_rate_follows_the_gc_cycles() -> None:
    """Ren et al.'s MCR = (mean heap before a GC − mean heap after) / mean time between maxima,
    here on samples a JVM could give: 100 → 300 MB, GC to 120, up to 320, GC to 100, …"""
    import pyarrow as pa

    from rsp_sdk.matrix.metrics import heap_mcr

    mb = 1_000_000
    s = 1_000_000_000
    heap = [100, 200, 300, 120, 220, 320, 100, 200]
    gcs = [0, 0, 0, 1, 1, 1, 2, 2]
    perf = pa.table(
        {
            "t_sys_ns": [i * s for i in range(len(heap))],
            "heap_used": [h * mb for h in heap],
            "gc_count": gcs,
        }
    )
    # maxima 300 (t=2 s) and 320 (t=5 s): period 3 s; minima 120 and 100: (310 − 110) / 3
    assert heap_mcr(perf) == pytest.approx(200 / 3)
    assert heap_mcr(perf.slice(0, 5)) is None  # one collection: no period
    no_jvm = perf.set_column(1, "heap_used", pa.nulls(len(heap), pa.int64()))
    assert heap_mcr(no_jvm) is None
    # V8: collections in every interval while the heap grows; the rise from 200 to 220 between
    # t=3 s and t=4 s brackets no collection, so only the two falls count
    v8 = perf.set_column(2, "gc_count", pa.array([0, 3, 6, 9, 12, 15, 18, 21]))
    assert heap_mcr(v8) == pytest.approx(200 / 3)
    growing = v8.set_column(1, "heap_used", pa.array([h * mb for h in range(100, 180, 10)]))
    assert heap_mcr(growing) is None  # was (mean "before" − mean "after") < 0


class _ToyB(ToyPyAdapter):
    name = "toy-py-b"


class _ToyC(ToyPyAdapter):
    name = "toy-py-c"


COMPARE_SPEC = """
metrics = ["lsbench"]
lsbench_epsilon_percent = 10.0
[[engines]]
name = "toy-py"
[[engines]]
name = "toy-py-b"
[[engines]]
name = "toy-py-c"
engine_config = { drop_push = 1 }
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
batch_size = 100
"""


def test_lsbench_comparability_within_epsilon_is_reported_and_shown(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """Two engines giving the same output are comparable (mm 0 %); one that lost its first
    push (a quarter of the stream) is not, within ε = 10 %; `rsp matrix show` says both."""

    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, COMPARE_SPEC)
    out = tmp_path / "out"
    for adapter in (ToyPyAdapter(), _ToyB(), _ToyC()):
        registry.register(adapter)
    try:
        run_matrix(load_spec(spec_path), spec_path, out)
    finally:
        for name in ("toy-py", "toy-py-b", "toy-py-c"):
            registry.unregister(name)
    mm = pd.read_parquet(out / "mismatch.parquet").set_index(["e1", "e2"])["mm_percent"]
    assert mm[("toy-py-b@subprocess", "toy-py@subprocess")] == 0.0
    assert mm[("toy-py@subprocess", "toy-py-c@subprocess")] > 10.0
    [comp] = pd.read_parquet(out / "comparability.parquet").to_dict("records")
    assert comp["epsilon_percent"] == 10.0 and not comp["comparable"]
    assert comp["max_mm_percent"] == mm.max()
    shown = subprocess.run(
        [*rsp_exe, "matrix", "show", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "LSBench comparability within ε" in shown.stdout
    assert "no (ε 10 %)" in shown.stdout
