"""``plan(spec)``: the cells of a matrix, each with a stable key, before anything runs.

The cells are the product of the spec's axes (repetition × engine × runtime × stream × query ×
parameters × feeding), repetition outermost so rep 1 of every engine runs before rep 2 (asv's
interleaved rounds). A cell that cannot run stays in the plan with ``state`` refused (the
engine lacks a feature, or its dialect cannot say the query) or unavailable (runtime cannot
carry the engine or cannot work here — no Docker daemon —, engine not provisioned, adapter
missing) and the reason, so a table of results
shows the gap instead of hiding it. A cell whose engine config lacks what the adapter declares
it needs (``Adapter.check_config``, e.g. SPARQLstream's R2RML mapping) is refused too.

A cell's key is the sha256 of the canonical JSON of everything that decides its numbers (asv's
``version``): stream sha256, the rendered query text, the profile, the adapter's name, dist
version and provisioned artifact hashes, runtime, feeding, engine config, limits, repetition
and ``MATRIX_FORMAT`` — never an output path, a host name or a time.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from rsp_sdk.engine.adapter import Adapter, config_problem
from rsp_sdk.engine.capabilities import Feature, required_features
from rsp_sdk.engine.session import UnsupportedQuery
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.axes import engine_name
from rsp_sdk.matrix.engines import EngineInfo, spec_engines
from rsp_sdk.matrix.inputs import PreparedStream, expand
from rsp_sdk.matrix.spec import (
    MATRIX_FORMAT,
    FeedMode,
    MatrixSpec,
    Metric,
    Rule,
    engine_variants,
)
from rsp_sdk.model.profile import Profile, load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig, PacingMode


class CellState(StrEnum):
    PLANNED = "planned"
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    REFUSED = "refused"
    UNAVAILABLE = "unavailable"
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"  # not run: an earlier repetition timed out (limits.skip_after_timeout)


class Cell(BaseModel):
    """One planned run: its axes, resolved inputs and key (what ``matrix.json`` lists)."""

    model_config = ConfigDict(frozen=True)

    key: str
    label: str
    spec: str
    group: str | None
    engine: str
    variant: str | None = None  # another entry of the same adapter (spec.engine_variants)
    adapter_version: str
    runtime: str
    query: str
    params: str
    stream: str
    stream_sha256: str
    rate: float | None
    feeding: str
    repetition: int
    profile: str
    state: CellState
    reason: str | None = None
    parallel_ok: bool = False
    # what execute needs (part of the key through `inputs`)
    query_spec: dict[str, Any] | None = None
    feeder: dict[str, Any] | None = None
    drain_quiet_s: float = 2.0
    drain_max_s: float = 60.0
    engine_config: dict[str, Any] = {}
    timeout_s: float = 600.0
    cell_timeout_s: float | None = None
    profile_json: dict[str, Any] | None = None
    metrics: list[str] = []
    gracious: bool = False  # YABench gracious mode too (metric yabench)
    artifacts: dict[str, str] = {}  # sha256 of each provisioned file (from lock.json)
    instances: int = 1  # simultaneous copies of the query on the engine (concurrency axis)
    # the keys of this cell at its earlier repetitions, when the spec skips after a timeout
    earlier: list[str] = []

    def axes(self) -> dict[str, Any]:
        """The values ``--only`` and the spec's rules match on."""
        return {
            "engine": self.engine,
            "variant": self.variant,
            "runtime": self.runtime,
            "query": self.query,
            "group": self.group,  # the experiment (YABench's E1–E4): `--only group=E3`
            "stream": self.stream,
            "feeding": self.feeding,
            "rate": self.rate,
            "repetition": self.repetition,
            "state": self.state.value,
            "instances": self.instances,
            # a time-scale feeding's pace (None for the other modes): `--only time_scale=1`
            "time_scale": (self.feeder or {}).get("time_scale"),
            # one cell, by its key or a prefix of it (`rsp matrix plan` prints 12 characters)
            "key": self.key,
        }


