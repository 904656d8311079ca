"""``QuerySpec`` → SPARQLstream query text (morph-streams' ``sparqlstream.jj`` grammar).

A SPARQLstream query is SPARQL with one more dataset clause,
``FROM NAMED STREAM <s> [NOW - ω UNIT SLIDE β UNIT]``, whose window covers the whole WHERE
group: the body names no window (CSRBench's hand-written queries in
``sparqlStream_Evaluation/…/queries/srbench``). So the rendering is

* the query's own prefixes and SELECT clause, as parsed (``spec.sparql``, in which the REGISTER
  and ``FROM NAMED WINDOW`` clauses are already blanked out);
* one ``FROM NAMED STREAM`` clause before WHERE, ω and β in whole seconds (``S``) when they are,
  else milliseconds (``MS``) — both units of the grammar;
* the body with the window's ``GRAPH <w> { … }`` block (what the parser made of
  ``WINDOW <w> { … }``) unwrapped: its content is the WHERE group's.

What SPARQLstream cannot say is refused (``UnsupportedQuery``): several windows (the grammar
allows several streams but a body cannot tell which pattern reads which window — morph binds
each triples map to one stream through the mapping's ``rr:graph``), static data (the driver's
R2RML mapping has no static part), and Istream/Dstream: morph writes every window as Esper's
``output snapshot every β``, which reports the whole window — Rstream — and its ISTREAM/DSTREAM
keywords only prefix the EPL SELECT (``RSTREAM`` even becomes Esper's ``IRSTREAM``), so the
adapter offers Rstream only.
"""

from __future__ import annotations

import re

from rsp_sdk.engine import UnsupportedQuery
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.sparqltext import is_absolute_iri, matching_brace, tokens, where_group_offset

_WHERE_BEFORE = re.compile(r"WHERE\s*$", re.IGNORECASE)


class RenderError(UnsupportedQuery):
    """The query cannot be expressed in SPARQLstream."""

    def __init__(self, message: str, query: str = "") -> None:
        super().__init__("sparqlstream", query, frozenset(), reason=message)


def _spellings(spec: QuerySpec, iri: str) -> list[str]:
    """How the query text may write ``iri``: ``<iri>``, a prefixed name, a relative IRI."""
    out = [f"<{iri}>"]
    for prefix, ns in spec.prefixes.items():
        if ns and iri.startswith(ns) and re.fullmatch(r"[\w.-]*", iri[len(ns) :]):
            out.append(f"{prefix}:{iri[len(ns) :]}")
    if iri.startswith(spec.base_iri):
        out.append(f"<{iri[len(spec.base_iri) :]}>")
    return out


def _unwrap_graph(sparql: str, spellings: list[str]) -> str:
    """``sparql`` with every ``GRAPH w { … }`` (``w`` one of ``spellings``) replaced by its
    content."""
    alts = "|".join(re.escape(s) for s in spellings)
    pattern = re.compile(r"GRAPH\s*(?:" + alts + r")\s*\{")
    while True:
        m = pattern.search(sparql)
        if m is None:
            return sparql
        close = matching_brace(sparql, m.end() - 1)
        if close < 0:
            raise RenderError(f"unbalanced braces in the GRAPH {spellings[0]} block")
        sparql = sparql[: m.start()] + sparql[m.end() : close] + sparql[close + 1 :]


def duration(ms: int) -> str:
    """A window length in the grammar's units: whole seconds as ``n S``, else ``n MS``."""
    return f"{ms // 1000} S" if ms % 1000 == 0 else f"{ms} MS"


def render_sparqlstream(spec: QuerySpec) -> str:
    """The query as SPARQLstream text; ``RenderError`` for what SPARQLstream cannot express."""
    if len(spec.windows) != 1:
        raise RenderError(
            f"the SPARQLstream adapter renders queries over exactly one window (got "
            f"{len(spec.windows)}): a SPARQLstream body cannot say which pattern reads which "
            "stream window",
            spec.name,
        )
    if spec.static_graphs:
        raise RenderError(
            "SPARQLstream reads tuples through an R2RML mapping; the adapter has no static data",
            spec.name,
        )
    if spec.r2s is not R2S.RSTREAM:
        raise RenderError(
            f"{spec.r2s.value}: morph-streams reports each window as an Esper output snapshot "
            "(Rstream); its ISTREAM/DSTREAM keywords do not give the RSP-QL operators",
            spec.name,
        )
    w = spec.windows[0]
    if not is_absolute_iri(w.stream):
        raise RenderError(f"SPARQLstream needs an absolute stream IRI, got {w.stream!r}")
    body = _unwrap_graph(spec.sparql, _spellings(spec, w.name))
    # comment lines (the query file's header) are not part of the query
    body = "\n".join(ln for ln in body.splitlines() if not ln.lstrip().startswith("#"))
    if re.search(r"\bGRAPH\b", _strip_literals(body), re.IGNORECASE):
        raise RenderError("SPARQLstream has no named graphs besides the stream window", spec.name)
    brace = where_group_offset(body)
    if brace < 0:
        raise RenderError("the query has no WHERE { … } group", spec.name)
    m = _WHERE_BEFORE.search(body, 0, brace)
    at = m.start() if m else brace
    clause = (
        f"FROM NAMED STREAM <{w.stream}> [NOW - {duration(w.range_ms)} SLIDE {duration(w.step_ms)}]"
    )
    text = body[:at].rstrip() + "\n" + clause + "\n" + body[at:].lstrip()
    # the blanked REGISTER / FROM NAMED WINDOW clauses and the unwrapped block leave blank lines
    return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip()) + "\n"


def _strip_literals(text: str) -> str:
    """``text``'s tokens with IRIs and strings blanked, comments dropped (keyword search)."""
    return " ".join(" " if tok.kind in ("iri", "string") else tok.text for tok in tokens(text))
