"""The stream model: a Parquet table of timestamped triples.

One row per triple: ``stream`` (the stream IRI, without angle brackets), ``t_app_ms`` (application
time, int64 milliseconds), ``s``/``p``/``o`` (N-Triples terms) and an optional ``g`` (named-graph or
event id for graph-based streams, N-Triples IRI/bnode or null). Rows are sorted by ``t_app_ms`` and,
within one timestamp, keep their input order: tuple-driven engines see the triples of one instant
one by one, so that order is part of the data.

Several streams may share one table (the ``stream`` column tells them apart). Static background
data is not a stream: it lives in its own Parquet table (``s``, ``p``, ``o``, optional ``g``) or RDF
file.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.streams.vocab import DEFAULT_STREAM_IRI as DEFAULT_STREAM_IRI

STREAM_METADATA_KEY = b"rsp_sdk.stream"

STREAM_SCHEMA = pa.schema(
    [
        pa.field("stream", pa.string(), nullable=False),
        pa.field("t_app_ms", pa.int64(), nullable=False),
        pa.field("s", pa.string(), nullable=False),
        pa.field("p", pa.string(), nullable=False),
        pa.field("o", pa.string(), nullable=False),
        pa.field("g", pa.string(), nullable=True),
    ]
)

STATIC_SCHEMA = pa.schema(
    [
        pa.field("s", pa.string(), nullable=False),
        pa.field("p", pa.string(), nullable=False),
        pa.field("o", pa.string(), nullable=False),
        pa.field("g", pa.string(), nullable=True),
    ]
)


class StreamMeta(BaseModel):
    """Provenance stored in the Parquet footer, so a stream file says where it came from.

    Nothing time-dependent goes in here: the same generator parameters must give byte-identical
    files.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    producer: str = Field(
        description="importer or generator that wrote the file, e.g. 'import:n3t'"
    )
    parameters: dict[str, Any] = Field(default_factory=dict)
    streams: list[str] = Field(default_factory=list, description="stream IRIs present in the file")
    time_unit_ms: int = Field(
        default=1, ge=1, description="granularity of the timestamps (e.g. 1000 for CSRBench)"
    )

    def to_bytes(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> StreamMeta:
        return cls.model_validate(json.loads(raw))
