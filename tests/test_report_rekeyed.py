"""A matrix resumed after its cells were re-keyed counts each cell once (report and summary).

ren16 (specruns11) was resumed across adapter and artifact re-keyings: matrix.json's plan (the
union of every invocation's) and cells/ held some cells under two keys, so `rsp report` listed
each refused JTALIS cell twice and showed 41 finished cells both as finished and as missing.
Here the real matrix writes such a folder: three invocations of one spec whose limits change
between them (a limit is part of every key), on cells that are recorded without running an
engine (rsp-js asked for on a runtime that cannot carry it: unavailable) over the functional
spec's tiny stream, so no engine or Spark starts; the third invocation only plans (a matrix
killed right after planning). The runs take under a second each: started_at (whole seconds)
ties, and the cell planned later must win the tie.
"""

from __future__ import annotations

import json
from pathlib import Path

from rsp_sdk.matrix.run import planned, run_matrix
from rsp_sdk.matrix.spec import load_spec
from rsp_sdk.matrix.store import Store
from rsp_sdk.report.results import Results

SPEC = """
name = "rekeyed"
repetitions = 2
metrics = ["csrbench"]

[[engines]]
name = "rspjs"
runtimes = ["py4j"]

[[streams]]
name = "rooms"
import = {{ format = "trig", path = "{matrix}/functional/rooms.trig" }}

[[queries]]
files = ["{matrix}/queries/functional/filter.rspql"]

[feeding]
modes = ["afap"]

[limits]
timeout_s = {timeout}
"""
MATRIX = Path(__file__).parent.parent / "matrix"


def _spec(tmp: Path, timeout: int) -> Path:
    path = tmp / f"rekeyed-{timeout}.toml"
    text = SPEC.format(matrix=MATRIX, timeout=timeout)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_rekeyed_cell_is_counted_once(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS"
    first, second, third = (_spec(tmp_path, t) for t in (600, 601, 602))
    run_matrix(load_spec(first), first, results)
    run_matrix(load_spec(second), second, results)  # same cells, new keys: recorded again
    spec = load_spec(third)
    _, cells = planned(spec, third, results / "inputs", None)
    Store(results).open(spec, third, cells)  # planned under a third key, never run
    plan = json.loads((results / "matrix.json").read_text())["plan"]
    on_disk = sorted(results.glob("cells/*/cell.json"))
    assert (len(plan), len(on_disk)) == (6, 4), "the setting: 2 cells, 3 keys, 2 of them ran"

    got = Results(results)
    assert len(got.cells) == 2 and len(got.superseded) == 2
    assert sorted((c.query, c.repetition) for c in got.cells) == [("filter", 1), ("filter", 2)]
    assert all(c.state == "unavailable" for c in got.cells)
    assert got.missing == [], "a cell that finished under an older key is not missing"
    assert len(got.planned) == 2 and len(got.older_key) == 2
    assert {p.key for p in got.planned} == {c.key for c in cells}  # the newest keys
    second_keys = {json.loads(p.read_text())["key"] for p in on_disk}
    assert {c.key for c in got.cells} < second_keys
    progress = got.progress().to_dict("records")
    assert progress == [
        {"engine@runtime": "rspjs@py4j", "finished of planned": "2 of 2", "missing": 0}
    ]
    # the terminal tables (rsp matrix run / show) read the same rows
    assert sorted(r["key"] for r in Store(results).current_rows()) == sorted(
        c.key for c in got.cells
    )
    summary = json.loads((results / "summary.json").read_text())
    assert [e["repetitions"] for e in summary] == [2], summary
