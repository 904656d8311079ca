"""YABench per-window metrics: bag precision/recall, delay, sizes, and the gracious mode.

YABench (Kolchin et al., 2016) scores an engine window by window instead of with one verdict:

* **Precision and recall by bag matching** — each expected binding matches at most one emitted
  binding (YABench's ``FMeasure``): P = matched / emitted, R = matched / expected; an empty
  expected relation answered by an empty output counts P = R = 1; otherwise an empty side gives 0.
* **Delay** — when the engine's answer arrived minus when the window closed, both on the system
  clock relative to the stream start (the run's pushed records map application time to system
  time, :mod:`rsp_sdk.compare.clock`). The window's answer is complete when its *last* relation
  arrives. The close instant is the window end for window-close reports and the triggering event
  (the last stream timestamp inside the scope) for content-change reports.
* **Triples in the window, expected and actual result sizes.**
* **Final result arrival** — the last output's arrival minus the end of input: the backlog an
  eager engine still had when the stream stopped.

Which output answers which window is decided by an order-preserving alignment
(:mod:`rsp_sdk.compare.align`), not by position, so one dropped relation does not shift every
later window. Emitted relations that answer no window get a row of their own (P = 0, R = 1, as
YABench writes an unexpected result).

**Gracious mode** reconstructs the window borders the engine really used: if recall < 1 the
start moves forward through the window's own timestamps (keeping the best recall); then, while
precision < 1, the end stretches to the next graph's timestamp (window-close reports only, at
most one window size). The reported borders are the smallest shifts that strictly improve the
score. Differences from YABench's code, on purpose: the start-shift loop evaluates
``[ts, window end)`` (YABench passed ``(i-1)·size`` as the end — the wrong window), no binding
list is merged with itself (YABench's ``WindowUtils.merge`` adds a list to itself), ties do not
move a border, and window sizes come from the parsed query in ms (YABench's C-SPARQL parser read
only seconds). For Istream the expected answer on shifted borders is the shifted window's result
minus the bindings the original window shared with its predecessor; Dstream is not supported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, Field

from rsp_sdk.compare.align import align
from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.evaluate import WindowEvaluator
from rsp_sdk.compare.relations import BindingKey, Relation, RelationStream, bag_overlap
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec


def precision_recall(
    expected: Counter[BindingKey], actual: Counter[BindingKey]
) -> tuple[int, float, float]:
    """(matched, precision, recall) by bag matching, with YABench's conventions for empties."""
    n_exp, n_act = sum(expected.values()), sum(actual.values())
    if n_exp == 0 and n_act == 0:
        return 0, 1.0, 1.0
    tp = bag_overlap(expected, actual)
    return tp, (tp / n_act if n_act else 0.0), (tp / n_exp if n_exp else 0.0)


class WindowMetrics(BaseModel):
    """One row of the per-window table: an expected relation (or an unexpected output)."""

    expected_seq: int | None = Field(description="None: an output that answers no window")
    report_ms: int | None = Field(description="expected report time (application ms)")
    window_open_ms: int | None
    window_close_ms: int | None
    triples_in_window: int | None
    actual_seqs: list[int] = Field(description="seq of the output relations answering it")
    expected_size: int
    actual_size: int
    matched: int
    precision: float
    recall: float
    delay_ms: float | None = None
    actual_sys_ms: float | None = Field(
        default=None, description="arrival of the answer, ms since the stream start"
    )
    expected_sys_ms: float | None = Field(
        default=None, description="the window's close, ms since the stream start"
    )
    gracious_open_ms: int | None = None
    gracious_close_ms: int | None = None
    start_shift_ms: int | None = None
    end_shift_ms: int | None = None
    gracious_precision: float | None = None
    gracious_recall: float | None = None
    gracious_expected_size: int | None = None


