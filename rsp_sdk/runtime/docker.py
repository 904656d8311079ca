"""The ``docker`` runtime: the py4j bridge server, with the engine's JVM inside its pinned image.

Same protocol as the ``py4j`` runtime (py4j control lane + framed data lane, both authenticated
by a random token), the only difference is where the JVM runs: in a container of the engine's
image (``rsp_sdk.images.engine``: base + provisioned classpath + bridge, found by content tag or
built on the spot), started and stopped with testcontainers. The machines here have no bridge
networks, so the container uses **host networking** and the bridge binds 127.0.0.1 ports of the
host, which the ready line reports as usual. Images are never pulled (Ryuk, testcontainers'
reaper, would need one, so it is always off; cleanup is ours, see below).

The container runs as a non-root user (uid 10001, or the caller's own uid when not root), with a
read-only root filesystem (unless the engine's manifest says ``read_only_root = false``), a tmpfs
``/tmp``, and the run's work dir bind-mounted read-write at
the same path (so the paths of ``open``/``load_static`` mean the same inside and out; a static
file elsewhere is copied into the work dir first). Memory and CPU limits come from the run
config (``ResourceLimits``).

The sampler watches ``pid`` = the container's init process as the host sees it (``State.Pid``:
the JVM itself), so RSS/CPU figures are comparable with the other runtimes.

Cleanup, whatever happens: ``close``/``kill`` remove the container (forced) and wait until the
daemon no longer knows it; a crash, a timeout or Ctrl-C go through ``kill``. If this Python
process dies (even by SIGKILL) the *lifeline* takes the container down: we hold the container's
stdin attached (``StdinOnce``), the kernel closes that socket with us, the bridge sees EOF and
exits, and the container was created with ``auto_remove``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsp_sdk.errors import RspError
from rsp_sdk.images.client import LABEL, DockerUnavailable, docker_client, docker_unavailable
from rsp_sdk.runtime._cause import died
from rsp_sdk.runtime._channel import HostChannel
from rsp_sdk.runtime._process import log_tail
from rsp_sdk.runtime.base import (
    DriverSpec,
    EngineCrashed,
    EngineError,
    JvmDriver,
    ProcessDriver,
    ResourceLimits,
)
from rsp_sdk.runtime.bridge import bridge_argv
from rsp_sdk.runtime.py4j import READY, DataLane, Py4JChannel

if TYPE_CHECKING:
    from rsp_sdk.runtime._docker_process import DockerProcessChannel

_SIGNALS = {129: "SIGHUP", 130: "SIGINT", 134: "SIGABRT", 137: "SIGKILL", 143: "SIGTERM"}


class ContainerHost:
    """The engine's container seen as a process: ``pid``, ``poll``, ``wait``, a lifeline.

    Owns the testcontainers ``DockerContainer`` (start/stop) and a docker client of its own for
    the long-lived calls: the exit waiter, the log pump that copies the container's stdout and
    stderr into the run's ``engine.log`` (and spots the bridge's ready line), and the attached
    stdin that serves as lifeline.
    """

    def __init__(
        self, container: Any, client: Any, log_path: Path, *, attach_output: bool = False
    ) -> None:
        self.container = container
        self.attach_output = attach_output
        self.client = client
        self.log_path = log_path
        wrapped = container.get_wrapped_container()
        self.id: str = wrapped.id
        self.short_id: str = self.id[:12]
        self._exit_code: int | None = None
        self._exited = threading.Event()
        self._ready = threading.Event()
        self._logs_done = threading.Event()
        self.ports: tuple[int, int] | None = None
        self._removed = False
        self._remove_lock = threading.Lock()
        threading.Thread(
            target=self._wait, name=f"rsp-docker-wait-{self.short_id}", daemon=True
        ).start()
        self.stdin = self._attach()
        state = client.api.inspect_container(self.id)["State"]
        self.pid: int = int(state.get("Pid") or 0)
        if not self.pid and not self._exited.wait(2.0):  # pragma: no cover - daemon oddity
            raise EngineError("start", f"container {self.short_id} reports no process id")
        self.stdout = self.stderr = None
        if not attach_output:  # else the channel reads stdout and stderr from the lifeline
            threading.Thread(
                target=self._pump, name=f"rsp-docker-log-{self.short_id}", daemon=True
            ).start()

    # ---- process-like view --------------------------------------------------------------------

    def poll(self) -> int | None:
        """``None`` while the container runs; its exit code after (-1 if the daemon lost it)."""
        if not self._exited.is_set():
            return None
        return self._exit_code if self._exit_code is not None else -1

    def wait(self, timeout: float | None = None) -> int | None:
        self._exited.wait(timeout)
        return self.poll()

    def describe_exit(self) -> str:
        code = self.poll()
        if code is None:
            return "container still running, channel lost"
        if code == -1:
            return "exit code unknown: the container was already removed"
        if code in _SIGNALS:
            return f"killed by {_SIGNALS[code]} (exit code {code})"
        return f"exit code {code}"

    def _wait(self) -> None:
        try:
            self._exit_code = int(self.client.api.wait(self.id, timeout=None)["StatusCode"])
        except Exception:
            self._exit_code = None
        finally:
            self._exited.set()

    def _attach(self) -> socket.socket | None:
        """Attach to stdin: the daemon closes the container's stdin when this socket closes.

        With ``attach_output`` the same socket also carries the container's stdout and stderr
        (multiplexed frames, replayed from the container's start: ``logs``), which is how a
        program speaking JSON lines on stdin/stdout is talked to."""
        params = {"stdin": 1, "stream": 1}
        if self.attach_output:
            params.update({"stdout": 1, "stderr": 1, "logs": 1})
        sock = self.client.api.attach_socket(self.id, params=params)
        raw: socket.socket | None = getattr(sock, "_sock", None)
        return raw

    def close_lifeline(self) -> None:
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                self.stdin.shutdown(socket.SHUT_WR)

    def _pump(self) -> None:
        """Copy the container's output into the log; report the ready line's ports."""
        pending = b""
        try:
            stream = self.client.api.logs(self.id, stream=True, follow=True)
            with open(self.log_path, "ab") as log:
                for chunk in stream:
                    log.write(chunk)
                    log.flush()
                    if self.ports is None:
                        pending += chunk
                        m = READY.search(pending)
                        if m:
                            self.ports = (int(m.group(1)), int(m.group(2)))
                            self._ready.set()
                            pending = b""
                        else:
                            pending = pending[-4096:]
        except Exception:  # the container went away under the stream
            pass
        finally:
            self._logs_done.set()

    def await_ready(self, timeout: float) -> tuple[int, int] | None:
        """The bridge's ports, or ``None`` when it exited or ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ready.wait(0.05):
                return self.ports
            if self._exited.is_set() or self._logs_done.is_set():
                return self.ports
        return None

    def drain_logs(self, timeout: float) -> None:
        """Let the pump copy what the container printed before it exited."""
        self._logs_done.wait(timeout)

    def output_done(self) -> None:
        """The attached output reached its end (``attach_output``: the channel's reader)."""
        self._logs_done.set()

    # ---- removal ------------------------------------------------------------------------------

    def remove(self, grace: float = 0.0) -> None:
        """Stop and remove the container (testcontainers ``stop``: forced removal), then wait
        until the daemon no longer knows it. ``grace``: first let it exit on its own."""
        import docker.errors

        with self._remove_lock:
            if self._removed:
                return
            if grace > 0:
                self._exited.wait(grace)
            try:
                self.container.stop(force=True, delete_volume=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:  # auto_remove already under way
                if "in progress" not in str(exc) and exc.status_code != 409:
                    raise
            finally:
                with contextlib.suppress(Exception):
                    self.container.get_docker_client().client.close()
            deadline = time.monotonic() + 15.0
            while time.monotonic() < deadline:
                try:
                    self.client.api.inspect_container(self.id)
                except docker.errors.NotFound:
                    break
                time.sleep(0.05)
            else:  # pragma: no cover - a daemon that cannot remove it
                raise EngineError("close", f"container {self.short_id} could not be removed")
            self._removed = True
            self._exited.wait(5.0)
            self._logs_done.wait(5.0)
            if self.stdin is not None:
                with contextlib.suppress(OSError):
                    self.stdin.close()
            with contextlib.suppress(Exception):
                self.client.close()


class ContainerOwner(HostChannel):
    """What a channel whose host is a container does differently from a host process: paths
    the container can read, the crash message, and removal instead of killing a process tree.
    Shared by the py4j channel (JVM drivers) and the JSON-lines channel (programs)."""

    host: ContainerHost
    workdir: Path

    def _own(self, host: ContainerHost, workdir: Path) -> None:
        self.host = host
        self.workdir = workdir
        self.container_id = host.id
        self.image = ""
        self.start_seconds = 0.0

    def _static_args(self, verb: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if verb == "load_static" and len(args) >= 2:
            return (args[0], self._inside(Path(args[1])), *args[2:])
        return args

    def _inside(self, path: Path) -> str:
        """A path the container can read: the work dir is mounted at the same place; any other
        file is copied into it first."""
        path = path.resolve()
        if path.is_relative_to(self.workdir):
            return str(path)
        target = self.workdir / ".rsp-static" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target, dirs_exist_ok=True)
        else:
            shutil.copy2(path, target)
        return str(target)

    def _crashed(self, verb: str) -> EngineCrashed:
        self.host.wait(2.0)
        self.host.drain_logs(2.0)
        tail = log_tail(self.log_path)
        head = (
            f"engine process {self.host.pid} died ({self.host.describe_exit()}) "
            f"in container {self.host.short_id}"
        )
        message = died(head, self.log_path, tail)
        err = EngineCrashed(verb, message, engine_trace=tail or None)
        self._fail(err)
        return err

    def kill(self) -> None:
        with self._kill_lock:
            self._closed = True
            self._release()
            self.host.remove()

    def _shutdown(self, grace: float) -> None:
        with self._kill_lock:
            self._closed = True
            self._release()
            self.host.close_lifeline()  # the bridge (or program) exits on stdin EOF
            self.host.remove(grace=grace)


class DockerChannel(ContainerOwner, Py4JChannel):
    """The py4j channel, with a container as the host process."""

    runtime_name = "docker"

    def __init__(
        self, host: ContainerHost, log_path: Path, gateway: Any, data: DataLane, workdir: Path
    ) -> None:
        Py4JChannel.__init__(self, host, log_path, gateway, data)
        self._own(host, workdir)

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        return Py4JChannel.call(self, verb, *self._static_args(verb, args), timeout=timeout)


def _grant(workdir: Path, uid: int) -> None:
    """Let the container's user write the work dir (we are root: hand it over)."""
    if os.geteuid() == 0:
        os.chown(workdir, uid, uid)


class DockerRuntime:
    """Carries ``JvmDriver`` specs (the bridge) and ``ProcessDriver`` specs that declare an
    image (``rsp_sdk.runtime._docker_process``) in a container of the engine's image, one per
    launch."""

    name = "docker"
    supports = frozenset({"jvm", "process"})
    image_kinds = frozenset({"process"})  # programs only when their driver declares an image

    def __init__(
        self,
        *,
        limits: ResourceLimits | None = None,
        read_only: bool = True,
        start_timeout: float = 120.0,
        bridge: Sequence[Path] | None = None,
    ) -> None:
        self.limits = limits or ResourceLimits()
        self.read_only = read_only
        self.start_timeout = start_timeout
        self._bridge = list(bridge) if bridge is not None else None

    def unavailable(self) -> str | None:
        """Why this runtime cannot work here (no Docker daemon), else ``None``."""
        return docker_unavailable()

    def launch(
        self, spec: DriverSpec, workdir: Path, *, log_dir: Path
    ) -> DockerChannel | DockerProcessChannel:
        if isinstance(spec, ProcessDriver):
            from rsp_sdk.runtime._docker_process import launch_process

            return launch_process(self, spec, workdir, log_dir=log_dir)
        if not isinstance(spec, JvmDriver):
            raise TypeError(f"the docker runtime cannot carry {spec.kind!r} drivers")
        image, uid = _engine_image(spec)
        started = time.monotonic()  # the image exists: from here on, container start to ready
        workdir = Path(workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        _grant(workdir, uid)
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / "engine.log"
        token = secrets.token_hex(24)
        user = f"{uid}:{uid}" if os.geteuid() == 0 else f"{os.geteuid()}:{os.getegid()}"
        container = self._container(
            image.tag,
            bridge_argv("java", spec, ":".join(image.classpath), "--host", "127.0.0.1"),
            {"RSP_BRIDGE_TOKEN": token},
            workdir,
            user,
            engine=spec.engine,
            read_only_root=spec.read_only_root,
        )
        host: ContainerHost | None = None
        try:
            container.start()
            host = ContainerHost(container, docker_client(), log_path)
            with open(log_path, "ab") as log:
                log.write(
                    f"[rsp] container {host.short_id} of {image.tag} ({image.image_id})\n".encode()
                )
            ports = host.await_ready(self.start_timeout)
            if ports is None:
                raise self._start_failure(host, log_path)
            gateway, data = _connect(ports, token, self.start_timeout)
        except BaseException:
            if host is not None:
                host.remove()
            else:
                with contextlib.suppress(Exception):
                    container.stop(force=True, delete_volume=True)
            raise
        channel = DockerChannel(host, log_path, gateway, data, workdir)
        channel.ports = ports
        channel.image = image.tag
        channel.start_seconds = time.monotonic() - started
        return channel

    def _container(
        self,
        image: str,
        argv: list[str],
        env: dict[str, str],
        workdir: Path,
        user: str,
        *,
        engine: str,
        read_only_root: bool,
    ) -> Any:
        from docker.types import LogConfig
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer

        # Ryuk (testcontainers' reaper) is an image we would have to pull: never start it.
        testcontainers_config.ryuk_disabled = True
        container = DockerContainer(image)
        container.image = image  # no $TESTCONTAINERS_HUB_IMAGE_NAME_PREFIX: the image is local
        safe = re.sub(r"[^a-zA-Z0-9_.-]+", "-", engine or "engine")
        kwargs: dict[str, Any] = {
            "network": "host",
            "user": user,
            "read_only": self.read_only and read_only_root,
            "stdin_open": True,  # with detach=False at create: StdinOnce, our lifeline
            "auto_remove": True,
            "working_dir": str(workdir),
            "labels": {
                f"{LABEL}.runtime": "docker",
                f"{LABEL}.engine.name": engine,
                f"{LABEL}.owner-pid": str(os.getpid()),
            },
            "log_config": LogConfig(type="json-file", config={"max-size": "64m", "max-file": "1"}),
        }
        memory = self.limits.memory_bytes()
        if memory is not None:
            kwargs["mem_limit"] = memory
            kwargs["memswap_limit"] = memory  # no swap: the limit is the limit
        if self.limits.cpus is not None:
            kwargs["nano_cpus"] = int(self.limits.cpus * 1e9)
        container = container.with_command(argv).with_name(f"rsp-{safe}-{secrets.token_hex(5)}")
        for key, value in env.items():
            container = container.with_env(key, value)
        return (
            container.with_volume_mapping(str(workdir), str(workdir), "rw")
            .with_tmpfs_mount("/tmp")
            .with_kwargs(**kwargs)
        )

    def _start_failure(self, host: ContainerHost, log_path: Path) -> EngineError:
        if host.poll() is None and not host.wait(0.5) and host.poll() is None:
            return EngineError(
                "start",
                f"the bridge server in container {host.short_id} did not get ready within "
                f"{self.start_timeout} s; log {log_path}:\n{log_tail(log_path)}",
            )
        host.drain_logs(2.0)
        tail = log_tail(log_path)
        head = f"engine process {host.pid} died ({host.describe_exit()})"
        head += f" in container {host.short_id}"
        message = died(head, log_path, tail)
        return EngineCrashed("start", message, engine_trace=tail or None)


def _engine_image(spec: JvmDriver) -> tuple[Any, int]:
    """The engine's image (built from the provisioning cache if its tag is missing) and the
    base image's uid; Docker or image trouble is the engine's failure to start."""
    from rsp_sdk.images.engine import ensure_engine_image
    from rsp_sdk.images.lock import load_lock

    try:
        lock = load_lock()
        return ensure_engine_image(spec, client=docker_client(), lock=lock), lock.base.uid
    except (DockerUnavailable, RspError) as exc:
        raise EngineError("start", str(exc)) from None


def _connect(ports: tuple[int, int], token: str, timeout: float) -> tuple[Any, DataLane]:
    """The py4j gateway and the data lane to a bridge that announced ``ports``."""
    from py4j.java_gateway import GatewayParameters, JavaGateway

    try:
        gateway = JavaGateway(
            gateway_parameters=GatewayParameters(
                port=ports[0], auth_token=token, auto_field=False, eager_load=True
            )
        )
        return gateway, DataLane(ports[1], token, timeout)
    except Exception as exc:
        raise EngineError("start", f"cannot connect to the bridge server: {exc}") from exc
