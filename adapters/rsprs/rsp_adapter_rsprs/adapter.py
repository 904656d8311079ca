"""The rsp-rs adapter: profile, capabilities, dialect and the Rust driver.

rsp-rs (crates.io ``rsp-rs`` 0.3.5, Kush Bisen, Ghent University – imec) is a Rust port of rsp-js
on Oxigraph. The adapter runs it through ``driver/`` (our JSON-lines driver crate, built by
``rsp engines fetch rsprs`` with ``cargo build --release --locked`` into the provisioning cache)
on the ``subprocess`` runtime. Everything declared here was established by running the engine;
the evidence and the engine's quirks are in docs/engines/rsprs.md.
"""

from __future__ import annotations

from pathlib import Path

from rsp_adapter_rsprs.render import render_rsprs
from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, ProvisionCache
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Lead, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import IMAGE_FILES, DriverSpec, ImageFile, ProcessDriver, ProcessImage

HERE = Path(__file__).resolve().parent

# A window [o, c) is evaluated when the first element with a timestamp > c arrives (never on a
# timer); an evaluation without bindings emits nothing; every evaluation is the whole result
# (Rstream, whatever REGISTER says). Windows are anchored at the first element: the first ones
# open RANGE - STEP before it (partial windows that already hold it).
PROFILE = Profile(
    name="rsprs",
    description="rsp-rs 0.3.5: window close (on the next later element), time-driven, "
    "Rstream, no empty relations, windows anchored at the first element",
    report=frozenset({ReportPolicy.WINDOW_CLOSE}),
    tick=Tick.TIME_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=False,
    time_unit_ms=1,
    t0=T0Policy(lead=T0Lead.RANGE_MINUS_STEP),
)

# Oxigraph evaluates the SPARQL 1.1 body; the limits are rsp-rs's own: SELECT only, Rstream
# only, no C-SPARQL timestamp function, one window per stream, GRAPH only for the window graphs.
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


class RspRsAdapter(BaseAdapter):
    name = "rsprs"
    version = "0.3.5"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "process"
    process_image = True
    manifest_path = HERE / "rsprs.toml"

    def render(self, query: QuerySpec) -> str:
        return render_rsprs(query)

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        manifest = self.manifest()
        assert manifest is not None
        cache = cache or ProvisionCache()
        cache.require(manifest)
        binary = cache.cargo_binary(manifest)
        # raw_push: batches go to the driver as bytes after the request line, not inside JSON
        return ProcessDriver(argv=[str(binary)], image=self._image(binary), raw_push=True)

    def _image(self, binary: Path) -> ProcessImage:
        """The driver binary cargo built on this host, copied into the pinned base image.

        The base is Debian bookworm like the machines it is built on (glibc 2.36), and the
        binary needs only libc and libgcc, which the base has: no package beyond the lock."""
        return ProcessImage(
            engine=self.name,
            engine_version=self.version,
            packages=[],
            files=[ImageFile(name="rsprs-driver", host=binary)],
            argv=[f"{IMAGE_FILES}/rsprs-driver"],
            env={},
        )
