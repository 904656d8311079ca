"""The ETALIS-direct adapter (``etalis``): EP-SPARQL on SWI-Prolog, driven through ``shim.py``.

It runs ETALIS' ``src/ep_sparql/ep_sparql.P`` in ``swipl --traditional`` behind a small Python
program speaking the JSON-lines protocol (``subprocess`` runtime), with no Java in between. The
``jtalis`` adapter runs the same ETALIS sources and the same rules through JTALIS' Java API on
the JVM runtimes; comparing the two is the point of keeping both. The ETALIS sources are
user-supplied (``rsp engines add etalis DIR``); see docs/engines/etalis.md for what was
established by running it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from rsp_adapter_etalis.common import CAPABILITIES, EP_SPARQL, PROFILE
from rsp_adapter_etalis.render import render_ep_sparql
from rsp_sdk.engine import BaseAdapter, MissingArtifact, ProvisionCache
from rsp_sdk.errors import RspError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import IMAGE_FILES, DriverSpec, ImageFile, ProcessDriver, ProcessImage

HERE = Path(__file__).resolve().parent


NO_SWIPL = (
    "ETALIS runs on SWI-Prolog: `swipl` is not on PATH (Debian: apt-get install "
    "swi-prolog-nox; or set RSP_SWIPL to the swipl executable; or run it with -r docker, whose "
    "image has its own SWI-Prolog)"
)


def find_swipl() -> str | None:
    """``$RSP_SWIPL`` or ``swipl`` on PATH, if any."""
    return os.environ.get("RSP_SWIPL") or shutil.which("swipl")


def swipl_executable() -> str:
    """``$RSP_SWIPL`` or ``swipl`` on PATH."""
    swipl = find_swipl()
    if not swipl:
        raise MissingArtifact(NO_SWIPL)
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
        "https://github.com/sspider/etalis (rsp engines add etalis /path/to/etalis)"
    )


class EtalisAdapter(BaseAdapter):
    name = "etalis"
    version = "84d5dc13"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "process"
    process_image = True
    manifest_path = HERE / "etalis.toml"

    def render(self, query: QuerySpec) -> str:
        return render_ep_sparql(query, self.name)

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        manifest = self.manifest()
        assert manifest is not None
        cache = cache or ProvisionCache()
        cache.require(manifest)
        root = cache.engine_dir(manifest.name) / "artifacts" / manifest.artifacts[0].file
        ep_sparql = ep_sparql_file(root)
        swipl = find_swipl()  # only the subprocess runtime needs it: the image has its own
        return ProcessDriver(
            argv=[sys.executable, "-u", "-m", "rsp_adapter_etalis.shim"],
            env={"RSP_SWIPL": swipl or "swipl", "RSP_ETALIS_EP_SPARQL": str(ep_sparql)},
            image=self._image(ep_sparql, cache),
            host_missing=None if swipl else NO_SWIPL,
        )

    def _image(self, ep_sparql: Path, cache: ProvisionCache) -> ProcessImage:
        """Debian's pinned ``swi-prolog-nox`` and ``python3`` (base lock), the shim with its
        Prolog files, and the provisioned ETALIS folder (keyed by the sha256 ``rsp engines
        add`` verified, so its 500 files are not re-hashed at every launch)."""
        etalis = ep_sparql.parents[len(EP_SPARQL.parts) - 1]  # the folder holding src/
        artifact = cache.lock(self.name).get("artifacts", {}).get("etalis", {})
        verified = artifact.get("sha256") if artifact.get("verified") else None
        same = etalis == cache.engine_dir(self.name) / "artifacts" / "etalis"
        key = f"verified:{verified}" if isinstance(verified, str) and same else None
        inside = f"{IMAGE_FILES}/etalis/{EP_SPARQL.as_posix()}"
        return ProcessImage(
            engine=self.name,
            engine_version=self.version,
            packages=["swi-prolog-nox", "python3"],
            files=[
                ImageFile(name="shim.py", host=HERE / "shim.py"),
                ImageFile(name="driver.pl", host=HERE / "driver.pl"),
                ImageFile(name="prolog", host=HERE / "prolog"),
                ImageFile(name="etalis", host=etalis, sha256=key),
            ],
            argv=["python3", "-u", f"{IMAGE_FILES}/shim.py"],
            env={"RSP_SWIPL": "swipl", "RSP_ETALIS_EP_SPARQL": inside},
        )
