"""Expected outputs on hand-built micro streams, derived by hand in each test.

Notation in the comments: ``m1@r1`` is ``ex:m1 ex:detectedAt ex:r1``; windows are [open, close)
in ms; a relation is (t_app, open, close, triples in scope, {bindings}).
"""

from __future__ import annotations

from typing import Any

import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import ReportPolicy as RP
from rsp_sdk.model.profile import Tick, load_profile
from rsp_sdk.oracle import expected
from rsp_sdk.oracle.reference import reference_expected
from rsp_sdk.query import parse_rspql
from tests.oracle_support import bag, profile, query, relations, rooms, spark

__all__ = ["spark"]

PAIRS = "?a ex:detectedAt ?r . ?b ex:detectedAt ?r . FILTER(?a != ?b)"
TOGETHER_R1 = {("a=m1", "b=m2", "r=r1"), ("a=m2", "b=m1", "r=r1")}
BOTH = ["oxigraph", "sql"]
STREAM_A = "0: m1@r1 m2@r1; 1000: m1@r2; 2000: m3@r1; 5000: m2@r2"


@pytest.mark.parametrize("evaluator", BOTH)
def test_tumbling_window_close_rstream_with_empty_relations(spark: Any, evaluator: str) -> None:
    q = query("?a ?b ?r", PAIRS, "PT2S", "PT2S")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, r2s="rstream")
    out = expected(rooms(STREAM_A), q, prof, t0s=[0, 1000], spark=spark, evaluator=evaluator)
    # t0 = 0: [0,2000) {m1@r1 m2@r1 m1@r2}; [2000,4000) {m3@r1}; [4000,6000) {m2@r2}
    assert relations(out, 0) == [
        (2000, 0, 2000, 3, TOGETHER_R1),
        (4000, 2000, 4000, 1, set()),
        (6000, 4000, 6000, 1, set()),
    ]
    # t0 = 1000: [1000,3000) {m1@r2 m3@r1}; [3000,5000) is empty: no report; [5000,7000) {m2@r2}
    assert relations(out, 1000) == [
        (3000, 1000, 3000, 2, set()),
        (7000, 5000, 7000, 1, set()),
    ]
    # an empty relation is one row with a null binding
    assert out.num_rows == 2 + 2 + 2


@pytest.mark.parametrize("evaluator", BOTH)
def test_sliding_window_close_istream_and_dstream(spark: Any, evaluator: str) -> None:
    stream = rooms(STREAM_A)
    # W(2 s, 1 s), t0 = 0: [0,2000) pairs in r1; [1000,3000) {m1@r2 m3@r1}: none;
    # [2000,4000) {m3@r1}; [3000,5000) empty (dropped); [4000,6000) and [5000,7000) {m2@r2}
    ist = query("?a ?b ?r", PAIRS, "PT2S", "PT1S", r2s="ISTREAM")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=False)
    out = expected(stream, ist, prof, t0s=[0], spark=spark, evaluator=evaluator)
    assert relations(out, 0) == [(2000, 0, 2000, 3, TOGETHER_R1)]
    dst = query("?a ?b ?r", PAIRS, "PT2S", "PT1S", r2s="DSTREAM")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=True)
    out = expected(stream, dst, prof, t0s=[0], spark=spark, evaluator=evaluator)
    # the first report emits nothing (no previous); then what left, or an empty relation
    assert relations(out, 0) == [
        (3000, 1000, 3000, 2, TOGETHER_R1),
        (4000, 2000, 4000, 1, set()),
        (6000, 4000, 6000, 1, set()),
        (7000, 5000, 7000, 1, set()),
    ]


@pytest.mark.parametrize("evaluator", BOTH)
def test_bersys_r2s_identity(spark: Any, evaluator: str) -> None:
    # BeRSys: identity query, ω = 3 s > β = 1 s. Rstream = window content, Istream = what
    # entered, Dstream = what left.
    stream = rooms("0: a@x; 1000: b@x; 2000: c@x; 3000: d@x; 4000: e@x")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=False)

    def run(r2s: str) -> list[tuple[int, set[tuple[str, ...]]]]:
        q = query("?s", "?s ex:detectedAt ?o", "PT3S", "PT1S", r2s=r2s)
        out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
        return [(r[0], r[4]) for r in relations(out, 0)]

    def s(*names: str) -> set[tuple[str, ...]]:
        return {(f"s={n}",) for n in names}

    # windows [0,3000) [1000,4000) [2000,5000) [3000,6000) [4000,7000)
    assert run("RSTREAM") == [
        (3000, s("a", "b", "c")),
        (4000, s("b", "c", "d")),
        (5000, s("c", "d", "e")),
        (6000, s("d", "e")),
        (7000, s("e")),
    ]
    assert run("ISTREAM") == [(3000, s("a", "b", "c")), (4000, s("d")), (5000, s("e"))]
    assert run("DSTREAM") == [
        (4000, s("a")),
        (5000, s("b")),
        (6000, s("c")),
        (7000, s("d")),
    ]


