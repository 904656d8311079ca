"""The C-SPARQL adapters: 0.9.7 in application time (``csparql``) and 0.9 on the wall clock
(``csparql09``).

Both describe the engine to rsp_sdk — SECRET profile, capabilities, dialect renderer, and a JVM
driver whose classpath comes from the provisioning cache (manifest next to this module) — and
never drive it: ``EngineSession`` does, over jpype, py4j or docker. The Java drivers live in
``java/`` and are compiled against the user's engine jars when they are provisioned.

Capabilities are what the engines were seen to evaluate (tests/test_csparql.py runs a probe per
feature against the real engine); profiles are what they were seen to do on CSRBench
(docs/engines/csparql.md).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from rsp_adapter_csparql.render import UNITS_09, UNITS_097, render_csparql
from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, ProvisionCache
from rsp_sdk.errors import RspError
from rsp_sdk.model.profile import load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import DriverSpec, JvmDriver

HERE = Path(__file__).resolve().parent

# C-SPARQL 0.9.7 as this adapter drives it (application time, the clock recipe of the driver):
# every registered query reports at t0_ms + k·β (t0_ms = 0 by default) the window [c − ω, c)
# (with window_bounds = "left-closed"), when the window holds data; an evaluation with no
# solutions is an empty relation. Its first windows are partial: they open before the first
# triple, as they do for any query registered before its stream starts, so t0 lies up to ω − β
# before the first triple (T0Policy.lead = range_minus_step). This is the built-in profile
# ``csparql-0.9.7``: `rsp oracle check --profile csparql-0.9.7` judges as `rsp csrbench` does.
CSPARQL_PROFILE = load_profile("csparql-0.9.7")

# C-SPARQL 0.9 on Esper's wall clock: the published CSRBench profile (built-in ``csparql``), the
# same as 0.9.7's except for t0, which depends on when the first triple arrives, so it is
# enumerated over one window as CSRBench does.
CSPARQL09_PROFILE = load_profile("csparql")

# The body is evaluated by Jena ARQ 2.13 (SPARQL 1.1), but only after C-SPARQL's own parser
# accepted it; these are the features that got through both and gave results.
CSPARQL_CAPABILITIES = Capabilities.of(
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
    Feature.TIMESTAMP_FUNCTION,
    Feature.RSTREAM,
    Feature.APP_TIME_INPUT,
)

# 0.9's older grammar: SPARQL 1.0 plus aggregates and sub-SELECTs. It rejects BIND, VALUES,
# MINUS and property paths (FILTER NOT EXISTS passes, but negation as a feature includes MINUS).
CSPARQL09_CAPABILITIES = Capabilities.of(
    Feature.JOIN,
    Feature.FILTER,
    Feature.OPTIONAL,
    Feature.UNION,
    Feature.AGGREGATES,
    Feature.DISTINCT,
    Feature.ORDER_BY,
    Feature.LIMIT,
    Feature.SUBQUERY,
    Feature.STATIC_DATA,
    Feature.RSTREAM,
)

MODULES_097 = (
    "csparql-core",
    "csparql-common",
    "csparql-cep-api",
    "csparql-cep-esper",
    "csparql-sparql-api",
    "csparql-sparql-jena",
    "csparql-sparql-sesame",
)


class CsparqlAdapter(BaseAdapter):
    """C-SPARQL 0.9.7 (streamreasoning/CSPARQL-engine), application time.

    Engine config (``open``): ``tick_ms`` (1000), ``t0_ms`` (0: windows close at multiples of
    their STEP), ``window_bounds`` (``"left-closed"`` = SECRET's ``[o, c)``, the default, done by
    pushing each timestamp 1 ms late; ``"right-closed"`` = C-SPARQL's own ``(o, c]``),
    ``fail_on_engine_error`` (true).
    """

    name = "csparql"
    version = "0.9.7"
    profile = CSPARQL_PROFILE
    capabilities = CSPARQL_CAPABILITIES
    driver_kind = "jvm"
    manifest_path = HERE / "csparql.toml"

    def render(self, query: QuerySpec) -> str:
        return render_csparql(query, units=UNITS_097)

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        spec = self.jvm_driver(cache)
        if isinstance(spec, JvmDriver):
            check_module_versions(spec.classpath, "0.9.7")
        return spec


class Csparql09Adapter(BaseAdapter):
    """C-SPARQL 0.9 (csparqlengine-0.9.jar of CityBench): wall-clock windows, paced feeding."""

    name = "csparql09"
    version = "0.9"
    profile = CSPARQL09_PROFILE
    capabilities = CSPARQL09_CAPABILITIES
    driver_kind = "jvm"
    manifest_path = HERE / "csparql09.toml"

    def render(self, query: QuerySpec) -> str:
        return render_csparql(query, units=UNITS_09)


def check_module_versions(classpath: list[Path], version: str) -> None:
    """Every user-supplied C-SPARQL module jar must say it is ``version`` in its Maven metadata.

    Maven builds are not byte-reproducible (the jars carry build times), so their sha256 cannot
    identify them; the ``pom.properties`` Maven writes into each jar can.
    """
    for jar in classpath:
        module = next((m for m in MODULES_097 if jar.name.startswith(m + "-")), None)
        if module is None or jar.suffix != ".jar":
            continue
        try:
            with zipfile.ZipFile(jar) as z:
                props = z.read(f"META-INF/maven/eu.larkc.csparql/{module}/pom.properties")
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise RspError(
                f"{jar} is not a Maven build of the C-SPARQL module {module} ({exc}); add the jar "
                f"built from streamreasoning/CSPARQL-engine with: rsp engines add csparql PATH"
            ) from exc
        found = dict(line.split("=", 1) for line in props.decode().splitlines() if "=" in line).get(
            "version"
        )
        if found != version:
            raise RspError(
                f"{jar} is C-SPARQL {module} version {found}, this adapter drives {version}; "
                f"add the {version} build with: rsp engines add csparql PATH"
            )
