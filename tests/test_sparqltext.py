"""rsp_sdk.query.sparqltext: cutting a SELECT text for dialect renderers (C-SPARQL, CQELS)."""

from __future__ import annotations

import pytest

from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.query.sparqltext import (
    SparqlShapeError,
    duration,
    is_absolute_iri,
    matching_brace,
    only_triples,
    parse_select,
    split_group,
    tokens,
    variables,
    where_group_offset,
    window_named,
    without_comments,
)

QUERY = """PREFIX ex: <http://ex.org/>  # a comment with { and }
SELECT ?s (COUNT(?o) AS ?n) FROM <http://ex.org/g> WHERE {
  ?s ex:p "a { brace" ; ex:q <http://ex.org/x#y> .  # trailing } comment
  FILTER (?o > 3)
  GRAPH ex:w { ?s ex:r ?o }
  BIND(1 AS ?one)
  OPTIONAL { ?s ex:z ?z } .
} GROUP BY ?s
  LIMIT 5
"""


def test_parse_select_cuts_prologue_select_items_and_modifiers() -> None:
    shape = parse_select(QUERY)
    assert shape.prologue == "PREFIX ex: <http://ex.org/>"
    assert shape.select == "SELECT ?s (COUNT(?o) AS ?n)"  # FROM <g> dropped
    assert [i.kind for i in shape.items] == ["triples", "filter", "graph", "bind", "group"]
    triples, filt, graph, bind, group = shape.items
    assert '"a { brace"' in triples.text and "<http://ex.org/x#y>" in triples.text
    assert filt.text == "FILTER (?o > 3)"
    assert graph.name == "http://ex.org/w"  # prefixed name expanded with the query's PREFIX
    assert graph.inner is not None and graph.inner.strip() == "?s ex:r ?o"
    assert bind.text == "BIND(1 AS ?one)"
    assert group.text == "OPTIONAL { ?s ex:z ?z }"
    assert shape.modifiers == "GROUP BY ?s LIMIT 5"


def test_comments_are_blanked_with_offsets_kept() -> None:
    text = 'SELECT * # x {\nWHERE { ?s ?p "#not a comment" } # end'
    out = without_comments(text)
    assert len(out) == len(text)
    assert "x {" not in out and "end" not in out
    assert '"#not a comment"' in out
    assert [t.text for t in tokens(out)] == [t.text for t in tokens(text)]


def test_shape_errors_name_the_problem() -> None:
    with pytest.raises(SparqlShapeError, match="no SELECT"):
        parse_select("ASK { ?s ?p ?o }")
    with pytest.raises(SparqlShapeError, match="no WHERE"):
        parse_select("SELECT ?s")
    with pytest.raises(SparqlShapeError, match="unbalanced"):
        parse_select("SELECT ?s WHERE { ?s ?p ?o ")
    with pytest.raises(SparqlShapeError, match="FILTER without a condition"):
        parse_select("SELECT ?s WHERE { ?s ?p ?o FILTER }")


def test_groups_variables_and_windows() -> None:
    assert only_triples("?s <p> ?o . ?o <q> 1")
    assert not only_triples("?s <p> ?o FILTER(?o > 1)")
    assert [i.kind for i in split_group("?s <p> ?o { ?a ?b ?c } UNION { ?d ?e ?f }")] == [
        "triples",
        "group",
    ]
    assert variables('?s <p> $o FILTER(?x = "?y")') == {"s", "o", "x"}
    w = WindowSpec(
        name="http://rsp-sdk.local/w", stream="http://ex.org/s", range_ms=10_000, step_ms=10_000
    )
    q = QuerySpec(name="q", text="", sparql="", windows=[w])
    assert window_named(q, "w") is w  # relative to the default base
    assert window_named(q, "http://ex.org/s") is w
    assert window_named(q, "http://ex.org/other") is None
    assert window_named(q, None) is None


def test_duration_picks_the_largest_unit() -> None:
    assert duration(10_000) == "10s"
    assert duration(1500) == "1500ms"
    assert duration(120_000, units=("m", "s")) == "2m"
    with pytest.raises(ValueError, match="cannot be written"):
        duration(1500, units=("s",))


def test_where_group_and_braces_skip_strings_iris_comments_and_subselect_parens() -> None:
    text = 'SELECT (COUNT(*) AS ?c) # { not here\nWHERE { ?s <http://x/y> "}{" . { ?a ?b ?c } }'
    brace = where_group_offset(text)
    assert text[brace] == "{" and text[:brace].rstrip().endswith("WHERE")
    assert matching_brace(text, brace) == len(text) - 1
    assert where_group_offset("SELECT * ") == -1 and matching_brace("{ {", 0) == -1


def test_absolute_iris() -> None:
    assert is_absolute_iri("http://ex.org/s") and is_absolute_iri("urn:x")
    assert not is_absolute_iri("w") and not is_absolute_iri("http://ex.org/a b")
