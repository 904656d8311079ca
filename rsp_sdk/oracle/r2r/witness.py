"""Which solutions of a query's monotone core the whole query keeps, decided by pyoxigraph.

Under content change the pyoxigraph evaluator re-evaluates a window only where its result can
change: where a solution of the query's monotone core (its BGP and in-fragment filters, found by
Spark SQL) completes. A core that leaves out a filter Spark SQL cannot run (REGEX, STR, …)
would find solutions the query drops — on ren16 Q3 nearly every event. Each such solution is
checked on its own triples: the query, evaluated by pyoxigraph (the evaluator of record) on a
store holding only the triples its patterns instantiate to, answers iff some solution made of
those triples passes every filter. For a monotone query (``monotone_core``) that is exact
where it matters: a solution that passes in a window passes on its own triples, and one found
there is made of triples the window holds too, so no change point is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyoxigraph as ox

from rsp_sdk.oracle.r2r.fragment import ANY_WINDOW, STATIC, Pattern
from rsp_sdk.oracle.r2r.oxigraph import PLAIN_GRAPH


def kept_solutions(
    patterns: Sequence[Pattern],
    names: Sequence[str],
    columns: Sequence[pa.Array],
    *,
    sparql: str,
    base_iri: str,
    window_names: Sequence[str] | None,
) -> npt.NDArray[np.bool_]:
    """For each row (``columns[k]`` the N-Triples term of ``names[k]``): does the query answer
    on the row's own triples? ``window_names``: GRAPH mode (RSP-QL windows), else plain SPARQL
    over the union of the windows."""
    kwargs: dict[str, Any] = {"base_iri": base_iri}
    if window_names is not None:
        kwargs["default_graph"] = ox.DefaultGraph()
        kwargs["named_graphs"] = [ox.NamedNode(n) for n in sorted(set(window_names))]
    else:
        kwargs["default_graph"] = [ox.DefaultGraph(), ox.NamedNode(PLAIN_GRAPH)]
    rows = list(zip(*(c.to_pylist() for c in columns), strict=True))
    store = ox.Store()
    seen: dict[tuple[Any, ...], bool] = {}
    out = np.zeros(len(rows), dtype=np.bool_)
    for i, row in enumerate(rows):
        hit = seen.get(row)
        if hit is None:
            store.clear()
            text = "\n".join(_quads(patterns, dict(zip(names, row, strict=True)), window_names))
            store.extend(ox.parse(text, format=ox.RdfFormat.N_QUADS))
            answers = cast(ox.QuerySolutions, store.query(sparql, **kwargs))
            hit = seen[row] = any(True for _ in answers)
        out[i] = hit
    return out


def _quads(
    patterns: Sequence[Pattern], binding: dict[str, Any], window_names: Sequence[str] | None
) -> list[str]:
    lines = []
    for pat in patterns:
        s, p, o = (n.const if n.var is None else binding[n.var] for n in (pat.s, pat.p, pat.o))
        if pat.graph == STATIC:
            lines.append(f"{s} {p} {o} .")
            continue
        if window_names is None or pat.graph == ANY_WINDOW:
            name = PLAIN_GRAPH
        else:
            name = window_names[pat.graph]
        lines.append(f"{s} {p} {o} <{name}> .")
    return lines
