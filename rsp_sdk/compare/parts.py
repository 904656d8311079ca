"""An expected output too large to hold: kept on disk and judged one part of whole t0 classes
at a time.

The oracle computes a large expected output in parts (``OracleJob.run_class_parts``): YABench's
E3 join at 500 stations expects ~41 M bindings under rsp-js's profile, 44 parts of ~1 M.
``write_parts`` keeps them as the row groups of one Parquet file (``ExpectedTable`` reads them
back one at a time). Each part holds whole classes, in ascending representative order, so the
verdict over the parts (``judge_parts``) is the verdict over the whole table (``judge_run``
with ``representative_of``):

* candidates are tried in ascending t0 and the first full match wins — the first part with a
  match holds it, because no earlier part had one;
* without a match, the most plausible failure is kept by the same rule as ``verdict``'s (more
  relations matched, then fewer differing bindings, the earlier on a tie);
* the t0 ranges of a match need every class expecting what the matching one expects: those in
  the parts after the match's are found as they are read; none can be in an earlier part, as
  a class expecting the same relations would have matched there first.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rsp_sdk.compare.csrbench import (
    CsrbenchVerdict,
    any_start,
    expects_the_same,
    member_ranges,
    silent_verdict,
    splits_allowed,
    verdict,
)
from rsp_sdk.compare.judge import CheckResult, check_result
from rsp_sdk.compare.relations import RelationStream, expected_relations, result_relations
from rsp_sdk.compare.vocab import Metrics
from rsp_sdk.model.profile import R2S, Profile
from rsp_sdk.util.gcpause import without_gc

# schema metadata of an expected table whose row groups are parts of whole t0 classes
PARTS_KEY = b"rsp-sdk.parts"


def write_parts(path: Path, parts: Iterable[pa.Table]) -> None:
    """The parts as one Parquet file, a row group each (marked ``PARTS_KEY``), so a reader
    holds one part at a time; a single part is written as before, unmarked."""
    it = iter(parts)
    first = next(it)
    second = next(it, None)
    if second is None:
        pq.write_table(first, path)
        return
    schema = first.schema.with_metadata({**(first.schema.metadata or {}), PARTS_KEY: b"1"})
    with pq.ParquetWriter(path, schema) as writer:
        for part in itertools.chain((first, second), it):  # lazily: a part at a time
            writer.write_table(part.cast(schema), row_group_size=max(1, part.num_rows))


@dataclass(frozen=True)
class ExpectedTable:
    """An expected table on disk: read whole, or — when written in parts — a part at a time,
    all of its columns or some (a part's ``t0_ms`` and ``seq`` say which candidates it holds
    and how many rows each relation has, without reading a binding)."""

    path: Path

    @property
    def in_parts(self) -> bool:
        meta = pq.read_schema(self.path).metadata or {}
        return PARTS_KEY in meta

    def whole(self) -> pa.Table:
        return pq.read_table(self.path)

    def count(self) -> int:
        """How many parts (1 for a table not written in parts)."""
        return pq.ParquetFile(self.path).num_row_groups if self.in_parts else 1

    def read(self, i: int, columns: Sequence[str] | None = None) -> pa.Table:
        """Part ``i`` (whole classes, ascending representatives), or the whole table if
        unsplit; ``columns``: only those."""
        cols = list(columns) if columns is not None else None
        if not self.in_parts:
            return pq.read_table(self.path, columns=cols)
        return pq.ParquetFile(self.path).read_row_group(i, columns=cols)

    def parts(self, columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
        """Each part in order (``read``)."""
        for i in range(self.count()):
            yield self.read(i, columns)

    def of_t0(self, t0: int) -> pa.Table:
        """The rows of representative ``t0``, from the part holding it (found by its t0s)."""
        for i in range(self.count()):
            if pc.any(pc.equal(self.read(i, ["t0_ms"]).column("t0_ms"), t0)).as_py():
                part = self.read(i)
                return part.filter(pc.equal(part.column("t0_ms"), t0))
        return pq.read_schema(self.path).empty_table()


def metrics_t0(table: ExpectedTable, verdict: Mapping[str, Any]) -> int:
    """The candidate YABench's per-window metrics are taken against (as ``judge_run`` picks
    it): the matching t0, else the best failure's, else (no output) the smallest expecting
    rows, else 0. ``verdict``: a ``CheckResult`` as JSON."""
    t0 = verdict.get("t0")
    if t0 is None:
        t0 = (verdict.get("divergence") or {}).get("t0_ms")
    if t0 is None:
        t0 = pc.min(table.read(0, ["t0_ms"]).column("t0_ms")).as_py()
    return int(t0 or 0)  # 0: no candidate expects a row (judge_run's choice then)


def judge_in_parts(
    parts: Iterator[pa.Table],
    judge_table: Callable[[pa.Table], CheckResult],
    actual: pa.Table,
    profile: Profile,
    r2s: R2S,
    *,
    query: str | None,
    representative_of: Mapping[int, int],
    metrics: Metrics,
) -> CheckResult:
    """The oracle's ``run_class_parts`` judged: one part by ``judge_table`` (``judge_run`` with
    the caller's options), several kept in a temporary file and judged by ``judge_parts``, the
    YABench metrics (``metrics``) by ``judge_table`` on the one candidate they are taken
    against."""
    first = next(parts)
    second = next(parts, None)
    if second is None:
        return judge_table(first)
    with tempfile.TemporaryDirectory(prefix="rsp-oracle-parts-") as tmp:
        kept = ExpectedTable(Path(tmp) / "expected.parquet")
        write_parts(kept.path, itertools.chain((first, second), parts))
        found = judge_parts(
            kept, actual, profile, r2s, query=query, representative_of=representative_of
        )
        if metrics is not Metrics.YABENCH:
            return found
        chosen = kept.of_t0(metrics_t0(kept, found.model_dump(mode="json")))
        return found.model_copy(update={"yabench": judge_table(chosen).yabench})


def judge_parts(
    parts: ExpectedTable,
    actual: pa.Table,
    profile: Profile,
    r2s: R2S,
    *,
    query: str | None,
    representative_of: Mapping[int, int],
) -> CheckResult:
    """``judge_run(whole, actual, profile, r2s, query=query, representative_of=...)`` where
    ``whole`` is the concatenation of the parts, holding one part's
    relations at a time. CSRBench metrics only: the YABench ones need one candidate's
    relations, which the caller takes from the part holding it (``judge_in_parts``)."""
    return judge_parts_each(
        parts, actual, profile, r2s, queries=[query], representative_of=representative_of
    )[query]


@without_gc
def judge_parts_each(
    parts: ExpectedTable,
    actual: pa.Table,
    profile: Profile,
    r2s: R2S,
    *,
    queries: Sequence[str | None],
    representative_of: Mapping[int, int],
) -> dict[str | None, CheckResult]:
    """``judge_parts`` for each of ``queries`` in one output (the simultaneous instances of a
    query, all expecting the same relations), reading and grouping each part once: CityBench's
    20-instance cells grouped every part 20 times, the blank-node canonicalisation of each
    binding included.

    Once every output has matched, a later part matters only for the classes that expect what
    a match expects (its t0 ranges): only those whose relations have the match's row counts
    are read and grouped. rsp-js's YABench E3 at 500 stations matches in the first of 44 parts,
    whose reading and grouping were then most of its judging."""
    allow = splits_allowed(profile, r2s)
    each = {q: _PartsJudge(result_relations(actual, query=q, source="<answers>")) for q in queries}
    if not any(judge.act.relations for judge in each.values()):
        return _silent(parts, each, representative_of, allow)
    expecting: set[int] = set()
    for i in range(parts.count()):
        shapes = [judge.found[1] for judge in each.values() if judge.found is not None]
        if len(shapes) == len(each):  # every output matched
            keys = parts.read(i, ["t0_ms", "seq"])
            expecting.update(pc.unique(keys.column("t0_ms")).to_pylist())
            table = _shaped_like(parts, i, keys, shapes)
        else:
            table = parts.read(i)
        exp = expected_relations(table, source="<expected>")
        if not exp:
            continue
        expecting.update(exp)
        for judge in each.values():
            judge.see(exp, allow)
    candidates = [t for t in sorted(representative_of) if representative_of[t] in expecting]
    return {q: judge.result(candidates, representative_of, allow) for q, judge in each.items()}


def _shaped_like(
    parts: ExpectedTable, i: int, keys: pa.Table, matched: Sequence[RelationStream]
) -> pa.Table:
    """The rows of part ``i`` of the classes whose relations have the row counts of one of the
    ``matched`` streams (an expected relation of n bindings has n rows, an empty one a row
    with a null binding: every class that expects the same relations is among them); no row
    of the part is read when none has."""
    per = keys.group_by(["t0_ms", "seq"]).aggregate([("seq", "count")])
    per = per.sort_by([("t0_ms", "ascending"), ("seq", "ascending")])
    t0 = per.column("t0_ms").to_numpy()
    rows = per.column("seq_count").to_numpy()
    starts = np.flatnonzero(np.concatenate(([True], t0[1:] != t0[:-1])))
    shapes = {tuple(max(r.size, 1) for r in s.relations) for s in matched}
    wanted = [
        int(t0[lo])
        for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), len(t0)], strict=True)
        if tuple(rows[lo:hi].tolist()) in shapes
    ]
    if not wanted:
        return pq.read_schema(parts.path).empty_table()
    table = parts.read(i)
    return table.filter(pc.is_in(table.column("t0_ms"), pa.array(wanted, pa.int64())))


def _silent(
    parts: ExpectedTable,
    each: Mapping[str | None, _PartsJudge],
    representative_of: Mapping[int, int],
    allow: bool,
) -> dict[str | None, CheckResult]:
    """Every output is empty: its verdict needs how many relations each candidate expects,
    counted per part, not which bindings (SPARQLstream's silent E3 at 500 stations parsed a
    1.4 GB expected table's bindings for 45 s to find it expected some)."""
    most, expecting, query = 0, set[int](), ""
    for table in parts.parts(["query", "t0_ms", "seq"]):  # never a binding
        if not table.num_rows:
            continue
        counts = table.group_by("t0_ms").aggregate([("seq", "count_distinct")])
        expecting.update(counts.column("t0_ms").to_pylist())
        most = max(most, pc.max(counts.column("seq_count_distinct")).as_py())
        query = query or str(table.column("query")[0].as_py())
    if not expecting:  # no part expects a row: judge_run's verdict on an empty expected output
        return {q: check_result(verdict({}, j.act, allow_split=allow)) for q, j in each.items()}
    candidates = [t for t in sorted(representative_of) if representative_of[t] in expecting]
    return {
        q: check_result(silent_verdict(j.act.query or query, candidates, most, allow))
        for q, j in each.items()
    }


@dataclass
class _PartsJudge:
    """One output's judgement over the parts seen so far (``judge_parts``)."""

    act: RelationStream
    found: tuple[CsrbenchVerdict, RelationStream] | None = None  # the match, what it expects
    best: tuple[tuple[int, int], CsrbenchVerdict] | None = None
    same: set[int] = field(default_factory=set)

    def see(self, exp: Mapping[int, RelationStream], allow: bool) -> None:
        """The next part's relations."""
        if self.found is not None:
            self.same.update(_matching(exp, self.found[1]))
            return
        if self._outranked(exp, allow):
            return
        v = verdict(exp, self.act, allow_split=allow)
        if v.correct:
            assert v.t0 is not None
            self.found = (v, exp[v.t0])
            self.same.update(_matching(exp, self.found[1]))
        elif self.best is None or _rank(v, self.act, exp) > self.best[0]:
            self.best = (_rank(v, self.act, exp), v)

    def _outranked(self, exp: Mapping[int, RelationStream], allow: bool) -> bool:
        """No failure in this part can outrank the best so far: that one matched relations and
        here the output cannot start anywhere. Judging such a part in full compares the first
        output with every expected relation of every candidate (an eager engine's parts after
        the best one: most of CQELS's judging on YABench's E3 at 200 stations)."""
        matched = self.best is not None and self.best[0][0] > 0
        return matched and bool(self.act.relations) and not any_start(exp, self.act, allow)

    def result(
        self, candidates: list[int], representative_of: Mapping[int, int], allow: bool
    ) -> CheckResult:
        """The verdict over every part."""
        if self.found is not None:
            runs = member_ranges(candidates, representative_of, self.same)
            v = self.found[0].model_copy(update={"candidates": candidates, "t0_ranges": runs})
        elif self.best is not None:
            v = self.best[1].model_copy(update={"candidates": candidates})
        else:  # no part expects a row: judge_run's verdict on an empty expected output
            v = verdict({}, self.act, allow_split=allow)
        return check_result(v)


def _matching(exp: Mapping[int, RelationStream], found: RelationStream) -> list[int]:
    return [t for t, s in exp.items() if expects_the_same(s, found)]


def _rank(
    v: CsrbenchVerdict, act: RelationStream, exp: Mapping[int, RelationStream]
) -> tuple[int, int]:
    """``verdict``'s order of failures: more relations matched, then fewer differing bindings.
    An empty output's verdicts rank by the most relations a candidate expects (its note
    states that number, which must be the whole table's)."""
    if not act.relations:
        return (max(len(s.relations) for s in exp.values()), 0)
    d = v.divergence
    diff = len(d.missing) + len(d.extra) if d is not None else 0
    return (v.matched_relations, -diff)
