"""Evaluate the query on arbitrary window borders — what YABench's gracious mode needs.

Gracious mode asks "which window borders would explain what the engine emitted?", so it must
evaluate the query on scopes the oracle never enumerates (a start moved to a later graph, an end
stretched to the next one). This evaluator does exactly that and nothing more, on the same
dataset the oracle's pyoxigraph evaluator builds: static data in the default graph; the stream
triples with ``open <= t_app_ms < close`` either in the named graph of each window (queries whose
``WINDOW <w> { … }`` blocks became ``GRAPH <w> { … }``) or in a plain graph queried together with
the default graph (plain SPARQL bodies). A window's content is an RDF graph, so a triple repeated
inside the scope counts once. Results are cached per scope, since the search revisits borders.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from rsp_sdk.compare.relations import BindingKey, binding_key
from rsp_sdk.model.terms import to_sparql_json

# The graph holding the window content of a plain-SPARQL body (queried with the default graph).
PLAIN_GRAPH = "urn:x-rsp-sdk:window-content"


class WindowEvaluator(Protocol):
    """Evaluates the query on the stream content of a scope [open, close)."""

    def evaluate(self, open_ms: int, close_ms: int) -> Counter[BindingKey]: ...

    def timestamps(self, open_ms: int, close_ms: int) -> list[int]:
        """Distinct application times of the stream in [open, close), ascending."""
        ...

    def next_timestamp(self, after_ms: int) -> int | None:
        """The first distinct application time >= ``after_ms``, or None at the end."""
        ...

    def triples(self, open_ms: int, close_ms: int) -> int: ...


def _nt_lines(table: pa.Table, graph: str | None = None) -> bytes:
    """N-Triples (or N-Quads into ``graph``) text of a table with s, p, o columns."""
    if table.num_rows == 0:
        return b""
    cols = [table.column(c) for c in ("s", "p", "o")]
    if graph is not None:
        cols.append(pa.array([graph] * table.num_rows, pa.string()))
    line = pc.binary_join_element_wise(*cols, ".\n", " ")
    return "".join(line.to_pylist()).encode()


@dataclass
class OxigraphWindowEvaluator:
    """The query's SPARQL body evaluated by pyoxigraph over one stream's triples.

    ``stream`` is a STREAM_SCHEMA table; ``static`` STATIC_SCHEMA tables (default graph);
    ``window_names`` the window IRIs when the body uses ``GRAPH <w>`` for window contents (each
    gets the scope's content), None for a plain body; ``base_iri`` resolves relative IRIs.
    """

    stream: pa.Table
    sparql: str
    static: list[pa.Table] = field(default_factory=list)
    window_names: list[str] | None = None
    base_iri: str | None = None
    _times: npt.NDArray[np.int64] = field(init=False, repr=False)
    _distinct: npt.NDArray[np.int64] = field(init=False, repr=False)
    _cache: dict[tuple[int, int], Counter[BindingKey]] = field(init=False, repr=False)
    _static_nt: bytes = field(init=False, repr=False)
    _graphs: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        times = self.stream.column("t_app_ms").to_numpy()
        if len(times) > 1 and bool(np.any(np.diff(times) < 0)):
            self.stream = self.stream.sort_by("t_app_ms")
            times = self.stream.column("t_app_ms").to_numpy()
        self._times = np.asarray(times, dtype=np.int64)
        self._distinct = np.unique(self._times)
        self._cache = {}
        self._static_nt = b"".join(_nt_lines(t) for t in self.static)
        self._graphs = list(self.window_names) if self.window_names else [PLAIN_GRAPH]

    def _slice(self, open_ms: int, close_ms: int) -> tuple[int, int]:
        lo = int(np.searchsorted(self._times, open_ms, side="left"))
        hi = int(np.searchsorted(self._times, close_ms, side="left"))
        return lo, max(lo, hi)

    def triples(self, open_ms: int, close_ms: int) -> int:
        lo, hi = self._slice(open_ms, close_ms)
        return hi - lo

    def timestamps(self, open_ms: int, close_ms: int) -> list[int]:
        lo = int(np.searchsorted(self._distinct, open_ms, side="left"))
        hi = int(np.searchsorted(self._distinct, close_ms, side="left"))
        return [int(t) for t in self._distinct[lo:hi]]

    def next_timestamp(self, after_ms: int) -> int | None:
        pos = int(np.searchsorted(self._distinct, after_ms, side="left"))
        return int(self._distinct[pos]) if pos < len(self._distinct) else None

    def evaluate(self, open_ms: int, close_ms: int) -> Counter[BindingKey]:
        cached = self._cache.get((open_ms, close_ms))
        if cached is not None:
            return cached
        lo, hi = self._slice(open_ms, close_ms)
        window = self.stream.slice(lo, hi - lo)
        store = ox.Store()
        for graph in self._graphs:
            content = _nt_lines(window, f"<{graph}>")
            if content:
                store.load(content, format=ox.RdfFormat.N_QUADS)
        if self._static_nt:
            store.load(self._static_nt, format=ox.RdfFormat.N_TRIPLES)
        kwargs: dict[str, Any] = {}
        if self.base_iri:
            kwargs["base_iri"] = self.base_iri
        if self.window_names:
            kwargs["default_graph"] = ox.DefaultGraph()
            kwargs["named_graphs"] = [ox.NamedNode(n) for n in self._graphs]
        else:
            kwargs["default_graph"] = [ox.DefaultGraph(), ox.NamedNode(PLAIN_GRAPH)]
        result = store.query(self.sparql, **kwargs)
        if not isinstance(result, ox.QuerySolutions):
            raise ValueError("gracious mode needs a SELECT query")
        names = [v.value for v in result.variables]
        bag: Counter[BindingKey] = Counter()
        for solution in result:
            bag[binding_key(_solution_json(names, solution))] += 1
        self._cache[(open_ms, close_ms)] = bag
        return bag


def _solution_json(
    names: Iterable[str], solution: ox.QuerySolution
) -> dict[str, dict[str, str] | None]:
    out: dict[str, dict[str, str] | None] = {}
    for name in names:
        term = solution[name]
        out[name] = None if term is None else to_sparql_json(str(term))
    return out
