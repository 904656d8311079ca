"""YABench per-window metrics: P/R (YABench's FMeasure cases), alignment, delay, gracious mode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_sdk.compare.align import align
from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.evaluate import OxigraphWindowEvaluator
from rsp_sdk.compare.relations import expected_relations, result_relations
from rsp_sdk.compare.yabench import (
    WINDOW_METRICS_SCHEMA,
    Gracious,
    precision_recall,
    window_metrics,
)
from rsp_sdk.model.profile import R2S
from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms
from tests.compare_tables import b, expected_table, result_table, s

# --- YABench's FMeasureTest, case by case ------------------------------------------------


def bag(items: list) -> Counter:  # type: ignore[type-arg]
    return Counter(items)


def fill_by_range(length: int, begin: int) -> list[int]:
    """YABench's fillByRange(new Integer[length], begin, end): begin, begin+1, … (length items)."""
    return [begin + i for i in range(length)]


@pytest.mark.parametrize(
    ("references", "predictions", "recall", "precision"),
    [
        ([], [], 1.0, 1.0),  # equalEmptyArrays
        (["1"], ["1"], 1.0, 1.0),  # equalArraysWithOneItem
        ([1], [1], 1.0, 1.0),
        (["1"] * 9, ["1"] * 9, 1.0, 1.0),  # equalArraysWithMoreItems
        ([1] * 9, [1] * 9, 1.0, 1.0),
        (fill_by_range(1000, 0), fill_by_range(1000, 0), 1.0, 1.0),  # …WithLotsOfItems
        (fill_by_range(1000, 1), fill_by_range(1000, 0), 0.999, 0.999),  # …LotsOfItems99
        (fill_by_range(900, 0), fill_by_range(1000, 0), 1.0, 0.9),  # …WithDifferentSizes
        (fill_by_range(1000, 500), fill_by_range(1000, 0), 0.5, 0.5),  # nonequal…LotsOfItems
    ],
)
def test_yabench_fmeasure_cases(
    references: list,
    predictions: list,
    recall: float,
    precision: float,  # type: ignore[type-arg]
) -> None:
    _, p, r = precision_recall(bag(references), bag(predictions))
    assert r == recall
    assert p == precision


def test_bag_matching_each_expected_row_matches_one_actual_row() -> None:
    # expected x twice, actual x three times: 2 matched of 3 emitted, 2 of 2 expected
    assert precision_recall(bag(["x", "x"]), bag(["x", "x", "x"])) == (2, 2 / 3, 1.0)
    # an empty side against a non-empty one scores 0 on the undefined ratio (YABench's FMeasure)
    assert precision_recall(bag(["x"]), bag([])) == (0, 0.0, 0.0)
    assert precision_recall(bag([]), bag(["x"])) == (0, 0.0, 0.0)


# --- alignment ---------------------------------------------------------------------------


def test_alignment_survives_a_dropped_relation() -> None:
    e = [bag(["a"]), bag(["b"]), bag(["c"]), bag(["d"])]
    a = [bag(["a"]), bag(["c"]), bag(["d"])]  # "b" never emitted
    al = align(e, a, allow_groups=False)
    assert al.groups == [[0], [], [1], [2]]
    assert al.unassigned == []


def test_alignment_pairs_empty_with_empty_and_keeps_extras_apart() -> None:
    e = [bag([]), bag(["a"]), bag([])]
    a = [bag([]), bag(["a"]), bag(["zz"]), bag([])]
    al = align(e, a, allow_groups=False)
    assert al.groups == [[0], [1], [3]]
    assert al.unassigned == [2]


def test_alignment_groups_consecutive_parts_only_when_allowed() -> None:
    e = [bag(["a", "b", "c"]), bag(["d"])]
    a = [bag(["a"]), bag(["b", "c"]), bag(["d"])]
    assert align(e, a, allow_groups=True).groups == [[0, 1], [2]]
    no_groups = align(e, a, allow_groups=False)
    assert no_groups.groups == [[1], [2]] and no_groups.unassigned == [0]


