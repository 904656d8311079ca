"""Capabilities from SPARQL algebra, packed batches, result parsing, the adapter registry."""

from __future__ import annotations

import pyarrow as pa
import pytest

from rsp_sdk.engine import (
    Capabilities,
    Feature,
    ResultEvent,
    TripleBatch,
    get_adapter,
    pack_lines,
    register,
    required_features,
    slice_batches,
)
from rsp_sdk.engine.registry import discover, unregister
from rsp_sdk.errors import InputError, RspError
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.runtime.base import EngineError
from tests.fixtures.adapters import ToyPyAdapter, render_toy

W = WindowSpec(name="http://ex.org/w", stream="http://ex.org/s", range_ms=1000, step_ms=500)


def spec(sparql: str, **kw: object) -> QuerySpec:
    return QuerySpec(name="q", text=sparql, sparql=sparql, windows=[W], **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sparql", "features"),
    [
        ("SELECT ?s WHERE { ?s <http://p> ?o }", set()),
        ("SELECT ?s WHERE { ?s <http://p> ?o . ?o <http://q> ?x }", {Feature.JOIN}),
        ("SELECT ?s WHERE { ?s <http://p> ?o FILTER(?o > 2) }", {Feature.FILTER}),
        ("SELECT ?s WHERE { ?s <http://p> ?o OPTIONAL { ?s <http://q> ?x } }", {Feature.OPTIONAL}),
        ("SELECT ?s WHERE { { ?s <http://p> ?o } UNION { ?s <http://q> ?o } }", {Feature.UNION}),
        (
            "SELECT ?s WHERE { ?s <http://p> ?o FILTER NOT EXISTS { ?s <http://q> ?x } }",
            {Feature.FILTER, Feature.NEGATION},
        ),
        ("SELECT ?s WHERE { ?s <http://p> ?o MINUS { ?s <http://q> ?x } }", {Feature.NEGATION}),
        (
            "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s <http://p> ?o } GROUP BY ?s",
            {Feature.AGGREGATES},
        ),
        (
            "SELECT DISTINCT ?s WHERE { ?s <http://p> ?o } ORDER BY ?s LIMIT 5",
            {Feature.DISTINCT, Feature.ORDER_BY, Feature.LIMIT},
        ),
        ("SELECT ?s WHERE { ?s <http://p>/<http://q> ?o }", {Feature.PROPERTY_PATHS}),
        (
            "PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#> SELECT ?s WHERE { ?s <http://p> ?o "
            "BIND(f:timestamp(?s, <http://p>, ?o) AS ?t) }",
            {Feature.BIND, Feature.TIMESTAMP_FUNCTION},
        ),
        ("SELECT ?s WHERE { ?s <http://p> ?o VALUES ?s { <http://a> } }", {Feature.VALUES}),
        ("SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o } } }", {Feature.SUBQUERY}),
        ("SELECT ?s WHERE { GRAPH ?g { ?s <http://p> ?o } }", {Feature.NAMED_GRAPHS}),
    ],
)
def test_required_features_from_algebra(sparql: str, features: set[Feature]) -> None:
    assert required_features(spec(sparql)) == frozenset(features | {Feature.RSTREAM})


def test_required_features_from_rspql_parts() -> None:
    w2 = WindowSpec(name="http://ex.org/w2", stream="http://ex.org/s2", range_ms=2000, step_ms=500)
    q = QuerySpec(
        name="q",
        text="",
        sparql="SELECT * WHERE { ?s ?p ?o }",
        windows=[W, w2],
        static_graphs=["http://ex.org/g"],
        r2s=R2S.ISTREAM,
    )
    assert required_features(q) == {
        Feature.MULTI_STREAM,
        Feature.MULTI_WINDOW,
        Feature.STATIC_DATA,
        Feature.ISTREAM,
    }
    caps = Capabilities.of("istream", "multi_window")
    assert caps.missing(required_features(q)) == {Feature.MULTI_STREAM, Feature.STATIC_DATA}


