"""Engines: the adapter protocol, one generic EngineSession over any runtime, capabilities,
the adapter registry and provisioning. Adapters import only this public API."""

from rsp_sdk.engine.adapter import Adapter, BaseAdapter, DriverKind, config_problem
from rsp_sdk.engine.batch import TripleBatch, pack_lines, slice_batches
from rsp_sdk.engine.capabilities import Capabilities, Feature, required_features
from rsp_sdk.engine.provision import Manifest, MissingArtifact, ProvisionCache, load_manifest
from rsp_sdk.engine.registry import discover, get_adapter, list_adapters, register
from rsp_sdk.engine.session import (
    EngineSession,
    QueryHandle,
    ResultEvent,
    Timeouts,
    UnsupportedQuery,
)

__all__ = [
    "Adapter",
    "BaseAdapter",
    "Capabilities",
    "DriverKind",
    "EngineSession",
    "Feature",
    "Manifest",
    "MissingArtifact",
    "ProvisionCache",
    "QueryHandle",
    "ResultEvent",
    "Timeouts",
    "TripleBatch",
    "UnsupportedQuery",
    "config_problem",
    "discover",
    "get_adapter",
    "list_adapters",
    "load_manifest",
    "pack_lines",
    "register",
    "required_features",
    "slice_batches",
]
