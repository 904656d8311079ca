"""Report rendering speed: `rsp report` on a CSRBench results folder.

Target (issue 12): the report of `csrbench.toml` (every provisioned engine, 3 repetitions)
renders in under 20 s. The results folder is ``$RSP_REPORT_RESULTS`` when set (e.g. the
output of `rsp matrix run matrix/csrbench.toml`); otherwise the real rsp-js CSRBench runs
(Q1–Q7, judged by the oracle) are made once under out/bench-report/ and reused. The row notes
how many cells it rendered, so a smaller folder is never mistaken for the full matrix.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Result, bench

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 20.0


def _results() -> Path:
    given = os.environ.get("RSP_REPORT_RESULTS")
    if given:
        return Path(given)
    cached = ROOT / "out" / "bench-report"
    results = cached / "RESULTS"
    if (results / "matrix.json").exists():
        return results
    shutil.rmtree(cached, ignore_errors=True)
    cached.mkdir(parents=True)
    rsp = Path(sys.executable).parent / "rsp"
    subprocess.run(
        [str(rsp), "csrbench", "-e", "rspjs", "-o", str(cached / "csrbench")], check=False
    )
    sys.path.insert(0, str(ROOT))
    from tests.report_support import arrange

    return arrange([cached / "csrbench"], results)


@bench("report.render")
def render() -> list[Result]:
    from rsp_sdk.report import build_report

    results = _results()
    times, cells, figures = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(3):
            started = time.perf_counter()
            summary = build_report(results, Path(tmp) / f"r{i}")
            times.append(time.perf_counter() - started)
            cells, figures = summary.cells, summary.figures
    median = statistics.median(times)
    return [
        Result(
            "report render (median of 3)",
            median,
            "s",
            target=f"< {TARGET_S:g} s for csrbench.toml",
            ratio=TARGET_S / median,
            note=f"{cells} cells, {figures} figures from {results}",
        ),
        Result("report render per cell", 1000 * median / max(cells, 1), "ms"),
    ]
