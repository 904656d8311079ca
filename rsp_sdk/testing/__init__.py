"""Adapter conformance kit: a pytest suite any adapter — ours or a third party's — runs to prove
it honours the engine protocol on every runtime that can carry it. See ``conformance``."""

from rsp_sdk.testing.conformance import AdapterConformance, drain
from rsp_sdk.testing.leaks import TreeWatch
from rsp_sdk.testing.scenario import FEATURE_PROBES, Scenario, default_query

__all__ = [
    "FEATURE_PROBES",
    "AdapterConformance",
    "Scenario",
    "TreeWatch",
    "default_query",
    "drain",
]
