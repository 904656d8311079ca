"""Shared helpers for the runtime tests: open a fixture engine on a runtime, with leak checks."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from rsp_sdk.engine import EngineSession, Timeouts
from rsp_sdk.runtime import get_runtime
from rsp_sdk.testing import Scenario, TreeWatch
from tests.fixtures.adapters import ToyJavaAdapter, ToyPyAdapter

# (adapter, runtime) pairs: Java fixture × {jpype, py4j, docker}, Python fixture × {subprocess}
COMBOS = [
    ("toy-java", "jpype"),
    ("toy-java", "py4j"),
    ("toy-java", "docker"),
    ("toy-py", "subprocess"),
]


def skip_if_unavailable(runtime: str) -> None:
    """Skip when the runtime cannot work here, with its own reason (no Docker daemon); for
    docker, make sure the base image of the lock exists (built once, as `rsp images build`
    would: a no-op when CI or the user built it already)."""
    import pytest

    unavailable = getattr(get_runtime(runtime), "unavailable", None)
    reason = unavailable() if callable(unavailable) else None
    if reason:
        pytest.skip(str(reason))
    if runtime == "docker":
        _docker_base()


@functools.cache
def _docker_base() -> str:
    from rsp_sdk.images import build_base

    return build_base().tag


ADAPTERS = {"toy-java": ToyJavaAdapter(), "toy-py": ToyPyAdapter()}
SCENARIO = Scenario(triples=20_000, span_ms=4_000)


def open_toy(
    adapter: str,
    runtime: str,
    workdir: Path,
    cache: Any,
    *,
    config: dict[str, Any] | None = None,
    timeouts: Timeouts | None = None,
) -> tuple[EngineSession, TreeWatch]:
    session = ADAPTERS[adapter].open(
        get_runtime(runtime),
        workdir,
        config=config or {},
        timeouts=timeouts,
        cache=cache if adapter == "toy-java" else None,
    )
    watch = TreeWatch(session.pid)
    watch.observe()
    session.register_stream(SCENARIO.stream)
    session.register_query(SCENARIO.spec())
    return session, watch
