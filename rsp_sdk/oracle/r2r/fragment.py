"""Which queries the Spark SQL evaluator can run: BGP + FILTER + projection + aggregates.

The fragment (read from rdflib's SPARQL algebra):

* basic graph patterns, joined, inside ``GRAPH <window>`` blocks (RSP-QL WINDOW blocks) or
  over the default graph (static data in RSP-QL; the union of the windows in plain SPARQL);
  blank nodes in patterns act as variables, as SPARQL says;
* FILTER with ``= != < <= > >=``, ``&& || !``, ``+ - * /`` and unary minus over variables and
  IRI/literal constants — each filter remembers the variables in its scope, because a variable
  bound only outside a FILTER's group is *unbound* inside it (SPARQL's bottom-up semantics);
* projection of variables, DISTINCT/REDUCED;
* COUNT (also DISTINCT and ``*``), SUM, AVG, MIN, MAX, SAMPLE with or without GROUP BY (no
  HAVING, no DISTINCT inside SUM/AVG).

Everything else (OPTIONAL, UNION, MINUS, subqueries, functions, ORDER BY/LIMIT, BIND, VALUES,
property paths, HAVING) raises ``NotInFragment`` with the reason; ``evaluator="auto"`` then uses
pyoxigraph, which evaluates all of SPARQL 1.1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rdflib.term import BNode, Literal, URIRef, Variable

from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.terms import iri, literal

ANY_WINDOW = -1  # plain SPARQL: a pattern matches the union of every window's content
STATIC = -2  # RSP-QL: a pattern outside WINDOW blocks matches the static data

_AGGS = {
    "Aggregate_Count": "count",
    "Aggregate_Sum": "sum",
    "Aggregate_Avg": "avg",
    "Aggregate_Min": "min",
    "Aggregate_Max": "max",
    "Aggregate_Sample": "sample",
}
_EXPRS = {
    "RelationalExpression",
    "ConditionalAndExpression",
    "ConditionalOrExpression",
    "UnaryNot",
    "AdditiveExpression",
    "MultiplicativeExpression",
    "UnaryMinus",
    "UnaryPlus",
}


class NotInFragment(Exception):
    """The query needs more than BGP + FILTER + projection + aggregates."""


@dataclass(frozen=True)
class Node:
    """A pattern position: a variable name or a constant term in N-Triples syntax."""

    var: str | None = None
    const: str | None = None


@dataclass(frozen=True)
class Pattern:
    graph: int  # window index, ANY_WINDOW or STATIC
    s: Node
    p: Node
    o: Node

    @property
    def variables(self) -> list[str]:
        return [n.var for n in (self.s, self.p, self.o) if n.var is not None]


@dataclass(frozen=True)
class Filter:
    expr: Any  # rdflib expression tree
    scope: frozenset[str]


@dataclass(frozen=True)
class Aggregate:
    func: str
    arg: str | None  # None for COUNT(*)
    distinct: bool


@dataclass
class SqlPlan:
    patterns: list[Pattern] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    projection: list[tuple[str, str | Aggregate]] = field(default_factory=list)
    distinct: bool = False
    group_by: list[str] | None = None  # None: no aggregation

    @property
    def monotone(self) -> bool:
        """No aggregation: a solution, once valid in a window, stays valid while it lasts."""
        return self.group_by is None

    @property
    def window_patterns(self) -> list[Pattern]:
        return [p for p in self.patterns if p.graph != STATIC]


def term_nt(term: Any) -> str:
    """N-Triples text of an rdflib constant, canonical as the streams store terms."""
    if isinstance(term, URIRef):
        return iri(str(term))
    if isinstance(term, Literal):
        dt = str(term.datatype) if term.datatype is not None else None
        return literal(str(term), datatype=dt, language=term.language)
    raise NotInFragment(f"unsupported constant {term!r}")


def _node(term: Any) -> Node:
    if isinstance(term, Variable):
        return Node(var=str(term))
    if isinstance(term, BNode):
        return Node(var=f"_bn_{term}")
    return Node(const=term_nt(term))


def analyze(query: QuerySpec, algebra: Any, *, has_static: bool) -> SqlPlan:
    """The SQL plan of a query, or ``NotInFragment`` naming what is outside the fragment."""
    plan = SqlPlan()
    node = algebra["p"] if algebra.name == "SelectQuery" else algebra
    if node.name in ("Distinct", "Reduced"):
        plan.distinct = node.name == "Distinct"
        node = node["p"]
    if node.name != "Project":
        raise NotInFragment(f"{node.name} at the top of the query")
    projected = [str(v) for v in node["PV"]]
    node = node["p"]
    renames: dict[str, str] = {}
    while node.name == "Extend":
        expr = node["expr"]
        if not isinstance(expr, Variable):
            raise NotInFragment("BIND or computed projections (SELECT (expr AS ?x))")
        renames[str(node["var"])] = str(expr)
        node = node["p"]
    aggs: dict[str, Aggregate] = {}
    if node.name == "AggregateJoin":
        for a in node["A"]:
            func = _AGGS.get(a.name)
            if func is None:
                raise NotInFragment(f"aggregate {a.name}")
            arg = a["vars"]
            distinct = a.get("distinct") == "DISTINCT"
            if arg == "*":
                arg_name = None
            elif isinstance(arg, Variable):
                arg_name = str(arg)
            else:
                raise NotInFragment("aggregates over expressions")
            if distinct and func in ("sum", "avg"):
                raise NotInFragment(f"{func.upper()}(DISTINCT …)")
            aggs[str(a["res"])] = Aggregate(func, arg_name, distinct)
        group = node["p"]
        if group.name != "Group":
            raise NotInFragment(f"{group.name} under an aggregate")
        plan.group_by = [str(v) for v in (group["expr"] or [])]
        for v in group["expr"] or []:
            if not isinstance(v, Variable):
                raise NotInFragment("GROUP BY an expression")
        node = group["p"]
    _where(node, plan, graph=STATIC if query.window_graphs else ANY_WINDOW, query=query)
    if not plan.window_patterns:
        raise NotInFragment("no triple pattern over a window")
    if not query.window_graphs and has_static:
        raise NotInFragment("plain SPARQL over windows and static data in one default graph")
    for name in projected:
        target = renames.get(name, name)
        if target in aggs:
            plan.projection.append((name, aggs[target]))
        elif plan.group_by is not None:
            raise NotInFragment(f"?{name} is neither grouped nor aggregated")
        else:
            plan.projection.append((name, target))
    if plan.group_by is not None and not aggs:
        raise NotInFragment("GROUP BY without aggregates")
    return plan


# FILTER functions whose value depends on more than the solution they test (EXISTS reads the
# data; RAND, UUID, BNODE differ per call): a residual filter holding one of them is refused
_IMPURE = {
    "Builtin_EXISTS",
    "Builtin_NOTEXISTS",
    "Builtin_RAND",
    "Builtin_UUID",
    "Builtin_STRUUID",
    "Builtin_BNODE",
}


def monotone_core(
    query: QuerySpec, algebra: Any, *, has_static: bool
) -> tuple[SqlPlan, list[Filter]] | None:
    """The BGP and in-fragment filters of a query that is monotone but outside the fragment
    only through FILTER functions (REGEX, STR, …) or GROUP BY without aggregates — or None.

    Such a query's result is a function of the solutions of its pattern that pass every
    filter, and grows with the content: under content change it can change only where a
    solution of this core completes *and* passes the other filters, which pyoxigraph checks on
    that solution's own triples (``OracleJob._change_points``). ``None`` for anything else
    (aggregates, OPTIONAL, EXISTS, …): there every event is evaluated. Returns the core and
    the filters left out of it.
    """
    node = algebra["p"] if algebra.name == "SelectQuery" else algebra
    if node.name in ("Distinct", "Reduced"):
        node = node["p"]
    if node.name != "Project":
        return None
    node = node["p"]
    while node.name == "Extend":
        if not isinstance(node["expr"], Variable):
            return None
        node = node["p"]
    if node.name == "AggregateJoin":  # GROUP BY ?x without aggregates: SAMPLE of the keys
        keys = {str(v) for v in (node["p"].get("expr") or [])}
        if node["p"].name != "Group" or any(
            a.name != "Aggregate_Sample" or str(a["vars"]) not in keys for a in node["A"]
        ):
            return None
        node = node["p"]["p"]
    return _pattern_plan(node, query, has_static=has_static)


def _pattern_plan(
    node: Any, query: QuerySpec, *, has_static: bool
) -> tuple[SqlPlan, list[Filter]] | None:
    """The SQL plan of a pattern (BGP and in-fragment filters) and its residual filters, or
    None when the pattern leaves the fragment, reads no window, or a residual filter is impure
    (the shared tail of ``monotone_core`` and ``solution_core``)."""
    plan = SqlPlan()
    residual: list[Filter] = []
    try:
        _where(
            node,
            plan,
            graph=STATIC if query.window_graphs else ANY_WINDOW,
            query=query,
            residual=residual,
        )
    except NotInFragment:
        return None
    if not plan.window_patterns or (not query.window_graphs and has_static):
        return None
    if any(_impure(f.expr) for f in residual):
        return None
    return plan, residual


# aggregates whose value depends on the multiset of solutions only, never on the order in which
# pyoxigraph meets them (SUM/AVG of floats round by order; GROUP_CONCAT and a SAMPLE of a
# non-key pick by order)
_ORDER_FREE_AGGS = {"Aggregate_Count", "Aggregate_Min", "Aggregate_Max"}
# modifiers over the solutions that keep the result a function of the solution multiset
_OVER_SOLUTIONS = {"Distinct", "Reduced", "Project", "OrderBy", "Extend", "Filter"}


def solution_core(query: QuerySpec, algebra: Any, *, has_static: bool) -> SqlPlan | None:
    """The BGP and in-fragment filters of a query whose result is a function of the multiset
    of its pattern's solutions that pass every filter, taken in any order — or None.

    Above the pattern: projection, DISTINCT, ORDER BY, BIND and HAVING (pure expressions), a
    GROUP BY with COUNT, MIN, MAX or SAMPLE of a key (ren16 Q2). Not LIMIT/OFFSET, other
    aggregates, OPTIONAL, UNION, EXISTS, …: their result depends on more than that multiset.
    Filters outside the SQL fragment are left out of the core, so its solutions are a superset
    of those that pass: the triples they are made of hold every solution a window can have
    (``OracleJob._support_rows``), which is all this core is for — not change points.
    """
    node = algebra["p"] if algebra.name == "SelectQuery" else algebra
    while node.name in _OVER_SOLUTIONS:
        exprs = node["expr"] if node.name == "OrderBy" else [node.get("expr")]
        if any(_impure(e) for e in exprs):
            return None
        node = node["p"]
    if node.name == "AggregateJoin":
        group = node["p"]
        keys = {str(v) for v in (group.get("expr") or [])}
        if group.name != "Group" or any(_impure(e) for e in group.get("expr") or []):
            return None
        for a in node["A"]:
            key_sample = a.name == "Aggregate_Sample" and str(a["vars"]) in keys
            if not (a.name in _ORDER_FREE_AGGS or key_sample) or _impure(a.get("vars")):
                return None
        node = group["p"]
    found = _pattern_plan(node, query, has_static=has_static)
    return None if found is None else found[0]


def _impure(expr: Any) -> bool:
    if getattr(expr, "name", None) in _IMPURE:
        return True
    if isinstance(expr, dict):
        return any(
            _impure(v) if not isinstance(v, list) else any(_impure(x) for x in v)
            for k, v in expr.items()
            if k != "_vars"
        )
    return False


def _where(
    node: Any,
    plan: SqlPlan,
    *,
    graph: int,
    query: QuerySpec,
    residual: list[Filter] | None = None,
) -> frozenset[str]:
    """Flatten the WHERE algebra into patterns and scoped filters; returns its variables.

    ``residual``: filters outside the fragment are collected there instead of refused."""
    name = node.name
    if name == "BGP":
        found: set[str] = set()
        for s, p, o in node["triples"]:
            pat = Pattern(graph, _node(s), _node(p), _node(o))
            plan.patterns.append(pat)
            found.update(pat.variables)
        return frozenset(found)
    if name == "Join":
        return _where(node["p1"], plan, graph=graph, query=query, residual=residual) | _where(
            node["p2"], plan, graph=graph, query=query, residual=residual
        )
    if name == "Filter":
        scope = _where(node["p"], plan, graph=graph, query=query, residual=residual)
        try:
            _check_expr(node["expr"])
            _check_boolean(node["expr"])
        except NotInFragment:
            if residual is None:
                raise
            residual.append(Filter(node["expr"], scope))
            return scope
        plan.filters.append(Filter(node["expr"], scope))
        return scope
    if name == "Graph":
        term = node["term"]
        if not isinstance(term, URIRef):
            raise NotInFragment("GRAPH ?variable")
        names = [w.name for w in query.windows]
        if str(term) not in names:
            raise NotInFragment(f"GRAPH <{term}> is not a window")
        return _where(node["p"], plan, graph=names.index(str(term)), query=query, residual=residual)
    raise NotInFragment(name)


def _check_boolean(expr: Any) -> None:
    """FILTER(?x) needs SPARQL's effective boolean value of a term: outside the fragment."""
    name = getattr(expr, "name", None)
    if name in ("ConditionalAndExpression", "ConditionalOrExpression"):
        for item in [expr["expr"], *expr["other"]]:
            _check_boolean(item)
    elif name == "UnaryNot":
        _check_boolean(expr["expr"])
    elif name != "RelationalExpression":
        raise NotInFragment("a FILTER on the effective boolean value of a term")


def _check_expr(expr: Any) -> None:
    if isinstance(expr, Variable):
        return
    if isinstance(expr, Literal | URIRef):
        return
    name = getattr(expr, "name", None)
    if name not in _EXPRS:
        raise NotInFragment(f"the FILTER function or term {name or expr!r}")
    if name == "RelationalExpression" and expr["op"] not in ("=", "!=", "<", ">", "<=", ">="):
        raise NotInFragment(f"the FILTER operator {expr['op']}")
    for key in ("expr", "other"):
        if key in expr:
            sub = expr[key]
            for item in sub if isinstance(sub, list) else [sub]:
                _check_expr(item)
