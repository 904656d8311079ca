"""The contract between engine sessions and the runtimes that carry engine drivers.

An engine is driven by a *driver*: a small piece of glue that speaks the engine's own API
(C-SPARQL's ``CsparqlEngineImpl``, CQELS's ``ExecContext``, rsp-js's ``RSPEngine``, ETALIS's
Prolog predicates) and exposes the same handful of *verbs* to us. A JVM driver is a Java class
implementing ``org.rspsdk.bridge.EngineDriver`` (containers/bridge); a non-JVM driver is a program
speaking the JSON-lines protocol on stdin/stdout. A *runtime* starts the process that hosts the
driver and returns a ``DriverChannel`` to call its verbs. Adapters describe their driver with a
``DriverSpec`` and never learn which runtime carries it (the httpx transport idea).

Verbs (same names in Java, JSON lines and here):

``open(config_json, workdir)``
    Create the engine. ``config_json`` is adapter-specific JSON (e.g. external time on/off).
``load_static(graph_iri, path)``
    Load background data (an RDF file) into the engine's named/default graph.
``register_stream(iri)``
``register_query(name, text)``
    Register a query in the engine's dialect; an engine rejection raises ``EngineError`` carrying
    the engine's own message.
``push(stream_iri, packed)``
    A batch of 10k–100k triples, never one call per triple. ``packed`` is UTF-8 text, one triple
    per line: ``<t_app_ms> <s> <p> <o>\\n`` with terms in N-Triples syntax (s and p contain no
    space; o is the rest of the line). Triples carry their own application time; engines that
    only know the wall clock ignore it (the feeder paces them in real time).
``advance_time(t_app_ms)``
    Tell an application-time engine that time has reached ``t_app_ms`` (flushes open windows at
    the end of input).
``poll() -> bytes``
    Drain the results buffered since the last poll (a Java-side/driver-side buffer, not per-row
    callbacks). UTF-8 JSON lines, one per result event (one relation/callback):
    ``{"query": name, "t_sys_ns": int, "t_app_ms": int|null, "vars": [...],
    "rows": [[term|null, ...], ...]}`` where terms are N-Triples text and ``t_sys_ns`` is the
    CLOCK_MONOTONIC time in ns at which the driver received the event (Java ``System.nanoTime``,
    Python ``time.monotonic_ns`` and Node ``process.hrtime.bigint`` all read that clock on
    Linux, also inside containers). An event with no rows is an empty relation.
``stats() -> dict``
    JVM drivers: ``heap_used``, ``heap_committed``, ``gc_count``, ``gc_time_ms``, ``threads``
    from the MXBeans; other drivers may return ``{}``. The only verb that may be called while
    another is in flight (the sampler asks during long pushes): JVM runtimes serve it on a
    bridge-side thread; the subprocess runtime answers ``{}`` rather than wait.
``close()``
    Stop the engine and release everything it holds.

Java side: ``EngineDriver.open(configJson, workdir, ResultBuffer results)`` receives the buffer
its observers append result events to (``poll`` and ``stats`` are served by the bridge, not the
driver); ``push(streamIri, byte[] packed, int offset, int length)``; ``Packed.forEach`` parses a
batch. JSON-lines side (``rsp_sdk.runtime.subprocess``): one request object per line
``{"id", "verb", "args"}``, one response ``{"id", "ok": true, "result"}`` or ``{"id", "ok":
false, "error", "trace"}``; ``push`` args are ``[stream_iri, packed_text]``; ``poll`` returns a
list of event objects in the form above.

Failure and cleanup rules every runtime keeps:

* a verb that fails inside the engine raises ``EngineError`` (engine message + trace) and the
  engine stays usable;
* the host process dying raises ``EngineCrashed`` (exit code / signal, log tail); a verb
  missing its timeout raises ``EngineTimeout`` and the host is killed at once. After either,
  the channel is *dead*: every later call raises the same kind of error;
* the host runs in its own process group with its stdin as a *lifeline*: it exits when stdin
  reaches EOF, so the engine dies with its parent even when the parent is SIGKILLed;
* ``close``/``kill`` leave nothing running: the process group and every descendant are killed,
  and with them every port the host listened on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.errors import RspError


class EngineError(RspError):
    """The engine refused or failed: carries the engine's own message and the verb that failed."""

    def __init__(self, verb: str, message: str, *, engine_trace: str | None = None) -> None:
        self.verb = verb
        self.engine_message = message
        self.engine_trace = engine_trace
        super().__init__(f"engine error in {verb}: {message}")


class EngineCrashed(EngineError):
    """The process hosting the driver died (exit code and the tail of its log in the message)."""


class EngineTimeout(EngineError):
    """A verb did not return within its timeout (the engine hangs or never answers)."""


