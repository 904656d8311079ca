"""The reference oracle: SECRET's definitions, executed literally. The executable specification.

This module answers the same question as ``rsp_sdk.oracle.expected`` — what must an engine with
a given SECRET profile output for this stream and query — and returns the same rows
(``EXPECTED_SCHEMA``), but it is written to be *obviously* right rather than fast: one Python
loop per report, one SPARQL evaluation per window content, R2S on Python sets and bags. It
shares no code with the Spark job (``s2r``, ``r2r``, ``r2s``, ``job``): only the data model
(``rsp_sdk.model``) and the N-Triples / SPARQL-JSON term helpers. Where the two disagree, one of
them has a bug; the property-based tests in ``tests/test_oracle_reference.py`` look for such
disagreements.

The definitions, following SECRET (Botan et al., VLDB 2010) as CSRBench (Dell'Aglio et al.,
ISWC 2013) and its published oracle apply them. ω is the RANGE of the query's first window,
β the STEP all its windows share, t_max the last timestamp of a windowed stream.

* **t0 candidates** (``t0_candidates``). t0, the opening of the first window, depends on when
  the engine registered the query, so every candidate is enumerated: from ``first`` (the
  profile's ``T0Policy.first_ms``, else the query's ``first_t0_ms``, else the stream's first
  timestamp rounded down to the step; ``lead`` moves the profile's or the stream's back) in
  steps of ``T0Policy.step_ms`` (else the stream's time unit) over one slide [first, first + β)
  — SECRET — or one window [first, first + ω] — the CSRBench oracle (``span = "window"``).
* **Windows.** Window i ≥ 0 has the scope [o_i, o_i + ω) with o_i = o_0 + iβ. o_0 = t0, except
  for window-close reports under ``span = "window"``, where the CSRBench oracle's placement
  applies: o_0 = t0 if t0 < ω, else t0 + β − ω.
* **Window close.** One report per window with o_i ≤ t_max, at its close c_i = o_i + ω, over
  [o_i, c_i). With ``periodic`` too (a conjunction, as in RSP4J): only closes that are
  multiples of the period.
* **Content change.** A report at every *event* later than t0 (an element stamped t0 is there
  at registration): each element in stream order (tuple-driven), each distinct timestamp
  (batch-driven), each multiple τ of the time unit with an arrival in (τ − unit, τ]
  (time-driven; with ``periodic`` the unit is the period). The scope is the oldest window still
  open at the event x, [o_a, x] with a = min{i : o_i + ω > x}, and nothing is reported when
  that window has not opened yet (o_a > x). Tuple-driven: only the elements up to and including
  the triggering one. Elements leaving a window never trigger a report.
* **Periodic** (without content change). A report at every multiple τ of the period after t0,
  over [o_a, τ] as above, when o_a ≤ τ and o_a ≤ t_max.
* **Several windows.** They report together; at a report whose first-window scope closes at c,
  window w holds the elements of its stream with c − ω_w ≤ t and the report's upper bound.
* **Non-empty content.** A report whose scope holds no element is dropped altogether; it is
  not the "previous" relation of the next Istream/Dstream report.
* **R2R.** Each window's content is an RDF graph (a set): the named graph ``<w>`` of an RSP-QL
  ``WINDOW <w>`` block (static data in the default graph), or, for plain SPARQL, the default
  graph holding every window's content and the static data. The query runs on it with rdflib
  (default: independent of both of the Spark oracle's evaluators) or pyoxigraph.
* **R2S.** Rstream: the bag of solutions. Istream: the solutions (as a set) absent from the
  previous report's; the first report has no previous, so all of them. Dstream: the previous
  report's solutions absent from this one's; the first report emits nothing at all.
  Event-driven profiles (ETALIS) emit, at each report, the bag of solutions the triggering
  element(s) completed: the solutions after them minus those just before them, same window.
* **Empty relations.** A report that emits no binding is one row with a null binding if the
  profile emits empty relations, else nothing. ``seq`` numbers the emitted relations of each t0
  from 0; ``t_app_ms`` is the report instant, ``[window_open_ms, window_close_ms)`` the first
  window's evaluated scope (the close is the report's exclusive upper time bound) and
  ``triples_in_window`` the number of elements in the scopes of all windows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.results import EXPECTED_SCHEMA, binding_to_json
from rsp_sdk.model.stream import STREAM_METADATA_KEY, StreamMeta
from rsp_sdk.model.terms import XSD_STRING, split_literal, term_kind, to_sparql_json

Solution = str  # one binding, as canonical SPARQL JSON text


@dataclass(frozen=True)
class Element:
    """One stream element: its row in the stream table, stream IRI, time and N-Triples terms."""

    row: int
    stream: str
    t: int
    s: str
    p: str
    o: str


@dataclass(frozen=True)
class Bound:
    """An upper bound on a report's content: elements with t < before_t and row ≤ max_row."""

    before_t: int
    max_row: int | None = None  # None: every row (not tuple-driven)

    def admits(self, e: Element) -> bool:
        return e.t < self.before_t and (self.max_row is None or e.row <= self.max_row)


