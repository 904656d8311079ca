"""One SparkSession per process, embedded (``local[*]``) or on a cluster (``--spark-master``).

The oracle's job is small-to-medium data with many tiny tasks, so shuffles use few partitions,
the UI is off, Spark binds to 127.0.0.1, and Python workers run the same interpreter as the
driver (pyoxigraph and pyarrow must be importable there). ANSI mode is off on purpose: the
SPARQL-to-SQL compiler relies on NULL for a failed cast (SPARQL's expression error).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

_LOCK = threading.Lock()


def get_spark(master: str | None = None, *, partitions: int | None = None) -> Any:
    """The process's SparkSession, created on first use with the oracle's configuration."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with _LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            if master is not None and active.sparkContext.master != master:
                raise RuntimeError(
                    f"a SparkSession on {active.sparkContext.master} is already running in this "
                    f"process; one session per process (asked for {master})"
                )
            return active
        cores = os.cpu_count() or 2
        builder = (
            SparkSession.builder.appName("rsp-oracle")
            .master(master or "local[*]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(partitions or max(2, min(8, cores))))
            .config("spark.default.parallelism", str(partitions or max(2, min(8, cores))))
            .config("spark.sql.ansi.enabled", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.adaptive.enabled", "true")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.python.worker.reuse", "true")
            .config("spark.sql.session.timeZone", "UTC")
            # local mode runs every task in the driver JVM: window groups of a few hundred
            # thousand elements need more than Spark's 1 GiB default
            .config("spark.driver.memory", os.environ.get("RSP_SPARK_DRIVER_MEMORY", "4g"))
        )
        spark = _launch(builder)
        spark.sparkContext.setLogLevel("ERROR")
        return spark


def _launch(builder: Any) -> Any:
    """``getOrCreate``, killing the JVM it started if it is interrupted (Ctrl-C) or fails.

    PySpark launches the JVM, then waits for it to write its gateway port into a temporary
    folder; interrupted in that wait, it deletes the folder and drops the JVM, which then
    waits for a connection forever (SIGINT is ignored in it): a JVM left behind by every
    Ctrl-C at the wrong moment. Only processes that appeared during the launch are killed.
    """
    import psutil

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    try:
        return builder.getOrCreate()
    except BaseException:
        for child in me.children(recursive=True):
            if child.pid not in before:
                with contextlib.suppress(psutil.Error):
                    child.kill()
        raise


def stop_spark() -> None:
    """Stop the process's session (tests and the CLI call this when done)."""
    from pyspark.sql import SparkSession

    with _LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()


_SMALL_LOCK = threading.Lock()
_SMALL_DEPTH: dict[int, tuple[int, str | None]] = {}


@contextlib.contextmanager
def without_adaptive(spark: Any) -> Iterator[None]:
    """Plan the queries run inside without adaptive execution (for small inputs only).

    Adaptive execution re-plans after each stage, and runs each stage as a Spark job of its
    own: on a few thousand rows that planning (100–200 ms a query here) costs more than the
    work, and the runtime statistics it waits for change nothing. The setting is the session's,
    so threads of one process (the matrix) share it: the first to enter turns it off, the last
    to leave restores it; a large query planned meanwhile only loses speed, never changes its
    result.
    """
    key = id(spark)
    with _SMALL_LOCK:
        depth, saved = _SMALL_DEPTH.get(key, (0, None))
        if depth == 0:
            saved = spark.conf.get("spark.sql.adaptive.enabled", None)
            spark.conf.set("spark.sql.adaptive.enabled", "false")
        _SMALL_DEPTH[key] = (depth + 1, saved)
    try:
        yield
    finally:
        with _SMALL_LOCK:
            depth, saved = _SMALL_DEPTH[key]
            if depth == 1:
                del _SMALL_DEPTH[key]
                if saved is None:
                    spark.conf.unset("spark.sql.adaptive.enabled")
                else:
                    spark.conf.set("spark.sql.adaptive.enabled", saved)
            else:
                _SMALL_DEPTH[key] = (depth - 1, saved)
