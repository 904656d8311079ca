"""One run: an engine session fed by the feeder, recorded by the recorder, watched by the sampler.

``run(RunRequest)`` is what ``rsp run`` calls. Whatever happens — the engine crashes, hangs,
rejects the query, the user presses Ctrl-C — the run directory ends with a ``status.json`` that
says so (with the engine's own message), every result received until then is on disk, and the
engine's process tree is gone; errors come back as a ``RunSummary`` with ``state != "ok"`` so a
caller (the matrix) simply goes on with the next run. Only Ctrl-C is re-raised after cleanup.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.engine.adapter import Adapter, config_problem
from rsp_sdk.engine.capabilities import Feature, required_features
from rsp_sdk.engine.registry import get_adapter
from rsp_sdk.engine.session import EngineSession, Timeouts, UnsupportedQuery, on_launch
from rsp_sdk.errors import InputError, RspError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.deadline import Deadline, stop_requested
from rsp_sdk.run.feeder import FeederConfig, Plan, plan
from rsp_sdk.run.recorder import RunRecorder, RunStatus
from rsp_sdk.run.sampler import Sampler
from rsp_sdk.runtime import get_runtime, runtimes_for
from rsp_sdk.runtime.base import EngineError, ResourceLimits, Runtime
from rsp_sdk.streams.io import read_static, read_stream
from rsp_sdk.util.atomic import atomic_path


class QueryInput(BaseModel):
    """The query of a run: a QuerySpec (rendered by the adapter) or engine-dialect text."""

    model_config = ConfigDict(frozen=True)

    source: str
    spec: QuerySpec | None = None
    raw_text: str | None = None
    name: str


def load_query(
    path: Path | str, *, raw: bool = False, params: dict[str, str] | None = None
) -> QueryInput:
    """The query of a run.

    ``raw``: the file is already in the engine's dialect and is sent as is (no capability
    check). A ``.json`` file holding a serialised ``QuerySpec`` is read directly. Anything else
    goes to ``rsp_sdk.query.load_query`` with ``params`` (RSP-QL, ``FILE.properties#srb.queryN``,
    TOML/JSON, YABench folders) — the loader ``rsp oracle`` uses, so both read the same query.
    """
    from rsp_sdk.query import load_query as parse_query

    path = Path(path)
    if raw:
        if not path.is_file():
            raise InputError("query file not found", path=path)
        if params:
            raise InputError("--param does not apply to a --raw query", text=", ".join(params))
        text = path.read_text(encoding="utf-8")
        return QueryInput(source=str(path), raw_text=text.strip(), name=path.stem)
    if path.suffix == ".json" and path.is_file():
        try:
            spec = QuerySpec.model_validate_json(path.read_text(encoding="utf-8"))
            return QueryInput(source=str(path), spec=spec, name=spec.name)
        except ValueError:
            pass  # not a serialised QuerySpec: maybe the parser's JSON form
    spec = parse_query(str(path), params or {})
    return QueryInput(source=str(path), spec=spec, name=spec.name)


class RunRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    engine: str
    runtime: str
    query: Path
    raw_query: bool = False
    params: dict[str, str] = Field(
        default_factory=dict, description="query template parameters (--param NAME=VALUE)"
    )
    static: list[Path] = Field(
        default_factory=list,
        description="static data files (RDF or static Parquet), loaded into every static "
        "graph the query names (FROM <g>) before it is registered",
    )
    stream: Path
    output: Path
    feeder: FeederConfig = Field(default_factory=FeederConfig)
    warmup: Path | None = None
    engine_config: dict[str, Any] = Field(default_factory=dict)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="longest the whole run (open, feeding, drain, close) may take; past it "
        "the engine is killed and the run fails with RunTimeout (None: no deadline)",
    )
    limits: ResourceLimits = Field(
        default_factory=ResourceLimits, description="memory/CPU limits (docker runtime)"
    )
    sample_interval_s: float = Field(default=0.5, gt=0)
    poll_interval_s: float = Field(default=0.2, gt=0)
    drain_quiet_s: float = Field(default=2.0, ge=0)
    drain_max_s: float = Field(default=60.0, ge=0)
    flush_ms: int | None = Field(
        default=None,
        description="advance time this far past the last triple (default: "
        "the longest window range + step, or 60 s for raw queries)",
    )
    instances: int = Field(
        default=1,
        ge=1,
        description="register the query this many times on the one engine (CityBench's "
        "concurrency), named NAME_1 … NAME_N; each instance's results carry its name",
    )


class RunSummary(BaseModel):
    run_dir: str
    state: str
    error: str | None = None
    engine_message: str | None = None
    triples_pushed: int
    batches_pushed: int
    result_events: int
    result_rows: int
    samples: int
    duration_s: float | None
    push_rate: float | None = Field(default=None, description="measured triples / push seconds")


def instance_names(name: str, instances: int) -> list[str]:
    """The query names of ``instances`` simultaneous copies of query ``name``."""
    return [f"{name}_{k}" for k in range(1, instances + 1)]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("rsp_sdk", "pyarrow", "jpype1", "py4j", "pydantic"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


ProgressFn = Callable[[int, int], None]


def run(
    request: RunRequest,
    *,
    adapter: Adapter | None = None,
    cache: Any = None,
    progress: ProgressFn | None = None,
) -> RunSummary:
    """Run ``request`` to its end (the module docstring says what that covers). Usage errors
    — an engine config the adapter refuses, a runtime that cannot carry the driver — are
    raised before a run directory exists."""
    adapter = adapter or get_adapter(request.engine)
    runtime = get_runtime(
        request.runtime, **({"limits": request.limits} if request.limits.active else {})
    )
    query = load_query(request.query, raw=request.raw_query, params=request.params)
    static_graphs = _static_graphs(query, request.static)
    table = read_stream(request.stream)
    warm_table = read_stream(request.warmup) if request.warmup else None
    feed_plan = plan(table, request.feeder, warmup=warm_table)
    rendered, refusal = _rendering(adapter, query)
    problem = config_problem(adapter, request.engine_config)
    if problem is not None:  # a usage error, told before any engine starts
        raise InputError(problem, expected="--engine-config '{\"KEY\": VALUE}'")
    driver = adapter.driver(cache)
    if driver.kind not in runtime.supports:  # a usage error: no run directory for it
        raise RspError(
            f"runtime {runtime.name} cannot carry {adapter.name}'s {driver.kind} driver; "
            f"use one of: {', '.join(runtimes_for(driver.kind))}"
        )
    streams = _stream_iris(table, warm_table)
    config = {
        "schema_version": 1,
        "engine": _engine_config(adapter, request),
        "runtime": runtime.name,
        "driver": driver.model_dump(mode="json"),
        "query": {
            "source": query.source,
            "name": query.name,
            "spec": query.spec.model_dump(mode="json") if query.spec else None,
            "rendered": rendered,
        },
        **_input_config(request, table.num_rows, streams, feed_plan, static_graphs),
        **_context_config(request),
    }
    recorder = RunRecorder(request.output, config)
    live = _Live(
        request, adapter, runtime, query, static_graphs, streams, feed_plan, recorder, cache
    )
    return _summary(_execute(live, refusal, progress), live)


def _stream_iris(table: pa.Table, warm_table: pa.Table | None) -> list[str]:
    """The stream IRIs to register: the stream's, then any only the warm-up has."""
    streams: list[str] = pc.unique(table.column("stream")).to_pylist()
    if warm_table is not None:
        streams += [
            s for s in pc.unique(warm_table.column("stream")).to_pylist() if s not in streams
        ]
    return streams


