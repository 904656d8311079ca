"""The complete evaluator: each window's content in a pyoxigraph store, all of SPARQL 1.1.

Runs inside Spark Python workers (``applyInArrow`` per window group), or on the driver for
small inputs (``job.DRIVER_ROWS``). One group is everything
the reports of one window-close instant ``c`` need: the elements of every window's scope
[c − ω_w, c) and the report *events* (content keys (c, B, R)). Elements are added to the store in
stream order and the query is evaluated at each event, so a content-change group costs one load
and one evaluation per report — never one load per report.

Static data is parsed into the default graph once per worker process (cached by its digest) and
stays; window contents go to named graphs that are dropped after each group. Window content is
an RDF graph, i.e. a set: an element repeated within a window counts once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from rsp_sdk.errors import InputError
from rsp_sdk.model.terms import to_oxigraph
from rsp_sdk.oracle.encoding import worker_terms

PLAIN_GRAPH = "urn:x-rsp-sdk:window-content"

OUTPUT_SCHEMA = pa.schema(
    [
        pa.field("kc", pa.int64()),
        pa.field("kb", pa.int64()),
        pa.field("kr", pa.int64()),
        pa.field("terms", pa.list_(pa.string())),
    ]
)

_STATIC_STORES: dict[str, ox.Store] = {}

# result rows one evaluation may hold (a group, or on the driver a part's groups together; the
# solutions of each query and the rows they add to the output both count): ~250 bytes a row as
# Python tuples of shared strings before they become Arrow. Parts aim at ~1 M rows
# (``job.PART_ROWS``), but their size is learnt from the reports computed so far, and one report
# of an eager profile over long windows can hold millions: CityBench Q2 (three weather
# observations × a traffic one) on CQELS's windows scaled ×10 took the matrix process to 18 GB
MAX_ROWS = 10_000_000


class TooManyRows(InputError):
    """The rows one evaluation of the oracle would hold exceed its limit."""


@dataclass
class RowBudget:
    """The rows an evaluation may still produce: past ``limit`` it stops with ``TooManyRows``
    (the matrix records the cell not_judged with that reason) instead of being OOM-killed."""

    limit: int
    used: int = 0

    def take(self, n: int) -> None:
        self.used += n
        if self.used > self.limit:
            raise self.error()

    def error(self) -> TooManyRows:
        return TooManyRows(
            f"the oracle's expected output passes {self.limit:,} rows in one evaluation "
            "(RSP_ORACLE_MAX_ROWS): its windows hold more solutions than it keeps in memory",
            expected="shorter windows, a shorter stream, or a larger RSP_ORACLE_MAX_ROWS on "
            "a machine with the memory",
        )


@dataclass(frozen=True)
class OxConfig:
    sparql: str
    base_iri: str
    variables: list[str]
    window_names: list[str] | None  # GRAPH mode: window w's content is graph window_names[w]
    event_driven: bool
    static_digest: str | None
    restore: dict[str, str] | None = None  # oxigraph's canonical literal → the stream's text
    # event keys (row position if tuple-driven, else the event time) at which the result can
    # change; None = evaluate at every event
    change_points: frozenset[int] | None = None
    # with change points: an event between them emits no rows (its relation is the last
    # evaluated event's, Istream/Dstream emit nothing there, so the job need not copy that
    # relation to every such report); an evaluated event without solutions emits one row with
    # null terms, so the job knows every evaluated event
    compact: bool = False
    terms_file: str | None = None  # the term dictionary (SparkFiles name); s, p, o are its ids
    max_rows: int = MAX_ROWS  # RowBudget's limit (set on the driver, shipped to the workers)


def _store(cfg: OxConfig, static_nt: Callable[[], bytes | None]) -> ox.Store:
    key = cfg.static_digest or ""
    store = _STATIC_STORES.get(key)
    if store is None:
        store = _STATIC_STORES[key] = static_store(static_nt())
    return store


def static_store(data: bytes | None) -> ox.Store:
    """A store holding the static data (N-Triples) in its default graph."""
    store = ox.Store()
    if data:
        store.extend(ox.parse(data, format=ox.RdfFormat.N_QUADS))
    return store


def _graphs(cfg: OxConfig, n_windows: int) -> list[ox.NamedNode]:
    if cfg.window_names is not None:
        return [ox.NamedNode(n) for n in cfg.window_names]
    return [ox.NamedNode(PLAIN_GRAPH)] * n_windows


def evaluate_group(
    table: pa.Table,
    cfg: OxConfig,
    static_nt: Callable[[], bytes | None],
    store: ox.Store | None = None,
    memo: dict[tuple[tuple[int, ...], tuple[int, ...]], Solutions] | None = None,
    budget: RowBudget | None = None,
) -> pa.Table:
    """Evaluate the query at every event of one window group (see module docstring).

    ``store``: the caller's own store holding the static data (the driver, whose threads must
    not share the process-wide one); by default the worker's, cached by the static digest.
    ``memo``: solutions by loaded content ((idx, w) of the elements in the store), shared by
    the groups of one job on one store: the t0 classes' windows over few elements
    (``OracleJob._support_rows``) often hold the same ones. ``budget``: the rows this group may
    add, shared by the caller's groups (default: ``cfg.max_rows`` for this group alone).
    """
    budget = budget if budget is not None else RowBudget(cfg.max_rows)
    store = store if store is not None else _store(cfg, static_nt)
    kind = table.column("kind")
    ev = table.filter(pc.equal(kind, 1)).select(["kb", "kr", "kbb", "krb", "kc"])
    events = sorted(set(zip(*(ev.column(c).to_pylist() for c in ev.column_names), strict=True)))
    content = _Content(store, cfg, table.filter(pc.equal(kind, 0)), memo, budget)
    out = _Rows()
    changes = cfg.change_points
    previous: list[tuple[str | None, ...]] | None = None
    source = (0, 0)
    try:
        for kb, kr, kbb, krb, kc in events:
            if cfg.event_driven:
                content.advance(kbb, krb)
                before = Counter(content.solutions())
                content.advance(kb, kr)
                after = Counter(content.solutions())
                rows = list((after - before).elements())
                source = (kb, kr)
            elif changes is not None and previous is not None and _key(kb, kr) not in changes:
                rows = previous  # nothing new can be complete here: the same result
            else:
                content.advance(kb, kr)
                rows = content.solutions()
                previous, source = rows, (kb, kr)
            if cfg.compact and source != (kb, kr):
                continue  # the last evaluated event's relation (see OxConfig.compact)
            marks: list[list[str | None] | None] = [None] if cfg.compact and not rows else []
            budget.take(len(rows))
            for terms in marks + [list(row) for row in rows]:
                out.add(kc, kb, kr, terms)
    finally:
        content.drop()
    return out.table()


Solutions = list[tuple[str | None, ...]]


class _Content:
    """One group's elements, loaded into the store in stream order up to each event's bound,
    and the query's solutions over what is loaded (cached per load, memoised per content)."""

    def __init__(
        self,
        store: ox.Store,
        cfg: OxConfig,
        elems: pa.Table,
        memo: dict[tuple[tuple[int, ...], tuple[int, ...]], Solutions] | None,
        budget: RowBudget,
    ) -> None:
        elems = elems.sort_by([("idx", "ascending"), ("w", "ascending")])
        self.store, self.cfg, self.memo, self.budget = store, cfg, memo, budget
        self.ts: list[int] = elems.column("t").to_pylist()
        self.idxs: list[int] = elems.column("idx").to_pylist()
        self.ws: list[int] = elems.column("w").to_pylist()
        graphs = _graphs(cfg, max(max(self.ws, default=0) + 1, len(cfg.window_names or [])))
        self.lines = _quad_lines(cfg, elems, graphs, self.ws)
        self.named = sorted({g.value for g in graphs})
        self.kwargs: dict[str, Any] = {"base_iri": cfg.base_iri}
        if cfg.window_names is not None:
            self.kwargs["default_graph"] = ox.DefaultGraph()
            self.kwargs["named_graphs"] = [ox.NamedNode(n) for n in self.named]
        else:
            self.kwargs["default_graph"] = [ox.DefaultGraph(), ox.NamedNode(PLAIN_GRAPH)]
        self.restore = cfg.restore or {}
        self.texts: dict[str, str] = {}
        self.loaded = 0
        self.cache: tuple[int, Solutions] | None = None

    def advance(self, bound_t: int, bound_r: int) -> None:
        """Load the elements before time ``bound_t`` and at rows up to ``bound_r``."""
        end = self.loaded
        ts, idxs = self.ts, self.idxs
        while end < len(ts) and ts[end] < bound_t and idxs[end] <= bound_r:
            end += 1
        if end > self.loaded:
            chunk = "\n".join(self.lines[self.loaded : end])
            self.store.extend(ox.parse(chunk, format=ox.RdfFormat.N_QUADS))
            self.loaded = end

    def solutions(self) -> Solutions:
        if self.cache is not None and self.cache[0] == self.loaded:
            return self.cache[1]
        if self.memo is None:
            out = self._query()
        else:
            key = (tuple(self.idxs[: self.loaded]), tuple(self.ws[: self.loaded]))
            hit = self.memo.get(key)
            out = hit if hit is not None else self.memo.setdefault(key, self._query())
        self.cache = (self.loaded, out)
        return out

    def _query(self) -> Solutions:
        out: Solutions = []
        # one str object per distinct term: a join's rows repeat the same few terms (CityBench
        # Q2's cross product: 1 KB a row with a string per cell, a quarter of that shared)
        restore, texts = self.restore, self.texts
        results = cast(ox.QuerySolutions, self.store.query(self.cfg.sparql, **self.kwargs))
        room = self.budget.limit - self.budget.used  # one relation alone may pass the limit
        for sol in results:
            if len(out) >= room:
                raise self.budget.error()
            row: list[str | None] = []
            for v in self.cfg.variables:
                term = sol[v]
                if term is None:
                    row.append(None)
                else:
                    text = str(term)
                    text = restore.get(text, text)
                    row.append(texts.setdefault(text, text))
            out.append(tuple(row))
        self.budget.take(len(out))
        return out

    def drop(self) -> None:
        """Remove the window graphs: the store keeps only the static data."""
        for name in self.named:
            self.store.remove_graph(ox.NamedNode(name))


