"""Relation streams as Python values: the shape every comparison works on.

A RESULT/EXPECTED table holds one row per binding (see ``rsp_sdk.model.results``); comparisons
need the *relations* — the ordered list of bags of bindings an engine emitted, each with its
timestamps. This module groups the rows and decides when two bindings are *the same answer*:

* Terms are compared as RDF terms, not as strings: an IRI equals the same IRI, a plain literal
  equals the same ``xsd:string`` literal, language tags compare case-insensitively, and numeric
  literals compare **by value** across the numeric datatypes (``"5"^^xsd:integer`` =
  ``"5.0"^^xsd:decimal`` = ``"5"^^xsd:double``), because engines legitimately disagree on the
  datatype of an aggregate (C-SPARQL's AVG gives a decimal ``87.666…6``, CQELS a double
  ``87.66666666666667e0``). Integral values compare exactly; other values compare as IEEE
  doubles (SPARQL's promotion rule), so a 26-digit decimal equals the double nearest to it.
* Whole bindings are compared: two bindings that share a number but differ in another variable
  are different answers. (The published CSRBench oracle compares only the numeric variables as
  soon as one is present and so collapses them; we do not copy that.)
* Blank nodes compare by label (engines that project blank nodes are rare; isomorphism across a
  whole result stream is not attempted).

Each binding becomes a hashable :data:`BindingKey`; relations are ``Counter`` bags of keys, so
set semantics (CSRBench) and bag semantics (YABench) are both one step away.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.errors import InputError
from rsp_sdk.model.terms import RDF_LANG_STRING, XSD, XSD_STRING

# A canonical, hashable form of one RDF term (see term_key) and of one binding.
TermKey = tuple[Any, ...]
BindingKey = tuple[tuple[str, TermKey], ...]

_INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
_DECIMAL = XSD + "decimal"
_FLOAT_TYPES = frozenset((XSD + "double", XSD + "float"))
_BOOLEAN = XSD + "boolean"


def _numeric_value(lexical: str, datatype: str) -> int | float | None:
    """The value of a numeric literal, or None when the lexical form is ill-typed.

    Integral values become exact ints (so huge integers stay distinct and ``5.0e0`` = ``5``);
    everything else becomes a double.
    """
    text = lexical.strip()
    try:
        if datatype in _INTEGER_TYPES:
            return int(text)
        if datatype == _DECIMAL:
            dec = Decimal(text)
            if not dec.is_finite():
                return None
            return int(dec) if dec == dec.to_integral_value() else float(dec)
        value = float(text)
    except (ValueError, InvalidOperation):
        return None
    if math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def term_key(term: Mapping[str, Any]) -> TermKey:
    """Canonical key of a SPARQL 1.1 JSON term (``typed-literal`` accepted)."""
    kind = term.get("type")
    value = term.get("value")
    if not isinstance(value, str):
        raise ValueError(f"SPARQL JSON term without a string value: {dict(term)!r}")
    if kind == "uri":
        return ("i", value)
    if kind == "bnode":
        return ("b", value)
    if kind not in ("literal", "typed-literal"):
        raise ValueError(f"unknown SPARQL JSON term type {kind!r} in {dict(term)!r}")
    lang = term.get("xml:lang")
    datatype = term.get("datatype")
    if lang or datatype == RDF_LANG_STRING:
        return ("L", value, str(lang or "").lower())
    if datatype is None or datatype == XSD_STRING:
        return ("s", value)
    if datatype in _INTEGER_TYPES or datatype == _DECIMAL or datatype in _FLOAT_TYPES:
        number = _numeric_value(value, datatype)
        if number is not None:
            # NaN is not equal to itself as a float; give it one stable key.
            nan = isinstance(number, float) and math.isnan(number)
            return ("n", "NaN") if nan else ("n", number)
    if datatype == _BOOLEAN and value.strip() in ("true", "false", "1", "0"):
        return ("l", "true" if value.strip() in ("true", "1") else "false", _BOOLEAN)
    return ("l", value, datatype)


def binding_key(binding: Mapping[str, Mapping[str, Any] | None]) -> BindingKey:
    """Canonical key of a whole binding (unbound variables are simply absent)."""
    return tuple(sorted((var, term_key(t)) for var, t in binding.items() if t is not None))


@dataclass(frozen=True)
class Relation:
    """One emitted (or expected) relation: its bindings in recorded order and its timestamps.

    ``rows`` is empty for an empty relation; ``bag`` and ``keys`` are its bag and set views.
    Expected relations also carry their window scope.
    """

    seq: int
    rows: tuple[BindingKey, ...]
    t_app_ms: int | None = None
    t_sys_ns: int | None = None
    window_open_ms: int | None = None
    window_close_ms: int | None = None
    triples_in_window: int | None = None
    bag: Counter[BindingKey] = field(init=False, repr=False, compare=False)
    keys: frozenset[BindingKey] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bag", Counter(self.rows))
        object.__setattr__(self, "keys", frozenset(self.rows))

    @property
    def size(self) -> int:
        """Number of bindings, duplicates counted (bag size)."""
        return len(self.rows)


@dataclass
class RelationStream:
    """An ordered sequence of relations of one query, plus how to show each binding.

    ``labels`` maps every key to the binding as first seen (SPARQL JSON text) so reports show
    what the engine or the oracle actually wrote.
    """

    query: str
    relations: list[Relation]
    labels: dict[BindingKey, str] = field(default_factory=dict)
    t0_ms: int | None = None

    def __len__(self) -> int:
        return len(self.relations)

    def show(self, keys: Iterable[BindingKey]) -> list[dict[str, Any]]:
        """Bindings as SPARQL JSON objects, in a stable order (for reports)."""
        out = []
        for key in sorted(keys, key=repr):
            label = self.labels.get(key)
            out.append(json.loads(label) if label is not None else dict(key))
        return out

    def elements(self) -> list[BindingKey]:
        """All bindings of the stream in emission order (rows keep their order in a relation)."""
        return [k for rel in self.relations for k in rel.rows]


class _KeyCache:
    """Parse each distinct binding text once: Rstream outputs repeat the same bindings a lot."""

    def __init__(self, labels: dict[BindingKey, str], source: str) -> None:
        self.labels = labels
        self.source = source
        self.cache: dict[str, BindingKey] = {}

    def __call__(self, text: str, row: int) -> BindingKey:
        key = self.cache.get(text)
        if key is None:
            try:
                value = json.loads(text)
                if not isinstance(value, dict):
                    raise ValueError("a binding must be a JSON object")
                key = binding_key(value)
            except ValueError as exc:
                raise InputError(
                    f"row {row}: bad binding ({exc})",
                    path=self.source,
                    text=text,
                    expected="a JSON object mapping variables to SPARQL 1.1 JSON terms",
                ) from exc
            self.cache[text] = key
            self.labels.setdefault(key, text)
        return key


def _select_query(table: pa.Table, query: str | None, source: str) -> tuple[pa.Table, str]:
    names = pc.unique(table.column("query")).to_pylist() if table.num_rows else []
    if query is not None:
        if table.num_rows and query not in names:
            raise InputError(
                f"query {query!r} not found",
                path=source,
                expected=f"one of {sorted(names)}",
            )
        return table.filter(pc.equal(table.column("query"), query)), query
    if len(names) > 1:
        raise InputError(
            "the table holds several queries; choose one",
            path=source,
            expected=f"a query name among {sorted(names)}",
        )
    return table, (names[0] if names else "")


def _require(table: pa.Table, columns: Iterable[str], source: str) -> None:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            f"missing column(s) {missing}",
            path=source,
            expected=f"a table with columns {list(columns)}",
        )


def _group(
    rows: dict[str, list[Any]], order: list[int], keyer: _KeyCache, expected: bool
) -> list[Relation]:
    """Consecutive rows (in ``order``) sharing ``seq`` form one relation."""
    runs: list[list[int]] = []
    for i in order:
        if runs and rows["seq"][runs[-1][0]] == rows["seq"][i]:
            runs[-1].append(i)
        else:
            runs.append([i])
    relations: list[Relation] = []
    for run in runs:
        head = run[0]
        keys = tuple(keyer(text, i) for i in run if (text := rows["binding"][i]) is not None)
        t_sys = [rows["t_sys_ns"][i] for i in run if rows["t_sys_ns"][i] is not None]
        relations.append(
            Relation(
                seq=rows["seq"][head],
                rows=keys,
                t_app_ms=rows["t_app_ms"][head],
                # the relation is complete when its last row arrived
                t_sys_ns=max(t_sys) if t_sys else None,
                window_open_ms=rows["window_open_ms"][head] if expected else None,
                window_close_ms=rows["window_close_ms"][head] if expected else None,
                triples_in_window=rows["triples_in_window"][head] if expected else None,
            )
        )
    return relations


def result_relations(
    table: pa.Table, *, query: str | None = None, source: str = "<results>"
) -> RelationStream:
    """Group a RESULT_SCHEMA table into the relation stream of one query, ordered by ``seq``."""
    _require(table, ("query", "seq", "binding"), source)
    table, name = _select_query(table, query, source)
    for col in ("t_sys_ns", "t_app_ms"):
        if col not in table.column_names:
            table = table.append_column(col, pa.nulls(table.num_rows, pa.int64()))
    rows = table.select(["seq", "t_sys_ns", "t_app_ms", "binding"]).to_pydict()
    # A stable sort keeps the rows of one relation in their recorded order.
    order = sorted(range(table.num_rows), key=rows["seq"].__getitem__)
    labels: dict[BindingKey, str] = {}
    relations = _group(rows, order, _KeyCache(labels, source), expected=False)
    return RelationStream(query=name, relations=relations, labels=labels)


def expected_relations(
    table: pa.Table, *, query: str | None = None, source: str = "<expected>"
) -> dict[int, RelationStream]:
    """Group an EXPECTED_SCHEMA table into one relation stream per candidate t0 (ascending)."""
    _require(
        table,
        (
            "query",
            "t0_ms",
            "seq",
            "t_app_ms",
            "window_open_ms",
            "window_close_ms",
            "triples_in_window",
            "binding",
        ),
        source,
    )
    table, name = _select_query(table, query, source)
    rows = table.to_pydict()
    rows["t_sys_ns"] = [None] * table.num_rows
    labels: dict[BindingKey, str] = {}
    keyer = _KeyCache(labels, source)
    by_t0: dict[int, list[int]] = {}
    for i, t0 in enumerate(rows["t0_ms"]):
        by_t0.setdefault(t0, []).append(i)
    out: dict[int, RelationStream] = {}
    for t0 in sorted(by_t0):
        order = sorted(by_t0[t0], key=rows["seq"].__getitem__)
        rels = _group(rows, order, keyer, expected=True)
        out[t0] = RelationStream(query=name, relations=rels, labels=labels, t0_ms=t0)
    return out


def bag_overlap(a: Mapping[BindingKey, int], b: Mapping[BindingKey, int]) -> int:
    """Size of the bag intersection: each binding of ``a`` matches at most one of ``b``."""
    if len(a) > len(b):
        a, b = b, a
    return sum(min(n, b.get(k, 0)) for k, n in a.items())
