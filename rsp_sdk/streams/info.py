"""Summary statistics of a stream file (``rsp stream info``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
from pydantic import BaseModel, Field

from rsp_sdk.streams.io import read_meta, read_stream


class StreamSummary(BaseModel):
    """What a user checks first about a stream: size, time span, rate, predicates."""

    path: str
    triples: int
    timestamps: int = Field(description="distinct application timestamps")
    t_min_ms: int | None
    t_max_ms: int | None
    span_ms: int
    rate_triples_per_s: float | None = Field(
        description="triples / span; None for a stream of one instant"
    )
    streams: dict[str, int] = Field(description="triples per stream IRI")
    graphs: int = Field(description="distinct named-graph ids (0 for triple streams)")
    predicates: dict[str, int] = Field(description="triples per predicate, most frequent first")
    producer: str | None = None
    parameters: dict[str, object] = Field(default_factory=dict)


def _histogram(column: object) -> dict[str, int]:
    counts = pc.value_counts(column)
    pairs = [(v.as_py(), c.as_py()) for v, c in zip(counts.field(0), counts.field(1), strict=True)]
    pairs.sort(key=lambda vc: (-vc[1], vc[0]))
    return dict(pairs)


def summarize(path: Path | str) -> StreamSummary:
    table = read_stream(path)
    meta = read_meta(path)
    t = table.column("t_app_ms")
    n = table.num_rows
    t_min = pc.min(t).as_py() if n else None
    t_max = pc.max(t).as_py() if n else None
    span = (t_max - t_min) if t_min is not None and t_max is not None else 0
    return StreamSummary(
        path=str(path),
        triples=n,
        timestamps=pc.count_distinct(t).as_py() if n else 0,
        t_min_ms=t_min,
        t_max_ms=t_max,
        span_ms=span,
        rate_triples_per_s=(n / (span / 1000.0)) if span > 0 else None,
        streams=_histogram(table.column("stream")) if n else {},
        graphs=pc.count_distinct(table.column("g")).as_py() if n else 0,
        predicates=_histogram(table.column("p")) if n else {},
        producer=meta.producer if meta else None,
        parameters=dict(meta.parameters) if meta else {},
    )
