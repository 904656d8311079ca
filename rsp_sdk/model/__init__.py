"""pydantic models and Arrow schemas at the SDK's boundaries."""

from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.model.results import EXPECTED_SCHEMA, RESULT_SCHEMA, binding_from_json, binding_to_json
from rsp_sdk.model.stream import (
    DEFAULT_STREAM_IRI,
    STATIC_SCHEMA,
    STREAM_SCHEMA,
    StreamMeta,
)

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
