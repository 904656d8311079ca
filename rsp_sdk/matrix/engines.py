"""What a matrix needs to know of each engine, resolved once per matrix: its adapter, the
runtimes that can carry it and those that cannot work here now, what is not provisioned, and the
hashes of what is (the part of a cell's key that says *which* engine ran).

Kept apart from planning so that a tool reading results (the report's provenance, a rerun's
check) can ask the same questions without building a plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from rsp_sdk.errors import RspError
from rsp_sdk.matrix.adapter_code import adapter_code

if TYPE_CHECKING:
    from rsp_sdk.matrix.spec import MatrixSpec


class EngineInfo(BaseModel):
    """What the plan needs to know of an engine (resolved once per matrix)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    adapter: Any = None  # Adapter, or None when the adapter cannot be loaded
    version: str = ""
    runtimes: list[str] = []
    missing: list[str] = []
    artifacts: dict[str, str] = {}
    code: str = ""  # the adapter's own code (``adapter_code``): a driver fix re-keys its cells
    error: str | None = None
    # runtime → why it cannot work on this machine now (docker: no daemon reachable)
    unavailable: dict[str, str] = {}


def spec_engines(spec: MatrixSpec) -> dict[str, EngineInfo]:
    """Each engine of ``spec`` resolved once: a resolution checks provisioning (lock files,
    artifacts), so a command resolves its engines here and hands them to every plan it makes."""
    return {e.name: engine_info(e.name) for e in spec.engines}


def engine_info(name: str) -> EngineInfo:
    """The adapter, its runtimes, what is not provisioned, its artifact hashes (lock.json)."""
    from rsp_sdk.engine.registry import get_adapter
    from rsp_sdk.runtime import adapter_runtimes

    try:
        adapter = get_adapter(name)
    except RspError as exc:
        return EngineInfo(name=name, error=str(exc))
    try:
        missing = adapter.missing_artifacts(None)
    except Exception as exc:  # an adapter that cannot even check is not ready
        missing = [f"cannot check provisioning: {exc}"]
    artifacts: dict[str, str] = {}
    manifest_of = getattr(adapter, "manifest", None)
    if callable(manifest_of):
        from rsp_sdk.engine.provision import ProvisionCache

        manifest = manifest_of()
        if manifest is not None:
            artifacts = artifact_hashes(ProvisionCache().lock(manifest.name))
    runtimes = adapter_runtimes(adapter)
    return EngineInfo(
        name=name,
        adapter=adapter,
        version=adapter.version,
        runtimes=runtimes,
        missing=missing,
        artifacts=artifacts,
        code=adapter_code(adapter),
        unavailable=runtimes_unavailable(runtimes),
    )


def runtimes_unavailable(names: list[str]) -> dict[str, str]:
    """Runtime → why it cannot work here (a runtime's ``unavailable()``: docker without a
    daemon). Its cells are then planned unavailable with that reason, not run to fail one
    by one; a later matrix with the runtime back runs them (``run._todo``)."""
    from rsp_sdk.runtime import get_runtime

    out: dict[str, str] = {}
    for name in names:
        check = getattr(get_runtime(name), "unavailable", None)
        why = check() if callable(check) else None
        if why:
            out[name] = str(why)
    return out


def artifact_hashes(lock: dict[str, Any]) -> dict[str, str]:
    """``{name: sha256}`` of every provisioned file of an engine (jars, their dependencies,
    npm and cargo lock files), from its lock.json: what a reader needs to rerun the very same
    engine, and all a cell's key holds of it. Times and paths (when a file was added or built,
    where it came from) stay out: provisioning the same files again must not change a key, or no
    finished cell would resume."""
    out: dict[str, str] = {}
    for section in lock.values():
        if not isinstance(section, dict):
            continue
        for name, entry in section.items():
            if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
                out[name] = entry["sha256"]
    return dict(sorted(out.items()))
