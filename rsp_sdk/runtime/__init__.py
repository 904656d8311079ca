"""Runtimes carry an engine driver: JVM in a JPype worker (jpype), JVM subprocess with our bridge
server (py4j), the same bridge in the engine's pinned container image (docker) or any program
speaking JSON lines (subprocess). One interface (``rsp_sdk.runtime.base.Runtime``),
interchangeable per run; look them up by name here.

Adapters describe their driver with ``JvmDriver`` (a Java class and its classpath) or
``ProcessDriver`` (a JSON-lines program), both exported here, and never pick a runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rsp_sdk.errors import RspError
from rsp_sdk.runtime.base import (
    DriverSpec,
    EngineCrashed,
    EngineError,
    EngineTimeout,
    JvmDriver,
    ProcessDriver,
    Runtime,
)

__all__ = [
    "DriverSpec",
    "EngineCrashed",
    "EngineError",
    "EngineTimeout",
    "JvmDriver",
    "ProcessDriver",
    "Runtime",
    "get_runtime",
    "register_runtime",
    "runtime_names",
    "runtimes_for",
]

_FACTORIES: dict[str, Callable[..., Runtime]] = {}


def register_runtime(name: str, factory: Callable[..., Runtime]) -> None:
    """Make a runtime available by name (the Docker runtime and third parties use this)."""
    _FACTORIES[name] = factory


def _builtin() -> None:
    from rsp_sdk.runtime.docker import DockerRuntime
    from rsp_sdk.runtime.jpype import JPypeRuntime
    from rsp_sdk.runtime.py4j import Py4JRuntime
    from rsp_sdk.runtime.subprocess import SubprocessRuntime

    _FACTORIES.setdefault("jpype", JPypeRuntime)
    _FACTORIES.setdefault("py4j", Py4JRuntime)
    _FACTORIES.setdefault("docker", DockerRuntime)
    _FACTORIES.setdefault("subprocess", SubprocessRuntime)


def runtime_names() -> list[str]:
    _builtin()
    return sorted(_FACTORIES)


def get_runtime(name: str, **options: Any) -> Runtime:
    """A fresh runtime object by name (``jpype``, ``py4j``, ``docker``, ``subprocess`` …).

    ``options`` go to the runtime's constructor (e.g. ``limits=ResourceLimits(...)`` for
    ``docker``); a runtime that does not take one says so."""
    _builtin()
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ValueError(
            f"unknown runtime {name!r}; known runtimes: {', '.join(sorted(_FACTORIES))}"
        ) from None
    try:
        return factory(**options)
    except TypeError as exc:
        if not options:
            raise
        raise RspError(
            f"runtime {name} does not take {', '.join(sorted(options))} ({exc}); memory and CPU "
            "limits are enforced by the docker runtime"
        ) from None


def runtimes_for(kind: str, *, image: bool = True) -> list[str]:
    """Names of the runtimes that can carry a driver of ``kind`` ("jvm" or "process").

    ``image=False``: the driver declares no container image (a program that runs on the host
    only), so runtimes that carry that kind only in an image (``image_kinds``: docker for
    programs) are left out."""
    _builtin()
    out = []
    for name, factory in _FACTORIES.items():
        runtime = factory()
        if kind not in runtime.supports:
            continue
        if not image and kind in getattr(runtime, "image_kinds", frozenset()):
            continue
        out.append(name)
    return sorted(out)


def adapter_runtimes(adapter: Any) -> list[str]:
    """The runtimes that can carry ``adapter``'s driver: a ``process`` adapter runs in docker
    only when it declares ``process_image = True`` (its ``ProcessDriver`` has an ``image``)."""
    kind = adapter.driver_kind
    return runtimes_for(
        kind, image=kind != "process" or bool(getattr(adapter, "process_image", False))
    )
