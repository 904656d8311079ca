"""Importers: foreign stream and static-data formats into the Parquet stream model.

Each importer returns an Arrow table in the stream (or static) schema and raises
``InputError`` naming the file, the line and the offending text when the input is bad. Writing
the result is the caller's business (``rsp_sdk.streams.io`` writes atomically).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI, StreamMeta
from rsp_sdk.streams.formats import STATIC_FORMATS as STATIC_FORMATS
from rsp_sdk.streams.formats import StreamFormat as StreamFormat


def import_any(
    src: Path | Sequence[Path],
    fmt: StreamFormat,
    *,
    stream: str = DEFAULT_STREAM_IRI,
    interval_ms: int | None = None,
    sort: bool = False,
    dataset: Path | None = None,
) -> tuple[pa.Table, StreamMeta]:
    """Dispatch to the importer for ``fmt``; returns the table and its provenance.

    Only ``citybench`` takes several sources (its ``.stream`` files or their folder) and
    ``dataset`` (CityBench's ``dataset/`` folder); every other format takes one.
    """
    from rsp_sdk.model.terms import check_iri
    from rsp_sdk.streams.importers import citybench, csrbench, n3t, rdf, trig

    if fmt not in STATIC_FORMATS:
        check_iri(stream, option="--stream")
    sources = [src] if isinstance(src, Path) else list(src)
    if fmt is StreamFormat.CITYBENCH:
        table, cb_params = citybench.read_citybench(
            sources, dataset=dataset, interval_ms=interval_ms or 1000
        )
        meta = StreamMeta(producer=f"import:{fmt.value}", parameters=cb_params)
        return table, meta
    if len(sources) != 1:
        raise InputError(
            f"{fmt.value} imports one source, got {len(sources)}", expected="one file or folder"
        )
    src = sources[0]
    params: dict[str, object] = {"source": str(src), "stream": stream}
    time_unit = 1
    if fmt is StreamFormat.N3T:
        table = n3t.read_n3t(src, stream=stream, sort=sort)
    elif fmt is StreamFormat.CSRBENCH_TTL:
        if interval_ms is None:
            raise InputError(
                "--interval MS is required for csrbench-ttl", path=src, expected="--interval 1000"
            )
        table = csrbench.read_csrbench_folder(src, interval_ms=interval_ms, stream=stream)
        params["interval_ms"] = interval_ms
        time_unit = interval_ms
    elif fmt is StreamFormat.TRIG:
        table = trig.read_trig(src, stream=stream, sort=sort)
    else:
        table = rdf.read_rdf(src, fmt=fmt.value)
        params.pop("stream")
    if table.num_rows == 0:
        raise InputError(
            "the input holds no triples",
            path=src,
            expected=f"at least one triple in {fmt.value} syntax",
        )
    return table, StreamMeta(
        producer=f"import:{fmt.value}", parameters=params, time_unit_ms=time_unit
    )