def _quad_lines(
    cfg: OxConfig, elems: pa.Table, graphs: list[ox.NamedNode], ws: list[int]
) -> list[str]:
    """Each element as an N-Quads line in its window's graph (terms decoded if encoded)."""
    if cfg.terms_file is not None:
        terms = worker_terms(cfg.terms_file)
        s_col, p_col, o_col = (terms.take(elems.column(c)) for c in ("s", "p", "o"))
    else:
        s_col, p_col, o_col = (elems.column(c) for c in ("s", "p", "o"))
    graph_col = pa.array([f"<{g.value}> ." for g in graphs], pa.string()).take(
        pa.array(ws, pa.int64())
    )
    lines: list[str] = pc.binary_join_element_wise(s_col, p_col, o_col, graph_col, " ").to_pylist()
    return lines


class _Rows:
    """The group's output rows (OUTPUT_SCHEMA), column by column."""

    def __init__(self) -> None:
        self.kc: list[int] = []
        self.kb: list[int] = []
        self.kr: list[int] = []
        self.terms: list[list[str | None] | None] = []

    def add(self, kc: int, kb: int, kr: int, terms: list[str | None] | None) -> None:
        self.kc.append(kc)
        self.kb.append(kb)
        self.kr.append(kr)
        self.terms.append(terms)

    def table(self) -> pa.Table:
        return pa.Table.from_arrays(
            [
                pa.array(self.kc, pa.int64()),
                pa.array(self.kb, pa.int64()),
                pa.array(self.kr, pa.int64()),
                pa.array(self.terms, pa.list_(pa.string())),
            ],
            schema=OUTPUT_SCHEMA,
        )


