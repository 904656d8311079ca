"""RSP-QL (``QuerySpec``) → C-SPARQL.

::

    REGISTER QUERY q1 AS PREFIX … SELECT ?sensor ?obs
    FROM STREAM <http://ex.org/streams/test> [RANGE 10s STEP 10s]
    FROM <http://ex.org/static>
    WHERE { … }

C-SPARQL evaluates the query body over one model holding the window content *and* the static
graphs, so an RSP-QL ``WINDOW <w> { P }`` block (``GRAPH <w> { P }`` in the QuerySpec's SPARQL)
becomes plain ``P`` when that means the same (P holds only triple patterns, or the body holds
nothing else but FILTERs), and the group ``{ P }`` otherwise; every other element of the body is
kept as written, except that a window block nested in it (in a sub-SELECT, OPTIONAL, UNION…)
becomes the group ``{ P }`` too: left as ``GRAPH <w> { P }`` it asks for a named graph C-SPARQL
never has, and matches nothing (LSBench's nested query ran with empty relations so). A QuerySpec
in the plain form (CSRBench properties: the body already ranges over the window) is kept as it is.

One window only: C-SPARQL builds a single Esper statement per query and applies the window of an
arbitrary one of several FROM STREAM clauses. 0.9.7's window grammar knows whole seconds,
minutes, hours and days only (``RANGE 500ms`` is a parse error); 0.9's also knows ``ms``.
"""

from __future__ import annotations

import re

from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.query.sparqltext import (
    SparqlShapeError,
    duration,
    expand,
    only_triples,
    parse_select,
    tokens,
    window_named,
)

UNITS_097 = ("d", "h", "m", "s")
UNITS_09 = ("s", "ms")


class RenderError(ValueError):
    """The QuerySpec cannot be written in C-SPARQL (says why)."""


# 0.9's parser rejects a query named like a keyword ("REGISTER QUERY filter AS" fails). 0.9.7's
# takes letters and digits only, and its tokens include the space after a keyword ("tumbling "),
# so a name *ending* in one ("qtumbling AS") is cut there.
_KEYWORDS = frozenset(
    {
        *("select", "construct", "describe", "ask", "where", "from", "named", "stream"),
        *("register", "query", "as", "prefix", "base", "filter", "optional", "union", "minus"),
        *("graph", "bind", "values", "group", "by", "having", "order", "asc", "desc", "limit"),
        *("offset", "distinct", "reduced", "count", "sum", "avg", "min", "max", "sample"),
        *("group_concat", "exists", "not", "in", "a", "true", "false", "range", "step"),
        *("tumbling", "service"),
    }
)


_SPACED_097 = (
    *("prefix", "base", "select", "describe", "add", "ask", "construct", "stream", "as"),
    *("named", "step", "tumbling", "triples"),
)


def query_name(spec: QuerySpec) -> str:
    """A C-SPARQL query name (letters and digits, never a keyword) from the last segment of the
    spec's name; results carry the spec's own name whatever the engine calls the query."""
    tail = re.split(r"[/#:]", spec.name.rstrip("/#"))[-1]
    name = re.sub(r"[^A-Za-z0-9]", "", tail) or "query"
    if not name[0].isalpha():
        name = f"q{name}"
    if name.lower() in _KEYWORDS or name.lower().endswith(_SPACED_097):
        name = f"{name}q"
    return name


def render_csparql(spec: QuerySpec, *, units: tuple[str, ...] = UNITS_097) -> str:
    """The spec as a C-SPARQL query (one line)."""
    if len(spec.windows) != 1:
        raise RenderError(
            f"query {spec.name!r} has {len(spec.windows)} windows; C-SPARQL evaluates exactly one "
            "window per query (it applies one FROM STREAM window to all)"
        )
    window = spec.windows[0]
    try:
        shape = parse_select(spec.sparql, spec.prefixes)
        rng = duration(window.range_ms, units=_best(window.range_ms, units))
        step = duration(window.step_ms, units=_best(window.step_ms, units))
    except (SparqlShapeError, ValueError) as exc:
        raise RenderError(f"query {spec.name!r}: {exc}") from exc
    # the window block's content joins the rest of the body: inline it when that changes
    # nothing (only triple patterns, or nothing else in the body but FILTERs), else keep it a group
    prefixes = _prefixes(spec, shape.prologue)
    alone = sum(1 for i in shape.items if i.kind != "filter") == 1
    body: list[str] = []
    for n, item in enumerate(shape.items):
        if item.kind == "graph" and window_named(spec, item.name) is window:
            inner = " ".join((item.inner or "").split())
            flat = alone or only_triples(inner, spec.prefixes)
            after = shape.items[n + 1] if n + 1 < len(shape.items) else None
            if flat and after is not None and after.kind == "triples":  # two blocks: `.` between
                inner = inner.rstrip(" .") + " ."
            body.append(inner if flat else f"{{ {inner} }}")
        else:
            body.append(" ".join(_unwrap_window(item.text, spec, window, prefixes).split()))
    parts = [
        f"REGISTER QUERY {query_name(spec)} AS",
        shape.prologue,
        shape.select,
        f"FROM STREAM <{window.stream}> [RANGE {rng} STEP {step}]",
        *(f"FROM <{g}>" for g in spec.static_graphs),
        "WHERE {",
        *body,
        "}",
        shape.modifiers,
    ]
    return " ".join(p for p in parts if p)


def _prefixes(spec: QuerySpec, prologue: str) -> dict[str, str]:
    """The spec's prefixes and the query's own PREFIX declarations (to expand ``GRAPH ex:w``)."""
    known = dict(spec.prefixes)
    toks = tokens(prologue)
    for i, t in enumerate(toks[:-2]):
        if t.is_word("PREFIX") and toks[i + 2].kind == "iri":
            known.setdefault(toks[i + 1].text[:-1], toks[i + 2].text[1:-1])
    return known


def _unwrap_window(text: str, spec: QuerySpec, window: WindowSpec, prefixes: dict[str, str]) -> str:
    """``text`` with every nested ``GRAPH <window> { P }`` written as the group ``{ P }``."""
    toks = tokens(text)
    out: list[str] = []
    pos = 0
    for i, t in enumerate(toks[:-2]):
        nested = t.is_word("GRAPH") and toks[i + 2].text == "{"
        if nested and window_named(spec, expand(toks[i + 1], prefixes)) is window:
            out.append(text[pos : t.start])
            pos = toks[i + 2].start
    return "".join(out) + text[pos:]


def _best(ms: int, units: tuple[str, ...]) -> tuple[str, ...]:
    """Seconds when they divide the duration (how C-SPARQL queries are written), else larger or
    smaller units the dialect knows."""
    if "s" in units and ms % 1000 == 0:
        return ("s",)
    return units
