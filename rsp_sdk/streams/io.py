"""Reading and writing stream and static-data Parquet files.

Writes are atomic (temp file + rename) and deterministic: same rows and metadata give the same
bytes, which the generators' reproducibility promise relies on.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import STATIC_SCHEMA, STREAM_METADATA_KEY, STREAM_SCHEMA, StreamMeta
from rsp_sdk.util.atomic import atomic_path

_ROW_GROUP = 1 << 20


# the stream's term columns, kept dictionary-encoded by ``conform(..., dictionary=True)``
DICTIONARY_COLUMNS = ("stream", "s", "p", "o")
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())


def conform(table: pa.Table, schema: pa.Schema, *, dictionary: bool = False) -> pa.Table:
    """Cast ``table`` to ``schema`` (adding an all-null optional ``g``), in schema column order.

    ``dictionary``: the term columns (``DICTIONARY_COLUMNS``) become dictionary<int32, string>
    instead of string; a dictionary-encoded input stays as it is, not decoded into one string
    per row (the oracle's 21 M-triple streams would hold ~5 GB of them)."""
    cols = []
    fields = []
    for field in schema:
        if dictionary and field.name in DICTIONARY_COLUMNS and field.name in table.column_names:
            field = pa.field(field.name, _DICTIONARY, nullable=field.nullable)
            column = table.column(field.name)
            if not pa.types.is_dictionary(column.type):
                column = pc.dictionary_encode(column.cast(pa.string()))
            cols.append(column.cast(_DICTIONARY))
        elif field.name in table.column_names:
            cols.append(table.column(field.name).cast(field.type))
        elif field.nullable:
            cols.append(pa.nulls(table.num_rows, field.type))
        else:
            raise ValueError(f"table lacks required column {field.name!r}")
        fields.append(field)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def stream_table(
    stream: str | list[str],
    t_app_ms: list[int],
    s: list[str],
    p: list[str],
    o: list[str],
    g: list[str | None] | None = None,
) -> pa.Table:
    """A stream-schema table from Python lists (``stream`` may be one IRI for every row)."""
    n = len(t_app_ms)
    names = pa.array([stream] * n if isinstance(stream, str) else stream, pa.string())
    return pa.Table.from_arrays(
        [
            names,
            pa.array(t_app_ms, pa.int64()),
            pa.array(s, pa.string()),
            pa.array(p, pa.string()),
            pa.array(o, pa.string()),
            pa.array(g if g is not None else [None] * n, pa.string()),
        ],
        schema=STREAM_SCHEMA,
    )


def sort_by_time(table: pa.Table) -> pa.Table:
    """Stable sort by ``t_app_ms``: keeps the input order of triples sharing a timestamp."""
    return table.take(pc.sort_indices(table, sort_keys=[("t_app_ms", "ascending")]))


def first_decrease(table: pa.Table) -> int | None:
    """Row index of the first timestamp smaller than its predecessor, or None if sorted."""
    t = table.column("t_app_ms")
    if table.num_rows < 2:
        return None
    bad = pc.less(t.slice(1), t.slice(0, table.num_rows - 1))
    idx = pc.index(bad, True).as_py()
    return None if idx < 0 else idx + 1


def write_stream(table: pa.Table, path: Path | str, meta: StreamMeta) -> Path:
    """Validate, then atomically write a stream table with its provenance metadata."""
    table = conform(table, STREAM_SCHEMA)
    bad = first_decrease(table)
    if bad is not None:
        raise InputError(
            f"stream rows are not sorted by t_app_ms (row {bad})",
            path=path,
            expected="a stream sorted by application time (rsp stream import --sort)",
        )
    if not meta.streams:
        streams = sorted(pc.unique(table.column("stream")).to_pylist())
        meta = meta.model_copy(update={"streams": streams})
    table = table.replace_schema_metadata({STREAM_METADATA_KEY: meta.to_bytes()})
    return _write(table, Path(path))


def write_static(table: pa.Table, path: Path | str, meta: StreamMeta | None = None) -> Path:
    """Atomically write static background data (s, p, o, optional g)."""
    table = conform(table, STATIC_SCHEMA)
    if meta is not None:
        table = table.replace_schema_metadata({STREAM_METADATA_KEY: meta.to_bytes()})
    return _write(table, Path(path))


def _write(table: pa.Table, path: Path) -> Path:
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            use_dictionary=True,
            row_group_size=_ROW_GROUP,
            write_statistics=True,
        )
    return path


def read_stream(
    path: Path | str, *, columns: list[str] | None = None, dictionary: bool = False
) -> pa.Table:
    """Read a stream file, checking it has the stream schema (``dictionary``: the term
    columns dictionary-encoded, as ``conform`` makes them)."""
    return _read(Path(path), STREAM_SCHEMA, columns, dictionary=dictionary)


def read_static(path: Path | str) -> pa.Table:
    """Read static data from Parquet, or from any RDF file pyoxigraph can parse."""
    path = Path(path)
    if path.suffix.lower() != ".parquet":
        from rsp_sdk.streams.importers.rdf import read_rdf

        return read_rdf(path)
    return _read(path, STATIC_SCHEMA, None)


def read_meta(path: Path | str) -> StreamMeta | None:
    """Provenance metadata of a stream/static file (None for foreign Parquet files)."""
    md = pq.read_schema(path).metadata or {}
    raw = md.get(STREAM_METADATA_KEY)
    return StreamMeta.from_bytes(raw) if raw else None


def _read(
    path: Path, schema: pa.Schema, columns: list[str] | None, *, dictionary: bool = False
) -> pa.Table:
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        found = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a Parquet file ({exc})", path=path) from exc
    missing = [f.name for f in schema if not f.nullable and f.name not in found.names]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            path=path,
            expected=f"a table with columns {', '.join(schema.names)}",
        )
    encoded = [c for c in DICTIONARY_COLUMNS if dictionary and c in found.names]
    table = pq.read_table(path, columns=columns, read_dictionary=encoded or None)
    if columns is None:
        meta = table.schema.metadata
        table = conform(table, schema, dictionary=dictionary)
        if meta:
            table = table.replace_schema_metadata(meta)
    return table
