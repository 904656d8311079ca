"""Start-up of the command line: ``rsp --help``.

Target (issue 18): under 0.5 s. The command line imports a command's machinery (pyarrow, Spark,
pandas, pyoxigraph, the engines) only when that command runs, so the help of every command is
quick. Both the wall time and the CPU time (user + system of the child) are reported, median of
five runs: on a loaded shared machine the wall time waits for a core, the CPU time does not.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import Result, bench

TARGET_S = 0.5
RUNS = 5


def _one(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


@bench("cli.help")
def help_startup() -> list[Result]:
    rsp = str(Path(sys.executable).parent / "rsp")
    runs = [_one([rsp, "--help"]) for _ in range(RUNS)]
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    target = f"< {TARGET_S} s"
    return [
        Result("rsp --help (wall)", wall, "s", target, TARGET_S / wall),
        Result("rsp --help (cpu)", cpu, "s", target, TARGET_S / cpu),
    ]