def test_long_outputs_are_cut_at_anchors() -> None:
    e = [bag(["a"]), bag(["b"]), bag(["c"]), bag(["d"])]
    a = [bag(["a"]), bag(["zz"]), bag(["c"]), bag(["d"])]
    # 16 cells > 2: a, c, d are anchors; the block between them is 1 × 1
    al = align(e, a, allow_groups=False, max_cells=2)
    assert al.groups == [[0], [1], [2], [3]] and not al.positional
    # the two swapped relations: only one can be an anchor, the other is left over
    al = align(
        [bag(["a"]), bag(["b"])],
        [bag(["b"]), bag(["a"]), bag(["c"])],
        allow_groups=False,
        max_cells=5,
    )
    assert al.groups == [[], [0]] and al.unassigned == [1, 2]


def test_alignment_falls_back_to_positions_beyond_budget() -> None:
    e = [bag(["a"]), bag(["b"]), bag(["c"])]
    a = [bag(["x"]), bag(["y"]), bag(["z"]), bag(["w"])]  # no anchor: one 3 × 4 block
    al = align(e, a, allow_groups=False, max_cells=5)
    assert al.positional and al.groups == [[0], [1], [2]] and al.unassigned == [3]
    assert "budget" in al.notes[0]


# --- per-window metrics and delay ----------------------------------------------------------


def pushed_real_time(start_ns: int, until_ms: int) -> TimeMap:
    """A feeder that pushed application time in real time: app ms t at start + t ms."""
    points = list(range(0, until_ms + 1, 1000))
    return TimeMap.from_points(points, [start_ns + t * 1_000_000 for t in points])


def test_window_metrics_by_hand() -> None:
    start = 50_000_000_000
    exp = expected_relations(
        expected_table(
            {0: [(0, 1000, s("a", "b")), (1000, 2000, []), (2000, 3000, s("c", "d", "e"))]}
        )
    )[0]
    act = result_relations(
        result_table(
            [s("a", "b"), [], s("c", "z"), s("q")],
            # window closes at start+1000/2000/3000 ms; answers 12, 30, 250 ms later
            t_sys_ns=[
                start + 1_012_000_000,
                start + 2_030_000_000,
                start + 3_250_000_000,
                start + 3_900_000_000,
            ],
        )
    )
    tm = pushed_real_time(start, 3000)
    rep = window_metrics(exp, act, content_change=False, allow_groups=False, time_map=tm)
    rows = [
        (w.expected_seq, w.expected_size, w.actual_size, w.matched, w.precision, w.recall)
        for w in rep.windows
    ]
    assert rows == [
        (0, 2, 2, 2, 1.0, 1.0),
        (1, 0, 0, 0, 1.0, 1.0),
        (2, 3, 2, 1, 0.5, 1 / 3),
        (None, 0, 1, 0, 0.0, 1.0),  # the "q" relation answers no window
    ]
    assert [w.delay_ms for w in rep.windows[:3]] == pytest.approx([12.0, 30.0, 250.0])
    assert rep.windows[2].actual_sys_ms == pytest.approx(3250.0)
    assert rep.windows[2].expected_sys_ms == pytest.approx(3000.0)
    assert rep.windows[3].actual_sys_ms == pytest.approx(3900.0)
    assert rep.windows[0].triples_in_window == 7
    assert rep.unexpected_relations == 1
    assert rep.mean_precision == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert rep.mean_recall == pytest.approx((1 + 1 + 1 / 3 + 1) / 4)
    assert rep.mean_delay_ms == pytest.approx((12 + 30 + 250) / 3)
    # the last output came 900 ms after the last push (app 3000 at start + 3000 ms)
    assert rep.final_result_arrival_ms == pytest.approx(900.0)


def test_window_metrics_without_system_times_have_no_delay() -> None:
    exp = expected_relations(expected_table({0: [(0, 1000, s("a"))]}))[0]
    act = result_relations(result_table([s("a")]))
    rep = window_metrics(exp, act, content_change=False, allow_groups=False)
    assert rep.windows[0].delay_ms is None and rep.final_result_arrival_ms is None
    assert rep.mean_delay_ms is None


