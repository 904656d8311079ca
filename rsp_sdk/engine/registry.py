"""Finding adapters: the ``rsp_sdk.adapters`` entry-point group, plus explicit registration.

Bundled and third-party adapters declare themselves in their package metadata::

    [project.entry-points."rsp_sdk.adapters"]
    csparql = "rsp_adapters.csparql:CsparqlAdapter"

Tests and scripts can ``register(adapter)`` directly; ``$RSP_ADAPTERS`` (``module:attr`` items
separated by commas) registers adapters in processes we do not control, such as a ``rsp run``
started by a test. An entry point that fails to load does not break the others: it is listed
with its error.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.errors import RspError

if TYPE_CHECKING:
    from rsp_sdk.model.profile import Profile

ENTRY_POINT_GROUP = "rsp_sdk.adapters"

_explicit: dict[str, Adapter] = {}


class AdapterInfo(BaseModel):
    """One line of ``rsp engines list``."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str = ""
    origin: str
    driver_kind: str = ""
    runtimes: list[str] = []
    provisioned: bool = False
    missing: list[str] = []
    capabilities: list[str] = []
    profile: str = ""
    error: str | None = None


def _instantiate(obj: Any, origin: str) -> Adapter:
    adapter = obj() if isinstance(obj, type) else obj
    if not isinstance(adapter, Adapter):
        raise RspError(f"{origin} does not provide an rsp_sdk Adapter (got {adapter!r})")
    return adapter


def register(adapter: Adapter | type) -> Adapter:
    """Register an adapter instance (or class) explicitly; it wins over an entry point."""
    inst = _instantiate(adapter, repr(adapter))
    _explicit[inst.name] = inst
    return inst


def unregister(name: str) -> None:
    _explicit.pop(name, None)


def load_reference(ref: str) -> Adapter:
    """An adapter from ``module:attr`` (a class or an instance)."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise RspError(f"adapter reference {ref!r} must look like 'package.module:AdapterClass'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return _instantiate(obj, ref)


def discover() -> tuple[dict[str, Adapter], dict[str, str]]:
    """All adapters by name, and the entry points that failed to load (name → error)."""
    found: dict[str, Adapter] = {}
    broken: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            adapter = _instantiate(ep.load(), ep.value)
            found[adapter.name] = adapter
        except Exception as exc:
            broken[ep.name] = f"{type(exc).__name__}: {exc}"
    for ref in filter(None, (r.strip() for r in os.environ.get("RSP_ADAPTERS", "").split(","))):
        try:
            adapter = load_reference(ref)
            found[adapter.name] = adapter
        except Exception as exc:
            broken[ref] = f"{type(exc).__name__}: {exc}"
    found.update(_explicit)
    return found, broken


def get_adapter(name: str) -> Adapter:
    adapters, broken = discover()
    if name in adapters:
        return adapters[name]
    if name in broken:
        raise RspError(f"adapter {name} failed to load: {broken[name]}")
    known = ", ".join(sorted(adapters)) or "none (install an adapter package or set RSP_ADAPTERS)"
    raise RspError(f"unknown engine {name!r}; known engines: {known}")


def adapter_profiles() -> dict[str, tuple[str, Profile]]:
    """Every installed adapter's declared profile by profile name: name → (adapter, profile).

    An adapter's profile is what the oracle must judge its runs with, so it is a profile name
    like a built-in one (``rsp oracle check --profile rspjs``)."""
    adapters, _ = discover()
    return {a.profile.name: (n, a.profile) for n, a in sorted(adapters.items())}


def describe(adapter: Adapter, cache: Any = None, origin: str = "") -> AdapterInfo:
    from rsp_sdk.runtime import adapter_runtimes

    try:
        missing = adapter.missing_artifacts(cache)
    except Exception as exc:
        missing = [f"cannot check: {exc}"]
    return AdapterInfo(
        name=adapter.name,
        version=adapter.version,
        origin=origin,
        driver_kind=adapter.driver_kind,
        runtimes=adapter_runtimes(adapter),
        provisioned=not missing,
        missing=missing,
        capabilities=adapter.capabilities.names(),
        profile=adapter.profile.name,
    )


def list_adapters(cache: Any = None) -> list[AdapterInfo]:
    adapters, broken = discover()
    eps = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    rows = [
        describe(a, cache, origin=("explicit" if n in _explicit else eps.get(n, "RSP_ADAPTERS")))
        for n, a in sorted(adapters.items())
    ]
    rows += [AdapterInfo(name=n, origin="entry point", error=e) for n, e in sorted(broken.items())]
    return rows