WINDOW_METRICS_SCHEMA = pa.schema(
    [
        pa.field("query", pa.string(), nullable=False),
        pa.field("t0_ms", pa.int64(), nullable=False),
        pa.field("expected_seq", pa.int64()),
        pa.field("report_ms", pa.int64()),
        pa.field("window_open_ms", pa.int64()),
        pa.field("window_close_ms", pa.int64()),
        pa.field("triples_in_window", pa.int64()),
        pa.field("actual_seqs", pa.list_(pa.int64()), nullable=False),
        pa.field("expected_size", pa.int64(), nullable=False),
        pa.field("actual_size", pa.int64(), nullable=False),
        pa.field("matched", pa.int64(), nullable=False),
        pa.field("precision", pa.float64(), nullable=False),
        pa.field("recall", pa.float64(), nullable=False),
        pa.field("delay_ms", pa.float64()),
        pa.field("actual_sys_ms", pa.float64()),
        pa.field("expected_sys_ms", pa.float64()),
        pa.field("gracious_open_ms", pa.int64()),
        pa.field("gracious_close_ms", pa.int64()),
        pa.field("start_shift_ms", pa.int64()),
        pa.field("end_shift_ms", pa.int64()),
        pa.field("gracious_precision", pa.float64()),
        pa.field("gracious_recall", pa.float64()),
        pa.field("gracious_expected_size", pa.int64()),
    ]
)


class YabenchReport(BaseModel):
    """Per-window metrics of one engine output against the expected output of one t0."""

    query: str
    t0_ms: int
    content_change: bool
    windows: list[WindowMetrics]
    unexpected_relations: int = Field(description="output relations that answer no window")
    mean_precision: float | None
    mean_recall: float | None
    mean_delay_ms: float | None = None
    mean_gracious_precision: float | None = None
    mean_gracious_recall: float | None = None
    final_result_arrival_ms: float | None = Field(
        default=None, description="last output's arrival minus the end of input (ms)"
    )
    positional_alignment: bool = False
    notes: list[str] = Field(default_factory=list)

    def to_arrow(self) -> pa.Table:
        """The per-window table (WINDOW_METRICS_SCHEMA), e.g. to write as Parquet."""
        rows = [w.model_dump() for w in self.windows]
        cols = {
            name: [r[name] for r in rows]
            for name in WINDOW_METRICS_SCHEMA.names
            if name not in ("query", "t0_ms")
        }
        cols["query"] = [self.query] * len(rows)
        cols["t0_ms"] = [self.t0_ms] * len(rows)
        return pa.Table.from_pydict(cols, schema=WINDOW_METRICS_SCHEMA)


@dataclass
class Gracious:
    """What gracious mode needs: an evaluator on arbitrary borders and the query's R2S."""

    evaluator: WindowEvaluator
    r2s: R2S
    max_extension_ms: int | None = None  # default: the window's own size


def gracious_for(
    stream: pa.Table, spec: QuerySpec, static: Sequence[pa.Table], r2s: R2S
) -> Gracious:
    """Gracious mode for ``spec`` on ``stream``: the window re-evaluator (Oxigraph, sharing no
    code with the Spark oracle) over the stream and the static data."""
    from rsp_sdk.compare.evaluate import OxigraphWindowEvaluator

    evaluator = OxigraphWindowEvaluator(
        stream,
        spec.sparql,
        static=list(static),
        window_names=(
            [w.name for w in spec.windows] if getattr(spec, "window_graphs", False) else None
        ),
        base_iri=getattr(spec, "base_iri", None),
    )
    return Gracious(evaluator, r2s)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


@dataclass
class _Shift:
    open_ms: int
    close_ms: int
    precision: float
    recall: float
    expected_size: int
    agrees: bool = True  # the evaluator reproduces the oracle's relation on the original scope


