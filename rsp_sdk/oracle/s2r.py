"""Stream-to-relation: which scopes an engine with a given SECRET profile reports, for every t0.

Definitions (ω = RANGE of the first window, β = the common STEP, windows of a query share β):

* **Windows.** For a candidate t0, window *i* ≥ 0 has the scope [o_i, c_i) with o_i = o_0 + iβ,
  c_i = o_i + ω. SECRET puts o_0 = t0. With ``T0Policy(span="window")`` the published CSRBench
  oracle's window-close placement applies: o_0 = t0 if t0 < ω, else t0 + β − ω.
* **Window close.** One report per window with o_i ≤ t_max (later windows are empty forever),
  at t_app = c_i, over [o_i, c_i). With ``periodic`` as well, only closes that are multiples of
  the period (the conjunction RSP4J's ``Periodic`` applies: t_app mod period = 0).
* **Content change.** Reports happen at *events* later than t0 (an element stamped exactly t0
  is present at registration and triggers nothing, as in the CSRBench oracle): every element of
  a windowed stream (tuple-driven, in stream order), every distinct timestamp (batch-driven), or
  every multiple τ of the time unit with arrivals in (τ − unit, τ] (time-driven; ``periodic``
  gives the unit). The active window at event x is the oldest one still open,
  a = min{i : c_i > x}; if it has not opened yet (o_a > x, a gap between hopping windows) nothing
  is reported. The scope is [o_a, x] — for tuple-driven, only the elements up to and including
  the triggering one. Expiration alone never triggers a report.
* **Periodic.** At every multiple τ of the period with τ > t0, the active window as above, over
  [o_a, τ] (elements stamped τ included), whether or not anything changed.
* **Non-empty content.** A report whose scope holds no element is dropped: it reports nothing
  and is not the "previous" relation of the next Istream/Dstream report.

Several windows share report instants; window w's scope at a report is [c − ω_w, bound), where
c is the close of the first window's active scope.

Every report is identified by its *content key* (c, B, R): window w holds the elements of its
stream with c − ω_w ≤ t < B and row position ≤ R (R = ``INF`` unless tuple-driven). Reports of
different t0 candidates with equal keys have equal content, so each key is evaluated once.
This module computes the report list with vectorised numpy (no per-window Python loop); the
assignment of triples to keys happens in Spark (``rsp_sdk.oracle.job``).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, ReportPolicy, T0Lead, Tick
from rsp_sdk.model.query import QuerySpec

INF = 1 << 62

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class WindowGeom:
    """One window of the query against the stream table: its range and the rows it sees."""

    range_ms: int
    times: I64  # t_app of the rows of its stream, sorted
    rows: I64  # global row positions of those rows


@dataclass(frozen=True)
class Geometry:
    """Window geometry of a query over a concrete stream."""

    windows: list[WindowGeom]
    step_ms: int
    event_times: I64  # t_app of every row of any windowed stream (sorted)
    event_rows: I64  # their global row positions
    t_min: int
    t_max: int

    @property
    def omega(self) -> int:
        return self.windows[0].range_ms


def geometry(query: QuerySpec, times: I64, stream_of_row: list[npt.NDArray[np.bool_]]) -> Geometry:
    """Bind the query's windows to rows (``stream_of_row[w]`` masks the rows window w sees)."""
    wins = []
    any_mask = np.zeros(len(times), dtype=bool)

    # a window over every row (one stream) shares ``times`` and one range of positions: at
    # 21 M triples each copy is 168 MB of fresh memory
    @functools.cache
    def every() -> I64:
        return np.arange(len(times), dtype=np.int64)

    def rows_of(mask: npt.NDArray[np.bool_]) -> tuple[I64, I64]:
        if mask.all():
            return every(), times
        rows = np.flatnonzero(mask).astype(np.int64)
        return rows, times[rows]

    for w, mask in zip(query.windows, stream_of_row, strict=True):
        rows, row_times = rows_of(mask)
        wins.append(WindowGeom(w.range_ms, row_times, rows))
        any_mask |= mask
    ev_rows, ev_times = rows_of(any_mask)
    t_min = int(ev_times[0]) if len(ev_times) else 0
    t_max = int(ev_times[-1]) if len(ev_times) else -1
    return Geometry(wins, query.slide_ms, ev_times, ev_rows, t_min, t_max)