def test_content_change_delay_counts_from_the_triggering_event() -> None:
    start = 0
    # content change reports stamped at event + 1000 (CSRBench); events at 1000 and 2000
    exp = expected_relations(expected_table({0: [(0, 2000, s("a")), (0, 3000, s("b", "c"))]}))[0]
    act = result_relations(
        result_table(
            [s("a"), s("b"), s("c")],
            t_sys_ns=[start + 1_004_000_000, start + 2_003_000_000, start + 2_007_000_000],
        )
    )
    tm = pushed_real_time(start, 3000)
    rep = window_metrics(
        exp, act, content_change=True, allow_groups=True, time_map=tm, event_times=[0, 1000, 2000]
    )
    assert [w.actual_seqs for w in rep.windows] == [[0], [1, 2]]
    assert [w.recall for w in rep.windows] == [1.0, 1.0]
    # answer complete at its last part: 4 ms and 7 ms after the events
    assert [w.delay_ms for w in rep.windows] == pytest.approx([4.0, 7.0])
    # without the stream's timestamps: report time minus one time unit (CSRBench stamping)
    rep2 = window_metrics(
        exp, act, content_change=True, allow_groups=True, time_map=tm, time_unit_ms=1000
    )
    assert [w.delay_ms for w in rep2.windows] == pytest.approx([4.0, 7.0])


def test_per_window_table_to_parquet(tmp_path: Path) -> None:
    exp = expected_relations(expected_table({0: [(0, 1000, s("a")), (1000, 2000, s("b"))]}))[0]
    act = result_relations(result_table([s("a"), s("x")]))
    rep = window_metrics(exp, act, content_change=False, allow_groups=False)
    table = rep.to_arrow()
    assert table.schema == WINDOW_METRICS_SCHEMA
    pq.write_table(table, tmp_path / "w.parquet")
    back = pq.read_table(tmp_path / "w.parquet")
    assert back.column("precision").to_pylist() == [1.0, 0.0]
    assert back.column("actual_seqs").to_pylist() == [[0], [1]]
    assert back.column("t0_ms").to_pylist() == [0, 0]


# --- gracious mode on a real stream, evaluated by pyoxigraph ------------------------------

EX = "http://example.org/"
IN_R1 = f"SELECT ?m WHERE {{ ?m <{EX}detectedAt> <{EX}r1> }}"
PAIRS = (
    f"SELECT ?a ?b WHERE {{ ?a <{EX}detectedAt> ?r . ?b <{EX}detectedAt> ?r . "
    "FILTER(STR(?a) < STR(?b)) }"
)


def rooms(text: str):  # type: ignore[no-untyped-def]
    table, _ = generate_rooms(RoomsParams(description=text))
    return table


def m(*names: str) -> list:  # type: ignore[type-arg]
    return s(*names, var="m")


def test_gracious_reconstructs_shifted_borders() -> None:
    stream = rooms(
        "0: m1@r1; 1000: m2@r1; 2000: m3@r1; 3000: m4@r1; 4000: m5@r1; 5000: m6@r1; 6000: m7@r1"
    )
    ev = OxigraphWindowEvaluator(stream, IN_R1)
    # the oracle's tumbling 3 s windows from t0 = 0 …
    exp = expected_relations(
        expected_table(
            {
                0: [
                    (0, 3000, m("m1", "m2", "m3")),
                    (3000, 6000, m("m4", "m5", "m6")),
                    (6000, 9000, m("m7")),
                ]
            }
        )
    )[0]
    assert ev.evaluate(0, 3000) == exp.relations[0].bag  # evaluator agrees with the oracle
    # … an engine whose windows really were [1000, 4000), [4000, 7000), [7000, 10000)
    act = result_relations(result_table([m("m2", "m3", "m4"), m("m5", "m6", "m7"), []]))
    rep = window_metrics(
        exp, act, content_change=False, allow_groups=False, gracious=Gracious(ev, R2S.RSTREAM)
    )
    w0, w1, w2 = rep.windows
    assert (w0.precision, w0.recall) == (2 / 3, 2 / 3)
    # start moved to the next graph (recall 1), end stretched over the graph at 3000 (precision 1)
    assert (w0.gracious_open_ms, w0.gracious_close_ms) == (1000, 3001)
    assert (w0.start_shift_ms, w0.end_shift_ms) == (1000, 1)
    assert (w0.gracious_precision, w0.gracious_recall) == (1.0, 1.0)
    assert w0.gracious_expected_size == 3
    assert (w1.gracious_open_ms, w1.gracious_close_ms) == (4000, 6001)
    # nothing can explain an empty answer to [6000, 9000): borders stay, scores stay 0
    assert (w2.gracious_open_ms, w2.gracious_close_ms) == (6000, 9000)
    assert (w2.gracious_precision, w2.gracious_recall) == (0.0, 0.0)
    assert rep.mean_gracious_precision == pytest.approx(2 / 3)
    assert rep.mean_gracious_recall == pytest.approx(2 / 3)