def _gracious(
    rel: Relation, actual: Counter[BindingKey], g: Gracious, *, extend_end: bool
) -> _Shift | None:
    o, c = rel.window_open_ms, rel.window_close_ms
    if o is None or c is None or g.r2s is R2S.DSTREAM:
        return None
    _, p, r = precision_recall(rel.bag, actual)
    best = _Shift(o, c, p, r, rel.size)
    if p == 1.0 and r == 1.0:
        return best
    ev = g.evaluator
    full = ev.evaluate(o, c)
    shared: frozenset[BindingKey] = frozenset()
    if g.r2s is R2S.ISTREAM:
        # bindings the original window had in common with its predecessor are not "new"
        shared = frozenset(full) - rel.keys
        best.agrees = rel.keys <= frozenset(full)
    else:
        best.agrees = frozenset(full) == rel.keys

    def expected_on(open_ms: int, close_ms: int) -> Counter[BindingKey]:
        bag = ev.evaluate(open_ms, close_ms)
        if not shared:
            return bag
        return Counter({k: n for k, n in bag.items() if k not in shared})

    if best.recall < 1.0:
        for ts in ev.timestamps(o, c)[1:]:
            exp = expected_on(ts, best.close_ms)
            _, p2, r2 = precision_recall(exp, actual)
            if r2 < best.recall:
                break
            if r2 > best.recall:
                best = _Shift(ts, best.close_ms, p2, r2, sum(exp.values()), best.agrees)
                if r2 == 1.0:
                    break
    if extend_end:
        limit = c + (g.max_extension_ms if g.max_extension_ms is not None else c - o)
        cursor = c
        while best.precision < 1.0:
            t_next = ev.next_timestamp(cursor)
            if t_next is None or t_next >= limit:
                break
            exp = expected_on(best.open_ms, t_next + 1)
            _, p2, r2 = precision_recall(exp, actual)
            if p2 < best.precision or r2 < best.recall:
                break
            if p2 > best.precision:
                best = _Shift(best.open_ms, t_next + 1, p2, r2, sum(exp.values()), best.agrees)
            cursor = t_next + 1
    return best


def window_metrics(
    expected: RelationStream,
    actual: RelationStream,
    *,
    content_change: bool,
    allow_groups: bool,
    time_map: TimeMap | None = None,
    event_times: Sequence[int] | None = None,
    time_unit_ms: int = 1000,
    gracious: Gracious | None = None,
) -> YabenchReport:
    """Per-window metrics of ``actual`` against ``expected`` (the relations of one t0).

    ``allow_groups``: several consecutive outputs may answer one window (tuple-driven ticks).
    ``event_times``: the stream's distinct timestamps, to find the triggering event of a
    content-change report (without it: report time minus ``time_unit_ms``, CSRBench's stamping).
    """
    if expected.t0_ms is None:
        raise ValueError("the expected relation stream carries no t0")
    exp_rels, act_rels = expected.relations, actual.relations
    alignment = align(
        [r.bag for r in exp_rels], [r.bag for r in act_rels], allow_groups=allow_groups
    )
    notes = list(alignment.notes)
    close = _CloseInstant(content_change, event_times, time_unit_ms)
    keyed: list[tuple[tuple[int, int, int], WindowMetrics]] = []
    disagreements: list[int] = []
    if gracious is not None and gracious.r2s is R2S.DSTREAM:
        notes.append("gracious mode does not support Dstream: gracious columns left empty")
    for i, (rel, group) in enumerate(zip(exp_rels, alignment.groups, strict=True)):
        bag: Counter[BindingKey] = Counter()
        for j in group:
            bag.update(act_rels[j].bag)
        row = _window_row(rel, bag, [act_rels[j] for j in group], close(rel), time_map)
        if gracious is not None:
            shift = _gracious(rel, bag, gracious, extend_end=not content_change)
            if shift is not None and not shift.agrees:
                disagreements.append(rel.seq)
            if shift is not None:
                _set_gracious(row, rel, shift)
        keyed.append(((i, 0, 0), row))
    if disagreements:
        notes.append(
            f"gracious mode: re-evaluating the original scope does not reproduce the expected "
            f"relation for {len(disagreements)} window(s) (first: seq {disagreements[0]}); their "
            "reconstructed borders are unreliable"
        )
    keyed += _unexpected_rows(alignment.groups, alignment.unassigned, act_rels, time_map)
    keyed.sort(key=lambda kv: kv[0])
    windows = [row for _, row in keyed]
    final_arrival = None
    arrivals = [r.t_sys_ns for r in act_rels if r.t_sys_ns is not None]
    if time_map is not None and arrivals:
        final_arrival = (max(arrivals) - time_map.end_sys_ns) / 1e6
    return YabenchReport(
        query=expected.query or actual.query,
        t0_ms=expected.t0_ms,
        content_change=content_change,
        windows=windows,
        unexpected_relations=len(alignment.unassigned),
        mean_precision=_mean([w.precision for w in windows]),
        mean_recall=_mean([w.recall for w in windows]),
        mean_delay_ms=_mean([w.delay_ms for w in windows]),
        mean_gracious_precision=(
            _mean([w.gracious_precision for w in windows]) if gracious else None
        ),
        mean_gracious_recall=_mean([w.gracious_recall for w in windows]) if gracious else None,
        final_result_arrival_ms=final_arrival,
        positional_alignment=alignment.positional,
        notes=notes,
    )


