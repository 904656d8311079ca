"""The JTALIS/ETALIS adapter: ETALIS' EP-SPARQL on SWI-Prolog, driven through ``shim.py``.

JTALIS is ETALIS' Java wrapper; it targets JPL3, which no current SWI-Prolog ships, and JPL7
breaks under ``--traditional`` (the only mode ETALIS loads in). So the adapter runs the engine
JTALIS wraps — ETALIS' ``src/ep_sparql/ep_sparql.P`` — in ``swipl --traditional`` behind a small
Python program speaking the JSON-lines protocol (``subprocess`` runtime). The ETALIS sources are
user-supplied (``rsp engines add jtalis DIR``); see docs/engines/jtalis.md for what was
established by running it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from rsp_adapter_jtalis.render import render_ep_sparql
from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, MissingArtifact, ProvisionCache
from rsp_sdk.errors import RspError
from rsp_sdk.model.profile import load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import DriverSpec, ProcessDriver

HERE = Path(__file__).resolve().parent

# ETALIS derives a complex event the moment its last input event arrives (eager, tuple-driven)
# and reports each derivation once: a report holds the solutions completed by one input event.
# Nothing is reported when nothing completes, and time alone never triggers anything.
# That is the built-in ``jtalis`` profile (rsp profiles show jtalis), the one the oracle knows.
PROFILE = load_profile("jtalis")

# What the EP-SPARQL rendering of RSP-QL can carry, established by running ETALIS (see
# docs/engines/jtalis.md): joins (AND), numeric FILTERs with &&, UNION of single patterns (OR),
# static data (as Prolog facts in the FILTER), one window (WITHIN).
CAPABILITIES = Capabilities.of(
    Feature.JOIN,
    Feature.FILTER,
    Feature.UNION,
    Feature.STATIC_DATA,
    Feature.RSTREAM,
    Feature.APP_TIME_INPUT,
)

EP_SPARQL = Path("src") / "ep_sparql" / "ep_sparql.P"


def swipl_executable() -> str:
    """``$RSP_SWIPL`` or ``swipl`` on PATH."""
    swipl = os.environ.get("RSP_SWIPL") or shutil.which("swipl")
    if not swipl:
        raise MissingArtifact(
            "ETALIS runs on SWI-Prolog: `swipl` is not on PATH (Debian: apt-get install "
            "swi-prolog-nox; or set RSP_SWIPL to the swipl executable)"
        )
    return swipl


def ep_sparql_file(root: Path) -> Path:
    """``src/ep_sparql/ep_sparql.P`` under the supplied folder (etalis/, its parent, or src/)."""
    for base in (root, root / "etalis", root.parent):
        candidate = base / EP_SPARQL
        if candidate.is_file():
            return candidate
    if (root / "ep_sparql" / "ep_sparql.P").is_file():
        return root / "ep_sparql" / "ep_sparql.P"
    raise RspError(
        f"the ETALIS folder {root} has no {EP_SPARQL}: add the etalis/ folder of "
        "https://github.com/sspider/etalis (rsp engines add jtalis /path/to/etalis)"
    )


class JtalisAdapter(BaseAdapter):
    name = "jtalis"
    version = "84d5dc13"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "process"
    manifest_path = HERE / "jtalis.toml"

    def render(self, query: QuerySpec) -> str:
        return render_ep_sparql(query)

    def missing_artifacts(self, cache: ProvisionCache | None = None) -> list[str]:
        missing = super().missing_artifacts(cache)
        if not (os.environ.get("RSP_SWIPL") or shutil.which("swipl")):
            missing.append("swipl (Debian: apt-get install swi-prolog-nox)")
        return missing

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        manifest = self.manifest()
        assert manifest is not None
        cache = cache or ProvisionCache()
        cache.require(manifest)
        root = cache.engine_dir(manifest.name) / "artifacts" / manifest.artifacts[0].file
        return ProcessDriver(
            argv=[sys.executable, "-u", "-m", "rsp_adapter_jtalis.shim"],
            env={
                "RSP_SWIPL": swipl_executable(),
                "RSP_ETALIS_EP_SPARQL": str(ep_sparql_file(root)),
            },
        )
