"""One SparkSession per process, embedded (``local[*]``) or on a cluster (``--spark-master``).

The oracle's job is small-to-medium data with many tiny tasks, so shuffles use few partitions,
the UI is off, Spark binds to 127.0.0.1, and Python workers run the same interpreter as the
driver (pyoxigraph and pyarrow must be importable there). ANSI mode is off on purpose: the
SPARQL-to-SQL compiler relies on NULL for a failed cast (SPARQL's expression error).

Spark's own log lines (the JVM's start-up warnings, log4j) are not the user's business: the
JVM's standard error goes to a log file unless ``RSP_VERBOSE`` is set (``rsp --verbose``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rsp_sdk.oracle import cds

_LOCK = threading.Lock()
VERBOSE_ENV = "RSP_VERBOSE"


def verbose() -> bool:
    """Whether Spark's own log lines are shown (``rsp --verbose`` sets ``RSP_VERBOSE=1``)."""
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


#: The driver JVM's options besides class data sharing; set (even empty), it replaces
#: ``SMALL_JAVA_OPTIONS`` whatever the session is started for.
JAVA_OPTIONS_ENV = "RSP_SPARK_JAVA_OPTIONS"
#: A session started for small inputs compiles with C1 only. On a few thousand rows the JVM's
#: time goes to starting and warming up, and HotSpot's C2 compiler threads take a core of this
#: 2-core machine for most of a short run: C1 only halved Spark's start (9.4 s to 4.7 s) and
#: took CSRBench's 21 runs from 30.7 s to 19.6 s (quiet machine, ``nox -s bench --
#: oracle.small``). C1's code is slower on long hot loops, so sessions for large or unknown
#: inputs (the matrix's) keep the full tiered JIT.
SMALL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


#: Always among the driver JVM's options, whatever ``JAVA_OPTIONS_ENV`` says. In local mode
#: Spark installs no uncaught-exception handler: an OutOfMemoryError in a task thread exits
#: the JVM (the executor's own handler), but one in any other thread only ends that thread.
#: YABench E3 at 200 stations (specruns12) ran out of heap in "task-result-getter-0"
#: deserialising a task's result: the job then waited forever for a result nobody would
#: deliver, toArrow with it, at 0 % CPU. Exiting turns that hang into the dead JVM the matrix
#: already reports (``forget_dead_session``: the cell says the JVM died and how to raise the
#: heap) and replaces.
ALWAYS_JAVA_OPTIONS = "-XX:+ExitOnOutOfMemoryError"


def java_options(*, small: bool) -> str:
    """The driver JVM's options besides class data sharing (``JAVA_OPTIONS_ENV``)."""
    return os.environ.get(JAVA_OPTIONS_ENV, SMALL_JAVA_OPTIONS if small else "").strip()


BROADCAST_ENV = "RSP_SPARK_BROADCAST_THRESHOLD"


def broadcast_threshold() -> str:
    """Largest join side Spark hashes whole instead of sorting and shuffling both sides.

    Spark's 10 MB default is sized for clusters, where a broadcast copies the table to every
    executor. In local mode, and for the oracle's window contents on a small cluster, a hash
    table of a few hundred MB is cheaper than sorting both sides of the join: at 21 M triples
    the oracle's Q6-shaped join (two observations of one sensor) took 88–90 s as a sort-merge
    join and 22–23 s hashed, Q1 18.7 → 17.3 s, with the same peak memory (9.7 GB). Spark
    sizes a filtered scan by its whole file, so only the window contents whose file is under
    the threshold are hashed; a larger stream falls back on the sort-merge join."""
    return os.environ.get(BROADCAST_ENV, "256m")


