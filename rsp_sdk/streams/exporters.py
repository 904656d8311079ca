"""Exporters from the stream model back to text formats other tools read.

``n3t`` is YABench's timestamped N-Triples (with the final dot, proper literals); ``trig`` writes
one named graph per (stream, timestamp, graph id) run of rows plus a ``graphsList`` graph giving
each graph's ``sr:hasTimestamp`` — the CSRBench/YABench TriG layout — and ``rsp:inStream`` so
that several streams in one table survive the round trip. Both are written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.errors import InputError
from rsp_sdk.streams.formats import ExportFormat as ExportFormat
from rsp_sdk.streams.vocab import RSP_IN_STREAM, SR_GRAPHS_LIST, SR_HAS_TIMESTAMP, XSD_LONG
from rsp_sdk.util.atomic import atomic_path

_BATCH = 65536


def export_stream(table: pa.Table, path: Path | str, fmt: ExportFormat) -> Path:
    """Write ``table`` to ``path`` in ``fmt``, atomically."""
    path = Path(path)
    check_exportable(table, fmt)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8", newline="\n") as fh:
        write_export(table, fh, fmt)
    return path


def write_export(table: pa.Table, fh: TextIO, fmt: ExportFormat) -> None:
    """Stream ``table`` in ``fmt`` to an open text file (standard output for ``-o -``)."""
    check_exportable(table, fmt)
    if fmt is ExportFormat.N3T:
        _write_n3t(table, fh)
    else:
        _write_trig(table, fh)


def check_exportable(table: pa.Table, fmt: ExportFormat) -> None:
    """n3t has no place for the stream IRI: a table of several streams would be merged into one
    without a word, so it is refused, naming the streams (export one with ``--stream``)."""
    if fmt is not ExportFormat.N3T or table.num_rows == 0:
        return
    streams = sorted(str(s) for s in pc.unique(table.column("stream")).to_pylist())
    if len(streams) > 1:
        raise InputError(
            f"n3t cannot tell {len(streams)} streams apart: " + ", ".join(streams),
            expected="--stream IRI to export one of them, or --format trig (keeps the streams)",
        )


def _columns(table: pa.Table, names: list[str]) -> list[list[object]]:
    return [table.column(n).to_pylist() for n in names]


def _write_n3t(table: pa.Table, fh: TextIO) -> None:
    for batch in table.to_batches(_BATCH):
        s, p, o, t = (batch.column(n).to_pylist() for n in ("s", "p", "o", "t_app_ms"))
        fh.write("".join(f'{a} {b} {c} "{d}" .\n' for a, b, c, d in zip(s, p, o, t, strict=True)))


def _write_trig(table: pa.Table, fh: TextIO) -> None:
    streams, times, gs = _columns(table, ["stream", "t_app_ms", "g"])
    s, p, o = _columns(table, ["s", "p", "o"])
    # Runs of rows with the same (stream, time, graph id) become one named graph.
    runs: list[tuple[str, int, str, int, int]] = []
    start = 0
    for i in range(1, len(times) + 1):
        if i == len(times) or (streams[i], times[i], gs[i]) != (
            streams[start],
            times[start],
            gs[start],
        ):
            g = gs[start]
            name = (
                str(g)
                if g is not None
                else f"<{str(streams[start]).rstrip('/#')}/graph/{times[start]}>"
            )
            # The same generated name can recur (an id reused later): suffix it to stay distinct.
            runs.append((str(streams[start]), int(str(times[start])), name, start, i))
            start = i
    seen: dict[str, int] = {}
    named: list[tuple[str, int, str, int, int]] = []
    for stream, t, name, a, b in runs:
        n = seen.get(name, 0)
        seen[name] = n + 1
        if n:
            name = f"{name[:-1]}-{n}>" if name.startswith("<") else f"{name}x{n}"
        named.append((stream, t, name, a, b))

    fh.write(f"<{SR_GRAPHS_LIST}> {{\n")
    for stream, t, name, _, _ in named:
        fh.write(f'\t{name} <{SR_HAS_TIMESTAMP}> "{t}"^^<{XSD_LONG}> .\n')
        fh.write(f"\t{name} <{RSP_IN_STREAM}> <{stream}> .\n")
    fh.write("}\n")
    for _, _, name, a, b in named:
        fh.write(f"\n{name} {{\n")
        fh.write("".join(f"\t{s[i]} {p[i]} {o[i]} .\n" for i in range(a, b)))
        fh.write("}\n")
