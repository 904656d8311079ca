"""The Spark oracle (every evaluator) against the reference oracle, on generated cases.

``rsp_sdk.oracle.reference`` is the executable specification: its own t0, window and report
enumeration, rdflib on each window content, R2S on Python sets. hypothesis generates streams
(several streams, ties, gaps, bursts), queries from a small grammar (BGP, FILTER, OPTIONAL,
UNION, MINUS, every aggregate with GROUP BY and HAVING, one or two windows, plain SPARQL) and
profiles (every report combination × tick × R2S × empty relations × t0 policy), and every
evaluator of ``rsp_sdk.oracle.expected`` must give the reference's rows: t0, seq, report time,
scope, size and bindings with their datatypes.

A Spark job costs seconds, so each hypothesis example is a *batch* of 4 cases whose jobs run
concurrently on the one SparkSession: the ``ci`` profile (``tests/conftest.py``) runs 6 batches,
24 cases, 48 Spark jobs (``auto`` and ``oxigraph``; ``sql`` is checked to pick what ``auto``
picks or to decline); ``--hypothesis-profile=thorough`` runs 150 batches, 600 cases.

Bindings are compared as RDF terms: IRIs and strings exactly, literals with their datatype and
language, numbers by value within their datatype (``"2.50"^^xsd:decimal`` = ``"2.5"``; 6
significant digits for xsd:float, 12 for xsd:double, 15 for xsd:decimal, whose division
precision SPARQL leaves to the implementation), GROUP_CONCAT's items in any order. The data
spells each value once per datatype: pyoxigraph stores ``"7"^^xsd:int`` and
``"7"^^xsd:integer`` as one term, a known limit of the pyoxigraph path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import (
    BUILTIN_PROFILES,
    R2S,
    Profile,
    ReportPolicy,
    T0Lead,
    T0Policy,
    Tick,
)
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.model.terms import XSD, XSD_INTEGER_TYPES, XSD_NUMERIC_TYPES
from rsp_sdk.oracle import expected
from rsp_sdk.oracle.reference import reference_expected, t0_candidates
from rsp_sdk.query import parse_rspql
from rsp_sdk.streams.io import stream_table
from tests.oracle_support import EX, bag, profile, query, relations, rooms, spark

__all__ = ["spark"]

RP = ReportPolicy
STREAM_A = "http://ex.org/streams/a"
STREAM_B = "http://ex.org/streams/b"
SUBJECTS = [f"<{EX}s{i}>" for i in range(3)]
# one spelling per value and datatype (pyoxigraph stores numbers by value); non-canonical
# spellings ("3.0", "+4", "2.50") check that the oracle gives back the stream's own term
NUMBERS = [
    f'"{v}"^^<{XSD}{t}>'
    for v, t in [
        ("1", "integer"),
        ("+4", "integer"),
        ("-2", "int"),
        ("2.50", "decimal"),
        ("0.1", "decimal"),
        ("3.0", "float"),
        ("-1.5", "float"),
        ("2.5E0", "double"),
        ("7", "double"),
    ]
]
OTHER = ['"a"', '"b"@en', f"<{EX}s1>", f'"x"^^<{XSD}integer>', NUMBERS[0], NUMBERS[5]]
LABELS = ['"red"', '"green"', '"blue"']


# -- streams -------------------------------------------------------------------------------------


@st.composite
def streams(draw: Any) -> pa.Table:
    """Bursts separated by gaps, ties within a burst, elements of two streams interleaved."""
    rows: list[list[Any]] = []
    t = draw(st.sampled_from([0, 250, 1000]))
    for _ in range(draw(st.integers(1, 3))):
        t += draw(st.sampled_from([0, 500, 1500, 3500]))
        for _ in range(draw(st.integers(1 if rows else 2, 5))):
            t += draw(st.sampled_from([0, 0, 250, 500, 1000]))
            stream = draw(st.sampled_from([STREAM_A, STREAM_A, STREAM_B]))
            p = draw(st.sampled_from(["p0", "p0", "p1", "p2", "p3"]))
            o = draw(st.sampled_from({"p0": NUMBERS, "p1": SUBJECTS, "p2": OTHER, "p3": LABELS}[p]))
            rows.append([stream, t, draw(st.sampled_from(SUBJECTS)), f"<{EX}{p}>", o])
    # both streams present, so that a query may read either (an absent stream is an input error)
    if all(r[0] == STREAM_A for r in rows):
        rows[-1][0] = STREAM_B
    if all(r[0] == STREAM_B for r in rows):
        rows[0][0] = STREAM_A
    table = stream_table(
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [r[3] for r in rows],
        [r[4] for r in rows],
    )
    meta = StreamMeta(producer="test", time_unit_ms=draw(st.sampled_from([250, 500])))
    return table.replace_schema_metadata({b"rsp_sdk.stream": meta.to_bytes()})


# -- queries -------------------------------------------------------------------------------------

PATTERNS = ["?x ex:p0 ?v .", "?x ex:p1 ?y .", "?y ex:p0 ?w .", "?x ex:p2 ?z .", "?x ex:p3 ?l ."]
FILTERS = [
    "FILTER(?v > 2)",
    "FILTER(?v <= 2.5)",
    "FILTER(?v + 1 >= 3.5)",
    "FILTER(?v * 2 < ?v + 3)",
    "FILTER(?v != 2.5)",
    "FILTER(!(?v < 1) || ?x = ex:s1)",
    "FILTER(?x != ex:s0 && ?v > -1)",
    "FILTER(?z > 0)",
    "FILTER(?z = ex:s1)",
    "FILTER(?v < ?w)",
    'FILTER(?l != "red")',
]
AGGREGATES = [
    "(COUNT(*) AS ?n)",
    "(COUNT(?v) AS ?n)",
    "(COUNT(DISTINCT ?v) AS ?n)",
    "(SUM(?v) AS ?n)",
    "(AVG(?v) AS ?n)",
    "(MIN(?v) AS ?n)",
    "(MAX(?v) AS ?n)",
    "(SAMPLE(?x) AS ?n)",
    "(GROUP_CONCAT(?l) AS ?gc)",
]
HAVINGS = ["HAVING(COUNT(*) > 1)", "HAVING(SUM(?v) >= 2)", "HAVING(MAX(?v) < 3)"]
WINDOWS = [(1000, 500), (1000, 1000), (1500, 500), (2000, 1000), (500, 1000)]


def _vars(text: str) -> set[str]:
    return set(re.findall(r"\?\w+", text))


@st.composite
def group_patterns(draw: Any) -> tuple[str, set[str]]:
    """A group graph pattern over window ex:w and the variables it surely binds."""
    pats = draw(st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=2, unique=True))
    bound = set().union(*(_vars(p) for p in pats))
    body = " ".join(pats)
    flt = draw(st.sampled_from(["", *FILTERS]))
    if flt and _vars(flt) <= bound:
        body += " " + flt
    extra = draw(st.sampled_from(["", "optional", "union", "minus"]))
    other = draw(st.sampled_from(PATTERNS))
    if extra == "optional":
        body += f" OPTIONAL {{ {other} }}"
    elif extra == "union":
        body = f"{{ {body} }} UNION {{ {other} }}"
        bound &= _vars(other)
    elif extra == "minus":
        body += f" MINUS {{ {other} }}"
    return body, bound


@dataclass(frozen=True)
class Case:
    text: str
    profile: Profile
    stream: pa.Table
    static: pa.Table

    def spec(self) -> QuerySpec:
        return parse_rspql(self.text)

    def describe(self) -> str:
        rows = self.stream.select(["stream", "t_app_ms", "s", "p", "o"]).to_pylist()
        lines = [f"  {r['stream'][-1]} {r['t_app_ms']} {r['s']} {r['p']} {r['o']}" for r in rows]
        meta = StreamMeta.from_bytes(self.stream.schema.metadata[b"rsp_sdk.stream"])
        static = [" ".join(r.values()) for r in self.static.to_pylist()]
        return (
            f"query:\n{self.text}\nprofile: {self.profile.model_dump_json()}\n"
            f"static: {static}\nstream (unit {meta.time_unit_ms} ms):\n" + "\n".join(lines)
        )


NEEDS = {"?v": "?x ex:p0 ?v .", "?l": "?x ex:p3 ?l .", "?x": "?x ex:p1 ?y ."}


@st.composite
def queries(draw: Any) -> str:
    body, bound = draw(group_patterns())
    shape = draw(st.sampled_from(["select", "distinct", "aggregate", "aggregate"]))
    agg = draw(st.sampled_from(AGGREGATES))
    having = draw(st.sampled_from(["", *HAVINGS]))
    if shape == "aggregate":
        # aggregate only variables every solution binds (SPARQL makes SUM of an unbound
        # variable an error; rdflib skips it instead)
        for var in sorted(_vars(agg + having) - {"?n", "?gc"} - bound):
            body += " " + NEEDS[var]
            bound |= _vars(NEEDS[var])
    mode = draw(st.sampled_from(["window", "window", "two", "plain"]))
    omega, beta = draw(st.sampled_from(WINDOWS))
    windows = (
        f"FROM NAMED WINDOW ex:w ON <{STREAM_A}> [RANGE PT{omega / 1000}S STEP PT{beta / 1000}S]\n"
    )
    if mode == "plain":
        where = f"{{ {body} }}"
    elif mode == "window":
        # RSP-QL: a pattern outside the WINDOW block reads the static data
        static = " ?x ex:ps ?k ." if "?x" in bound and draw(st.booleans()) else ""
        where = f"{{ WINDOW ex:w {{ {body} }}{static} }}"
    else:
        omega2 = draw(st.sampled_from([500, 1000, 2000]))
        windows += (
            f"FROM NAMED WINDOW ex:w2 ON <{STREAM_B}> "
            f"[RANGE PT{omega2 / 1000}S STEP PT{beta / 1000}S]\n"
        )
        second = draw(st.sampled_from(["?x ex:p0 ?u .", "?x ex:p1 ?y .", "?x ex:p3 ?l2 ."]))
        where = f"{{ WINDOW ex:w {{ {body} }} WINDOW ex:w2 {{ {second} }} }}"
        bound |= _vars(second)
    r2s = draw(st.sampled_from(["RSTREAM", "ISTREAM", "DSTREAM"]))
    tail = ""
    if shape == "aggregate":
        group = "?x" in bound and ("SAMPLE" in agg or draw(st.booleans()))
        select = f"?x {agg}" if group else agg
        tail = " GROUP BY ?x" if group else ""
        tail += f" {having}" if having else ""
    else:
        names = sorted(_vars(body) - {"?*"})
        chosen = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        select = ("DISTINCT " if shape == "distinct" else "") + " ".join(sorted(chosen))
    return f"PREFIX ex: <{EX}>\nREGISTER {r2s} <q> AS SELECT {select}\n{windows}WHERE {where}{tail}"


# -- profiles ------------------------------------------------------------------------------------

REPORTS = [
    {RP.WINDOW_CLOSE},
    {RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT},
    {RP.WINDOW_CLOSE, RP.PERIODIC},
    {RP.WINDOW_CLOSE, RP.PERIODIC, RP.NON_EMPTY_CONTENT},
    {RP.CONTENT_CHANGE},
    {RP.CONTENT_CHANGE, RP.NON_EMPTY_CONTENT},
    {RP.CONTENT_CHANGE, RP.PERIODIC},
    {RP.CONTENT_CHANGE, RP.PERIODIC, RP.NON_EMPTY_CONTENT},
    {RP.PERIODIC},
    {RP.PERIODIC, RP.NON_EMPTY_CONTENT},
]


@st.composite
def profiles(draw: Any) -> Profile:
    report = draw(st.sampled_from(REPORTS))
    event_driven = RP.CONTENT_CHANGE in report and draw(st.integers(0, 3)) == 0
    t0 = T0Policy(
        first_ms=draw(st.sampled_from([None, None, 0, 250, 1000])),
        step_ms=draw(st.sampled_from([None, None, 250, 500])),
        span=draw(st.sampled_from(["slide", "window"])),
        lead=draw(st.sampled_from(list(T0Lead))),
    )
    return Profile(
        name="generated",
        report=frozenset(report),
        tick=draw(st.sampled_from(list(Tick))),
        r2s=draw(st.sampled_from([None, *R2S])),
        emits_empty_relations=draw(st.booleans()),
        time_unit_ms=draw(st.sampled_from([250, 500, 1000])),
        period_ms=draw(st.sampled_from([500, 1000, 1500])),
        t0=t0,
        event_driven=event_driven,
    )


@st.composite
def statics(draw: Any) -> pa.Table:
    """Background data (the default graph): a kind for some subjects."""
    rows = draw(st.lists(st.sampled_from(SUBJECTS), max_size=3, unique=True))
    kinds = [draw(st.sampled_from(['"k1"', '"k2"'])) for _ in rows]
    return pa.table(
        {"s": rows, "p": [f"<{EX}ps>"] * len(rows), "o": kinds}, schema=STATIC_SCHEMA_SPO
    )


STATIC_SCHEMA_SPO = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string())])


@st.composite
def cases(draw: Any) -> Case:
    return Case(draw(queries()), draw(profiles()), draw(streams()), draw(statics()))


# -- comparison ----------------------------------------------------------------------------------

_DIGITS = {XSD + "float": 6, XSD + "double": 12, XSD + "decimal": 15}


def term(name: str, value: dict[str, str]) -> tuple[Any, ...]:
    """A term with its datatype; numbers by value (their lexical form is free, the datatype
    is not), GROUP_CONCAT's items as a bag (SPARQL leaves their order to the engine)."""
    dt = value.get("datatype", "")
    if name == "gc":
        return ("gc", tuple(sorted(value["value"].split(" "))), dt)
    if dt in XSD_NUMERIC_TYPES:
        try:
            number = Decimal(value["value"].replace("INF", "Infinity"))
        except ArithmeticError:
            return ("ill-typed", value["value"], dt)
        if dt in XSD_INTEGER_TYPES or not number.is_finite():
            return ("num", dt, str(number))
        return ("num", dt, f"{float(number):.{_DIGITS[dt]}g}")
    return (value["type"], value["value"], dt, value.get("xml:lang", ""))


