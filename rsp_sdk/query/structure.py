"""A query's structure, for dialect renderers that build their own query form.

Renderers of SPARQL-like dialects cut the user's text (``rsp_sdk.query.sparqltext``); an engine
with its own query form (JSON, an operator graph, Prolog rules) needs the *structure* instead:
which variables are projected, which triple patterns are matched, which aggregates are computed
and which features the query uses. ``query_structure`` reads that once from the SPARQL algebra
(rdflib's parser, the same one the capability check uses), so every adapter does not have to
walk rdflib's ``CompValue`` trees itself. Terms come out in N-Triples syntax (``<iri>``,
``"5"^^<…#integer>``, ``_:b``) and variables as ``?name``: the syntax of pushed triples, so an
engine compares them with stream terms as plain strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rsp_sdk.engine.capabilities import Feature, required_features
from rsp_sdk.model.query import QuerySpec

__all__ = ["Aggregate", "QueryStructure", "TriplePattern", "query_structure"]


@dataclass(frozen=True, slots=True)
class TriplePattern:
    """One triple pattern: each position an N-Triples term or a ``?variable``."""

    s: str
    p: str
    o: str

    def variables(self) -> list[str]:
        """The variable names (without ``?``) in s, p, o order."""
        return [t[1:] for t in (self.s, self.p, self.o) if t.startswith("?")]


@dataclass(frozen=True, slots=True)
class Aggregate:
    """``(FUNCTION([DISTINCT] ?argument) AS ?variable)``; ``argument`` None is ``*``."""

    variable: str
    function: str  # count, sum, avg, min, max, sample, group_concat (lower case)
    argument: str | None
    distinct: bool


@dataclass(frozen=True, slots=True)
class QueryStructure:
    """What a renderer needs to know about a SELECT query (see ``query_structure``)."""

    projection: tuple[str, ...]  # projected variable names, in SELECT order
    # every triple pattern of the WHERE clause (within one BGP in rdflib's join order)
    triples: tuple[TriplePattern, ...]
    aggregates: tuple[Aggregate, ...]
    group_by: tuple[str, ...]  # GROUP BY variable names
    features: frozenset[Feature]  # what the query uses, as the capability check sees it

    def only(self, *allowed: Feature) -> list[Feature]:
        """The features used beyond ``allowed`` (R2S features excluded): what a renderer
        cannot express, so it can name them in its error."""
        r2s = {Feature.RSTREAM, Feature.ISTREAM, Feature.DSTREAM}
        return sorted(self.features - set(allowed) - r2s)


def query_structure(spec: QuerySpec) -> QueryStructure:
    """The projection, triple patterns, aggregates and features of ``spec``'s SPARQL body.

    Raises ``rsp_sdk.errors.InputError`` when the SPARQL does not parse (naming the query).
    """
    from rsp_sdk.query.prepare import prepare_query

    features = required_features(spec)  # parses first, with the SDK's error message
    algebra = prepare_query(spec.sparql, initNs=dict(spec.prefixes), base=spec.base_iri).algebra
    found = _Found()
    found.walk(algebra)
    aggregates = [found.aggregate(res, var) for res, var in found.extends]
    return QueryStructure(
        projection=tuple(str(v) for v in algebra.get("PV") or ()),
        triples=tuple(found.triples),
        # rdflib projects a GROUP BY key through an implicit SAMPLE(?key) AS ?key: not the user's
        aggregates=tuple(
            a for a in aggregates if not (a.function == "sample" and a.argument == a.variable)
        ),
        group_by=tuple(found.group_by),
        features=features,
    )


class _Found:
    """What one walk over rdflib's algebra collects."""

    def __init__(self) -> None:
        self.triples: list[TriplePattern] = []
        self.raw_aggregates: dict[str, Any] = {}  # rdflib's __agg_N → Aggregate_* node
        self.extends: list[tuple[str, str]] = []  # (__agg_N, user variable)
        self.group_by: list[str] = []

    def walk(self, node: Any) -> None:
        from rdflib.plugins.sparql.parserutils import CompValue

        if isinstance(node, CompValue):
            self.visit(node)
            for key, value in node.items():
                if key != "_vars":
                    self.walk(value)
        elif isinstance(node, list | tuple):
            for item in node:
                self.walk(item)

    def visit(self, node: Any) -> None:
        name = node.name
        if name == "BGP":
            self.triples.extend(TriplePattern(*(_term(t) for t in tr)) for tr in node["triples"])
        elif name == "AggregateJoin":
            for agg in node["A"]:
                self.raw_aggregates[str(agg["res"])] = agg
        elif name == "Extend" and str(node["expr"]).startswith("__agg_"):
            self.extends.append((str(node["expr"]), str(node["var"])))
        elif name == "Group" and node.get("expr"):
            self.group_by.extend(str(e) for e in node["expr"])

    def aggregate(self, res: str, var: str) -> Aggregate:
        agg = self.raw_aggregates[res]
        arg = agg.get("vars")
        return Aggregate(
            variable=var,
            function=agg.name.removeprefix("Aggregate_").lower(),
            argument=None if arg is None or str(arg) == "*" else str(arg),
            distinct=agg.get("distinct") == "DISTINCT",
        )


def _term(node: Any) -> str:
    """An rdflib term in N-Triples syntax, a variable as ``?name``."""
    from rdflib import BNode, Literal, URIRef, Variable

    if isinstance(node, Variable):
        return f"?{node}"
    if isinstance(node, URIRef | Literal | BNode):
        return str(node.n3())
    raise ValueError(f"{node!r} is not a term (a property path?)")
