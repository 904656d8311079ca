"""An expected output too large to hold, computed and judged in parts of whole t0 classes.

YABench's E3 join at 500 stations expects ~41 M bindings under rsp-js's profile: collected at
once they killed the oracle's JVM. ``OracleJob.run_class_parts`` computes them a few classes at
a time, the matrix writes each part as a row group, and ``judge_parts`` judges them one at a
time. The claim: the parts are ``run_classes``'s table cut between classes, and the verdict
over them (t0, t0 ranges across parts, candidates, divergence, no output) is ``judge_run``'s
over the whole table. Parts are forced here with one class each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rsp_sdk.compare import parts as parts_module
from rsp_sdk.compare.check import check_run
from rsp_sdk.compare.judge import judge_each, judge_run
from rsp_sdk.compare.parts import ExpectedTable, judge_parts, judge_parts_each, write_parts
from rsp_sdk.compare.vocab import Metrics
from rsp_sdk.model.profile import R2S, ReportPolicy, T0Policy, Tick
from rsp_sdk.oracle import job as oracle_job
from rsp_sdk.oracle import plan_job, s2r
from rsp_sdk.query import parse_rspql
from tests.compare_tables import EX, expected_table, result_table, s
from tests.oracle_support import profile, query, rooms, spark
from tests.test_oracle_reference import canonical

__all__ = ["spark"]

SIX = "0: m1@r1; 300: m2@r2; 700: m3@r1; 1200: m4@r2; 1500: m5@r1; 1900: m6@r3"
PROFILE = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=10, span="window"))
# every detection, and r1's only: in both, classes that see different contents expect the same
# relations, so a match's t0 ranges span several parts
QUERIES = {
    "all": query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT1S", r2s="ISTREAM"),
    "r1": query("?m", '?m ex:detectedAt ?r FILTER(STRENDS(STR(?r), "r1"))', "PT2S", "PT1S"),
}


@pytest.fixture
def one_class_a_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split every job, a class per part (the budget of one report takes one class)."""
    monkeypatch.setattr(oracle_job, "SPLIT_REPORTS", 0)
    monkeypatch.setattr(oracle_job, "FIRST_PART_REPORTS", 1)
    monkeypatch.setenv("RSP_ORACLE_PART_ROWS", "1")


