"""Report rendering speed: `rsp report` on a CSRBench results folder.

Target (issue 12): the report of `csrbench.toml` (every provisioned engine, 3 repetitions)
renders in under 20 s. The results folder is ``$RSP_REPORT_RESULTS`` when set (e.g. the
output of `rsp matrix run matrix/csrbench.toml` with every engine provisioned); otherwise the
rsp-js cells of that spec, run once into out/bench-report/RESULTS and resumed afterwards. The
row notes how many cells it rendered, so a smaller folder is never mistaken for the full one.
"""

from __future__ import annotations

import os
import resource
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
    """``$RSP_REPORT_RESULTS``, or the rsp-js cells of matrix/csrbench.toml run (or resumed:
    the matrix skips finished cells) into out/bench-report/RESULTS."""
    given = os.environ.get("RSP_REPORT_RESULTS")
    if given:
        return Path(given)
    results = ROOT / "out" / "bench-report" / "RESULTS"
    rsp = Path(sys.executable).parent / "rsp"
    spec = ROOT / "matrix" / "csrbench.toml"
    cmd = [str(rsp), "matrix", "run", str(spec), "--only", "engine=rspjs", "-o", str(results)]
    subprocess.run(cmd, check=False)  # exit 1 = a cell judged incorrect: still a report
    return results


def _cpu_s() -> float:
    """CPU seconds of this process and of its finished children (the figure workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@bench("report.render")
def render() -> list[Result]:
    from rsp_sdk.report import build_report

    results = _results()
    times, cpus, cells, figures = [], [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(3):
            started, cpu = time.perf_counter(), _cpu_s()
            summary = build_report(results, Path(tmp) / f"r{i}")
            times.append(time.perf_counter() - started)
            cpus.append(_cpu_s() - cpu)
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
        Result(
            "report render CPU (median of 3)",
            statistics.median(cpus),
            "s",
            note="this process + its figure workers: what a busy machine does not inflate",
        ),
    ]