@pytest.mark.parametrize(
    ("evaluator", "tick"),
    [("oxigraph", Tick.BATCH_DRIVEN), ("oxigraph", Tick.TUPLE_DRIVEN), ("sql", Tick.TUPLE_DRIVEN)],
)
def test_bersys_s2r_no_join_after_eviction(spark: Any, evaluator: str, tick: Tick) -> None:
    # m1 at 0 and m2 at 1500 share [0,2000); m1 has left every window that m3 (3500) is in:
    # no engine may ever report m1 with m3.
    stream = rooms("0: m1@r1; 1500: m2@r1; 3500: m3@r1")
    q = query("?a ?b", PAIRS, "PT2S", "PT1S", r2s="ISTREAM")
    wc = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=False)
    cc = profile(RP.CONTENT_CHANGE, tick=tick, empty=False)
    pairs = {("a=m1", "b=m2"), ("a=m2", "b=m1")}
    for prof in (wc, cc):
        out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
        got = relations(out, 0)
        assert all(b not in rel[4] for rel in got for b in [("a=m1", "b=m3"), ("a=m3", "b=m1")])
        if prof is wc:
            # [0,2000) holds m1 and m2; [1000,3000) … [3000,5000) never m1 with anyone
            assert got == [(2000, 0, 2000, 2, pairs)]
        else:
            # content change: m2 arrives at 1500 into the active [0,2000): the pair is born;
            # at 3500 the active window is [2000,4000) = {m3}: nothing new
            assert got == [(1500, 0, 1501, 2, pairs)]


def test_content_change_tuple_versus_batch_driven(spark: Any) -> None:
    stream = rooms("1000: m1@r1 m2@r1; 2000: m3@r1")
    q = query("?a ?b", PAIRS, "PT10S", "PT10S", r2s="ISTREAM")
    with_m3 = {
        ("a=m1", "b=m3"),
        ("a=m3", "b=m1"),
        ("a=m2", "b=m3"),
        ("a=m3", "b=m2"),
    }
    m1m2 = {("a=m1", "b=m2"), ("a=m2", "b=m1")}
    tuple_driven = profile(RP.CONTENT_CHANGE, tick=Tick.TUPLE_DRIVEN, empty=True)
    out = expected(stream, q, tuple_driven, t0s=[0], spark=spark, evaluator="oxigraph")
    # one report per element: m1 alone (nothing new: an empty relation), then m2, then m3
    assert relations(out, 0) == [
        (1000, 0, 1001, 1, set()),
        (1000, 0, 1001, 2, m1m2),
        (2000, 0, 2001, 3, with_m3),
    ]
    batch = profile(RP.CONTENT_CHANGE, tick=Tick.BATCH_DRIVEN, empty=True)
    out = expected(stream, q, batch, t0s=[0], spark=spark, evaluator="oxigraph")
    assert relations(out, 0) == [(1000, 0, 1001, 2, m1m2), (2000, 0, 2001, 3, with_m3)]
    # the temporal join gives the same Istream reports as re-evaluating every content
    out = expected(stream, q, tuple_driven, t0s=[0], spark=spark, evaluator="sql")
    assert relations(out, 0) == [
        (1000, 0, 1001, 1, set()),
        (1000, 0, 1001, 2, m1m2),
        (2000, 0, 2001, 3, with_m3),
    ]


@pytest.mark.parametrize("evaluator", BOTH)
def test_event_driven_reports_every_new_derivation(spark: Any, evaluator: str) -> None:
    # rooms with someone in them: m2 entering r1 re-derives r1. Istream (a set difference
    # with the previous relation) stays silent; an event-driven engine (ETALIS) reports it.
    stream = rooms("1000: m1@r1; 2000: m2@r1; 13000: m3@r2")
    q = query("?r", "?a ex:detectedAt ?r", "PT10S", "PT10S", r2s="ISTREAM")
    ist = profile(RP.CONTENT_CHANGE, tick=Tick.TUPLE_DRIVEN, empty=False)
    out = expected(stream, q, ist, t0s=[0], spark=spark, evaluator=evaluator)
    # 13000: active window [10000,20000) = {m3@r2}
    assert [(r[0], r[4]) for r in relations(out, 0)] == [
        (1000, {("r=r1",)}),
        (13000, {("r=r2",)}),
    ]
    out = expected(stream, q, "jtalis", t0s=[0], spark=spark, evaluator=evaluator)
    assert [(r[0], r[4]) for r in relations(out, 0)] == [
        (1000, {("r=r1",)}),
        (2000, {("r=r1",)}),
        (13000, {("r=r2",)}),
    ]