@dataclass(frozen=True)
class Report:
    """One report of one t0: when, which scope, and (event-driven) the bound just before."""

    t_app: int
    order: int  # ties at one instant: the triggering row (tuple-driven), else 0
    opening: int  # o of the first window's scope
    close: int  # c = o + ω: window w's scope starts at c − ω_w
    bound: Bound
    before: Bound | None = None  # the content just before the triggering element(s)


# -- t0 ------------------------------------------------------------------------------------------


def t0_first(profile: Profile, query: QuerySpec, *, t_min: int, step: int) -> int:
    """The first t0 candidate."""
    # SECRET: a query registered before its stream starts has windows that already hold the
    # first triple while they are partial — its first window opens ω − β before the data (or
    # before the profile's fixed grid)
    lead = query.range_ms - query.slide_ms if profile.t0.lead == "range_minus_step" else 0
    if profile.t0.first_ms is not None:
        return profile.t0.first_ms - max(0, lead)
    if query.first_t0_ms is not None:
        return query.first_t0_ms
    return ((t_min - max(0, lead)) // step) * step


def t0_candidates(profile: Profile, query: QuerySpec, *, t_min: int, unit_ms: int) -> list[int]:
    """Every candidate t0 (see the module docstring)."""
    step = profile.t0.step_ms or unit_ms or 1
    first = t0_first(profile, query, t_min=t_min, step=step)
    candidates = []
    t0 = first
    if profile.t0.span == "window":
        while t0 <= first + query.range_ms:
            candidates.append(t0)
            t0 += step
    else:
        while t0 < first + query.slide_ms:
            candidates.append(t0)
            t0 += step
    return candidates


# -- S2R: windows and reports --------------------------------------------------------------------


def first_opening(profile: Profile, query: QuerySpec, t0: int) -> int:
    """o_0: t0, or the CSRBench oracle's placement of its first window-close scope."""
    omega, beta = query.range_ms, query.slide_ms
    csrbench = profile.t0.span == "window" and ReportPolicy.WINDOW_CLOSE in profile.report
    if csrbench and t0 >= omega:
        return t0 + beta - omega
    return t0


def active_window(o0: int, omega: int, beta: int, x: int) -> int:
    """o_a of the oldest window still open at x: the smallest i ≥ 0 with o_i + ω > x."""
    i = 0
    while o0 + i * beta + omega <= x:
        i += 1
    return o0 + i * beta


def window_close_reports(profile: Profile, query: QuerySpec, t0: int, t_max: int) -> list[Report]:
    omega, beta = query.range_ms, query.slide_ms
    periodic = ReportPolicy.PERIODIC in profile.report
    out = []
    o = first_opening(profile, query, t0)
    while o <= t_max:
        c = o + omega
        if not periodic or c % (profile.period_ms or 1) == 0:
            out.append(Report(t_app=c, order=0, opening=o, close=c, bound=Bound(c)))
        o += beta
    return out


def periodic_reports(profile: Profile, query: QuerySpec, t0: int, t_max: int) -> list[Report]:
    omega, beta = query.range_ms, query.slide_ms
    period = profile.period_ms
    assert period is not None  # the Profile validator requires it with the periodic policy
    out = []
    tau = (t0 // period + 1) * period  # the first multiple of the period after t0
    while tau <= t_max + omega + period:
        o = active_window(t0, omega, beta, tau)
        if o <= tau and o <= t_max:
            out.append(Report(tau, 0, o, o + omega, Bound(tau + 1)))
        tau += period
    return out


def content_change_events(
    profile: Profile, elements: list[Element]
) -> list[tuple[int, int, Bound, Bound]]:
    """(instant x, order, bound, bound just before) of every content-change event, any t0."""
    unit: int | None = None
    if ReportPolicy.PERIODIC in profile.report:
        unit = profile.period_ms
    elif profile.tick is Tick.TIME_DRIVEN:
        unit = profile.time_unit_ms
    if unit is None and profile.tick is Tick.TUPLE_DRIVEN:
        return [(e.t, e.row, Bound(e.t + 1, e.row), Bound(e.t + 1, e.row - 1)) for e in elements]
    if unit is None:  # batch-driven
        instants = sorted({e.t for e in elements})
        return [(x, 0, Bound(x + 1), Bound(x)) for x in instants]
    instants = sorted({-(-e.t // unit) * unit for e in elements})  # τ: e.t rounded up
    return [(x, 0, Bound(x + 1), Bound(x - unit + 1)) for x in instants]


def content_change_reports(
    profile: Profile, query: QuerySpec, t0: int, elements: list[Element]
) -> list[Report]:
    omega, beta = query.range_ms, query.slide_ms
    out = []
    for x, order, bound, before in content_change_events(profile, elements):
        if x <= t0:
            continue
        o = active_window(t0, omega, beta, x)
        if o > x:
            continue  # between two hopping windows: no window is open
        out.append(Report(x, order, o, o + omega, bound, before))
    return out


def reports_of(
    profile: Profile, query: QuerySpec, t0: int, elements: list[Element]
) -> list[Report]:
    """Every report of one t0, in report order (before the non-empty condition)."""
    t_max = max((e.t for e in elements), default=-1)
    if ReportPolicy.CONTENT_CHANGE in profile.report:
        reports = content_change_reports(profile, query, t0, elements)
    elif ReportPolicy.WINDOW_CLOSE in profile.report:
        reports = window_close_reports(profile, query, t0, t_max)
    else:
        reports = periodic_reports(profile, query, t0, t_max)
    return sorted(reports, key=lambda r: (r.t_app, r.order))


# -- window contents -----------------------------------------------------------------------------


def window_streams(query: QuerySpec, elements: list[Element]) -> list[str]:
    """The stream IRI each window reads (a plain single-window query reads the only stream)."""
    present = sorted({e.stream for e in elements})
    out = []
    for w in query.windows:
        if w.stream in present or not elements:
            out.append(w.stream)
        elif not query.window_graphs and len(query.windows) == 1 and len(present) == 1:
            out.append(present[0])
        else:
            raise InputError(
                f"the stream has no element of <{w.stream}>, which window <{w.name}> reads"
            )
    return out


def contents(
    query: QuerySpec, streams: list[str], elements: list[Element], close: int, bound: Bound
) -> list[list[Element]]:
    """The elements of each window's scope [close − ω_w, bound)."""
    out = []
    for w, stream in zip(query.windows, streams, strict=True):
        out.append(
            [
                e
                for e in elements
                if e.stream == stream and close - w.range_ms <= e.t and bound.admits(e)
            ]
        )
    return out


# -- R2R: SPARQL on one window content -----------------------------------------------------------


class Evaluator:
    """Runs the query on window contents with rdflib or pyoxigraph, memoised per content."""

    def __init__(
        self, query: QuerySpec, static: list[tuple[str, str, str]], backend: str = "rdflib"
    ) -> None:
        if backend not in ("rdflib", "oxigraph"):
            raise ValueError(f"unknown backend {backend!r}: rdflib or oxigraph")
        self.query = query
        self.static = static
        self.backend = backend
        self.variables: list[str] = list(query.variables)
        self._memo: dict[tuple[frozenset[tuple[str, str, str]], ...], list[Solution]] = {}
        self._prepared: Any = None

    def solutions(self, content: list[list[Element]]) -> list[Solution]:
        """The bag of solutions on these window contents (each window a set of triples)."""
        key = tuple(frozenset((e.s, e.p, e.o) for e in window) for window in content)
        if key not in self._memo:
            if self.backend == "rdflib":
                self._memo[key] = self._rdflib(key)
            else:
                self._memo[key] = self._oxigraph(key)
        return self._memo[key]

    def _graphs(self, key: tuple[frozenset[tuple[str, str, str]], ...]) -> Iterator[Any]:
        """(graph name or None for the default graph, triple) of the dataset to query."""
        for triple in self.static:
            yield None, triple
        for w, triples in zip(self.query.windows, key, strict=True):
            name = w.name if self.query.window_graphs else None
            for triple in triples:
                yield name, triple

    def _rdflib(self, key: tuple[frozenset[tuple[str, str, str]], ...]) -> list[Solution]:
        from rdflib import Dataset, URIRef, Variable
        from rdflib.plugins.sparql import prepareQuery

        if self._prepared is None:
            self._prepared = prepareQuery(self.query.sparql, base=self.query.base_iri)
            if not self.variables:
                self.variables = [str(v) for v in self._prepared.algebra["PV"]]
        ds = Dataset()
        for name, triple in self._graphs(key):
            graph = ds.graph(URIRef(name)) if name is not None else ds.default_graph
            graph.add(tuple(rdflib_term(t) for t in triple))
        if _no_groups(ds, self._prepared):
            return []
        result: Any = ds.query(self._prepared)
        out = []
        # ``bindings``, not iteration: iterating rdflib's result drops every solution that
        # binds none of the projected variables (e.g. MAX over no solution, an unbound UNION
        # branch), which SPARQL 1.1 keeps
        for row in result.bindings:
            binding = {}
            for v in self.variables:
                value = row.get(Variable(v))
                if value is not None:
                    binding[v] = rdflib_json(value)
            out.append(binding_to_json(binding))
        return out

    def _oxigraph(self, key: tuple[frozenset[tuple[str, str, str]], ...]) -> list[Solution]:
        import pyoxigraph as ox

        from rsp_sdk.model.terms import to_oxigraph

        store = ox.Store()
        for name, (s, p, o) in self._graphs(key):
            graph = ox.NamedNode(name) if name is not None else ox.DefaultGraph()
            quad: Any = (to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), graph)
            store.add(ox.Quad(*quad))
        kwargs: dict[str, Any] = {"base_iri": self.query.base_iri}
        if self.query.window_graphs:
            kwargs["default_graph"] = ox.DefaultGraph()
            kwargs["named_graphs"] = [ox.NamedNode(w.name) for w in self.query.windows]
        else:
            kwargs["use_default_graph_as_union"] = False
        result: Any = store.query(self.query.sparql, **kwargs)
        if not self.variables:
            self.variables = [v.value for v in result.variables]
        out = []
        for sol in result:
            binding = {}
            for v in self.variables:
                term = sol[v]
                if term is not None:
                    binding[v] = to_sparql_json(str(term))
            out.append(binding_to_json(binding))
        return out


_CHAIN = {"SelectQuery", "Slice", "Distinct", "Reduced", "Project", "OrderBy", "Extend", "Filter"}


def _no_groups(ds: Any, prepared: Any) -> bool:
    """Whether the query's own ``GROUP BY`` has no solution to group.

    SPARQL 1.1 gives no row then (an explicit GROUP BY over nothing makes no group), but rdflib
    yields one row of unbound keys and empty aggregates. Only the query's top level is looked
    at (a sub-select's grouping is left to rdflib)."""
    from rdflib.plugins.sparql.evaluate import evalPart
    from rdflib.plugins.sparql.sparql import QueryContext

    node = prepared.algebra
    while getattr(node, "name", None) in _CHAIN or getattr(node, "name", None) == "AggregateJoin":
        node = node.get("p")
    if getattr(node, "name", None) != "Group" or node.get("expr") is None:
        return False
    ctx = QueryContext(ds)
    ctx.prologue = prepared.prologue
    return next(iter(evalPart(ctx, node.p)), None) is None


def rdflib_term(nt: str) -> Any:
    """rdflib term of an N-Triples term (the lexical form kept as written)."""
    from rdflib import BNode, Literal, URIRef

    kind = term_kind(nt)
    if kind == "iri":
        return URIRef(nt[1:-1])
    if kind == "bnode":
        return BNode(nt[2:])
    lex, dt, lang = split_literal(nt)
    if lang:
        return Literal(lex, lang=lang)
    if dt and dt != XSD_STRING:
        return Literal(lex, datatype=URIRef(dt))
    return Literal(lex)


def rdflib_json(term: Any) -> dict[str, str]:
    """SPARQL 1.1 JSON of an rdflib term."""
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    if isinstance(term, Literal):
        out = {"type": "literal", "value": str(term)}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None and str(term.datatype) != XSD_STRING:
            out["datatype"] = str(term.datatype)
        return out
    raise TypeError(f"not an RDF term: {term!r}")


# -- R2S -----------------------------------------------------------------------------------------


def r2s_step(r2s: R2S, current: list[Solution], previous: list[Solution] | None) -> list[Solution]:
    """What one report emits, given its relation and the previous report's (None: first)."""
    if r2s is R2S.RSTREAM:
        return current
    now, before = set(current), set(previous or [])
    if r2s is R2S.ISTREAM:
        return sorted(now - before)
    return sorted(before - now)


def bag_difference(after: list[Solution], before: list[Solution]) -> list[Solution]:
    return list((Counter(after) - Counter(before)).elements())


# -- the whole oracle ----------------------------------------------------------------------------


def read_elements(stream: pa.Table) -> list[Element]:
    rows = stream.select(["stream", "t_app_ms", "s", "p", "o"]).to_pylist()
    out = [
        Element(i, r["stream"], int(r["t_app_ms"]), r["s"], r["p"], r["o"])
        for i, r in enumerate(rows)
    ]
    for a, b in pairwise(out):
        if b.t < a.t:
            raise InputError(f"the stream is not sorted by t_app_ms (row {b.row})")
    return out


def stream_unit(stream: pa.Table) -> int:
    raw = (stream.schema.metadata or {}).get(STREAM_METADATA_KEY)
    return StreamMeta.from_bytes(raw).time_unit_ms if raw else 1


def reference_expected(
    stream: pa.Table,
    query: QuerySpec,
    profile: Profile,
    *,
    t0s: Iterable[int] | None = None,
    static: pa.Table | None = None,
    backend: str = "rdflib",
) -> pa.Table:
    """The expected output (EXPECTED_SCHEMA) of every candidate t0, by the definitions above."""
    elements = read_elements(stream)
    streams = window_streams(query, elements)
    windowed = [e for e in elements if e.stream in streams]
    static_triples = (
        [(r["s"], r["p"], r["o"]) for r in static.select(["s", "p", "o"]).to_pylist()]
        if static is not None
        else []
    )
    evaluator = Evaluator(query, static_triples, backend)
    r2s = profile.r2s_for(query.r2s)
    if t0s is None:
        t_min = min((e.t for e in elements), default=0)
        t0s = t0_candidates(profile, query, t_min=t_min, unit_ms=stream_unit(stream))
    rows: list[dict[str, Any]] = []
    for t0 in sorted(set(t0s)):
        rows += rows_of_t0(query, profile, r2s, t0, windowed, streams, evaluator)
    return pa.Table.from_pylist(rows, schema=EXPECTED_SCHEMA)


def rows_of_t0(
    query: QuerySpec,
    profile: Profile,
    r2s: R2S,
    t0: int,
    elements: list[Element],
    streams: list[str],
    evaluator: Evaluator,
) -> list[dict[str, Any]]:
    """The EXPECTED_SCHEMA rows of one t0: reports → contents → relations → R2S → rows."""
    rows: list[dict[str, Any]] = []
    previous: list[Solution] | None = None
    seq = 0
    for report in reports_of(profile, query, t0, elements):
        content = contents(query, streams, elements, report.close, report.bound)
        n = sum(len(window) for window in content)
        if profile.non_empty and n == 0:
            continue
        relation = evaluator.solutions(content)
        if profile.event_driven:
            assert report.before is not None
            before = contents(query, streams, elements, report.close, report.before)
            emitted = bag_difference(relation, evaluator.solutions(before))
            skip = False
        else:
            emitted = r2s_step(r2s, relation, previous)
            skip = r2s is R2S.DSTREAM and previous is None
            previous = relation
        if skip or (not emitted and not profile.emits_empty_relations):
            continue
        base = {
            "query": query.name,
            "t0_ms": t0,
            "seq": seq,
            "t_app_ms": report.t_app,
            "window_open_ms": report.opening,
            "window_close_ms": report.bound.before_t,
            "triples_in_window": n,
        }
        for binding in sorted(emitted) if emitted else [None]:
            rows.append({**base, "binding": binding})
        seq += 1
    return rows


__all__ = ["reference_expected", "t0_candidates"]
