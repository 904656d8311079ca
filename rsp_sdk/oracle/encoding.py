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
        """The dictionary of ``columns`` and each column as int64 ids, from one hash pass."""
        chunks: list[pa.Array] = []
        bounds = [0]
        for col in columns:
            parts = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
            chunks.extend(parts)
            bounds.append(bounds[-1] + sum(len(c) for c in parts))
        # a chunked array's dictionary encoding shares one dictionary among its chunks
        encoded = pc.dictionary_encode(pa.chunked_array(chunks, pa.string()))
        if not encoded.num_chunks:
            return cls(pa.array([], pa.string())), [pa.array([], pa.int64()) for _ in columns]
        dictionary = encoded.chunk(0).dictionary
        ids = pa.chunked_array([c.indices for c in encoded.chunks], pa.int32()).combine_chunks()
        ids = ids.cast(pa.int64())
        out = [ids.slice(lo, hi - lo) for lo, hi in itertools.pairwise(bounds)]
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

    def literals(self) -> pa.Table:
        """(id, term) of every literal: the rows the numeric/lexical value table is made of."""
        mask = pc.starts_with(self.terms, '"')
        ids = pc.indices_nonzero(mask) if hasattr(pc, "indices_nonzero") else None
        if ids is None:  # pragma: no cover - very old pyarrow
            import numpy as np

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
