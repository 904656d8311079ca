"""``QuerySpec`` → EP-SPARQL as ETALIS' ``ep_sparql_parse/2`` accepts it.

EP-SPARQL is not SPARQL with windows: a query is a *complex-event pattern*. What ETALIS' parser
and compiler (src/ep_sparql/*.P at 84d5dc13) really accept, found by running them
(docs/engines/etalis.md); both the ``etalis`` and the ``jtalis`` adapter use it:

* ``SELECT ?a ?b WHERE { t1 } AND { t2 } … FILTER (e1 && e2)`` — every stream triple pattern is
  an atomic event pattern; a join of patterns is ``AND`` (a plain ``{ t1 . t2 }`` block compiles
  to a rule that never fires); FILTER only works after the last group (inside a group it compiles
  to a rule that never fires) and only on numbers (it calls ``is/2``); ``&&`` works, ``||`` does
  not (it compiles to a call of an undefined ``or/2``);
* ``{ t1 } OR { t2 }`` is the union of single patterns (``UNION`` and ``OPTIONAL`` do not parse);
* the window is ``WITHIN n``: a derived event is kept when its last and first input events are
  at most n apart (the driver feeds milliseconds, so n is RANGE in ms; STEP has no counterpart);
* no PREFIX, no ``SELECT *``, no aggregates in SPARQL's sense, no ORDER BY/LIMIT/DISTINCT.

Static data becomes a condition on the Prolog facts the driver asserts: a triple pattern over
the default graph turns into ``rsp_static(s, p, o)`` inside the FILTER. Numeric constants in
triple patterns become a fresh variable plus a numeric equality, because the driver gives
numbers as Prolog numbers and ``62`` does not unify with ``62.0``; ``a = b`` is rendered
``a >= b && a <= b`` for the same reason.

The rendering is a JSON object ``{"ep_sparql", "variables", "within_ms", "stream"}``: the
driver compiles the window itself (ETALIS' own ``WITHIN`` grammar calls ``trace/0``) and feeds
ETALIS' one event stream only the triples of the stream the window reads.

``=`` and ``!=`` between two terms (variables, IRIs, numbers) become ``rsp_same/2`` and
``rsp_differ/2`` goals (``prolog/rsp_ep_sparql.pl``): ETALIS' own comparison goes through
``is/2`` and raises on IRIs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rsp_sdk.engine import Feature, UnsupportedQuery
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.terms import XSD, XSD_NUMERIC_TYPES

_RELATIONAL = {"<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "!="}


class RenderError(UnsupportedQuery):
    """The query needs something EP-SPARQL cannot express (names the construct)."""

    def __init__(self, engine: str, query: str, what: str, feature: Feature | None = None) -> None:
        super().__init__(
            engine,
            query,
            frozenset({feature}) if feature else frozenset(),
            reason=f"EP-SPARQL cannot express {what}",
        )


@dataclass
class _Pattern:
    """A conjunctive pattern: stream triples (or an OR of single triples), static triples,
    filter conditions."""

    stream: list[str] = field(default_factory=list)
    union: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)


class _Renderer:
    def __init__(self, spec: QuerySpec, engine: str) -> None:
        self.spec = spec
        self.engine = engine
        self.windows = {w.name for w in spec.windows}
        self.window_graphs = bool(getattr(spec, "window_graphs", False)) or self._has_window_graph()
        self.fresh = 0
        self.bnodes: dict[str, str] = {}
        self.out = _Pattern()

    def fail(self, what: str, feature: Feature | None = None) -> RenderError:
        return RenderError(self.engine, self.spec.name, what, feature)

    def _has_window_graph(self) -> bool:
        return any(f"<{w}>" in self.spec.sparql for w in self.windows)

    # ---- terms ------------------------------------------------------------------------------

    def term(self, node: Any, *, in_pattern: bool) -> str:
        from rdflib import BNode, Literal, URIRef, Variable

        if isinstance(node, Variable):
            return f"?{node}"
        if isinstance(node, BNode):  # numbered in order (see _stable): rdflib's are random
            return self.bnodes.setdefault(str(node), f"?_b{len(self.bnodes)}")
        if isinstance(node, URIRef):
            text = str(node)
            if any(c in text for c in "<>'{}|\\`\"") or any(ord(c) <= 0x20 for c in text):
                raise self.fail(f"the IRI <{text}> (ETALIS' IRI grammar rejects its characters)")
            return f"<{text}>"
        if isinstance(node, Literal):
            dt = str(node.datatype) if node.datatype else None
            if dt in XSD_NUMERIC_TYPES:
                if in_pattern:
                    var = self.new_var()
                    self.out.conditions.append(self.numeric_eq(var, self.number(node)))
                    return var
                return self.number(node)
            if in_pattern:
                lex = str(node)
                if any(c in lex for c in '"\\\n\r'):
                    raise self.fail(f"the literal {node.n3()} (quotes or escapes in it)")
                if node.language:
                    return f'"{lex}"@{node.language}'
                if dt and dt != XSD + "string":
                    return f'"{lex}"^^<{dt}>'
                return f'"{lex}"'
            raise self.fail(f"a FILTER on the non-numeric constant {node.n3()} (FILTERs use is/2)")
        raise self.fail(f"the term {node!r}")

    def number(self, node: Any) -> str:
        try:
            value = Decimal(str(node))
        except ArithmeticError:
            raise self.fail(f"the number {node.n3()}") from None
        text = format(value, "f")
        return text if not text.startswith("-") else f"(0{text})"

    def new_var(self) -> str:
        self.fresh += 1
        return f"?_c{self.fresh}"

    @staticmethod
    def numeric_eq(a: str, b: str) -> str:
        return f"{a} >= {b} && {a} <= {b}"

    # ---- expressions --------------------------------------------------------------------------

    def expr(self, node: Any) -> str:
        from rdflib import Literal, Variable
        from rdflib.plugins.sparql.parserutils import CompValue

        if isinstance(node, Variable | Literal):
            return self.term(node, in_pattern=False)
        if not isinstance(node, CompValue):
            raise self.fail(f"the FILTER expression {node!r}")
        name = node.name
        if name == "RelationalExpression":
            op = str(node["op"])
            if op in ("=", "!=") and self.is_term(node["expr"]) and self.is_term(node["other"]):
                return self.term_comparison(op, node["expr"], node["other"])
            left, right = self.expr(node["expr"]), self.expr(node["other"])
            if op == "=":
                return self.numeric_eq(left, right)
            if op not in _RELATIONAL:
                raise self.fail(f"the FILTER operator {op}", Feature.FILTER)
            return f"{left} {_RELATIONAL[op]} {right}"
        if name == "ConditionalAndExpression":
            parts = [node["expr"], *node["other"]]
            return " && ".join(self.expr(p) for p in parts)
        if name == "ConditionalOrExpression":
            raise self.fail("|| in a FILTER (ETALIS compiles it to an undefined or/2)")
        if name in ("AdditiveExpression", "MultiplicativeExpression"):
            text = self.expr(node["expr"])
            for op, other in zip(node["op"], node["other"], strict=True):
                text = f"{text} {op} {self.expr(other)}"
            return f"({text})"
        if name == "UnaryMinus":
            return f"(0 - {self.expr(node['expr'])})"
        raise self.fail(f"the FILTER expression {name}")

    @staticmethod
    def is_term(node: Any) -> bool:
        """A variable, an IRI or a numeric constant: what ``rsp_same/2`` compares."""
        from rdflib import Literal, URIRef, Variable

        if isinstance(node, Literal):
            return (str(node.datatype) if node.datatype else None) in XSD_NUMERIC_TYPES
        return isinstance(node, Variable | URIRef)

    def term_comparison(self, op: str, left: Any, right: Any) -> str:
        """``=``/``!=`` of two terms as ``rsp_same``/``rsp_differ`` (prolog/rsp_ep_sparql.pl):
        ETALIS compiles a relational FILTER to ``A is X, B is Y, A \\= B``, so comparing IRIs
        raised "is/2: Arithmetic: … is not a function" (the functional suite's self-join with
        ``FILTER(?a != ?b)``); the two predicates compare numbers by value and anything else as
        terms, SPARQL's RDFterm-equal for IRIs."""
        a, b = (self.term(x, in_pattern=False) for x in (left, right))
        return f"{'rsp_same' if op == '=' else 'rsp_differ'}({a}, {b})"

    # ---- patterns -----------------------------------------------------------------------------

    def triple(self, t: Any) -> str:
        s, p, o = (self.term(x, in_pattern=True) for x in t)
        return f"{s} {p} {o}"

    def pattern(self, node: Any, *, stream: bool) -> None:
        from rdflib.plugins.sparql.parserutils import CompValue

        if not isinstance(node, CompValue):
            raise self.fail(f"the pattern {node!r}")
        name = node.name
        if name == "BGP":
            for t in _stable(node["triples"]):
                if stream:
                    self.out.stream.append(self.triple(t))
                else:
                    s, p, o = (self.term(x, in_pattern=True) for x in t)
                    self.out.static.append(f"rsp_static({s}, {p}, {o})")
        elif name == "Join":
            self.pattern(node["p1"], stream=stream)
            self.pattern(node["p2"], stream=stream)
        elif name == "Filter":
            self.pattern(node["p"], stream=stream)
            self.out.conditions.append(self.expr(node["expr"]))
        elif name == "Graph":
            if str(node["term"]) not in self.windows:
                raise self.fail("a GRAPH pattern over a named graph", Feature.NAMED_GRAPHS)
            if len(self.windows) > 1:
                raise self.fail("several windows (ETALIS has one event stream)")
            self.pattern(node["p"], stream=True)
        elif name == "Union":
            self.out.union.extend(self.union_branches(node))
        elif name in ("LeftJoin",):
            raise self.fail("OPTIONAL (ETALIS' EP-SPARQL grammar does not parse it)")
        elif name in ("Minus",):
            raise self.fail("MINUS (negation is CNOT over sequences in ETALIS)", Feature.NEGATION)
        else:
            raise self.fail(f"the SPARQL pattern {name}")

    def union_branches(self, node: Any) -> list[str]:
        from rdflib.plugins.sparql.parserutils import CompValue

        out: list[str] = []
        for side in (node["p1"], node["p2"]):
            while isinstance(side, CompValue) and side.name == "Graph":
                if str(side["term"]) not in self.windows:
                    raise self.fail("a GRAPH pattern over a named graph", Feature.NAMED_GRAPHS)
                side = side["p"]
            if isinstance(side, CompValue) and side.name == "Union":
                out.extend(self.union_branches(side))
            elif isinstance(side, CompValue) and side.name == "BGP" and len(side["triples"]) == 1:
                out.append(self.triple(side["triples"][0]))
            else:
                raise self.fail("a UNION branch other than a single triple pattern")
        return out

    def connected_order(self, triples: list[str]) -> list[str]:
        """Order the join so that every suffix is connected.

        ``{ a } AND { b } AND { c }`` parses right-nested, ``a AND (b AND c)``, and ETALIS pairs
        the events of an AND one-to-one: an inner AND of patterns that share no variable pairs
        unrelated events and the outer join then fails (a four-pattern CSRBench join gave no
        result at all in the order rdflib lists it). Building the list from the right, each
        pattern added shares a variable with those already placed.
        """
        import re

        def variables(t: str) -> set[str]:
            return set(re.findall(r"\?\w+", t))

        if len(triples) < 2:
            return list(triples)
        left = list(triples)
        placed = [left.pop()]
        seen = variables(placed[0])
        while left:
            pick = next((t for t in reversed(left) if variables(t) & seen), None)
            if pick is None:
                raise self.fail(
                    "a join of patterns that share no variable (ETALIS' AND pairs unrelated "
                    "events one-to-one instead of building their product)"
                )
            left.remove(pick)
            placed.insert(0, pick)
            seen |= variables(pick)
        return placed

    # ---- the query ----------------------------------------------------------------------------

    def render(self) -> dict[str, Any]:
        from rdflib.plugins.sparql import prepareQuery

        spec = self.spec
        if len(spec.windows) != 1:
            raise self.fail(
                "several windows (ETALIS has one event stream)"
                if spec.windows
                else "a query without a window"
            )
        algebra = prepareQuery(spec.sparql, initNs=dict(spec.prefixes)).algebra
        if algebra.name != "SelectQuery":
            raise self.fail(f"a {algebra.name} (the driver runs SELECT queries)")
        project = algebra["p"]
        if project.name != "Project":
            raise self.fail(f"the solution modifier {project.name}")
        variables = [str(v) for v in project["PV"]]
        body = project["p"]
        if body.name in ("AggregateJoin", "Group"):
            raise self.fail("SPARQL aggregates (EP-SPARQL aggregates are running aggregates)")
        self.pattern(body, stream=not self.window_graphs)
        out = self.out
        if out.union and out.stream:
            raise self.fail("a UNION joined with other patterns (OR binds tighter than AND)")
        if out.union and (out.conditions or out.static):
            raise self.fail("a FILTER or static data around a UNION")
        groups = [f"{{ {t} }}" for t in self.connected_order(out.stream)]
        where = " AND ".join(groups) if groups else " OR ".join(f"{{ {t} }}" for t in out.union)
        if not where:
            raise self.fail("a query without stream patterns")
        conditions = [*join_order(out.static, out.stream or out.union), *out.conditions]
        text = f"SELECT {' '.join('?' + v for v in variables)} WHERE {where}"
        if conditions:
            text += f" FILTER ( {' && '.join(conditions)} )"
        return {
            "ep_sparql": text,
            "variables": variables,
            "within_ms": spec.windows[0].range_ms,
            "stream": spec.windows[0].stream,
        }


