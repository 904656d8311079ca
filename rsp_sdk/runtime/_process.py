"""Host processes: start them in their own session, watch them, and leave nothing behind.

Every runtime hosts its driver in a child process (the JPype worker, the py4j bridge JVM, the
JSON-lines program). They share the same needs, kept here once:

* the child runs in a new session (its own process group), so one ``killpg`` reaches every
  process it forked, and Ctrl-C in the terminal does not hit the engine before we close it;
* the child's stdin is a *lifeline*: our end stays open for the child's whole life, and every
  host we ship exits when it reads EOF there — so if this Python process dies, even by SIGKILL,
  its engines follow;
* stdout/stderr go to a log file, whose tail is quoted when the engine crashes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import psutil

from rsp_sdk.runtime._cause import died
from rsp_sdk.runtime.base import EngineCrashed


def spawn(
    argv: Sequence[str],
    *,
    log_path: Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin_pipe: bool = True,
    stdout_pipe: bool = False,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a new session with stderr (and stdout unless piped) appended to the log."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdout_pipe else log,
            stderr=log,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )


def descendants(pid: int) -> list[psutil.Process]:
    """The process and all its descendants that are still alive (empty when it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def kill_tree(proc: subprocess.Popen[bytes], *, grace: float = 0.0) -> int | None:
    """Stop ``proc`` and everything it started; return its exit code.

    With ``grace`` > 0 the process first gets that long to exit on its own (after its lifeline
    closed), then SIGTERM, then SIGKILL. Descendants that left the process group are found
    through psutil and killed too.
    """
    tree = descendants(proc.pid)
    if grace > 0:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=min(2.0, max(grace, 0.5)))
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    for p in tree[1:] + descendants(proc.pid)[1:]:
        with contextlib.suppress(psutil.Error):
            p.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers still in the group
    try:
        code = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - uninterruptible sleep
        code = None
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return code


def log_tail(path: Path, lines: int = 30, max_bytes: int = 16_384) -> str:
    """The last lines of a log file (empty when it does not exist)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def crashed(
    verb: str, proc: subprocess.Popen[bytes], log_path: Path, *, wait: float = 2.0
) -> EngineCrashed:
    """An EngineCrashed naming the exit code and quoting the log tail."""
    deadline = time.monotonic() + wait
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    code = proc.poll()
    status = f"exit code {code}" if code is not None else "process still running, channel lost"
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            status = f"killed by {signal.Signals(-code).name}"
    tail = log_tail(log_path)
    message = died(f"engine process {proc.pid} died ({status})", log_path, tail)
    return EngineCrashed(verb, message, engine_trace=tail or None)
