"""The CSRBench verdict on hand-built expected/actual outputs (verdicts derived by hand)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_sdk.compare.csrbench import splits_allowed, verdict
from rsp_sdk.compare.relations import expected_relations, result_relations
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
from tests.compare_tables import b, expected_table, num, result_table, s

CQELS_LIKE = Profile(
    name="cqels-like",
    report=frozenset({ReportPolicy.CONTENT_CHANGE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TUPLE_DRIVEN,
    r2s=R2S.ISTREAM,
    emits_empty_relations=False,
    time_unit_ms=100,
)
CSPARQL_LIKE = Profile(
    name="csparql-like",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TIME_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=True,
)


def judge(expected_by_t0, actual_relations, *, split: bool = False):  # type: ignore[no-untyped-def]
    exp = expected_relations(expected_table(expected_by_t0))
    act = result_relations(result_table(actual_relations))
    return verdict(exp, act, allow_split=split)


def tumbling(*relations: list) -> list[tuple[int, int, list]]:  # type: ignore[type-arg]
    return [(1000 * i, 1000 * (i + 1), rel) for i, rel in enumerate(relations)]


# --- the published oracle's own test cases (StreamProcessorOutputTest) ---------------------


def _relation_from_properties(path: Path) -> list[dict[str, dict[str, str]]]:
    sensors = [
        line.split("=", 1)[1].strip()
        for line in path.read_text().splitlines()
        if line.startswith("sensor=")
    ]
    return [{"sensor": {"type": "uri", "value": v}} for v in sensors]


@pytest.fixture()
def rel18_19_20(shared_data: Path) -> list[list[dict[str, dict[str, str]]]]:
    root = shared_data / "dellaglio+csrbench-oracle/src/test/resources"
    return [
        _relation_from_properties(root / f"timestampedrelation{n}.properties") for n in (18, 19, 20)
    ]


def test_published_cases_a_result_contains_itself(rel18_19_20: list) -> None:  # type: ignore[type-arg]
    r18, r19, r20 = rel18_19_20
    v = judge({0: tumbling(r18, r19, r20)}, [r18, r19, r20])
    assert v.correct and v.t0 == 0 and v.start_seq == 0 and v.matched_relations == 3


def test_published_cases_subsequences_in_head_and_tail(rel18_19_20: list) -> None:  # type: ignore[type-arg]
    r18, r19, r20 = rel18_19_20
    head = judge({0: tumbling(r18, r19, r20)}, [r18, r19])
    assert head.correct and head.start_seq == 0
    tail = judge({0: tumbling(r18, r19, r20)}, [r19, r20])
    assert tail.correct and tail.start_seq == 1


def test_published_cases_different_order_is_wrong(rel18_19_20: list) -> None:  # type: ignore[type-arg]
    r18, r19, r20 = rel18_19_20
    v = judge({0: tumbling(r19, r20, r18)}, [r18, r19, r20])
    assert not v.correct
    assert v.t0 is None
    d = v.divergence
    assert d is not None
    # r18 matches the last expected relation, then the expected output ends
    assert d.reason == "expected output ended"
    assert d.matched_relations == 1
    assert d.actual_index == 1
    assert d.missing == []
    assert {x["sensor"]["value"] for x in d.extra} == {x["sensor"]["value"] for x in r19}


# --- t0 candidates, contiguity, sets, numbers -------------------------------------------


def test_matching_t0_is_reported() -> None:
    expected = {
        0: tumbling(s("a"), s("b", "c"), s("d")),
        1000: tumbling(s("a", "b"), s("c"), s("d")),
    }
    v = judge(expected, [s("a", "b"), s("c")])
    assert v.correct
    assert v.t0 == 1000
    assert v.candidates == [0, 1000]
    # timestamps are ignored (CSRBench); relations are sets (order and duplicates inside ignored)
    v = judge(expected, [s("c", "b", "b"), s("d")])
    assert v.correct and v.t0 == 0 and v.start_seq == 1


def test_a_skipped_relation_breaks_contiguity() -> None:
    v = judge({0: tumbling(s("a"), s("b"), s("c"))}, [s("a"), s("c")])
    assert not v.correct
    d = v.divergence
    assert d is not None
    assert (d.t0_ms, d.start_seq, d.matched_relations, d.actual_index) == (0, 0, 1, 1)
    assert d.expected_seq == 1
    assert (d.expected_window_open_ms, d.expected_window_close_ms) == (1000, 2000)
    assert d.missing == [b(x="b")]
    assert d.extra == [b(x="c")]


def test_divergence_is_reported_for_the_t0_that_matched_longest() -> None:
    expected = {
        0: tumbling(s("a"), s("z"), s("y")),  # matches 1 relation
        1000: tumbling(s("q"), s("a"), s("b"), s("w")),  # matches 2 relations
        2000: tumbling(s("r")),  # matches none
    }
    v = judge(expected, [s("a"), s("b"), s("c")])
    assert not v.correct
    d = v.divergence
    assert d is not None
    assert (d.t0_ms, d.start_seq, d.matched_relations, d.actual_index, d.expected_seq) == (
        1000,
        1,
        2,
        2,
        3,
    )
    assert d.missing == [b(x="w")] and d.extra == [b(x="c")]


def test_no_start_reports_the_closest_expected_relation() -> None:
    v = judge({0: tumbling(s("a", "b", "c"), s("p", "q"))}, [s("a", "b", "x")])
    d = v.divergence
    assert d is not None
    assert d.reason == "no relation matches"
    assert d.start_seq is None and d.expected_seq == 0
    assert d.missing == [b(x="c")] and d.extra == [b(x="x")]


def test_no_start_reports_the_first_of_the_closest_expected_relations() -> None:
    rels = (s("p", "q"), s("a", "b", "c"), s("a", "b", "d"), s("a", "b", "x", "y"))
    v = judge({0: tumbling(*rels)}, [s("a", "b", "x")])  # differing: 5, 2, 2, 1
    assert v.divergence is not None and v.divergence.expected_seq == 3
    v = judge({0: tumbling(*rels[:3])}, [s("a", "b", "x")])  # a tie: the earlier one
    d = v.divergence
    assert d is not None and d.expected_seq == 1
    assert d.missing == [b(x="c")] and d.extra == [b(x="x")]


def test_numbers_compared_by_value_whole_bindings_compared() -> None:
    expected = {0: tumbling([b(s="s1", v=num("80"))], [b(s="s2", v=num("85.5", "decimal"))])}
    good = [[b(s="s1", v=num("80.0e0", "double"))], [b(s="s2", v=num("85.5", "double"))]]
    assert judge(expected, good).correct
    # Same numbers, another sensor: the published oracle would call this correct; we don't.
    wrong = [[b(s="s9", v=num("80"))], [b(s="s2", v=num("85.5", "double"))]]
    v = judge(expected, wrong)
    assert not v.correct
    assert v.divergence is not None and v.divergence.actual_index == 0


def test_empty_relations_must_agree() -> None:
    # an engine that emits empty relations (C-SPARQL) against an oracle that expects them
    expected = {0: tumbling([], s("a"), [], s("b"))}
    assert judge(expected, [[], s("a"), [], s("b")]).correct
    missing_empty = judge(expected, [s("a"), s("b")])
    assert not missing_empty.correct
    assert missing_empty.divergence is not None
    assert missing_empty.divergence.reason == "relation differs"
    assert missing_empty.divergence.extra == [b(x="b")]


def test_empty_output_where_relations_are_expected_is_not_correct() -> None:
    # CSRBench's rule would accept the empty sequence; a silent engine must not pass
    v = judge({0: tumbling(s("a")), 1000: tumbling([], s("a"))}, [])
    assert not v.correct and v.t0 is None and v.actual_relations == 0
    assert "no output" in v.notes[0] and "2 relation(s)" in v.notes[0]
    # expected empty relations count too: an engine that emits them must emit them
    assert not judge({0: tumbling([])}, []).correct


def test_empty_expected_output_is_judged_not_raised() -> None:
    nothing = result_relations(result_table([]))
    assert verdict({}, nothing, allow_split=False).correct
    v = verdict({}, result_relations(result_table([s("a")])), allow_split=False)
    assert not v.correct and v.divergence is not None
    assert v.divergence.reason == "expected output is empty" and v.divergence.extra == [b(x="a")]


# --- tuple-driven splits (CQELS) ---------------------------------------------------------


def test_splits_allowed_only_for_tuple_driven_istream() -> None:
    assert splits_allowed(CQELS_LIKE, R2S.ISTREAM)
    assert not splits_allowed(CQELS_LIKE, R2S.RSTREAM)
    assert not splits_allowed(CSPARQL_LIKE, R2S.ISTREAM)


def test_split_relations_accepted() -> None:
    expected = {0: tumbling(s("a", "b", "c"), s("d"), s("e", "f"))}
    actual = [s("b"), s("a", "c"), s("d"), s("f"), s("e")]
    v = judge(expected, actual, split=True)
    assert v.correct and v.t0 == 0
    assert v.matched_relations == 5
    assert v.split_relations == 2
    # the same output without the split allowance is wrong
    assert not judge(expected, actual, split=False).correct
    # a split may start the matched run and end it
    assert judge(expected, [s("d"), s("e"), s("f")], split=True).correct


@pytest.mark.parametrize(
    ("actual", "reason", "index"),
    [
        # the parts overlap: a binding repeated
        ([s("a"), s("a", "b"), s("c"), s("d")], "split part differs", 1),
        # a part brings a binding the expected relation does not have
        ([s("a"), s("b", "z"), s("c"), s("d")], "split part differs", 1),
        # a binding of the next relation arrives inside the split (reordering across relations)
        ([s("a"), s("d"), s("b"), s("c")], "split part differs", 1),
        # an empty relation inside a split
        ([s("a"), [], s("b", "c"), s("d")], "empty relation inside a split", 1),
        # the output stops before the split is complete
        ([s("a"), s("b")], "output ended inside a split", 1),
    ],
)
def test_split_relations_rejected(actual: list, reason: str, index: int) -> None:  # type: ignore[type-arg]
    v = judge({0: tumbling(s("a", "b", "c"), s("d"))}, actual, split=True)
    assert not v.correct
    d = v.divergence
    assert d is not None
    assert (d.reason, d.actual_index, d.matched_relations) == (reason, index, 0)


def test_split_divergence_names_what_is_still_missing() -> None:
    v = judge({0: tumbling(s("a", "b", "c"), s("d"))}, [s("a"), s("b", "z")], split=True)
    d = v.divergence
    assert d is not None
    assert d.missing == [b(x="c")]
    assert d.extra == [b(x="z")]


# --- properties over generated outputs ---------------------------------------------------

relations_st = st.lists(
    st.frozensets(st.sampled_from("abcdefgh"), max_size=4), min_size=1, max_size=8
)


@settings(max_examples=60, deadline=None)
@given(relations_st, st.data())
def test_any_contiguous_slice_is_correct_and_any_valid_split_too(
    rels: list[frozenset[str]], data: st.DataObject
) -> None:
    lo = data.draw(st.integers(0, len(rels) - 1))
    hi = data.draw(st.integers(lo + 1, len(rels)))
    expected = {0: tumbling(*[s(*sorted(r)) for r in rels])}
    part = [s(*sorted(r)) for r in rels[lo:hi]]
    assert judge(expected, part).correct
    # split every non-empty relation of the slice into disjoint consecutive parts
    split: list = []  # type: ignore[type-arg]
    for r in rels[lo:hi]:
        items = data.draw(st.permutations(sorted(r)))
        if not items:
            split.append([])
            continue
        cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(items) - 1)), max_size=2)))
        bounds = [0, *[c for c in cuts if c < len(items)], len(items)]
        split += [s(*items[x:y]) for x, y in pairwise(bounds) if x < y]
    v = judge(expected, split, split=True)
    assert v.correct, (rels, lo, hi, split)


@settings(max_examples=60, deadline=None)
@given(relations_st, st.data())
def test_a_binding_removed_from_a_one_to_one_output_is_caught(
    rels: list[frozenset[str]], data: st.DataObject
) -> None:
    nonempty = [i for i, r in enumerate(rels) if r]
    if not nonempty:
        return
    i = data.draw(st.sampled_from(nonempty))
    victim = data.draw(st.sampled_from(sorted(rels[i])))
    damaged = [s(*sorted(r - {victim} if k == i else r)) for k, r in enumerate(rels)]
    # a relation with 'z' appended to make the whole output unique to one start
    expected = {0: tumbling(*[s(*sorted(r)) for r in rels], s("z"))}
    v = judge(expected, [*damaged, s("z")])
    assert not v.correct
