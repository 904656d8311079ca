"""t0 equivalence classes: one evaluation per class of candidates that see equal contents.

The claim the oracle relies on: candidates whose reports see the same window contents, rank by
rank, have the same relations (bindings, ``seq``, scope sizes, empty relations); only report
times and scope bounds differ. Witnessed twice: against the independent reference oracle (its
own t0 and window enumeration, rdflib/pyoxigraph per window; no Spark, so many cases are
cheap), and the Spark oracle's class path against its own per-t0 path (``t0_classes=False``).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings

from rsp_sdk.compare.csrbench import t0_ranges_text, verdict
from rsp_sdk.compare.judge import Metrics, judge_run
from rsp_sdk.compare.relations import expected_relations, result_relations
from rsp_sdk.model.profile import R2S, ReportPolicy, T0Policy
from rsp_sdk.model.stream import STREAM_METADATA_KEY, StreamMeta
from rsp_sdk.oracle import plan_job, s2r
from rsp_sdk.oracle.job import window_masks
from rsp_sdk.query import parse_rspql
from tests.compare_tables import expected_table, result_table, s
from tests.oracle_support import profile, query, rooms, spark
from tests.test_oracle_reference import Case, canonical, cases, diff, reference

__all__ = ["spark"]

NO_STATIC = pa.table({c: pa.array([], pa.string()) for c in ("s", "p", "o")})
SIX = "0: m1@r1; 300: m2@r2; 700: m3@r1; 1200: m4@r2; 1500: m5@r1; 1900: m6@r3"


def classes_of(case: Case) -> s2r.T0Classes:
    """The classes ``plan_job`` would use, computed without Spark."""
    spec, prof, stream = case.spec(), case.profile, case.stream
    meta = StreamMeta.from_bytes((stream.schema.metadata or {})[STREAM_METADATA_KEY])
    times = stream.column("t_app_ms").to_numpy().astype(np.int64)
    geom = s2r.geometry(spec, times, window_masks(spec, stream.column("stream").combine_chunks()))
    t_min = int(times.min()) if len(times) else 0
    cands = s2r.t0_candidates(prof, spec, stream_unit_ms=meta.time_unit_ms, t_min=t_min)
    reports, _ = s2r.report_table(prof, geom, cands)
    return s2r.t0_classes(geom, reports, cands)


def relations_by_t0(table: pa.Table) -> dict[int, list[tuple[Any, ...]]]:
    """t0 → its (seq, size, binding) rows: everything but report times and scope bounds."""
    out: dict[int, list[tuple[Any, ...]]] = {}
    for t0, seq, _t, _o, _c, n, b in canonical(table):
        out.setdefault(t0, []).append((seq, n, b))
    return out


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=cases())
def test_members_of_a_class_have_the_reference_relations_of_its_representative(
    case: Case,
) -> None:
    classes = classes_of(case)
    by_t0 = relations_by_t0(reference(case, "oxigraph"))
    for rep, members in classes.members().items():
        for m in members:
            assert by_t0.get(m, []) == by_t0.get(rep, []), (
                f"t0 {m} is in the class of {rep} but its relations differ\n{case.describe()}"
            )


def test_six_triples_over_2001_candidates_make_few_classes() -> None:
    """Classes are bounded by the distinct timestamps in one slide (here 2 · 6 + 1), not by
    the time unit; members are consecutive candidates between two cuts of the data."""
    text = query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT2S")
    prof = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=1, span="window"))
    stream = rooms(SIX)
    case = Case(text, prof, stream, NO_STATIC)
    classes = classes_of(case)
    assert len(classes.candidates) == 2001
    members = classes.members()
    assert 1 < len(members) <= 2 * stream.num_rows + 1
    # t0 = 0 and t0 = 1 cut the data differently (m1 at 0 leaves the first window)
    assert classes.representative[0] != classes.representative[1]
    # t0 = 1 … 300 see the same contents: m2 at 300 enters the first window at t0 = 301
    assert set(classes.representative[1:301].tolist()) == {1}
    assert classes.representative[301] == 301


def _class_and_per_t0(spark: Any, case: Case) -> tuple[pa.Table, pa.Table]:
    def run(grouped: bool) -> pa.Table:
        job = plan_job(
            case.stream,
            case.spec(),
            case.profile,
            static=[case.static],
            spark=spark,
            t0_classes=grouped,
        )
        return job.run()

    with ThreadPoolExecutor(max_workers=2) as pool:
        grouped, single = pool.submit(run, True), pool.submit(run, False)
        return grouped.result(), single.result()


def test_six_triples_class_path_equals_per_t0_path(spark: Any) -> None:
    """201 candidates (every 10 ms over one window), sliding Istream: 10 classes."""
    text = query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT1S", r2s="ISTREAM")
    prof = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=10, span="window"))
    case = Case(text, prof, rooms(SIX), NO_STATIC)
    assert 1 < len(classes_of(case).members()) < 201 // 10
    grouped, single = _class_and_per_t0(spark, case)
    assert grouped.num_rows > 201  # every candidate has relations, some with bindings
    want, have = canonical(single), canonical(grouped)
    assert want == have, diff(want, have)


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_spark_class_path_equals_per_t0_path(spark: Any, case: Case) -> None:
    grouped, single = _class_and_per_t0(spark, case)
    want, have = canonical(single), canonical(grouped)
    assert want == have, f"{case.describe()}\n" + diff(want, have)


def test_a_verdict_reports_every_t0_expecting_the_same_relations() -> None:
    """ "correct for t0 ∈ [1, 2] ∪ {4}": candidates expecting the matching t0's relations (at
    other times) are named as runs of consecutive candidates; others are left out."""
    same = [s("a"), s("b", "c")]

    def at(t0: int, rels: list[list[Any]]) -> list[tuple[int, int, list[Any]]]:
        return [(t0 + 1000 * i, t0 + 1000 * (i + 1), r) for i, r in enumerate(rels)]

    exp = {0: at(0, [s("x"), s("b")]), 1: at(1, same), 2: at(2, same), 3: at(3, [s("a")])}
    exp[4] = at(4, same)
    v = verdict(
        expected_relations(expected_table(exp)),
        result_relations(result_table([s("a"), s("c", "b")])),
        allow_split=False,
    )
    assert v.correct and v.t0 == 1
    assert v.t0_ranges == [(1, 2), (4, 4)]
    assert t0_ranges_text(v.t0_ranges) == "t0 ∈ [1, 2] ∪ {4} ms"
    wrong = verdict(
        expected_relations(expected_table(exp)),
        result_relations(result_table([s("z")])),
        allow_split=False,
    )
    assert not wrong.correct and wrong.t0_ranges == []


def test_shared_keys_name_existing_keys_with_the_same_contents() -> None:
    """Across classes, a report takes the first key seeing its contents: fewer distinct keys,
    none new, and every report's window contents (triples_in_scope) unchanged."""
    text = query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT1S")
    prof = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=1, span="window"))
    stream = rooms(SIX)
    spec = Case(text, prof, stream, NO_STATIC).spec()
    times = stream.column("t_app_ms").to_numpy().astype(np.int64)
    geom = s2r.geometry(spec, times, window_masks(spec, stream.column("stream").combine_chunks()))
    reports, _ = s2r.report_table(prof, geom, list(range(0, 2001)))
    shared = s2r.shared_keys(geom, reports)

    def keys(t: pa.Table) -> set[tuple[int, int, int]]:
        cols = [t.column(c).to_pylist() for c in ("kc", "kb", "kr")]
        return set(zip(*cols, strict=True))

    assert keys(shared) < keys(reports)
    assert len(keys(shared)) <= 2 * stream.num_rows + 2
    before = s2r.triples_in_scope(geom, *(reports.column(c).to_numpy() for c in ("kc", "kb", "kr")))
    after = s2r.triples_in_scope(geom, *(shared.column(c).to_numpy() for c in ("kc", "kb", "kr")))
    assert (before == after).all() and (after == reports.column("n").to_numpy()).all()


