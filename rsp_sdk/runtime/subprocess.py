"""The ``subprocess`` runtime: any program speaking the JSON-lines protocol on stdin/stdout.

For engines outside the JVM (rsp-js on Node, ETALIS on SWI-Prolog, Python engines). One JSON
object per line in each direction:

* request ``{"id": 7, "verb": "push", "args": ["http://ex.org/s", "<packed text>"]}``
* response ``{"id": 7, "ok": true, "result": …}`` or
  ``{"id": 7, "ok": false, "error": "engine message", "trace": "…"}``

``push`` carries the packed batch as one JSON string — or, for a program that declares
``ProcessDriver.raw_push``, as ``{"id": 7, "verb": "push_raw", "args": [stream, n]}`` followed
by the ``n`` bytes of the packed batch as they are (no decoding, JSON escaping and unescaping
of megabytes per batch: about 2 s of Python per 2 M triples, measured on rsp-rs). ``poll``
answers with a list of result event objects (the driver contract's event form) — the channel
hands them on as JSON lines.
Lines on stdout that are not JSON objects with an ``id`` (engines print) go to the log, like
everything on stderr. The program must exit when stdin reaches EOF; whatever it leaves behind is
killed with its process group. The program is single-threaded as far as we know, so ``stats``
is only asked when no other verb is in flight (it answers ``{}`` otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from pathlib import Path
from typing import IO, Any

from rsp_sdk.runtime._channel import HostChannel
from rsp_sdk.runtime._process import spawn
from rsp_sdk.runtime.base import DriverSpec, EngineError, ProcessDriver
from rsp_sdk.runtime.reply import max_reply_bytes, reply_too_large

PIPE_BYTES = 1 << 20  # Linux's default /proc/sys/fs/pipe-max-size


def _widen_pipe(fd: int) -> None:
    """Give a raw-push program's stdin pipe 1 MiB instead of 64 KiB: a 2 MB batch then crosses
    in two hand-overs between the processes instead of 32, each a wake-up that waits for a
    core on a loaded machine. Not a pipe (docker's attach socket) or not Linux: left as is."""
    import fcntl

    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


class SubprocessChannel(HostChannel):
    runtime_name = "subprocess"

    def __init__(self, proc: Any, log_path: Path, *, raw_push: bool = False) -> None:
        super().__init__(proc, log_path)
        self._raw_push = raw_push
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._replies: dict[int, dict[str, Any]] = {}
        self._eof = False
        self._next_id = 0
        self._limit = max_reply_bytes()
        self._oversized: int | None = None  # bytes of an answer past the limit, left unread
        assert proc.stdin is not None and proc.stdout is not None
        self._stdin_fd = proc.stdin.fileno()
        if raw_push:
            _widen_pipe(self._stdin_fd)
        os.set_blocking(self._stdin_fd, False)
        self._reader = threading.Thread(
            target=self._read, args=(proc.stdout,), name="jsonl-reader", daemon=True
        )
        self._reader.start()

    def _read(self, out: IO[bytes]) -> None:
        limit = self._limit
        with open(self.log_path, "ab") as log:
            while line := out.readline(limit + 1):
                if len(line) > limit and not line.endswith(b"\n"):
                    # an answer past the limit is not read (rsp_sdk.runtime.reply)
                    size = len(line) + _skip_line(out, limit)
                    with self._cond:
                        self._oversized = size
                        self._cond.notify_all()
                    continue
                reply: Any = None
                if line.startswith(b"{"):
                    with contextlib.suppress(ValueError):
                        reply = json.loads(line)
                if isinstance(reply, dict) and isinstance(reply.get("id"), int):
                    with self._cond:
                        self._replies[reply["id"]] = reply
                        self._cond.notify_all()
                else:
                    log.write(b"[stdout] " + line)
                    log.flush()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _write(self, data: bytes, deadline: float | None) -> None:
        view = memoryview(data)
        while view:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise TimeoutError
            _, writable, _ = select.select([], [self._stdin_fd], [], remaining)
            if not writable:
                continue
            try:
                n = os.write(self._stdin_fd, view[: 1 << 20])
            except BlockingIOError:
                continue
            view = view[n:]

    def _request(
        self, verb: str, args: list[Any], timeout: float | None, payload: bytes | None = None
    ) -> Any:
        self._check(verb)
        self._next_id += 1
        rid = self._next_id
        line = json.dumps({"id": rid, "verb": verb, "args": args}, ensure_ascii=False)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._write(line.encode() + b"\n", deadline)
            if payload:
                self._write(payload, deadline)
        except TimeoutError:
            raise self._timeout(verb, timeout) from None
        except OSError:
            raise self._crashed(verb) from None
        with self._cond:
            while rid not in self._replies:
                if self._eof or self._oversized is not None:
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    break
                self._cond.wait(remaining)
            reply = self._replies.pop(rid, None)
            eof, oversized = self._eof, self._oversized
        if reply is None and oversized is not None:
            err = reply_too_large(verb, oversized, self._limit)
            self._fail(err)
            raise err
        if reply is None:
            if eof:
                raise self._crashed(verb)
            raise self._timeout(verb, timeout)
        if not reply.get("ok"):
            raise EngineError(
                verb, str(reply.get("error", "unspecified error")), engine_trace=reply.get("trace")
            )
        return reply.get("result")

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        if verb in ("push", "poll"):
            raise ValueError(f"use channel.{verb}() for {verb}")
        if verb == "stats":
            if not self._lock.acquire(blocking=False):
                return {}
            try:
                return self._request(verb, [], timeout if timeout is not None else 5.0) or {}
            finally:
                self._lock.release()
        with self._lock:
            return self._request(verb, list(args), timeout)

    def push(self, stream_iri: str, packed: bytes, *, timeout: float | None = None) -> None:
        if self._raw_push:
            data = packed.encode() if isinstance(packed, str) else bytes(packed)
            with self._lock:
                self._request("push_raw", [stream_iri, len(data)], timeout, payload=data)
            return
        text = packed.decode("utf-8") if not isinstance(packed, str) else packed
        with self._lock:
            self._request("push", [stream_iri, text], timeout)

    def poll(self, *, timeout: float | None = None) -> bytes:
        with self._lock:
            events = self._request("poll", [], timeout) or []
        if isinstance(events, str):
            return events.encode()
        return b"".join(
            json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for e in events
        )


def _skip_line(out: IO[bytes], chunk: int) -> int:
    """Read the rest of a line in pieces of ``chunk`` bytes, keeping none; the bytes read."""
    skipped = 0
    while piece := out.readline(chunk):
        skipped += len(piece)
        if piece.endswith(b"\n"):
            break
    return skipped


class SubprocessRuntime:
    """Carries ``ProcessDriver`` specs: the program itself is the host process."""

    name = "subprocess"
    supports = frozenset({"process"})

    def launch(self, spec: DriverSpec, workdir: Path, *, log_dir: Path) -> SubprocessChannel:
        if not isinstance(spec, ProcessDriver):
            raise TypeError(f"the subprocess runtime carries programs, not {spec.kind!r} drivers")
        if spec.host_missing:
            raise EngineError("start", spec.host_missing)
        workdir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / "engine.log"
        try:
            proc = spawn(
                spec.argv,
                log_path=log_path,
                cwd=spec.cwd or workdir,
                env={**os.environ, **spec.env},
                stdout_pipe=True,
            )
        except OSError as exc:
            raise EngineError("start", f"cannot start {spec.argv[0]!r}: {exc}") from exc
        return SubprocessChannel(proc, log_path, raw_push=spec.raw_push)
