"""Term ids from dictionary-encoded stream columns (pure Arrow, no Spark).

The oracle keeps the stream's term columns dictionary-encoded (21 M triples as strings would
hold ~5 GB on the driver); these check that the ids, masks and R2S over them are what the
plain strings give: equal terms get equal ids across columns and chunks, whatever each chunk's
dictionary holds (duplicates, values no row uses).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from rsp_sdk.model.profile import R2S
from rsp_sdk.model.results import binding_to_json
from rsp_sdk.model.stream import STREAM_SCHEMA
from rsp_sdk.model.terms import to_sparql_json
from rsp_sdk.oracle import bindings
from rsp_sdk.oracle.bindings import binding_codes, binding_ids, bindings_from_columns
from rsp_sdk.oracle.encoding import TermDictionary, _pieces, isin_mask, used_values
from rsp_sdk.oracle.r2s import apply_r2s, attach
from rsp_sdk.streams.io import conform

S = ["<a>", "<b>", "<a>", "<c>", "<b>"]
OBJ = ['"1"', "<a>", "<b>", '"1"', "<d>"]


def _chunked_dictionary(values: list[str]) -> pa.ChunkedArray:
    """Two chunks, each with its own dictionary holding a duplicate and an unused value."""
    chunks = []
    for part in (values[:2], values[2:]):
        dictionary = [*sorted(set(part)), part[0], "<unused>"]
        indices = [dictionary.index(v) for v in part]
        chunks.append(pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), dictionary))
    return pa.chunked_array(chunks)


def test_dictionary_columns_get_the_ids_their_strings_get() -> None:
    terms, (s_ids, o_ids) = TermDictionary.build_encoded(
        [_chunked_dictionary(S), _chunked_dictionary(OBJ)]
    )
    assert terms.decode(s_ids).to_pylist() == S
    assert terms.decode(o_ids).to_pylist() == OBJ
    # one id per distinct term; a term no row has may be there, and no row has its id
    assert set(terms.terms.to_pylist()) - {"<unused>"} == set(S + OBJ)
    assert len(terms.terms) == len(set(terms.terms.to_pylist()))
    unused = terms.id_of("<unused>")
    assert unused not in s_ids.to_pylist() + o_ids.to_pylist()
    assert s_ids[0].as_py() == o_ids[1].as_py()  # <a> as subject and as object


def test_chunks_sharing_a_dictionary_are_hashed_once_and_get_the_ids_their_strings_get() -> None:
    """As a Parquet reader gives them: every batch of a row group holds the group's whole
    dictionary; runs of such chunks are one piece (one hash of the values they use), and a
    chunk with a dictionary of its own starts another."""
    dictionary = pa.array(["<a>", "<b>", "<c>", "<unused>", '"1"'])
    shared = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 2, 4, 4], pa.int32()), dictionary)
    own = pa.array(["<b>", "<d>"]).dictionary_encode()
    column = pa.chunked_array([shared.slice(0, 2), shared.slice(2, 3), own, shared.slice(5)])
    strings = column.cast(pa.string()).to_pylist()
    # the first run uses most of its dictionary (hashed whole), the last one value of it
    assert [len(values) for values, _ in _pieces(column)] == [5, 2, 1]
    terms, (ids,) = TermDictionary.build_encoded([column])
    assert terms.decode(ids).to_pylist() == strings
    assert len(terms.terms) == len(set(terms.terms.to_pylist()))
    assert sorted(used_values(column).to_pylist()) == sorted(set(strings))


def test_masks_and_distinct_values_read_dictionaries_and_strings_alike() -> None:
    for column in (_chunked_dictionary(S), pa.chunked_array([S[:2], S[2:]])):
        assert isin_mask(column, ["<b>", "<x>"]).tolist() == [v == "<b>" for v in S]
        assert sorted(used_values(column).to_pylist()) == ["<a>", "<b>", "<c>"]


def test_conform_keeps_a_dictionary_stream_encoded() -> None:
    plain = pa.table(
        {"stream": ["<s>"] * 5, "t_app_ms": np.arange(5), "s": S, "p": ["<p>"] * 5, "o": OBJ}
    )
    table = conform(plain, STREAM_SCHEMA, dictionary=True)
    assert all(pa.types.is_dictionary(table.column(c).type) for c in ("stream", "s", "p", "o"))
    assert conform(table, STREAM_SCHEMA).equals(conform(plain, STREAM_SCHEMA))


def test_istream_and_dstream_compare_bindings_by_value() -> None:
    rel = pa.table(
        {
            "t0": pa.array([0, 0, 0, 0, 0], pa.int64()),
            "rank": pa.array([1, 1, 2, 2, 3], pa.int64()),
            "binding": ['{"x":1}', '{"x":2}', '{"x":2}', '{"x":3}', '{"x":1}'],
        }
    )

    def rows(t: pa.Table) -> list[tuple[int, str]]:
        return sorted(
            zip(t.column("rank").to_pylist(), t.column("binding").to_pylist(), strict=True)
        )

    assert rows(apply_r2s(rel, R2S.ISTREAM)) == [
        (1, '{"x":1}'),
        (1, '{"x":2}'),
        (2, '{"x":3}'),
        (3, '{"x":1}'),
    ]
    # Dstream: what is gone at the next report (rank + 1; finalize drops ranks past the last)
    assert rows(apply_r2s(rel, R2S.DSTREAM)) == [
        (2, '{"x":1}'),
        (3, '{"x":2}'),
        (3, '{"x":3}'),
        (4, '{"x":1}'),
    ]
    assert apply_r2s(rel.slice(0, 0), R2S.ISTREAM).num_rows == 0


BINDINGS = ['{"x":1}', '{"x":2}', '{"x":2}', '{"x":3}', '{"x":1}', '{"x":4}']


def _binding_column(form: str) -> pa.Array | pa.ChunkedArray:
    """``BINDINGS`` as R2S may get them: texts, one dictionary array (``binding_codes``), its
    slices sharing that dictionary (what a join leaves), chunks with dictionaries of their own
    (relations put together)."""
    if form == "texts":
        return pa.array(BINDINGS)
    codes = pa.array(BINDINGS).dictionary_encode()
    if form == "dictionary":
        return codes
    if form == "shared-chunks":
        return pa.chunked_array([codes.slice(0, 2), codes.slice(2, 3), codes.slice(5)])
    return pa.chunked_array(
        [pa.array(BINDINGS[:3]).dictionary_encode(), pa.array(BINDINGS[3:]).dictionary_encode()]
    )


@pytest.mark.parametrize("form", ["texts", "dictionary", "shared-chunks", "own-dictionaries"])
def test_r2s_joins_bindings_by_id_whatever_their_encoding(form: str) -> None:
    """Istream/Dstream after ``attach`` give what the texts give, with equal ids for equal
    texts: the ids come from a shared dictionary's indices without hashing the texts again,
    and from a unified dictionary when the chunks' dictionaries differ."""
    column = _binding_column(form)
    ids, texts = binding_ids(column)
    assert texts.take(ids).to_pylist() == BINDINGS
    assert len(set(ids.to_pylist())) == len(set(BINDINGS))
    relations = pa.table(
        {
            "kc": pa.array([10, 10, 20, 20, 30, 30], pa.int64()),
            "kb": pa.array([0] * 6, pa.int64()),
            "kr": pa.array([0] * 6, pa.int64()),
            "binding": column,
        }
    )
    reports = pa.table(
        {
            "t0": pa.array([0, 0, 0], pa.int64()),
            "rank": pa.array([1, 2, 3], pa.int64()),
            "kc": pa.array([10, 20, 30], pa.int64()),
            "kb": pa.array([0] * 3, pa.int64()),
            "kr": pa.array([0] * 3, pa.int64()),
        }
    )
    per_report = attach(relations, reports)

    def rows(t: pa.Table) -> list[tuple[int, str]]:
        texts = t.column("binding").cast(pa.string()).to_pylist()
        return sorted(zip(t.column("rank").to_pylist(), texts, strict=True))

    assert rows(per_report) == sorted(zip([1, 1, 2, 2, 3, 3], BINDINGS, strict=True))
    assert rows(apply_r2s(per_report, R2S.ISTREAM)) == [
        (1, '{"x":1}'),
        (1, '{"x":2}'),
        (2, '{"x":3}'),
        (3, '{"x":1}'),
        (3, '{"x":4}'),
    ]
    assert rows(apply_r2s(per_report, R2S.DSTREAM)) == [
        (2, '{"x":1}'),
        (3, '{"x":2}'),
        (3, '{"x":3}'),
        (4, '{"x":1}'),
        (4, '{"x":4}'),
    ]


