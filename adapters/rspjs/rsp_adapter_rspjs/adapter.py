"""The rsp-js adapter: profile, capabilities, dialect and the Node driver.

rsp-js (npm ``rsp-js`` 1.3.5, Pieter Bonte) is an RSP-QL engine on N3.js and Comunica. The
adapter runs it through ``node/driver.js`` (our JSON-lines driver) on the ``subprocess`` runtime,
with the npm packages ``rsp engines fetch rspjs`` installed into the provisioning cache from the
committed lock file. Everything declared here was established by running the engine; the
evidence and the engine's quirks are in docs/engines/rspjs.md.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rsp_adapter_rspjs.render import render_rspjs
from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, ProvisionCache
from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.errors import RspError
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Lead, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import IMAGE_FILES, DriverSpec, ImageFile, ProcessDriver, ProcessImage

HERE = Path(__file__).resolve().parent
DRIVER_JS = HERE / "node" / "driver.js"

# A window [o, c) is evaluated when the first element with a timestamp > c arrives (so only once
# time moves on, never on a timer), only if it holds triples; an evaluation without bindings
# emits nothing; every evaluation is the whole result (Rstream, whatever REGISTER says). Windows
# close at multiples of STEP counted from 0 (its windows' start_time) and scope() also creates
# the ones that opened before 0, so a sliding window's first report is [STEP − RANGE, STEP):
# t0 = −(RANGE − STEP), 0 for a tumbling window.
PROFILE = Profile(
    name="rspjs",
    description="rsp-js 1.3.5: window close (on the next later element) + non-empty "
    "content, time-driven, Rstream, no empty relations, windows closing at multiples of STEP "
    "from STEP (the first ones partial)",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TIME_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=False,
    time_unit_ms=1,
    # windows [kβ − ω, kβ) for k ≥ 1: scope() opens the first at −ω at registration, so a sliding
    # window's first report holds only the data of [0, β) (docs/engines/rspjs.md)
    t0=T0Policy(first_ms=0, span="slide", lead=T0Lead.RANGE_MINUS_STEP),
)

# Comunica evaluates the SPARQL 1.1 body; the limits are rsp-js's own: SELECT only, Rstream only,
# no C-SPARQL timestamp function, one window per stream, GRAPH only for the window graphs.
CAPABILITIES = Capabilities.of(
    Feature.JOIN,
    Feature.FILTER,
    Feature.OPTIONAL,
    Feature.UNION,
    Feature.NEGATION,
    Feature.AGGREGATES,
    Feature.DISTINCT,
    Feature.ORDER_BY,
    Feature.LIMIT,
    Feature.BIND,
    Feature.VALUES,
    Feature.PROPERTY_PATHS,
    Feature.SUBQUERY,
    Feature.STATIC_DATA,
    Feature.MULTI_STREAM,
    Feature.MULTI_WINDOW,
    Feature.RSTREAM,
    Feature.APP_TIME_INPUT,
)


NO_NODE = (
    "rsp-js needs Node.js 18+ on the host: `node` is not on PATH (Debian: apt-get install "
    "nodejs npm; or set RSP_NODE to the node executable; or run it with -r docker, whose image "
    "has its own Node)"
)


def find_node() -> str | None:
    """``$RSP_NODE`` or ``node`` on PATH, if any."""
    return os.environ.get("RSP_NODE") or shutil.which("node")


def node_executable() -> str:
    """``$RSP_NODE`` or ``node`` on PATH."""
    node = find_node()
    if not node:
        raise RspError(NO_NODE)
    return node


class RspJsAdapter(BaseAdapter):
    name = "rspjs"
    version = "1.3.5"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "process"
    process_image = True
    manifest_path = HERE / "rspjs.toml"

    def render(self, query: QuerySpec) -> str:
        return render_rspjs(query)

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        manifest = self.manifest()
        assert manifest is not None
        cache = cache or ProvisionCache()
        cache.require(manifest)
        modules = cache.npm_modules(manifest)
        node = find_node()  # only the subprocess runtime needs it: the image has its own Node
        return ProcessDriver(
            argv=[node or "node", str(DRIVER_JS)],
            env={"NODE_PATH": str(modules)},
            image=self._image(modules),
            host_missing=None if node else NO_NODE,
        )

    def _image(self, modules: Path) -> ProcessImage:
        """Debian's pinned ``nodejs`` (base lock) + the driver + the provisioned node_modules.

        The node_modules folder is ``npm ci --ignore-scripts`` of the committed lock file
        (integrity-checked) and named by that lock's hash, so the lock's sha256 is its content
        key: hashing its 6,000 files at every launch would cost seconds."""
        lock_file = DRIVER_JS.parent / "package-lock.json"
        return ProcessImage(
            engine=self.name,
            engine_version=self.version,
            packages=["nodejs"],
            files=[
                ImageFile(name="driver.js", host=DRIVER_JS),
                ImageFile(
                    name="node_modules", host=modules, sha256="npm-ci:" + sha256_of(lock_file)
                ),
            ],
            argv=["node", f"{IMAGE_FILES}/driver.js"],
            env={"NODE_PATH": f"{IMAGE_FILES}/node_modules"},
        )