def canonical(value: Any) -> Any:
    """JSON-ready and independent of hash order: sets (a profile's report policies) become
    sorted lists, so a key is the same in every process (PYTHONHASHSEED)."""
    if isinstance(value, BaseModel):
        return canonical(value.model_dump(mode="python"))
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted((canonical(v) for v in value), key=lambda v: json.dumps(v, default=str))
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value


def cell_key(inputs: dict[str, Any]) -> str:
    canonical = json.dumps({**inputs, "format": MATRIX_FORMAT}, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Query(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    params: dict[str, str]
    spec: QuerySpec
    streams: list[str] | None
    group: str | None = None
    gracious: bool = False


def load_queries(spec: MatrixSpec, spec_path: Path) -> list[Query]:
    """Every query file × parameter combination of the spec, parsed."""
    from rsp_sdk.query import load_query

    base = spec_path.resolve().parent
    out: list[Query] = []
    for axis in spec.queries:
        files: list[Path] = []
        for pattern in axis.files:
            hits = sorted(glob.glob(str(expand(pattern, base))))
            if not hits:
                raise InputError(f"no query file matches {pattern!r}", path=spec_path)
            files += [Path(h) for h in hits]
        names = sorted(axis.params)
        for values in itertools.product(*(axis.params[n] for n in names)):
            params = dict(zip(names, values, strict=True))
            for f in files:
                q = load_query(f, params or None)
                name = f.stem + ("[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]")
                name = f.stem if not params else name
                q = q.model_copy(update={"name": f.stem})
                out.append(
                    Query(
                        name=name,
                        params=params,
                        spec=q,
                        streams=axis.streams,
                        group=axis.group,
                        gracious=axis.gracious,
                    )
                )
    return out


class _Feed(NamedTuple):
    """One feeding of a spec as an engine gets it."""

    label: str
    rate: float | None
    feeder: FeederConfig | None
    tail: float | None  # drain quiet seconds the engine needs (None: the spec's)


def _feeders(spec: MatrixSpec, adapter: Adapter, query: QuerySpec) -> list[_Feed]:
    """Each feeding of the spec, as ``adapter`` gets it for ``query``."""
    from rsp_sdk.csrbench import feeding as engine_feeding
    from rsp_sdk.csrbench import wall_clock_tail

    f = spec.feeding
    base: dict[str, Any] = {"batch_size": f.batch_size}
    if f.max_batch_span_ms is not None:  # only when given: other specs' keys stay as they were
        base["max_batch_span_ms"] = f.max_batch_span_ms
    warm = {"warmup_rate": f.warmup_rate} if f.warmup_rate is not None else {}
    base.update(warm)
    out: list[_Feed] = []
    for mode in f.modes:
        if mode is FeedMode.ENGINE:
            cfg, tail = engine_feeding(adapter, query)
            cfg = cfg.model_copy(update=base)
            out.append(_Feed(cfg.mode.value, None, cfg, tail))
        elif mode is FeedMode.AFAP:
            out.append(_Feed("afap", None, FeederConfig(mode=PacingMode.AFAP, **base), None))
        elif mode is FeedMode.FIXED:
            cfg = FeederConfig(mode=PacingMode.AFAP, limit=f.limit, **base)
            out.append(_Feed("fixed", None, cfg, None))
        elif mode is FeedMode.REAL_TIME:
            cfg = FeederConfig(mode=PacingMode.REAL_TIME, **warm)
            out.append(_Feed("real-time", None, cfg, None))
        elif mode is FeedMode.RATE:
            for r in f.rates:
                cfg = FeederConfig(mode=PacingMode.APP_TIME, rate=r, **base)
                out.append(_Feed("rate", r, cfg, wall_clock_tail(adapter, query)))
        else:
            for s in f.time_scales:
                cfg = FeederConfig(mode=PacingMode.APP_TIME, time_scale=s, **base)
                out.append(_Feed("time-scale", None, cfg, wall_clock_tail(adapter, query)))
    return out


class _Refusals:
    """Whether an engine refuses a query (and its rendering), worked out once per (engine, query).

    Both parse the query's SPARQL (rdflib, ≈ 80 ms a time); a plan asks for them once per
    cell, and ``yabench.toml``'s 2100 cells (10 repetitions × runtimes × streams) spent ≈ 40 s
    re-parsing a dozen queries before printing anything."""

    def __init__(self) -> None:
        self._refusals: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    def of(self, adapter: Adapter, query: QuerySpec) -> tuple[str | None, str | None]:
        key = (adapter.name, query.model_dump_json())
        if key not in self._refusals:
            self._refusals[key] = _refusal(adapter, query)
        return self._refusals[key]


def _refusal(adapter: Adapter, query: QuerySpec) -> tuple[str | None, str | None]:
    """(rendered query, None) or (None, why the engine refuses it)."""
    missing = adapter.capabilities.missing(required_features(query))
    if missing:
        return None, "needs " + ", ".join(sorted(f.value for f in missing))
    try:
        return adapter.render(query), None
    except UnsupportedQuery as exc:
        return None, str(exc)
    except ValueError as exc:  # cqels/csparql renderers raise a ValueError for what they cannot say
        return None, f"{adapter.name} cannot express it: {exc}"


def _excluded(rules: list[Rule], include: list[Rule], axes: dict[str, Any]) -> Rule | None:
    for rule in rules:
        if rule.matches(axes) and not any(r.matches(axes) for r in include):
            return rule
    return None


def exclusions(spec: MatrixSpec, unruled: list[Cell]) -> list[tuple[Rule, int]]:
    """Each exclude rule of ``spec`` with the number of cells of ``unruled`` (the plan made
    without the rules) it cuts — what ``rsp matrix plan`` shows with the rule's reason, so a
    rule that cuts nothing (a query name mistyped) is seen instead of silently running all."""
    counts = [0] * len(spec.exclude)
    for cell in unruled:
        rule = _excluded(spec.exclude, spec.include, cell.axes())
        if rule is not None:
            counts[next(i for i, r in enumerate(spec.exclude) if r is rule)] += 1
    return list(zip(spec.exclude, counts, strict=True))


def plan(
    spec: MatrixSpec,
    spec_path: Path,
    streams: dict[str, PreparedStream],
    *,
    engines: dict[str, EngineInfo] | None = None,
    queries: list[Query] | None = None,
) -> list[Cell]:
    """The cells of ``spec`` on the prepared ``streams``, in run order (excluded cells are
    left out; refused and unavailable ones are kept with their reason). A stream of the spec
    left unprepared (``--only stream=…``) has no cells."""
    engines = engines or spec_engines(spec)
    queries = queries if queries is not None else load_queries(spec, spec_path)
    override: Profile | None = load_profile(spec.profile) if spec.profile else None
    refusals = _Refusals()
    cells: list[Cell] = []
    for rep in range(1, spec.repetitions + 1):
        for axis, variant in zip(spec.engines, engine_variants(spec.engines), strict=True):
            info = engines[axis.name]
            runtimes = axis.runtimes or info.runtimes or ["subprocess"]
            for runtime, stream, query in itertools.product(runtimes, spec.streams, queries):
                if query.streams is not None and stream.name not in query.streams:
                    continue
                if stream.name not in streams:
                    continue
                slot = Slot(
                    spec,
                    info,
                    axis.engine_config,
                    runtime,
                    streams[stream.name],
                    query,
                    rep,
                    variant,
                )
                cells += cells_for(slot, override, refusals)
    return cells


@dataclass(frozen=True)
class Slot:
    """One (repetition, engine, runtime, stream, query) of a spec. Its cells differ only by
    feeding and number of instances: what the engine makes of the query is worked out once."""

    spec: MatrixSpec
    info: EngineInfo
    engine_config: dict[str, Any]
    runtime: str
    stream: PreparedStream
    query: Query
    rep: int
    variant: str | None = None  # what tells two entries of one adapter apart (spec.engine_variants)


class _Resolved(NamedTuple):
    """What a slot's engine makes of its query, the same for each of the slot's cells."""

    query: QuerySpec  # the engine's form of it (csrbench.engine_query)
    rendered: str | None  # its text in the engine's dialect (None: refused, or no adapter)
    profile: Profile | None
    state: CellState
    reason: str | None


def cells_for(
    slot: Slot, override: Profile | None = None, refusals: _Refusals | None = None
) -> list[Cell]:
    """The cells of one slot, one per (instances, feeding) the spec's rules leave in. The query
    is rendered only if some cell is left (a rule may exclude what an engine cannot render)."""
    from rsp_sdk.csrbench import engine_query

    adapter = slot.info.adapter
    q = engine_query(slot.query.spec, adapter) if adapter is not None else slot.query.spec
    feeds = (
        _feeders(slot.spec, adapter, q)
        if adapter is not None
        else [_Feed("afap", None, None, None)]
    )
    resolved: _Resolved | None = None
    out: list[Cell] = []
    for instances, feed in itertools.product(slot.spec.instances, feeds):
        axes = {
            "engine": slot.info.name,
            "variant": slot.variant,
            "runtime": slot.runtime,
            "query": slot.query.name,
            "stream": slot.stream.name,
            "feeding": feed.label,
            "rate": feed.rate,
            "time_scale": feed.feeder.time_scale if feed.feeder is not None else None,
            "instances": instances,
        }
        if _excluded(slot.spec.exclude, slot.spec.include, axes) is not None:
            continue
        if resolved is None:
            resolved = _resolve(slot, q, override, refusals or _Refusals())
        out.append(_cell(slot, resolved, feed, instances))
    return out


def _resolve(slot: Slot, q: QuerySpec, override: Profile | None, refusals: _Refusals) -> _Resolved:
    """The query's rendering, the profile, and whether the slot can run (unavailable: no
    adapter, runtime or provisioning; refused: a feature, the dialect or the config)."""
    info, adapter = slot.info, slot.info.adapter
    profile = override or (adapter.profile if adapter is not None else None)
    state, reason, rendered = CellState.PLANNED, None, None
    if adapter is None:
        state, reason = CellState.UNAVAILABLE, info.error
    elif slot.runtime not in info.runtimes:
        state = CellState.UNAVAILABLE
        reason = f"runtime {slot.runtime} cannot carry {info.name} ({', '.join(info.runtimes)})"
    elif info.missing:
        state, reason = CellState.UNAVAILABLE, "not provisioned: " + "; ".join(info.missing)
    elif slot.runtime in info.unavailable:
        state, reason = CellState.UNAVAILABLE, info.unavailable[slot.runtime]
    if adapter is not None:
        rendered, why = refusals.of(adapter, q)
        why = why or config_problem(adapter, slot.engine_config)
        if why is not None and state is CellState.PLANNED:
            state, reason = CellState.REFUSED, why
    return _Resolved(q, rendered, profile, state, reason)


def _key(slot: Slot, resolved: _Resolved, feed: _Feed, instances: int) -> str:
    spec, info, query = slot.spec, slot.info, slot.query
    # a limit left unset is not part of the key: adding one keeps older results' keys
    # what happens after a timeout decides whether a cell runs, not what it measures
    unset = {k for k in ("cell_timeout_s",) if getattr(spec.limits, k) is None}
    limits = spec.limits.model_dump(mode="json", exclude={"skip_after_timeout", *unset})
    # a cell not rendered (refused, unavailable) keys the parsed query; its source is a path,
    # which changed the key with the folder the spec was planned from
    text = resolved.rendered
    if text is None:
        text = resolved.query.model_dump_json(exclude={"source"})
    return cell_key(
        {
            "stream_sha256": slot.stream.sha256,
            "static": slot.stream.static_sha256,
            # only when asked: every key of a spec without a warm-up stays as it was
            **({"warmup": slot.stream.warmup_sha256} if slot.stream.warmup_sha256 else {}),
            "query": [query.name, text],
            "profile": canonical(resolved.profile) if resolved.profile else None,
            "adapter": [info.name, info.version, info.artifacts],
            **({"adapter_code": info.code} if info.code else {}),
            "runtime": slot.runtime,
            "feeding": feed.feeder.model_dump(mode="json") if feed.feeder is not None else None,
            "engine_config": slot.engine_config,
            "limits": limits,
            "repetition": slot.rep,
            # judged differently: the key changes only when asked (older keys stay)
            **({"gracious": True} if query.gracious else {}),
            # only when asked: every key of a spec without the axis stays as it was
            **({"instances": instances} if instances != 1 else {}),
        }
    )


def _label(slot: Slot, feed: _Feed, instances: int) -> str:
    spec = slot.spec
    rate_txt = f"/rate={feed.rate:g}" if feed.rate is not None else f"/{feed.label}"
    if feed.feeder is not None and feed.feeder.time_scale is not None:
        rate_txt += f"={feed.feeder.time_scale:g}"
    on = f"/{slot.stream.name}" if len(spec.streams) > 1 else ""
    on += f"/x{instances}" if len(spec.instances) > 1 or instances != 1 else ""
    who = engine_name({"engine": slot.info.name, "variant": slot.variant})
    return f"{who}@{slot.runtime}/{slot.query.name}{on}{rate_txt}/rep={slot.rep}"


def _parallel_ok(slot: Slot, feed: _Feed) -> bool:
    """Whether the cell may run beside others: its numbers do not depend on wall-clock time."""
    spec, adapter = slot.spec, slot.info.adapter
    app_time = adapter is not None and Feature.APP_TIME_INPUT in adapter.capabilities
    parallel = spec.wall_clock_free or (
        app_time and feed.label in ("afap", "fixed") and Metric.PERF not in spec.metrics
    )
    return parallel and slot.runtime != "jpype"  # one JVM per process


def _cell(slot: Slot, resolved: _Resolved, feed: _Feed, instances: int) -> Cell:
    spec, info, query, profile = slot.spec, slot.info, slot.query, resolved.profile
    return Cell(
        key=_key(slot, resolved, feed, instances),
        label=_label(slot, feed, instances),
        spec=spec.name,
        group=query.group or spec.group,
        engine=info.name,
        variant=slot.variant,
        adapter_version=info.version,
        runtime=slot.runtime,
        query=query.name,
        params=json.dumps(query.params, sort_keys=True),
        stream=slot.stream.name,
        stream_sha256=slot.stream.sha256,
        rate=feed.rate,
        feeding=feed.label,
        repetition=slot.rep,
        profile=profile.name if profile else "",
        state=resolved.state,
        reason=resolved.reason,
        parallel_ok=_parallel_ok(slot, feed),
        query_spec=resolved.query.model_dump(mode="json"),
        feeder=feed.feeder.model_dump(mode="json") if feed.feeder is not None else None,
        drain_quiet_s=feed.tail if feed.tail is not None else spec.limits.drain_quiet_s,
        drain_max_s=max(spec.limits.drain_max_s, 4 * (feed.tail or 0)),
        engine_config=slot.engine_config,
        timeout_s=spec.limits.timeout_s,
        cell_timeout_s=spec.limits.cell_timeout_s,
        profile_json=profile.model_dump(mode="json") if profile else None,
        metrics=[m.value for m in spec.metrics],
        gracious=query.gracious,
        artifacts=info.artifacts,
        instances=instances,
        earlier=_earlier(slot, resolved, feed, instances),
    )


def _earlier(slot: Slot, resolved: _Resolved, feed: _Feed, instances: int) -> list[str]:
    """The cell's keys at repetitions 1 … rep − 1 (``limits.skip_after_timeout`` looks them
    up before running it); none when the spec does not skip."""
    if not slot.spec.limits.skip_after_timeout:
        return []
    return [_key(replace(slot, rep=r), resolved, feed, instances) for r in range(1, slot.rep)]
