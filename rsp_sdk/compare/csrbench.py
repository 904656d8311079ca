"""The CSRBench verdict: is an engine's output a contiguous part of the expected output?

CSRBench (Dell'Aglio et al., ISWC 2013) calls an engine correct on a query iff, for some
candidate t0 (the opening of the first window, which the engine does not let us control), its
output relations equal a contiguous run of the oracle's relations — relations compared as sets,
timestamps ignored. The oracle already shaped the expected output by the engine's profile
(report policy, R2S, empty relations), so the comparison itself is plain sequence matching, with
one profile-dependent allowance:

**Tuple-driven splits.** An engine with a tuple-driven tick (CQELS) processes the triples of one
timestamp one by one; under Istream each triple that completes new answers emits them at once, so
one expected relation may arrive as several consecutive relations at sub-timestamp system times.
We accept exactly that — consecutive, non-empty, pairwise disjoint relations whose union is the
expected relation — and nothing looser (no reordering across expected relations, no repeated or
foreign bindings, no empty relation inside a split, no incomplete split at the end).

When no t0 fits, the verdict reports the candidate that matched longest and where it diverged:
the first diverging actual relation, the expected relation it was held against, and the missing
and extra bindings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from rsp_sdk.compare.relations import BindingKey, Relation, RelationStream
from rsp_sdk.model.profile import R2S, Profile, Tick


class Divergence(BaseModel):
    """Where the best candidate's match broke down."""

    t0_ms: int
    start_seq: int | None = Field(
        description="seq of the expected relation the matched run starts at (None: no start)"
    )
    matched_relations: int = Field(description="actual relations matched before the divergence")
    reason: str
    actual_index: int = Field(description="0-based position of the diverging actual relation")
    actual_seq: int
    actual_t_app_ms: int | None
    actual_t_sys_ns: int | None
    expected_seq: int | None
    expected_t_app_ms: int | None
    expected_window_open_ms: int | None
    expected_window_close_ms: int | None
    missing: list[dict[str, Any]] = Field(description="expected bindings the engine did not emit")
    extra: list[dict[str, Any]] = Field(description="emitted bindings that were not expected")


class CsrbenchVerdict(BaseModel):
    """Outcome of the CSRBench check for one query."""

    query: str
    correct: bool
    t0: int | None = Field(description="the matching t0 in ms (None when no candidate matches)")
    start_seq: int | None = Field(
        default=None, description="seq of the first expected relation of the matched run"
    )
    actual_relations: int
    matched_relations: int
    split_relations: int = Field(
        default=0, description="expected relations the engine emitted as tuple-driven splits"
    )
    t0_ranges: list[tuple[int, int]] = Field(
        default_factory=list,
        description="runs [first, last] of consecutive candidates whose expected relations equal "
        "the matching t0's (timestamps ignored, as the verdict ignores them): the output is "
        "correct for every t0 in them",
    )
    candidates: list[int] = Field(description="candidate t0 values tried, ascending")
    splits_allowed: bool
    divergence: Divergence | None = None
    notes: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class _Run:
    """One attempt: expected relations from ``start`` against the whole actual output."""

    t0: int
    start: int | None
    matched: int  # actual relations consumed by complete groups
    splits: int
    ok: bool
    # failure details
    actual_index: int = 0
    expected_index: int | None = None
    missing: frozenset[BindingKey] = frozenset()
    extra: frozenset[BindingKey] = frozenset()
    reason: str = ""

    @property
    def diff_size(self) -> int:
        return len(self.missing) + len(self.extra)


def splits_allowed(profile: Profile, r2s: R2S) -> bool:
    """Tuple-driven Istream engines may split one expected relation (see module docstring)."""
    return profile.tick is Tick.TUPLE_DRIVEN and r2s is R2S.ISTREAM


