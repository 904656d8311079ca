"""The two evaluators against each other, and pyoxigraph windows against rdflib.

Generated small streams and generated BGP/FILTER/aggregate queries (hypothesis, a bounded number
of examples): the compiled Spark SQL (and the temporal join for content change) must give the
same expected output as pyoxigraph on every window. Numbers are compared by value.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Graph

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import ReportPolicy as RP
from rsp_sdk.model.profile import Tick
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.model.terms import to_oxigraph
from rsp_sdk.oracle import expected
from rsp_sdk.streams.io import stream_table
from tests.oracle_support import EX, profile, spark

__all__ = ["spark"]

XSD = "http://www.w3.org/2001/XMLSchema#"
NUMBERS = [
    f'"{v}"^^<{XSD}{t}>'
    for v, t in [
        ("1", "integer"),
        ("3", "integer"),
        ("-2", "int"),
        ("2.5", "decimal"),
        ("0.1", "decimal"),
        ("3.0", "float"),
        ("80.1", "float"),
        ("2.5E0", "double"),
        ("7", "double"),
    ]
]
OTHER = ['"a"', '"b"@en', f"<{EX}s1>", f"<{EX}o0>", f'"x"^^<{XSD}integer>']
SUBJECTS = [f"<{EX}s{i}>" for i in range(3)]


@st.composite
def streams(draw: Any) -> pa.Table:
    n = draw(st.integers(1, 14))
    rows = []
    for _ in range(n):
        t = draw(st.sampled_from([0, 500, 1000, 1500, 2500, 3000, 4000]))
        s = draw(st.sampled_from(SUBJECTS))
        p = draw(st.sampled_from(["p0", "p1", "p2"]))
        if p == "p0":  # numbers of every type
            o = draw(st.sampled_from(NUMBERS))
        elif p == "p1":  # links between subjects
            o = draw(st.sampled_from(SUBJECTS))
        else:  # anything: strings, IRIs, ill-typed numbers, numbers
            o = draw(st.sampled_from(OTHER + NUMBERS[:3]))
        rows.append((t, s, f"<{EX}{p}>", o))
    rows.sort(key=lambda r: r[0])
    table = stream_table(
        "http://ex.org/streams/test",
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
    )
    meta = StreamMeta(producer="test", time_unit_ms=500)
    return table.replace_schema_metadata({b"rsp_sdk.stream": meta.to_bytes()})


PATTERNS = [
    "?x ex:p0 ?v .",
    "?x ex:p1 ?y .",
    "?y ex:p0 ?w .",
    "?x ex:p2 ?z .",
    "?y ex:p2 ?z .",
    "ex:s1 ex:p0 ?v .",
]
FILTERS = [
    "",
    "FILTER(?v > 2)",
    "FILTER(?v <= 2.5)",
    "FILTER(?v + 1 >= 3.5)",
    "FILTER(?v * 2 < ?v + 3)",
    "FILTER(?v / 2 > 0.5)",
    "FILTER(?v = 3)",
    "FILTER(?v != 2.5)",
    "FILTER(!(?v < 1) || ?x = ex:s1)",
    "FILTER(?x != ex:s0 && ?v > -1)",
    "FILTER(?z = 1)",
    "FILTER(?z > 0)",
    "FILTER(?z = ex:s1)",
    "FILTER(?v = ?w)",
    "FILTER(?v < ?w)",
]
AGGREGATES = [
    "(COUNT(*) AS ?n)",
    "(COUNT(?v) AS ?n)",
    "(COUNT(DISTINCT ?v) AS ?n)",
    "(SUM(?v) AS ?n)",
    "(AVG(?v) AS ?n)",
    "(MIN(?v) AS ?n)",
    "(MAX(?v) AS ?n)",
    "(SUM(?z) AS ?n)",
    "(AVG(?z) AS ?n)",
]


@st.composite
def queries(draw: Any) -> tuple[str, bool]:
    """(RSP-QL text, is an aggregate query)."""
    pats = draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True))
    if not any("?v" in p for p in pats):
        pats.append("?x ex:p0 ?v .")
    body = " ".join(pats)
    variables = sorted({tok for p in pats for tok in p.split() if tok.startswith("?")})
    flt = draw(st.sampled_from(FILTERS))
    if all(tok in variables for tok in ("?v", "?w", "?z", "?x") if tok in flt):
        body += " " + flt
    aggregate = draw(st.booleans())
    if aggregate:
        agg = draw(st.sampled_from(AGGREGATES))
        if "?z" in agg and "?z" not in variables:
            agg = "(COUNT(*) AS ?n)"
        group = "?x" in variables and draw(st.booleans())
        select = f"?x {agg}" if group else agg
        tail = " GROUP BY ?x" if group else ""
    else:
        select = " ".join(variables) if draw(st.booleans()) else "DISTINCT " + variables[0]
        tail = ""
    omega = draw(st.sampled_from(["PT1S", "PT2S"]))
    text = (
        f"PREFIX ex: <{EX}>\nREGISTER RSTREAM <q> AS SELECT {select}\n"
        f"FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE {omega} STEP PT1S]\n"
        f"WHERE {{ WINDOW ex:w {{ {body} }} }}{tail}"
    )
    return text, aggregate


def canonical(out: pa.Table) -> list[tuple[Any, ...]]:
    """Rows with numbers by value (6 significant digits), ready to compare as multisets."""

    def term(v: dict[str, str]) -> Any:
        dt = v.get("datatype", "")
        if dt.startswith(XSD) and dt[len(XSD) :] in (
            "integer",
            "int",
            "decimal",
            "float",
            "double",
        ):
            x = float(v["value"].replace("INF", "inf"))
            return ("num", float(f"{x:.6g}") if math.isfinite(x) else x)
        return (v["type"], v["value"], dt, v.get("xml:lang", ""))

    rows = []
    for r in out.to_pylist():
        b = None
        if r["binding"] is not None:
            b = tuple(sorted((k, term(v)) for k, v in json.loads(r["binding"]).items()))
        rows.append(
            (
                r["t0_ms"],
                r["seq"],
                r["t_app_ms"],
                r["window_open_ms"],
                r["window_close_ms"],
                r["triples_in_window"],
                repr(b),
            )
        )
    return sorted(rows)


WC = profile(RP.WINDOW_CLOSE, empty=True)
CC = profile(RP.CONTENT_CHANGE, tick=Tick.TUPLE_DRIVEN, r2s="istream", empty=True)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stream=streams(), q=queries(), content_change=st.booleans())
def test_sql_and_temporal_join_agree_with_pyoxigraph(
    spark: Any, stream: pa.Table, q: tuple[str, bool], content_change: bool
) -> None:
    """auto = compiled SQL (window close), the temporal join (content change), or pyoxigraph
    restricted to the events where the pattern gains a solution (content change over an
    aggregate); the reference evaluates every report with pyoxigraph."""
    text, _aggregate = q
    prof = CC if content_change else WC
    try:
        fast = expected(stream, _spec(text), prof, spark=spark, evaluator="auto")
    except InputError as exc:  # every generated query is in the fragment
        raise AssertionError(f"{exc}\n{text}") from exc
    full = expected(stream, _spec(text), prof, spark=spark, evaluator="oxigraph")
    assert canonical(fast) == canonical(full), text


def test_auto_picks_the_sql_evaluators(spark: Any) -> None:
    from rsp_sdk.oracle import plan_job

    stream = _tiny()
    q = _spec(
        f"PREFIX ex: <{EX}>\nSELECT ?x ?v FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> "
        "[RANGE PT1S STEP PT1S] WHERE { WINDOW ex:w { ?x ex:p0 ?v FILTER(?v > 1) } }"
    )
    assert plan_job(stream, q, WC, spark=spark, time_unit_ms=1).choice.evaluator == "sql"
    assert plan_job(stream, q, CC, spark=spark, time_unit_ms=1).choice.evaluator == "temporal"
    agg = _spec(
        f"PREFIX ex: <{EX}>\nSELECT (SUM(?v) AS ?s) FROM NAMED WINDOW ex:w ON "
        "<http://ex.org/streams/test> [RANGE PT1S STEP PT1S] WHERE { WINDOW ex:w { ?x ex:p0 ?v } }"
    )
    choice = plan_job(stream, agg, CC, spark=spark, time_unit_ms=1).choice
    assert choice.evaluator == "oxigraph" and choice.inner is not None


# queries outside the SQL fragment only by a FILTER function or a GROUP BY without aggregates:
# under content change pyoxigraph evaluates only where their monotone core gains a solution
# that the query keeps on its own triples (ren16 Q3's shape)
RESIDUAL = [
    "SELECT ?x ?y WHERE { WINDOW ex:w { ?x ex:p1 ?y FILTER(regex(str(?y), '1$', 'i')) } }",
    "SELECT ?x WHERE { WINDOW ex:w { ?x ex:p1 ?y . ?y ex:p0 ?v "
    "FILTER(?v > 1) FILTER(regex(str(?x), 's[01]$') || isLiteral(?y)) } } GROUP BY ?x",
    "SELECT ?x ?z WHERE { WINDOW ex:w { ?x ex:p2 ?z FILTER(isIRI(?z) || lang(?z) = 'en') } }",
]


@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stream=streams(), text=st.sampled_from(RESIDUAL[1:]))
def test_change_points_of_a_monotone_core_agree_with_every_event(
    spark: Any, stream: pa.Table, text: str
) -> None:
    """auto (pyoxigraph at the core's kept change points only) = pyoxigraph at every event."""
    spec = _spec(
        f"PREFIX ex: <{EX}>\nREGISTER ISTREAM <q> AS "
        + text.replace(
            " WHERE",
            " FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT2S STEP PT1S] WHERE",
            1,
        )
    )
    fast = expected(stream, spec, CC, spark=spark, evaluator="auto")
    full = expected(stream, spec, CC, spark=spark, evaluator="oxigraph")
    assert canonical(fast) == canonical(full), text


# queries outside the SQL fragment whose result is a function of their pattern's solutions
# (ren16 Q2's shape: GROUP BY, COUNT, ORDER BY; HAVING, MIN/MAX, a REGEX filter): under window
# close pyoxigraph loads only the triples of those solutions (``solution_core``)
SUPPORTED = [
    "SELECT ?x (COUNT(?y) AS ?n) WHERE { WINDOW ex:w { ?x ex:p1 ?y . ?y ex:p0 ?v } } "
    "GROUP BY ?x ORDER BY ?x",
    "SELECT ?x (MAX(?v) AS ?m) (COUNT(*) AS ?n) WHERE { WINDOW ex:w { ?x ex:p0 ?v "
    "FILTER(regex(str(?x), 's[01]$')) } } GROUP BY ?x HAVING (COUNT(?v) > 1) ORDER BY DESC(?m)",
    RESIDUAL[1],
]


def _support_stream() -> pa.Table:
    """Links (p1) to subjects with and without a number (p0) within a window, numbers of
    unlinked subjects, a p2 triple: most elements are in no solution of SUPPORTED[0]."""
    n = NUMBERS
    rows = [
        (0, "s0", "p1", SUBJECTS[1]),
        (0, "s1", "p0", n[1]),
        (500, "s2", "p1", SUBJECTS[0]),
        (500, "s0", "p0", n[3]),
        (1000, "s1", "p1", SUBJECTS[2]),
        (1000, "s1", "p0", n[6]),
        (1500, "s0", "p1", SUBJECTS[1]),
        (2500, "s1", "p0", n[0]),
        (2500, "s2", "p2", '"a"'),
        (3000, "s0", "p0", n[8]),
        (3000, "s1", "p1", SUBJECTS[0]),
        (3500, "s1", "p1", SUBJECTS[2]),
        (4000, "s2", "p0", n[1]),
        (4000, "s0", "p0", n[2]),
    ]
    meta = StreamMeta(producer="test", time_unit_ms=500)
    return _named_rows(rows).replace_schema_metadata({b"rsp_sdk.stream": meta.to_bytes()})


def _named_rows(rows: list[tuple[int, str, str, str]]) -> pa.Table:
    """A test stream from (time, subject name, predicate name, object term) rows."""
    return stream_table(
        "http://ex.org/streams/test",
        [r[0] for r in rows],
        [f"<{EX}{r[1]}>" for r in rows],
        [f"<{EX}{r[2]}>" for r in rows],
        [r[3] for r in rows],
    )


def test_window_groups_on_the_solutions_triples_agree_with_every_element(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """auto (the window groups load the core's solutions' triples) = pyoxigraph on every
    element of every window."""
    from rsp_sdk.oracle import job as job_module
    from rsp_sdk.oracle import plan_job

    monkeypatch.setattr(job_module, "SUPPORT_ROWS", 0)  # cut even these few elements
    stream = _support_stream()
    for k, text in enumerate(SUPPORTED):
        spec = _residual_spec(text)
        job = plan_job(stream, spec, WC, spark=spark, evaluator="auto")
        fast = job.run()
        cut = job._support_rows()
        assert cut is not None, text  # the cut was made
        if k == 0:  # and left elements out
            assert 0 < cut.num_rows < job._relevant_rows().num_rows
        full = expected(stream, spec, WC, spark=spark, evaluator="oxigraph")
        assert fast.num_rows and canonical(fast) == canonical(full), text


def test_only_order_free_queries_load_the_solutions_triples() -> None:
    """The choice is pure Python: under window close a query that is a function of its
    pattern's solutions in any order cuts the window groups; LIMIT, SUM, GROUP_CONCAT,
    OPTIONAL and NOT EXISTS do not."""
    from rsp_sdk.oracle.job import choose_evaluator
    from rsp_sdk.query.sparql import parse_select

    def choice(text: str) -> Any:
        spec = _residual_spec(text)
        algebra = parse_select(spec.sparql, base_iri=spec.base_iri).algebra
        return choose_evaluator(
            spec, algebra, WC, WC.r2s_for(spec.r2s), requested="auto", has_static=False
        )

    for text in SUPPORTED:
        c = choice(text)
        assert c.evaluator == "oxigraph" and c.support and c.inner is not None, text
    body = "WHERE { WINDOW ex:w { ?x ex:p1 ?y . ?y ex:p0 ?v } }"
    refused = [
        f"SELECT ?x ?y {body} ORDER BY ?x LIMIT 1",
        f"SELECT ?x (SUM(?v) AS ?s) {body} GROUP BY ?x ORDER BY ?x",
        f"SELECT ?x (GROUP_CONCAT(?y) AS ?s) {body} GROUP BY ?x",
        f"SELECT ?x (SAMPLE(?y) AS ?s) {body} GROUP BY ?x ORDER BY ?x",
        "SELECT ?x WHERE { WINDOW ex:w { ?x ex:p0 ?v OPTIONAL { ?x ex:p1 ?y } } } ORDER BY ?x",
        "SELECT ?x WHERE { WINDOW ex:w { ?x ex:p0 ?v FILTER NOT EXISTS { ?x ex:p1 ?y } } } "
        "ORDER BY ?x",
    ]
    for text in refused:
        c = choice(text)
        assert c.evaluator == "oxigraph" and not c.support and c.inner is None, text


def _residual_spec(text: str) -> Any:
    return _spec(
        f"PREFIX ex: <{EX}>\nSELECT"
        + text.removeprefix("SELECT").replace(
            " WHERE",
            " FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT1S STEP PT1S] WHERE",
            1,
        )
    )


def test_a_regex_filter_keeps_the_change_points() -> None:
    """The choice is pure Python: a FILTER function or a GROUP BY without aggregates leaves
    pyoxigraph the change points of the query's monotone core (not every event); OPTIONAL
    does not."""
    from rsp_sdk.oracle.job import choose_evaluator
    from rsp_sdk.query.sparql import parse_select

    def choice(text: str) -> Any:
        spec = _residual_spec(text)
        algebra = parse_select(spec.sparql, base_iri=spec.base_iri).algebra
        return choose_evaluator(
            spec, algebra, CC, CC.r2s_for(spec.r2s), requested="auto", has_static=False
        )

    for text in RESIDUAL:
        c = choice(text)
        assert c.evaluator == "oxigraph" and c.inner is not None and c.check_solutions, text
        # every core variable projected: the groups load only the kept solutions' elements
        assert c.support and {v for v, _ in c.inner.projection} >= {
            v for p in c.inner.patterns for v in p.variables
        }, text
    optional = "SELECT ?x WHERE { WINDOW ex:w { ?x ex:p0 ?v OPTIONAL { ?x ex:p1 ?y } } }"
    assert choice(optional).inner is None and not choice(optional).support


def test_kept_solutions_are_the_ones_the_query_keeps() -> None:
    """Each core solution is kept iff the query answers on its own triples (pyoxigraph)."""
    from rsp_sdk.oracle.job import choose_evaluator
    from rsp_sdk.oracle.r2r.witness import kept_solutions
    from rsp_sdk.query.sparql import parse_select

    spec = _residual_spec(RESIDUAL[1])
    algebra = parse_select(spec.sparql, base_iri=spec.base_iri).algebra
    inner = choose_evaluator(
        spec, algebra, CC, CC.r2s_for(spec.r2s), requested="auto", has_static=False
    ).inner
    assert inner is not None
    names = [v for v, _ in inner.projection]
    rows = {  # (?x, ?y, ?v): kept iff ?x ends in s0/s1 (and ?v > 1)
        (f"<{EX}s1>", f"<{EX}s2>", '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'): True,
        (f"<{EX}s2>", f"<{EX}s0>", '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'): False,
        (f"<{EX}s0>", f"<{EX}s1>", '"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'): True,
        (f"<{EX}s0>", f"<{EX}s2>", '"0"^^<http://www.w3.org/2001/XMLSchema#integer>'): False,
    }
    order = {"x": 0, "y": 1, "v": 2}
    columns = [pa.array([r[order[n]] for r in rows]) for n in names]
    got = kept_solutions(
        inner.patterns,
        names,
        columns,
        sparql=spec.sparql,
        base_iri=spec.base_iri,
        window_names=[w.name for w in spec.windows],
    )
    assert got.tolist() == list(rows.values())


def _tiny() -> pa.Table:
    return stream_table(
        "http://ex.org/streams/test", [0, 1000], [SUBJECTS[0]] * 2, [f"<{EX}p0>"] * 2, NUMBERS[:2]
    )


def _spec(text: str) -> Any:
    from rsp_sdk.query import parse_rspql

    return parse_rspql(text)


def test_pyoxigraph_windows_match_rdflib(spark: Any) -> None:
    """Each window's expected relation equals rdflib evaluating that window's triples."""
    rows = [
        (0, "s0", "p0", NUMBERS[0]),
        (0, "s1", "p1", SUBJECTS[0]),
        (500, "s0", "p0", NUMBERS[5]),
        (1000, "s1", "p0", NUMBERS[3]),
        (1500, "s2", "p1", SUBJECTS[1]),
        (2500, "s1", "p2", '"a"'),
        (3000, "s2", "p0", NUMBERS[6]),
        (3000, "s0", "p1", SUBJECTS[2]),
    ]
    table = _named_rows(rows)
    sparql_body = "?x ex:p0 ?v . OPTIONAL { ?y ex:p1 ?x } MINUS { ?x ex:p2 ?any } FILTER(?v >= 1.0)"
    text = (
        f"PREFIX ex: <{EX}>\nSELECT ?x ?v ?y\n"
        "FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT2S STEP PT1S]\n"
        f"WHERE {{ WINDOW ex:w {{ {sparql_body} }} }}"
    )
    out = expected(table, _spec(text), WC, t0s=[0], spark=spark, evaluator="auto")
    # windows [0,2000) [1000,3000) [2000,4000) [3000,5000)
    for close in (2000, 3000, 4000, 5000):
        g = Graph()
        for t, s, p, o in rows:
            if close - 2000 <= t < close:
                g.add(
                    (
                        _rdflib(f"<{EX}{s}>"),
                        _rdflib(f"<{EX}{p}>"),
                        _rdflib(o),
                    )
                )
        ref = g.query(f"PREFIX ex: <{EX}> SELECT ?x ?v ?y WHERE {{ {sparql_body} }}")
        want = sorted(
            tuple(
                sorted(
                    (str(k), _value(str(v)))
                    for k, v in zip(("x", "v", "y"), r, strict=True)
                    if v is not None
                )
            )
            for r in ref
        )
        got = sorted(
            tuple(sorted((k, _value(v["value"])) for k, v in json.loads(r["binding"]).items()))
            for r in out.to_pylist()
            if r["window_close_ms"] == close and r["binding"] is not None
        )
        assert got == want, close


def _value(text: str) -> str:
    """Numbers by value: pyoxigraph writes "3.0"^^xsd:float as 3, rdflib keeps "3.0"."""
    try:
        return repr(float(text))
    except ValueError:
        return text


def _rdflib(nt: str) -> Any:
    from rdflib import Literal, URIRef

    term = to_oxigraph(nt)
    if nt.startswith("<"):
        return URIRef(term.value)
    dt = getattr(term, "datatype", None)
    return Literal(term.value, datatype=URIRef(dt.value) if dt is not None else None)


def test_repeated_relations_give_the_same_istream_and_dstream() -> None:
    """``repeated_r2s`` (only reports whose source changes, and the ones before them) equals
    ``apply_r2s(attach(...))`` over every report, for Istream and Dstream; random reports of
    two t0 over two window groups, each event repeating the last evaluated one or not."""
    import random

    import pyarrow.compute as pc

    from rsp_sdk.model.profile import R2S
    from rsp_sdk.oracle.r2s import apply_r2s, attach, repeated_r2s

    rng = random.Random(7)
    reports: dict[str, list[int]] = {k: [] for k in ("t0", "rank", "kc", "kb", "kr")}
    sources: dict[str, list[int]] = {k: [] for k in ("kc", "kb", "kr", "skb", "skr")}
    full: dict[str, list[Any]] = {"kc": [], "kb": [], "kr": [], "binding": []}
    evaluated: dict[str, list[Any]] = {"kc": [], "kb": [], "kr": [], "binding": []}
    for kc in (1000, 2000):  # a window group: events (kb, kr) in order, content growing
        current: list[str] = []
        src = (0, 0)
        for kr in range(kc, kc + 12):
            if not current or rng.random() < 0.4:  # a change point: evaluated
                current = sorted(
                    set(current) | {f"b{rng.randrange(6)}"} if rng.random() < 0.8 else set()
                )
                src = (kc, kr)
                for b in current:
                    for k, v in zip(evaluated, (kc, kc, kr, b), strict=True):
                        evaluated[k].append(v)
            for k, v in zip(sources, (kc, kc, kr, *src), strict=True):
                sources[k].append(v)
            for b in current:
                for k, v in zip(full, (kc, kc, kr, b), strict=True):
                    full[k].append(v)
    for t0 in (0, 1):  # t0 0 sees every event, t0 1 every other one (a non-empty filter)
        rank = 0
        for kc, kr in zip(sources["kc"], sources["kr"], strict=True):
            if t0 == 1 and kr % 2:
                continue
            rank += 1
            for k, v in zip(reports, (t0, rank, kc, kc, kr), strict=True):
                reports[k].append(v)
    rep, src_t = pa.table(reports), pa.table(sources)
    keys = ["kc", "kb", "kr"]  # the evaluated events: their own source
    src_t = src_t.filter(
        pc.and_(
            pc.equal(src_t.column("kb"), src_t.column("skb")),
            pc.equal(src_t.column("kr"), src_t.column("skr")),
        )
    ).select(keys)
    for r2s in (R2S.ISTREAM, R2S.DSTREAM):
        want = apply_r2s(attach(pa.table(full), rep), r2s)  # Dstream: also at last rank + 1
        want = want.join(rep.select(["t0", "rank"]), keys=["t0", "rank"], join_type="inner")
        got = repeated_r2s(pa.table(evaluated), src_t, rep, r2s)
        assert sorted(got.to_pylist(), key=repr) == sorted(want.to_pylist(), key=repr), r2s
        assert want.num_rows > 0


def test_report_sources_by_binary_search_equal_the_join() -> None:
    """``r2s._with_sources`` (ranked keys, binary search) gives every report the source the
    distinct/join/sort path (``_sources``) gives it: 50 t0 × 400 reports, shuffled, 5 window
    groups each, the first event of each group and ~10 % of the others evaluated."""
    import numpy as np

    from rsp_sdk.oracle import r2s

    rng = np.random.default_rng(3)
    t0 = np.repeat(np.arange(50), 400)
    rank = np.tile(np.arange(1, 401), 50)
    kc = (rank - 1) // 80 * 1000 + 1000 + t0
    kr = rank * 3 + t0 % 7
    reports = pa.table({"t0": t0, "rank": rank, "kc": kc, "kb": kc, "kr": kr})
    reports = reports.take(pa.array(rng.permutation(len(t0))))
    keys = np.unique(np.stack([kc, kc, kr], 1), axis=0)
    first = np.r_[True, keys[1:, 0] != keys[:-1, 0]]
    ev = keys[first | (rng.random(len(keys)) < 0.1)]
    evaluated = pa.table({"kc": ev[:, 0], "kb": ev[:, 1], "kr": ev[:, 2]})
    got = r2s._with_sources(reports, evaluated)
    src = r2s._sources(reports.select(["kc", "kb", "kr"]), evaluated)
    want = reports.join(src, keys=["kc", "kb", "kr"], join_type="inner")
    want = want.sort_by([("t0", "ascending"), ("rank", "ascending")])
    assert got.select(want.column_names).equals(want) and want.num_rows == 20_000