TERMS = [
    "<http://ex.org/a>",
    "<http://ex.org/b>",
    "_:b0",
    '"plain"',
    '"x"@en-GB',
    '"7"^^<http://www.w3.org/2001/XMLSchema#integer>',
    '"s"^^<http://www.w3.org/2001/XMLSchema#string>',
    '"a \\"quoted\\" one"',
    '"two\\nlines"',
    '"tab\\there"@fr',
]


@pytest.mark.parametrize("unbound", [False, True], ids=["all-bound", "some-unbound"])
@pytest.mark.parametrize("encoded", [False, True], ids=["strings", "dictionary"])
def test_binding_json_is_what_the_model_writes_for_every_term_kind(
    unbound: bool, encoded: bool
) -> None:
    """The vectorised JSON (per distinct binding, each term rewritten by the first pattern that
    fits, the rest through Python) against ``binding_to_json`` row by row."""
    rng = np.random.default_rng(7)
    variables = ["s", "o", "x"]
    rows = [
        tuple(
            None if unbound and rng.random() < 0.3 else TERMS[int(rng.integers(len(TERMS)))]
            for _ in variables
        )
        for _ in range(400)
    ]
    columns = []
    for k in range(len(variables)):
        column = pa.array([r[k] for r in rows], pa.string())
        columns.append(column.dictionary_encode() if encoded else column)
    want = [
        binding_to_json(
            {v: to_sparql_json(t) for v, t in zip(variables, r, strict=True) if t is not None}
        )
        for r in rows
    ]
    codes = binding_codes(columns, variables)
    assert pa.types.is_dictionary(codes.type)  # each distinct binding's text built once
    assert len(codes.dictionary) == len(set(rows))
    assert bindings_from_columns(columns, variables).to_pylist() == want


