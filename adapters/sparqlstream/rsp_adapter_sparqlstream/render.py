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

_IRIREF = re.compile(r'<[^<>"{}|^`\\\x00-\x20]*>')
_STRING = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
)
_WHERE_BEFORE = re.compile(r"WHERE\s*$", re.IGNORECASE)


class RenderError(UnsupportedQuery):
    """The query cannot be expressed in SPARQLstream."""

    def __init__(self, message: str, query: str = "") -> None:
        super().__init__("sparqlstream", query, frozenset(), reason=message)


def _skip(text: str, i: int) -> int:
    """End of the comment, IRI or string starting at ``i`` (``i`` itself when none does)."""
    ch = text[i]
    if ch == "#":
        nl = text.find("\n", i)
        return len(text) if nl < 0 else nl + 1
    if ch == "<":
        m = _IRIREF.match(text, i)
        if m:
            return m.end()
    if ch in "\"'":
        m = _STRING.match(text, i)
        if m:
            return m.end()
    return i


def _where_group_offset(sparql: str) -> int:
    """Offset of the top-level WHERE group's ``{`` (first ``{`` outside parentheses), or -1."""
    i, depth, n = 0, 0, len(sparql)
    while i < n:
        j = _skip(sparql, i)
        if j != i:
            i = j
            continue
        ch = sparql[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "{" and depth == 0:
            return i
        i += 1
    return -1


def _matching_brace(text: str, open_at: int) -> int:
    """Offset of the ``}`` closing the ``{`` at ``open_at``, or -1."""
    depth, i, n = 0, open_at, len(text)
    while i < n:
        j = _skip(text, i)
        if j != i:
            i = j
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


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
        close = _matching_brace(sparql, m.end() - 1)
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
    if not _IRIREF.fullmatch(f"<{w.stream}>") or ":" not in w.stream:
        raise RenderError(f"SPARQLstream needs an absolute stream IRI, got {w.stream!r}")
    body = _unwrap_graph(spec.sparql, _spellings(spec, w.name))
    # comment lines (the query file's header) are not part of the query
    body = "\n".join(ln for ln in body.splitlines() if not ln.lstrip().startswith("#"))
    if re.search(r"\bGRAPH\b", _strip_literals(body), re.IGNORECASE):
        raise RenderError("SPARQLstream has no named graphs besides the stream window", spec.name)
    brace = _where_group_offset(body)
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
    """``text`` with comments, IRIs and strings blanked (keyword search outside them)."""
    out, i, n = [], 0, len(text)
    while i < n:
        j = _skip(text, i)
        if j != i:
            out.append(" ")
            i = j
            continue
        out.append(text[i])
        i += 1
    return "".join(out)