def test_gracious_leaves_exact_windows_alone_and_bounds_the_extension() -> None:
    stream = rooms("0: m1@r1; 1000: m2@r1; 9000: m9@r1")
    ev = OxigraphWindowEvaluator(stream, IN_R1)
    exp = expected_relations(expected_table({0: [(0, 2000, m("m1", "m2"))]}))[0]
    # m9 arrives 7 s after the window: more than one window size away, not a shifted border
    act = result_relations(result_table([m("m1", "m2", "m9")]))
    rep = window_metrics(
        exp, act, content_change=False, allow_groups=False, gracious=Gracious(ev, R2S.RSTREAM)
    )
    (w,) = rep.windows
    assert (w.gracious_open_ms, w.gracious_close_ms, w.gracious_precision) == (0, 2000, 2 / 3)
    exact = result_relations(result_table([m("m1", "m2")]))
    (w,) = window_metrics(
        exp, exact, content_change=False, allow_groups=False, gracious=Gracious(ev, R2S.RSTREAM)
    ).windows
    assert (w.start_shift_ms, w.end_shift_ms, w.gracious_recall) == (0, 0, 1.0)


def pair(x: str, y: str) -> dict:  # type: ignore[type-arg]
    return b(a=x, b=y)


def test_gracious_istream_discounts_what_the_previous_window_had() -> None:
    stream = rooms("0: m1@r1; 1000: m2@r1 m4@r1; 2000: m3@r1")
    ev = OxigraphWindowEvaluator(stream, PAIRS)
    # sliding 3 s / 1 s, Istream: [-1000, 2000) reports all its pairs, [0, 3000) the new ones
    first = [pair("m1", "m2"), pair("m1", "m4"), pair("m2", "m4")]
    new = [pair("m1", "m3"), pair("m2", "m3"), pair("m3", "m4")]
    exp = expected_relations(expected_table({0: [(-1000, 2000, first), (0, 3000, new)]}))[0]
    # the engine's second window started at 1000 (m1 already gone): it reports m2-m3, m3-m4
    act = result_relations(result_table([first, [pair("m2", "m3"), pair("m3", "m4")]]))
    rep = window_metrics(
        exp, act, content_change=False, allow_groups=False, gracious=Gracious(ev, R2S.ISTREAM)
    )
    w = rep.windows[1]
    assert (w.precision, w.recall) == (1.0, 2 / 3)
    # on [1000, 3000) the result is {m2-m4, m2-m3, m3-m4}; m2-m4 was already reported before
    assert (w.gracious_open_ms, w.gracious_close_ms) == (1000, 3000)
    assert (w.gracious_precision, w.gracious_recall, w.gracious_expected_size) == (1.0, 1.0, 2)