def canonical(table: pa.Table) -> list[tuple[Any, ...]]:
    rows = []
    for r in table.to_pylist():
        b = None
        if r["binding"] is not None:
            b = tuple(sorted((k, term(k, v)) for k, v in json.loads(r["binding"]).items()))
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


def diff(want: list[tuple[Any, ...]], got: list[tuple[Any, ...]]) -> str:
    from collections import Counter

    w, g = Counter(want), Counter(got)
    missing = sorted((w - g).elements())[:8]
    extra = sorted((g - w).elements())[:8]
    return (
        "reference only:\n"
        + "\n".join(map(str, missing))
        + "\nspark only:\n"
        + "\n".join(map(str, extra))
    )


# -- running -------------------------------------------------------------------------------------


def backend_for(case: Case, evaluator: str) -> str:
    """The SPARQL engine the reference uses: never the one the Spark run evaluates with.

    Compiled SQL and the temporal join are checked against pyoxigraph, pyoxigraph against
    rdflib — except where rdflib departs from SPARQL 1.1: it lets an ill-typed literal
    (``"x"^^xsd:integer``) pass a numeric comparison instead of raising a type error, so
    queries comparing ``?z`` (the one variable that meets such literals) use pyoxigraph.
    """
    if evaluator != "oxigraph" or "FILTER(?z >" in case.text:
        return "oxigraph"
    return "rdflib"