def _answer_of(table: pa.Table, t0: int) -> pa.Table:
    """The oracle's expected relations of candidate ``t0`` as an engine's answer."""
    rows = table.filter(pc.equal(table.column("t0_ms"), t0)).to_pylist()
    by_seq: dict[int, list[Any]] = {}
    for row in rows:
        rel = by_seq.setdefault(row["seq"], [])
        if row["binding"] is not None:
            rel.append(json.loads(row["binding"]))
    return result_table([by_seq[k] for k in sorted(by_seq)])


def test_judging_on_class_representatives_equals_judging_on_every_candidate(spark: Any) -> None:
    """The matrix keeps only the representatives' rows (the full table is rows × class size:
    18 GB on a 10 k-triple YABench join) and judges with ``representative_of``: verdict, t0,
    the t0 ranges, candidates, divergence and YABench window metrics must be what the full
    table gives, for an answer matching a non-representative member and a wrong one."""
    text = query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT1S", r2s="ISTREAM")
    prof = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=10, span="window"))
    stream = rooms(SIX)
    full = plan_job(stream, parse_rspql(text), prof, spark=spark).run()
    reps, classes = plan_job(stream, parse_rspql(text), prof, spark=spark).run_classes()
    assert reps.num_rows < full.num_rows
    rep_of = dict(zip(classes.candidates.tolist(), classes.representative.tolist(), strict=True))
    member = next(t for t, r in rep_of.items() if t != r and r > 0)
    wrong = result_table([s("nobody")], query="q")
    judged = []
    for answer in (_answer_of(full, member), wrong):
        times = stream.column("t_app_ms").to_pylist()
        want, have = (
            judge_run(
                table,
                answer,
                prof,
                R2S.ISTREAM,
                metrics=Metrics.YABENCH,
                event_times=times,
                representative_of=mapping,
            ).model_dump(mode="json")
            for table, mapping in ((full, None), (reps, rep_of))
        )
        assert have == want
        judged.append(have)
    right, bad = judged
    assert right["correct"] and any(a <= member <= b for a, b in right["verdict"]["t0_ranges"])
    assert right["yabench"]["windows"]
    assert not bad["correct"] and bad["verdict"]["divergence"]
    assert right["verdict"]["candidates"] == sorted(set(full.column("t0_ms").to_pylist()))
