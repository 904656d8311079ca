"""The ``py4j`` runtime: the engine's JVM as a subprocess running our bridge server.

``java … org.rspsdk.bridge.BridgeServer --driver CLASS --port 0 --data-port 0`` binds two loopback
ports and prints them on its ready line. Control verbs (open, register_query, advance_time,
stats, close) go through py4j's GatewayServer; packed batches and drained results go through the
bridge's data lane, a plain framed socket, because py4j sends a ``byte[]`` as base64 inside a
text command — far too slow for 10k–100k-triple batches. Both lanes require the random token the
parent passes in ``$RSP_BRIDGE_TOKEN``. py4j opens one connection per calling thread, so
``stats`` from the sampler thread is served by its own bridge-side thread while a push runs.

py4j calls have no per-call timeout of their own; each runs on a helper thread and the caller
waits with a deadline. A verb that misses it kills the JVM, which also unblocks the helper.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import select
import shutil
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any, TypeVar

from rsp_sdk.runtime._channel import HostChannel
from rsp_sdk.runtime._framing import deadline_of
from rsp_sdk.runtime._process import spawn
from rsp_sdk.runtime.base import DriverSpec, EngineError, JvmDriver
from rsp_sdk.runtime.bridge import bridge_argv, bridge_classpath
from rsp_sdk.runtime.reply import max_reply_bytes, reply_too_large

T = TypeVar("T")

READY = re.compile(rb"RSP-BRIDGE-READY port=(\d+) data_port=(\d+)")
OP_PUSH, OP_POLL, OP_PING = 1, 2, 3
_U32 = struct.Struct("!I")
_REPLY = struct.Struct("!BI")


def java_executable() -> str:
    """``$JAVA_HOME/bin/java`` when set, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise EngineError("start", "no java executable: install a JDK (17+) or set JAVA_HOME")
    return java


def _pump(src: IO[bytes], log_path: Path) -> None:
    """Copy what the bridge still writes on stdout (native code may) into the log."""
    with open(log_path, "ab") as log:
        for line in iter(src.readline, b""):
            log.write(line)
            log.flush()


class ReplyTooLarge(Exception):
    """The bridge announced an answer past ``max_reply_bytes()`` (``rsp_sdk.runtime.reply``)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


class DataLane:
    """Client of the bridge's DataServer: framed push/poll over a loopback socket."""

    def __init__(self, port: int, token: str, timeout: float) -> None:
        self.limit = max_reply_bytes()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        raw = token.encode()
        self.sock.sendall(_U32.pack(len(raw)) + raw)
        if self._exact(1, deadline_of(timeout)) != b"\x00":
            raise EngineError("start", "the bridge refused the data-lane token")

    def _exact(self, n: int, deadline: float | None) -> bytes:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                self.sock.settimeout(remaining)
            else:
                self.sock.settimeout(None)
            k = self.sock.recv_into(view[got:], n - got)
            if k == 0:
                raise ConnectionResetError("bridge closed the data lane")
            got += k
        return bytes(buf)

    def _send(self, data: bytes | memoryview, deadline: float | None) -> None:
        view = memoryview(data).cast("B")
        sent = 0
        while sent < view.nbytes:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                self.sock.settimeout(remaining)
            sent += self.sock.send(view[sent : sent + (1 << 22)])

    def request(self, op: int, parts: Sequence[bytes], deadline: float | None) -> tuple[int, bytes]:
        head = bytes([op])
        for i, part in enumerate(parts):
            head += _U32.pack(len(part))
            if i < len(parts) - 1:
                head += part
        self._send(head, deadline)
        if parts:
            self._send(parts[-1], deadline)
        status, length = _REPLY.unpack(self._exact(_REPLY.size, deadline))
        if length > self.limit:
            raise ReplyTooLarge(length)  # not read: the lane is lost with the engine
        return status, self._exact(length, deadline) if length else b""

    def close(self) -> None:
        self.sock.close()


def forget_gateway(gateway: Any) -> None:
    """Close a gateway whose bridge is going away, so that nothing ever dials its port again.

    py4j's ``close()`` only closes the open connections: its client stays "connected", and the
    finalizer of any JavaObject collected later (an engine exception kept alive by a traceback
    cycle until some cyclic GC, in whatever thread runs it) opens a new socket to the old port
    to say "forget this object", then waits for the auth answer with no timeout. By then the
    port may belong to another listener (host networking: a later engine's data lane reads the
    auth line as a frame length and waits for a gigabyte) and that thread blocks for good: a
    passing CI test took 602.7 s, ended only by pytest-timeout's alarm inside the finalizer.
    A client marked disconnected makes py4j skip that call (``garbage_collect_object``)."""
    with contextlib.suppress(Exception):
        gateway._gateway_client.is_connected = False
    with contextlib.suppress(Exception):
        gateway.close(keep_callback_server=False, close_callback_server_connections=True)