def get_spark(
    master: str | None = None, *, partitions: int | None = None, small: bool = False
) -> Any:
    """The process's SparkSession, created on first use with the oracle's configuration.

    ``small``: the session is started for small inputs only (``SMALL_JAVA_OPTIONS``); it has
    no effect on a session that is already running.
    """
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
        memory = os.environ.get("RSP_SPARK_DRIVER_MEMORY", "4g")
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
            .config("spark.sql.autoBroadcastJoinThreshold", broadcast_threshold())
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.python.worker.reuse", "true")
            .config("spark.sql.session.timeZone", "UTC")
            # local mode runs every task in the driver JVM: window groups of a few hundred
            # thousand elements need more than Spark's 1 GiB default
            .config("spark.driver.memory", memory)
        )
        sharing = cds.java_options(memory)  # a faster cold start (class data sharing)
        own = f"{ALWAYS_JAVA_OPTIONS} {java_options(small=small)}".strip()
        builder = builder.config("spark.driver.extraJavaOptions", f"{sharing} {own}".strip())
        try:
            spark = _launch(builder, quiet=bool(sharing))
        except Exception:
            if not sharing:
                raise
            cds.discard()  # a bad archive must not stop Spark: once more, without it
            spark = _launch(builder.config("spark.driver.extraJavaOptions", own))
        if not verbose():  # verbose: Spark's own level (WARN), as --verbose promises
            spark.sparkContext.setLogLevel("ERROR")
        return spark


def _launch(builder: Any, *, quiet: bool = False) -> Any:
    """``getOrCreate``, killing the JVM it started if it is interrupted (Ctrl-C) or fails.

    PySpark launches the JVM, then waits for it to write its gateway port into a temporary
    folder; interrupted in that wait, it deletes the folder and drops the JVM, which then
    waits for a connection forever (SIGINT is ignored in it): a JVM left behind by every
    Ctrl-C at the wrong moment. Only processes that appeared during the launch are killed.
    ``quiet``: the JVM's log is not shown on failure (the caller tries again).
    """
    import psutil

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    handler = signal.getsignal(signal.SIGINT)
    log = _log_path()
    try:
        with _jvm_stderr(log):
            spark = builder.getOrCreate()
    except BaseException:
        for child in me.children(recursive=True):
            if child.pid not in before:
                with contextlib.suppress(psutil.Error):
                    child.kill()
        # why Spark did not start is now the user's business
        if log is not None and log.exists() and not quiet:
            sys.stderr.write(log.read_text(errors="replace")[-4000:])
        raise
    if threading.current_thread() is threading.main_thread() and not _is_ours(handler):
        signal.signal(signal.SIGINT, _on_sigint(handler))
    return spark


def _is_ours(handler: Any) -> bool:
    """A session started again after a dead one (``forget_dead_session``) keeps the handler
    already installed instead of wrapping it in a second one."""
    return bool(getattr(handler, "rsp_oracle", False))


#: Set by Ctrl-C while a session is up (the handler below). A Spark action cancelled by it fails
#: in its own way (Py4JJavaError, a closed connection) in whichever thread ran it; callers that
#: record failures (the matrix's judging) read this flag so an interruption is never recorded
#: as a finding. Cleared by whoever starts a new unit of work (``run_matrix``).
INTERRUPTED = threading.Event()


def _on_sigint(previous: Any) -> Any:
    """The SIGINT handler that replaces PySpark's. PySpark's calls ``cancelAllJobs`` from the
    interrupted thread, and with pinned threads (PySpark's default) that call goes down the
    thread's one Py4J connection, busy with the action being interrupted: Ctrl-C waited for the
    whole Spark action to end. Here the jobs are cancelled from a thread of its own (its own
    connection) and the previous handler (KeyboardInterrupt by default) runs at once."""

    def handler(signum: int, frame: Any) -> None:
        INTERRUPTED.set()
        threading.Thread(target=cancel_jobs, name="spark-cancel", daemon=True).start()
        _drop_thread_connection()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    handler.rsp_oracle = True  # type: ignore[attr-defined]
    return handler


def _drop_thread_connection() -> None:
    """Close this thread's Py4J connection to Spark's JVM before KeyboardInterrupt unwinds
    through Py4J. Py4J's own KeyboardInterrupt path sends a cancel command ("z") down the busy
    connection; the JVM runs it once the interrupted action ends and, matching sockets by its own
    (shared) local port, closes *every* connection of the gateway, including the one PySpark
    opens next while unwinding (``setCallSite``): that call then failed with "Answer from Java
    side is empty" instead of the KeyboardInterrupt (CI, stop 14). With the socket closed here,
    Py4J skips the command; the JVM's thread ends when it writes its answer to the closed socket.
    The next call from this thread opens a fresh connection."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    client = getattr(getattr(sc, "_gateway", None), "_gateway_client", None)
    get_connection = getattr(client, "get_thread_connection", None)  # pinned threads only
    connection = get_connection() if callable(get_connection) else None
    if connection is not None:
        with contextlib.suppress(Exception):
            connection.close(reset=True)


def cancel_jobs() -> None:
    """Cancel every Spark job of the process's session, if there is one (never starts one)."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    # the process-wide context (getActiveSession is per thread: None in another one)
    sc = SparkContext._active_spark_context
    if sc is not None:
        with contextlib.suppress(Exception):
            sc.cancelAllJobs()