def reference(case: Case, backend: str) -> pa.Table:
    return reference_expected(
        case.stream, case.spec(), case.profile, static=case.static, backend=backend
    )


def spark_runs(spark: Any, case: Case) -> list[tuple[str, str, Callable[[], pa.Table]]]:
    """(evaluator asked, evaluator used, run) for ``auto`` and ``oxigraph``.

    ``sql`` either declines with an InputError before any Spark job (outside its fragment), or
    picks exactly what ``auto`` picks (compiled SQL or the temporal join): that run covers it.
    """
    from rsp_sdk.oracle import plan_job

    def plan(evaluator: str) -> Any:
        return plan_job(
            case.stream,
            case.spec(),
            case.profile,
            static=[case.static],
            spark=spark,
            evaluator=evaluator,
        )

    auto = plan("auto")
    full = plan("oxigraph")
    try:
        sql = plan("sql")
    except InputError as exc:
        assert "Spark SQL evaluator cannot run" in str(exc), exc
        assert auto.choice.evaluator == "oxigraph", auto.choice
    else:
        assert sql.choice.evaluator == auto.choice.evaluator != "oxigraph", sql.choice
    return [("auto", auto.choice.evaluator, auto.run), ("oxigraph", "oxigraph", full.run)]


def check_batch(spark: Any, batch: list[Case]) -> None:
    runs = [(case, *run) for case in batch for run in spark_runs(spark, case)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [(case, asked, used, pool.submit(fn)) for case, asked, used, fn in runs]
        results = [(case, asked, used, f.result()) for case, asked, used, f in futures]
    failures = []
    for case, asked, used, got in results:
        backend = backend_for(case, used)
        want = canonical(reference(case, backend))
        have = canonical(got)
        if want != have:
            failures.append(
                f"evaluator {asked} ({used}) vs reference ({backend})\n{case.describe()}\n"
                + diff(want, have)
            )
    assert not failures, "\n\n".join(failures[:2])


# pytest-timeout's 600 s would cut the thorough profile short: allow 2 minutes per batch
@pytest.mark.timeout(300 + 120 * settings().max_examples)
@settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(cases(), min_size=4, max_size=4))
def test_spark_oracle_agrees_with_the_reference(spark: Any, batch: list[Case]) -> None:
    check_batch(spark, batch)


