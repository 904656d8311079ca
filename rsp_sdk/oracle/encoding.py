"""Terms as integer ids: what Spark moves and joins instead of N-Triples text.

Every distinct term of the stream and the static data gets an id (its position in one
dictionary array, built with Arrow hash kernels on the driver). Spark then shuffles three
longs per element rather than three strings of ~80 bytes, and the SQL evaluator joins on longs;
since the stream stores canonical terms, equal ids are equal RDF terms. Literal values
(numeric rank, double, decimal, simple-literal lexical form) are computed once per distinct
literal, in a small table the compiled queries join. Workers that need text (pyoxigraph) read
the dictionary from a Parquet file distributed with ``SparkContext.addFile``.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

_WORKER_CACHE: dict[str, pa.Array] = {}


@dataclass
class TermDictionary:
    terms: pa.Array  # string; the id of a term is its index
    _index: dict[str, int] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, *columns: pa.Array | pa.ChunkedArray) -> TermDictionary:
        chunks: list[pa.Array] = []
        for col in columns:
            if isinstance(col, pa.ChunkedArray):
                chunks.extend(col.chunks)
            else:
                chunks.append(col)
        if not chunks:
            return cls(pa.array([], pa.string()))
        unique = pc.unique(pa.chunked_array(chunks, pa.string()))
        return cls(unique.combine_chunks() if isinstance(unique, pa.ChunkedArray) else unique)

    @classmethod
    def build_encoded(
        cls, columns: list[pa.Array | pa.ChunkedArray]
    ) -> tuple[TermDictionary, list[pa.Array]]:
        """The dictionary of ``columns`` and each column as int64 ids.

        Columns may be dictionary-encoded (as the oracle reads streams: 21 M triples as
        strings would hold ~5 GB on the driver): only the distinct values each chunk uses are
        hashed, once, and each row's id is an integer lookup, so no string is copied per row.
        """
        pieces = [piece for col in columns for piece in _pieces(col)]
        counts = [len(col) for col in columns]
        if not pieces or not sum(counts):
            return cls(pa.array([], pa.string())), [pa.array([], pa.int64()) for _ in columns]
        # one hash pass over the values used anywhere gives every value's global id
        merged = pc.dictionary_encode(pa.chunked_array([v for v, _ in pieces], pa.string()))
        dictionary = merged.chunk(0).dictionary
        ids = [
            chunk.indices.to_numpy()[rows].astype(np.int64)
            for (_, rows), chunk in zip(pieces, merged.chunks, strict=True)
        ]
        del pieces, merged
        flat = np.concatenate(ids)
        del ids
        bounds = list(itertools.accumulate(counts, initial=0))
        out = [pa.array(flat[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
        # the hash tables and copies above are freed: hand their pages back to the system
        # before Spark's collect and the R2S joins need memory of their own
        pa.default_memory_pool().release_unused()
        return cls(dictionary), out

    def encode(self, column: pa.Array | pa.ChunkedArray) -> pa.Array:
        ids = pc.index_in(column, value_set=self.terms)
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        return ids.cast(pa.int64())

    def id_of(self, term: str) -> int:
        """The id of a term, or -1 when neither the stream nor the static data holds it."""
        if self._index is None:
            self._index = {}
        hit = self._index.get(term)
        if hit is None:
            found = pc.index(self.terms, term).as_py()
            hit = self._index[term] = -1 if found is None else int(found)
        return hit

    def decode(self, ids: pa.Array | pa.ChunkedArray) -> pa.Array:
        out = self.terms.take(ids)
        return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out

    def decode_encoded(self, ids: pa.Array) -> pa.DictionaryArray:
        """``ids`` as a dictionary array of their terms: each distinct id decoded once, and no
        string copied per row (a solution repeated over windows repeats its ids)."""
        encoded = pc.dictionary_encode(ids)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        return pa.DictionaryArray.from_arrays(encoded.indices, self.decode(encoded.dictionary))

    def literals(self) -> pa.Table:
        """(id, term) of every literal: the rows the numeric/lexical value table is made of."""
        mask = pc.starts_with(self.terms, '"')
        ids = pc.indices_nonzero(mask) if hasattr(pc, "indices_nonzero") else None
        if ids is None:  # pragma: no cover - very old pyarrow
            ids = pa.array(np.flatnonzero(mask.to_numpy(zero_copy_only=False)))
        return pa.table({"id": ids.cast(pa.int64()), "term": self.terms.filter(mask)})

    def share(self, spark: Any, folder: Path) -> str:
        """Write the dictionary to a Parquet file every executor can fetch; returns its name.

        ``folder`` belongs to the caller's job, which removes it once its tasks have run (a
        folder of its own per call was never removed: one left in /tmp per job)."""
        name = f"terms-{uuid.uuid4().hex}.parquet"
        pq.write_table(pa.table({"term": self.terms}), folder / name, compression="none")
        spark.sparkContext.addFile(str(folder / name))
        return name


def worker_terms(name: str) -> pa.Array:
    """The dictionary inside an executor (read once per Python worker and job)."""
    hit = _WORKER_CACHE.get(name)
    if hit is None:
        from pyspark import SparkFiles

        _WORKER_CACHE.clear()  # one job at a time: drop the previous job's dictionary
        column = pq.read_table(SparkFiles.get(name)).column("term")
        hit = _WORKER_CACHE[name] = column.combine_chunks()
    return hit


def same_array(a: pa.Array, b: pa.Array) -> bool:
    """Whether two arrays are the very same data (the same buffers at the same offset and
    length), which is cheap to tell; equal contents in other buffers do not count."""
    if len(a) != len(b) or a.offset != b.offset or a.type != b.type:
        return False
    return all(
        x is y or (x is not None and y is not None and x.address == y.address)
        for x, y in zip(a.buffers(), b.buffers(), strict=True)
    )


def dictionary_runs(column: pa.Array | pa.ChunkedArray) -> list[list[pa.Array]]:
    """The non-empty chunks, consecutive dictionary chunks holding the same dictionary in one
    run: a Parquet reader gives each row group's dictionary to every batch of the group (21
    dictionaries over 161 chunks at 21 M triples), and one run's values are hashed once."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    runs: list[list[pa.Array]] = []
    for chunk in chunks:
        if not len(chunk):
            continue
        if (
            runs
            and pa.types.is_dictionary(chunk.type)
            and pa.types.is_dictionary(runs[-1][0].type)
            and same_array(chunk.dictionary, runs[-1][0].dictionary)
        ):
            runs[-1].append(chunk)
        else:
            runs.append([chunk])
    return runs