def _attempt(
    t0: int,
    expected: list[Relation],
    actual: list[Relation],
    start: int,
    allow_split: bool,
) -> _Run:
    i, j, splits = start, 0, 0

    def fail(
        at: int,
        exp: int | None,
        missing: frozenset[BindingKey],
        extra: frozenset[BindingKey],
        reason: str,
    ) -> _Run:
        return _Run(t0, start, j, splits, False, at, exp, missing, extra, reason)

    while j < len(actual):
        a = actual[j].keys
        if i >= len(expected):
            return fail(j, None, frozenset(), a, "expected output ended")
        e = expected[i].keys
        if a == e:
            i, j = i + 1, j + 1
            continue
        if not (allow_split and a and a < e):
            return fail(j, i, e - a, a - e, "relation differs")
        # A tuple-driven split: consecutive disjoint non-empty parts whose union is e.
        acc, k = set(a), j + 1
        while acc != e:
            remaining = frozenset(e - acc)
            if k >= len(actual):
                return fail(k - 1, i, remaining, frozenset(), "output ended inside a split")
            b = actual[k].keys
            if not b:
                return fail(k, i, remaining, frozenset(), "empty relation inside a split")
            if not b <= remaining:
                return fail(k, i, remaining - b, b - remaining, "split part differs")
            acc |= b
            k += 1
        splits += 1
        i, j = i + 1, k
    return _Run(t0, start, j, splits, True)


def _candidate_starts(expected: list[Relation], first: Relation, allow_split: bool) -> list[int]:
    """Where the match may start: an expected relation equal to the first output, or holding
    it as a split's first part. Either way it holds one given binding of it, a test that
    spares building the set of every expected relation of every candidate (an eager engine's
    thousands per candidate: 38 of 138 s judging CQELS's YABench E3 at 200 stations)."""
    a = first.keys
    if not a:
        return [s for s, e in enumerate(expected) if not e.rows]
    probe = next(iter(a))
    return [
        s
        for s, e in enumerate(expected)
        if probe in e.rows and (e.keys == a or (allow_split and a < e.keys))
    ]


def any_start(
    expected: Mapping[int, RelationStream], actual: RelationStream, allow_split: bool
) -> bool:
    """Whether some candidate has an expected relation the (non-empty) output may start at:
    where none has, ``verdict``'s failure matched no relation at all."""
    first = actual.relations[0]
    return any(_candidate_starts(s.relations, first, allow_split) for s in expected.values())


def _best_failure(t0: int, expected: list[Relation], actual: list[Relation]) -> _Run:
    """No expected relation can start the match: report the closest one to the first output."""
    a = actual[0].keys
    if not expected:
        return _Run(t0, None, 0, 0, False, 0, None, frozenset(), a, "expected output is empty")
    # sizes first, one failure built: a _Run per relation was half of the search's time
    sizes = [len(a.symmetric_difference(e.rows)) for e in expected]
    s = sizes.index(min(sizes))  # the first of the closest
    e = expected[s].keys
    return _Run(t0, None, 0, 0, False, 0, s, e - a, a - e, "no relation matches")


def _rank(run: _Run) -> tuple[int, int]:
    """A failure's plausibility: the most actual relations matched, then the fewest differing
    bindings."""
    return (run.matched, -run.diff_size)


def _most_plausible(
    best: tuple[_Run, int] | None,
    no_start: list[int],
    candidates: list[int],
    expected: Mapping[int, RelationStream],
    actual: list[Relation],
) -> _Run:
    """The failure to report: the highest ``_rank``, the earliest candidate on a tie. ``best``
    is the best attempt and its candidate's position; a candidate with no start (positions
    ``no_start``) stands for its ``_best_failure``, which matched nothing and is built only
    when no attempt matched anything: it compares the first output with every expected
    relation of the candidate, and most candidates of an eager engine have no start (CQELS's
    YABench E3 at 200 stations: 49 of its 140 s of judging)."""
    if best is not None and best[0].matched > 0:
        return best[0]
    for i in no_start:
        run = _best_failure(candidates[i], expected[candidates[i]].relations, actual)
        if best is None or (_rank(run), -i) > (_rank(best[0]), -best[1]):
            best = (run, i)
    assert best is not None
    return best[0]


