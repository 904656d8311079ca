"""LSBench mismatch on hand-built sequences; every mm below is worked out by hand in comments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_sdk.compare.lsbench import (
    Partition,
    comparability,
    mismatch,
    mismatch_blocks,
    partition_for,
)
from rsp_sdk.compare.relations import result_relations
from rsp_sdk.model.profile import Profile, ReportPolicy, Tick
from tests.compare_tables import b, num, result_table, s


def mm(blocks: list[list[str]], o_e2: list[str]) -> float:
    total, lost, _ = mismatch_blocks(blocks, o_e2)  # type: ignore[arg-type]
    return 100.0 * lost / total if total else 0.0


def test_identical_outputs() -> None:
    assert mm([["a", "b"], ["c"]], ["a", "b", "c"]) == 0.0


def test_order_inside_a_block_is_free() -> None:
    # T1 = {a, b} (both occur from 0); match = min(pos a = 1, pos b = 0) = 0; T2 = {c} (pos 2 ≥ 0)
    assert mm([["a", "b"], ["c"]], ["b", "a", "c"]) == 0.0


def test_order_across_blocks_counts() -> None:
    # eager blocks [a], [b], [c] against c, b, a:
    # T1 = {a} (pos 2) → j = 2; T2: b occurs only at 1 < 2 → ∅, j stays 2; T3: c at 0 < 2 → ∅
    # mm = (0 + 1 + 1) / 3
    assert mm([["a"], ["b"], ["c"]], ["c", "b", "a"]) == pytest.approx(200 / 3)
    # the same elements as one periodic block: order inside a block is free → 0
    assert mm([["a", "b", "c"]], ["c", "b", "a"]) == 0.0


def test_match_moves_to_the_earliest_element_of_the_remainder() -> None:
    # blocks [a, b], [c], [a]; O_E2 = a, c, b, a
    # T1 = {a, b}: a at 0, b at 2 → j = min(0, 2) = 0
    # T2 = {c}: c at 1 → j = 1
    # T3 = {a}: a occurs at 3 ≥ 1 → kept → mm = 0
    assert mm([["a", "b"], ["c"], ["a"]], ["a", "c", "b", "a"]) == 0.0
    # blocks [b], [a], [c]; O_E2 = a, c, b: T1 = {b} at 2 → j = 2; a (pos 0) and c (pos 1) lost
    assert mm([["b"], ["a"], ["c"]], ["a", "c", "b"]) == pytest.approx(200 / 3)


def test_duplicates_count_by_membership() -> None:
    # A1 = [x, x]: both copies occur in O_E2[1] (x is there) → |T1| = 2; T2 = {y} → mm = 0
    assert mm([["x", "x"], ["y"]], ["x", "y"]) == 0.0
    # A1 = [y] at pos 1 → j = 1; A2 = [x, x]: x only at 0 < 1 → both copies lost: 2 of 3
    assert mm([["y"], ["x", "x"]], ["x", "y"]) == pytest.approx(200 / 3)
    # a periodic Rstream engine repeating x every execution matches one x of E2 each time
    assert mm([["x"], ["x"], ["x"]], ["x"]) == 0.0


def test_missing_and_empty() -> None:
    assert mm([["a", "b", "c"]], ["a"]) == pytest.approx(200 / 3)
    assert mm([["a"], [], ["b"]], ["a", "b"]) == 0.0  # an empty execution is an empty block
    assert mm([], ["a"]) == 0.0  # nothing to miss
    assert mm([["a"], ["b"]], []) == 100.0


def test_partition_changes_the_result() -> None:
    e1 = result_relations(result_table([s("a", "b")]))
    e2 = result_relations(result_table([s("b"), s("a")]))
    # one block {a, b}: order free → 0 %
    assert mismatch(e1, e2, partition=Partition.RELATION).mm_percent == 0.0
    # elements [a], [b]: a at 1 → j = 1; b at 0 < 1 → lost: 50 %
    res = mismatch(e1, e2, partition=Partition.ELEMENT, e1_name="A", e2_name="B")
    assert res.mm_percent == 50.0
    assert (res.e1, res.e2, res.blocks, res.elements, res.unmatched) == ("A", "B", 2, 2, 1)
    assert res.first_unmatched_block == 1


def test_elements_compared_by_value() -> None:
    e1 = result_relations(result_table([[b(v=num("5"))], [b(v=num("2.5", "decimal"))]]))
    e2 = result_relations(
        result_table([[b(v=num("5.0e0", "double"))], [b(v=num("2.5", "double"))]])
    )
    assert mismatch(e1, e2, partition=Partition.RELATION).mm_percent == 0.0


def test_partition_for_profiles() -> None:
    eager = Profile(
        name="cqels",
        report=frozenset({ReportPolicy.CONTENT_CHANGE}),
        tick=Tick.TUPLE_DRIVEN,
        emits_empty_relations=False,
    )
    periodic = Profile(
        name="csparql",
        report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
        tick=Tick.TIME_DRIVEN,
        emits_empty_relations=True,
    )
    assert partition_for(eager) is Partition.ELEMENT
    assert partition_for(periodic) is Partition.RELATION


def test_comparability_over_all_ordered_pairs() -> None:
    e1 = result_relations(result_table([s("a"), s("b"), s("c"), s("d")]))
    e2 = result_relations(result_table([s("a"), s("b"), s("c"), s("d")]))
    e3 = result_relations(result_table([s("a"), s("b"), s("c")]))
    outputs = {
        "e1": (e1, Partition.RELATION),
        "e2": (e2, Partition.RELATION),
        "e3": (e3, Partition.RELATION),
    }
    # mm(e1, e3) = mm(e2, e3) = 1/4 = 25 %; every other direction is 0 %
    comp = comparability(outputs, 25.0)
    assert comp.comparable and comp.max_mm_percent == 25.0
    assert len(comp.pairs) == 6
    assert {(p.e1, p.e2): p.mm_percent for p in comp.pairs}[("e1", "e3")] == 25.0
    assert {(p.e1, p.e2): p.mm_percent for p in comp.pairs}[("e3", "e1")] == 0.0
    assert not comparability(outputs, 20.0).comparable


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), max_size=4), max_size=8), st.data())
def test_mm_properties(blocks: list[list[str]], data: st.DataObject) -> None:
    flat = [x for blk in blocks for x in blk]
    # an engine never mismatches itself, nor an engine that emits the same and then more
    assert mm(blocks, flat) == 0.0
    extra = data.draw(st.lists(st.sampled_from("abcdefg"), max_size=4))
    assert mm(blocks, flat + extra) == 0.0
    assert mm(blocks, extra + flat) == 0.0
    # against nothing, everything is missed
    assert mm(blocks, []) == (100.0 if flat else 0.0)
    assert 0.0 <= mm(blocks, data.draw(st.permutations(flat))) <= 100.0
