"""``MatrixSpec``: what a matrix runs, read from a TOML file (``matrix/*.toml``).

A spec names the axes of a comparison — engines (with runtimes and engine config), streams,
queries (files, or templates with a parameter grid), feeding modes and rates, repetitions — and
the rules that cut or re-add cells. It is a frozen pydantic model with ``extra="forbid"`` so a
typo in a key is an error, not a silently ignored setting, and every error names the file, the
line and the key (``InputError``, exit 2), like every other input of the project.
"""

from __future__ import annotations

import json
import re
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rsp_sdk.errors import InputError

MATRIX_FORMAT = 1
"""Bumped whenever a cell's meaning changes: every cell key changes with it (asv's version)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Metric(StrEnum):
    CSRBENCH = "csrbench"  # verdict + t0 (contiguous part of the oracle's output)
    YABENCH = "yabench"  # precision / recall / delay per window
    LSBENCH = "lsbench"  # mismatch between every pair of engines
    PERF = "perf"  # rate, time per triple, latency, RSS, heap, CPU, threads, GC
    COVERAGE = "coverage"  # feature table: engines × queries, outcome and reason per cell


class FeedMode(StrEnum):
    ENGINE = "engine"  # the engine's clock decides: afap + advance_time, or real time
    AFAP = "afap"
    RATE = "rate"
    REAL_TIME = "real-time"
    TIME_SCALE = "time-scale"
    FIXED = "fixed"  # afap, a fixed number of triples


class EngineAxis(_Model):
    name: str = Field(description="adapter name (rsp engines list)")
    runtimes: list[str] | None = Field(
        default=None, description="default: every runtime that can carry the engine"
    )
    engine_config: dict[str, Any] = Field(default_factory=dict)
    variant: str | None = Field(
        default=None,
        description="what tells this entry's cells apart from another entry of the same "
        "adapter (NAME[VARIANT]@runtime in labels, tables and reports); default, when the "
        "spec lists the adapter more than once: its engine_config as KEY=VALUE pairs",
    )


def engine_variants(engines: list[EngineAxis]) -> list[str | None]:
    """Each entry's variant, in order: its own, else — when another entry names the same
    adapter — its engine_config as ``k=v`` pairs (None: no config, the adapter's plain entry).
    Without one, two entries of an adapter (two heaps, two settings) shared a label and an
    identity: tables merged them and a results folder counted one as superseding the other."""
    names = [e.name for e in engines]
    out: list[str | None] = []
    for e in engines:
        if e.variant is not None or names.count(e.name) == 1:
            out.append(e.variant)
        else:
            pairs = sorted(e.engine_config.items())
            out.append(",".join(f"{k}={_compact(v)}" for k, v in pairs) or None)
    return out


def _compact(value: Any) -> str:
    """A config value as a variant spells it: strings bare, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


class ImportSource(_Model):
    format: str = Field(
        description="csrbench (a folder of data_XX.ttl), trig (timestamped graphs) or parquet"
    )
    path: str = Field(description="relative to the spec; ${RSP_SHARED_DATA} is expanded")
    interval_ms: int = Field(default=1000, gt=0, description="csrbench: one graph per interval")
    stream: str = Field(default="http://ex.org/streams/test", description="csrbench: stream IRI")
    files: list[str] = Field(
        default_factory=list,
        description="citybench: the .stream files (globs) under path (default: every one)",
    )
    dataset: str | None = Field(
        default=None, description="citybench: CityBench's dataset/ folder (default: ../dataset)"
    )
    replay_interval_ms: int | None = Field(
        default=None,
        gt=0,
        description="CityBench's replay: the i-th timestamp of every stream moved to "
        "i × this (CityBench at rate ×1 emits one row per second per stream, whatever the "
        "time in its CSV); applied before slice_ms",
    )
    slice_ms: int | None = Field(
        default=None,
        gt=0,
        description="keep only the first slice_ms of application time (from the latest stream "
        "start, so every stream of the slice has data): a short run of a long recording",
    )


class GeneratorSource(_Model):
    name: str = Field(description="a generator of `rsp generate` (yabench, water, social)")
    params: dict[str, Any] = Field(default_factory=dict)


class StreamAxis(_Model):
    name: str
    source: ImportSource | None = Field(default=None, alias="import")
    generator: GeneratorSource | None = None
    static: list[str] = Field(default_factory=list, description="static data files")
    expected_cell_s: float | None = Field(
        default=None,
        gt=0,
        description="seconds a cell on this stream takes, for the plan's wall time (default: "
        "the spec's): YABench's cells at 1 station take seconds, at 500 a minute and a half",
    )

    @model_validator(mode="after")
    def _one_source(self) -> StreamAxis:
        if (self.source is None) == (self.generator is None):
            raise ValueError("give exactly one of `import` or `generator`")
        return self


class QueryAxis(_Model):
    files: list[str] = Field(description="RSP-QL files or globs, relative to the spec")
    params: dict[str, list[str]] = Field(
        default_factory=dict, description="template parameter grid (${NAME} → values)"
    )
    streams: list[str] | None = Field(default=None, description="default: every stream")
    group: str | None = Field(default=None, description="experiment name (default: the spec's)")
    gracious: bool = Field(
        default=False,
        description="metric yabench: also judge in YABench's gracious mode (window borders "
        "reconstructed from the output): gracious_precision/recall beside the plain ones",
    )


class Feeding(_Model):
    modes: list[FeedMode] = Field(default_factory=lambda: [FeedMode.ENGINE])
    rates: list[float] = Field(default_factory=list, description="triples/s (mode rate)")
    time_scales: list[float] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1, description="mode fixed: triples to push")
    batch_size: int = Field(default=10_000, ge=1)
    warmup: str | None = Field(
        default=None,
        description="a stream Parquet file (relative to the spec) pushed before each cell's "
        "stream: measured without it, judged with it (rsp_sdk.matrix.warmup)",
    )
    warmup_rate: float | None = Field(
        default=None, gt=0, description="triples/s of the warm-up (default: its own pace)"
    )
    max_batch_span_ms: float | None = Field(
        default=None,
        ge=0,
        description="paced modes: most application ms one push may span (0: one timestamp per "
        "push, so several streams interleave in global time order, as C-SPARQL requires)",
    )


