"""The result tables give the axes a spec varies besides the query (stream, instances, time
scale) their own columns instead of folding those cells into one as repetitions (pure Python:
a results folder of cell.json files written here, no engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from rsp_sdk.cli.matrix_tables import verdict_table
from rsp_sdk.report.results import Results
from rsp_sdk.report.sections.verdicts import grid


def _cell(
    query: str, instances: int, scale: float, verdict: str, stream: str = "aarhus"
) -> dict[str, Any]:
    key = f"{query}-{stream}-{instances}-{scale:g}"
    label = f"rspjs@subprocess/{query}/x{instances}/time-scale={scale:g}/rep=1"
    return {
        "key": key,
        "label": label,
        "spec": "citybench",
        "engine": "rspjs",
        "runtime": "subprocess",
        "query": query,
        "params": "{}",
        "stream": stream,
        "feeding": "time-scale",
        "time_scale": scale,
        "instances": instances,
        "state": "ok",
        "verdict": verdict,
        "t0_ms": -2000 if verdict == "correct" else None,
    }


CITYBENCH = [
    _cell("q4", 1, 1.0, "correct"),
    _cell("q4", 1, 10.0, "correct"),
    _cell("q4", 10, 1.0, "incorrect"),
    _cell("q4", 10, 10.0, "correct"),
]


def _results(tmp_path: Path, cells: list[dict[str, Any]], planned: list[dict[str, Any]]) -> Results:
    for c in cells:
        (tmp_path / "cells" / c["key"]).mkdir(parents=True)
        (tmp_path / "cells" / c["key"] / "cell.json").write_text(json.dumps(c))
    plan = [
        {k: c[k] for k in ("key", "label", "engine", "runtime", "query", "stream", "instances")}
        for c in planned
    ]
    (tmp_path / "matrix.json").write_text(
        json.dumps({"format": 1, "spec": {"name": "citybench"}, "plan": plan})
    )
    return Results(tmp_path)


def test_report_grid_has_a_column_per_instances_and_time_scale(tmp_path: Path) -> None:
    """x1/x10 at time scales 1/10 were one column ``q4: incorrect ×4 …``; now four columns,
    four series, and a planned cell without cell.json lands in its own column (its time scale
    read from the label)."""
    missing = _cell("q4", 20, 1.0, "correct")
    results = _results(tmp_path, CITYBENCH, [*CITYBENCH, missing])
    assert results.split_axes == ("instances", "time_scale")
    _, cols, cells = grid(results)
    assert cols == [
        "q4 · x1 · time-scale=1",
        "q4 · x1 · time-scale=10",
        "q4 · x10 · time-scale=1",
        "q4 · x10 · time-scale=10",
        "q4 · x20 · time-scale=1",
    ]
    assert len(results.series()) == 4
    assert cells[("rspjs@subprocess", "q4 · x10 · time-scale=1")].text.startswith("incorrect")
    assert cells[("rspjs@subprocess", "q4 · x1 · time-scale=10")].text.startswith("correct")
    assert cells[("rspjs@subprocess", "q4 · x20 · time-scale=1")].text == "missing"


def test_report_grid_splits_streams_and_keeps_single_axis_headers(tmp_path: Path) -> None:
    """ren16's stream sweep: one column per stream; the axes a spec does not vary (one
    instance count, no time scale) add nothing to the header."""
    cells = [_cell("q1", 1, 1.0, "correct", stream=s) for s in ("water-r1000", "water-r5000")]
    results = _results(tmp_path, cells, cells)
    assert results.split_axes == ("stream",)
    _, cols, _ = grid(results)
    assert cols == ["q1 · water-r1000", "q1 · water-r5000"]


@pytest.mark.parametrize("width", [80, 250])
def test_terminal_verdicts_give_each_varying_axis_its_own_column(width: int) -> None:
    console = Console(record=True, width=width)
    console.print(verdict_table(CITYBENCH, "citybench: verdicts (t0 ms)", console.width))
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= width
    if width == 80:  # one line per engine × query × instances × time scale
        assert "instances" in text and "time scale" in text
        lines = [" ".join(line.replace("│", " ").split()) for line in text.splitlines()]
        assert "rspjs@subprocess q4 1 1 correct -2000" in lines
        assert "q4 10 1 incorrect" in lines and "q4 10 10 correct -2000" in lines
    else:  # the grid: one column per query and value
        header = next(line for line in text.splitlines() if "engine@runtime" in line)
        for col in ("q4 · x1 · time-scale=1", "q4 · x10 · time-scale=10"):
            assert col in header


def test_terminal_verdicts_of_a_spec_without_those_axes_are_unchanged() -> None:
    rows = [{**_cell(q, 1, 1.0, "correct"), "time_scale": None, "label": q} for q in ("q1", "q2")]
    console = Console(record=True, width=250)
    console.print(verdict_table(rows, "v", console.width))
    header = next(line for line in console.export_text().splitlines() if "engine@runtime" in line)
    assert [h.strip() for h in header.split("┃")[2:4]] == ["q1", "q2"], header


def test_experiments_get_their_own_column_where_the_spec_names_several(tmp_path: Path) -> None:
    """YABench's E3 and E4 run one join query: with the same stream their cells were folded
    into one column as if repetitions (``1 correct/1 incorrect``); each experiment is now its
    own column, named in the header and in the narrow table."""
    e3 = {**_cell("join", 1, 1.0, "correct", stream="sg1-1"), "group": "E3", "key": "a"}
    e4 = {**_cell("join", 1, 1.0, "incorrect", stream="sg1-1"), "group": "E4", "key": "b"}
    e1 = {**_cell("filter", 1, 1.0, "correct", stream="sg1-50"), "group": "E1", "key": "c"}
    rows = [e3, e4, e1]
    results = _results(tmp_path, rows, rows)
    assert results.split_axes == ("group", "stream")
    _, cols, cells = grid(results)
    assert cols == ["filter · E1 · sg1-50", "join · E3 · sg1-1", "join · E4 · sg1-1"]
    assert cells[("rspjs@subprocess", "join · E3 · sg1-1")].text.startswith("correct")
    assert cells[("rspjs@subprocess", "join · E4 · sg1-1")].text.startswith("incorrect")
    console = Console(record=True, width=80)
    console.print(verdict_table(rows, "yabench: verdicts (t0 ms)", console.width))
    lines = [
        " ".join(line.replace("│", " ").split()) for line in console.export_text().splitlines()
    ]
    assert any("experiment" in line for line in lines)
    assert "rspjs@subprocess join E3 sg1-1 correct -2000" in lines
    assert "join E4 sg1-1 incorrect" in lines


def test_summary_keeps_experiments_apart() -> None:
    from rsp_sdk.matrix.aggregate import summary

    rows = [
        {**_cell("join", 1, 1.0, v, stream="sg1-1"), "group": g, "repetition": 1}
        for g, v in (("E3", "correct"), ("E4", "incorrect"))
    ]
    found = {(e["group"], tuple(e["verdicts"])) for e in summary(rows)}
    assert found == {("E3", ("correct",)), ("E4", ("incorrect",))}


def test_the_narrow_table_wraps_a_templated_query_between_its_parameters() -> None:
    """In 80 columns a templated name does not fit its column: it is cut after a parameter's
    comma (``join[DELTA=10,`` / ``RANGE=PT5S,``), never inside one (``RANGE=P`` / ``T5S``)."""
    name = "join[DELTA=10,RANGE=PT5S,STEP=PT5S]"
    rows = [
        {**_cell(name, 1, 1.0, v, stream="sg1-1"), "group": g, "key": g}
        for g, v in (("E3", "correct"), ("E4", "incorrect"))
    ] + [{**_cell("filter[MIN=50,RANGE=PT5S,STEP=PT5S]", 1, 1.0, "correct"), "group": "E1"}]
    console = Console(record=True, width=80)
    console.print(verdict_table(rows, "yabench: verdicts (t0 ms)", console.width))
    text = console.export_text()
    assert "experiment" in text  # the narrow form: the grid does not fit
    cells = [line.split("│")[2].strip() for line in text.splitlines() if line.count("│") > 2]
    pieces = [c for c in cells if c]
    assert pieces and all(p.endswith((",", "]")) for p in pieces), pieces
    assert "".join(pieces).count(name) == 2  # the pieces put back together: the name
