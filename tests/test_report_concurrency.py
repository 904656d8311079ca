"""The report's concurrency curves (CityBench: observation latency and memory against simultaneous
instances of a query) from a results folder of cell.json files written here — the medians per
instance count, one line per engine, query and time scale, unfinished runs left out. Pure
Python, no engine: the numbers are the test's own, so the figure's data can be checked."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from tests.conftest import run_rsp


def _cell(
    instances: int, rep: int, latency: float, rss: float, state: str = "ok"
) -> dict[str, Any]:
    key = f"q1-{instances}-{rep}-{state}"
    return {
        "key": key,
        "label": f"rsprs@subprocess/q1/x{instances}/time-scale=1/rep={rep}",
        "spec": "citybench",
        "engine": "rsprs",
        "runtime": "subprocess",
        "query": "q1",
        "params": "{}",
        "stream": "aarhus",
        "feeding": "time-scale",
        "time_scale": 1.0,
        "instances": instances,
        "repetition": rep,
        "state": state,
        "verdict": "correct" if state == "ok" else "not_judged",
        "t0_ms": 0 if state == "ok" else None,
        "obs_latency_ms_p50": latency,
        "peak_rss_mb": rss,
        "wall_s": 30.0,
    }


CELLS = [
    _cell(1, 1, 10.0, 100.0),
    _cell(1, 2, 30.0, 120.0),  # medians at 1 instance: 20 ms, 110 MB
    _cell(10, 1, 200.0, 300.0),
    _cell(20, 1, 900.0, 600.0),
    _cell(20, 2, 99999.0, 9999.0, state="timeout"),  # the part that ran: left out
]


def _report(rsp_exe: list[str], tmp_path: Path, cells: list[dict[str, Any]]) -> Path:
    """``rsp report`` of a results folder holding these cell.json files; the report folder."""
    results = tmp_path / "RESULTS"
    for c in cells:
        (results / "cells" / c["key"]).mkdir(parents=True)
        (results / "cells" / c["key"] / "cell.json").write_text(json.dumps(c))
    plan = [{k: c[k] for k in ("key", "label", "engine", "runtime", "query")} for c in cells]
    (results / "matrix.json").write_text(
        json.dumps({"format": 1, "spec": {"name": "citybench"}, "plan": plan})
    )
    out = tmp_path / "REPORT"
    proc = run_rsp(rsp_exe, "report", results, "-o", out)
    assert "Warning" not in proc.stderr, proc.stderr
    return out


def test_latency_and_memory_against_instances(rsp_exe: list[str], tmp_path: Path) -> None:
    out = _report(rsp_exe, tmp_path, CELLS)
    assert "concurrency" in json.loads((out / "report.json").read_text())["figures"]
    with (out / "data" / "concurrency.csv").open() as f:
        data = list(csv.DictReader(f))
    got = [
        (int(r["instances"]), float(r["obs_latency_ms_p50"]), float(r["peak_rss_mb"])) for r in data
    ]
    assert got == [(1, 20.0, 110.0), (10, 200.0, 300.0), (20, 900.0, 600.0)]
    assert {r["label"] for r in data} == {"rsprs@subprocess q1"}
    page = (out / "index.html").read_text()
    assert "simultaneous instances" in page and "no scalability curves" not in page


def _more(
    engine: str, runtime: str, query: str, scale: float, n: int, lat: float | None
) -> dict[str, Any]:
    c = _cell(n, 1, lat or 0.0, 100.0 * n)
    c.update(
        key=f"{engine}-{query}-{scale:g}-{n}",
        label=f"{engine}@{runtime}/{query}/x{n}/time-scale={scale:g}/rep=1",
        engine=engine,
        runtime=runtime,
        query=query,
        time_scale=scale,
        obs_latency_ms_p50=lat,
    )
    return c


def test_one_panel_per_query_one_colour_per_engine_one_style_per_time_scale(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """CityBench's nine queries × engines × two time scales on one pair of axes ran past ten
    lines: colours repeated and the legend covered the curves. Each query now has its panel
    pair, the legend names each engine@runtime once and each time scale once, and a panel no
    line of which has a latency (no result named an observation) says so."""
    cells = [
        _more(e, r, q, s, n, None if e == "cqels" else 10.0 * n * s)
        for e, r in (("rsprs", "subprocess"), ("cqels", "py4j"))
        for q in ("q1", "q10")
        for s in (1.0, 10.0)
        for n in (1, 10)
        if not (e == "rsprs" and q == "q10")  # q10: CQELS alone, here without a latency
    ]
    out = _report(rsp_exe, tmp_path, cells)
    with (out / "data" / "concurrency.csv").open() as f:
        data = list(csv.DictReader(f))
    assert {r["panel"] for r in data} == {"q1", "q10"}
    assert len(data) == len(cells)  # one median per series and instance count
    svg = (out / "figures" / "concurrency.svg").read_text()
    # matplotlib writes each text as a comment beside its glyph paths
    for text in ("q1", "q10", "rsprs@subprocess", "cqels@py4j", "time scale 1", "time scale 10"):
        assert svg.count(f"<!-- {text} -->") == 1, text
    assert svg.count("<!-- no latency -->") == 1  # q10's latency panel