def test_gracious_does_not_support_dstream() -> None:
    stream = rooms("0: m1@r1")
    exp = expected_relations(expected_table({0: [(0, 1000, m("m1"))]}))[0]
    act = result_relations(result_table([m("m2")]))
    rep = window_metrics(
        exp,
        act,
        content_change=False,
        allow_groups=False,
        gracious=Gracious(OxigraphWindowEvaluator(stream, IN_R1), R2S.DSTREAM),
    )
    assert rep.windows[0].gracious_open_ms is None
    assert any("Dstream" in n for n in rep.notes)


def test_evaluator_counts_and_timestamps() -> None:
    stream = rooms("0: m1@r1 m2@r2; 1000: m3@r1; 2500: m4@r2")
    ev = OxigraphWindowEvaluator(stream, IN_R1)
    assert ev.triples(0, 1000) == 2
    assert ev.triples(0, 2501) == 4
    assert ev.timestamps(0, 3000) == [0, 1000, 2500]
    assert ev.next_timestamp(1001) == 2500
    assert ev.next_timestamp(2501) is None
    assert ev.evaluate(0, 3000) == Counter(
        result_relations(result_table([m("m1", "m3")])).relations[0].bag
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("abcdef"), max_size=3), min_size=1, max_size=10), st.data()
)
def test_alignment_properties(rels: list[list[str]], data: st.DataObject) -> None:
    e = [bag(r) for r in rels]
    # identical outputs align one to one
    assert align(e, list(e), allow_groups=False).groups == [[i] for i in range(len(e))]
    # dropping one relation leaves every other one paired with itself
    drop = data.draw(st.integers(0, len(e) - 1))
    a = e[:drop] + e[drop + 1 :]
    al = align(e, a, allow_groups=True)
    assigned = sorted(j for g in al.groups for j in g) + al.unassigned
    assert sorted(assigned) == list(range(len(a)))  # every output placed exactly once
    flat = [j for g in al.groups for j in g]
    assert flat == sorted(flat)  # order preserved
    total = sum(
        precision_recall(e[i], sum((a[j] for j in g), Counter()))[0]
        for i, g in enumerate(al.groups)
    )
    assert total == sum(sum(r.values()) for r in a)  # every emitted binding found its window


def test_evaluator_window_graphs_and_static_data() -> None:
    import pyarrow as pa

    stream = rooms("0: m1@r1 m2@r2; 1000: m3@r1")
    static = pa.table(
        {"s": [f"<{EX}r1>"], "p": [f"<{EX}floor>"], "o": ['"1"'], "g": pa.nulls(1, pa.string())}
    )
    # an RSP-QL body whose WINDOW block became a GRAPH pattern, joined with static data
    sparql = f'SELECT ?m WHERE {{ GRAPH <{EX}w> {{ ?m <{EX}detectedAt> ?r }} ?r <{EX}floor> "1" }}'
    ev = OxigraphWindowEvaluator(stream, sparql, static=[static], window_names=[f"{EX}w"])
    assert ev.evaluate(0, 1000) == Counter(
        result_relations(result_table([m("m1")])).relations[0].bag
    )
    assert sum(ev.evaluate(0, 2000).values()) == 2
    # a plain body sees the window content and the static data as one default graph
    plain = OxigraphWindowEvaluator(
        stream,
        f'SELECT ?m WHERE {{ ?m <{EX}detectedAt> ?r . ?r <{EX}floor> "1" }}',
        static=[static],
    )
    assert sum(plain.evaluate(0, 2000).values()) == 2
    assert sum(plain.evaluate(1000, 1000).values()) == 0


def test_gracious_notes_when_the_evaluator_disagrees_with_the_oracle() -> None:
    stream = rooms("0: m1@r1; 1000: m2@r1")
    ev = OxigraphWindowEvaluator(stream, IN_R1)
    # an "expected" relation the query cannot produce on [0, 2000): the borders mean nothing
    exp = expected_relations(expected_table({0: [(0, 2000, m("m1", "m9"))]}))[0]
    act = result_relations(result_table([m("m1")]))
    rep = window_metrics(
        exp, act, content_change=False, allow_groups=False, gracious=Gracious(ev, R2S.RSTREAM)
    )
    assert any("does not reproduce the expected relation for 1 window" in n for n in rep.notes)
