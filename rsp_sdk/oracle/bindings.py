"""Solutions as canonical SPARQL-JSON binding strings, vectorised.

A binding is ``binding_to_json`` of {variable: SPARQL JSON term} with sorted keys and unbound
variables left out; equal bindings are equal strings, which is what R2S set operations and the
comparisons compare. Each distinct term is converted once (dictionary encoding), the rest is
Arrow string concatenation.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.model.terms import to_sparql_json

# exactly the options of rsp_sdk.model.results.binding_to_json, so the pieces concatenate into
# the same text it produces for the whole binding
_CANONICAL: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}


# Terms whose JSON text is a rewrite of their N-Triples text: no character JSON or N-Triples
# escapes (quote, backslash, controls), so the lexical form is the value verbatim. Each maps to
# what ``json.dumps(to_sparql_json(t), **_CANONICAL)`` gives (keys sorted); the rest go through
# Python. Regexes run in Arrow (RE2), so the large IRI/numeric dictionaries never become
# Python strings.
_PLAIN = r'[^"\\\x00-\x1f]*'
_REWRITES = [
    (rf"^<({_PLAIN})>$", r'{"type":"uri","value":"\1"}'),
    (rf"^_:({_PLAIN})$", r'{"type":"bnode","value":"\1"}'),
    (
        rf'^"({_PLAIN})"\^\^<http://www\.w3\.org/2001/XMLSchema#string>$',
        r'{"type":"literal","value":"\1"}',
    ),
    (
        rf'^"({_PLAIN})"\^\^<({_PLAIN})>$',
        r'{"datatype":"\2","type":"literal","value":"\1"}',
    ),
    (rf'^"({_PLAIN})"@([A-Za-z0-9-]+)$', r'{"type":"literal","value":"\1","xml:lang":"\2"}'),
    (rf'^"({_PLAIN})"$', r'{"type":"literal","value":"\1"}'),
]


def _dictionary_json(dictionary: pa.Array) -> pa.Array:
    """JSON text of every (distinct, non-null) N-Triples term."""
    out = pa.nulls(len(dictionary), pa.string())
    for pattern, template in _REWRITES:
        hit = pc.and_kleene(pc.is_null(out), pc.match_substring_regex(dictionary, pattern))
        rewritten = pc.replace_substring_regex(dictionary, pattern, template)
        out = pc.if_else(hit, rewritten, out)
    rest = pc.indices_nonzero(pc.is_null(out)).to_numpy()
    if len(rest):
        texts = dictionary.take(pa.array(rest)).to_pylist()
        slow = [json.dumps(to_sparql_json(t), **_CANONICAL) for t in texts]
        merged = out.to_pylist()
        for k, text in zip(rest.tolist(), slow, strict=True):
            merged[k] = text
        out = pa.array(merged, pa.string())
    return out


def _term_json(values: pa.Array) -> pa.Array:
    """JSON text of every N-Triples term of a string array (nulls stay null)."""
    encoded = pc.dictionary_encode(values)
    return _dictionary_json(encoded.dictionary).take(encoded.indices)


def bindings_from_terms(terms: pa.Array | pa.ChunkedArray, variables: list[str]) -> pa.Array:
    """``terms[i]`` lists the terms of ``variables`` (None = unbound) → binding JSON strings."""
    if isinstance(terms, pa.ChunkedArray):
        terms = terms.combine_chunks() if terms.num_chunks else pa.array([], terms.type)
    if len(terms) == 0:
        return pa.array([], pa.string())
    return bindings_from_columns(
        [pc.list_element(terms, i) for i in range(len(variables))], variables
    )


def bindings_from_columns(columns: list[pa.Array], variables: list[str]) -> pa.Array:
    """One string column of N-Triples terms per variable (null = unbound) → binding JSON."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return pa.array([], pa.string())
    pieces = []
    for name in sorted(set(variables)):
        i = variables.index(name)
        values = columns[i]
        key = json.dumps(name, ensure_ascii=False) + ":"
        piece = pc.binary_join_element_wise(pa.scalar(key), _term_json(values), ",", "")
        # "key:term," for a bound variable, "" for an unbound one (pyarrow's null skipping
        # drops rows whose pieces are all null, so nulls become empty strings instead)
        pieces.append(pc.fill_null(piece, ""))
    if not pieces:
        return pa.array(["{}"] * n, pa.string())
    body = pc.binary_join_element_wise(*pieces, "") if len(pieces) > 1 else pieces[0]
    body = pc.replace_substring_regex(body, ",$", "")
    return pc.binary_join_element_wise("{", body, "}", "")