def _answer_of(table: pa.Table, t0: int) -> pa.Table:
    """The expected relations of candidate ``t0`` as an engine's answer."""
    by_seq: dict[int, list[Any]] = {}
    for row in table.filter(pc.equal(table.column("t0_ms"), t0)).to_pylist():
        rel = by_seq.setdefault(row["seq"], [])
        if row["binding"] is not None:
            rel.append(json.loads(row["binding"]))
    return result_table([by_seq[k] for k in sorted(by_seq)])


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_parts_are_the_class_table_cut_between_classes_and_judge_as_it(
    spark: Any, one_class_a_part: None, tmp_path: Path, name: str
) -> None:
    spec = parse_rspql(QUERIES[name])
    stream = rooms(SIX)
    whole, classes = plan_job(stream, spec, PROFILE, spark=spark).run_classes()
    job = plan_job(stream, spec, PROFILE, spark=spark)
    path = tmp_path / "expected.parquet"
    write_parts(path, job.run_class_parts())
    table = ExpectedTable(path)
    parts = list(table.parts())
    t0s = [sorted(set(p.column("t0_ms").to_pylist())) for p in parts]
    # one class a part, ascending, and together the whole table (a class without reports,
    # whose windows all lie past the data, has no rows in either)
    expecting = sorted(set(whole.column("t0_ms").to_pylist()))
    assert table.in_parts and len(parts) == len(expecting) > 3
    assert all(len(t) == 1 for t in t0s) and [t[0] for t in t0s] == expecting
    assert canonical(pa.concat_tables(parts)) == canonical(whole)
    rep_of = dict(zip(classes.candidates.tolist(), classes.representative.tolist(), strict=True))
    member = next(t for t, r in sorted(rep_of.items()) if t != r and r > 0)
    answers = {
        "right": _answer_of(whole, rep_of[member]),
        "wrong": result_table([s("nobody")], query="q"),
        "silent": result_table([], query="q"),
    }
    for label, answer in answers.items():
        want = judge_run(whole, answer, PROFILE, R2S.ISTREAM, representative_of=rep_of)
        have = judge_parts(
            table, answer, PROFILE, R2S.ISTREAM, query=None, representative_of=rep_of
        )
        assert have.model_dump(mode="json") == want.model_dump(mode="json"), label
        assert have.state.value == {"right": "correct", "wrong": "incorrect"}.get(
            label, "no output"
        )
    right = judge_parts(
        table, answers["right"], PROFILE, R2S.ISTREAM, query=None, representative_of=rep_of
    )
    spanned = {rep_of[t] for a, b in right.verdict.t0_ranges for t in rep_of if a <= t <= b}
    assert len(spanned) > 1  # the match's ranges reach classes of later parts
    assert any(a <= member <= b for a, b in right.verdict.t0_ranges)
    # simultaneous instances of the query in one output (CityBench's concurrency axis), judged
    # together on parts grouped once and on the whole table: each as judged alone
    other = next(t for t in sorted(set(rep_of.values())) if t != rep_of[member])
    named = {
        "q_1": _answer_of(whole, rep_of[member]),
        "q_2": result_table([s("nobody")]),
        "q_3": _answer_of(whole, other),
    }
    one_output = pa.concat_tables(
        t.set_column(0, "query", pa.array([q] * t.num_rows)) for q, t in named.items()
    )
    alone = {
        q: judge_run(whole, one_output, PROFILE, R2S.ISTREAM, query=q, representative_of=rep_of)
        for q in named
    }
    together = [
        judge_parts_each(
            table,
            one_output,
            PROFILE,
            R2S.ISTREAM,
            queries=list(named),
            representative_of=rep_of,
        ),
        judge_each(
            whole, one_output, PROFILE, R2S.ISTREAM, queries=list(named), representative_of=rep_of
        ),
    ]
    for judged in together:
        assert {q: r.model_dump(mode="json") for q, r in judged.items()} == {
            q: r.model_dump(mode="json") for q, r in alone.items()
        }
    assert [alone[q].state.value for q in named] == ["correct", "incorrect", "correct"]


def test_a_small_job_is_one_part_written_as_before(spark: Any, tmp_path: Path) -> None:
    """Below ``SPLIT_REPORTS`` reports: one Spark job, one unmarked Parquet file."""
    spec = parse_rspql(QUERIES["all"])
    whole, _ = plan_job(rooms(SIX), spec, PROFILE, spark=spark).run_classes()
    path = tmp_path / "expected.parquet"
    write_parts(path, plan_job(rooms(SIX), spec, PROFILE, spark=spark).run_class_parts())
    table = ExpectedTable(path)
    assert not table.in_parts and pq.ParquetFile(path).metadata.num_row_groups == 1
    assert [canonical(p) for p in table.parts()] == [canonical(whole)] and whole.num_rows > 0