def _engine_config(adapter: Adapter, request: RunRequest) -> dict[str, Any]:
    return {
        "name": adapter.name,
        "version": adapter.version,
        "driver_kind": adapter.driver_kind,
        "profile": adapter.profile.model_dump(mode="json"),
        "capabilities": adapter.capabilities.names(),
        "engine_config": request.engine_config,
    }


def _summary(status: RunStatus, live: _Live) -> RunSummary:
    measured = status.triples_pushed - live.feed_plan.warmup_triples
    push_s = live.push_ns / 1e9
    return RunSummary(
        run_dir=str(live.recorder.dir),
        state=status.state,
        error=status.error,
        engine_message=status.engine_message,
        triples_pushed=status.triples_pushed,
        batches_pushed=status.batches_pushed,
        result_events=status.result_events,
        result_rows=status.result_rows,
        samples=status.samples,
        duration_s=status.duration_s,
        push_rate=(measured / push_s) if live.push_ns > 0 and measured > 0 else None,
    )


def _rendering(adapter: Adapter, query: QueryInput) -> tuple[str | None, UnsupportedQuery | None]:
    """The query in the engine's dialect, or why the engine cannot run it. A query the engine
    cannot run is a run outcome ("not supported: optional"), recorded in the run directory;
    the engine is not even started for it."""
    if query.spec is None:
        return query.raw_text or "", None
    missing = adapter.capabilities.missing(required_features(query.spec))
    if missing:
        return None, UnsupportedQuery(adapter.name, query.spec.name, missing)
    try:  # the dialect may lack a construct the feature flags do not name
        return adapter.render(query.spec), None
    except UnsupportedQuery as exc:
        return None, exc