def t0_candidates(
    profile: Profile,
    query: QuerySpec,
    *,
    stream_unit_ms: int,
    t_min: int,
) -> list[int]:
    """Candidate t0 values: from the first candidate in steps across one slide (or one window).

    The first candidate is the profile's ``first_ms``, else the query's, else the first triple's
    time floored to the step; the profile's lead (ω − β for engines whose windows open before the
    data) moves the profile's ``first_ms`` or the data-derived one back. The step is the
    profile's, else the *stream's* time unit: a profile counting time in ms (ETALIS) over
    CSRBench's one-graph-per-second data would otherwise ask for 10,000 candidates per 10 s
    slide, all but ten of them equivalent.
    """
    step = profile.t0.step_ms or stream_unit_ms or 1
    lead = 0
    if profile.t0.lead is T0Lead.RANGE_MINUS_STEP:
        lead = max(0, query.range_ms - query.slide_ms)
    if profile.t0.first_ms is not None:  # windows on a fixed grid, opened ω − β before it
        first = profile.t0.first_ms - lead
    elif query.first_t0_ms is not None:
        first = query.first_t0_ms
    else:
        first = ((t_min - lead) // step) * step
    if profile.t0.span == "window":
        last = first + query.range_ms  # inclusive, as the CSRBench oracle
        return list(range(first, last + 1, step))
    return list(range(first, first + query.slide_ms, step))


def first_openings(t0s: I64, geom: Geometry, csrbench: bool) -> I64:
    """o_0 per candidate (the CSRBench rule moves it for t0 ≥ ω)."""
    if not csrbench:
        return t0s.copy()
    return np.where(t0s < geom.omega, t0s, t0s + geom.step_ms - geom.omega)


def _expand(counts: I64) -> tuple[I64, I64]:
    """(owner index, position within owner) for ``counts[j]`` items per owner j."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.arange(total, dtype=np.int64) - starts


def _columns(
    t0: I64,
    t_app: I64,
    order: I64,
    kc: I64,
    kb: I64,
    kr: I64,
    kbb: I64,
    krb: I64,
    open_: I64,
    ek: I64,
) -> dict[str, I64]:
    return {
        "t0": t0,
        "t_app": t_app,
        "order": order,
        "kc": kc,
        "kb": kb,
        "kr": kr,
        "kbb": kbb,
        "krb": krb,
        "open": open_,
        "ek": ek,
    }


def window_close_reports(
    t0s: I64, o0: I64, geom: Geometry, period: int | None = None
) -> dict[str, I64]:
    beta, omega = geom.step_ms, geom.omega
    counts = np.where(o0 <= geom.t_max, (geom.t_max - o0) // beta + 1, 0).astype(np.int64)
    owner, i = _expand(counts)
    o = o0[owner] + i * beta
    c = o + omega
    if period is not None:
        keep = c % period == 0
        owner, o, c = owner[keep], o[keep], c[keep]
    n = len(c)
    inf = np.full(n, INF, dtype=np.int64)
    return _columns(t0s[owner], c, np.zeros(n, np.int64), c, c, inf, c, inf, o, c)


def _active(x: I64, o0: I64, geom: Geometry) -> tuple[I64, I64]:
    """(opening, close) of the oldest window still open at x: a = min{i ≥ 0 : c_i > x}."""
    beta, omega = geom.step_ms, geom.omega
    a = np.maximum(0, np.floor_divide(x - o0 - omega, beta) + 1)
    o = o0 + a * beta
    return o, o + omega


def periodic_reports(t0s: I64, o0: I64, geom: Geometry, period: int) -> dict[str, I64]:
    first = np.floor_divide(t0s, period) + 1  # first multiple of the period after t0
    last = np.floor_divide(geom.t_max + geom.omega, period)
    counts = np.maximum(0, last - first + 1).astype(np.int64)
    owner, k = _expand(counts)
    tau = (first[owner] + k) * period
    o, c = _active(tau, o0[owner], geom)
    keep = (o <= tau) & (o <= geom.t_max)
    owner, tau, o, c = owner[keep], tau[keep], o[keep], c[keep]
    n = len(tau)
    inf = np.full(n, INF, dtype=np.int64)
    return _columns(t0s[owner], tau, np.zeros(n, np.int64), c, tau + 1, inf, tau + 1, inf, o, tau)


def _events(profile: Profile, geom: Geometry) -> dict[str, I64]:
    """Content-change events before t0 filtering: time x, bounds (kb, kr), before-bounds, key."""
    t, rows = geom.event_times, geom.event_rows
    unit: int | None = None
    if ReportPolicy.PERIODIC in profile.report:
        unit = profile.period_ms
    elif profile.tick is Tick.TIME_DRIVEN:
        unit = profile.time_unit_ms
    if unit is None and profile.tick is Tick.TUPLE_DRIVEN:
        return {
            "x": t,
            "kb": t + 1,
            "kr": rows,
            "kbb": t + 1,
            "krb": rows - 1,
            "ek": rows,
            "order": rows,
        }
    if unit is None:  # batch-driven: one event per distinct timestamp
        x = np.unique(t)
        before = x
    else:
        x = np.unique(-np.floor_divide(-t, unit) * unit)  # ceil to a multiple of the unit
        before = x - unit + 1
    n = len(x)
    inf = np.full(n, INF, dtype=np.int64)
    return {
        "x": x,
        "kb": x + 1,
        "kr": inf,
        "kbb": before,
        "krb": inf,
        "ek": x,
        "order": np.zeros(n, np.int64),
    }


def content_change_reports(t0s: I64, geom: Geometry, profile: Profile) -> dict[str, I64]:
    ev = _events(profile, geom)
    n_ev, n_t0 = len(ev["x"]), len(t0s)
    owner = np.repeat(np.arange(n_t0, dtype=np.int64), n_ev)
    e = np.tile(np.arange(n_ev, dtype=np.int64), n_t0)
    x = ev["x"][e]
    keep = x > t0s[owner]
    owner, e, x = owner[keep], e[keep], x[keep]
    o, c = _active(x, t0s[owner], geom)
    keep = o <= x
    owner, e, x, o, c = owner[keep], e[keep], x[keep], o[keep], c[keep]
    return _columns(
        t0s[owner],
        x,
        ev["order"][e],
        c,
        ev["kb"][e],
        ev["kr"][e],
        ev["kbb"][e],
        ev["krb"][e],
        o,
        ev["ek"][e],
    )


def triples_in_scope(geom: Geometry, kc: I64, kb: I64, kr: I64) -> I64:
    """Σ over windows of the elements with c − ω_w ≤ t < B and row ≤ R."""
    n = np.zeros(len(kc), dtype=np.int64)
    for w in geom.windows:
        lo = np.searchsorted(w.times, kc - w.range_ms, side="left")
        hi_t = np.searchsorted(w.times, kb, side="left")
        hi_r = np.searchsorted(w.rows, kr, side="right")
        n += np.maximum(0, np.minimum(hi_t, hi_r) - lo)
    return n


def report_table(
    profile: Profile, geom: Geometry, t0s: list[int]
) -> tuple[pa.Table, dict[str, I64]]:
    """All reports of all t0 candidates, ranked per t0 (after the non-empty filter).

    Columns: t0, rank (1-based), t_app, open, close, n (triples in scope), the content key
    (kc, kb, kr), the event-driven "before" bounds (kbb, krb) and the event key ``ek``.
    Also returns, for the temporal-join path, per (t0, k) the number of reports before c_k.
    """
    t0 = np.asarray(t0s, dtype=np.int64)
    csrbench = profile.t0.span == "window"
    if ReportPolicy.CONTENT_CHANGE in profile.report:
        cols = content_change_reports(t0, geom, profile)
        o0 = t0
    elif ReportPolicy.WINDOW_CLOSE in profile.report:
        o0 = first_openings(t0, geom, csrbench)
        period = profile.period_ms if ReportPolicy.PERIODIC in profile.report else None
        cols = window_close_reports(t0, o0, geom, period)
    else:
        assert profile.period_ms is not None  # the Profile validator guarantees it
        o0 = t0
        cols = periodic_reports(t0, o0, geom, profile.period_ms)
    n = triples_in_scope(geom, cols["kc"], cols["kb"], cols["kr"])
    keep = n > 0 if profile.non_empty else np.ones(len(n), dtype=bool)
    cols = {k: v[keep] for k, v in cols.items()}
    n = n[keep]
    order = np.lexsort((cols["order"], cols["t_app"], cols["t0"]))
    cols = {k: v[order] for k, v in cols.items()}
    n = n[order]
    # rank within each t0 (rows are grouped by t0 after the sort)
    t0_sorted = cols["t0"]
    starts = np.r_[0, np.flatnonzero(np.diff(t0_sorted)) + 1] if len(t0_sorted) else np.r_[0]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(t0_sorted)]))
    rank = np.arange(len(t0_sorted), dtype=np.int64) - group_start + 1
    table = pa.table(
        {
            "t0": t0_sorted,
            "rank": rank,
            "t_app": cols["t_app"],
            "open": cols["open"],
            "close": cols["kb"],
            "n": n,
            "kc": cols["kc"],
            "kb": cols["kb"],
            "kr": cols["kr"],
            "kbb": cols["kbb"],
            "krb": cols["krb"],
            "ek": cols["ek"],
        }
    )
    return table, {"t0": t0, "o0": o0}


def window_ends(t0: I64, o0: I64, geom: Geometry, reports: pa.Table) -> pa.Table:
    """(t0, k, hi): hi = rank of the last report of t0 strictly before c_k = o_0 + kβ + ω.

    A solution whose earliest element lies in window k (the latest window opened at or before
    it) stays visible in content-change reports until c_k: the temporal-join path needs it.
    """
    beta, omega = geom.step_ms, geom.omega
    counts = np.where(o0 <= geom.t_max, (geom.t_max - o0) // beta + 1, 0).astype(np.int64)
    owner, k = _expand(counts)
    ck = o0[owner] + k * beta + omega
    rt0 = reports.column("t0").to_numpy()
    rt = reports.column("t_app").to_numpy()
    # one searchsorted over (t0 position, time) pairs: reports are sorted by (t0, t_app)
    r_pos = np.searchsorted(t0, rt0).astype(np.int64)  # t0 is sorted ascending
    span = int(
        max(rt.max(initial=0), ck.max(initial=0)) - min(rt.min(initial=0), ck.min(initial=0))
    )
    base = int(min(rt.min(initial=0), ck.min(initial=0)))
    scale = span + 2
    r_key = r_pos * scale + (rt - base)
    q_key = owner * scale + (ck - base)
    hi = np.searchsorted(r_key, q_key, side="left") - np.searchsorted(
        r_key, owner * scale, side="left"
    )
    return pa.table({"t0": t0[owner], "k": k, "hi": hi.astype(np.int64)})


def _content_columns(geom: Geometry, reports: pa.Table) -> I64:
    """Per report, the row ranges each window holds, before and at the report (−1 when empty).

    Two reports with equal rows see equal window contents whatever their report instants, so
    the query gives them equal relations; the "before" range (``kbb``, ``krb``) is the content an
    event-driven report is compared against (without its triggering elements).
    """
    kc, kb, kr, kbb, krb = (reports.column(c).to_numpy() for c in ("kc", "kb", "kr", "kbb", "krb"))
    cols = []
    for w in geom.windows:
        lo = np.searchsorted(w.times, kc - w.range_ms, side="left")
        for b, r in ((kb, kr), (kbb, krb)):
            hi = np.minimum(
                np.searchsorted(w.times, b, side="left"), np.searchsorted(w.rows, r, side="right")
            )
            empty = hi <= lo
            cols += [np.where(empty, -1, lo), np.where(empty, -1, hi)]
    return np.stack(cols, axis=1).astype(np.int64) if cols else np.zeros((len(kc), 0), np.int64)


@dataclass(frozen=True)
class T0Classes:
    """Candidates grouped by the contents they see: one evaluation per class.

    t0 values whose windows cut the data between the same pairs of timestamps see the same
    sequence of window contents, so every report of theirs (and thus every relation, R2S step,
    empty relation and ``seq``) is the same, rank by rank; only report *times* and scope bounds
    differ, and those come from each member's own reports. The number of classes is bounded by
    the distinct timestamps within one slide, not by the time unit.
    """

    candidates: I64  # sorted, distinct
    representative: I64  # per candidate: the smallest member of its class

    @property
    def representatives(self) -> list[int]:
        return sorted({int(r) for r in self.representative})

    def members(self) -> dict[int, list[int]]:
        """Representative → its members (ascending, the representative first)."""
        out: dict[int, list[int]] = {}
        for t, r in zip(self.candidates.tolist(), self.representative.tolist(), strict=True):
            out.setdefault(r, []).append(t)
        return out

    def ranges(self, t0: int) -> list[tuple[int, int]]:
        """The class of candidate ``t0`` as runs [first, last] of consecutive candidates."""
        where = np.flatnonzero(self.candidates == t0)
        if not len(where):
            return []
        inside = self.representative == self.representative[where[0]]
        edges = np.diff(np.r_[0, inside.astype(np.int8), 0])
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
        return [
            (int(self.candidates[a]), int(self.candidates[b]))
            for a, b in zip(starts, stops, strict=True)
        ]

    def expand(self, table: pa.Table) -> pa.Table:
        """Rows keyed by representative ``t0`` → the same rows for every member of its class."""
        mapping = pa.table({"t0": self.representative, "member": self.candidates})
        joined = table.join(mapping, keys="t0", join_type="inner").drop_columns(["t0"])
        names = ["t0" if c == "member" else c for c in joined.column_names]
        return joined.rename_columns(names).select(table.column_names)


def t0_classes(geom: Geometry, reports: pa.Table, candidates: list[int]) -> T0Classes:
    """Group ``candidates`` by the sequence of contents their reports (``report_table``) see."""
    cands = np.asarray(sorted(set(candidates)), dtype=np.int64)
    content = _content_columns(geom, reports)
    if len(content):
        _, ids = np.unique(content, axis=0, return_inverse=True)
    else:
        ids = np.zeros(0, np.int64)
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    t0 = reports.column("t0").to_numpy()
    seqs: dict[int, bytes] = {}
    if len(t0):
        starts = np.r_[0, np.flatnonzero(np.diff(t0)) + 1]
        parts = np.split(ids, starts[1:])
        seqs = {int(t0[s]): p.tobytes() for s, p in zip(starts, parts, strict=True)}
    first: dict[bytes, int] = {}
    rep = np.empty(len(cands), dtype=np.int64)
    for i, t in enumerate(cands.tolist()):
        rep[i] = first.setdefault(seqs.get(t, b""), t)
    return T0Classes(cands, rep)


def singletons(candidates: list[int]) -> T0Classes:
    """Every candidate its own class: per-t0 evaluation (the witness of the class path)."""
    cands = np.asarray(sorted(set(candidates)), dtype=np.int64)
    return T0Classes(cands, cands.copy())


def shared_keys(geom: Geometry, reports: pa.Table) -> pa.Table:
    """The reports with each content key replaced by the first key seeing the same contents.

    Reports of different classes differ somewhere, not everywhere: a window far from the
    timestamps that separate two classes holds the same elements in both. Every report then
    names an existing key (with its "before" bounds), so the evaluation has fewer keys, never
    new ones, and each relation is the one of equal contents.
    """
    if reports.num_rows == 0:
        return reports
    _, first, ids = np.unique(
        _content_columns(geom, reports), axis=0, return_index=True, return_inverse=True
    )
    pick = pa.array(first[np.asarray(ids).reshape(-1)])
    for name in ("kc", "kb", "kr", "kbb", "krb"):
        i = reports.schema.get_field_index(name)
        reports = reports.set_column(i, name, reports.column(name).take(pick))
    return reports


def of_t0s(reports: pa.Table, t0s: list[int]) -> pa.Table:
    """The reports of the given candidates only."""
    keep = np.isin(reports.column("t0").to_numpy(), np.asarray(t0s, dtype=np.int64))
    return reports.filter(pa.array(keep))


class TooManyReports(InputError):
    """The reports the oracle would hold for this (stream, query, profile) exceed its limit."""


# rows of the report table a job may hold for its t0 class representatives (12 int64 columns,
# ~100 bytes a row, several times that once the Spark job's output and R2S are built on them):
# ETALIS ren16 Q6 asks for 1 000 classes × 50 000 tuple ticks on 50 000 triples (the matrix
# process was OOM-killed at 16 GB) and 22.5 M reports on 25 000 (past 6 GB)
MAX_REPORTS = 10_000_000
# candidates whose reports are enumerated at once while finding the classes
CHUNK_ROWS = 2_000_000


def max_reports() -> int:
    """The report limit: ``RSP_ORACLE_MAX_REPORTS`` or ``MAX_REPORTS``."""
    return env_rows("RSP_ORACLE_MAX_REPORTS", MAX_REPORTS)


def env_rows(name: str, default: int) -> int:
    """A row count from environment variable ``name`` (``default`` when unset); one that is
    not a number is an input error naming it."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise InputError(f"{name}={raw!r} is not a number", expected="a row count") from None


def rows_per_candidate(profile: Profile, geom: Geometry) -> int:
    """An upper bound of one candidate's reports (what ``report_table`` allocates for it)."""
    if ReportPolicy.CONTENT_CHANGE in profile.report:
        return max(1, len(_events(profile, geom)["x"]))
    span = geom.t_max - geom.t_min + geom.omega + 2 * geom.step_ms
    if ReportPolicy.WINDOW_CLOSE in profile.report:
        return max(1, span // geom.step_ms + 1)
    assert profile.period_ms is not None
    return max(1, span // profile.period_ms + 1)


def class_reports(
    profile: Profile,
    geom: Geometry,
    candidates: list[int],
    *,
    classes: bool = True,
    limit: int | None = None,
    hold: bool = True,
) -> tuple[T0Classes, pa.Table]:
    """(classes, reports of the class representatives): ``t0_classes`` over ``report_table``
    without ever holding every candidate's reports.

    Candidates are enumerated a chunk at a time (``CHUNK_ROWS``); a candidate whose sequence
    of contents (``_content_columns``, rank by rank: its SHA-256) was seen before joins that
    class, whose representative is the smallest member as in ``t0_classes``. Holding the
    representatives' reports only, past ``limit`` rows it raises ``TooManyReports`` naming the
    sizes — before the Spark job and the driver's R2S multiply them. ``hold=False``: the
    classes only (no reports, no limit), for a job that enumerates its reports part by part.
    """
    cands = np.asarray(sorted(set(candidates)), dtype=np.int64)
    limit = max_reports() if limit is None else limit
    per = rows_per_candidate(profile, geom)
    step = max(1, CHUNK_ROWS // per)
    first: dict[bytes, int] = {}
    rep = np.empty(len(cands), dtype=np.int64)
    kept: list[pa.Table] = []
    held = 0
    for lo in range(0, len(cands), step):
        chunk = cands[lo : lo + step]
        table, _ = report_table(profile, geom, chunk.tolist())
        if classes:
            digests = _sequence_digests(geom, table, chunk)
        else:  # every candidate its own class (``singletons``)
            digests = [str(t).encode() for t in chunk.tolist()]
        new = []
        for i, (t, d) in enumerate(zip(chunk.tolist(), digests, strict=True)):
            rep[lo + i] = first.setdefault(d, t)
            if rep[lo + i] == t:
                new.append(t)
        if not hold:
            continue
        part = of_t0s(table, new)
        held += part.num_rows
        if held > limit:
            raise TooManyReports(
                f"the expected output needs more than {limit:,} oracle reports (already "
                f"{len(first):,} t0 classes among {len(cands):,} candidates, up to {per:,} "
                "reports each): not judged, to keep the process's memory bounded",
                expected="a shorter stream, fewer t0 candidates, or RSP_ORACLE_MAX_REPORTS "
                "raised (each million reports costs a few hundred MB of memory)",
            )
        kept.append(part)
    reports = pa.concat_tables(kept) if kept else report_table(profile, geom, [])[0]
    return T0Classes(cands, rep), reports


def _sequence_digests(geom: Geometry, reports: pa.Table, chunk: I64) -> list[bytes]:
    """Per candidate of ``chunk``, the SHA-256 of its reports' content rows in rank order."""
    content = np.ascontiguousarray(_content_columns(geom, reports))
    t0 = reports.column("t0").to_numpy()
    starts = np.searchsorted(t0, chunk, side="left")
    stops = np.searchsorted(t0, chunk, side="right")
    return [
        hashlib.sha256(content[a:b].tobytes()).digest()
        for a, b in zip(starts.tolist(), stops.tolist(), strict=True)
    ]
