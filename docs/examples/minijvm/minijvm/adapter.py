"""The rsp-sdk adapter of minijvm: the same description as minirsp's adapter (profile,
capabilities, the query rendered as JSON), but its driver is a Java class in a JVM, built from
the provisioning cache (``rsp engines add minijvm minijvm-engine.jar``)."""

from __future__ import annotations

from pathlib import Path

from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, ProvisionCache
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.structure import query_structure
from rsp_sdk.runtime import JvmDriver

MANIFEST = Path(__file__).with_name("minijvm.toml")

# What minijvm does, in SECRET's terms (checked with `rsp engines probe minijvm`).
PROFILE = Profile(
    name="minijvm",
    description="windows [k·STEP, k·STEP+RANGE) from 0, reported at close if non-empty, Rstream",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TUPLE_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=True,
    time_unit_ms=1,
    t0=T0Policy(first_ms=0),
)

CAPABILITIES = Capabilities.of(Feature.JOIN, Feature.RSTREAM, Feature.APP_TIME_INPUT)


class MiniJvmAdapter(BaseAdapter):
    name = "minijvm"
    version = "0.1.0"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "jvm"
    manifest_path = MANIFEST  # the engine jar, the driver class, the glue sources

    def render(self, query: QuerySpec) -> str:
        """The query as minijvm's driver reads it: one window, the projection, the patterns."""
        import json

        structure = query_structure(query)
        beyond = structure.only(Feature.JOIN, Feature.NAMED_GRAPHS)
        if beyond or len(query.windows) != 1:
            what = ", ".join(f.value for f in beyond) or f"{len(query.windows)} windows"
            raise ValueError(f"minijvm cannot express {what}")
        window = query.windows[0]
        return json.dumps(
            {
                "stream": window.stream,
                "range_ms": window.range_ms,
                "step_ms": window.step_ms,
                "select": list(structure.projection),
                "where": [[t.s, t.p, t.o] for t in structure.triples],
            }
        )

    def driver(self, cache: ProvisionCache | None = None) -> JvmDriver:
        """The provisioned engine jar and compiled glue on the classpath, the driver class the
        manifest names (``BaseAdapter.jvm_driver``; ``MissingArtifact`` until provisioned)."""
        spec = self.jvm_driver(cache)
        assert isinstance(spec, JvmDriver)
        return spec