def _input_config(
    request: RunRequest,
    triples: int,
    streams: list[str],
    feed_plan: Plan,
    static_graphs: list[str],
) -> dict[str, Any]:
    """config.json's record of what the engine was given: stream, warm-up, static data."""
    return {
        "stream": {
            "path": str(Path(request.stream).resolve()),
            "sha256": _sha256(request.stream),
            "triples": triples,
            "streams": streams,
        },
        "warmup": None
        if request.warmup is None
        else {
            "path": str(Path(request.warmup).resolve()),
            "sha256": _sha256(request.warmup),
            "triples": feed_plan.warmup_triples,
        },
        "static": {
            "files": [
                {"path": str(Path(f).resolve()), "sha256": _sha256(Path(f))} for f in request.static
            ],
            "graphs": static_graphs,
        },
    }


#: variables that change how an engine runs or how its answers are recorded, without being part
#: of the request: a JVM's or Node's heap and flags, which java / node / swipl starts it, the
#: recorder's reply limit. A cell key does not hold them (a rerun with a bigger heap is the same
#: cell), so config.json records the ones set: two runs of one key that differ say why.
ENGINE_ENVIRONMENT = (
    "NODE_OPTIONS",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "JAVA_HOME",
    "RSP_NODE",
    "RSP_SWIPL",
    "RSP_MAX_REPLY_BYTES",
)


def _context_config(request: RunRequest) -> dict[str, Any]:
    """config.json's record of how the run was paced and where: feeder, timeouts, versions,
    the two clocks' anchors, host, the engine environment set, and the request itself."""
    wall_ns, mono_ns = time.time_ns(), time.monotonic_ns()
    return {
        "feeder": request.feeder.model_dump(mode="json"),
        "timeouts": request.timeouts.model_dump(mode="json"),
        "sample_interval_s": request.sample_interval_s,
        "versions": _versions(),
        "clock": {
            "wall_anchor_ns": wall_ns,
            "monotonic_anchor_ns": mono_ns,
            "note": "t_sys_ns values are CLOCK_MONOTONIC; wall = t - monotonic + wall",
        },
        "host": {"name": socket.gethostname(), "cpus": os.cpu_count()},
        "environment": {k: os.environ[k] for k in ENGINE_ENVIRONMENT if k in os.environ},
        "request": json.loads(request.model_dump_json()),
    }


