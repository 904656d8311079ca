"""What every channel shares: one owner of the host process, failure bookkeeping, cleanup.

A channel becomes *dead* after the host crashed or a verb timed out: the host is killed at once
(a hung engine cannot be trusted with the next verb) and every later call raises the same error,
so a caller that catches it can simply go on to the next run.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from pathlib import Path
from typing import Any

from rsp_sdk.runtime._process import crashed, kill_tree, log_tail
from rsp_sdk.runtime.base import EngineCrashed, EngineError, EngineTimeout


class HostChannel:
    """Base of the concrete channels: owns ``proc`` (the host) and its log."""

    runtime_name = "?"
    close_grace_s = 2.0  # how long the host may take to exit by itself after "close"

    def __init__(self, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        self.proc = proc
        self.log_path = log_path
        self._dead: EngineError | None = None
        self._closed = False
        self._kill_lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self._dead is None and not self._closed and self.proc.poll() is None

    def _check(self, verb: str) -> None:
        if self._dead is not None:
            raise type(self._dead)(
                verb,
                f"channel is dead after an earlier failure: {self._dead.engine_message}",
                engine_trace=self._dead.engine_trace,
            )
        if self._closed:
            raise EngineError(verb, f"{self.runtime_name} channel is closed")

    def _crashed(self, verb: str) -> EngineCrashed:
        err = crashed(verb, self.proc, self.log_path)
        self._fail(err)
        return err

    def _timeout(self, verb: str, timeout: float | None) -> EngineTimeout:
        tail = log_tail(self.log_path, lines=10)
        msg = f"no answer within {timeout} s; the engine was killed"
        if tail:
            msg += f"; log {self.log_path} ends with:\n{tail}"
        err = EngineTimeout(verb, msg, engine_trace=tail or None)
        self._fail(err)
        return err

    def _fail(self, err: EngineError) -> None:
        if self._dead is None:
            self._dead = err
        self.kill()

    def _release(self) -> None:
        """Close sockets/pipes owned by the subclass (called once, before the host is reaped)."""

    def kill(self) -> None:
        with self._kill_lock:
            self._closed = True
            self._release()
            kill_tree(self.proc)

    def _shutdown(self, grace: float) -> None:
        """Orderly stop: release the lanes, close the lifeline (stdin), give the host ``grace``
        seconds to exit by itself, then kill whatever is left."""
        with self._kill_lock:
            self._closed = True
            self._release()
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            kill_tree(self.proc, grace=grace)

    def close(self, *, timeout: float = 10.0) -> None:
        """Ask the driver to close the engine, then stop the host; a failed "close" is raised
        after the host is gone, so nothing is left running either way."""
        if self._closed:
            return
        error: EngineError | None = None
        if self._dead is None and self.proc.poll() is None:
            try:
                self.call("close", timeout=timeout)
            except EngineError as exc:
                error = exc
        self._shutdown(grace=self.close_grace_s)
        if error is not None:
            raise error

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        """One request to the driver; each channel carries it its own way (abstract)."""
        raise NotImplementedError
