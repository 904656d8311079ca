"""Judging a stream whose t0 classes are too many to evaluate (``rsp_sdk.oracle.narrow``):
only the candidates reporting at the engine's relation times are evaluated.

The witness is the full enumeration itself: on streams small enough to enumerate, a matrix
judged on the narrowed candidates gives the verdicts, t0 and YABench numbers of the one judged
on all of them (the fixture engine, and rsp-js on YABench's SG1). The candidate choice and the
size measure are checked against geometry worked out by hand.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import markupsafe
import numpy as np
import pytest

from rsp_sdk.cli.matrix_tables import verdict_table
from rsp_sdk.engine import registry
from rsp_sdk.matrix.notes import MARK_NOTE
from rsp_sdk.matrix.oracle_cache import OracleCache
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import load_spec
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.profile import ReportPolicy
from rsp_sdk.oracle import narrow, s2r
from rsp_sdk.query import load_query
from rsp_sdk.report.build import build_report
from rsp_sdk.streams.io import read_stream
from tests.fixtures.adapters import TOY_PROFILE, ToyPyAdapter
from tests.oracle_support import profile, spark
from tests.test_matrix import ORACLE_SPEC, write_inputs, write_spec

__all__ = ["spark"]

CLOSE = profile(
    ReportPolicy.WINDOW_CLOSE,
    ReportPolicy.NON_EMPTY_CONTENT,
    r2s="rstream",
    empty=False,
    time_unit_ms=1,
)
QUERY = (
    "REGISTER RSTREAM <http://ex.org/q> AS SELECT ?s "
    "FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE PT1S STEP PT1S] "
    "WHERE { WINDOW <http://ex.org/w> { ?s ?p ?o } }"
)


def _geometry(times: list[int]) -> s2r.Geometry:
    spec = load_query(QUERY)
    t = np.asarray(times, dtype=np.int64)
    return s2r.geometry(spec, t, [np.ones(len(t), dtype=bool)])


def test_the_candidates_kept_report_at_the_most_of_the_engines_times() -> None:
    """Elements at 100, 1,100, 2,100 ms; 1 s tumbling windows from o_0 = t0, reported at
    their close when they hold an element. Candidate 100 reports at 1,100, 2,100, 3,100;
    candidate 0 at 1,000, 2,000, 3,000; candidate 500 at 1,500, 2,500 (its windows start
    after the element at 100, and one opening at 2,500 is past the last element)."""
    geom = _geometry([100, 1100, 2100])
    cands = list(range(0, 1000))
    assert narrow.consistent_t0s(CLOSE, geom, cands, [1100, 2100, 3100]) == ([100], 3)
    assert narrow.consistent_t0s(CLOSE, geom, cands, [1000, 2000]) == ([0], 2)
    # one time each: both candidates kept, matching one time
    assert narrow.consistent_t0s(CLOSE, geom, cands, [1500, 2000]) == ([0, 500], 1)
    # a time no candidate reports at is ignored; none at all: nothing kept
    assert narrow.consistent_t0s(CLOSE, geom, cands, [1500, 1]) == ([500], 1)
    assert narrow.consistent_t0s(CLOSE, geom, cands, [7]) == ([], 0)
    assert narrow.consistent_t0s(CLOSE, geom, cands, []) == ([], 0)


def test_the_size_counts_each_distinct_window_content_once() -> None:
    """Elements at 100, 600, 1,100 ms. Candidate 0 sees {100, 600} then {1,100}: 3 triples.
    Candidate 200 sees {600, 1,100} (a window opening at 1,200 is past the last element): 2
    more. Candidate 700 sees {1,100}, the contents of candidate 0's second window: nothing
    more to evaluate."""
    geom = _geometry([100, 600, 1100])
    assert narrow.scope_triples(CLOSE, geom, [0]) == 3
    assert narrow.scope_triples(CLOSE, geom, [0, 200]) == 5
    assert narrow.scope_triples(CLOSE, geom, [0, 200, 700]) == 5


@pytest.fixture
def toy() -> Iterator[None]:
    registry.register(ToyPyAdapter())
    yield
    registry.unregister("toy-py")


KEYS = ("label", "verdict", "divergence", "precision", "recall", "gracious_recall", "relations")


def _classes(out: Path) -> dict[int, int]:
    import pyarrow.parquet as pq

    (folder,) = [f for f in (out / "expected").iterdir() if "narrowed" not in _inputs(f)]
    t = pq.read_table(folder / "classes.parquet")
    return dict(
        zip(t.column("t0").to_pylist(), t.column("representative").to_pylist(), strict=True)
    )


def _inputs(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "inputs.json").read_text())
    return doc


def _same_judgement(whole: list[dict[str, Any]], narrowed: list[dict[str, Any]], out: Path) -> None:
    """Equal verdicts and numbers; each narrowed t0 in the class of the whole one's."""
    first = {r["label"]: r for r in whole}
    classes = _classes(out)
    for r in narrowed:
        w = first[r["label"]]
        assert {k: r.get(k) for k in KEYS} == {k: w.get(k) for k in KEYS}
        assert classes[r["t0_ms"]] == classes[w["t0_ms"]]
        assert r["t0_narrowed"] and w.get("t0_narrowed") is None