def _trivial(
    expected: Mapping[int, RelationStream], actual: RelationStream, allow_split: bool
) -> CsrbenchVerdict:
    """An empty output, or an expected output with no relation at all.

    CSRBench's rule accepts the empty sequence as a contiguous part of any expected output; we
    do not: an engine that emitted nothing is correct only where the oracle expects nothing
    (no relation, not even an empty one, for any candidate t0). Otherwise a crashed or silent
    engine would pass every check (``rsp_sdk.compare.judge`` calls this "no output").
    """
    candidates = sorted(expected)
    rels = actual.relations
    expected_count = max((len(s.relations) for s in expected.values()), default=0)
    query = actual.query or (expected[candidates[0]].query if candidates else "")
    if not rels:
        return silent_verdict(query, candidates, expected_count, allow_split)
    base = {
        "query": query,
        "actual_relations": len(rels),
        "matched_relations": 0,
        "candidates": candidates,
        "splits_allowed": allow_split,
    }
    first = rels[0]
    divergence = Divergence(
        t0_ms=0,
        start_seq=None,
        matched_relations=0,
        reason="expected output is empty",
        actual_index=0,
        actual_seq=first.seq,
        actual_t_app_ms=first.t_app_ms,
        actual_t_sys_ns=first.t_sys_ns,
        expected_seq=None,
        expected_t_app_ms=None,
        expected_window_open_ms=None,
        expected_window_close_ms=None,
        missing=[],
        extra=actual.show(first.keys),
    )
    note = "the oracle expects no relation for any t0, the engine emitted some"
    return CsrbenchVerdict(**base, correct=False, t0=None, divergence=divergence, notes=[note])


def silent_verdict(
    query: str, candidates: list[int], expected_count: int, allow_split: bool
) -> CsrbenchVerdict:
    """The verdict on an empty output: it needs only the most relations a candidate expects
    (``_trivial``), so a caller can count them without grouping the expected bindings."""
    base = {
        "query": query,
        "actual_relations": 0,
        "matched_relations": 0,
        "candidates": candidates,
        "splits_allowed": allow_split,
    }
    if expected_count == 0:
        note = "the engine emitted nothing and the oracle expects no relation"
        return CsrbenchVerdict(**base, correct=True, t0=None, notes=[note])
    note = (
        f"the engine emitted nothing where the oracle expects up to {expected_count} "
        "relation(s): no output"
    )
    return CsrbenchVerdict(**base, correct=False, t0=None, notes=[note])


def same_expectation(expected: Mapping[int, RelationStream], t0: int) -> list[tuple[int, int]]:
    """Runs [first, last] of consecutive candidates expecting what ``t0`` expects.

    Candidates whose windows cut the data between the same timestamps (a class of the oracle's
    t0 candidates) expect the same relations at other times; a time-blind verdict holds for
    all of them, so it is reported as ranges ("correct for t0 ∈ [1000, 1999]").
    """
    want = expected[t0]
    runs: list[tuple[int, int]] = []
    open_run: list[int] = []
    for t in sorted(expected):
        if expects_the_same(expected[t], want):
            open_run.append(t)
            continue
        if open_run:
            runs.append((open_run[0], open_run[-1]))
            open_run = []
    if open_run:
        runs.append((open_run[0], open_run[-1]))
    return runs


def expects_the_same(stream: RelationStream, other: RelationStream) -> bool:
    """Whether two candidates expect the same relations, timestamps ignored, each compared as
    a bag. The counts and sizes of the relations are compared first and a bag is built only
    where they agree: building every bag of every candidate took YABench's E1 at 1,000
    stations (3,201 classes) 20 of its 44 s of judging, when most candidates differ in the
    size of their first relation."""
    mine, theirs = stream.relations, other.relations
    return (
        len(mine) == len(theirs)
        and all(a.size == b.size for a, b in zip(mine, theirs, strict=True))
        and all(a.bag == b.bag for a, b in zip(mine, theirs, strict=True))
    )


def over_classes(
    v: CsrbenchVerdict,
    expected: Mapping[int, RelationStream],
    representative_of: Mapping[int, int],
) -> CsrbenchVerdict:
    """``v``, judged on the oracle's class representatives only, stated for every candidate.

    The oracle's t0 classes (``rsp_sdk.oracle.s2r.T0Classes``) expect the same relations, so a
    time-blind verdict over the representatives (each the smallest member of its class) is the
    verdict over all candidates: the first matching candidate is a representative. What changes
    is the candidates tried and the t0 ranges where the verdict holds: every member of every
    representative expecting what the matching one expects.
    """
    # as the full table: a candidate expecting no row at all is not one the verdict tried
    candidates = [t for t in sorted(representative_of) if representative_of[t] in expected]
    if v.t0 is None:
        return v.model_copy(update={"candidates": candidates})
    same = {a for lo, hi in same_expectation(expected, v.t0) for a in expected if lo <= a <= hi}
    runs = member_ranges(candidates, representative_of, same)
    return v.model_copy(update={"candidates": candidates, "t0_ranges": runs})