def test_the_generated_cases_cover_the_grammar() -> None:
    """Every construct the docstring promises is reachable by the generators."""
    seen: set[str] = set()

    @settings(max_examples=500, database=None, deadline=None, derandomize=True)
    @given(case=cases())
    def collect(case: Case) -> None:
        text = case.text
        for word in ("OPTIONAL", "UNION", "MINUS", "FILTER", "HAVING", "GROUP BY", "DISTINCT"):
            if word in text:
                seen.add(word)
        for agg in ("COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE", "GROUP_CONCAT"):
            if f"({agg}(" in text:
                seen.add(agg)
        seen.add("two windows" if "ex:w2" in text else "one window")
        if "ex:ps" in text and case.static.num_rows:
            seen.add("static data")
        seen.update(str(p) for p in case.profile.report)
        seen.add(str(case.profile.tick))
        seen.add(f"empty={case.profile.emits_empty_relations}")
        seen.add(f"span={case.profile.t0.span}")
        if case.profile.event_driven:
            seen.add("event_driven")
        if len(set(case.stream.column("stream").to_pylist())) > 1:
            seen.add("several streams")

    collect()
    wanted = {
        "OPTIONAL",
        "UNION",
        "MINUS",
        "FILTER",
        "HAVING",
        "GROUP BY",
        "DISTINCT",
        "COUNT",
        "SUM",
        "AVG",
        "MIN",
        "MAX",
        "SAMPLE",
        "GROUP_CONCAT",
        "two windows",
        "one window",
        *(str(p) for p in ReportPolicy),
        *(str(t) for t in Tick),
        "empty=True",
        "empty=False",
        "span=slide",
        "span=window",
        "event_driven",
        "several streams",
        "static data",
    }
    assert wanted <= seen, sorted(wanted - seen)


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# -- the reference on hand-computed cases (its own witnesses, no Spark) --------------------------


