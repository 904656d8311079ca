"""The workload the conformance suite drives an adapter with (adapters may override it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.model.stream import STREAM_SCHEMA

NS = "http://rsp-sdk.org/conformance/"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def default_query(stream: str) -> QuerySpec:
    sparql = f"SELECT ?s ?o WHERE {{ ?s <{NS}p0> ?o }}"
    return QuerySpec(
        name="conformance",
        text=(
            f"REGISTER RSTREAM <{NS}q> AS SELECT ?s ?o FROM NAMED WINDOW <{NS}w> ON <{stream}> "
            f"[RANGE PT1S STEP PT1S] WHERE {{ WINDOW <{NS}w> {{ ?s <{NS}p0> ?o }} }}"
        ),
        sparql=sparql,
        variables=["s", "o"],
        windows=[WindowSpec(name=f"{NS}w", stream=stream, range_ms=1000, step_ms=1000)],
    )


# One small query per feature, to check that an adapter refuses what it declares unsupported.
FEATURE_PROBES: dict[Feature, str] = {
    Feature.OPTIONAL: f"SELECT ?s ?o WHERE {{ ?s <{NS}p0> ?o OPTIONAL {{ ?s <{NS}p1> ?x }} }}",
    Feature.UNION: f"SELECT ?s WHERE {{ {{ ?s <{NS}p0> ?o }} UNION {{ ?s <{NS}p1> ?o }} }}",
    Feature.NEGATION: f"SELECT ?s WHERE {{ ?s <{NS}p0> ?o MINUS {{ ?s <{NS}p1> ?x }} }}",
    Feature.FILTER: f"SELECT ?s WHERE {{ ?s <{NS}p0> ?o FILTER(?o > 3) }}",
    Feature.JOIN: f"SELECT ?s WHERE {{ ?s <{NS}p0> ?o . ?o <{NS}p1> ?x }}",
    Feature.AGGREGATES: f"SELECT (COUNT(?s) AS ?n) WHERE {{ ?s <{NS}p0> ?o }}",
    Feature.PROPERTY_PATHS: f"SELECT ?s WHERE {{ ?s <{NS}p0>/<{NS}p1> ?o }}",
}


@dataclass(frozen=True)
class Scenario:
    """Stream, query and expectations for one adapter.

    ``triples`` triples spread evenly over ``span_ms`` of application time, subjects
    ``<…/s{i}>``, predicates alternating ``<…/p0>``/``<…/p1>``, integer objects; the default
    query selects the p0 half through a 1 s tumbling window. ``expect_complete``: every matching
    triple must show up in some result (turn off for wall-clock engines that may drop data).
    ``invalid_query`` is text the engine's own parser must reject. ``computes_literals``: the
    query outputs values it computes (aggregates, BIND), so a literal in a result need not be a
    pushed term; otherwise every output term must be one the scenario pushed.
    """

    stream: str = f"{NS}stream"
    triples: int = 25_000
    span_ms: int = 5_000
    batch_size: int = 10_000
    query: QuerySpec | None = None
    invalid_query: str = "THIS IS NOT A QUERY {"
    config: dict[str, Any] = field(default_factory=dict)
    expect_complete: bool = True
    computes_literals: bool = False

    def spec(self) -> QuerySpec:
        return self.query or default_query(self.stream)

    def table(self) -> pa.Table:
        n = self.triples
        return pa.table(
            {
                "stream": [self.stream] * n,
                "t_app_ms": pa.array([i * self.span_ms // n for i in range(n)], pa.int64()),
                "s": [f"<{NS}s{i}>" for i in range(n)],
                "p": [f"<{NS}p{i % 2}>" for i in range(n)],
                "o": [f'"{i}"^^<{XSD_INTEGER}>' for i in range(n)],
                "g": pa.nulls(n, pa.string()),
            },
            schema=STREAM_SCHEMA,
        )
