"""Relation streams on disk: what engines output and what the oracle expects.

One row per binding. A result event (one relation an engine emitted, or one expected relation) is
the set of rows sharing ``seq``; an *empty* relation is a single row whose ``binding`` is null, so
"an empty relation was emitted" and "nothing was emitted" stay distinguishable. ``binding`` is a
JSON object mapping variable names to SPARQL 1.1 JSON terms, with sorted keys, so equal bindings
are equal strings.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence

import pyarrow as pa

from rsp_sdk.model.terms import to_sparql_json

RESULT_SCHEMA = pa.schema(
    [
        pa.field("query", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("t_sys_ns", pa.int64(), nullable=True),
        pa.field("t_app_ms", pa.int64(), nullable=True),
        pa.field("binding", pa.string(), nullable=True),
    ]
)


# The oracle's output: the expected relation stream for each candidate t0, same row conventions.
# ``seq`` numbers the relations of one t0 from 0; ``t_app_ms`` is the report time in application
# time (the window close for window-close reports); ``window_open_ms``/``window_close_ms`` give the
# scope [open, close) that was evaluated and ``triples_in_window`` its size (YABench metrics).
EXPECTED_SCHEMA = pa.schema(
    [
        pa.field("query", pa.string(), nullable=False),
        pa.field("t0_ms", pa.int64(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("t_app_ms", pa.int64(), nullable=False),
        pa.field("window_open_ms", pa.int64(), nullable=False),
        pa.field("window_close_ms", pa.int64(), nullable=False),
        pa.field("triples_in_window", pa.int64(), nullable=False),
        pa.field("binding", pa.string(), nullable=True),
    ]
)


def binding_to_json(binding: Mapping[str, Mapping[str, str]]) -> str:
    """Canonical JSON text of one binding (sorted keys, no whitespace)."""
    return json.dumps(binding, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_to_json(names: Sequence[str], row: Sequence[str | None]) -> str:
    """``binding_to_json`` of one result row (N-Triples terms aligned with ``names``, None =
    unbound), each distinct term's JSON text computed once.

    The recorder writes every binding an engine emits: CityBench Q5 at ten instances emits
    millions, and parsing each literal and encoding each dict again made the harness, not the
    engine, set the pace (~21,000 rows/s). Equal terms repeat across rows (the same sensors,
    the same values), so their text is cached; the output is ``binding_to_json``'s, byte for
    byte (``tests/test_terms.py``)."""
    bound = {v: t for v, t in zip(names, row, strict=True) if t is not None}
    return "{" + ",".join(f"{_key_json(v)}:{term_json(bound[v])}" for v in sorted(bound)) + "}"


def term_json(term: str) -> str:
    """The SPARQL 1.1 JSON text of an N-Triples term (``ValueError`` if it is none), as
    ``binding_to_json`` writes it inside a binding; literals and blank nodes cached."""
    if term.startswith("<"):  # an IRI: often one per row (observations), not worth caching
        return '{"type":"uri","value":' + json.dumps(term[1:-1], ensure_ascii=False) + "}"
    return _cached_term_json(term)


@functools.lru_cache(maxsize=1 << 16)
def _cached_term_json(term: str) -> str:
    return json.dumps(
        to_sparql_json(term), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


@functools.lru_cache(maxsize=1 << 10)
def _key_json(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def binding_from_json(text: str) -> dict[str, dict[str, str]]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"a binding must be a JSON object, got {text!r}")
    return value