def render_ep_sparql(spec: QuerySpec, engine: str = "etalis") -> str:
    """The rendering the driver registers: JSON with the EP-SPARQL text, the projected variables,
    the WITHIN window in milliseconds and the stream the window reads (ETALIS has one event
    stream, so the drivers keep other streams' triples out of it)."""
    return json.dumps(_Renderer(spec, engine).render(), ensure_ascii=False)


def _variables(text: str) -> set[str]:
    """The ``?name`` variables of a rendered goal (not a ``?`` inside an IRI or a literal)."""
    import re

    bare = re.sub(r"<[^>]*>|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", " ", text)
    return set(re.findall(r"\?\w+", bare))


def join_order(static: list[str], stream: list[str]) -> list[str]:
    """The static goals in the order ETALIS should try them: a goal with the fewest variables
    still unbound next (the stream pattern's variables are bound when the FILTER runs), then
    one whose subject is bound, ties in the given (stable) order.

    ETALIS runs the FILTER as one Prolog conjunction, left to right, so this order *is* the
    static join's plan. Listed as ``_stable`` sorts them (by text), CityBench Q5's began with
    ``rsp_static(?evtId, sao:value, ?title)`` and ``rsp_static(?foi2, ct:hasStartLatitude,
    ?lat2)``: every cultural event times every sensor before the goal that ties the sensor to
    the stream's ``?p2``. On a traffic observation whose property is no congestion level that
    search fails only after enumerating the whole product, so a batch of observations kept
    swipl busy for minutes and JTALIS' Q5 cells timed out (docs/engines/jtalis.md). Bound
    variables first, that goal is ``rsp_static(?p2, rdf:type, ct:CongestionLevel)``, which
    fails at once."""
    bound: set[str] = set().union(*(_variables(t) for t in stream)) if stream else set()
    left = list(static)
    out: list[str] = []
    while left:
        pick = min(left, key=lambda g: _cost(g, bound))  # the first of the cheapest
        left.remove(pick)
        out.append(pick)
        bound |= _variables(pick)
    return out


def _cost(goal: str, bound: set[str]) -> tuple[int, int]:
    """(unbound variables, 1 if the subject is one of them) of an ``rsp_static(s, p, o)``."""
    import re

    unbound = _variables(goal) - bound
    subject = re.match(r"rsp_static\((<[^>]*>|[^,]*),", goal)
    free_subject = subject is not None and bool(_variables(subject.group(1)) & unbound)
    return len(unbound), int(free_subject)


def _stable(triples: list[Any]) -> list[Any]:
    """A BGP's triples in an order that does not depend on blank-node labels.

    rdflib labels ``[ … ]`` blank nodes at random on every parse and orders a BGP's triples by
    comparing them, so the same query rendered in two processes gave two texts — and the
    rendered text is part of a matrix cell's key: every rerun of CSRBench Q6 or YABench's join
    on ETALIS/JTALIS planned new cells. Sorted with blank nodes blanked (a stable sort), then
    numbered in that order by ``term``."""
    from rdflib import BNode

    return sorted(triples, key=lambda t: tuple("" if isinstance(x, BNode) else str(x) for x in t))
