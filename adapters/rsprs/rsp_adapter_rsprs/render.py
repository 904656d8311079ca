"""``QuerySpec`` → the RSP-QL text rsp-rs 0.3.5 accepts.

rsp-rs's ``RSPQLParser`` (src/parsing/rspql_parser.rs) is rsp-js's line-based parser ported to
Rust, not a grammar: every line is trimmed; a line starting with ``REGISTER`` is matched against
``REGISTER +(op) +<(iri)> AS`` and dropped (the operator is recorded, never used: results are
always the whole evaluation, Rstream); a line starting with ``FROM NAMED WINDOW`` must match
``FROM NAMED WINDOW w ON STREAM s [RANGE n STEP m]`` (single spaces inside the brackets, integers
in the stream's time unit — milliseconds here; ``<iri>`` or ``prefix:local`` with a PREFIX seen
on an earlier line, anything else silently becomes the empty IRI) and is dropped; every other
line goes to Oxigraph as SPARQL, with every ``WINDOW`` on a line starting with it turned into
``GRAPH``. The engine puts each window's triples in the named graph of the window, so:

* one ``REGISTER RStream <name> AS`` line;
* one ``FROM NAMED WINDOW`` line per window, with full IRIs;
* the query's SPARQL body, whose ``WINDOW <w> {`` blocks our parser already turned into
  ``GRAPH <w> {`` — what rsp-rs hands Oxigraph;
* dataset clauses where the SPARQL needs them: Oxigraph's default graph is its own default
  graph (not the union of the named ones), so a plain-SPARQL body (CSRBench form, no WINDOW
  blocks) gets ``FROM <w>`` per window; static graphs (which the driver loads as named graphs)
  become ``FROM <g>``, with ``FROM NAMED <w>`` so the window graphs stay visible to GRAPH blocks.
"""

from __future__ import annotations

import re

from rsp_sdk.engine import UnsupportedQuery
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.sparqltext import is_absolute_iri, where_group_offset

_WHERE_BEFORE = re.compile(r"WHERE\s*$", re.IGNORECASE)


class RenderError(UnsupportedQuery):
    """The query cannot be expressed in rsp-rs's dialect."""

    def __init__(self, message: str, query: str = "") -> None:
        super().__init__("rsprs", query, frozenset(), reason=message)


def _with_dataset(sparql: str, clauses: list[str]) -> str:
    """``sparql`` with dataset clauses inserted before its WHERE group, one per line."""
    brace = where_group_offset(sparql)
    if brace < 0:
        raise RenderError("the query has no WHERE { … } group")
    m = _WHERE_BEFORE.search(sparql, 0, brace)
    at = m.start() if m else brace
    return sparql[:at] + "\n" + "\n".join(clauses) + "\n" + sparql[at:]


def _check_iri(iri: str, what: str) -> str:
    if not is_absolute_iri(iri) or " " in iri:
        raise RenderError(f"rsp-rs needs an absolute IRI for the {what}, got {iri!r}")
    return iri


def _check_windows(spec: QuerySpec) -> None:
    if not spec.windows:
        raise RenderError("rsp-rs evaluates queries over windows only", spec.name)
    streams = [w.stream for w in spec.windows]
    dup = sorted({s for s in streams if streams.count(s) > 1})
    if dup:
        raise RenderError(
            "rsp-rs keeps one window per stream (its RSPEngine maps each stream IRI to one "
            f"RDFStream, so the other windows would never get data); <{dup[0]}> has "
            f"{streams.count(dup[0])}",
            spec.name,
        )


def _check_body(spec: QuerySpec, body: str) -> None:
    for number, line in enumerate(body.splitlines(), 1):
        head = line.strip()
        if head.startswith(("REGISTER", "FROM NAMED WINDOW", "WINDOW")):
            raise RenderError(
                f"line {number} of the SPARQL body starts with {head.split()[0]!r}, which "
                f"rsp-rs's line-based parser would take for an RSP-QL clause: {head[:120]!r}",
                spec.name,
            )


def render_rsprs(spec: QuerySpec) -> str:
    """The query as rsp-rs text; ``RenderError`` for what rsp-rs cannot express."""
    _check_windows(spec)
    window_graphs = bool(getattr(spec, "window_graphs", _uses_window_graphs(spec)))
    lines = [f"REGISTER RStream <{_query_iri(spec.name)}> AS"]
    for w in spec.windows:
        lines.append(
            f"FROM NAMED WINDOW <{_check_iri(w.name, 'window')}> ON STREAM "
            f"<{_check_iri(w.stream, 'stream')}> [RANGE {w.range_ms} STEP {w.step_ms}]"
        )
    statics = [f"FROM <{_check_iri(g, 'static graph')}>" for g in spec.static_graphs]
    clauses: list[str] = []
    if not window_graphs:
        clauses = [f"FROM <{w.name}>" for w in spec.windows] + statics
    elif statics:
        clauses = statics + [f"FROM NAMED <{w.name}>" for w in spec.windows]
    body = _with_dataset(spec.sparql, clauses) if clauses else spec.sparql
    _check_body(spec, body)
    lines.append(body)
    return "\n".join(lines) + "\n"


def _uses_window_graphs(spec: QuerySpec) -> bool:
    """Whether the body reads the windows as named graphs (``GRAPH <w>``), for QuerySpecs made
    before the model recorded it."""
    return any(re.search(rf"GRAPH\s*<{re.escape(w.name)}>", spec.sparql) for w in spec.windows)


def _query_iri(name: str) -> str:
    if is_absolute_iri(name) and ">" not in name and " " not in name:
        return name
    return "urn:rsp-sdk:query:" + re.sub(r'[<>"{}|^`\\\x00-\x20]', "_", name)
