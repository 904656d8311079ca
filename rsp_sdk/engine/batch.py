"""Packed triple batches: the only way triples cross into an engine.

A batch is the driver contract's packed text (``<t_app_ms> <s> <p> <o>\\n`` per triple, terms in
N-Triples syntax) plus what the recorder needs without re-reading it: count and t_app range.
``pack_lines`` builds the lines of a whole stream table in one vectorised pass (pyarrow compute,
large strings); a batch is then a slice of that one data buffer — the lines of consecutive rows
are contiguous there — so cutting batches costs one copy and no Python loop over triples.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True, slots=True)
class TripleBatch:
    packed: bytes
    count: int
    t_min_ms: int
    t_max_ms: int

    @classmethod
    def from_triples(cls, triples: Iterable[tuple[int, str, str, str]]) -> TripleBatch:
        """A batch from (t_app_ms, s, p, o) tuples (small batches, tests, hand-made input)."""
        rows = list(triples)
        if not rows:
            raise ValueError("a batch needs at least one triple")
        for _, s, p, _ in rows:
            if " " in s or " " in p or "\n" in s + p:
                raise ValueError(f"subject/predicate contain a space or newline: {s!r} {p!r}")
        text = "".join(f"{t} {s} {p} {o}\n" for t, s, p, o in rows)
        times = [r[0] for r in rows]
        return cls(text.encode(), len(rows), min(times), max(times))

    @classmethod
    def from_table(cls, table: pa.Table) -> TripleBatch:
        """One batch holding every row of a stream table (``t_app_ms``, ``s``, ``p``, ``o``)."""
        lines = pack_lines(table)
        return slice_batches(lines, table.column("t_app_ms"), [(0, table.num_rows)])[0]


def pack_lines(table: pa.Table) -> pa.LargeStringArray:
    """The packed line of every row, ``"<t> <s> <p> <o>\\n"``, as one contiguous Arrow array."""
    if table.num_rows == 0:
        return pa.array([], type=pa.large_string())
    cols = [
        pc.cast(table.column("t_app_ms"), pa.large_string()),
        pc.cast(table.column("s"), pa.large_string()),
        pc.cast(table.column("p"), pa.large_string()),
        pc.binary_join_element_wise(
            pc.cast(table.column("o"), pa.large_string()),
            pa.scalar("\n", pa.large_string()),
            pa.scalar("", pa.large_string()),
        ),
    ]
    joined = pc.binary_join_element_wise(*cols, pa.scalar(" ", pa.large_string()))
    arr = joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined
    if arr.null_count:
        raise ValueError("stream rows with null terms cannot be packed")
    return arr


def slice_batches(
    lines: pa.LargeStringArray,
    t_app: pa.ChunkedArray | pa.Array,
    bounds: Sequence[tuple[int, int]],
) -> list[TripleBatch]:
    """Batches for the row ranges ``[start, stop)`` of ``lines`` (contiguous slices, one copy)."""
    offsets_buf = lines.buffers()[1]
    data = lines.buffers()[2]
    import numpy as np

    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[
        lines.offset : lines.offset + len(lines) + 1
    ]
    times = np.asarray(t_app.to_numpy() if hasattr(t_app, "to_numpy") else t_app)
    out: list[TripleBatch] = []
    for start, stop in bounds:
        if stop <= start:
            continue
        lo, hi = int(offsets[start]), int(offsets[stop])
        chunk = times[start:stop]
        out.append(
            TripleBatch(data[lo:hi].to_pybytes(), stop - start, int(chunk.min()), int(chunk.max()))
        )
    return out


def fixed_bounds(n: int, size: int) -> list[tuple[int, int]]:
    """Row ranges of at most ``size`` rows covering ``n`` rows."""
    return [(i, min(i + size, n)) for i in range(0, n, size)]