class Rule(_Model):
    """Matches a cell when every given axis value equals the cell's (strings compare as text)."""

    engine: str | None = None
    variant: str | None = None
    runtime: str | None = None
    query: str | None = None
    group: str | None = None
    stream: str | None = None
    feeding: str | None = None
    rate: float | None = None
    time_scale: float | None = None
    instances: int | None = None
    reason: str | None = Field(
        default=None, description="why: rsp matrix plan shows it with the cells the rule cuts"
    )

    def matches(self, axes: dict[str, Any]) -> bool:
        given = self.model_dump(exclude_none=True, exclude={"reason"})
        return all(axes.get(k) == v for k, v in given.items())


class Limits(_Model):
    timeout_s: float = Field(
        default=600.0,
        gt=0,
        description="longest any one engine verb (open, push, poll, …) may take before the "
        "engine is declared hung, killed and the cell recorded as timeout",
    )
    drain_quiet_s: float = Field(default=2.0, ge=0)
    drain_max_s: float = Field(default=60.0, ge=0)
    memory: str | None = Field(default=None, description="docker runtime memory limit")
    cell_timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="longest a cell's whole run (engine start, feeding, drain, close) may take; "
        "past it the engine is killed (nothing left running) and the cell recorded as timeout. "
        "It catches an engine that answers every verb, only too slowly (None: no bound)",
    )
    skip_after_timeout: bool = Field(
        default=False,
        description="a cell whose earlier repetition timed out is not run again: it is "
        "recorded as skipped, naming the repetition and its reason (--retry-failed runs it). "
        "An engine that cannot keep up overruns the same way every time: rsp-js at YABench's "
        "10,000 stations, CQELS fed in real time past its 30-minute deadline",
    )


class RateSearch(_Model):
    """Ren et al.'s Rate_max: the highest rate (triples/s) at which an engine still answers every
    window within its STEP with correct results, found by doubling from ``start`` up to
    ``max_rate`` and then bisecting ``bisect_steps`` times; every probe is a cell."""

    start: float = Field(gt=0, description="first rate probed (triples/s)")
    max_rate: float = Field(gt=0, description="no probe above this rate (result marked capped)")
    bisect_steps: int = Field(default=3, ge=0, le=10)
    min_achieved: float = Field(
        default=0.9, gt=0, le=1, description="share of the asked rate the feeder must reach"
    )
    warmup_windows: int = Field(
        default=1,
        ge=0,
        description="windows per query, in report order, left out of the STEP rule: an engine's "
        "first evaluation pays its warm-up (C-SPARQL answers its first window 0.4 s late, the "
        "next ones within 50 ms), which says nothing about the rate it sustains; the windows "
        "left out are listed with each probe (0: every window counts)",
    )
    engines: list[str] | None = Field(default=None, description="default: every engine")
    queries: list[str] | None = Field(default=None, description="query names; default all")
    streams: list[str] | None = Field(default=None, description="default: every stream")


