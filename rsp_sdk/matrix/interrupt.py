"""Ctrl-C across the matrix's threads: cells run and are judged in worker threads with
``--jobs``, where no KeyboardInterrupt arrives, and the oracle's Spark jobs run in its JVM.
One flag says "stop": no cell starts or is judged once it is set, and a judgement cut by it
is not a finding (the cell stays without cell.json, to rerun).
"""

from __future__ import annotations

import threading

from rsp_sdk.run.deadline import clear_stop, stop_requested

# set by Ctrl-C while cells run in worker threads (``run_matrix`` clears it when it starts): no
# cell starts or is judged any more, and a judgement that fails meanwhile (its Spark job was
# cancelled) is not recorded as ``not_judged`` — the cell stays without cell.json, to rerun
INTERRUPT = threading.Event()


def interrupted() -> bool:
    """Whether Ctrl-C came: flagged for worker threads (``interrupt_judging``), seen by the
    oracle session's SIGINT handler while a cell ran or was judged in the main thread, or
    requested by the command's signal handler (``request_stop``: its KeyboardInterrupt may
    have been lost)."""
    from rsp_sdk.oracle.spark import INTERRUPTED

    return INTERRUPT.is_set() or INTERRUPTED.is_set() or stop_requested()


def clear_interrupt() -> None:
    """A new matrix run: an earlier Ctrl-C (handled) no longer counts."""
    from rsp_sdk.oracle.spark import INTERRUPTED

    INTERRUPT.clear()
    INTERRUPTED.clear()
    clear_stop()


def interrupt_judging() -> None:
    """Ctrl-C for judging in worker threads: flag it and cancel the oracle's Spark jobs."""
    from rsp_sdk.oracle.spark import cancel_jobs

    INTERRUPT.set()
    cancel_jobs()