def _ref(stream: pa.Table, text: str, prof: Profile, t0s: list[int]) -> pa.Table:
    return reference_expected(stream, parse_rspql(text), prof, t0s=t0s)


def test_reference_window_close_istream_dstream_and_non_empty() -> None:
    """BeRSys R2S identity, ω = 3 s, β = 1 s: Rstream = content, Istream = what entered,
    Dstream = what left (nothing at the first report)."""
    stream = rooms("0: a@x; 1000: b@x; 2000: c@x; 3000: d@x; 4000: e@x")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=False)

    def run(r2s: str) -> list[tuple[int, set[tuple[str, ...]]]]:
        out = _ref(stream, query("?s", "?s ex:detectedAt ?o", "PT3S", "PT1S", r2s=r2s), prof, [0])
        return [(r[0], r[4]) for r in relations(out, 0)]

    def s(*names: str) -> set[tuple[str, ...]]:
        return {(f"s={n}",) for n in names}

    assert run("RSTREAM") == [
        (3000, s("a", "b", "c")),
        (4000, s("b", "c", "d")),
        (5000, s("c", "d", "e")),
        (6000, s("d", "e")),
        (7000, s("e")),
    ]
    assert run("ISTREAM") == [(3000, s("a", "b", "c")), (4000, s("d")), (5000, s("e"))]
    assert run("DSTREAM") == [(4000, s("a")), (5000, s("b")), (6000, s("c")), (7000, s("d"))]


