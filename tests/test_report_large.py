"""`rsp report` on a long matrix: YABench's four repetitions made a 2.7 GB report (every
divergence's thousands of rows, every column of cell.json padded in Markdown, an eager
engine's thousands of windows as SVG vectors). Pure Python, no engine: the cells, outputs and
windows are the test's own, sized like YABench's at 1,000 stations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.conftest import run_rsp

EXPECTED = 2_500  # rows of the expected relation; the engine misses 2,000 and adds 300


def _binding(n: int) -> dict[str, Any]:
    return {"obs": {"type": "uri", "value": f"http://example.org/obs{n}"}}


def _cell(key: str, label: str, rep: int, **more: Any) -> dict[str, Any]:
    return {
        "key": key,
        "label": f"{label}/rep={rep}",
        "spec": "yabench",
        "engine": label.split("@")[0],
        "runtime": label.split("@")[1].split("/")[0],
        "query": "filter",
        "params": "{}",
        "stream": "sg1-1000",
        "feeding": "afap",
        "repetition": rep,
        "instances": 1,  # and no time scale: the concurrency figure's path, no figure drawn
        "time_scale": None,
        "state": "ok",
        "run_dir": f"cells/{key}",
        "wall_s": 30.0,
        **more,
    }


def _wrong(rep: int) -> dict[str, Any]:
    missing = [_binding(n) for n in range(2_000)]
    extra = [_binding(n) for n in range(10_000, 10_300)]
    detail = {"actual_seq": 1, "t0_ms": 0, "missing": missing, "extra": extra}
    why = "relation 1 (t_app 5000 ms), best t0 0 ms: relation differs; 2000 missing, 300 extra"
    return _cell(
        f"wrong{rep}",
        "rsprs@subprocess/filter",
        rep,
        verdict="incorrect",
        divergence=why,
        divergence_detail=json.dumps(detail),
    )


def _windows(n: int) -> pa.Table:
    ints = list(range(n))
    return pa.table(
        {
            "expected_seq": ints,
            "window_open_ms": [i * 10 for i in ints],
            "window_close_ms": [i * 10 + 10 for i in ints],
            "triples_in_window": [7] * n,
            "expected_size": [1] * n,
            "actual_size": [i % 2 for i in ints],
            "precision": [float(i % 2) for i in ints],
            "recall": [float(i % 2) for i in ints],
            "delay_ms": [1.0] * n,
        }
    )


def _results(root: Path) -> None:
    cells = [_wrong(rep) for rep in (1, 2, 3)]
    cells += [_cell("dense", "cqels@py4j/filter", 1, verdict="incorrect", divergence="x")]
    cells += [_cell("sparse", "csparql@py4j/filter", 1, verdict="correct", t0_ms=0)]
    for c in cells:
        folder = root / "cells" / c["key"]
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps(c))
    emitted = [_binding(n) for n in range(2_000, EXPECTED)] + [
        _binding(n) for n in range(10_000, 10_300)
    ]
    outputs = pa.table({"seq": [1] * len(emitted), "binding": [json.dumps(b) for b in emitted]})
    for rep in (1, 2, 3):
        pq.write_table(outputs, root / "cells" / f"wrong{rep}" / "outputs.parquet")
    pq.write_table(_windows(3_000), root / "cells" / "dense" / "windows.parquet")
    pq.write_table(_windows(50), root / "cells" / "sparse" / "windows.parquet")
    plan = [{k: c[k] for k in ("key", "label", "engine", "runtime", "query")} for c in cells]
    matrix = {"format": 1, "spec": {"name": "yabench"}, "plan": plan}
    (root / "matrix.json").write_text(json.dumps(matrix))


def test_a_long_matrix_makes_a_report_of_what_a_reader_reads(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    _results(tmp_path / "RESULTS")
    out = tmp_path / "REPORT"
    proc = run_rsp(rsp_exe, "report", tmp_path / "RESULTS", "-o", out)
    assert "Warning" not in proc.stderr, proc.stderr  # a reader sees the report, not pandas
    page = (out / "index.html").read_text()
    # three repetitions failing alike: one divergence shown, its rows cut to what a reader
    # reads, the differing ones first, and the count of what is left out
    assert page.count("First diverging relation of rsprs@subprocess") == 1
    assert "First diverging relation of rsprs@subprocess/filter/rep=1<" in page
    assert "<strong>expected</strong> (2500 rows)" in page
    assert "<strong>actual</strong> (800 rows)" in page
    assert page.count('<span class="minus">') == 40  # all 40 shown differ (2,000 missing)
    assert page.count('<span class="plus">') == 40  # the 300 extra rows first
    assert "… 2,460 more rows not shown, 1,960 of them differing" in page
    assert "… 760 more rows not shown, 260 of them differing" in page
    # the cells table: a row per cell, the paper's columns, no binding of a divergence
    cells = (out / "tables" / "cells.md").read_text()
    assert len(cells.splitlines()) == 2 + 5 and "example.org/obs" not in cells
    assert "example.org/obs" in (out / "data" / "cells.csv").read_text()  # the data keeps all
    # 3,000 windows: the points are one image in the vector figure; 50 windows stay vectors
    svgs = {p.name: p.read_text() for p in (out / "figures").glob("*-windows.svg")}
    assert len(svgs) == 2, sorted(svgs)
    images = {name: len(re.findall(r"<image ", text)) for name, text in svgs.items()}
    [dense] = [name for name, n in images.items() if n > 0]  # the 50-window one has none
    assert len(svgs[dense]) < 600_000, {name: len(text) for name, text in svgs.items()}
