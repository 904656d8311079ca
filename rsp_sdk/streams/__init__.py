"""RDF streams as Parquet tables: read, write, summarise; importers, exporters and generators
live in the subpackages (``rsp_sdk.streams.importers``, ``.exporters``, ``.generators``).

A stream is a table in ``rsp_sdk.model.stream.STREAM_SCHEMA`` sorted by application time
(``stream``, ``t_app_ms``, ``s``, ``p``, ``o``, ``g``; terms in N-Triples syntax) with its
provenance (``StreamMeta``) in the Parquet footer; static data is a table ``s, p, o, g``.

The names below load on first use (PEP 562), so importing one submodule — the command line
does, for every command — does not load pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rsp_sdk.model.stream import STREAM_SCHEMA, StreamMeta
    from rsp_sdk.streams.info import StreamSummary, summarize
    from rsp_sdk.streams.io import read_meta, read_static, read_stream, write_static, write_stream

__all__ = [
    "STREAM_SCHEMA",
    "StreamMeta",
    "StreamSummary",
    "read_meta",
    "read_static",
    "read_stream",
    "summarize",
    "write_static",
    "write_stream",
]

_HOME = {
    "STREAM_SCHEMA": "rsp_sdk.model.stream",
    "StreamMeta": "rsp_sdk.model.stream",
    "StreamSummary": "rsp_sdk.streams.info",
    "summarize": "rsp_sdk.streams.info",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOME.get(name, "rsp_sdk.streams.io")), name)