class MatrixSpec(_Model):
    name: str
    description: str = ""
    group: str | None = Field(default=None, description="experiment within a benchmark")
    engines: list[EngineAxis] = Field(min_length=1)
    streams: list[StreamAxis] = Field(min_length=1)
    queries: list[QueryAxis] = Field(min_length=1)
    feeding: Feeding = Field(default_factory=Feeding)
    repetitions: int = Field(default=1, ge=1)
    metrics: list[Metric] = Field(default_factory=lambda: [Metric.CSRBENCH, Metric.PERF])
    profile: str | None = Field(default=None, description="profile override (name or file)")
    limits: Limits = Field(default_factory=Limits)
    exclude: list[Rule] = Field(default_factory=list)
    include: list[Rule] = Field(
        default_factory=list, description="re-admit cells an exclude rule removed"
    )
    wall_clock_free: bool = Field(
        default=False,
        description="cells measure nothing time-dependent: --jobs may run any of them together",
    )
    expected_cell_s: float = Field(default=10.0, gt=0, description="for the plan's wall time")
    rate_search: RateSearch | None = Field(
        default=None, description="search Rate_max per engine × runtime × stream × query"
    )
    instances: list[int] = Field(
        default_factory=lambda: [1],
        description="concurrency axis (CityBench): the query registered this many times on "
        "one engine, every instance judged",
    )
    lsbench_epsilon_percent: float = Field(
        default=5.0,
        ge=0,
        description="LSBench comparability: engines are comparable on a query when every "
        "pairwise mismatch is at most this many percent",
    )

    @model_validator(mode="after")
    def _entries_apart(self) -> MatrixSpec:
        """Two entries of one adapter under one name must not share a runtime: their cells
        would have one label and one identity."""
        variants = engine_variants(self.engines)
        for j, b in enumerate(self.engines):
            for i, a in enumerate(self.engines[:j]):
                if (a.name, variants[i]) != (b.name, variants[j]):
                    continue
                if a.runtimes is None or b.runtimes is None or set(a.runtimes) & set(b.runtimes):
                    name = a.name + (f"[{variants[i]}]" if variants[i] else "")
                    raise ValueError(
                        f"engines {i} and {j} are both {name} on the same runtime: give one of "
                        "them a `variant`, another engine_config or other runtimes"
                    )
        return self


def schema() -> dict[str, Any]:
    """The JSON Schema of a spec (for editors and for ``rsp matrix schema``)."""
    return MatrixSpec.model_json_schema(by_alias=True)


def key_line(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the TOML key at ``loc`` (tables, arrays of tables, inline keys),
    or of its nearest enclosing key found; None when not even the first part is found."""
    lines = text.splitlines()
    heads = [n for n, line in enumerate(lines) if re.match(r"^\s*\[", line)]
    start, end = 0, heads[0] if heads else len(lines)
    best: int | None = None
    path: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int):
            continue
        path.append(str(part))
        nxt = loc[i + 1] if i + 1 < len(loc) else None
        name = re.escape(".".join(path))
        tables = [n for n in heads if re.match(r"^\s*\[\[?\s*" + name + r"\s*\]", lines[n])]
        if tables:
            n = tables[nxt] if isinstance(nxt, int) and nxt < len(tables) else tables[0]
            best, start = n, n + 1
            end = next((m for m in heads if m > n), len(lines))
            path = []
            continue
        key = re.compile(r"(^|[{,])\s*" + re.escape(str(part)) + r"\s*=")
        hits = [n for n in range(start, end) if key.search(lines[n])]
        if not hits:
            break
        best, start, end = hits[0], hits[0], hits[0] + 1
        path = []
    return None if best is None else best + 1


def load_spec(path: Path | str) -> MatrixSpec:
    """Read and validate a spec; every problem is an ``InputError`` naming file, line and key.
    A YABench test folder (``config.json`` + ``oracle.query``) is a spec too."""
    path = Path(path)
    if path.is_dir():
        from rsp_sdk.matrix.yabench_test import load_yabench_test

        return load_yabench_test(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("matrix spec not found", path=path) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise InputError(
            f"invalid TOML: {exc}",
            path=path,
            line=int(m.group(1)) if m else None,
            expected="a TOML matrix spec (see matrix/*.toml)",
        ) from None
    try:
        return MatrixSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        where = ".".join(str(x) for x in loc) or "(top level)"
        shown = first.get("input")
        raise InputError(
            f"invalid spec key {where}: {first['msg']}",
            path=path,
            line=key_line(text, loc),
            text=None if isinstance(shown, dict) else json.dumps(shown, default=str)[:200],
            expected="a key of MatrixSpec (rsp matrix schema)",
        ) from None