class _CloseInstant:
    """When a window's answer was due, in application time: its end for window-close reports;
    for content-change reports the triggering event, the last stream timestamp before the
    report (or the report minus one time unit when the stream's timestamps are not given)."""

    def __init__(
        self, content_change: bool, event_times: Sequence[int] | None, time_unit_ms: int
    ) -> None:
        self.content_change = content_change
        self.events = np.asarray(sorted(set(event_times)), dtype=np.int64) if event_times else None
        self.time_unit_ms = time_unit_ms

    def __call__(self, rel: Relation) -> int | None:
        end = rel.window_close_ms if rel.window_close_ms is not None else rel.t_app_ms
        if end is None or not self.content_change:
            return end
        if self.events is not None:
            pos = int(np.searchsorted(self.events, end, side="left"))
            return int(self.events[pos - 1]) if pos > 0 else end
        return end - self.time_unit_ms


def _window_row(
    rel: Relation,
    bag: Counter[BindingKey],
    answers: list[Relation],
    instant: int | None,
    time_map: TimeMap | None,
) -> WindowMetrics:
    """One expected window's row: scores of the outputs that answer it (``answers``, merged in
    ``bag``), and its delay — the last answer's arrival minus the close ``instant``."""
    matched, p, r = precision_recall(rel.bag, bag)
    row = WindowMetrics(
        expected_seq=rel.seq,
        report_ms=rel.t_app_ms,
        window_open_ms=rel.window_open_ms,
        window_close_ms=rel.window_close_ms,
        triples_in_window=rel.triples_in_window,
        actual_seqs=[a.seq for a in answers],
        expected_size=rel.size,
        actual_size=sum(bag.values()),
        matched=matched,
        precision=p,
        recall=r,
    )
    arrived = answers[-1].t_sys_ns if answers else None
    if time_map is not None and arrived is not None and instant is not None:
        closed = time_map.sys_ns_at(instant)
        row.delay_ms = (arrived - closed) / 1e6
        row.actual_sys_ms = time_map.relative_ms(arrived)
        row.expected_sys_ms = time_map.relative_ms(closed)
    return row


def _set_gracious(row: WindowMetrics, rel: Relation, shift: _Shift) -> None:
    row.gracious_open_ms = shift.open_ms
    row.gracious_close_ms = shift.close_ms
    row.start_shift_ms = shift.open_ms - (rel.window_open_ms or 0)
    row.end_shift_ms = shift.close_ms - (rel.window_close_ms or 0)
    row.gracious_precision = shift.precision
    row.gracious_recall = shift.recall
    row.gracious_expected_size = shift.expected_size


def _unexpected_rows(
    groups: Sequence[Sequence[int]],
    unassigned: Sequence[int],
    act_rels: Sequence[Relation],
    time_map: TimeMap | None,
) -> list[tuple[tuple[int, int, int], WindowMetrics]]:
    """A row (P = 0, R = 1) for each output that answers no window, keyed to sort after the
    window answered just before it."""
    group_of: dict[int, int] = {j: i for i, grp in enumerate(groups) for j in grp}
    answered_before, left = -1, set(unassigned)
    out: list[tuple[tuple[int, int, int], WindowMetrics]] = []
    for j, rel in enumerate(act_rels):
        if j in group_of:
            answered_before = group_of[j]
        if j not in left:
            continue
        arrived = rel.t_sys_ns
        row = WindowMetrics(
            expected_seq=None,
            report_ms=None,
            window_open_ms=None,
            window_close_ms=None,
            triples_in_window=None,
            actual_seqs=[rel.seq],
            expected_size=0,
            actual_size=rel.size,
            matched=0,
            precision=0.0,
            recall=1.0,
            actual_sys_ms=(
                time_map.relative_ms(arrived)
                if time_map is not None and arrived is not None
                else None
            ),
        )
        out.append(((answered_before, 1, j), row))
    return out
