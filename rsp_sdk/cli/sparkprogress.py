"""Progress of long oracle work on a terminal: what is computed, and which Spark job and stage
runs with how many of its tasks done.

The oracle is one Spark job graph for all t0 candidates, so the honest measure of progress is
Spark's own status tracker, polled from a thread (Spark's console progress bar is off: it
writes to the JVM's standard error, which is a log file unless ``--verbose``). On a
non-terminal (a pipe, CI) nothing is shown: the command's final summary says what was done.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.markup import escape

POLL_S = 0.25


def spark_activity() -> str | None:
    """``Spark job 3, stage 7: 12/16 tasks`` for what the process's Spark runs now (None:
    no Spark context, or nothing running)."""
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context  # the session's context, from any thread
    if sc is None:
        return None
    tracker = sc.statusTracker()
    stages = [s for s in map(tracker.getStageInfo, tracker.getActiveStageIds()) if s is not None]
    if not stages:
        return None
    jobs = tracker.getActiveJobsIds()
    done = sum(s.numCompletedTasks for s in stages)
    total = sum(s.numTasks for s in stages)
    ids = ", ".join(str(s.stageId) for s in sorted(stages, key=lambda s: s.stageId))
    job = f"Spark job {max(jobs)}" if jobs else "Spark"
    return f"{job}, stage {ids}: {done}/{total} tasks"


@contextlib.contextmanager
def spark_progress(console: Console, label: str) -> Iterator[Callable[[str], None]]:
    """Show ``label`` and the running Spark stage while the block runs (terminals only).

    Yields a function that replaces the label (e.g. once the t0 classes are known).
    """
    if not console.is_terminal:
        yield lambda _label: None
        return
    text = [label]
    stop = threading.Event()
    with console.status(escape(label), spinner="dots") as status:

        def poll() -> None:
            while not stop.wait(POLL_S):
                activity = spark_activity()
                line = text[0] if activity is None else f"{text[0]} — {activity}"
                status.update(escape(line))

        def relabel(new: str) -> None:
            text[0] = new
            status.update(escape(new))

        worker = threading.Thread(target=poll, name="rsp-spark-progress", daemon=True)
        worker.start()
        try:
            yield relabel
        finally:
            stop.set()
            worker.join()