def _pieces(
    column: pa.Array | pa.ChunkedArray, *, exact: bool = False
) -> list[tuple[pa.Array, np.ndarray]]:
    """(values, each row's position among them) of every run of chunks (``dictionary_runs``) of a
    string or dictionary-encoded string column, in row order; a plain string chunk is hashed.
    A dictionary's unused values (rows filtered away) are dropped so they are not hashed or
    kept, unless most are used (then copying the rest costs more than it saves) and not
    ``exact``: a term dictionary may hold a term no row has (its id matches nothing, as an
    absent term's -1)."""
    out = []
    for run in dictionary_runs(column):
        if not pa.types.is_dictionary(run[0].type):
            run = [pc.dictionary_encode(run[0])]
        dictionary = run[0].dictionary
        rows = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in run])
        used = np.zeros(len(dictionary), dtype=bool)
        used[rows] = True
        mostly_used = used.sum() * 2 >= len(used)
        if mostly_used and not exact:  # hash it as it is rather than copy the used values
            out.append((dictionary.cast(pa.string()), rows))
            continue
        position = (np.cumsum(used) - 1).astype(np.int32)
        values = dictionary.filter(pa.array(used))
        out.append((values.cast(pa.string()), position[rows]))
    return out


def used_values(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The distinct strings a (dictionary-encoded or plain) string column holds."""
    parts = [values for values, _ in _pieces(column, exact=True)]
    if not parts:
        return pa.array([], pa.string())
    unique = pc.unique(pa.chunked_array(parts, pa.string()))
    return unique.combine_chunks() if isinstance(unique, pa.ChunkedArray) else unique


def isin_mask(column: pa.Array | pa.ChunkedArray, values: list[str]) -> np.ndarray:
    """Rows of a (dictionary-encoded or plain) string column whose value is one of ``values``:
    for a dictionary chunk the strings compared are its distinct values, not its rows."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    value_set = pa.array(values, pa.string())
    parts = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            hit = pc.is_in(chunk.dictionary.cast(pa.string()), value_set=value_set)
            rows = chunk.indices.to_numpy(zero_copy_only=False)
            parts.append(hit.to_numpy(zero_copy_only=False)[rows])
        else:
            parts.append(pc.is_in(chunk, value_set=value_set).to_numpy(zero_copy_only=False))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