def test_a_matrix_too_large_to_enumerate_judges_the_candidates_at_the_engines_times(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture engine (windows at multiples of 1 s from 0) on 400 triples every 10 ms:
    1,000 candidates in 101 classes ({0}, then [1, 10], [11, 20], … [991, 999]: a window
    opening at 1 to 10 loses the element at 0 and gains the one at 1,000), 35,050 triples to
    evaluate; one class holds 400. With
    the limit at 1,000 the candidates kept are those reporting at 1,000, 2,000, 3,000, 4,000:
    t0 = 0 alone. Verdicts, YABench numbers and t0 class are those of the full enumeration."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, ORACLE_SPEC.replace('"q1.rspql", "qf.rspql"', '"q1.rspql"'))
    whole = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    shutil.copytree(tmp_path / "out", tmp_path / "narrowed")
    narrowed_out = tmp_path / "narrowed"
    for cell in (narrowed_out / "cells").glob("*/cell.json"):
        cell.unlink()  # judged again from the run directory, the engine not rerun
    full_folder = next((narrowed_out / "expected").iterdir())
    monkeypatch.setenv("RSP_ORACLE_MAX_SCOPE", "1000")
    shutil.rmtree(full_folder)
    again = run_matrix(load_spec(spec_path), spec_path, narrowed_out)
    assert (again.ran, again.oracle_computed, again.oracle_reused) == (0, 1, 1)
    assert [r["verdict"] for r in again.rows] == ["correct", "correct"]
    _same_judgement(whole.rows, again.rows, tmp_path / "out")
    assert all(r["t0_ms"] == 0 for r in again.rows)
    (folder,) = (narrowed_out / "expected").iterdir()
    note = _inputs(folder)["narrowed"]
    assert (note["enumerated"], note["kept"], note["matched_times"]) == (1000, [0], 4)
    assert "1,000 t0 candidates form 101 classes" in note["why"]
    verdict = json.loads((narrowed_out / again.rows[0]["run_dir"] / "verdict.json").read_text())
    assert verdict["t0_narrowed"]["kept"] == [0]
    # the verdict table marks the narrowed verdicts and says what the mark means
    shown = _rendered(verdict_table(again.rows, "t"))
    assert "correct 0 *" in shown and "* judged against the t0 candidates reporting" in shown
    assert "*" not in _rendered(verdict_table(whole.rows, "t"))
    build_report(narrowed_out, tmp_path / "report")
    page = (tmp_path / "report" / "index.html").read_text()
    assert "correct ×2 *</a>" in page and str(markupsafe.escape(MARK_NOTE)) in page


def _rendered(table: Any) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(table)
    return " ".join(console.export_text().split())  # the caption wraps to the table's width


def test_an_engine_whose_relations_carry_no_time_is_not_judged_and_says_why(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Too large, and nothing to narrow by: the reason names the sizes (no hour-long job)."""
    write_inputs(tmp_path)
    stream = tmp_path / "stream.parquet"
    spec = load_query(tmp_path / "q1.rspql")
    cache = OracleCache(Store(tmp_path / "out"))
    monkeypatch.setenv("RSP_ORACLE_MAX_SCOPE", "1000")
    with pytest.raises(narrow.TooLarge, match="relations carry no application time") as exc:
        cache.expected(stream, "sha", spec, TOY_PROFILE, relation_times=list)
    assert "1,000 t0 candidates form 101 classes whose windows hold 35,050" in str(exc.value)
    with pytest.raises(narrow.TooLarge, match="fall at no candidate's reports"):
        cache.expected(stream, "sha", spec, TOY_PROFILE, relation_times=lambda: [7, 8])
    assert cache.computed == 0 and not list((tmp_path / "out").glob("expected/*/expected*"))
    monkeypatch.delenv("RSP_ORACLE_MAX_SCOPE")
    got = cache.expected(stream, "sha", spec, TOY_PROFILE, relation_times=list)
    assert got.narrowed is None and len(set((got.classes or {}).values())) == 101


YABENCH_SPEC = """
metrics = ["csrbench", "yabench"]
[[engines]]
name = "rspjs"
runtimes = ["subprocess"]
[[streams]]
name = "sg1"
generator = { name = "yabench", params = { stations = 100, interval_ms = 1000, duration_ms = 12000, seed = 1 } }
[[queries]]
files = ["QUERIES/filter.rspql", "QUERIES/avg.rspql"]
params = { RANGE = ["PT5S"], STEP = ["PT5S"], MIN = ["50"] }
"""


def test_rspjs_on_yabench_judged_on_narrowed_candidates_as_on_all(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rsp-js on SG1 with 100 stations (ms-jittered readings: every candidate of the 5 s
    slide its own class, as at 10,000 stations where the full enumeration is out of reach):
    YABench's E1 filter and E2 average judged on the candidates at rsp-js's relation times
    agree with the full enumeration — verdict, t0 class, precision, recall."""
    from rsp_sdk.engine.registry import get_adapter
    from tests.conftest import REPO
    from tests.real_engines import require

    require(get_adapter("rspjs"))
    body = YABENCH_SPEC.replace("QUERIES", str(REPO / "matrix" / "queries" / "yabench"))
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text('name = "ya"\n' + body)
    whole = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    assert sorted(r["verdict"] for r in whole.rows) == ["correct", "correct"]
    (stream_file,) = (tmp_path / "out" / "inputs").glob("*.parquet")
    rows = read_stream(stream_file).num_rows
    full = [_inputs(f)["t0s"] for f in (tmp_path / "out" / "expected").iterdir()]
    assert all(len(t) == 5000 for t in full)
    narrowed_out = tmp_path / "narrowed"
    shutil.copytree(tmp_path / "out", narrowed_out)
    shutil.rmtree(narrowed_out / "expected")
    for cell in (narrowed_out / "cells").glob("*/cell.json"):
        cell.unlink()
    # one class's windows hold each triple once (tumbling); the stream's classes, thousands
    monkeypatch.setenv("RSP_ORACLE_MAX_SCOPE", str(2 * rows))
    again = run_matrix(load_spec(spec_path), spec_path, narrowed_out)
    assert (again.ran, again.oracle_computed) == (0, 2)
    for folder in (tmp_path / "out" / "expected").iterdir():
        query = _inputs(folder)["query"]
        whole_rows = [r for r in whole.rows if r["query"].startswith(f"{query}[")]
        mine = [r for r in again.rows if r["query"].startswith(f"{query}[")]
        _same_judgement_in(whole_rows, mine, folder)
    for r in again.rows:
        verdict = json.loads((narrowed_out / r["run_dir"] / "verdict.json").read_text())
        assert verdict["t0_narrowed"]["enumerated"] == 5000
        assert len(verdict["t0_narrowed"]["kept"]) < 10


def _same_judgement_in(
    whole: list[dict[str, Any]], narrowed: list[dict[str, Any]], folder: Path
) -> None:
    """``_same_judgement`` with the classes of one expected folder."""
    import pyarrow.parquet as pq

    t = pq.read_table(folder / "classes.parquet")
    classes = dict(
        zip(t.column("t0").to_pylist(), t.column("representative").to_pylist(), strict=True)
    )
    assert len(set(classes.values())) > 100  # the full enumeration had many classes
    (w,) = whole
    (r,) = narrowed
    assert {k: r.get(k) for k in KEYS if k != "label"} == {
        k: w.get(k) for k in KEYS if k != "label"
    }
    assert classes[r["t0_ms"]] == classes[w["t0_ms"]]
    assert r["t0_narrowed"] and w.get("t0_narrowed") is None