@pytest.mark.parametrize("metrics", [Metrics.CSRBENCH, Metrics.YABENCH])
def test_rsp_oracle_check_in_parts_gives_the_whole_tables_result(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: Metrics
) -> None:
    """``check_run`` (``rsp oracle check``) judges a split expected output as the matrix does:
    the same verdict and YABench windows as from the whole table, right and wrong answers."""
    spec = parse_rspql(QUERIES["r1"])
    whole, classes = plan_job(rooms(SIX), spec, PROFILE, spark=spark).run_classes()
    rep = classes.representatives[1]
    wrong = result_table([s("nobody")], query="q")
    for label, answer in (("right", _answer_of(whole, rep)), ("wrong", wrong)):
        path = tmp_path / f"{label}.parquet"
        pq.write_table(answer, path)
        with monkeypatch.context() as split:
            split.setattr(oracle_job, "SPLIT_REPORTS", 0)
            split.setattr(oracle_job, "FIRST_PART_REPORTS", 1)
            split.setenv("RSP_ORACLE_PART_ROWS", "1")
            have = check_run(path, rooms(SIX), spec, profile=PROFILE, metrics=metrics)
        want = check_run(path, rooms(SIX), spec, profile=PROFILE, metrics=metrics)
        assert have.model_dump(mode="json") == want.model_dump(mode="json"), label
        assert have.correct is (label == "right")
        assert (have.yabench is not None) is (metrics is Metrics.YABENCH)


def test_parts_none_of_which_expects_a_row_judge_as_the_whole_table(
    spark: Any, one_class_a_part: None, tmp_path: Path
) -> None:
    """A filter nothing passes, under a profile that suppresses empty relations: every part
    is empty (CityBench Q12 under CQELS's profile at ten instances). Silence is then correct
    and any answer incorrect, as ``judge_run`` says of the whole (empty) table — no crash."""
    quiet = profile(ReportPolicy.WINDOW_CLOSE, t0=T0Policy(step_ms=10, span="window"), empty=False)
    spec = parse_rspql(
        query("?m", '?m ex:detectedAt ?r FILTER(STRENDS(STR(?r), "r9"))', "PT2S", "PT1S")
    )
    whole, classes = plan_job(rooms(SIX), spec, quiet, spark=spark).run_classes()
    path = tmp_path / "expected.parquet"
    write_parts(path, plan_job(rooms(SIX), spec, quiet, spark=spark).run_class_parts())
    table = ExpectedTable(path)
    assert whole.num_rows == 0 and all(p.num_rows == 0 for p in table.parts())
    rep_of = dict(zip(classes.candidates.tolist(), classes.representative.tolist(), strict=True))
    answers = {"silent": result_table([], query="q"), "wrong": result_table([s("m1")], query="q")}
    for label, answer in answers.items():
        want = judge_run(whole, answer, quiet, R2S.RSTREAM, representative_of=rep_of)
        have = judge_parts(table, answer, quiet, R2S.RSTREAM, query=None, representative_of=rep_of)
        assert have.model_dump(mode="json") == want.model_dump(mode="json"), label
        assert have.correct is (label == "silent")
    # YABench's per-window metrics too, through `rsp oracle check`'s path, split and whole:
    # no window is expected, so an engine's relation is an unexpected one (precision 0)
    for label, answer in answers.items():
        answer_path = tmp_path / f"{label}.parquet"
        pq.write_table(answer, answer_path)
        with pytest.MonkeyPatch.context() as whole_job:
            whole_job.setattr(oracle_job, "SPLIT_REPORTS", 10**9)
            single = check_run(
                answer_path, rooms(SIX), spec, profile=quiet, metrics=Metrics.YABENCH
            )
        split = check_run(answer_path, rooms(SIX), spec, profile=quiet, metrics=Metrics.YABENCH)
        assert split.model_dump(mode="json") == single.model_dump(mode="json"), label
        assert split.yabench is not None and split.correct is (label == "silent")
        assert split.yabench.unexpected_relations == (label == "wrong")
        assert split.yabench.mean_precision == (0.0 if label == "wrong" else None)


EAGER = profile(
    ReportPolicy.CONTENT_CHANGE,
    tick=Tick.TUPLE_DRIVEN,
    t0=T0Policy(step_ms=10, span="window"),
    empty=False,
)