@dataclass
class _Live:
    """A run under way: its fixed inputs, and the engine session, sampler and push time as far
    as they got (what cleanup and the summary need, whatever stopped the run)."""

    request: RunRequest
    adapter: Adapter
    runtime: Runtime
    query: QueryInput
    static_graphs: list[str]
    streams: list[str]
    feed_plan: Plan
    recorder: RunRecorder
    cache: Any
    session: EngineSession | None = None
    sampler: Sampler | None = None
    push_ns: int = 0


def _execute(
    live: _Live, refusal: UnsupportedQuery | None, progress: ProgressFn | None
) -> RunStatus:
    """Start the engine, feed it, drain it and close it, under the run's deadline; the status
    the recorder finished with. Only Ctrl-C and errors that are not the engine's are raised."""
    request, recorder = live.request, live.recorder
    deadline = Deadline(request.deadline_s)
    try:
        deadline.check()  # a stop requested before this run started (request_stop)
        if refusal is not None:
            raise refusal
        session = _start(live, deadline)
        sampler = live.sampler = Sampler(
            session.pid, recorder.perf, stats=session.stats, interval_s=request.sample_interval_s
        )
        sampler.start()
        live.push_ns = _feed(session, live.feed_plan, recorder, request, progress, deadline)
        if Feature.APP_TIME_INPUT in live.adapter.capabilities:
            session.advance_time(live.feed_plan.t_app_max_ms + _flush_ms(request, live.query))
        _drain(session, recorder, request, deadline)
        sampler.stop()
        session.close()
        if deadline.stop():  # fired during close: what was recorded may be cut short
            raise deadline.error()
        return recorder.finish("ok")
    except KeyboardInterrupt as exc:
        deadline.stop()
        _cleanup(live.sampler, live.session)
        recorder.finish("interrupted", exc)
        raise
    except BaseException as exc:
        status = _failed(live, deadline, exc)
        if status is None:
            raise
        return status


def _start(live: _Live, deadline: Deadline) -> EngineSession:
    """Open the engine session and give it the streams, static data and query (instances)."""
    request, recorder = live.request, live.recorder
    with on_launch(deadline.watch):  # a slow or hung `open` can be killed too
        session = live.session = live.adapter.open(
            live.runtime,
            recorder.dir / "engine",
            config=request.engine_config,
            timeouts=request.timeouts,
            log_dir=recorder.log_dir,
            cache=live.cache,
        )
    deadline.watch(session)
    recorder.engine_started(session.pid, live.runtime.name)
    for iri in live.streams:
        session.register_stream(iri)
    if live.static_graphs:
        static_file = _static_ntriples(request.static, recorder.dir / "static.nt")
        for graph in live.static_graphs:
            session.load_static(graph, static_file)
    query = live.query
    if query.spec is not None and request.instances > 1:
        for name in instance_names(query.spec.name, request.instances):
            session.register_query(query.spec.model_copy(update={"name": name}))
    elif query.spec is not None:
        session.register_query(query.spec)
    else:
        session.register_query(query.raw_text or "", name=query.name)
    return session


def _failed(live: _Live, deadline: Deadline, exc: BaseException) -> RunStatus | None:
    """Record a run that stopped on ``exc``: the failed status, or None when ``exc`` is not
    the engine's doing and must propagate (recorded as failed all the same)."""
    # past the deadline, whatever the killed engine's verb raised is the deadline's doing
    overran = deadline.stop()
    _cleanup(live.sampler, live.session)
    # Ctrl-C in another thread killed this run's engine; or a stop was requested and what
    # failed is what a library made of its KeyboardInterrupt (py4j 0.10.9.9's handler calls a
    # method its GatewayConnection lacks: AttributeError, and the bridge "cannot connect")
    if deadline.interrupted or stop_requested():
        live.recorder.finish("interrupted", KeyboardInterrupt())
        raise KeyboardInterrupt from exc
    if overran:
        return live.recorder.finish("failed", deadline.error())
    if isinstance(exc, EngineError | RspError):
        return live.recorder.finish("failed", exc)
    live.recorder.finish("failed", exc)
    return None


