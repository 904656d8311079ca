"""Solutions as canonical SPARQL-JSON binding strings, vectorised.

A binding is ``binding_to_json`` of {variable: SPARQL JSON term} with sorted keys and unbound
variables left out; equal bindings are equal strings, which is what R2S set operations and the
comparisons compare. Each distinct term is converted once (dictionary encoding), the rest is
Arrow string concatenation.
"""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.model.terms import to_sparql_json
from rsp_sdk.oracle.encoding import dictionary_runs
from rsp_sdk.oracle.slices import bounds, map_rows, map_slices, over_ranges

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
    """JSON text of every (distinct, non-null) N-Triples term, a slice per core."""
    return map_slices(_slice_json, dictionary)


def _slice_json(dictionary: pa.Array) -> pa.Array:
    """``_dictionary_json`` on one thread.

    Each rewrite runs on the terms no earlier one matched (most are IRIs, matched by the
    first): at 21 M triples the dictionary of a query's output holds 1.5 M observation IRIs,
    and every pattern over every term was ten regex passes over them."""
    if len(dictionary) == 0:
        return pa.array([], pa.string())
    todo = np.arange(len(dictionary))
    where: list[np.ndarray] = []
    texts: list[pa.Array] = []
    for pattern, template in _REWRITES:
        if not len(todo):
            break
        part = dictionary if len(todo) == len(dictionary) else dictionary.take(pa.array(todo))
        hit = pc.fill_null(pc.match_substring_regex(part, pattern), False)
        mask = hit.to_numpy(zero_copy_only=False)
        where.append(todo[mask])
        texts.append(pc.replace_substring_regex(part.filter(hit), pattern, template))
        todo = todo[~mask]
    if len(todo):  # escapes, long literals: Python's own conversion
        slow = dictionary.take(pa.array(todo)).to_pylist()
        where.append(todo)
        texts.append(
            pa.array([json.dumps(to_sparql_json(t), **_CANONICAL) for t in slow], pa.string())
        )
    order = np.argsort(np.concatenate(where), kind="stable")
    return pa.concat_arrays(texts).take(pa.array(order))


def _encoded(values: pa.Array) -> pa.DictionaryArray:
    """``values`` dictionary-encoded (a dictionary array as it is: the oracle decodes its term
    ids that way, so the distinct terms of a column are found without hashing strings; its
    dictionary must hold each term once, see ``binding_codes``)."""
    if isinstance(values, pa.ChunkedArray):
        # encoded before the chunks are joined: a column's texts may pass the 2 GiB a string
        # array's int32 offsets hold (CityBench Q2 under CQELS' profile), its distinct terms
        # do not
        if not pa.types.is_dictionary(values.type):
            values = pc.dictionary_encode(values)
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        return values
    encoded: pa.DictionaryArray = pc.dictionary_encode(values)
    return encoded


def _term_json(values: pa.DictionaryArray) -> pa.Array:
    """JSON text of every N-Triples term of a dictionary-encoded string array (nulls stay
    null): each distinct term converted once."""
    return _dictionary_json(values.dictionary).take(values.indices)


def _distinct_rows(columns: list[pa.DictionaryArray]) -> tuple[np.ndarray, np.ndarray] | None:
    """(one row of each distinct combination of values, each row's combination), or None when
    the combination's exact mixed-radix key would not fit in an int64.

    Rows are combinations of dictionary indices (-1 for null), so the key is exact: two rows
    share it only when they have the same values — equal indices in a column are equal values,
    while two indices of the same value (a dictionary holding it twice) only make two
    combinations of one binding, which give the same text."""
    key = np.zeros(len(columns[0]), np.int64)
    span = 1
    for column in columns:
        radix = len(column.dictionary) + 1
        if span * radix >= 2**62:
            return None
        codes = pc.fill_null(column.indices, -1).to_numpy().astype(np.int64) + 1
        key += codes * span
        span *= radix
    encoded = pc.dictionary_encode(pa.array(key))
    inverse = encoded.indices.to_numpy()
    # any row of a combination stands for it: all of its rows hold the same values
    representative = np.empty(len(encoded.dictionary), np.int64)
    representative[inverse] = np.arange(len(key))
    return representative, inverse