@pytest.mark.parametrize("prof", [PROFILE, EAGER], ids=["window-close", "eager"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_job_past_the_report_limit_enumerates_each_parts_reports(
    spark: Any, monkeypatch: pytest.MonkeyPatch, prof: Any, name: str
) -> None:
    """More representative reports than a process may hold (``RSP_ORACLE_MAX_REPORTS``), but
    no class past it alone, with ``RSP_ORACLE_ENUMERATE=1``: the job plans its classes only,
    refuses the one-table paths and computes ``run_class_parts`` with each part's reports
    enumerated for it — the same rows as the whole table computed without a limit. One class
    past the limit is refused; without the switch, the job is refused as before."""
    spec = parse_rspql(QUERIES[name])
    free = plan_job(rooms(SIX), spec, prof, spark=spark)
    whole, classes = free.run_classes()
    per = s2r.rows_per_candidate(prof, free.geom)
    held = free.reports.num_rows
    assert per < held  # a limit between them exists: one class fits, all of them do not
    monkeypatch.setenv("RSP_ORACLE_MAX_REPORTS", str(per))
    with pytest.raises(s2r.TooManyReports):
        plan_job(rooms(SIX), spec, prof, spark=spark)
    monkeypatch.setenv("RSP_ORACLE_ENUMERATE", "1")
    job = plan_job(rooms(SIX), spec, prof, spark=spark)
    assert job.classes.representative.tolist() == classes.representative.tolist()
    with pytest.raises(s2r.TooManyReports):
        job.run_classes()
    parts = list(job.run_class_parts())
    assert len(parts) > 1
    assert canonical(pa.concat_tables(parts)) == canonical(whole)
    monkeypatch.setenv("RSP_ORACLE_MAX_REPORTS", str(per - 1))
    with pytest.raises(s2r.TooManyReports):
        plan_job(rooms(SIX), spec, prof, spark=spark)


#: an expected table worked out by hand, one part per candidate t0: t0 → its windows
HAND_MADE = {
    0: [(0, 10, s("a")), (10, 20, s("z"))],
    10: [(10, 20, s("x")), (20, 30, s("y"))],
    20: [(20, 30, s("a")), (30, 40, s("b")), (40, 50, s("c"))],
}


def _three_parts(tmp_path: Path) -> ExpectedTable:
    """``HAND_MADE`` written as an expected table in three parts."""
    path = tmp_path / "expected.parquet"
    write_parts(path, (expected_table({t0: rels}) for t0, rels in HAND_MADE.items()))
    return ExpectedTable(path)


def test_a_failure_that_matched_outranks_later_parts_the_output_cannot_start_in(
    tmp_path: Path,
) -> None:
    """Parts after the best failure so far where the output starts nowhere are not judged in
    full (``_PartsJudge._outranked``), and a verdict builds its no-start failures only when no
    attempt matched a relation. Worked out by hand: the output [a], [b], [d] follows t0 = 0's
    [a], [z] for 1 relation; t0 = 10 ([x], [y]) cannot start it; t0 = 20's [a], [b], [c],
    in the last part, for 2: the failure to report. Output [q] starts nowhere: the failure is
    the closest relation of the earliest candidate, t0 = 0's [a]."""
    table = _three_parts(tmp_path)
    assert table.in_parts and len(list(table.parts())) == 3
    rep_of = {t0: t0 for t0 in HAND_MADE}
    cases = {
        "follows t0 20": (
            result_table([s("a"), s("b"), s("d")]),
            20,
            2,
            "relation differs",
            "c",
            "d",
        ),
        "starts nowhere": (result_table([s("q")]), 0, 0, "no relation matches", "a", "q"),
    }
    for label, (answer, t0, matched, reason, missing, extra) in cases.items():
        whole = judge_run(table.whole(), answer, PROFILE, R2S.RSTREAM, representative_of=rep_of)
        have = judge_parts(
            table, answer, PROFILE, R2S.RSTREAM, query=None, representative_of=rep_of
        )
        assert have.model_dump(mode="json") == whole.model_dump(mode="json"), label
        d = have.divergence
        assert not have.correct and d is not None, label
        assert (d.t0_ms, d.matched_relations, d.reason) == (t0, matched, reason), label
        assert [m["x"]["value"] for m in d.missing] == [f"{EX}{missing}"], label
        assert [m["x"]["value"] for m in d.extra] == [f"{EX}{extra}"], label


def test_silence_is_judged_by_counting_each_parts_relations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty output's verdict needs the most relations a candidate expects, not which
    bindings: the parts are counted, never grouped (SPARQLstream's silent E3 at 500 stations
    parsed a 1.4 GB table's bindings for it), and the result is the whole table's. By hand:
    t0 = 20 expects the most, 3 relations; candidates 5 and 25 are members of 0's and 20's
    classes."""
    table = _three_parts(tmp_path)
    rep_of = {0: 0, 5: 0, 10: 10, 20: 20, 25: 20}
    silent = result_table([])
    whole = judge_run(table.whole(), silent, PROFILE, R2S.RSTREAM, representative_of=rep_of)

    def grouped(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an empty output's parts were grouped into relations")

    monkeypatch.setattr("rsp_sdk.compare.parts.expected_relations", grouped)
    have = judge_parts(table, silent, PROFILE, R2S.RSTREAM, query=None, representative_of=rep_of)
    assert have.model_dump(mode="json") == whole.model_dump(mode="json")
    assert have.state == "no output" and have.verdict.candidates == [0, 5, 10, 20, 25]
    assert "expects up to 3 relation(s): no output" in " ".join(have.verdict.notes)


def test_after_a_match_later_parts_group_only_the_classes_shaped_like_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the output has matched, a later part matters only for the classes expecting what
    the match expects: a class is read and grouped only when its relations have the match's
    row counts, and a part with none is never read past its t0s and seqs. By hand: the output
    [a], [z] matches t0 = 0 in part 1; part 2's t0 = 10 ([x], [y]) has its shape and is
    grouped (it expects other bindings), t0 = 15 expects the same and joins the t0 ranges;
    part 3's t0 = 20 has three relations and is never read whole."""
    path = tmp_path / "expected.parquet"
    parts = [
        {0: [(0, 10, s("a")), (10, 20, s("z"))]},
        {10: [(10, 20, s("x")), (20, 30, s("y"))], 15: [(15, 25, s("a")), (25, 35, s("z"))]},
        {20: [(20, 30, s("a")), (30, 40, s("b")), (40, 50, s("c"))]},
    ]
    write_parts(path, (expected_table(p) for p in parts))
    table = ExpectedTable(path)
    rep_of = {0: 0, 10: 10, 15: 15, 20: 20}
    answer = result_table([s("a"), s("z")])
    whole = judge_run(table.whole(), answer, PROFILE, R2S.RSTREAM, representative_of=rep_of)
    reads: list[tuple[int, tuple[str, ...] | None]] = []
    grouped: list[list[int]] = []
    read, group = ExpectedTable.read, parts_module.expected_relations

    def reading(self: ExpectedTable, i: int, columns: Any = None) -> pa.Table:
        reads.append((i, None if columns is None else tuple(columns)))
        return read(self, i, columns)

    def grouping(t: pa.Table, **kwargs: Any) -> Any:
        grouped.append(sorted(set(t.column("t0_ms").to_pylist())))
        return group(t, **kwargs)

    monkeypatch.setattr(ExpectedTable, "read", reading)
    monkeypatch.setattr(parts_module, "expected_relations", grouping)
    have = judge_parts(table, answer, PROFILE, R2S.RSTREAM, query=None, representative_of=rep_of)
    assert have.model_dump(mode="json") == whole.model_dump(mode="json")
    assert have.correct and have.verdict.t0 == 0
    assert have.verdict.t0_ranges == [(0, 0), (15, 15)]
    assert grouped == [[0], [10, 15], []]
    assert (2, None) not in reads and (2, ("t0_ms", "seq")) in reads