def test_event_driven_is_a_bag_of_new_results(spark: Any) -> None:
    # m3 joins m1 and m2 in r1 at once: two new derivations of the same projected ?r
    stream = rooms("1000: m1@r1 m2@r1; 2000: m3@r1")
    q = query("?r", PAIRS, "PT10S", "PT10S")
    out = expected(stream, q, "jtalis", t0s=[0], spark=spark, evaluator="oxigraph")
    # at m2: (m1,m2) and (m2,m1); at m3: (m1,m3) (m3,m1) (m2,m3) (m3,m2)
    assert bag(out, 0) == [(0, [("r=r1",)] * 2), (1, [("r=r1",)] * 4)]


@pytest.mark.parametrize("evaluator", ["oxigraph", "auto"])
def test_event_driven_select_distinct_reports_only_rows_new_to_the_window(
    spark: Any, evaluator: str
) -> None:
    # as above, with DISTINCT: m3 derives four new pairs in r1, but ?r = r1 was there already,
    # so its event adds no row (the bag difference of the reference oracle, rdflib). The
    # temporal join, which reports the new solutions made distinct, is not used here.
    stream = rooms("1000: m1@r1 m2@r1; 2000: m3@r1; 3000: m4@r2")
    q = query("DISTINCT ?r", PAIRS, "PT10S", "PT10S")
    out = expected(stream, q, "jtalis", t0s=[0], spark=spark, evaluator=evaluator)
    assert bag(out, 0) == [(0, [("r=r1",)])]
    witness = reference_expected(stream, parse_rspql(q), load_profile("jtalis"), t0s=[0])
    assert bag(witness, 0) == bag(out, 0)


@pytest.mark.parametrize("evaluator", BOTH)
def test_periodic_reports(spark: Any, evaluator: str) -> None:
    stream = rooms("0: m1@r1; 1000: m2@r1; 5000: m3@r1")
    q = query("?a", "?a ex:detectedAt ?r", "PT2S", "PT2S")
    prof = profile(RP.PERIODIC, period_ms=1500, empty=True)
    out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
    # τ = 1500: [0,2000) up to 1500 = {m1, m2}; τ = 3000: [2000,4000): nothing;
    # τ = 4500: [4000,6000) up to 4500: nothing yet (m3 comes at 5000)
    assert relations(out, 0) == [
        (1500, 0, 1501, 2, {("a=m1",), ("a=m2",)}),
        (3000, 2000, 3001, 0, set()),
        (4500, 4000, 4501, 0, set()),
    ]


@pytest.mark.parametrize("evaluator", BOTH)
def test_aggregates_on_empty_windows(spark: Any, evaluator: str) -> None:
    stream = rooms("0: m1@r1; 3000: m2@r1 m3@r2")
    q = query("(COUNT(?a) AS ?n)", "?a ex:detectedAt ?r", "PT1S", "PT1S")
    # without non-empty content every window reports, and COUNT over nothing is 0 (one row)
    prof = profile(RP.WINDOW_CLOSE, empty=True)
    out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
    assert [(r[0], r[3], r[4]) for r in relations(out, 0)] == [
        (1000, 1, {("n=1",)}),
        (2000, 0, {("n=0",)}),
        (3000, 0, {("n=0",)}),
        (4000, 2, {("n=2",)}),
    ]
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=True)
    out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
    assert [(r[0], r[4]) for r in relations(out, 0)] == [(1000, {("n=1",)}), (4000, {("n=2",)})]