def member_ranges(
    candidates: Sequence[int], representative_of: Mapping[int, int], same: Set[int]
) -> list[tuple[int, int]]:
    """Runs [first, last] of consecutive ``candidates`` whose representative is in ``same``."""
    runs: list[tuple[int, int]] = []
    previous_in = False
    for t in candidates:
        inside = representative_of[t] in same
        if inside and previous_in:
            runs[-1] = (runs[-1][0], t)
        elif inside:
            runs.append((t, t))
        previous_in = inside
    return runs


def t0_set_text(ranges: Sequence[tuple[int, int]]) -> str:
    """``[1000, 1999] ∪ {3000}``: the candidates where a time-blind verdict holds."""
    return " ∪ ".join(f"{{{a}}}" if a == b else f"[{a}, {b}]" for a, b in ranges)


def t0_ranges_text(ranges: Sequence[tuple[int, int]]) -> str:
    """``t0 ∈ [1000, 1999] ∪ {3000} ms``."""
    return f"t0 ∈ {t0_set_text(ranges)} ms"


def verdict(
    expected: Mapping[int, RelationStream],
    actual: RelationStream,
    *,
    allow_split: bool,
) -> CsrbenchVerdict:
    """Judge ``actual`` against the expected relation streams of every candidate t0.

    Candidates are tried in ascending t0 and, within one, from the earliest start; the first
    full match wins (CSRBench stops at the first matching t0 too).
    """
    candidates = sorted(expected)
    notes: list[str] = []
    rels = actual.relations
    if not rels or not candidates:
        return _trivial(expected, actual, allow_split)
    best: tuple[_Run, int] | None = None  # only the best attempt is kept: a failure holds sets
    no_start: list[int] = []
    for i, t0 in enumerate(candidates):
        exp = expected[t0].relations
        starts = _candidate_starts(exp, rels[0], allow_split)
        runs = [_attempt(t0, exp, rels, s, allow_split) for s in starts]
        if not runs:
            no_start.append(i)
        for run in runs:
            if run.ok:
                return CsrbenchVerdict(
                    query=actual.query or expected[t0].query,
                    correct=True,
                    t0=t0,
                    t0_ranges=same_expectation(expected, t0),
                    start_seq=exp[run.start].seq if run.start is not None else None,
                    actual_relations=len(rels),
                    matched_relations=run.matched,
                    split_relations=run.splits,
                    candidates=candidates,
                    splits_allowed=allow_split,
                    notes=notes,
                )
            if best is None or _rank(run) > _rank(best[0]):
                best = (run, i)
    failure = _most_plausible(best, no_start, candidates, expected, rels)
    exp_stream = expected[failure.t0]
    exp_rel = (
        exp_stream.relations[failure.expected_index] if failure.expected_index is not None else None
    )
    act_rel = rels[failure.actual_index]
    # show each binding as its own side wrote it
    as_expected = RelationStream(actual.query, [], {**actual.labels, **exp_stream.labels})
    as_emitted = RelationStream(actual.query, [], {**exp_stream.labels, **actual.labels})
    divergence = Divergence(
        t0_ms=failure.t0,
        start_seq=exp_stream.relations[failure.start].seq if failure.start is not None else None,
        matched_relations=failure.matched,
        reason=failure.reason,
        actual_index=failure.actual_index,
        actual_seq=act_rel.seq,
        actual_t_app_ms=act_rel.t_app_ms,
        actual_t_sys_ns=act_rel.t_sys_ns,
        expected_seq=exp_rel.seq if exp_rel else None,
        expected_t_app_ms=exp_rel.t_app_ms if exp_rel else None,
        expected_window_open_ms=exp_rel.window_open_ms if exp_rel else None,
        expected_window_close_ms=exp_rel.window_close_ms if exp_rel else None,
        missing=as_expected.show(failure.missing),
        extra=as_emitted.show(failure.extra),
    )
    return CsrbenchVerdict(
        query=actual.query or exp_stream.query,
        correct=False,
        t0=None,
        actual_relations=len(rels),
        matched_relations=failure.matched,
        split_relations=failure.splits,
        candidates=candidates,
        splits_allowed=allow_split,
        divergence=divergence,
        notes=notes,
    )
