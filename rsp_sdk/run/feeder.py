"""The feeder: turns stream tables into a schedule of packed batches, ahead of time.

Pacing modes:

* ``app-time`` — the stream's application timeline is replayed on the system clock, scaled:
  ``--rate N`` makes the stream's mean rate N triples/s, ``--time-scale F`` plays F application
  ms per system ms; neither means real speed (F = 1).
* ``real-time`` — F = 1 and batches never span more than one timestamp by default: for engines
  that only know the wall clock (CQELS), where *when* a triple arrives is its timestamp.
* ``afap`` — as fast as possible over the first ``limit`` triples (Ren et al.'s fixed-N
  execution time, LSBench's throughput runs).

A warm-up stream can precede the measured part (own rate, ``phase = "warmup"``). Several streams
in one table share one clock (the rate is their mean rate together) unless ``streams`` gives one
its own rate or time scale. The triples of all streams
are pushed in one global order (due time, then application time); a batch holds at most
``batch_size`` consecutive triples of one stream in that order and spans at most
``max_batch_span_ms`` of *system* time, so batching never reorders triples across streams. A
batch is due when its *last* triple is due, so no triple ever reaches an engine before its time.
Everything — cutting and packing — happens in ``plan()`` with vectorised Arrow/numpy operations
before the clock starts, so packing never sits on the timed path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsp_sdk.engine.batch import TripleBatch, pack_lines, slice_batches
from rsp_sdk.errors import InputError
from rsp_sdk.run.pacing import PacingMode as PacingMode


class StreamPacing(BaseModel):
    """Per-stream override of the rate / time scale (multi-stream runs)."""

    model_config = ConfigDict(frozen=True)

    rate: float | None = Field(default=None, gt=0, description="triples/s")
    time_scale: float | None = Field(default=None, gt=0)


class FeederConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: PacingMode = PacingMode.APP_TIME
    rate: float | None = Field(default=None, gt=0, description="target mean rate, triples/s")
    time_scale: float | None = Field(default=None, gt=0, description="app ms per system ms")
    batch_size: int = Field(default=10_000, ge=1)
    max_batch_span_ms: float | None = Field(
        default=None, ge=0, description="system-time span of a batch (default 100; real-time 0)"
    )
    limit: int | None = Field(default=None, ge=1, description="afap: triples to push")
    streams: dict[str, StreamPacing] = Field(default_factory=dict)
    warmup_rate: float | None = Field(default=None, gt=0, description="triples/s of the warm-up")

    @model_validator(mode="after")
    def _check(self) -> FeederConfig:
        if self.rate is not None and self.time_scale is not None:
            raise ValueError("give either a rate or a time scale, not both")
        if self.mode is PacingMode.REAL_TIME and (self.rate or self.time_scale):
            raise ValueError("real-time pacing has no rate or time scale (it is 1:1)")
        if self.mode is PacingMode.AFAP and (self.rate or self.time_scale):
            raise ValueError("afap pushes as fast as possible: it takes no rate or time scale")
        return self

    def pushed_limit(self) -> int | None:
        """How many of the stream's triples a run pushes (None: all): ``limit``, afap only."""
        return self.limit if self.mode is PacingMode.AFAP else None

    def span_ms(self) -> float:
        if self.max_batch_span_ms is not None:
            return self.max_batch_span_ms
        return 0.0 if self.mode is PacingMode.REAL_TIME else 100.0


@dataclass(frozen=True, slots=True)
class PlannedBatch:
    phase: str  # "warmup" or "measure"
    stream: str
    index: int  # per phase
    due_ns: int | None  # offset from the feeding start; None = as fast as possible
    batch: TripleBatch


@dataclass(frozen=True)
class Plan:
    batches: list[PlannedBatch]
    triples: int
    t_app_min_ms: int
    t_app_max_ms: int
    warmup_triples: int = 0

    @property
    def measured_start_ns(self) -> int:
        """Offset at which the first measured batch is due (0 without warm-up)."""
        for b in self.batches:
            if b.phase == "measure":
                return b.due_ns or 0
        return 0


