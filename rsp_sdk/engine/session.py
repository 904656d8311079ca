"""``EngineSession``: the one implementation of the engine verbs, over any ``DriverChannel``.

Adapters only describe an engine (dialect renderer, driver spec, capabilities, profile); this
class does the rest for all of them, whichever runtime carries the driver: it sends the verbs
with their timeouts, refuses queries the engine cannot run (before they reach it), parses the
drained result lines into ``ResultEvent``s with SPARQL JSON bindings, and guarantees cleanup —
``close`` (or leaving the ``with`` block, also on errors and Ctrl-C) stops the host process
tree, so nothing is left running.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.engine.batch import TripleBatch
from rsp_sdk.engine.capabilities import Feature, required_features
from rsp_sdk.errors import RspError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.results import term_json
from rsp_sdk.model.terms import to_sparql_json
from rsp_sdk.runtime.base import DriverChannel, EngineError, Runtime
from rsp_sdk.runtime.reply import max_reply_bytes, reply_too_large

if TYPE_CHECKING:
    from rsp_sdk.engine.adapter import Adapter

log = logging.getLogger(__name__)

_LAUNCHED = threading.local()


@contextlib.contextmanager
def on_launch(callback: Callable[[DriverChannel], None]) -> Iterator[None]:
    """While this is entered, ``EngineSession.open`` on this thread hands the host's channel to
    ``callback`` as soon as it is launched, before the engine's own ``open`` verb runs. That
    verb may take long (an engine's start-up, or a hang) and the session does not exist until
    it returns: a Ctrl-C that reached another thread (``rsp matrix run --jobs``) or a deadline
    can then kill the host at once instead of waiting for the call to return. ``callback`` may
    raise (the channel is killed and the error goes on)."""
    previous = getattr(_LAUNCHED, "callback", None)
    _LAUNCHED.callback = callback
    try:
        yield
    finally:
        _LAUNCHED.callback = previous


class UnsupportedQuery(RspError):
    """The adapter's engine lacks features the query needs; raised before the engine sees it.

    Adapters raise it from ``render`` too (with ``reason``) when their dialect cannot express a
    construct the feature flags do not name (e.g. EP-SPARQL's FILTER has no ``||``); ``rsp run``
    records both the same way.
    """

    def __init__(
        self,
        adapter: str,
        query: str,
        missing: frozenset[Feature],
        *,
        reason: str | None = None,
    ) -> None:
        self.adapter = adapter
        self.query = query
        self.missing = missing
        names = ", ".join(sorted(f.value for f in missing))
        super().__init__(
            f"engine {adapter} cannot run query {query!r}: "
            + (reason or f"it needs {names}, which {adapter} does not support")
        )


class Timeouts(BaseModel):
    """Seconds each verb may take before the engine is declared hung (and killed)."""

    model_config = ConfigDict(frozen=True)

    open: float = Field(default=120.0, gt=0)
    verb: float = Field(default=60.0, gt=0, description="register_*, load_static, advance_time")
    push: float = Field(default=300.0, gt=0)
    poll: float = Field(default=60.0, gt=0)
    stats: float = Field(default=5.0, gt=0)
    close: float = Field(default=15.0, gt=0)


@dataclass(frozen=True, slots=True)
class ResultEvent:
    """One relation an engine emitted (one observer callback); ``rows`` empty = empty relation.

    ``t_sys_ns`` is CLOCK_MONOTONIC when the driver received it; ``rows`` hold N-Triples terms
    aligned with ``vars`` (None = unbound); ``bindings`` gives them as SPARQL 1.1 JSON terms.
    """

    query: str
    t_sys_ns: int
    t_app_ms: int | None
    vars: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def bindings(self) -> list[dict[str, dict[str, str]]]:
        return [
            {v: to_sparql_json(t) for v, t in zip(self.vars, row, strict=True) if t is not None}
            for row in self.rows
        ]

    @classmethod
    def parse_lines(cls, data: bytes) -> list[ResultEvent]:
        """Parse a drained poll payload (JSON lines), naming the offending line when malformed."""
        events: list[ResultEvent] = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                vars_ = tuple(str(v) for v in obj["vars"])
                rows = tuple(tuple(r) for r in obj["rows"])
                for r in rows:
                    if len(r) != len(vars_):
                        raise ValueError(f"row {list(r)} does not match vars {list(vars_)}")
                    for term in r:
                        if term is not None:
                            term_json(term)  # validates; the recorder then finds it cached
                t_app = obj.get("t_app_ms")
                events.append(
                    cls(
                        str(obj["query"]),
                        int(obj["t_sys_ns"]),
                        None if t_app is None else int(t_app),
                        vars_,
                        rows,
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                shown = line[:300].decode(errors="replace")
                raise EngineError(
                    "poll", f"malformed result event on line {number}: {exc}: {shown}"
                ) from exc
        return events


@dataclass(frozen=True, slots=True)
class QueryHandle:
    """A registered query: the name results carry, the text the engine got, its spec if any."""

    name: str
    text: str
    spec: QuerySpec | None = None
    features: frozenset[Feature] = field(default_factory=frozenset)


class EngineSession:
    """A live engine behind a driver channel. Use as a context manager (or call ``close``)."""

    def __init__(
        self,
        adapter: Adapter,
        channel: DriverChannel,
        *,
        runtime: str,
        workdir: Path,
        log_dir: Path,
        timeouts: Timeouts | None = None,
    ) -> None:
        self.adapter = adapter
        self.channel = channel
        self.runtime = runtime
        self.workdir = workdir
        self.log_dir = log_dir
        self.timeouts = timeouts or Timeouts()
        self.queries: dict[str, QueryHandle] = {}
        self.streams: list[str] = []
        self._closed = False

    @classmethod
    def start(
        cls,
        adapter: Adapter,
        runtime: Runtime,
        workdir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        timeouts: Timeouts | None = None,
        log_dir: Path | None = None,
        cache: Any = None,
    ) -> EngineSession:
        """Launch the adapter's driver on ``runtime`` and ``open`` the engine."""
        spec = adapter.driver(cache)
        if spec.kind not in runtime.supports:
            raise RspError(
                f"runtime {runtime.name} cannot carry {adapter.name}'s {spec.kind} driver; "
                f"it carries {', '.join(sorted(runtime.supports))} drivers"
            )
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        log_dir = Path(log_dir) if log_dir is not None else workdir / "logs"
        channel = runtime.launch(spec, workdir, log_dir=log_dir)
        session = cls(
            adapter,
            channel,
            runtime=runtime.name,
            workdir=workdir,
            log_dir=log_dir,
            timeouts=timeouts,
        )
        try:
            announce = getattr(_LAUNCHED, "callback", None)
            if announce is not None:
                announce(channel)
            channel.call(
                "open",
                json.dumps(dict(config or {})),
                str(workdir.resolve()),
                timeout=session.timeouts.open,
            )
        except BaseException:
            channel.kill()
            raise
        return session

    @property
    def pid(self) -> int:
        return self.channel.pid

    def __enter__(self) -> EngineSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
            return
        try:  # an error is already on its way: clean up, but never mask it
            self.close()
        except Exception as close_error:
            log.warning("closing %s after %s failed too: %s", self.adapter.name, exc, close_error)

    # ---- verbs -------------------------------------------------------------------------------

    def load_static(self, graph_iri: str, data: Path) -> None:
        if Feature.STATIC_DATA not in self.adapter.capabilities:
            raise UnsupportedQuery(self.adapter.name, graph_iri, frozenset({Feature.STATIC_DATA}))
        self.channel.call(
            "load_static", graph_iri, str(Path(data).resolve()), timeout=self.timeouts.verb
        )

    def register_stream(self, iri: str) -> None:
        self.channel.call("register_stream", iri, timeout=self.timeouts.verb)
        self.streams.append(iri)

    def check(self, query: QuerySpec) -> frozenset[Feature]:
        """The features ``query`` needs; raises ``UnsupportedQuery`` if the engine lacks any."""
        needed = required_features(query)
        missing = self.adapter.capabilities.missing(needed)
        if missing:
            raise UnsupportedQuery(self.adapter.name, query.name, missing)
        return needed

    def register_query(self, query: QuerySpec | str, *, name: str | None = None) -> QueryHandle:
        """Register a ``QuerySpec`` (checked, then rendered to the engine's dialect) or, for
        engine-specific tests, a text already in the engine's dialect (sent as is)."""
        if isinstance(query, QuerySpec):
            features = self.check(query)
            handle = QueryHandle(name or query.name, self.adapter.render(query), query, features)
        else:
            handle = QueryHandle(name or f"q{len(self.queries) + 1}", query)
        if handle.name in self.queries:
            raise RspError(f"a query named {handle.name!r} is already registered")
        self.channel.call("register_query", handle.name, handle.text, timeout=self.timeouts.verb)
        self.queries[handle.name] = handle
        return handle

    def push(self, stream: str, batch: TripleBatch) -> None:
        self.channel.push(stream, batch.packed, timeout=self.timeouts.push)

    def advance_time(self, t_app_ms: int) -> None:
        self.channel.call("advance_time", int(t_app_ms), timeout=self.timeouts.verb)

    def poll(self) -> list[ResultEvent]:
        data = self.channel.poll(timeout=self.timeouts.poll)
        limit = max_reply_bytes()
        if len(data) > limit:  # the runtimes that read a stream stop earlier; jpype hands it over
            self.kill()
            raise reply_too_large("poll", len(data), limit)
        return ResultEvent.parse_lines(data)

    def stats(self) -> dict[str, Any]:
        """Engine/JVM numbers (heap, GC, threads); ``{}`` when the driver cannot say now."""
        result = self.channel.call("stats", timeout=self.timeouts.stats)
        return dict(result) if isinstance(result, Mapping) else {}

    def close(self) -> None:
        """Close the engine and stop its host; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.channel.close(timeout=self.timeouts.close)

    def kill(self) -> None:
        """Stop the host process tree now (Ctrl-C, a run that must end)."""
        self._closed = True
        self.channel.kill()
