"""A run's whole-run deadline: the engine is killed when a run (open, feeding, drain, close)
overruns it, however well each verb answers on its own.

Per-verb timeouts (``Timeouts``) catch an engine that stops answering; they do not catch one
that answers every verb slowly — a push of 1 s for each of 10 000 batches is never a timeout
and still takes hours. The deadline is a timer thread: when it fires it kills the session
(whose channel kills the process tree, container and ports) and every verb under way or to
come fails at once; the runner then records the run as ``RunTimeout``.

The same kill serves Ctrl-C for runs in worker threads (``rsp matrix run --jobs N``): Python
raises KeyboardInterrupt in the main thread only, so ``interrupt_runs()`` kills the session of
every live run and makes each raise KeyboardInterrupt itself (recorded as ``interrupted``).
"""

from __future__ import annotations

import threading
from typing import Protocol

from rsp_sdk.runtime.base import EngineTimeout


class Killable(Protocol):
    """What a deadline kills: an ``EngineSession``, or its host's channel while the engine's
    ``open`` verb still runs (``rsp_sdk.engine.session.on_launch``)."""

    def kill(self) -> None: ...


class RunTimeout(EngineTimeout):
    """The whole run overran its deadline (``RunRequest.deadline_s``); the engine was killed."""


_LIVE: set[Deadline] = set()
_LIVE_LOCK = threading.Lock()
#: set by ``request_stop`` (a signal handler): every run under way or to come is interrupted
_STOP = threading.Event()


def request_stop() -> None:
    """Stop every run of the process, as SIGTERM and Ctrl-C must: the runs under way are
    interrupted from a thread of its own (a signal handler runs in the main thread, which may
    hold a lock ``interrupt_runs`` takes) and any run started later is interrupted at once.

    The KeyboardInterrupt a signal handler raises is not enough on its own: when the main
    thread is running a finalizer or a weakref callback at that moment, Python prints it as
    "Exception ignored in …" and carries on. A matrix stopped with ``kill`` between two cells
    ran its next cell to the end (the handler had landed in a ``WeakKeyDictionary`` callback
    while C-SPARQL's driver started); this flag and the killed engines outlive the lost
    exception."""
    _STOP.set()
    threading.Thread(target=interrupt_runs, name="rsp-stop", daemon=True).start()


def stop_requested() -> bool:
    """Whether ``request_stop`` was called since the last ``clear_stop``."""
    return _STOP.is_set()


def clear_stop() -> None:
    """Runs may start again (a library caller that handled the KeyboardInterrupt)."""
    _STOP.clear()


def interrupt_runs() -> int:
    """Ctrl-C for every run under way in this process (worker threads included): each one's
    engine is killed and the run raises KeyboardInterrupt; returns how many were live."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for d in live:
        d.interrupt()
    return len(live)


class Deadline:
    """Kills the session it watches after ``seconds``; ``None`` seconds: never fires."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._session: Killable | None = None
        self._expired = False
        self._stopped = False
        self.interrupted = False
        with _LIVE_LOCK:
            _LIVE.add(self)
        if _STOP.is_set():  # after joining _LIVE: request_stop sees it or it sees the flag
            self.interrupted = True
        self._timer: threading.Timer | None = None
        if seconds is not None:
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    @property
    def expired(self) -> bool:
        return self._expired

    def watch(self, session: Killable) -> None:
        """The session (or, while it opens, its host's channel) to kill; killed at once when
        the deadline already passed or Ctrl-C already came (while the engine was starting)."""
        with self._lock:
            self._session = session
            late = self._expired or self.interrupted
        if late:
            session.kill()
            self.check()

    def check(self) -> None:
        """Raise ``RunTimeout`` if the deadline passed, KeyboardInterrupt if the run was
        interrupted (between verbs, in wait loops) or a stop requested for the process."""
        if self.interrupted or _STOP.is_set():
            raise KeyboardInterrupt
        if self._expired:
            raise self.error()

    def interrupt(self) -> None:
        """Kill the watched session (or the one about to be watched) and make the run raise
        KeyboardInterrupt: ``interrupt_runs``."""
        self._kill(interrupt=True)

    def stop(self) -> bool:
        """Disarm; True when the deadline had already fired (the run must count as timeout)."""
        with self._lock:
            self._stopped = True
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._timer is not None:
            self._timer.cancel()
        return self._expired

    def error(self) -> RunTimeout:
        return RunTimeout(
            "run",
            f"the run overran its {self.seconds:g} s deadline (limits.cell_timeout_s); "
            "the engine was killed",
        )

    def _fire(self) -> None:
        self._kill(interrupt=False)

    def _kill(self, *, interrupt: bool) -> None:
        """Mark why (Ctrl-C or the deadline) and kill the watched session, unless disarmed."""
        with self._lock:
            if self._stopped:
                return
            if interrupt:
                self.interrupted = True
            else:
                self._expired = True
            session = self._session
        if session is not None:
            session.kill()