def _static_graphs(query: QueryInput, static: list[Path]) -> list[str]:
    """The graphs static data goes to: every ``FROM <g>`` of the query (the oracle reads the
    same data as the default graph of each window evaluation). Static data a query cannot see
    is a usage error, not a silent no-op."""
    if not static:
        return []
    for path in static:
        if not Path(path).is_file():
            raise InputError("static data file not found", path=path, expected="--static FILE")
    if query.spec is None:
        raise InputError(
            "--static needs a parsed query: a --raw query does not say which graph the data is",
            path=query.source,
        )
    if not query.spec.static_graphs:
        raise InputError(
            "the query reads no static graph, so --static data would never reach it",
            path=query.source,
            expected="a FROM <graph-iri> clause naming the static data's graph",
        )
    return list(query.spec.static_graphs)


def _static_ntriples(static: list[Path], target: Path) -> Path:
    """Every static file (RDF or static Parquet) as one N-Triples file the drivers can load."""
    with atomic_path(target) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for path in static:
            table = read_static(path)
            cols = [table.column(c).to_pylist() for c in ("s", "p", "o")]
            fh.writelines(f"{a} {b} {c} .\n" for a, b, c in zip(*cols, strict=True))
    return target


def _flush_ms(request: RunRequest, query: QueryInput) -> int:
    if request.flush_ms is not None:
        return request.flush_ms
    if query.spec is not None and query.spec.windows:
        return max(w.range_ms + w.step_ms for w in query.spec.windows)
    return 60_000


def _cleanup(sampler: Sampler | None, session: EngineSession | None) -> None:
    if sampler is not None:
        sampler.stop()
    if session is not None:
        session.kill()


def _feed(
    session: EngineSession,
    feed_plan: Plan,
    recorder: RunRecorder,
    request: RunRequest,
    progress: ProgressFn | None,
    deadline: Deadline,
) -> int:
    """Push every planned batch at its due time; returns the ns spent in measured pushes."""
    start = time.monotonic_ns()
    last_poll = start
    poll_ns = int(request.poll_interval_s * 1e9)
    push_ns = 0
    done = 0
    for pb in feed_plan.batches:
        if pb.due_ns is not None:
            due = start + pb.due_ns
            while True:
                deadline.check()
                now = time.monotonic_ns()
                if now >= due:
                    break
                if now - last_poll >= poll_ns:
                    recorder.outputs(session.poll())
                    last_poll = time.monotonic_ns()
                    continue
                time.sleep(min((due - now) / 1e9, request.poll_interval_s))
        deadline.check()
        t0 = time.monotonic_ns()
        session.push(pb.stream, pb.batch)
        t1 = time.monotonic_ns()
        if pb.phase == "measure":
            push_ns += t1 - t0
        recorder.pushed(
            phase=pb.phase,
            stream=pb.stream,
            batch=pb.index,
            count=pb.batch.count,
            t_app_min_ms=pb.batch.t_min_ms,
            t_app_max_ms=pb.batch.t_max_ms,
            t_due_ns=None if pb.due_ns is None else start + pb.due_ns,
            t_sys_start_ns=t0,
            t_sys_end_ns=t1,
        )
        done += pb.batch.count
        if progress is not None:
            progress(done, feed_plan.triples + feed_plan.warmup_triples)
        if t1 - last_poll >= poll_ns:
            recorder.outputs(session.poll())
            last_poll = time.monotonic_ns()
    return push_ns


def _drain(
    session: EngineSession, recorder: RunRecorder, request: RunRequest, deadline: Deadline
) -> None:
    """Poll until nothing new arrived for ``drain_quiet_s`` (or ``drain_max_s`` passed)."""
    end = time.monotonic() + request.drain_max_s
    quiet_since = time.monotonic()
    while time.monotonic() < end:
        deadline.check()
        events = session.poll()
        if events:
            recorder.outputs(events)
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= request.drain_quiet_s:
            break
        time.sleep(request.poll_interval_s)
    recorder.flush()