def codes_from_terms(terms: pa.Array | pa.ChunkedArray, variables: list[str]) -> pa.Array:
    """``terms[i]`` lists the terms of ``variables`` (None = unbound) → ``binding_codes``.

    A chunked column stays chunked: joined, the lists' texts may pass 2 GiB (the int32
    offsets of a ``list<string>``); each variable's column is dictionary-encoded chunk by
    chunk instead (``_encoded``)."""
    if len(terms) == 0:
        return pa.array([], pa.string())
    return binding_codes([pc.list_element(terms, i) for i in range(len(variables))], variables)


def bindings_from_columns(columns: list[pa.Array], variables: list[str]) -> pa.Array:
    """One column of N-Triples terms per variable (null = unbound; plain or dictionary-encoded
    strings) → binding JSON strings."""
    return plain_bindings(binding_codes(columns, variables))


def binding_codes(columns: list[pa.Array], variables: list[str]) -> pa.Array:
    """``bindings_from_columns`` as a dictionary array: each distinct binding's text once.

    A solution found in ten windows of a sliding query is ten rows of one binding; building
    and copying its text per row was most of the oracle's driver time there (1.4 M rows of
    ~290 bytes). The R2S step joins and compares bindings by their index (``binding_ids``),
    and the text is copied per row only into the rows emitted. The dictionary holds each text
    once when no column's dictionary holds a term twice (as ``dictionary_encode`` and
    ``TermDictionary.decode_encoded`` give them): ``binding_ids`` relies on it. A plain string
    array when the combinations cannot be keyed exactly in an int64 (``_distinct_rows``)."""
    n = len(columns[0]) if columns else 0
    if n == 0:
        return pa.array([], pa.string())
    names = sorted(set(variables))
    if not names:
        return pa.array(["{}"] * n, pa.string())
    encoded = [_encoded(columns[variables.index(name)]) for name in names]
    distinct = _distinct_rows(encoded)
    if distinct is None:
        return _bindings_of_rows(encoded, names)
    representative, inverse = distinct
    once = _bindings_of_rows([c.take(pa.array(representative)) for c in encoded], names)
    return pa.DictionaryArray.from_arrays(pa.array(inverse), once)