def test_reference_csrbench_first_window_and_empty_relations() -> None:
    """span = window: for t0 ≥ ω the first scope is [t0 + β − ω, t0 + β); an empty window is
    dropped by non-empty content, a window without bindings is an empty relation."""
    stream = rooms("0: m1@r1; 2500: m2@r1; 6500: m3@r2")
    q = query("?a", "?a ex:detectedAt ex:r1", "PT2S", "PT1S")
    prof = profile(RP.WINDOW_CLOSE, RP.NON_EMPTY_CONTENT, empty=True, t0={"span": "window"})
    got = relations(_ref(stream, q, prof, [3000]), 3000)
    # o_0 = 3000 + 1000 − 2000 = 2000: [2000,4000) {m2}; [3000,5000) and [4000,6000) empty;
    # [5000,7000) and [6000,8000) {m3@r2}: no binding
    assert got == [
        (4000, 2000, 4000, 1, {("a=m2",)}),
        (7000, 5000, 7000, 1, set()),
        (8000, 6000, 8000, 1, set()),
    ]
    # SECRET (span = slide): o_0 = t0; without non-empty content the empty window reports
    slide = profile(RP.WINDOW_CLOSE, empty=True)
    assert relations(_ref(stream, q, slide, [3000]), 3000)[0] == (5000, 3000, 5000, 0, set())


