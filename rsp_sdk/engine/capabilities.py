"""What an engine can evaluate, and what a query needs — so a query is refused *before* it
reaches an engine, with the missing feature named.

Real RSP engines each implement a different slice of SPARQL: CQELS 1.x has no OPTIONAL in some
builds, ETALIS' EP-SPARQL knows no aggregates, rsp-js joins only one stream. Sending such a query
to the engine gives at best an obscure parser error and at worst silently wrong answers; the
benchmark must instead record "not supported: optional". ``required_features`` reads the query's
SPARQL algebra (rdflib ``prepareQuery(...).algebra``) plus the RSP-QL parts of the ``QuerySpec``
(windows, static graphs, R2S) and returns the features it uses; an adapter's ``Capabilities``
says which it supports; ``Capabilities.missing`` is the difference.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec


class Feature(StrEnum):
    """One query-language or input feature an engine may or may not support."""

    JOIN = "join"  # more than one triple pattern, or a join of groups
    FILTER = "filter"
    OPTIONAL = "optional"
    UNION = "union"
    NEGATION = "negation"  # MINUS, FILTER (NOT) EXISTS
    AGGREGATES = "aggregates"  # GROUP BY, COUNT, SUM, AVG, MIN, MAX, …
    DISTINCT = "distinct"
    ORDER_BY = "order_by"
    LIMIT = "limit"  # LIMIT / OFFSET
    BIND = "bind"
    VALUES = "values"
    PROPERTY_PATHS = "property_paths"
    SUBQUERY = "subquery"
    NAMED_GRAPHS = "named_graphs"  # GRAPH patterns in the body
    CONSTRUCT = "construct"
    ASK = "ask"
    STATIC_DATA = "static_data"  # background graphs (FROM <g>)
    MULTI_STREAM = "multi_stream"  # windows over more than one stream
    MULTI_WINDOW = "multi_window"  # more than one window
    TIMESTAMP_FUNCTION = "timestamp_function"  # C-SPARQL f:timestamp(?s,?p,?o)
    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"
    # An engine property rather than a query need: the engine takes the application timestamp
    # of each triple (else it runs on the wall clock and the feeder must pace in real time).
    APP_TIME_INPUT = "app_time_input"


_R2S_FEATURE = {
    R2S.RSTREAM: Feature.RSTREAM,
    R2S.ISTREAM: Feature.ISTREAM,
    R2S.DSTREAM: Feature.DSTREAM,
}


class Capabilities(BaseModel):
    """The features an adapter's engine supports (an enum set)."""

    model_config = ConfigDict(frozen=True)

    features: frozenset[Feature] = Field(default_factory=frozenset)

    @classmethod
    def of(cls, *features: Feature | str) -> Capabilities:
        return cls(features=frozenset(Feature(f) for f in features))

    def __contains__(self, feature: object) -> bool:
        return feature in self.features

    def missing(self, required: Iterable[Feature]) -> frozenset[Feature]:
        """The required features this engine lacks (empty: the query can run)."""
        return frozenset(required) - self.features

    def names(self) -> list[str]:
        return sorted(f.value for f in self.features)


def required_features(spec: QuerySpec) -> frozenset[Feature]:
    """Features the query uses: from its SPARQL algebra and its windows, graphs and R2S."""
    from rsp_sdk.query.prepare import prepare_query

    try:
        prepared = prepare_query(spec.sparql, initNs=dict(spec.prefixes))
    except Exception as exc:  # rdflib raises pyparsing errors and plain Exceptions
        raise InputError(
            f"query {spec.name!r}: its SPARQL body does not parse: {exc}",
            text=spec.sparql,
            expected="a SPARQL 1.1 query",
        ) from exc
    found: set[Feature] = set()
    _walk(prepared.algebra, found, frozenset(w.name for w in spec.windows))
    found.add(_R2S_FEATURE[spec.r2s])
    if spec.static_graphs:
        found.add(Feature.STATIC_DATA)
    if len(spec.windows) > 1:
        found.add(Feature.MULTI_WINDOW)
    if len({w.stream for w in spec.windows}) > 1:
        found.add(Feature.MULTI_STREAM)
    return frozenset(found)


_NODE_FEATURES = {
    "Filter": Feature.FILTER,
    "LeftJoin": Feature.OPTIONAL,
    "Union": Feature.UNION,
    "Minus": Feature.NEGATION,
    "Builtin_EXISTS": Feature.NEGATION,
    "Builtin_NOTEXISTS": Feature.NEGATION,
    "Group": Feature.AGGREGATES,
    "AggregateJoin": Feature.AGGREGATES,
    "Distinct": Feature.DISTINCT,
    "Reduced": Feature.DISTINCT,
    "OrderBy": Feature.ORDER_BY,
    "Slice": Feature.LIMIT,
    "values": Feature.VALUES,
    "Graph": Feature.NAMED_GRAPHS,
    "ConstructQuery": Feature.CONSTRUCT,
    "AskQuery": Feature.ASK,
}


def _walk(node: Any, found: set[Feature], windows: frozenset[str] = frozenset()) -> None:
    """Collect the features of an rdflib algebra tree. ``GRAPH <w>`` over one of the query's
    windows is how RSP-QL's ``WINDOW <w> { … }`` reads in SPARQL, not a named-graph query."""
    from rdflib.paths import Path as RdfPath
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        name = node.name
        if name == "Graph" and str(node.get("term")) in windows:
            pass
        elif name in _NODE_FEATURES:
            found.add(_NODE_FEATURES[name])
        if name == "Filter" and type(node.get("expr")).__name__ == "TrueFilter":
            found.discard(Feature.FILTER)  # rdflib's placeholder, not a user FILTER
        if name == "BGP":
            triples = node.get("triples") or []
            if len(triples) > 1:
                found.add(Feature.JOIN)
            if any(isinstance(t[1], RdfPath) for t in triples):
                found.add(Feature.PROPERTY_PATHS)
        elif name == "Join":
            sides = (node.get("p1"), node.get("p2"))
            if not any(_empty_bgp(x) or _is_values(x) for x in sides):
                found.add(Feature.JOIN)
        elif name == "Extend" and not str(node.get("expr")).startswith("__agg_"):
            found.add(Feature.BIND)
        elif name == "Function":
            iri = str(node.get("iri"))
            if iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1].lower() == "timestamp":
                found.add(Feature.TIMESTAMP_FUNCTION)
        elif name == "ToMultiSet" and not _is_values(node):
            found.add(Feature.SUBQUERY)  # a sub-SELECT is ToMultiSet(Project …)
        for key, value in node.items():
            if key != "_vars":
                _walk(value, found, windows)
    elif isinstance(node, list | tuple):
        for item in node:
            _walk(item, found, windows)
    elif isinstance(node, RdfPath):
        found.add(Feature.PROPERTY_PATHS)


def _empty_bgp(node: Any) -> bool:
    from rdflib.plugins.sparql.parserutils import CompValue

    return isinstance(node, CompValue) and node.name == "BGP" and not node.get("triples")


def _is_values(node: Any) -> bool:
    from rdflib.plugins.sparql.parserutils import CompValue

    return (
        isinstance(node, CompValue)
        and node.name == "ToMultiSet"
        and isinstance(node.get("p"), CompValue)
        and node["p"].name == "values"
    )
