"""Hand-built RESULT/EXPECTED tables for the comparison tests (compact, readable specs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from rsp_sdk.model.results import EXPECTED_SCHEMA, RESULT_SCHEMA, binding_to_json

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"

Term = dict[str, str]
Binding = Mapping[str, Term]


def uri(name: str) -> Term:
    return {"type": "uri", "value": EX + name}


def num(value: str, dt: str = "integer") -> Term:
    return {"type": "literal", "value": value, "datatype": XSD + dt}


def b(**terms: Term | str) -> dict[str, Term]:
    """A binding; a bare string value means an IRI in the example namespace."""
    return {k: (uri(v) if isinstance(v, str) else v) for k, v in terms.items()}


def s(*names: str, var: str = "x") -> list[dict[str, Term]]:
    """A relation of one-variable bindings ?var = ex:name."""
    return [b(**{var: n}) for n in names]


def result_table(
    relations: Sequence[Sequence[Binding]],
    *,
    query: str = "q",
    t_sys_ns: Sequence[int | None] | None = None,
    t_app_ms: Sequence[int | None] | None = None,
) -> pa.Table:
    """RESULT_SCHEMA rows: relation k gets seq k; an empty relation is one null-binding row."""
    cols: dict[str, list[Any]] = {n: [] for n in RESULT_SCHEMA.names}
    for seq, rel in enumerate(relations):
        for binding in list(rel) or [None]:
            cols["query"].append(query)
            cols["seq"].append(seq)
            cols["t_sys_ns"].append(t_sys_ns[seq] if t_sys_ns else None)
            cols["t_app_ms"].append(t_app_ms[seq] if t_app_ms else None)
            cols["binding"].append(None if binding is None else binding_to_json(binding))
    return pa.Table.from_pydict(cols, schema=RESULT_SCHEMA)


def expected_table(
    by_t0: Mapping[int, Sequence[tuple[int, int, Sequence[Binding]]]],
    *,
    query: str = "q",
    triples: int = 7,
) -> pa.Table:
    """EXPECTED_SCHEMA rows: for each t0, relations given as (open, close, bindings);
    reported at the window close."""
    cols: dict[str, list[Any]] = {n: [] for n in EXPECTED_SCHEMA.names}
    for t0, rels in by_t0.items():
        for seq, (open_ms, close_ms, rel) in enumerate(rels):
            for binding in list(rel) or [None]:
                cols["query"].append(query)
                cols["t0_ms"].append(t0)
                cols["seq"].append(seq)
                cols["t_app_ms"].append(close_ms)
                cols["window_open_ms"].append(open_ms)
                cols["window_close_ms"].append(close_ms)
                cols["triples_in_window"].append(triples)
                cols["binding"].append(None if binding is None else binding_to_json(binding))
    return pa.Table.from_pydict(cols, schema=EXPECTED_SCHEMA)