class JvmDriver(BaseModel):
    """A Java driver class and everything the JVM needs to run it."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["jvm"] = "jvm"
    driver_class: str = Field(description="implements org.rspsdk.bridge.EngineDriver")
    classpath: list[Path] = Field(description="engine jars, dependencies, compiled glue")
    jvm_flags: list[str] = Field(default_factory=list, description="e.g. --add-opens …, -Xmx2g")
    system_properties: dict[str, str] = Field(default_factory=dict)
    engine: str = Field(default="", description="engine name (names its Docker image)")
    engine_version: str = Field(default="", description="engine version (image label)")
    read_only_root: bool = Field(
        default=True, description="docker: run with a read-only root filesystem"
    )


IMAGE_FILES = "/opt/rsp/files"
"""Where the files a ``ProcessImage`` names are copied to: ``/opt/rsp/files/<name>``."""


class ImageFile(BaseModel):
    """A host file or folder a program needs, copied into its image at ``IMAGE_FILES/<name>``."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="name in the image")
    host: Path = Field(description="the file or folder on the host (provisioning cache, adapter)")
    sha256: str | None = Field(
        default=None,
        description="content key when the caller already has one (e.g. an integrity-checked "
        "npm install named by its lock's hash): large folders are then not re-hashed at every "
        "launch; None = hash the file or folder",
    )

    @property
    def container(self) -> str:
        return f"{IMAGE_FILES}/{self.name}"


class ProcessImage(BaseModel):
    """How the ``docker`` runtime carries a ``ProcessDriver``: the Debian packages the program
    runs on (they must be in the pinned base lock, ``containers/base/bookworm.lock``), the files
    copied into the image, and the command line and environment *inside* the container (paths
    under ``IMAGE_FILES``). The image is the base plus these files, tagged by their content."""

    model_config = ConfigDict(frozen=True)

    engine: str = Field(description="engine name (names its Docker image)")
    engine_version: str = ""
    packages: list[str] = Field(
        default_factory=list, description="Debian packages of the base lock the program needs"
    )
    files: list[ImageFile] = Field(default_factory=list)
    argv: list[str] = Field(description="the command in the container, e.g. ['node', …]")
    env: dict[str, str] = Field(default_factory=dict)
    read_only_root: bool = True


class ProcessDriver(BaseModel):
    """A program speaking the JSON-lines protocol on stdin/stdout (Node, SWI-Prolog, Python).

    ``argv``/``env``/``cwd`` start it on the host (``subprocess`` runtime); ``image``, when the
    adapter declares one, lets the ``docker`` runtime run it in a pinned image instead.
    ``host_missing`` says what the host lacks to start it (e.g. no ``node`` on PATH): the
    subprocess runtime refuses with that message, while the image, which carries its own
    interpreter, still runs — so a machine with Docker needs no Node or SWI-Prolog.
    ``raw_push``: the program reads each batch raw after a ``push_raw`` request line instead of
    inside the JSON (``rsp_sdk.runtime.subprocess``), for engines fast enough that JSON-escaping
    the batches would be a visible share of their time."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["process"] = "process"
    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    image: ProcessImage | None = None
    host_missing: str | None = None
    raw_push: bool = False


DriverSpec = JvmDriver | ProcessDriver


class ResourceLimits(BaseModel):
    """Memory and CPU limits of the engine's host, from the run config. Only runtimes that can
    enforce them accept them (``docker``: cgroup limits of the container)."""

    model_config = ConfigDict(frozen=True)

    memory: str | None = Field(
        default=None,
        pattern=r"^[0-9]+[bkmg]?$",
        description="memory limit, bytes or with a b/k/m/g suffix (e.g. 2g); no swap beyond it",
    )
    cpus: float | None = Field(default=None, gt=0, description="CPU limit in cores (e.g. 1.5)")

    @property
    def active(self) -> bool:
        return self.memory is not None or self.cpus is not None

    def memory_bytes(self) -> int | None:
        if self.memory is None:
            return None
        units = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
        unit = self.memory[-1]
        if unit in units:
            return int(self.memory[:-1]) * units[unit]
        return int(self.memory)


@runtime_checkable
class DriverChannel(Protocol):
    """A started driver. Every call has a timeout; after ``close``/``kill`` nothing is left
    running (processes, JVMs, ports, containers)."""

    @property
    def pid(self) -> int:
        """Root of the process tree the sampler watches (the JVM, node, swipl, …)."""
        ...

    def call(self, verb: str, *args: Any, timeout: float | None = None) -> Any:
        """Invoke a verb other than push/poll (open, register_query, advance_time, stats, …)."""
        ...

    def push(self, stream_iri: str, packed: bytes, *, timeout: float | None = None) -> None: ...

    def poll(self, *, timeout: float | None = None) -> bytes: ...

    def close(self, *, timeout: float = 10.0) -> None:
        """Call the driver's ``close`` verb, then stop the host process (killing it if needed)."""
        ...

    def kill(self) -> None:
        """Stop the host process tree now, whatever state it is in."""
        ...


@runtime_checkable
class Runtime(Protocol):
    """Starts drivers. ``supports`` tells which driver kinds it can carry."""

    name: str
    supports: frozenset[str]  # {"jvm"} or {"process"}

    def launch(self, spec: DriverSpec, workdir: Path, *, log_dir: Path) -> DriverChannel:
        """Start the host process with the driver loaded; stdout/stderr go to ``log_dir``."""
        ...


# A runtime may also define ``unavailable() -> str | None``: why it cannot work on this machine
# (``docker``: no daemon reachable). The conformance kit skips its tests with that reason.
