"""Foundation speed: YABench generation and .n3t import."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Result, bench
from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench
from rsp_sdk.streams.importers.n3t import read_n3t
from rsp_sdk.streams.io import write_stream

SHARED = Path(
    os.environ.get("RSP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


@bench("streams.generate_yabench")
def generate() -> list[Result]:
    """`rsp generate yabench --stations 10000 --interval 1000 --duration 30000`: ≤ 5 s."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        params = YabenchParams(stations=10_000, interval_ms=1000, duration_ms=30_000)
        table, meta = generate_yabench(params)
        write_stream(table, Path(tmp) / "sg1.parquet", meta)
        elapsed = time.perf_counter() - started
        # The exact command, as a user runs it (interpreter start and imports included).
        rsp = Path(sys.executable).with_name("rsp")
        out = Path(tmp) / "cli.parquet"
        cmd = [
            str(rsp),
            "generate",
            "yabench",
            "--stations",
            "10000",
            "--interval",
            "1000",
            "--duration",
            "30000",
            "-o",
            str(out),
        ]
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        cli = time.perf_counter() - started
    return [
        Result("generate yabench 2.1M triples, in-process", elapsed, "s", "≤ 5 s", 5.0 / elapsed),
        Result("generate yabench throughput", table.num_rows / elapsed, "triples/s"),
        Result("`rsp generate yabench --stations 10000 …` wall time", cli, "s", "≤ 5 s", 5.0 / cli),
    ]


@bench("streams.import_n3t")
def import_n3t() -> list[Result]:
    """Import csrbench-inputstream.n3t at ≥ 200k triples/s (best of 5 runs)."""
    src = SHARED / "YABench+csrbench-validation" / "csrbench-inputstream.n3t"
    best = float("inf")
    rows = 0
    for _ in range(5):
        started = time.perf_counter()
        rows = read_n3t(src).num_rows
        best = min(best, time.perf_counter() - started)
    rate = rows / best
    return [
        Result("import csrbench-inputstream.n3t", rate, "triples/s", "≥ 200k/s", rate / 200_000)
    ]