def test_reference_content_change_and_periodic() -> None:
    stream = rooms("0: m1@r1; 1000: m2@r1; 1000: m4@r2; 5000: m3@r1")
    q = query("?a", "?a ex:detectedAt ?r", "PT2S", "PT2S")
    # tuple-driven: one report per element after t0, in stream order, up to that element
    tuple_driven = profile(RP.CONTENT_CHANGE, tick=Tick.TUPLE_DRIVEN, empty=True)
    assert [r[:4] for r in relations(_ref(stream, q, tuple_driven, [0]), 0)] == [
        (1000, 0, 1001, 2),
        (1000, 0, 1001, 3),
        (5000, 4000, 5001, 1),
    ]
    # periodic (1.5 s): τ = 1500 over [0,1500]; 3000 over [2000,3000]; 4500 over [4000,4500];
    # at 6000 the open window is [6000,8000), opened after the last element: no report
    prof = profile(RP.PERIODIC, period_ms=1500, empty=True)
    assert relations(_ref(stream, q, prof, [0]), 0) == [
        (1500, 0, 1501, 3, {("a=m1",), ("a=m2",), ("a=m4",)}),
        (3000, 2000, 3001, 0, set()),
        (4500, 4000, 4501, 0, set()),
    ]


def test_reference_event_driven_bag_of_new_results() -> None:
    stream = rooms("1000: m1@r1 m2@r1; 2000: m3@r1")
    pairs = "?a ex:detectedAt ?r . ?b ex:detectedAt ?r . FILTER(?a != ?b)"
    out = _ref(stream, query("?r", pairs, "PT10S", "PT10S"), BUILTIN_PROFILES["jtalis"], [0])
    assert bag(out, 0) == [(0, [("r=r1",)] * 2), (1, [("r=r1",)] * 4)]


def test_reference_t0_candidates() -> None:
    spec = parse_rspql(query("?a", "?a ex:detectedAt ?r", "PT2S", "PT1S"))
    slide = profile(RP.WINDOW_CLOSE)
    window = profile(RP.WINDOW_CLOSE, t0={"span": "window", "step_ms": 500})
    assert t0_candidates(slide, spec, t_min=1700, unit_ms=1000) == [1000]
    assert t0_candidates(window, spec, t_min=1700, unit_ms=1000) == [1500, 2000, 2500, 3000, 3500]
    grid = profile(RP.WINDOW_CLOSE, t0={"first_ms": 0, "lead": "range_minus_step"})
    assert t0_candidates(grid, spec, t_min=1700, unit_ms=1000) == [-1000]  # rsp-js: [−1 s, 1 s)


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
def test_reference_keeps_solutions_that_bind_no_projected_variable(backend: str) -> None:
    """Found by the differential test (rdflib, not the Spark oracle, was wrong): MAX over no
    solution is one solution with ?n unbound, and a UNION branch not binding ?a yields a
    solution binding nothing; iterating rdflib's result drops both."""
    stream = rooms("0: m1@r1")
    prof = profile(RP.WINDOW_CLOSE, empty=True)
    for select, where in [
        ("(MAX(?a) AS ?n)", "?a ex:detectedAt ex:r9"),
        ("?a", "{ ?a ex:detectedAt ex:r9 } UNION { ?b ex:detectedAt ?r }"),
    ]:
        spec = parse_rspql(query(select, where, "PT1S", "PT1S"))
        out = reference_expected(stream, spec, prof, t0s=[0], backend=backend)
        assert out.column("binding").to_pylist() == ["{}"], select


@pytest.mark.parametrize("backend", ["rdflib", "oxigraph"])
def test_reference_groups_nothing_into_no_row(backend: str) -> None:
    """Found by the differential test (rdflib, not the Spark oracle, was wrong): an explicit
    GROUP BY over no solution makes no group, so no row (SPARQL 1.1, 11.2); rdflib gave one
    row of unbound keys. Without GROUP BY the one implicit group stays: COUNT is 0."""
    stream = rooms("0: m1@r1")
    prof = profile(RP.WINDOW_CLOSE, empty=True)
    where = "?a ex:detectedAt ?r FILTER(?r = ex:r9)"
    grouped = query("?r (COUNT(?a) AS ?n)", where, "PT1S", "PT1S") + " GROUP BY ?r"
    out = reference_expected(stream, parse_rspql(grouped), prof, t0s=[0], backend=backend)
    assert out.column("binding").to_pylist() == [None]  # one report: the empty relation
    whole = query("(COUNT(?a) AS ?n)", "?a ex:detectedAt ex:r9", "PT1S", "PT1S")
    out = reference_expected(stream, parse_rspql(whole), prof, t0s=[0], backend=backend)
    assert [json.loads(b)["n"]["value"] for b in out.column("binding").to_pylist()] == ["0"]


