"""CityBench's observation latency, on a run directory whose numbers are the test's own.

Two streams, four pushes, and outputs written here: each expected latency is worked out by hand
below (first sighting per query and observation; an IRI recurring at two times is no
observation; literals and IRIs that are no stream subject are not looked up). Engine-run
witnesses: ``tests/test_wallclock.py`` (C-SPARQL 0.9, which reports no application time) and
CQELS's Rate_max below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rsp_sdk.matrix.obslatency import (
    CACHE,
    observation_latencies,
    observation_latency_metrics,
    relation_lags,
    with_observation_latency,
)
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import load_spec
from rsp_sdk.run.recorder import TABLES
from tests.oracle_support import readings_trig
from tests.real_engines import engine_missing

A, B = "http://ex.org/a", "http://ex.org/b"
MS = 1_000_000  # ns


def _uri(value: str) -> dict[str, str]:
    return {"type": "uri", "value": value}


def _run(tmp_path: Path) -> Path:
    stream = pa.table(
        {
            "stream": [A, A, A, B, B, A],
            "t_app_ms": [0, 0, 1000, 1000, 2000, 2000],
            "s": ["<o1>", "<o1>", "<o2>", "<o3>", "<o4>", "<sensor>"],
            "p": ["<p>"] * 6,
            "o": ['"1"'] * 6,
            "g": [None] * 6,
        }
    )
    # <sensor> is also the subject at A's first time: it recurs, so no observation
    stream = pa.concat_tables(
        [stream, stream.slice(0, 1).set_column(2, "s", pa.array(["<sensor>"]))]
    )
    pq.write_table(stream, tmp_path / "stream.parquet")
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(
        json.dumps({"stream": {"path": str(tmp_path / "stream.parquet"), "sha256": "x"}})
    )
    # A's times 0 and 1000 go in pushes starting at 10 ms and 1010 ms; B's 1000 and 2000 in one
    # push starting at 1020 ms (a batch spanning both times)
    pushes = [(A, 0, 0, 10), (A, 1000, 1000, 1010), (B, 1000, 2000, 1020), (A, 2000, 2000, 2010)]
    cols = {f.name: [] for f in TABLES["pushed"]}
    for i, (name, lo, hi, start) in enumerate(pushes):
        row = {
            "phase": "measure",
            "stream": name,
            "batch": i,
            "count": 1,
            "t_app_min_ms": lo,
            "t_app_max_ms": hi,
            "t_due_ns": start * MS,
            "t_sys_start_ns": start * MS,
            "t_sys_end_ns": (start + 1) * MS,
        }
        for k in cols:
            cols[k].append(row[k])
    pq.write_table(pa.table(cols, schema=TABLES["pushed"]), run / "pushed.parquet")
    rows = [
        ("q", 0, 500, {"x": _uri("o1"), "v": {"type": "literal", "value": "1"}}),
        ("q", 1, 1500, {"x": _uri("o1"), "y": _uri("o2")}),  # o1 seen before: o2 only
        ("q", 2, 1600, {"x": _uri("o3"), "s": _uri("sensor"), "z": _uri("elsewhere")}),
        ("q", 3, 2600, {"x": _uri("o4")}),
        ("q", 4, 3000, {"x": _uri("o4")}),  # Rstream's repetition: not a new sighting
        ("q2", 0, 700, {"x": _uri("o1")}),  # another query (instance) sees it on its own
    ]
    out = pa.table(
        {
            "query": [r[0] for r in rows],
            "seq": [r[1] for r in rows],
            "t_sys_ns": [r[2] * MS for r in rows],
            "t_app_ms": [None] * len(rows),
            "binding": [json.dumps(r[3]) for r in rows],
        },
        schema=TABLES["outputs"],
    )
    pq.write_table(out, run / "outputs.parquet")
    return run


def test_each_observation_counts_once_per_query_from_the_push_that_sent_it(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    # o1: 500 − 10; o2: 1500 − 1010; o3: 1600 − 1020; o4 (B at 2000, in B's 1020 ms push):
    # 2600 − 1020; q2's o1: 700 − 10
    assert sorted(observation_latencies(run)) == [490.0, 490.0, 580.0, 690.0, 1580.0]
    m = observation_latency_metrics(run)
    assert m["obs_latency_ms_p50"] == 580.0 and m["obs_latency_ms_max"] == 1580.0


def test_a_run_without_its_stream_or_outputs_has_no_observation_latency(
    tmp_path: Path,
) -> None:
    run = _run(tmp_path)
    (tmp_path / "stream.parquet").unlink()
    assert observation_latency_metrics(run) == dict.fromkeys(
        ("obs_latency_ms_p50", "obs_latency_ms_p95", "obs_latency_ms_max")
    )
    # a results folder moved elsewhere: the stream beside the cells, under inputs/<sha256>
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (tmp_path / "again").mkdir()
    _run(tmp_path / "again").rename(tmp_path / "cell")
    (tmp_path / "again" / "stream.parquet").rename(inputs / "x.parquet")
    cell = tmp_path / "cells" / "k"
    cell.parent.mkdir()
    (tmp_path / "cell").rename(cell)
    assert len(observation_latencies(cell)) == 5


def test_a_cell_recorded_before_the_columns_gets_them_once_from_its_run(tmp_path: Path) -> None:
    run = _run(tmp_path)
    old = {"key": "k", "state": "ok"}  # cell.json without obs_latency_*
    got = with_observation_latency(old, run)
    assert got["obs_latency_ms_p50"] == 580.0 and got["key"] == "k"
    (run / "outputs.parquet").unlink()  # now only the kept numbers can give them
    assert with_observation_latency(old, run)["obs_latency_ms_max"] == 1580.0
    assert json.loads((run / CACHE).read_text())["obs_latency_ms_p95"] is not None
    recorded = {**old, "obs_latency_ms_p50": None}  # recorded with the columns: as it is
    assert with_observation_latency(recorded, run) == recorded


def test_each_relation_lags_the_newest_observation_it_names(tmp_path: Path) -> None:
    """The Rate_max STEP rule's stand-in for engines without application time: relation 1
    names o1 (sent at 10 ms) and o2 (1010 ms), so it lags 1500 − 1010. Relations 3 and 4
    (2600 and 3000 ms) came after the last push ended (2011 ms): a wall-clock window closing
    then waited on the clock, not on the engine, so they are left out."""
    got = relation_lags(_run(tmp_path))
    assert got == [
        ("q", 0, 0.0, 490.0),
        ("q", 1, 1000.0, 490.0),
        ("q", 2, 1010.0, 580.0),
        ("q2", 0, 0.0, 690.0),
    ]


READINGS = 400  # one reading every 5 ms: 800 triples, 4 s at 200 triples/s

RATE_SPEC = """
name = "cqels-rate"
metrics = ["perf"]
[[engines]]
name = "cqels"
runtimes = ["py4j"]
[[streams]]
name = "readings"
import = { format = "trig", path = "readings.trig" }
[[queries]]
files = ["readings.rspql"]
[feeding]
modes = ["rate"]
rates = [200]
[rate_search]
start = 200
max_rate = 400
bisect_steps = 0
"""

RATE_QUERY = """PREFIX ex: <http://example.org/>
REGISTER ISTREAM ex:readings AS
SELECT ?s ?v
FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT1S STEP PT1S]
WHERE { WINDOW ex:w { ?s ex:value ?v ; ex:unit ex:celsius } }
"""


def test_cqels_rate_max_is_measured_from_the_observations_its_relations_name(
    tmp_path: Path,
) -> None:
    """CQELS windows its wall clock: its relations carry no application time, so no window
    latency, and every probe used to fail "no window answered" (Ren et al. measured CQELS's
    Rate_max). Each relation now counts from the push of the newest reading it names; CQELS
    answers each reading as it arrives, well within the 1 s STEP at these rates."""
    missing = engine_missing("cqels")
    if missing:
        pytest.skip(missing)
    (tmp_path / "readings.trig").write_text(
        readings_trig([5 * i for i in range(READINGS)], " ; ex:unit ex:celsius"), encoding="utf-8"
    )
    (tmp_path / "readings.rspql").write_text(RATE_QUERY, encoding="utf-8")
    spec_path = tmp_path / "rate.toml"
    spec_path.write_text(RATE_SPEC, encoding="utf-8")
    out = tmp_path / "out"
    run_matrix(load_spec(spec_path), spec_path, out)
    [found] = json.loads((out / "ratesearch.json").read_text())
    assert [p["rate"] for p in found["probes"]] == [200, 400]
    assert all(p["sustained"] for p in found["probes"]), found["probes"]
    assert found["rate_max"] == 400 and found["capped"]
    for p in found["probes"]:
        run = out / "cells" / p["key"]
        assert json.loads((run / "cell.json").read_text())["latency_ms_max"] is None
        lags = relation_lags(run)
        assert len(lags) >= READINGS // 2, len(lags)  # a relation per reading (Istream)
        assert all(0 <= lag < 1000 for *_, lag in lags), max(lag for *_, lag in lags)
        assert "ms after the newest observation it names was sent" in p["why"], p["why"]
