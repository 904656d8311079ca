"""``QuerySpec`` → the RSP-QL text rsp-js 1.3.5 accepts.

rsp-js's ``RSPQLParser`` is line-based, not a grammar (see its src/rspql.ts): a line starting
with ``REGISTER`` names the R2S and is dropped; a line starting with ``FROM NAMED WINDOW`` must
read ``FROM NAMED WINDOW <w> ON STREAM <s> [RANGE n STEP m]`` (``ON STREAM``, plain numbers in the
stream's time unit — here milliseconds) and is dropped; every other line goes to Comunica as
SPARQL, with a leading ``WINDOW`` turned into ``GRAPH``; the engine puts each window's triples in
the named graph of the window. So the rendering is:

* one ``REGISTER RStream <name> AS`` line (rsp-js only does Rstream, whatever the query says);
* one ``FROM NAMED WINDOW`` line per window, with full IRIs (its prefix expansion splits at the
  first colon and maps relative IRIs to nothing);
* the query's SPARQL body, in which the parser already turned each ``WINDOW <w> {`` into
  ``GRAPH <w> {`` — exactly what rsp-js hands Comunica;
* dataset clauses where the SPARQL needs them: a plain-SPARQL body (CSRBench form, no WINDOW
  blocks) reads the union of the windows as its default graph, so it gets ``FROM <w>`` per
  window; static graphs (which the driver loads as named graphs) become ``FROM <g>``, with
  ``FROM NAMED <w>`` so the window graphs stay visible to the GRAPH blocks.
"""

from __future__ import annotations

import re

from rsp_sdk.engine import UnsupportedQuery
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.sparqltext import is_absolute_iri, where_group_offset

_WHERE_BEFORE = re.compile(r"WHERE\s*$", re.IGNORECASE)


class RenderError(UnsupportedQuery):
    """The query cannot be expressed in rsp-js's dialect."""

    def __init__(self, message: str, query: str = "") -> None:
        super().__init__("rspjs", query, frozenset(), reason=message)


def _with_dataset(sparql: str, clauses: list[str]) -> str:
    """``sparql`` with dataset clauses inserted before its WHERE group, one per line."""
    brace = where_group_offset(sparql)
    if brace < 0:
        raise RenderError("the query has no WHERE { … } group")
    m = _WHERE_BEFORE.search(sparql, 0, brace)
    at = m.start() if m else brace
    return sparql[:at] + "\n" + "\n".join(clauses) + "\n" + sparql[at:]


def _check_iri(iri: str, what: str) -> str:
    if not is_absolute_iri(iri):
        raise RenderError(f"rsp-js needs an absolute IRI for the {what}, got {iri!r}")
    return iri


def render_rspjs(spec: QuerySpec) -> str:
    """The query as rsp-js text; ``RenderError`` for what rsp-js cannot express."""
    if not spec.windows:
        raise RenderError("rsp-js evaluates queries over windows only", spec.name)
    streams = [w.stream for w in spec.windows]
    dup = sorted({s for s in streams if streams.count(s) > 1})
    if dup:
        raise RenderError(
            "rsp-js keeps one window per stream (its RSPEngine maps each stream IRI to one "
            f"RDFStream, so the other windows would never get data); <{dup[0]}> has "
            f"{streams.count(dup[0])}",
            spec.name,
        )
    window_graphs = bool(getattr(spec, "window_graphs", _uses_window_graphs(spec)))
    lines = [f"REGISTER RStream <{_query_iri(spec.name)}> AS"]
    for w in spec.windows:
        lines.append(
            f"FROM NAMED WINDOW <{_check_iri(w.name, 'window')}> ON STREAM "
            f"<{_check_iri(w.stream, 'stream')}> [RANGE {w.range_ms} STEP {w.step_ms}]"
        )
    clauses: list[str] = []
    if not window_graphs:
        clauses += [f"FROM <{w.name}>" for w in spec.windows]
        clauses += [f"FROM <{_check_iri(g, 'static graph')}>" for g in spec.static_graphs]
    elif spec.static_graphs:
        clauses += [f"FROM <{_check_iri(g, 'static graph')}>" for g in spec.static_graphs]
        clauses += [f"FROM NAMED <{w.name}>" for w in spec.windows]
    body = _with_dataset(spec.sparql, clauses) if clauses else spec.sparql
    for number, line in enumerate(body.splitlines(), 1):
        head = line.strip()
        if head.startswith(("REGISTER", "FROM NAMED WINDOW", "WINDOW")):
            raise RenderError(
                f"line {number} of the SPARQL body starts with {head.split()[0]!r}, which "
                f"rsp-js's line-based parser would take for an RSP-QL clause: {head[:120]!r}",
                spec.name,
            )
    lines.append(body)
    return "\n".join(lines) + "\n"


def _uses_window_graphs(spec: QuerySpec) -> bool:
    """Whether the body reads the windows as named graphs (``GRAPH <w>``), for QuerySpecs made
    before the model recorded it."""
    return any(re.search(rf"GRAPH\s*<{re.escape(w.name)}>", spec.sparql) for w in spec.windows)


def _query_iri(name: str) -> str:
    if is_absolute_iri(name):
        return name
    return "urn:rsp-sdk:query:" + re.sub(r'[<>"{}|^`\\\x00-\x20]', "_", name)
