"""Which stream elements can matter to a query at all.

A SPARQL SELECT query reads the dataset only through its triple patterns (including those in
OPTIONAL, UNION, MINUS, EXISTS and subqueries): a triple that matches none of them — constants
compared, variables and blank nodes as wildcards — can never change a solution. Dropping such
elements before evaluation is exact, shrinks what Spark shuffles, and lets the content-change
evaluator reuse the previous result for events that bring only irrelevant elements. Property
paths traverse arbitrary triples, so a query with a path keeps everything.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from rdflib.paths import Path
from rdflib.plugins.sparql.algebra import triples
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import BNode, URIRef, Variable

from rsp_sdk.model.query import QuerySpec
from rsp_sdk.oracle.encoding import isin_mask
from rsp_sdk.oracle.r2r.fragment import ANY_WINDOW, STATIC, term_nt

Constraint = tuple[int, str | None, str | None, str | None]


class _PathFound(Exception):
    pass


def _const(term: Any) -> str | None:
    if isinstance(term, Variable | BNode):
        return None
    if isinstance(term, Path | CompValue):  # a path (CompValue: as parsed, inside EXISTS)
        raise _PathFound
    return term_nt(term)


def _walk(node: Any, graph: int, query: QuerySpec, out: list[Constraint]) -> None:
    if isinstance(node, CompValue):
        if node.name in ("Graph", "GraphGraphPattern"):  # the latter: as parsed, in EXISTS
            term = node.get("term")
            names = [w.name for w in query.windows]
            if isinstance(term, URIRef):
                inner = names.index(str(term)) if str(term) in names else STATIC
            else:
                inner = ANY_WINDOW
            _walk(node.get("p", node.get("graph")), inner, query, out)
            return
        if node.name == "BGP":
            for s, p, o in node.get("triples") or []:
                out.append((graph, _const(s), _const(p), _const(o)))
        elif node.name == "TriplesBlock":
            # rdflib leaves the pattern of an EXISTS / NOT EXISTS filter as parsed (translated
            # only when evaluated): its triples, flattened per subject, constrain like a BGP's
            for s, p, o in triples(node.get("triples") or []):
                out.append((graph, _const(s), _const(p), _const(o)))
        for value in node.values():
            _walk(value, graph, query, out)
    elif isinstance(node, list | tuple):
        for value in node:
            _walk(value, graph, query, out)
    elif isinstance(node, dict):
        for value in node.values():
            _walk(value, graph, query, out)


def constraints(query: QuerySpec, algebra: Any) -> list[Constraint] | None:
    """Triple-pattern constraints per window (None: keep every element)."""
    out: list[Constraint] = []
    try:
        _walk(algebra, STATIC if query.window_graphs else ANY_WINDOW, query, out)
    except _PathFound:
        return None
    return sorted(set(out), key=str)


def relevant(table: pa.Table, window: int, found: list[Constraint] | None) -> np.ndarray:
    """Mask of the rows (s, p, o) of window ``window`` that match some pattern over it.

    Patterns that fix only their predicate are tested together (one ``is_in`` over the
    predicates); each other (column, constant) comparison runs once, however many patterns
    share it: string comparisons over every row are most of the cost at millions of rows, so a
    dictionary-encoded column compares its distinct values and looks the rows up."""
    if found is None:
        return np.ones(table.num_rows, dtype=bool)
    mask = np.zeros(table.num_rows, dtype=bool)
    mine = [c for c in found if c[0] in (window, ANY_WINDOW)]
    only_p = sorted({p for _, s, p, o in mine if s is None and p is not None and o is None})
    if only_p:
        mask |= isin_mask(table.column("p"), only_p)
    equal: dict[tuple[str, str], np.ndarray] = {}
    for _, s, p, o in mine:
        if s is None and p is not None and o is None:
            continue
        cond = np.ones(table.num_rows, dtype=bool)
        for col, const in (("s", s), ("p", p), ("o", o)):
            if const is not None:
                if (col, const) not in equal:
                    equal[col, const] = isin_mask(table.column(col), [const])
                cond &= equal[col, const]
        mask |= cond
    return mask
