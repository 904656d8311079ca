"""Vectorised assembly of generated triples: a pool of terms and blocks of rows that index it.

Generators describe their output as *events* (a post, a GPS fix, a message) that each expand to a
fixed template of triples, plus variable-length children (hashtags of a post, tags of a photo).
Building millions of N-Triples strings one by one in Python would take minutes, so every distinct
term is built once, column-wise with Arrow kernels, into a ``TermPool``; rows only carry integer
indices into that pool. A single ``take`` at the end turns the indices into string columns.

Row order is part of a stream (see ``rsp_sdk.model.stream``): rows are sorted by application time,
then by stream, then by event key, then by position within the event, so the triples of one event
stay together and in template order however many events share a millisecond.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.model.stream import STATIC_SCHEMA, STREAM_SCHEMA, StreamMeta
from rsp_sdk.streams.io import conform

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

I64 = npt.NDArray[np.int64]
Index = int | I64  # one term for every event, or one per event


class Generated(NamedTuple):
    """What a generator with background knowledge returns: streams, static data, provenance."""

    stream: pa.Table
    static: pa.Table
    meta: StreamMeta


def rng_for(seed: int) -> np.random.Generator:
    """The only source of randomness of a generator: PCG64 seeded by the user's seed.

    Never Python's global ``random`` and nothing time-dependent, so the same parameters give the
    same draws; numpy guarantees a stable stream for a given bit generator and numpy version.
    """
    return np.random.Generator(np.random.PCG64(seed))


def to_str(values: npt.ArrayLike) -> pa.Array:
    """Decimal strings of an integer or float array (Arrow's shortest round-trip formatting)."""
    return pc.cast(pa.array(values), pa.string())


class TermPool:
    """Every distinct term of a dataset once, in N-Triples syntax; rows refer to it by index."""

    def __init__(self) -> None:
        self._chunks: list[pa.Array] = []
        self._size = 0
        self._consts: dict[str, int] = {}
        self._dictionary: pa.Array | None = None

    def add(self, terms: pa.Array | Sequence[str]) -> int:
        """Append terms (already in N-Triples syntax); returns the index of the first."""
        arr = terms if isinstance(terms, pa.Array) else pa.array(list(terms), pa.string())
        base = self._size
        self._chunks.append(arr.cast(pa.string()))
        self._size += len(arr)
        self._dictionary = None
        return base

    def iri(self, iri: str) -> int:
        """Index of one IRI (added once however often it is asked for)."""
        return self.term(f"<{iri}>")

    def term(self, term: str) -> int:
        """Index of one N-Triples term (added once however often it is asked for)."""
        if term not in self._consts:
            self._consts[term] = self.add([term])
        return self._consts[term]

    def iris(self, prefix: str, ids: npt.ArrayLike, suffix: str = "") -> int:
        """``<{prefix}{id}{suffix}>`` for each id; returns the index of the first."""
        return self.add(pc.binary_join_element_wise(f"<{prefix}", to_str(ids), f"{suffix}>", ""))

    def literals(self, lexical: pa.Array | Sequence[str], datatype: str | None = None) -> int:
        """Plain (``datatype=None``) or typed literals of already-escaped lexical forms."""
        lex = lexical if isinstance(lexical, pa.Array) else pa.array(list(lexical), pa.string())
        tail = '"' if datatype is None else f'"^^<{datatype}>'
        return self.add(pc.binary_join_element_wise('"', lex.cast(pa.string()), tail, ""))

    def dictionary(self) -> pa.Array:
        """All terms in index order (built once, until the next ``add``)."""
        if self._dictionary is None:
            self._dictionary = (
                pa.concat_arrays(self._chunks) if self._chunks else pa.array([], pa.string())
            )
        return self._dictionary


@dataclass
class Rows:
    """Triples as pool indices with their sort keys (time, event key, position in the event)."""

    t: I64
    key: I64
    pos: I64
    s: I64
    p: I64
    o: I64

    def __len__(self) -> int:
        return len(self.t)


def _column(idx: Index, n: int) -> I64:
    return np.full(n, idx, np.int64) if isinstance(idx, int) else idx.astype(np.int64, copy=False)


def event_rows(t: I64, key: I64, template: Sequence[tuple[Index, Index, Index]]) -> Rows:
    """The rows of n events that each expand to the same template of k triples, event-major.

    Each template entry gives subject, predicate and object as a constant pool index or an array
    of n indices (one per event).
    """
    n, k = len(t), len(template)

    def lay(part: int) -> I64:
        out = np.empty((n, k), np.int64)
        for r, triple in enumerate(template):
            out[:, r] = _column(triple[part], n)
        return out.ravel()

    return Rows(
        t=np.repeat(t.astype(np.int64, copy=False), k),
        key=np.repeat(key.astype(np.int64, copy=False), k),
        pos=np.tile(np.arange(k, dtype=np.int64), n),
        s=lay(0),
        p=lay(1),
        o=lay(2),
    )


def child_rows(t: I64, key: I64, pos: Index, s: Index, p: Index, o: Index) -> Rows:
    """Rows of variable-length children (one row each), e.g. the hashtags of posts."""
    n = len(t)
    return Rows(
        t=t.astype(np.int64, copy=False),
        key=key.astype(np.int64, copy=False),
        pos=_column(pos, n),
        s=_column(s, n),
        p=_column(p, n),
        o=_column(o, n),
    )


def concat_rows(parts: Sequence[Rows]) -> Rows:
    if len(parts) == 1:
        return parts[0]
    return Rows(
        *(
            np.concatenate([getattr(r, f) for r in parts])
            for f in ("t", "key", "pos", "s", "p", "o")
        )
    )


def _take(dictionary: pa.Array, idx: npt.NDArray[np.generic]) -> pa.Array:
    return pc.take(dictionary, pa.array(idx))


def _is_sorted(rows: Rows) -> bool:
    """Whether rows are already in (t, key, pos) order (generators usually emit them so)."""
    if len(rows) < 2:
        return True
    dt, dk, dp = np.diff(rows.t), np.diff(rows.key), np.diff(rows.pos)
    return bool(np.all((dt > 0) | ((dt == 0) & ((dk > 0) | ((dk == 0) & (dp > 0))))))


def _sorted(rows: Rows) -> Rows:
    if _is_sorted(rows):
        return rows
    order = np.lexsort((rows.pos, rows.key, rows.t))
    return Rows(*(getattr(rows, f)[order] for f in ("t", "key", "pos", "s", "p", "o")))


def stream_table(pool: TermPool, streams: Sequence[tuple[str, Rows | Sequence[Rows]]]) -> pa.Table:
    """One stream-schema table holding several streams, sorted by (t, stream, event, position).

    Each stream may come in several parts (e.g. posts and their hashtags); the parts of a stream
    are merged by (t, event key, position). Streams are then merged by time alone with a stable
    sort, which keeps them in the order given at equal times and costs next to nothing when, as
    usual, the rows are already sorted.
    """
    per_stream = [
        _sorted(concat_rows([parts] if isinstance(parts, Rows) else list(parts)))
        for _, parts in streams
    ]
    rows = concat_rows(per_stream)
    rank = np.repeat(np.arange(len(per_stream), dtype=np.int32), [len(r) for r in per_stream])
    order = None if len(per_stream) == 1 else np.argsort(rows.t, kind="stable")

    def col(a: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        return a if order is None else a[order]

    dictionary = pool.dictionary()
    names = pa.array([iri for iri, _ in streams], pa.string())
    table = pa.table(
        {
            "stream": pa.DictionaryArray.from_arrays(pa.array(col(rank)), names),
            "t_app_ms": pa.array(col(rows.t)),
            "s": _take(dictionary, col(rows.s)),
            "p": _take(dictionary, col(rows.p)),
            "o": _take(dictionary, col(rows.o)),
        }
    )
    return conform(table, STREAM_SCHEMA)


def static_table(pool: TermPool, parts: Sequence[Rows]) -> pa.Table:
    """A static-schema table of the rows in the order given (sort keys are ignored)."""
    rows = concat_rows(parts)
    dictionary = pool.dictionary()
    table = pa.table(
        {
            "s": _take(dictionary, rows.s),
            "p": _take(dictionary, rows.p),
            "o": _take(dictionary, rows.o),
        }
    )
    return conform(table, STATIC_SCHEMA)
