"""RSP-QL (``QuerySpec``) → CQELS-QL.

::

    PREFIX … SELECT ?sensor ?obs
    WHERE { STREAM <http://ex.org/streams/test> [RANGE 10s SLIDE 10s] { ?obs … ?res … . }
            FILTER(?value > 80) }

CQELS-QL puts each window inline as a ``STREAM <s> [RANGE ω SLIDE β] { triples }`` block, and a
stream block holds triple patterns only: the FILTERs of an RSP-QL ``WINDOW <w> { … }`` block
move right after it (allowed when they use only variables the block binds, so the meaning is
unchanged). Static data is a named graph in CQELS (``loadDataset``): patterns outside any window,
which RSP-QL evaluates over the static ``FROM`` graph, are wrapped in ``GRAPH <g> { … }``. A
QuerySpec in the plain form (CSRBench properties: one window, the body ranges over it) has all
its triple patterns in one stream block, its FILTERs after it.

Queries with two aggregates are refused: CQELS 1.x answers 0 for both (seen in the engines lab).
"""

from __future__ import annotations

import re

from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.query.sparqltext import (
    Item,
    SparqlShapeError,
    duration,
    parse_select,
    split_group,
    variables,
    window_named,
)

_AGGREGATE = re.compile(r"\b(COUNT|SUM|AVG|MIN|MAX|SAMPLE|GROUP_CONCAT)\s*\(", re.IGNORECASE)


class RenderError(ValueError):
    """The QuerySpec cannot be written in CQELS-QL (says why)."""


def _stream_block(spec: QuerySpec, window: WindowSpec, items: list[Item]) -> list[str]:
    triples = [" ".join(i.text.split()) for i in items if i.kind == "triples"]
    filters = [" ".join(i.text.split()) for i in items if i.kind == "filter"]
    other = [i for i in items if i.kind not in ("triples", "filter")]
    if other:
        raise RenderError(
            f"query {spec.name!r}: a CQELS stream block holds triple patterns only, but window "
            f"<{window.name}> also has {' '.join(other[0].text.split())[:80]!r}"
        )
    if not triples:
        raise RenderError(f"query {spec.name!r}: window <{window.name}> has no triple pattern")
    bound = set().union(*(variables(t) for t in triples))
    for f in filters:
        outside = variables(f) - bound
        if outside:
            raise RenderError(
                f"query {spec.name!r}: the FILTER {f!r} in window <{window.name}> uses "
                f"{', '.join('?' + v for v in sorted(outside))}, bound outside the window; "
                "CQELS can only filter after the stream block, which would change its meaning"
            )
    rng = duration(window.range_ms, units=_units(window.range_ms))
    step = duration(window.step_ms, units=_units(window.step_ms))
    block = f"STREAM <{window.stream}> [RANGE {rng} SLIDE {step}] {{ {' '.join(triples)} }}"
    return [block, *filters]


def _units(ms: int) -> tuple[str, ...]:
    return ("s",) if ms % 1000 == 0 else ("ms",)


def render_cqels(spec: QuerySpec) -> str:
    """The spec as a CQELS-QL query (one line)."""
    if not spec.windows:
        raise RenderError(f"query {spec.name!r} has no window")
    try:
        shape = parse_select(spec.sparql, spec.prefixes)
    except SparqlShapeError as exc:
        raise RenderError(f"query {spec.name!r}: {exc}") from exc
    if len(_AGGREGATE.findall(shape.select)) > 1:
        raise RenderError(
            f"query {spec.name!r} computes several aggregates; CQELS 1.x answers 0 for each of "
            "them (one aggregate per query works)"
        )
    body: list[str] = []
    if any(i.kind == "graph" and window_named(spec, i.name) for i in shape.items):
        for item in shape.items:
            window = window_named(spec, item.name) if item.kind == "graph" else None
            if window is not None:
                body += _stream_block(spec, window, split_group(item.inner or ""))
            elif item.kind == "triples" and spec.static_graphs:
                if len(spec.static_graphs) > 1:
                    raise RenderError(
                        f"query {spec.name!r} reads {len(spec.static_graphs)} static graphs as "
                        "its default graph; CQELS queries one named graph per GRAPH block"
                    )
                body.append(f"GRAPH <{spec.static_graphs[0]}> {{ {' '.join(item.text.split())} }}")
            else:
                body.append(" ".join(item.text.split()))
    else:
        if len(spec.windows) != 1 or spec.static_graphs:
            raise RenderError(
                f"query {spec.name!r} is plain SPARQL over the union of "
                f"{len(spec.windows)} window(s) and {len(spec.static_graphs)} static graph(s); "
                "CQELS needs to know which patterns read which stream: write WINDOW blocks"
            )
        body = _stream_block(spec, spec.windows[0], list(shape.items))
    parts = [shape.prologue, shape.select, "WHERE {", *body, "}", shape.modifiers]
    return " ".join(p for p in parts if p)