def plain_bindings(bindings: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Binding strings of a column that may be dictionary-encoded (``binding_codes``)."""
    if pa.types.is_dictionary(bindings.type):
        return bindings.cast(pa.string())
    return bindings


def binding_ids(bindings: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """(an int64 id per row, the distinct binding texts the ids index): equal bindings get
    equal ids.

    A dictionary-encoded column (``binding_codes``) is taken at its word: its dictionary holds
    each text once, so its indices are the ids and nothing is hashed again (1.5 M texts of
    ~290 bytes at 21 M triples). Chunks sharing one dictionary (what joins and ``take`` leave
    of it) have their indices concatenated: combining them would compare the dictionary of
    every chunk with the first, which took seconds for 300 chunks of one 400 MB dictionary."""
    if pa.types.is_dictionary(bindings.type):
        runs = dictionary_runs(bindings)
        if len(runs) == 1:  # every (non-empty) chunk holds the same dictionary
            indices = pa.concat_arrays([c.indices for c in runs[0]])
            return indices.cast(pa.int64()), runs[0][0].dictionary
        if isinstance(bindings, pa.ChunkedArray):
            bindings = bindings.combine_chunks()  # unifies the dictionaries: each text once
        return bindings.indices.cast(pa.int64()), bindings.dictionary
    if isinstance(bindings, pa.ChunkedArray):
        bindings = bindings.combine_chunks()
    encoded = pc.dictionary_encode(bindings)
    return encoded.indices.cast(pa.int64()), encoded.dictionary


# a string array's offsets are int32: one chunk of texts holds at most this many bytes
TEXT_CHUNK_BYTES = 1 << 30


def texts_of(ids: pa.Array | pa.ChunkedArray, texts: pa.Array) -> pa.ChunkedArray:
    """``texts.take(ids)``, in chunks of at most ``TEXT_CHUNK_BYTES`` bytes of text: a single
    string array cannot hold more than 2 GiB (YABench E3 at 200 stations judged under rsp-rs'
    profile: 917 t0 classes × 11 k rows of ~350 bytes, "Take operation overflowed binary
    array capacity")."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks() if ids.num_chunks else pa.array([], pa.int64())
    ends_at = [0, len(ids)]
    if len(texts) and len(ids):
        lengths = pc.binary_length(texts).to_numpy(zero_copy_only=False).astype(np.int64)
        ends = np.cumsum(lengths[pc.fill_null(ids, 0).to_numpy(zero_copy_only=False)])
        marks = np.arange(1, int(ends[-1]) // TEXT_CHUNK_BYTES + 1) * TEXT_CHUNK_BYTES
        ends_at[1:1] = [int(c) for c in np.searchsorted(ends, marks, side="right")]
    # each chunk split once more, one piece per core, the pieces taken in threads
    ranges = [
        (lo + a, lo + b) for lo, hi in itertools.pairwise(ends_at) for a, b in bounds(hi - lo)
    ]
    chunks = over_ranges(lambda lo, hi: texts.take(ids.slice(lo, hi - lo)), ranges)
    return pa.chunked_array([c for c in chunks if len(c)] or [texts.take(ids)], texts.type)


def with_texts(ids: pa.Array | pa.ChunkedArray, texts: pa.Array) -> pa.DictionaryArray:
    """Ids into ``texts`` as one dictionary-encoded binding column (no text copied)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks() if ids.num_chunks else pa.array([], pa.int64())
    return pa.DictionaryArray.from_arrays(ids, texts)


def _bindings_of_rows(columns: list[pa.DictionaryArray], names: list[str]) -> pa.Array:
    """Binding JSON of each row of ``columns`` (one per variable of ``names``, sorted)."""
    if not any(c.null_count or c.dictionary.null_count for c in columns):
        return _bound_rows(columns, names)
    pieces = []
    for name, values in zip(names, columns, strict=True):
        key = json.dumps(name, ensure_ascii=False) + ":"
        piece = pc.binary_join_element_wise(pa.scalar(key), _term_json(values), ",", "")
        # "key:term," for a bound variable, "" for an unbound one (pyarrow's null skipping
        # drops rows whose pieces are all null, so nulls become empty strings instead)
        pieces.append(pc.fill_null(piece, ""))
    body = pc.binary_join_element_wise(*pieces, "") if len(pieces) > 1 else pieces[0]
    body = pc.replace_substring_regex(body, ",$", "")
    return pc.binary_join_element_wise("{", body, "}", "")


def _piece_of(head: pa.Scalar, tail: pa.Scalar, dictionary: pa.Array) -> pa.Array:
    """``head + JSON text + tail`` of every term of ``dictionary`` (one variable's pieces)."""
    return pc.binary_join_element_wise(head, _slice_json(dictionary), tail, "")


def _bound_rows(columns: list[pa.DictionaryArray], names: list[str]) -> pa.Array:
    """``_bindings_of_rows`` when every variable is bound in every row (most queries): each
    variable's piece (``"name":term``, the first after ``{``, the last before ``}``) is built
    on its dictionary, and a row is its pieces joined by commas — one copy of its text, where
    the general path copies it four times and trims a trailing comma by regex."""
    last = len(names) - 1
    pieces = []
    for k, (name, values) in enumerate(zip(names, columns, strict=True)):
        head = pa.scalar(("{" if k == 0 else "") + json.dumps(name, ensure_ascii=False) + ":")
        tail = pa.scalar("}" if k == last else "")
        pieces.append(map_slices(functools.partial(_piece_of, head, tail), values.dictionary))

    def rows(lo: int, hi: int) -> pa.Array:
        taken = [p.take(c.indices.slice(lo, hi - lo)) for p, c in zip(pieces, columns, strict=True)]
        return taken[0] if len(taken) == 1 else pc.binary_join_element_wise(*taken, ",")

    return map_rows(rows, len(columns[0]))
