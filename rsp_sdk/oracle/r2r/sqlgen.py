"""Compile a fragment query (``SqlPlan``) to Spark SQL over keyed window content.

Terms are integer ids (``rsp_sdk.oracle.encoding``): the streams store canonical terms, so equal
ids are equal RDF terms, and joins compare longs. Numbers are compared and computed *by value*
following SPARQL's type promotion: every numeric operand is a triple (rank, double, decimal)
with rank 0 = xsd:integer (and its derived types), 1 = xsd:decimal, 2 = xsd:float, 3 =
xsd:double, parsed once per distinct literal from its lexical form by its datatype (the
``{num}`` table: id, r, d, m, simple, lex); a comparison happens in the widest rank of its
operands (decimal exactly, float in single precision, double in double). A literal that is not
a valid numeral of its datatype, or a non-numeric term in a numeric context, yields NULL —
SQL's three-valued logic then matches SPARQL's error semantics for ``&&``, ``||``, ``!`` and
FILTER. Deliberate approximations: a division by zero on floats is an error here (INF in
SPARQL), decimals beyond 38 digits overflow to an error, and MIN/MAX over non-numeric values
order by term text.

Two shapes are produced:

* ``window``: input ``content`` (kc, kb, kr, w, s, p, o — deduplicated, a window content is a set
  of triples), ``static`` (s, p, o) and ``keys`` (kc, kb, kr); output (kc, kb, kr, p0, p1, …)
  with one row per solution (a bag), aggregates per key, and an aggregate without GROUP BY
  giving its one row even on a key without any match (COUNT 0, AVG/SUM 0, MIN/MAX unbound);
* ``temporal``: input ``content`` = the stream rows of the query's single window (t, idx, s, p, o)
  and ``static``; output every match (mint, maxt, maxidx, p0, p1, …) whose window elements lie
  less than ω apart (the necessary condition to meet in one window).

Projected position k of the output is column ``p{k}`` (``projected(k)``): a term id (BIGINT),
or, for a computed value (COUNT, SUM, AVG), its N-Triples text (STRING;
``CompiledQuery.text_positions``). Flat columns rather than two arrays per row: Spark writes
them to Arrow column by column, where arrays of 3 ids and 3 null texts per row made collecting
2.9 M rows (YABench Q1 at 21 M triples) take a third longer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from rdflib.term import Literal, URIRef, Variable

from rsp_sdk.model.terms import XSD, XSD_INTEGER_TYPES
from rsp_sdk.oracle.r2r.fragment import (
    ANY_WINDOW,
    STATIC,
    Aggregate,
    Node,
    NotInFragment,
    Pattern,
    SqlPlan,
    term_nt,
)

INTEGER_TYPES = sorted(XSD_INTEGER_TYPES)
_RANK_OF = {
    **{t: 0 for t in INTEGER_TYPES},
    XSD + "decimal": 1,
    XSD + "float": 2,
    XSD + "double": 3,
}
_INT_RE = r"^[+-]?[0-9]+$"
_DEC_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
_FP_RE = r"^([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)$"
_SQL_OP = {"=": "=", "!=": "<>", "<": "<", ">": ">", "<=": "<=", ">=": ">="}


def sql_str(text: str) -> str:
    """A Spark SQL string literal (backslash escapes are on by default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Num:
    """A numeric SQL operand: rank, double value, decimal value (NULL rank = error)."""

    rank: str
    dbl: str
    dec: str


NULL_NUM = Num("CAST(NULL AS INT)", "CAST(NULL AS DOUBLE)", "CAST(NULL AS DECIMAL(38,18))")


_LEX_RE = sql_str(r'^"(.*)"\^\^<[^>]*>$')
_DT_RE = sql_str(r"\^\^<([^>]*)>$")


def typed_columns(col: str) -> tuple[str, str, str]:
    """SQL for (rank, double, decimal) of an N-Triples term column."""
    lex = f"regexp_extract({col}, {_LEX_RE}, 1)"
    dt = f"regexp_extract({col}, {_DT_RE}, 1)"
    ints = ", ".join(sql_str(t) for t in INTEGER_TYPES)
    rank = (
        f"CASE WHEN {dt} IN ({ints}) AND {lex} RLIKE {sql_str(_INT_RE)} THEN 0 "
        f"WHEN {dt} = {sql_str(XSD + 'decimal')} AND {lex} RLIKE {sql_str(_DEC_RE)} THEN 1 "
        f"WHEN {dt} = {sql_str(XSD + 'float')} AND {lex} RLIKE {sql_str(_FP_RE)} THEN 2 "
        f"WHEN {dt} = {sql_str(XSD + 'double')} AND {lex} RLIKE {sql_str(_FP_RE)} THEN 3 END"
    )
    as_double = f"CAST(regexp_replace({lex}, 'INF', 'Infinity') AS DOUBLE)"
    dbl = (
        f"CASE WHEN {dt} = {sql_str(XSD + 'float')} THEN CAST(CAST("
        f"regexp_replace({lex}, 'INF', 'Infinity') AS FLOAT) AS DOUBLE) ELSE {as_double} END"
    )
    dec = f"CAST({lex} AS DECIMAL(38,18))"
    return rank, dbl, dec


def const_num(term: Any) -> Num:
    if not isinstance(term, Literal) or term.datatype is None:
        return NULL_NUM
    rank = _RANK_OF.get(str(term.datatype))
    if rank is None:
        return NULL_NUM
    lex = str(term)
    try:
        value = float(lex.replace("INF", "inf"))
    except ValueError:
        return NULL_NUM
    dec = "CAST(NULL AS DECIMAL(38,18))"
    if rank <= 1:
        try:
            Decimal(lex)
            dec = f"CAST({sql_str(lex)} AS DECIMAL(38,18))"
        except InvalidOperation:
            return NULL_NUM
    if rank == 2:
        dbl = f"CAST(CAST({sql_str(lex.replace('INF', 'Infinity'))} AS FLOAT) AS DOUBLE)"
    else:
        dbl = f"CAST({sql_str(repr(value).replace('inf', 'Infinity'))} AS DOUBLE)"
    return Num(str(rank), dbl, dec)


def _const_info(term: Any) -> tuple[str, str, str]:
    """(is literal, is simple literal, lexical) SQL constants of an rdflib term."""
    if isinstance(term, Literal):
        simple = term.language is None and (
            term.datatype is None or str(term.datatype) == XSD + "string"
        )
        text = term_nt(term)
        lex = text[1 : text.rindex('"')] if simple else ""
        return "TRUE", "TRUE" if simple else "FALSE", sql_str(lex) if simple else "NULL"
    return "FALSE", "FALSE", "NULL"


class _Compiler:
    def __init__(self, plan: SqlPlan, cols: dict[str, str], const_id: Callable[[str], int]) -> None:
        self.plan = plan
        self.cols = cols  # variable -> column name (term id) in the joined relation
        self.const_id = const_id
        self.valued_vars: set[str] = set()  # variables whose literal values are joined in

    # -- operands --------------------------------------------------------------------------
    @staticmethod
    def term_like(expr: Any) -> bool:
        return isinstance(expr, Variable | URIRef | Literal)

    def _var_col(self, expr: Any, scope: frozenset[str]) -> str | None:
        name = str(expr)
        if name not in scope or name not in self.cols:
            return None  # unbound in this FILTER's group
        self.valued_vars.add(name)
        return self.cols[name]

    def term(self, expr: Any, scope: frozenset[str]) -> str:
        """SQL of the term id (NULL when unbound)."""
        if isinstance(expr, Variable):
            col = self._var_col(expr, scope)
            return "CAST(NULL AS BIGINT)" if col is None else col
        return str(self.const_id(term_nt(expr)))

    def literal_info(self, expr: Any, scope: frozenset[str]) -> tuple[str, str, str]:
        """SQL of (is a literal, is a simple literal, simple literal's lexical form)."""
        if isinstance(expr, Variable):
            col = self._var_col(expr, scope)
            if col is None:
                return "NULL", "NULL", "NULL"
            return f"(n_{col}.id IS NOT NULL)", f"coalesce(n_{col}.simple, FALSE)", f"n_{col}.lex"
        return _const_info(expr)

    def num(self, expr: Any, scope: frozenset[str]) -> Num:
        if isinstance(expr, Variable):
            col = self._var_col(expr, scope)
            if col is None:
                return NULL_NUM
            return Num(f"n_{col}.r", f"n_{col}.d", f"n_{col}.m")
        if isinstance(expr, Literal):
            return const_num(expr)
        if isinstance(expr, URIRef):
            return NULL_NUM
        name = expr.name
        if name == "UnaryMinus":
            a = self.num(expr["expr"], scope)
            return Num(a.rank, f"(-{a.dbl})", f"(-{a.dec})")
        if name == "UnaryPlus":
            return self.num(expr["expr"], scope)
        if name in ("AdditiveExpression", "MultiplicativeExpression"):
            acc = self.num(expr["expr"], scope)
            for op, other in zip(expr["op"], expr["other"], strict=True):
                acc = self.arith(acc, op, self.num(other, scope))
            return acc
        raise NotInFragment(f"{name} as a number")

    @staticmethod
    def arith(a: Num, op: str, b: Num) -> Num:
        widest = f"greatest({a.rank}, {b.rank}{', 1' if op == '/' else ''})"
        rank = f"(CASE WHEN {a.rank} IS NULL OR {b.rank} IS NULL THEN NULL ELSE {widest} END)"
        if op == "/":
            raw = f"(CASE WHEN {b.dbl} = 0 THEN NULL ELSE {a.dbl} / {b.dbl} END)"
            dec = "CAST(NULL AS DECIMAL(38,18))"  # compare quotients as doubles
        else:
            raw = f"({a.dbl} {op} {b.dbl})"
            dec = f"({a.dec} {op} {b.dec})"
        dbl = f"(CASE WHEN {rank} = 2 THEN CAST(CAST({raw} AS FLOAT) AS DOUBLE) ELSE {raw} END)"
        return Num(rank, dbl, dec)

    @staticmethod
    def num_compare(a: Num, op: str, b: Num) -> str:
        sop = _SQL_OP[op]
        return (
            f"(CASE WHEN {a.rank} IS NULL OR {b.rank} IS NULL THEN NULL "
            f"WHEN isnan({a.dbl}) OR isnan({b.dbl}) THEN {'TRUE' if op == '!=' else 'FALSE'} "
            f"WHEN greatest({a.rank}, {b.rank}) = 3 THEN {a.dbl} {sop} {b.dbl} "
            f"WHEN greatest({a.rank}, {b.rank}) = 2 THEN "
            f"CAST({a.dbl} AS FLOAT) {sop} CAST({b.dbl} AS FLOAT) "
            f"ELSE coalesce({a.dec} {sop} {b.dec}, {a.dbl} {sop} {b.dbl}) END)"
        )

    # -- boolean expressions ---------------------------------------------------------------
    def boolean(self, expr: Any, scope: frozenset[str]) -> str:
        name = expr.name
        if name == "ConditionalAndExpression":
            parts = [self.boolean(e, scope) for e in [expr["expr"], *expr["other"]]]
            return "(" + " AND ".join(parts) + ")"
        if name == "ConditionalOrExpression":
            parts = [self.boolean(e, scope) for e in [expr["expr"], *expr["other"]]]
            return "(" + " OR ".join(parts) + ")"
        if name == "UnaryNot":
            return f"(NOT {self.boolean(expr['expr'], scope)})"
        if name != "RelationalExpression":
            raise NotInFragment(name)
        a, op, b = expr["expr"], expr["op"], expr["other"]
        na, nb = self.num(a, scope), self.num(b, scope)
        numeric = self.num_compare(na, op, nb)
        if not (self.term_like(a) and self.term_like(b)):
            return numeric
        ta, tb = self.term(a, scope), self.term(b, scope)
        lit_a, simple_a, lex_a = self.literal_info(a, scope)
        lit_b, simple_b, lex_b = self.literal_info(b, scope)
        simple = f"({simple_a} AND {simple_b})"
        both_numeric = f"({na.rank} IS NOT NULL AND {nb.rank} IS NOT NULL)"
        if op in ("=", "!="):
            same = "TRUE" if op == "=" else "FALSE"
            differ = "FALSE" if op == "=" else "TRUE"
            return (
                f"(CASE WHEN {ta} IS NULL OR {tb} IS NULL THEN NULL "
                f"WHEN {both_numeric} THEN {numeric} "
                f"WHEN {ta} = {tb} THEN {same} "
                f"WHEN {lit_a} AND {lit_b} THEN (CASE WHEN {simple} THEN {differ} END) "
                f"ELSE {differ} END)"
            )
        return (
            f"(CASE WHEN {ta} IS NULL OR {tb} IS NULL THEN NULL "
            f"WHEN {both_numeric} THEN {numeric} "
            f"WHEN {simple} THEN {lex_a} {_SQL_OP[op]} {lex_b} END)"
        )


def _pattern_sql(
    pat: Pattern, cols: dict[str, str], temporal: bool, const_id: Callable[[str], int]
) -> tuple[str, list[str]]:
    """SELECT of one triple pattern; returns the SQL and the variable columns it provides."""
    where: list[str] = []
    if pat.graph == STATIC:
        source, keys = "{static}", []
    else:
        source = "{content}" if pat.graph != ANY_WINDOW or temporal else "{content_any}"
        keys = ["t", "idx"] if temporal else ["kc", "kb", "kr"]
        if pat.graph >= 0 and not temporal:
            where.append(f"w = {pat.graph}")
    select = list(keys)
    seen: dict[str, str] = {}
    provided: list[str] = []
    for pos, node in (("s", pat.s), ("p", pat.p), ("o", pat.o)):
        if node.const is not None:
            where.append(f"{pos} = {const_id(node.const)}")
        elif node.var is not None:
            if node.var in seen:
                where.append(f"{pos} = {seen[node.var]}")
            else:
                seen[node.var] = pos
                select.append(f"{pos} AS {cols[node.var]}")
                provided.append(node.var)
    sql = f"SELECT {', '.join(select)} FROM {source}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql, provided


def _consts(pat: Pattern) -> int:
    return sum(1 for n in (pat.s, pat.p, pat.o) if n.const is not None)


def _join_order(patterns: list[Pattern]) -> list[Pattern]:
    """Greedy: most selective window pattern first, then connected patterns, windows first."""
    left = list(patterns)
    first = max((p for p in left if p.graph != STATIC), key=lambda p: (_consts(p), -left.index(p)))
    order = [first]
    left.remove(first)
    bound = set(first.variables)
    while left:
        connected = [p for p in left if bound & set(p.variables)]
        pool = connected or left
        nxt = max(pool, key=lambda p: (p.graph != STATIC, _consts(p), -left.index(p)))
        order.append(nxt)
        left.remove(nxt)
        bound |= set(nxt.variables)
    return order


def _pushed_filters(
    plan: SqlPlan, cols: dict[str, str], const_id: Callable[[str], int], order: list[Pattern]
) -> dict[int, list[tuple[str, str]]]:
    """FILTERs over one variable, applied also to the first pattern (in join order) binding it.

    In this fragment a FILTER constrains the whole conjunctive pattern, so rows of that
    pattern it rejects can join into no solution: dropping them before the joins (FILTER
    ?value > 95 keeps 5 % of a self-join's side) changes nothing, and the filter still runs
    on the joined rows as well. Returns {position in ``order``: [(variable, SQL condition)]}.
    """
    out: dict[int, list[tuple[str, str]]] = {}
    for f in plan.filters:
        comp = _Compiler(plan, cols, const_id)
        try:
            cond = comp.boolean(f.expr, f.scope)
        except NotInFragment:  # pragma: no cover - compile_plan raises it for the whole query
            continue
        if len(comp.valued_vars) != 1:
            continue
        (v,) = comp.valued_vars
        j = next((k for k, p in enumerate(order) if v in p.variables), None)
        if j is not None:
            out.setdefault(j, []).append((v, cond))
    return out


@dataclass(frozen=True)
class Prejoin:
    """Window shape by joining first: the patterns are joined once over the single window's
    raw rows (elements less than ω apart), the filtered matches are then exploded into the
    closes c ≡ a residue mod β with maxt < c ≤ mint + ω and kept for the keys (kc, kb, kr)
    with maxt < kb and maxidx ≤ kr — the keys whose content holds every element of the
    match. The join reads each element once instead of once per window containing it;
    ``distinct`` makes each key's solutions a set when the stream repeats a triple."""

    beta: int
    residues: tuple[int, ...]
    omega: int
    distinct: bool


def projected(k: int) -> str:
    """The output column of projected position k (a term id, or a text: see the docstring)."""
    return f"p{k}"


@dataclass(frozen=True)
class CompiledQuery:
    sql: str
    text_positions: frozenset[int]  # projected positions holding computed text, not term ids


def _prejoin_ctes(pre: Prejoin, names: list[str]) -> list[str]:
    """``x``: the matches ``f0`` exploded into closes; ``f``: those some key needs."""
    b, hi = pre.beta, f"(f0.mint + {pre.omega})"
    c1 = f"(f0.maxt + 1 + pmod(rr.r - f0.maxt - 1, {b}))"
    closes = f"IF({c1} <= {hi}, sequence({c1}, {hi}, CAST({b} AS BIGINT)), array())"
    residues = ", ".join(f"CAST({r} AS BIGINT)" for r in pre.residues)
    x = (
        f"x AS (SELECT f0.*, cc.c AS xc FROM f0 LATERAL VIEW explode(array({residues})) rr AS r "
        f"LATERAL VIEW explode({closes}) cc AS c)"
    )
    distinct = "DISTINCT " if pre.distinct else ""
    selected = ", ".join(["k.kc", "k.kb", "k.kr"] + [f"x.{n}" for n in names])
    f = (
        f"f AS (SELECT {distinct}{selected} FROM x JOIN {{keys}} k ON x.xc = k.kc "
        "WHERE x.maxt < k.kb AND x.maxidx <= k.kr)"
    )
    return [x, f]


def value_table_sql() -> str:
    """(id, r, d, m, simple, lex) of every literal of ``{literals}`` (id, term)."""
    r, d, m = typed_columns("term")
    simple = "term RLIKE '^\"(.*)\"$'"
    lex = "regexp_extract(term, '^\"(.*)\"$', 1)"
    return (
        f"SELECT id, {r} AS r, {d} AS d, {m} AS m, {simple} AS simple, "
        f"CASE WHEN {simple} THEN {lex} END AS lex FROM {{literals}}"
    )


def compile_plan(
    plan: SqlPlan,
    const_id: Callable[[str], int],
    *,
    temporal: bool = False,
    omega: int = 0,
    prejoin: Prejoin | None = None,
) -> CompiledQuery:
    """Spark SQL with ``{content}``, ``{content_any}``, ``{static}``, ``{keys}``, ``{num}``,
    ``{terms}`` holes (see the module docstring)."""
    variables: list[str] = []
    for pat in plan.patterns:
        for v in pat.variables:
            if v not in variables:
                variables.append(v)
    cols = {v: f"v{i}" for i, v in enumerate(variables)}
    out_temporal = temporal
    if prejoin is not None:
        temporal, omega = True, prejoin.omega
    joined = _joined(plan, variables, cols, const_id, temporal=temporal, omega=omega)
    comp = _Compiler(plan, cols, const_id)
    conditions = [comp.boolean(f.expr, f.scope) for f in plan.filters]
    text_vars: set[str] = set()
    for _, item in plan.projection:
        if isinstance(item, Aggregate) and item.arg and item.func in ("sum", "avg", "min", "max"):
            comp.valued_vars.add(item.arg)
            if item.func in ("min", "max"):
                text_vars.add(item.arg)
    valued = sorted(comp.valued_vars)
    # with a prejoin, "f" is the prejoin's last CTE, reading this one as "f0"
    name = "f" if prejoin is None else "f0"
    ctes = [f"j AS ({joined})", _filtered(name, cols, valued, sorted(text_vars), conditions)]
    if prejoin is not None:
        names = [cols[v] for v in variables]
        names += [c for v in valued for c in (f"r_{cols[v]}", f"d_{cols[v]}", f"m_{cols[v]}")]
        names += [f"x_{cols[v]}" for v in sorted(text_vars)]
        ctes += _prejoin_ctes(prejoin, names)
        temporal = out_temporal
    with_clause = "WITH " + ", ".join(ctes) + " "
    if plan.group_by is None:
        cells = ", ".join(
            f"{cols.get(str(item), 'CAST(NULL AS BIGINT)')} AS {projected(k)}"
            for k, (_, item) in enumerate(plan.projection)
        )
        prefix = "mint, maxt, maxidx" if temporal else "kc, kb, kr"
        distinct = "DISTINCT " if plan.distinct and not temporal else ""
        sql = f"SELECT {distinct}{prefix}, {cells} FROM f"
        return CompiledQuery(with_clause + sql, frozenset())
    if temporal:
        raise NotInFragment("aggregates on the temporal-join path")
    positions = frozenset(
        k
        for k, (_, item) in enumerate(plan.projection)
        if isinstance(item, Aggregate) and item.func in ("count", "sum", "avg")
    )
    return CompiledQuery(with_clause + _aggregate_sql(plan, cols, positions), positions)


def _joined(
    plan: SqlPlan,
    variables: list[str],
    cols: dict[str, str],
    const_id: Callable[[str], int],
    *,
    temporal: bool,
    omega: int,
) -> str:
    """The basic graph pattern as one SELECT: the patterns joined in ``_join_order`` on their
    shared variables (window patterns also on the report key, or on |Δt| < ω when temporal),
    filters pushed into the pattern that binds their variable; its head is the report key (or
    the temporal bounds) and one column per variable."""
    order = _join_order(plan.patterns)
    froms: list[str] = []
    provider: dict[str, str] = {}
    keyed: list[str] = []
    pushed = _pushed_filters(plan, cols, const_id, order)
    for j, pat in enumerate(order):
        alias = f"a{j}"
        sql, provided = _pattern_sql(pat, cols, temporal, const_id)
        for v, cond in pushed.get(j, []):
            sql = (
                f"SELECT q.* FROM ({sql}) q LEFT JOIN {{num}} n_{cols[v]} "
                f"ON n_{cols[v]}.id = q.{cols[v]} WHERE {cond}"
            )
        conds: list[str] = []
        for v in pat.variables:
            if v in provider and provider[v] != alias:
                conds.append(f"{alias}.{cols[v]} = {provider[v]}.{cols[v]}")
        if pat.graph != STATIC:
            if keyed and not temporal:
                conds += [f"{alias}.{k} = {keyed[0]}.{k}" for k in ("kc", "kb", "kr")]
            if temporal:
                conds += [f"abs({alias}.t - {other}.t) < {omega}" for other in keyed]
            keyed.append(alias)
        for v in provided:
            provider.setdefault(v, alias)
        if j == 0:
            froms.append(f"({sql}) {alias}")
        elif conds:
            froms.append(f"JOIN ({sql}) {alias} ON " + " AND ".join(conds))
        else:
            froms.append(f"CROSS JOIN ({sql}) {alias}")
    head = _temporal_head(keyed) if temporal else [f"{keyed[0]}.{k}" for k in ("kc", "kb", "kr")]
    head += [f"{provider[v]}.{cols[v]} AS {cols[v]}" for v in variables]
    return f"SELECT {', '.join(head)} FROM " + " ".join(froms)


def _temporal_head(keyed: list[str]) -> list[str]:
    """A temporal join's bounds: its earliest and latest element time, its last row."""

    def fold(fn: str, col: str) -> str:
        items = [f"{a}.{col}" for a in keyed]
        return items[0] if len(items) == 1 else f"{fn}({', '.join(items)})"

    return [
        f"{fold('least', 't')} AS mint",
        f"{fold('greatest', 't')} AS maxt",
        f"{fold('greatest', 'idx')} AS maxidx",
    ]


def _filtered(
    name: str, cols: dict[str, str], valued: list[str], text_vars: list[str], conditions: list[str]
) -> str:
    """The CTE ``name``: the joined rows that pass the filters, with the numeric value columns
    (r, d, m) of each valued variable and the text of each MIN/MAX argument."""
    joins = [f" LEFT JOIN {{num}} n_{cols[v]} ON n_{cols[v]}.id = j.{cols[v]}" for v in valued]
    joins += [
        f" LEFT JOIN {{terms}} t_{cols[v]} ON t_{cols[v]}.id = j.{cols[v]}" for v in text_vars
    ]
    where = (" WHERE " + " AND ".join(conditions)) if conditions else ""
    extra = [
        f"n_{cols[v]}.r AS r_{cols[v]}, n_{cols[v]}.d AS d_{cols[v]}, n_{cols[v]}.m AS m_{cols[v]}"
        for v in valued
    ] + [f"t_{cols[v]}.term AS x_{cols[v]}" for v in text_vars]
    select = "j.*" + "".join(", " + e for e in extra)
    return f"{name} AS (SELECT {select} FROM j{''.join(joins)}{where})"


def _fmt_decimal(x: str) -> str:
    return f"regexp_replace(regexp_replace(CAST({x} AS STRING), '0+$', ''), '\\\\.$', '')"


def _fmt_float(x: str) -> str:
    s = f"regexp_replace(CAST({x} AS STRING), '\\\\.0$', '')"
    return f"regexp_replace(regexp_replace({s}, 'Infinity', 'INF'), '\\\\.0E', 'E')"


def _typed_term(lex: str, dt: str) -> str:
    return f"concat('\"', {lex}, '\"^^<{XSD}{dt}>')"


def _agg_sql(agg: Aggregate, cols: dict[str, str]) -> str:
    """A computed text (COUNT, SUM, AVG) or a term id (MIN, MAX, SAMPLE)."""
    if agg.func == "count":
        inner = "*" if agg.arg is None else cols[agg.arg]
        distinct = "DISTINCT " if agg.distinct else ""
        return _typed_term(f"CAST(count({distinct}{inner}) AS STRING)", "integer")
    assert agg.arg is not None
    col = cols[agg.arg]
    r, d, m = f"r_{col}", f"d_{col}", f"m_{col}"
    invalid = f"max(CASE WHEN {r} IS NULL THEN 1 ELSE 0 END) = 1"
    if agg.func == "sample":
        return f"min({col})"
    if agg.func in ("min", "max"):
        by = "min_by" if agg.func == "min" else "max_by"
        return f"(CASE WHEN {invalid} THEN {by}({col}, x_{col}) ELSE {by}({col}, {d}) END)"
    if agg.func == "sum":
        return (
            f"(CASE WHEN {invalid} THEN NULL "
            f"WHEN max({r}) = 0 THEN "
            + _typed_term(f"CAST(CAST(sum({m}) AS DECIMAL(38,0)) AS STRING)", "integer")
            + f" WHEN max({r}) = 1 THEN "
            + _typed_term(_fmt_decimal(f"CAST(sum({m}) AS DECIMAL(38,18))"), "decimal")
            + f" WHEN max({r}) = 2 THEN "
            + _typed_term(_fmt_float(f"CAST(sum({d}) AS FLOAT)"), "float")
            + " ELSE "
            + _typed_term(_fmt_float(f"sum({d})"), "double")
            + " END)"
        )
    # avg
    mean_dec = f"CAST(CAST(sum({m}) AS DOUBLE) / count({col}) AS DECIMAL(38,18))"
    return (
        f"(CASE WHEN {invalid} THEN NULL "
        f"WHEN max({r}) <= 1 THEN "
        + _typed_term(_fmt_decimal(mean_dec), "decimal")
        + f" WHEN max({r}) = 2 THEN "
        + _typed_term(_fmt_float(f"CAST(avg({d}) AS FLOAT)"), "float")
        + " ELSE "
        + _typed_term(_fmt_float(f"avg({d})"), "double")
        + " END)"
    )


def _empty_default(agg: Aggregate) -> str:
    """The value of an aggregate over no solution at all (one group, no GROUP BY)."""
    if agg.func in ("count", "sum", "avg"):
        return sql_str(f'"0"^^<{XSD}integer>')
    return "CAST(NULL AS BIGINT)"


def _aggregate_sql(plan: SqlPlan, cols: dict[str, str], texts: frozenset[int]) -> str:
    assert plan.group_by is not None
    group_cols = ["kc", "kb", "kr"] + [cols[v] for v in plan.group_by if v in cols]
    items = []
    for k, (_, item) in enumerate(plan.projection):
        if not isinstance(item, Aggregate):  # pragma: no cover - analyze() rejects these
            raise NotInFragment(f"?{item} in an aggregate query")
        items.append(f"{_agg_sql(item, cols)} AS x{k}")
    grouped = (
        f"SELECT {', '.join(group_cols)}, 1 AS present, {', '.join(items)} "
        f"FROM f GROUP BY {', '.join(group_cols)}"
    )
    n = len(plan.projection)

    def cells(cell: Callable[[int], str]) -> str:
        return ", ".join(f"{cell(k)} AS {projected(k)}" for k in range(n))

    if plan.group_by:
        distinct = "DISTINCT " if plan.distinct else ""
        return f"SELECT {distinct}kc, kb, kr, {cells(lambda k: f'x{k}')} FROM ({grouped}) g"

    def filled(k: int) -> str:
        item = plan.projection[k][1]
        assert isinstance(item, Aggregate)
        return f"CASE WHEN g.present IS NULL THEN {_empty_default(item)} ELSE g.x{k} END"

    return (
        f"SELECT k.kc, k.kb, k.kr, {cells(filled)} FROM {{keys}} k "
        f"LEFT JOIN ({grouped}) g ON g.kc = k.kc AND g.kb = k.kb AND g.kr = k.kr"
    )


__all__ = ["CompiledQuery", "Node", "compile_plan", "projected", "sql_str", "value_table_sql"]
