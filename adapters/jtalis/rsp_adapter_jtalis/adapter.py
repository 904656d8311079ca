"""The JTALIS adapter (``jtalis``): ETALIS' own Java API on the JVM runtimes (jpype, py4j, docker).

The driver (``java/jtalis``, ``JtalisDriver``) builds a ``JtalisContextImpl`` over InterProlog,
which runs ``swipl --traditional`` as a subprocess of the JVM, and uses JTALIS' API for
everything: consulting ETALIS and the rules' Prolog, ETALIS flags, event triggers, an output
provider and ``pushEvent``. ETALIS itself, the EP-SPARQL rendering, the profile, the
capabilities and the Prolog that compiles queries are the ``etalis`` adapter's
(``rsp_adapter_etalis.common``): the two adapters run the same rules, one through Java, one
directly, so their verdicts can be compared (docs/engines/jtalis.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from rsp_adapter_etalis.adapter import find_swipl
from rsp_adapter_etalis.common import CAPABILITIES, PROFILE, PROLOG_DIR
from rsp_adapter_etalis.render import render_ep_sparql

from rsp_sdk.engine import BaseAdapter, ProvisionCache
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import DriverSpec, JvmDriver

HERE = Path(__file__).resolve().parent
JTALIS_PROLOG = HERE / "prolog"


def swipl_command() -> str:
    """The swipl the JVM starts: ``$RSP_SWIPL``, else ``swipl`` (PATH of the JVM's host; the
    engine image has Debian's at /usr/bin/swipl)."""
    return os.environ.get("RSP_SWIPL") or "swipl"


class JtalisAdapter(BaseAdapter):
    """JTALIS 84d5dc13 (dEtalis/jtalis-distribute) + InterProlog + ETALIS on SWI-Prolog 9."""

    name = "jtalis"
    version = "84d5dc13"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "jvm"
    manifest_path = HERE / "jtalis.toml"

    def render(self, query: QuerySpec) -> str:
        return render_ep_sparql(query, self.name)

    def missing_artifacts(self, cache: ProvisionCache | None = None) -> list[str]:
        missing = super().missing_artifacts(cache)
        if not find_swipl():
            missing.append("swipl for the jpype and py4j runtimes (apt-get install swi-prolog-nox)")
        return missing

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        """The manifest's JVM driver, with the two Prolog folders on the classpath (the driver
        reads its Prolog as resources, so it reaches the engine image like any classpath entry)
        and without the jars of the ETALIS folder (its www/ demo ships an old InterProlog and
        JPL, which must not shadow the patched InterProlog)."""
        base = self.jvm_driver(cache)
        assert isinstance(base, JvmDriver)
        manifest = self.manifest()
        assert manifest is not None
        etalis = (cache or ProvisionCache()).engine_dir(manifest.name) / "artifacts" / "etalis"
        classpath = [p for p in base.classpath if not p.is_relative_to(etalis) or p == etalis]
        return base.model_copy(
            update={
                "classpath": [*classpath, PROLOG_DIR, JTALIS_PROLOG],
                "system_properties": {
                    **base.system_properties,
                    "rsp.jtalis.swipl": swipl_command(),
                },
            }
        )
