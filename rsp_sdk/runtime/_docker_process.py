"""The ``docker`` runtime for programs: a ``ProcessDriver`` with an image, in its container.

The program speaks the same JSON lines as on the ``subprocess`` runtime; only the pipe is
different. Instead of a child's stdin/stdout we hold one socket attached to the container's
stdin, stdout and stderr (``ContainerHost(attach_output=True)``): requests are written to it,
and what comes back is Docker's multiplexed stream (8-byte frame headers: stream, size), which
``AttachedOutput`` splits into the program's stdout lines (replies, handed to the
``SubprocessChannel`` reader) and its stderr (appended to the run's ``engine.log``). The same
socket is the lifeline: when this Python process dies the kernel closes it, the program reads
EOF on stdin and exits, and the container was created with ``auto_remove``.

Isolation is the JVM containers' (``DockerRuntime._container``): non-root, read-only root,
tmpfs ``/tmp``, the run's work dir mounted at the same path, host networking, memory/CPU limits.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsp_sdk.errors import RspError
from rsp_sdk.images.client import DockerUnavailable, docker_client
from rsp_sdk.runtime.base import EngineError, ProcessDriver
from rsp_sdk.runtime.docker import ContainerHost, ContainerOwner, _grant
from rsp_sdk.runtime.subprocess import SubprocessChannel

if TYPE_CHECKING:
    from rsp_sdk.runtime.docker import DockerRuntime

STDOUT = 1


class AttachedOutput:
    """Docker's multiplexed attach stream, read as the program's stdout (``readline``); stderr
    frames go to the log. Works on a non-blocking socket (the channel writes requests to the
    same file descriptor without blocking)."""

    def __init__(self, fd: int, log_path: Path, host: ContainerHost) -> None:
        self.fd = fd
        self.log_path = log_path
        self.host = host
        self._raw = bytearray()
        self._out = bytearray()
        self._eof = False

    def _fill(self) -> bool:
        """Read more of the socket; ``False`` at its end (or once it was closed under us)."""
        while True:
            try:
                readable, _, _ = select.select([self.fd], [], [], 1.0)
                if not readable:
                    continue
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                return False
            if not data:
                return False
            self._raw += data
            return True

    def _frames(self) -> None:
        """Move every complete frame of ``_raw`` to stdout or the log."""
        while len(self._raw) >= 8:
            size = int.from_bytes(self._raw[4:8], "big")
            if len(self._raw) < 8 + size:
                return
            kind = self._raw[0]
            payload = bytes(self._raw[8 : 8 + size])
            del self._raw[: 8 + size]
            if kind == STDOUT:
                self._out += payload
            else:
                with open(self.log_path, "ab") as log:
                    log.write(payload)

    def readline(self, size: int = -1) -> bytes:
        """The next stdout line, or its first ``size`` bytes (as ``io`` files do) when it is
        longer; ``b""`` once the container's output ended."""
        while True:
            newline = self._out.find(b"\n")
            if newline >= 0 or 0 <= size <= len(self._out):
                end = newline + 1 if newline >= 0 else len(self._out)
                end = min(end, size) if size >= 0 else end
                line = bytes(self._out[:end])
                del self._out[:end]
                return line
            if self._eof or not self._fill():
                self._eof = True
                self._frames()
                rest = bytes(self._out)
                self._out.clear()
                if not rest:
                    self.host.output_done()
                return rest
            self._frames()


class _Stdin:
    """The attach socket seen as the program's stdin (what ``SubprocessChannel`` writes to)."""

    def __init__(self, host: ContainerHost) -> None:
        self.host = host
        assert host.stdin is not None
        self._fd = host.stdin.fileno()

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        self.host.close_lifeline()


class AttachedProcess:
    """The container as ``SubprocessChannel`` sees a child: pid, poll, wait, stdin, stdout."""

    def __init__(self, host: ContainerHost, log_path: Path) -> None:
        self.host = host
        self.stdin = _Stdin(host)
        self.stdout = AttachedOutput(self.stdin.fileno(), log_path, host)

    @property
    def pid(self) -> int:
        return self.host.pid

    def poll(self) -> int | None:
        return self.host.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        return self.host.wait(timeout)


class DockerProcessChannel(ContainerOwner, SubprocessChannel):
    """The JSON-lines channel, with a container as the host process."""

    runtime_name = "docker"

    def __init__(
        self, host: ContainerHost, log_path: Path, workdir: Path, *, raw_push: bool = False
    ) -> None:
        SubprocessChannel.__init__(
            self, AttachedProcess(host, log_path), log_path, raw_push=raw_push
        )
        self._own(host, workdir)

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        return SubprocessChannel.call(self, verb, *self._static_args(verb, args), timeout=timeout)


def launch_process(
    runtime: DockerRuntime, spec: ProcessDriver, workdir: Path, *, log_dir: Path
) -> DockerProcessChannel:
    """Start ``spec``'s program in a container of its image (found by content tag or built)."""
    from rsp_sdk.images.engine import ensure_engine_image
    from rsp_sdk.images.lock import load_lock

    if spec.image is None:
        raise EngineError(
            "start",
            f"the program {spec.argv[:2]} declares no image (ProcessDriver.image), so only the "
            "subprocess runtime can carry it",
        )
    try:
        client = docker_client()
        lock = load_lock()
        image = ensure_engine_image(spec, client=client, lock=lock)
    except (DockerUnavailable, RspError) as exc:
        raise EngineError("start", str(exc)) from None
    started = time.monotonic()
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    uid = lock.base.uid
    _grant(workdir, uid)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "engine.log"
    user = f"{uid}:{uid}" if os.geteuid() == 0 else f"{os.geteuid()}:{os.getegid()}"
    container = runtime._container(
        image.tag,
        list(spec.image.argv),
        {"HOME": "/tmp", **spec.image.env},
        workdir,
        user,
        engine=spec.image.engine,
        read_only_root=spec.image.read_only_root,
    )
    host: ContainerHost | None = None
    try:
        container.start()
        host = ContainerHost(container, docker_client(), log_path, attach_output=True)
        with open(log_path, "ab") as log:
            log.write(
                f"[rsp] container {host.short_id} of {image.tag} ({image.image_id})\n".encode()
            )
        channel = DockerProcessChannel(host, log_path, workdir, raw_push=spec.raw_push)
    except BaseException:
        if host is not None:
            host.remove()
        else:
            with contextlib.suppress(Exception):
                container.stop(force=True, delete_volume=True)
        raise
    channel.image = image.tag
    channel.start_seconds = time.monotonic() - started
    return channel
