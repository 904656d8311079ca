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
  doubles (SPARQL's promotion rule), so a 26-digit decimal equals the double nearest to it, and
  an ``xsd:float`` is first rounded to single precision, its value space.
* Whole bindings are compared: two bindings that share a number but differ in another variable
  are different answers. (The published CSRBench oracle compares only the numeric variables as
  soon as one is present and so collapses them; we do not copy that.)
* Blank nodes compare up to a consistent relabelling within each relation (graph isomorphism,
  ``rsp_sdk.compare.bnodes``): engines rename the stream's blank nodes. Across relations labels
  are not matched (a relation is the unit every comparator judges).

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
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.compare.bnodes import canonical_rows, has_bnode, key_json
from rsp_sdk.errors import InputError
from rsp_sdk.model.terms import (
    RDF_LANG_STRING,
    XSD,
    XSD_DECIMAL,
    XSD_INTEGER_TYPES,
    XSD_NUMERIC_TYPES,
    XSD_STRING,
)
from rsp_sdk.util.gcpause import without_gc

# A canonical, hashable form of one RDF term (see term_key) and of one binding.
TermKey = tuple[Any, ...]
BindingKey = tuple[tuple[str, TermKey], ...]

_BOOLEAN = XSD + "boolean"
_FLOAT = XSD + "float"


def _numeric_value(lexical: str, datatype: str) -> int | float | None:
    """The value of a numeric literal, or None when the lexical form is ill-typed.

    Integral values become exact ints (so huge integers stay distinct and ``5.0e0`` = ``5``);
    everything else becomes a double.
    """
    text = lexical.strip()
    try:
        if datatype in XSD_INTEGER_TYPES:
            return int(text)
        if datatype == XSD_DECIMAL:
            dec = Decimal(text)
            if not dec.is_finite():
                return None
            return int(dec) if dec == dec.to_integral_value() else float(dec)
        value = float(text)
        if datatype == _FLOAT:
            # an xsd:float's value is the single-precision number nearest to its lexical form:
            # "77.33333333333333" and "77.333336" are one value (Comunica prints a float AVG
            # with a double's digits, Spark with a float's)
            with np.errstate(over="ignore"):  # beyond single precision: ±INF, as XSD maps it
                value = float(np.float32(value))
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
    if datatype in XSD_NUMERIC_TYPES:
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

    @cached_property
    def bag(self) -> Counter[BindingKey]:
        """The bindings as a bag (binding → multiplicity)."""
        return Counter(self.rows)

    @cached_property
    def keys(self) -> frozenset[BindingKey]:
        """The bindings as a set (CSRBench compares relations as sets)."""
        return frozenset(self.rows)

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


_PARSE_CHUNK = 20_000


def _binding_keys(
    column: pa.ChunkedArray | pa.Array, labels: dict[BindingKey, str], source: str
) -> tuple[npt.NDArray[np.int64], list[BindingKey]]:
    """Per row, an index into the list of distinct binding keys (-1: empty-relation row).

    Each distinct binding text is parsed once (a chunk of them per JSON document), and each
    distinct term canonicalised once: outputs repeat the same bindings and terms a lot.
    """
    # chunk by chunk: the oracle's expected table may hold more than 2 GiB of binding text,
    # which one string array cannot (its chunks then share the dictionary of distinct texts)
    column = column if isinstance(column, pa.ChunkedArray) else pa.chunked_array([column])
    if pa.types.is_dictionary(column.type):  # chunks may hold dictionaries of their own
        column = column.cast(pa.string())
    encoded = pc.dictionary_encode(column)
    if encoded.num_chunks:
        dictionary = encoded.chunk(0).dictionary
        indices = pa.chunked_array([chunk.indices for chunk in encoded.chunks])
    else:
        dictionary, indices = pa.array([], pa.string()), pa.chunked_array([], pa.int32())
    texts: list[str] = dictionary.to_pylist()
    keys: list[BindingKey] = []
    terms: dict[tuple[Any, ...], TermKey] = {}
    values: list[Any] | None = None
    for n, text in enumerate(texts):
        if n % _PARSE_CHUNK == 0:
            try:
                values = json.loads("[" + ",".join(texts[n : n + _PARSE_CHUNK]) + "]")
            except ValueError:
                values = None  # parse one by one to find the culprit
        try:
            value = values[n % _PARSE_CHUNK] if values is not None else json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("a binding must be a JSON object")
            items = []
            for var, term in value.items():
                if term is None:
                    continue
                if not isinstance(term, dict):
                    raise ValueError(f"variable {var!r} is not bound to a SPARQL JSON term")
                ident = (
                    term.get("type"),
                    term.get("value"),
                    term.get("datatype"),
                    term.get("xml:lang"),
                )
                tk = terms.get(ident)
                if tk is None:
                    tk = terms[ident] = term_key(term)
                items.append((var, tk))
            key: BindingKey = tuple(sorted(items))
        except ValueError as exc:
            row = pc.index(column, text).as_py()
            raise InputError(
                f"row {row}: bad binding ({exc})",
                path=source,
                text=text,
                expected="a JSON object mapping variables to SPARQL 1.1 JSON terms",
            ) from exc
        keys.append(key)
        labels.setdefault(key, text)
    codes = pc.fill_null(indices, -1).to_numpy()
    return np.asarray(codes, dtype=np.int64), keys


_NULL = np.iinfo(np.int64).min


def _ints(table: pa.Table, name: str) -> npt.NDArray[np.int64]:
    col = table.column(name) if name in table.column_names else None
    if col is None:
        return np.full(table.num_rows, _NULL, dtype=np.int64)
    filled = pc.fill_null(col.cast(pa.int64()), _NULL)
    return np.asarray(filled.to_numpy(), dtype=np.int64)


#: an expected relation's window, from its first row
_WINDOW = ("window_open_ms", "window_close_ms", "triples_in_window")


def _group(
    table: pa.Table, by: list[str], labels: dict[BindingKey, str], source: str, expected: bool
) -> list[tuple[int, Relation]]:
    """(t0, relation) for each run of rows sharing ``by`` (stable order: rows keep theirs)."""
    if table.num_rows == 0:
        return []
    order = pc.sort_indices(table, sort_keys=[(c, "ascending") for c in by])
    # the bindings are keyed in their own order and their codes reordered, rather than
    # taken into sorted order as text (one array: past 2 GiB it overflows)
    codes, keys = _binding_keys(table.column("binding"), labels, source)
    codes = codes[order.to_numpy()]
    table = table.drop_columns(["binding"]).take(order)
    key_of = np.empty(len(keys) + 1, dtype=object)
    key_of[: len(keys)] = keys
    seq = _ints(table, "seq")
    t0 = _ints(table, "t0_ms")
    change = np.diff(seq) != 0
    if "t0_ms" in by:
        change |= np.diff(t0) != 0
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    ends = np.concatenate((starts[1:], [table.num_rows])).tolist()
    # column-wise, then zipped: a numpy call or an index per relation cost more than the
    # grouping itself for an eager engine's expected output (millions of one-row relations)
    n = len(starts)
    window = [_opts(_ints(table, c)[starts]) if expected else [None] * n for c in _WINDOW]
    t_sys = _opts(np.maximum.reduceat(_ints(table, "t_sys_ns"), starts))  # _NULL is smallest
    holes = np.logical_or.reduceat(codes < 0, starts).tolist()  # an empty relation's row
    blank = np.array([has_bnode(k) for k in keys] + [False], dtype=bool)
    blanks = np.logical_or.reduceat(blank[codes], starts).tolist()
    row_keys = key_of[codes].tolist()  # None for an empty relation's row (code -1)
    out: list[tuple[int, Relation]] = []
    for lo, hi, hole, has_blank, t0_ms, seq_r, t_app, t_sys_r, w_open, w_close, w_triples in zip(
        starts.tolist(),
        ends,
        holes,
        blanks,
        t0[starts].tolist(),
        seq[starts].tolist(),
        _opts(_ints(table, "t_app_ms")[starts]),
        t_sys,  # the relation is complete when its last row arrived
        *window,
        strict=True,
    ):
        rows: tuple[BindingKey, ...] = tuple(row_keys[lo:hi])
        if hole:
            rows = tuple(k for k in rows if k is not None)
        if has_blank:
            rows = canonical_rows(rows)
            for key in rows:
                labels.setdefault(key, key_json(key))
        out.append((t0_ms, Relation(seq_r, rows, t_app, t_sys_r, w_open, w_close, w_triples)))
    return out


def _opts(values: npt.NDArray[np.int64]) -> list[int | None]:
    """``values`` as Python ints, None where null."""
    return [None if v == _NULL else v for v in values.tolist()]


@without_gc  # a tuple per binding, none in a cycle (rsp_sdk.util.gcpause)
def result_relations(
    table: pa.Table, *, query: str | None = None, source: str = "<results>"
) -> RelationStream:
    """Group a RESULT_SCHEMA table into the relation stream of one query, ordered by ``seq``."""
    _require(table, ("query", "seq", "binding"), source)
    table, name = _select_query(table, query, source)
    labels: dict[BindingKey, str] = {}
    relations = [rel for _, rel in _group(table, ["seq"], labels, source, expected=False)]
    return RelationStream(query=name, relations=relations, labels=labels)


@without_gc  # a tuple per binding, none in a cycle (rsp_sdk.util.gcpause)
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
    labels: dict[BindingKey, str] = {}
    out: dict[int, RelationStream] = {}
    for t0, rel in _group(table, ["t0_ms", "seq"], labels, source, expected=True):
        stream = out.get(t0)
        if stream is None:
            stream = out[t0] = RelationStream(query=name, relations=[], labels=labels, t0_ms=t0)
        stream.relations.append(rel)
    return out


def bag_overlap(a: Mapping[BindingKey, int], b: Mapping[BindingKey, int]) -> int:
    """Size of the bag intersection: each binding of ``a`` matches at most one of ``b``."""
    if len(a) > len(b):
        a, b = b, a
    return sum(min(n, b.get(k, 0)) for k, n in a.items())