def _speed(cfg: FeederConfig, pacing: StreamPacing | None, count: int, span_ms: int) -> float:
    """Application ms per system ms for one stream."""
    if cfg.mode is PacingMode.REAL_TIME:
        return 1.0
    rate = pacing.rate if pacing and pacing.rate else cfg.rate
    scale = pacing.time_scale if pacing and pacing.time_scale else cfg.time_scale
    if scale:
        return scale
    if rate:
        if span_ms <= 0 or count <= 1:
            return 1.0
        natural = count / (span_ms / 1000.0)  # triples per second at real speed
        return rate / natural
    return 1.0


def _check_sorted(table: pa.Table, what: str) -> None:
    if table.num_rows > 1:
        t = table.column("t_app_ms").to_numpy()
        bad = np.flatnonzero(t[1:] < t[:-1])
        if bad.size:
            i = int(bad[0]) + 1
            raise InputError(
                f"{what} is not sorted by application time at row {i}",
                text=f"t_app_ms {int(t[i - 1])} then {int(t[i])}",
                expected="rows in non-decreasing t_app_ms (rsp stream import --sort)",
            )


def _phase(
    table: pa.Table, cfg: FeederConfig, phase: str, rate_override: float | None
) -> tuple[list[PlannedBatch], float]:
    """Batches of one phase (due offsets from the phase start) and the phase's length in ms.

    Every triple gets its due time on its own stream's clock; all triples are then put in one
    order (due time, application time, stream) and batches are cut from runs of consecutive
    triples of one stream in that order. Concatenated, the batches are exactly that order, so
    batching never moves a triple of one stream before an earlier triple of another (cutting
    per stream first let a 100 ms batch of one stream overtake the other stream's triples)."""
    _check_sorted(table, f"the {phase} stream")
    afap = cfg.mode is PacingMode.AFAP and phase == "measure"
    n = table.num_rows
    times = table.column("t_app_ms").to_numpy()
    origin = int(times.min()) if n else 0
    names = pc.unique(table.column("stream")).to_pylist()  # order of first appearance
    codes = pc.index_in(table.column("stream"), value_set=pa.array(names)).to_numpy()
    rows = np.arange(n)
    if afap:
        due = None
        order = np.lexsort((rows, codes, times))
    else:
        speeds = np.array(_stream_speeds(table, cfg, names, rate_override))
        due = (times - origin) / speeds[codes]  # ms of system time
        order = np.lexsort((rows, codes, times, due))
    table = table.take(pa.array(order))
    codes, times = codes[order], times[order]
    cut = codes[1:] != codes[:-1]
    if due is not None:
        due = due[order]
        span = cfg.span_ms()
        bucket = times if span == 0 else np.floor(due / span).astype(np.int64)
        cut |= bucket[1:] != bucket[:-1]
    change = np.flatnonzero(cut) + 1
    bounds: list[tuple[int, int]] = []
    for a, b in zip(
        np.concatenate(([0], change)).tolist(), np.concatenate((change, [n])).tolist(), strict=True
    ):
        bounds.extend((i, min(i + cfg.batch_size, b)) for i in range(a, b, cfg.batch_size))
    batches = slice_batches(pack_lines(table), table.column("t_app_ms"), bounds)
    out = [
        PlannedBatch(
            phase,
            names[int(codes[start])],
            i,
            None if due is None else int(float(due[stop - 1]) * 1e6),
            batch,
        )
        for i, ((start, stop), batch) in enumerate(zip(bounds, batches, strict=True))
    ]
    length = float(due.max()) if due is not None and n else 0.0
    return out, length


