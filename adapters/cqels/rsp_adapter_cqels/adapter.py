"""The CQELS 1.x adapter (``cqels``): wall-clock windows, eager Istream results.

It describes the engine to rsp_sdk — SECRET profile, capabilities, CQELS-QL renderer, and a JVM
driver whose classpath comes from the provisioning cache (``cqels.toml``) — and never drives it:
``EngineSession`` does, over jpype, py4j or docker, one JVM per session (CQELS keeps a JVM-wide
Esper singleton). CQELS has no application time, so it must be fed in real time
(``--mode real-time``): when a triple arrives *is* its timestamp.

Capabilities are what the engine was seen to evaluate (tests/test_cqels.py runs a probe per
feature against the real engine); the profile is what it was seen to do on CSRBench
(docs/engines/cqels.md).
"""

from __future__ import annotations

from pathlib import Path

from rsp_adapter_cqels.render import render_cqels
from rsp_sdk.engine import BaseAdapter, Capabilities, Feature
from rsp_sdk.model.profile import load_profile
from rsp_sdk.model.query import QuerySpec

HERE = Path(__file__).resolve().parent

# CSRBench's CQELS profile, which the engine shows: every arriving triple that completes new
# solutions reports them at once (content change, tuple-driven), only the new ones (Istream),
# never an empty relation; windows run on the wall clock (System.nanoTime at arrival).
CQELS_PROFILE = load_profile("cqels").model_copy(update={"name": "cqels-1.x"})

# A stream block holds triple patterns only, and the engine ignores DISTINCT, ORDER BY and LIMIT
# (each Mapping is reported as it is made), rejects property paths and has no application time.
# Aggregates are accepted and answered, though not always right (docs/engines/cqels.md).
CQELS_CAPABILITIES = Capabilities.of(
    Feature.JOIN,
    Feature.FILTER,
    Feature.AGGREGATES,
    Feature.STATIC_DATA,
    Feature.NAMED_GRAPHS,
    Feature.MULTI_STREAM,
    Feature.MULTI_WINDOW,
    Feature.ISTREAM,
)


class CqelsAdapter(BaseAdapter):
    """CQELS 1.x (cqels.jar of CityBench; danhlephuoc/cqels)."""

    name = "cqels"
    version = "1.0"
    profile = CQELS_PROFILE
    capabilities = CQELS_CAPABILITIES
    driver_kind = "jvm"
    manifest_path = HERE / "cqels.toml"

    def render(self, query: QuerySpec) -> str:
        return render_cqels(query)
