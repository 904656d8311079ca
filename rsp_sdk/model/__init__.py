"""pydantic models and Arrow schemas at the SDK's boundaries.

The Arrow schemas (``rsp_sdk.model.results``, ``rsp_sdk.model.stream``) load on first use (PEP
562): importing ``rsp_sdk.model.profile`` — every command line module does — need not load
pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec, WindowSpec

if TYPE_CHECKING:
    from rsp_sdk.model.results import (
        EXPECTED_SCHEMA,
        RESULT_SCHEMA,
        binding_from_json,
        binding_to_json,
    )
    from rsp_sdk.model.stream import DEFAULT_STREAM_IRI, STATIC_SCHEMA, STREAM_SCHEMA, StreamMeta

__all__ = [
    "DEFAULT_STREAM_IRI",
    "EXPECTED_SCHEMA",
    "R2S",
    "RESULT_SCHEMA",
    "STATIC_SCHEMA",
    "STREAM_SCHEMA",
    "Profile",
    "QuerySpec",
    "ReportPolicy",
    "StreamMeta",
    "T0Policy",
    "Tick",
    "WindowSpec",
    "binding_from_json",
    "binding_to_json",
]

_LAZY = {
    "EXPECTED_SCHEMA": "results",
    "RESULT_SCHEMA": "results",
    "binding_from_json": "results",
    "binding_to_json": "results",
    "DEFAULT_STREAM_IRI": "stream",
    "STATIC_SCHEMA": "stream",
    "STREAM_SCHEMA": "stream",
    "StreamMeta": "stream",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"rsp_sdk.model.{_LAZY[name]}"), name)
