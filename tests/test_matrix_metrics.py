"""The performance columns of cells.parquet hold what the run recorded.

Until now only their aggregation was tested (on rows written by hand) and a cell's RSS only as
positive. Here two real engines run one cell each: toy-py, which sleeps 100 ms in every push
(so its engine time and its latency have a floor no harness overhead can hide), and the Java
test engine on py4j (so heap and GC come from a JVM). Each column is checked against the run's
own records (pushed.parquet, perf.parquet, read with pandas) and against that floor.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import REPO
from tests.oracle_support import spark
from tests.test_matrix import write_inputs, write_spec

__all__ = ["spark"]  # the session's SparkSession fixture

DELAY_MS = 100
PERF_SPEC = f"""
metrics = ["perf"]
[[engines]]
name = "toy-py"
engine_config = {{ push_delay_ms = {DELAY_MS} }}
[[engines]]
name = "toy-java"
runtimes = ["py4j"]
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
batch_size = 50
"""


@pytest.fixture(scope="module")
def ran(
    rsp_exe: list[str], toy_cache: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """``rsp matrix run`` of PERF_SPEC: (its standard output, the results folder)."""
    tmp = tmp_path_factory.mktemp("perf")
    write_inputs(tmp)
    out = tmp / "results"
    adapters = ",".join(f"tests.fixtures.adapters:{a}" for a in ("ToyPyAdapter", "ToyJavaAdapter"))
    proc = subprocess.run(
        [*rsp_exe, "matrix", "run", str(write_spec(tmp, PERF_SPEC)), "-o", str(out)],
        env={
            **os.environ,
            "COLUMNS": "300",
            "PYTHONPATH": str(REPO),
            "RSP_ADAPTERS": adapters,
            "RSP_CACHE": str(toy_cache.root),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, out


@pytest.fixture(scope="module")
def cells(ran: tuple[str, Path]) -> dict[str, tuple[dict[str, Any], Path]]:
    """engine → (its cells.parquet row, its run directory)."""
    out = ran[1]
    frame = pd.read_parquet(out / "cells.parquet")
    return {r["engine"]: (r, out / r["run_dir"]) for r in frame.to_dict("records")}


def test_a_run_ends_with_its_tables_and_the_results_path(ran: tuple[str, Path]) -> None:
    stdout, out = ran
    assert "t: verdicts (t0 ms)" in stdout and "t: performance (medians)" in stdout, stdout
    assert "toy-java@py4j" in stdout and "toy-py@subprocess" in stdout, stdout
    assert stdout.rstrip().splitlines()[-1] == f"results: {out}", stdout


def test_feeding_columns_are_the_measured_pushes(
    cells: dict[str, tuple[dict[str, Any], Path]],
) -> None:
    """t = T/N (Ren et al.): T the time spent in the engine's push calls, N the triples."""
    for engine, (row, run_dir) in cells.items():
        pushed = pd.read_parquet(run_dir / "pushed.parquet")
        pushed = pushed[pushed["phase"] == "measure"]
        busy_s = (pushed["t_sys_end_ns"] - pushed["t_sys_start_ns"]).sum() / 1e9
        span_s = (pushed["t_sys_end_ns"].max() - pushed["t_sys_start_ns"].min()) / 1e9
        assert row["triples_pushed"] == pushed["count"].sum() == 400, engine
        assert row["engine_time_s"] == pytest.approx(busy_s), engine
        assert row["time_per_triple_us"] == pytest.approx(busy_s / 400 * 1e6), engine
        assert row["rate_achieved"] == pytest.approx(400 / span_s), engine
    toy_py, _ = cells["toy-py"]
    assert toy_py["engine_time_s"] >= 8 * DELAY_MS / 1000  # 8 pushes of 50, each sleeping


def test_latency_has_the_push_delay_as_its_floor(
    cells: dict[str, tuple[dict[str, Any], Path]],
) -> None:
    """A window closed by a push is answered after that push's sleep at the earliest."""
    row, _ = cells["toy-py"]
    assert DELAY_MS <= row["latency_ms_p50"] <= row["latency_ms_p95"] <= row["latency_ms_max"]
    java, _ = cells["toy-java"]
    assert 0 <= java["latency_ms_p50"] < row["latency_ms_p50"]


def test_resource_columns_are_the_sampler_s_records(
    cells: dict[str, tuple[dict[str, Any], Path]],
) -> None:
    """Peak RSS, mean CPU, most threads from perf.parquet; heap and GC only where a JVM is."""
    for engine, (row, run_dir) in cells.items():
        perf = pd.read_parquet(run_dir / "perf.parquet")
        assert len(perf) >= 1, engine
        assert row["peak_rss_mb"] == pytest.approx(perf["rss_bytes"].max() / 1e6), engine
        assert row["peak_rss_mb"] > 5, engine  # a Python (11 MB) or Java process, not empty
        assert row["cpu_mean_pct"] == pytest.approx(perf["cpu_percent"].mean()), engine
        assert row["threads_max"] == perf["threads"].max() >= 1, engine
    toy_py, _ = cells["toy-py"]
    assert pd.isna(toy_py["peak_heap_mb"]) and pd.isna(toy_py["gc_count"])
    java, run_dir = cells["toy-java"]
    perf = pd.read_parquet(run_dir / "perf.parquet")
    assert java["peak_heap_mb"] == pytest.approx(perf["heap_used"].max() / 1e6)
    assert java["peak_heap_mb"] > 1
    assert java["gc_count"] == perf["gc_count"].max() - perf["gc_count"].min() >= 0


def test_the_results_read_directly_in_pandas_polars_and_spark(
    ran: tuple[str, Path], spark: Any
) -> None:
    """cells.parquet as written, read by the three tools the results are for: the same cells,
    the same numbers (a type one of them cannot read would fail here)."""
    import polars as pl

    out = ran[1] / "cells.parquet"
    frame = pd.read_parquet(out).sort_values("engine")
    polars = pl.read_parquet(out).sort("engine")
    sparked = spark.read.parquet(str(out)).orderBy("engine").toPandas()
    assert polars.columns == list(frame.columns) == list(sparked.columns)
    for other in (polars.to_pandas(), sparked):
        assert list(other["engine"]) == list(frame["engine"]) == ["toy-java", "toy-py"]
        assert list(other["time_per_triple_us"]) == list(frame["time_per_triple_us"])
        assert list(other["key"]) == list(frame["key"])