class Py4JChannel(HostChannel):
    runtime_name = "py4j"
    close_grace_s = 3.0

    def __init__(self, proc: Any, log_path: Path, gateway: Any, data: DataLane) -> None:
        super().__init__(proc, log_path)
        self.gateway = gateway
        self.bridge = gateway.entry_point
        self.data = data
        self.ports: tuple[int, int] = (0, 0)
        self._lock = threading.Lock()
        self._control_pool = ThreadPoolExecutor(1, thread_name_prefix="py4j-control")
        self._stats_pool = ThreadPoolExecutor(1, thread_name_prefix="py4j-stats")

    def _wait(self, verb: str, fut: Future[T], timeout: float | None) -> T:
        from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError

        try:
            return fut.result(timeout)
        except FutureTimeout:
            raise self._timeout(verb, timeout) from None
        except Py4JJavaError as exc:
            try:
                message = str(self.bridge.describe(exc.java_exception))
                trace = str(self.bridge.trace(exc.java_exception))
            except Exception:
                message, trace = str(exc), str(exc)
            raise EngineError(verb, message, engine_trace=trace) from None
        except (Py4JNetworkError, OSError):  # the JVM went away under the call
            raise self._crashed(verb) from None
        except Py4JError as exc:  # py4j itself refused (no such method, bad argument)
            raise EngineError(verb, f"py4j: {exc}") from None

    def _control(self, verb: str, fn: Callable[[], T], timeout: float | None) -> T:
        with self._lock:
            self._check(verb)
            return self._wait(verb, self._control_pool.submit(fn), timeout)

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        b = self.bridge
        if verb == "stats":
            import json

            self._check(verb)
            fut = self._stats_pool.submit(lambda: str(b.stats()))
            return json.loads(self._wait(verb, fut, timeout if timeout is not None else 5.0))
        fns: dict[str, Callable[[], Any]] = {
            "open": lambda: b.open(args[0], args[1]),
            "load_static": lambda: b.loadStatic(args[0], args[1]),
            "register_stream": lambda: b.registerStream(args[0]),
            "register_query": lambda: b.registerQuery(args[0], args[1]),
            "advance_time": lambda: b.advanceTime(int(args[0])),
            "close": lambda: b.close(),
        }
        if verb not in fns:
            raise ValueError(f"unknown verb {verb!r}")
        return self._control(verb, fns[verb], timeout)

    def _data(self, verb: str, op: int, parts: Sequence[bytes], timeout: float | None) -> bytes:
        import json

        with self._lock:
            self._check(verb)
            try:
                status, payload = self.data.request(op, parts, deadline_of(timeout))
            except ReplyTooLarge as exc:
                err = reply_too_large(verb, exc.size, self.data.limit)
                self._fail(err)
                raise err from None
            except TimeoutError:
                raise self._timeout(verb, timeout) from None
            except OSError:
                raise self._crashed(verb) from None
        if status != 0:
            err = json.loads(payload)
            raise EngineError(verb, err["message"], engine_trace=err.get("trace"))
        return payload

    def push(self, stream_iri: str, packed: bytes, *, timeout: float | None = None) -> None:
        self._data("push", OP_PUSH, [stream_iri.encode(), packed], timeout)

    def poll(self, *, timeout: float | None = None) -> bytes:
        return self._data("poll", OP_POLL, [], timeout)

    def _release(self) -> None:
        with contextlib.suppress(Exception):
            self.data.close()
        forget_gateway(self.gateway)
        self._control_pool.shutdown(wait=False, cancel_futures=True)
        self._stats_pool.shutdown(wait=False, cancel_futures=True)


class Py4JRuntime:
    """Carries ``JvmDriver`` specs in a ``java … BridgeServer`` subprocess per launch."""

    name = "py4j"
    supports = frozenset({"jvm"})

    def __init__(self, *, bridge: Sequence[Path] | None = None, start_timeout: float = 120.0):
        self._bridge = list(bridge) if bridge is not None else None
        self.start_timeout = start_timeout

    def launch(self, spec: DriverSpec, workdir: Path, *, log_dir: Path) -> Py4JChannel:
        if not isinstance(spec, JvmDriver):
            raise TypeError(f"the py4j runtime carries JVM drivers, not {spec.kind!r} drivers")
        from py4j.java_gateway import GatewayParameters, JavaGateway

        bridge = self._bridge if self._bridge is not None else bridge_classpath()
        workdir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / "engine.log"
        token = secrets.token_hex(24)
        classpath = os.pathsep.join(str(p) for p in [*bridge, *spec.classpath])
        proc = spawn(
            bridge_argv(java_executable(), spec, classpath),
            log_path=log_path,
            cwd=workdir,
            env={**os.environ, "RSP_BRIDGE_TOKEN": token},
            stdout_pipe=True,
        )
        assert proc.stdout is not None
        ports = self._await_ready(proc, log_path)
        if ports is None:
            from rsp_sdk.runtime._process import crashed, kill_tree, log_tail

            if proc.poll() is None:
                kill_tree(proc)
                tail = log_tail(log_path)
                raise EngineError(
                    "start",
                    f"the bridge server did not get ready within {self.start_timeout} s; "
                    f"log {log_path}:\n{tail}",
                )
            err = crashed("start", proc, log_path)
            kill_tree(proc)
            raise err
        threading.Thread(target=_pump, args=(proc.stdout, log_path), daemon=True).start()
        try:
            gateway = JavaGateway(
                gateway_parameters=GatewayParameters(
                    port=ports[0], auth_token=token, auto_field=False, eager_load=True
                )
            )
            data = DataLane(ports[1], token, self.start_timeout)
        except Exception as exc:
            from rsp_sdk.runtime._process import kill_tree

            kill_tree(proc)
            raise EngineError("start", f"cannot connect to the bridge server: {exc}") from exc
        channel = Py4JChannel(proc, log_path, gateway, data)
        channel.ports = ports
        return channel

    def _await_ready(self, proc: Any, log_path: Path) -> tuple[int, int] | None:
        """Read the bridge's stdout until the ready line (None: it died or timed out)."""
        deadline = time.monotonic() + self.start_timeout
        fd = proc.stdout.fileno()
        pending = b""
        with open(log_path, "ab") as log:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    if proc.poll() is not None:
                        return None
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    m = READY.search(line)
                    if m:
                        log.write(pending)
                        return int(m.group(1)), int(m.group(2))
                    log.write(line + b"\n")
        return None