def _stream_speeds(
    table: pa.Table, cfg: FeederConfig, names: list[str], rate_override: float | None
) -> list[float]:
    """Application ms per system ms of each stream. A stream with its own rate or scale
    (``streams``) plays at it; the others share one clock, the spec's rate being their mean
    rate *together* (the same total load however many streams carry it): a rate applied to
    each stream alone would play them at different speeds and reorder them."""
    if rate_override is not None:
        cfg = cfg.model_copy(update={"rate": rate_override, "time_scale": None, "streams": {}})
    own = {s for s in names if (p := cfg.streams.get(s)) is not None and (p.rate or p.time_scale)}
    column = table.column("stream")
    shared = table.filter(pc.invert(pc.is_in(column, value_set=pa.array(sorted(own), pa.string()))))
    common = _speed(cfg, None, shared.num_rows, _span(shared)) if shared.num_rows else 1.0
    speeds = []
    for s in names:
        if s not in own:
            speeds.append(common)
            continue
        sub = table.filter(pc.equal(column, s))
        speeds.append(_speed(cfg, cfg.streams[s], sub.num_rows, _span(sub)))
    return speeds


def app_speed(table: pa.Table, cfg: FeederConfig) -> float | None:
    """Application ms per system ms at which ``cfg`` replays ``table`` (columns ``t_app_ms``
    and ``stream``): a time scale, or a rate as the scale that gives the stream that mean rate
    (1 in real time). None when there is no one speed: afap, or streams on clocks of their own
    at different speeds. What a wall-clock engine's windows scale by
    (``rsp_sdk.compare.wallclock``)."""
    if cfg.mode is PacingMode.AFAP or table.num_rows == 0:
        return None
    names = pc.unique(table.column("stream")).to_pylist()
    speeds = set(_stream_speeds(table, cfg, names, None))
    return speeds.pop() if len(speeds) == 1 else None


def _span(table: pa.Table) -> int:
    t = table.column("t_app_ms")
    return int(pc.max(t).as_py()) - int(pc.min(t).as_py())


def pushed_part(table: pa.Table, cfg: FeederConfig) -> pa.Table:
    """The part of ``table`` a run pushes: its first ``limit`` triples in the fixed-N mode, all
    of it otherwise — also what the matrix judges such a run against (``rsp_sdk.matrix.given``)."""
    limit = cfg.pushed_limit()
    if limit is None:
        return table
    if limit > table.num_rows:
        raise InputError(
            f"--limit {limit} exceeds the stream's {table.num_rows} triples",
            expected=f"a limit ≤ {table.num_rows}",
        )
    return table.slice(0, limit)


def plan(table: pa.Table, cfg: FeederConfig, *, warmup: pa.Table | None = None) -> Plan:
    """The whole feeding schedule, packed: warm-up batches first, then the measured ones."""
    table = pushed_part(table, cfg)
    if table.num_rows == 0:
        raise InputError("the stream has no triples to push")
    batches: list[PlannedBatch] = []
    offset_ms = 0.0
    warm_n = 0
    if warmup is not None and warmup.num_rows:
        w_max = int(pc.max(warmup.column("t_app_ms")).as_py())
        m_min = int(pc.min(table.column("t_app_ms")).as_py())
        if w_max >= m_min:
            raise InputError(
                "the warm-up stream overlaps the measured stream in application time",
                text=f"warm-up ends at {w_max} ms, measured stream starts at {m_min} ms",
                expected="a warm-up that ends before the measured stream starts",
            )
        # the warm-up plays at its own rate (or its natural speed), whatever the measured mode
        warm_cfg = cfg.model_copy(
            update={"mode": PacingMode.APP_TIME, "rate": None, "time_scale": None, "streams": {}}
        )
        warm, length = _phase(warmup, warm_cfg, "warmup", cfg.warmup_rate)
        batches.extend(warm)
        warm_n = warmup.num_rows
        # the measured phase starts where its own timeline says, after the warm-up finished
        offset_ms = length + 1.0
    measured, _ = _phase(table, cfg, "measure", None)
    shift = int(offset_ms * 1e6)
    batches.extend(
        PlannedBatch(
            b.phase, b.stream, b.index, None if b.due_ns is None else b.due_ns + shift, b.batch
        )
        if b.due_ns is not None or shift == 0
        else PlannedBatch(b.phase, b.stream, b.index, shift, b.batch)
        for b in measured
    )
    t = table.column("t_app_ms")
    return Plan(
        batches=batches,
        triples=table.num_rows,
        t_app_min_ms=int(pc.min(t).as_py()),
        t_app_max_ms=int(pc.max(t).as_py()),
        warmup_triples=warm_n,
    )
