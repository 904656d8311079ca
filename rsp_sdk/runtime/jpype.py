"""The ``jpype`` runtime: the engine's JVM inside a dedicated worker process.

JPype embeds a JVM in a Python process but can start only one per process, ever; engines such as
CQELS keep JVM-wide singletons. So each launch starts a fresh worker
(``rsp_sdk.runtime._jpype_worker``) whose JVM gets the driver's classpath and flags, and talks to
it over a Unix socketpair. Packed batches never cross that socket: the parent copies each one into
a shared memory segment (a memfd mapped by both processes, its fd passed once with SCM_RIGHTS)
and Java reads it from a direct ByteBuffer over the mapping. Results are drained from the
Java-side ``ResultBuffer`` by ``poll`` (no per-row callbacks into Python). A second socketpair
serves ``stats`` concurrently with a long push.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rsp_sdk.runtime._channel import HostChannel
from rsp_sdk.runtime._framing import ChannelClosed, FramedSocket, deadline_of
from rsp_sdk.runtime._process import spawn
from rsp_sdk.runtime.base import DriverSpec, EngineError, JvmDriver
from rsp_sdk.runtime.bridge import bridge_classpath


class JPypeChannel(HostChannel):
    runtime_name = "jpype"

    def __init__(self, proc: Any, ctl: FramedSocket, stats: FramedSocket, log_path: Path) -> None:
        super().__init__(proc, log_path)
        self._ctl = ctl
        self._stats = stats
        import threading

        self._lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._segment: mmap.mmap | None = None
        self.java_version: str | None = None

    def _request(
        self, verb: str, args: Sequence[Any], *, timeout: float | None
    ) -> tuple[Any, bytes | None]:
        with self._lock:
            return self._request_locked(verb, args, timeout=timeout)

    def _request_locked(
        self, verb: str, args: Sequence[Any], *, timeout: float | None
    ) -> tuple[Any, bytes | None]:
        self._check(verb)
        deadline = deadline_of(timeout)
        try:
            self._ctl.send_json({"verb": verb, "args": list(args)}, deadline)
            reply = self._ctl.recv_json(deadline)
            data = bytes(self._ctl.recv(deadline)) if reply.get("payload") else None
        except TimeoutError:
            raise self._timeout(verb, timeout) from None
        except (ChannelClosed, OSError):
            raise self._crashed(verb) from None
        if not reply["ok"]:
            raise EngineError(verb, reply["error"], engine_trace=reply.get("trace"))
        return reply.get("result"), data

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        if verb == "stats":
            return self._stats_call(timeout)
        if verb in ("push", "poll"):
            raise ValueError(f"use channel.{verb}() for {verb}")
        return self._request(verb, args, timeout=timeout)[0]

    def _stats_call(self, timeout: float | None) -> Any:
        with self._stats_lock:
            self._check("stats")
            deadline = deadline_of(timeout if timeout is not None else 5.0)
            try:
                self._stats.send(b"", deadline)
                reply = self._stats.recv_json(deadline)
            except TimeoutError:
                raise self._timeout("stats", timeout) from None
            except (ChannelClosed, OSError):
                raise self._crashed("stats") from None
        if not reply["ok"]:
            raise EngineError("stats", reply["error"], engine_trace=reply.get("trace"))
        return reply["result"]

    def push(self, stream_iri: str, packed: bytes, *, timeout: float | None = None) -> None:
        n = len(packed)
        with self._lock:
            self._check("push")
            if self._segment is None or len(self._segment) < n:
                self._new_segment(max(n, 2 * len(self._segment or b""), 16 << 20), timeout)
            assert self._segment is not None
            self._segment[:n] = packed  # the one copy on this side
            self._request_locked("push", [stream_iri, n], timeout=timeout)

    def _new_segment(self, size: int, timeout: float | None) -> None:
        """A fresh shared memory segment for batches; the worker maps it (caller holds the lock)."""
        fd = os.memfd_create("rsp-batches", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            segment = mmap.mmap(fd, size)
            deadline = deadline_of(timeout)
            try:
                self._ctl.send_json({"verb": "_segment", "args": [size]}, deadline)
                socket.send_fds(self._ctl.sock, [b"\0"], [fd])
                reply = self._ctl.recv_json(deadline)
            except TimeoutError:
                raise self._timeout("push", timeout) from None
            except (ChannelClosed, OSError):
                raise self._crashed("push") from None
        finally:
            os.close(fd)
        if not reply["ok"]:
            raise EngineError("push", reply["error"], engine_trace=reply.get("trace"))
        if self._segment is not None:
            self._segment.close()
        self._segment = segment

    def poll(self, *, timeout: float | None = None) -> bytes:
        return self._request("poll", [], timeout=timeout)[1] or b""

    def _release(self) -> None:
        for lane in (self._ctl, self._stats):
            with contextlib.suppress(OSError):
                lane.close()
        if self._segment is not None:
            with contextlib.suppress(BufferError):
                self._segment.close()


class JPypeRuntime:
    """Carries ``JvmDriver`` specs in a fresh JPype worker process per launch."""

    name = "jpype"
    supports = frozenset({"jvm"})

    def __init__(
        self,
        *,
        bridge: Sequence[Path] | None = None,
        python: str = sys.executable,
        start_timeout: float = 120.0,
    ) -> None:
        self._bridge = list(bridge) if bridge is not None else None
        self.python = python
        self.start_timeout = start_timeout

    def launch(self, spec: DriverSpec, workdir: Path, *, log_dir: Path) -> JPypeChannel:
        if not isinstance(spec, JvmDriver):
            raise TypeError(f"the jpype runtime carries JVM drivers, not {spec.kind!r} drivers")
        bridge = self._bridge if self._bridge is not None else bridge_classpath()
        workdir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / "engine.log"
        ctl_parent, ctl_child = socket.socketpair()
        stats_parent, stats_child = socket.socketpair()
        try:
            proc = spawn(
                [
                    self.python,
                    "-m",
                    "rsp_sdk.runtime._jpype_worker",
                    str(ctl_child.fileno()),
                    str(stats_child.fileno()),
                ],
                log_path=log_path,
                cwd=workdir,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                pass_fds=(ctl_child.fileno(), stats_child.fileno()),
            )
        finally:
            ctl_child.close()
            stats_child.close()
        channel = JPypeChannel(proc, FramedSocket(ctl_parent), FramedSocket(stats_parent), log_path)
        init = {
            "classpath": [str(p) for p in [*bridge, *spec.classpath]],
            "jvm_flags": list(spec.jvm_flags),
            "properties": dict(spec.system_properties),
            "driver_class": spec.driver_class,
        }
        deadline = deadline_of(self.start_timeout)
        try:
            channel._ctl.send_json(init, deadline)
            reply = channel._ctl.recv_json(deadline)
        except TimeoutError:
            raise channel._timeout("start", self.start_timeout) from None
        except (ChannelClosed, OSError):
            raise channel._crashed("start") from None
        if not reply["ok"]:
            channel.kill()
            raise EngineError(
                "start",
                f"cannot start the JVM with driver {spec.driver_class}: {reply['error']}",
                engine_trace=reply.get("trace"),
            )
        channel.java_version = reply["result"].get("java_version")
        return channel