def _log_path() -> Path | None:
    """Where the JVM's standard error goes (None: the terminal, in verbose mode)."""
    if verbose():
        return None
    return Path(tempfile.gettempdir()) / f"rsp-sdk-spark-{os.getpid()}.log"


@contextlib.contextmanager
def _jvm_stderr(log: Path | None) -> Iterator[None]:
    """File descriptor 2 points at ``log`` while the JVM is launched, so the JVM (and the
    Python workers it starts later) inherit it; the file is removed when the process exits.

    PySpark starts the JVM with the driver's own standard error and offers no hook through
    ``SparkSession.builder``, hence the descriptor swap; other threads' writes to standard
    error during the launch (a second or two) land in the log too.
    """
    if log is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    atexit.register(_remove, log)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def forget_dead_session() -> bool:
    """True when the process's Spark JVM has died (killed, or exited on an OutOfMemoryError by
    Spark's uncaught-exception handler); the dead session is then forgotten and its process
    reaped, so the next ``get_spark`` starts a new one.

    Why: PySpark keeps the dead gateway, and every later call fails at once
    (``ConnectionRefusedError``) — a long-running caller such as the matrix would record every
    later judgement as failed. False (nothing done) while the JVM runs or no session exists."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.context import SQLContext

    with _LOCK:
        sc, gateway = SparkContext._active_spark_context, SparkContext._gateway
        proc = getattr(gateway, "proc", None)
        if sc is None or gateway is None or proc is None or proc.poll() is None:
            return False  # (poll() also reaps a JVM that has exited)
        with contextlib.suppress(Exception):  # its sockets; the JVM end is gone
            gateway.shutdown()
        server = getattr(sc, "_accumulatorServer", None)
        if server is not None:
            server.shutdown()
        sc._jsc = None
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        SQLContext._instantiatedContext = None
        return True


def stop_spark() -> None:
    """Stop the process's session (tests and the CLI call this when done)."""
    from pyspark.sql import SparkSession

    with _LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()


_SMALL_LOCK = threading.Lock()
_SMALL_DEPTH: dict[int, tuple[int, dict[str, str | None]]] = {}
# session settings for queries over small inputs (``for_small_inputs``)
SMALL_INPUT_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


@contextlib.contextmanager
def for_small_inputs(spark: Any) -> Iterator[None]:
    """Plan and run the queries inside as small inputs want (``SMALL_INPUT_CONF``).

    Adaptive execution re-plans after each stage, and runs each stage as a Spark job of its
    own: on a few thousand rows that planning (100–200 ms a query here) costs more than the
    work, and the runtime statistics it waits for change nothing. Generated code is compiled
    (Janino) for every new query shape before its first row: on a few thousand rows the
    interpreted expressions finish before the compiler would (CSRBench's 21 runs: ~10 % less
    CPU, identical results). The settings are the session's, so threads of one process (the
    matrix) share them: the first to enter sets them, the last to leave restores them; a large
    query planned meanwhile only loses speed, never changes its result.
    """
    key = id(spark)
    with _SMALL_LOCK:
        depth, saved = _SMALL_DEPTH.get(key, (0, {}))
        if depth == 0:
            saved = {k: spark.conf.get(k, None) for k in SMALL_INPUT_CONF}
            for k, v in SMALL_INPUT_CONF.items():
                spark.conf.set(k, v)
        _SMALL_DEPTH[key] = (depth + 1, saved)
    try:
        yield
    finally:
        with _SMALL_LOCK:
            depth, saved = _SMALL_DEPTH[key]
            if depth == 1:
                del _SMALL_DEPTH[key]
                for k, old in saved.items():
                    if old is None:
                        spark.conf.unset(k)
                    else:
                        spark.conf.set(k, old)
            else:
                _SMALL_DEPTH[key] = (depth - 1, saved)