def test_no_empty_relations_and_all_t0_candidates(spark: Any) -> None:
    # SECRET: candidates across one slide (step = the stream's time unit, 1000 ms here)
    stream = rooms("0: m1@r1 m2@r1; 1000: m1@r2; 2000: m3@r1; 5000: m2@r2")
    q = query("?a ?b ?r", PAIRS, "PT2S", "PT2S")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=False)
    out = expected(stream, q, prof, spark=spark)
    assert sorted(set(out.column("t0_ms").to_pylist())) == [0]  # t0 = 1000 reports nothing
    assert relations(out, 0) == [(2000, 0, 2000, 3, TOGETHER_R1)]
    # a bare table has no time unit: the candidates' step is asked for, never guessed (1 ms
    # would make 2,000 candidates of these 2), and given, it is the same job
    bare = stream.replace_schema_metadata(None)
    with pytest.raises(InputError, match="no time unit"):
        expected(bare, q, prof, spark=spark)
    assert expected(bare, q, prof, spark=spark, time_unit_ms=1000).equals(out)


@pytest.mark.parametrize("evaluator", [*BOTH, "oxigraph-in-workers"])
def test_static_data_joins_window_content(
    spark: Any, evaluator: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if evaluator == "oxigraph-in-workers":
        # tiny inputs are evaluated on the driver: here the Python workers' path (terms file,
        # static data broadcast) runs as it does above job.DRIVER_ROWS
        monkeypatch.setattr("rsp_sdk.oracle.job.DRIVER_ROWS", 0)
        evaluator = "oxigraph"
    # static background knowledge: r1 is a kitchen; the window says who is where
    static = tmp_path / "rooms.ttl"
    static.write_text(
        "@prefix ex: <http://example.org/> .\nex:r1 a ex:Kitchen .\nex:r2 a ex:Office .\n"
    )
    stream = rooms("0: m1@r1 m2@r2; 1000: m3@r1; 2500: m2@r1")
    q = (
        "PREFIX ex: <http://example.org/>\n"
        "REGISTER RSTREAM <k> AS SELECT ?a\n"
        "FROM <http://example.org/building>\n"
        "FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT2S STEP PT2S]\n"
        "WHERE { ?r a ex:Kitchen . WINDOW ex:w { ?a ex:detectedAt ?r } }"
    )
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=True)
    out = expected(stream, q, prof, t0s=[0], static=[static], spark=spark, evaluator=evaluator)
    # [0,2000): m1 and m3 in the kitchen; [2000,4000): m2
    assert [(r[0], r[4]) for r in relations(out, 0)] == [
        (2000, {("a=m1",), ("a=m3",)}),
        (4000, {("a=m2",)}),
    ]
    # without the static data nobody is in a kitchen: empty relations
    out = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
    assert [(r[0], r[4]) for r in relations(out, 0)] == [(2000, set()), (4000, set())]


def test_a_hand_built_spec_without_variables_projects_the_select_clause(spark: Any) -> None:
    """A QuerySpec made in code may leave ``variables`` empty: the SELECT clause decides."""
    from rsp_sdk.query import load_query

    spec = load_query(query("?a ?b ?r", PAIRS, "PT2S", "PT2S"))
    bare = spec.model_copy(update={"variables": []})
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, r2s="rstream")
    out = expected(rooms(STREAM_A), bare, prof, t0s=[0], spark=spark)
    assert relations(out, 0)[0] == (2000, 0, 2000, 3, TOGETHER_R1)


@pytest.mark.parametrize("evaluator", BOTH)
def test_a_repeated_triple_counts_once_per_window(spark: Any, evaluator: str) -> None:
    """A window content is a set: the SQL evaluator joins raw rows first and must then collapse
    the solutions two copies of one triple produce (the pyoxigraph path loads a set)."""
    stream = rooms("0: m1@r1; 1000: m1@r1 m2@r1; 3000: m1@r1")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, r2s="rstream")
    q = query("?a ?b ?r", PAIRS, "PT2S", "PT2S")
    pairs = expected(stream, q, prof, t0s=[0], spark=spark, evaluator=evaluator)
    # [0,2000) {m1@r1 m2@r1} with m1@r1 twice: each pair once; [2000,4000) {m1@r1}: none
    assert [(seq, b) for seq, b in bag(pairs, 0)] == [(0, sorted(TOGETHER_R1)), (1, [])]
    count = query("(COUNT(*) AS ?n)", "?a ex:detectedAt ?r", "PT2S", "PT1S")
    out = expected(stream, count, prof, t0s=[0], spark=spark, evaluator=evaluator)
    # closes 2000 {m1@r1 m2@r1}, 3000 {m1@r1 m2@r1}, 4000 {m1@r1}, 5000 {m1@r1}
    assert [b for _, b in bag(out, 0)] == [[("n=2",)], [("n=2",)], [("n=1",)], [("n=1",)]]