def test_graph_blocks_over_windows_are_not_named_graph_queries() -> None:
    """RSP-QL's WINDOW <w> { … } reads as GRAPH <w> { … } in SPARQL: not NAMED_GRAPHS."""
    body = f"SELECT ?s WHERE {{ GRAPH <{W.name}> {{ ?s <http://p> ?o }} }}"
    assert required_features(spec(body)) == {Feature.RSTREAM}
    other = "SELECT ?s WHERE { GRAPH <http://ex.org/kb> { ?s <http://p> ?o } }"
    assert Feature.NAMED_GRAPHS in required_features(spec(other))


def test_unparsable_sparql_is_input_error() -> None:
    with pytest.raises(InputError) as info:
        required_features(spec("SELECT ?s WHERE { ?s <http://p> "))
    assert "does not parse" in str(info.value) and "query 'q'" in str(info.value)


def test_packing_matches_the_driver_contract() -> None:
    t = pa.table(
        {
            "t_app_ms": pa.array([5, 7, 7], pa.int64()),
            "s": ["<http://a>", "_:b1", "<http://c>"],
            "p": ["<http://p>"] * 3,
            "o": ['"x y"@en', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>', '"q\\"uote\\n"'],
        }
    )
    lines = pack_lines(t)
    b = slice_batches(lines, t["t_app_ms"], [(0, 1), (1, 3)])
    assert b[0] == TripleBatch(b'5 <http://a> <http://p> "x y"@en\n', 1, 5, 5)
    assert b[1].packed.decode().splitlines()[1] == '7 <http://c> <http://p> "q\\"uote\\n"'
    assert (b[1].count, b[1].t_min_ms, b[1].t_max_ms) == (2, 7, 7)
    assert TripleBatch.from_table(t).packed == b[0].packed + b[1].packed
    with pytest.raises(ValueError, match="space"):
        TripleBatch.from_triples([(1, "<a b>", "<p>", "<o>")])


def test_result_events_parse_and_convert() -> None:
    data = (
        b'{"query":"q","t_sys_ns":5,"t_app_ms":1000,"vars":["s","n"],'
        b'"rows":[["<http://a>","\\"3\\"^^<http://www.w3.org/2001/XMLSchema#integer>"],'
        b'["_:b",null]]}\n'
        b'{"query":"q","t_sys_ns":6,"t_app_ms":null,"vars":["s"],"rows":[]}\n'
    )
    ev = ResultEvent.parse_lines(data)
    assert ev[0].bindings == [
        {
            "s": {"type": "uri", "value": "http://a"},
            "n": {
                "type": "literal",
                "value": "3",
                "datatype": "http://www.w3.org/2001/XMLSchema#integer",
            },
        },
        {"s": {"type": "bnode", "value": "b"}},
    ]
    assert ev[1].empty and ev[1].t_app_ms is None
    with pytest.raises(EngineError, match="line 1"):
        ResultEvent.parse_lines(b'{"query":"q","t_sys_ns":1,"vars":["s"],"rows":[["nope"]]}\n')


def test_registry_explicit_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RspError, match="unknown engine 'toy-py'"):
        get_adapter("toy-py")
    monkeypatch.setenv("RSP_ADAPTERS", "tests.fixtures.adapters:ToyPyAdapter,bad.mod:X")
    found, broken = discover()
    assert "toy-py" in found and "bad.mod:X" in broken
    monkeypatch.delenv("RSP_ADAPTERS")
    adapter = register(ToyPyAdapter)
    try:
        assert get_adapter("toy-py") is adapter
    finally:
        unregister("toy-py")
    with pytest.raises(RspError, match="does not provide an rsp_sdk Adapter"):
        register(object())


def test_toy_renderer() -> None:
    assert render_toy(spec('SELECT (COUNT(*) AS ?n) WHERE { ?s <http://p> "v" }')) == (
        'SELECT (COUNT(*) AS ?n) FROM <http://ex.org/s> WHERE { ?s <http://p> "v" } '
        "WINDOW 1000 STEP 500"
    )
