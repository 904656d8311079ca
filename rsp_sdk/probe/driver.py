"""Running one probe stream on an engine: a fresh session, the probe's query, its elements
pushed one timestamp per batch, time advanced to the probe's end, outputs collected until the
engine has been quiet for a while.

What comes back is an ``Observation``: each output relation as the set of element ids its rows
name (identity query) or its count (COUNT query). A probe the engine refuses or fails on is an
observation too (``error``): the inference then says which field stayed undecided and why.
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.batch import TripleBatch
from rsp_sdk.engine.session import EngineSession, ResultEvent, Timeouts
from rsp_sdk.errors import RspError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.probe.streams import NS, STREAM, ProbeStream, QueryKind
from rsp_sdk.query.rspql import parse_rspql
from rsp_sdk.runtime import get_runtime

_ELEMENT = re.compile(re.escape(f"<{NS}e") + r"(\d+)>")
_NUMBER = re.compile(r'^"(-?\d+)"')


@dataclass(frozen=True)
class Relation:
    """One output relation: the element ids it names, or its COUNT value, and its stamp."""

    t_app: int | None
    ids: frozenset[int]
    rows: int
    count: int | None = None

    def show(self) -> str:
        at = "?" if self.t_app is None else str(self.t_app)
        if self.count is not None:
            return f"{at}: count {self.count}"
        return (
            f"{at}: {{{', '.join(f'e{i}' for i in sorted(self.ids))}}}"
            if self.rows
            else (f"{at}: empty relation")
        )


@dataclass
class Observation:
    """What one probe produced (``error`` set: it did not run to the end)."""

    probe: ProbeStream
    relations: list[Relation] = field(default_factory=list)
    error: str | None = None
    push_wall_s: float = 0.0
    started: bool = True

    @property
    def ok(self) -> bool:
        return self.error is None

    def containing(self, eid: int) -> list[int]:
        """Indexes of the relations naming element ``eid``."""
        return [k for k, r in enumerate(self.relations) if eid in r.ids]

    def together(self, a: int, b: int) -> bool:
        return any(a in r.ids and b in r.ids for r in self.relations)

    def summary(self, limit: int = 8) -> str:
        if self.error:
            return f"failed: {self.error}"
        if not self.relations:
            return "no output"
        shown = "; ".join(r.show() for r in self.relations[:limit])
        more = len(self.relations) - limit
        return shown + (f"; … {more} more" if more > 0 else "")


@dataclass(frozen=True)
class ProbeSettings:
    """How probes are run: runtime, engine config, how long output may take to come."""

    runtime: str
    config: dict[str, Any] = field(default_factory=dict)
    quiet_s: float = 1.5
    max_wait_s: float = 20.0
    real_time: bool = False
    workdir: Path | None = None
    cache: Any = None


def relation_of(event: ResultEvent, kind: QueryKind) -> Relation:
    if kind is QueryKind.COUNT:
        count = None
        for row in event.rows:
            for term in row:
                m = _NUMBER.match(term or "")
                if m:
                    count = int(m.group(1))
        return Relation(event.t_app_ms, frozenset(), len(event.rows), count)
    ids = set()
    for row in event.rows:
        for term in row:
            m = _ELEMENT.fullmatch(term or "")
            if m:
                ids.add(int(m.group(1)))
    return Relation(event.t_app_ms, frozenset(ids), len(event.rows))


def run_probe(adapter: Adapter, probe: ProbeStream, settings: ProbeSettings) -> Observation:
    """Run ``probe`` on a fresh engine; never raises for what the engine does."""
    obs = Observation(probe)
    groups: dict[int, list[tuple[int, str, str, str]]] = {}
    for e in probe.elements:
        groups.setdefault(e.t, []).append(e.triple())
    spec = parse_rspql(probe.rspql(), name=probe.name)
    events, obs.error, obs.push_wall_s = run_query(
        adapter, spec, STREAM, groups, probe.end_ms, settings
    )
    obs.relations = [relation_of(ev, probe.kind) for ev in events]
    obs.started = not (obs.error or "").startswith(NOT_STARTED)
    return obs


NOT_STARTED = "the engine did not start"


def run_query(
    adapter: Adapter,
    spec: QuerySpec,
    stream: str,
    groups: dict[int, list[tuple[int, str, str, str]]],
    end_ms: int,
    settings: ProbeSettings,
) -> tuple[list[ResultEvent], str | None, float]:
    """Register ``spec`` on a fresh engine, push ``groups`` (one batch per timestamp, in time
    order), advance to ``end_ms`` and drain: (events, error or None, seconds pushing)."""
    events: list[ResultEvent] = []
    with tempfile.TemporaryDirectory(prefix=f"probe-{spec.name}-", dir=settings.workdir) as tmp:
        try:
            session = adapter.open(
                get_runtime(settings.runtime),
                Path(tmp),
                config=settings.config,
                timeouts=Timeouts(open=120, verb=30, push=30, poll=30, close=15),
                cache=settings.cache,
            )
        except (RspError, OSError) as exc:
            return events, f"{NOT_STARTED}: {exc}", 0.0
        with session:
            try:
                session.register_stream(stream)
                session.register_query(spec)
                wall = _feed(session, stream, groups, end_ms, settings, events)
            except (RspError, OSError, ValueError) as exc:
                return events, f"{type(exc).__name__}: {exc}", 0.0
    return events, None, wall


def _feed(
    session: EngineSession,
    stream: str,
    groups: dict[int, list[tuple[int, str, str, str]]],
    end_ms: int,
    settings: ProbeSettings,
    events: list[ResultEvent],
) -> float:
    start = time.monotonic()
    first = min(groups)
    for t in sorted(groups):
        if settings.real_time:
            delay = start + (t - first) / 1000 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        session.push(stream, TripleBatch.from_triples(groups[t]))
        events.extend(session.poll())
    wall = time.monotonic() - start
    if settings.real_time:
        delay = start + (end_ms - first) / 1000 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    session.advance_time(end_ms)
    _drain(session, settings, events)
    return wall


def _drain(session: EngineSession, settings: ProbeSettings, events: list[ResultEvent]) -> None:
    """Poll until nothing came for ``quiet_s`` (or ``max_wait_s`` in all); with nothing at all
    so far, wait the whole ``max_wait_s`` for a first result (a wall-clock engine's timer)."""
    deadline = time.monotonic() + settings.max_wait_s
    last = time.monotonic()
    while time.monotonic() < deadline and (
        time.monotonic() - last < settings.quiet_s or not events
    ):
        got = session.poll()
        if got:
            events.extend(got)
            last = time.monotonic()
        else:
            time.sleep(0.1)