def test_texts_past_a_chunk_are_taken_chunk_by_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The texts of the rows emitted come in chunks of at most ``TEXT_CHUNK_BYTES`` (plus the
    row that crosses the mark): one string array holds at most 2 GiB."""
    monkeypatch.setattr(bindings, "TEXT_CHUNK_BYTES", 25)
    texts = pa.array(["a" * 10, "b" * 20, "c" * 5])
    ids = pa.array([0, 1, 2, 1, None, 0, 2, 2], pa.int64())
    out = bindings.texts_of(ids, texts)
    assert out.to_pylist() == [None if i is None else texts[i].as_py() for i in ids.to_pylist()]
    assert out.num_chunks > 1
    assert all(sum(len(t or "") for t in c.to_pylist()) <= 25 + 20 for c in out.chunks)
    assert bindings.texts_of(pa.array([], pa.int64()), texts).to_pylist() == []
    assert bindings.texts_of(
        pa.array([None], pa.int64()), pa.array([], pa.string())
    ).to_pylist() == [None]


def test_term_lists_past_2_gib_are_encoded_chunk_by_chunk() -> None:
    """The pyoxigraph path's ``terms`` column (a ``list<string>`` per solution) of CityBench Q2
    under CQELS' profile held more than 2 GiB of texts: joining its chunks overflowed the int32
    offsets and the cell went unjudged. Three chunks sharing one 0.8 GB list array (2.4 GB of
    texts in all, 0.8 GB in memory) give every row's binding."""
    iris = [f"<http://ex.org/{k}/{'a' * 2000}>" for k in range(4)]
    rows = 400_000
    values = pa.array([iris[k % 4] for k in range(rows)] + [None])
    offsets = pa.array([*range(rows + 1), rows + 1], pa.int32())  # the last list: [None]
    chunk = pa.ListArray.from_arrays(offsets, values)
    terms = pa.chunked_array([chunk] * 3)
    assert sum(len(v) for v in iris) * rows // 4 * 3 > 2**31
    codes = bindings.codes_from_terms(terms, ["v"])
    assert len(codes) == len(terms) and len(codes.dictionary) == 5  # four IRIs and unbound
    want = [binding_to_json({"v": to_sparql_json(t)}) for t in iris]
    texts, at = codes.dictionary, codes.indices  # joined as text, the rows pass 2 GiB again
    for base in (0, len(chunk), 2 * len(chunk)):
        assert [texts[at[base + k].as_py()].as_py() for k in range(4)] == want
        assert texts[at[base + rows].as_py()].as_py() == "{}"