def _key(kb: int, kr: int) -> int:
    """The event key of a content bound: the row (tuple-driven) or the event time."""
    from rsp_sdk.oracle.s2r import INF

    return kb - 1 if kr >= INF else kr


def lexical_restorer(objects: pa.Array) -> dict[str, str]:
    """Map pyoxigraph's canonical form of each typed literal back to how the stream wrote it.

    pyoxigraph stores numbers, booleans, dates… by value and prints them canonically
    ("62.0"^^xsd:float comes back as "62"), but an engine returns the term it was given, and
    the other evaluator keeps it too. A canonical form that several spellings share stays as
    it is (those spellings are one term inside the store anyway).
    """
    typed = pc.unique(objects.filter(pc.match_substring(objects, '"^^<'))).to_pylist()
    if not typed:
        return {}
    store = ox.Store()
    pred = ox.NamedNode("urn:x-rsp-sdk:p")
    store.extend(
        ox.Quad(ox.NamedNode(f"urn:x-rsp-sdk:{i}"), pred, to_oxigraph(t))
        for i, t in enumerate(typed)
    )
    seen: dict[str, str | None] = {}
    for quad in store:
        original = typed[int(quad.subject.value.rsplit(":", 1)[1])]
        canonical = str(quad.object)
        if canonical != original:
            seen[canonical] = original if canonical not in seen else None
    return {k: v for k, v in seen.items() if v is not None}