# -- disagreements the differential test found, as plain tests -----------------------------------


@pytest.mark.parametrize("evaluator", ["auto", "oxigraph"])
def test_event_driven_never_reports_a_solution_complete_at_t0(spark: Any, evaluator: str) -> None:
    """Found by test_spark_oracle_agrees_with_the_reference: under an event-driven profile the
    temporal join (``auto``) reported the solution of an element stamped exactly t0 at the
    first report, although that element was there at registration and triggers nothing; the
    pyoxigraph path and the reference report only what the element at 500 completes."""
    stream = stream_table(
        STREAM_A, [0, 500], SUBJECTS[:2], [f"<{EX}p0>"] * 2, [NUMBERS[0], NUMBERS[1]]
    )
    text = (
        f"PREFIX ex: <{EX}>\nSELECT ?x ?v FROM NAMED WINDOW ex:w ON <{STREAM_A}> "
        "[RANGE PT1S STEP PT1S] WHERE { WINDOW ex:w { ?x ex:p0 ?v } }"
    )
    jtalis = BUILTIN_PROFILES["jtalis"]
    out = expected(stream, parse_rspql(text), jtalis, t0s=[0], spark=spark, evaluator=evaluator)
    assert [json.loads(r["binding"])["x"]["value"] for r in out.to_pylist()] == [f"{EX}s1"]
    assert canonical(out) == canonical(_ref(stream, text, jtalis, [0]))


@pytest.mark.parametrize("negated", [True, False])
def test_exists_filters_see_the_triples_only_their_pattern_reads(spark: Any, negated: bool) -> None:
    """Found on the functional suite (rsp-js and C-SPARQL agreed, the oracle did not): the
    relevance pruning did not read the pattern inside FILTER [NOT] EXISTS (rdflib leaves it as
    parsed), so the badge triples it reads were dropped before evaluation: NOT EXISTS kept
    every detection, EXISTS none. By hand, tumbling 1 s windows: [0, 1000) holds m1@r1, m2@r1
    and m1's badge, [1000, 2000) m1@r2 only."""
    det, badge = f"<{EX}detectedAt>", f"<{EX}badge>"
    rows = [
        (0, "m1", det, "r1"),
        (0, "m2", det, "r1"),
        (500, "m1", badge, "b1"),
        (1000, "m1", det, "r2"),
    ]
    stream = stream_table(
        "http://ex.org/streams/test",
        [r[0] for r in rows],
        [f"<{EX}{r[1]}>" for r in rows],
        [r[2] for r in rows],
        [f"<{EX}{r[3]}>" for r in rows],
    )
    keyword = "NOT EXISTS" if negated else "EXISTS"
    text = query(
        "?m ?r", f"?m ex:detectedAt ?r FILTER {keyword} {{ ?m ex:badge ?b }}", "PT1S", "PT1S"
    )
    prof = profile(RP.WINDOW_CLOSE, empty=False)
    by_hand = [[("m2", "r1")], [("m1", "r2")]] if negated else [[("m1", "r1")]]
    out = expected(stream, parse_rspql(text), prof, t0s=[0], spark=spark)
    got: dict[int, list[tuple[str, str]]] = {}
    for r in out.to_pylist():
        b = json.loads(r["binding"])
        got.setdefault(r["seq"], []).append(
            (b["m"]["value"].removeprefix(EX), b["r"]["value"].removeprefix(EX))
        )
    assert [sorted(v) for _, v in sorted(got.items())] == by_hand
    assert canonical(out) == canonical(_ref(stream, text, prof, [0]))
