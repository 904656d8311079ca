"""Long oracle work shows progress on a terminal (the running Spark job and stage), nothing on a
pipe: the rendering of ``rsp_sdk.cli.sparkprogress`` on a forced terminal and a plain file."""

from __future__ import annotations

import io
import time
from typing import Any

from rich.console import Console

from rsp_sdk.cli.sparkprogress import spark_progress
from tests.oracle_support import spark

__all__ = ["spark"]


def _slow_job(session: Any, seconds: float = 1.0) -> None:
    """Two tasks of ``seconds`` each: a second is long enough for the poller to see the stage."""
    rdd = session.sparkContext.parallelize(range(2), 2)
    assert rdd.map(lambda x: time.sleep(seconds) or x).collect() == [0, 1]


def test_a_terminal_shows_the_label_and_the_running_spark_stage(spark: Any) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with spark_progress(console, "planning …") as relabel:
        relabel("expected output of 3 t0 classes")
        _slow_job(spark)
    shown = out.getvalue()
    assert "expected output of 3 t0 classes" in shown, shown
    assert "Spark job" in shown and "stage" in shown and "/2 tasks" in shown, shown


def test_a_pipe_shows_nothing(spark: Any) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    with spark_progress(console, "planning …") as relabel:
        relabel("expected output of 3 t0 classes")
        _slow_job(spark, 0.2)
    assert out.getvalue() == ""
