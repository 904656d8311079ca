"""pytest plugin of the conformance kit: loaded automatically through the ``pytest11`` entry
point (named after the module, so ``pytest -p rsp_sdk.testing.plugin`` works too).

It parametrises every ``AdapterConformance`` subclass over the runtimes that can carry its
adapter's driver, and provides the ``rsp_runtime_name`` fixture.
"""

from __future__ import annotations

import pytest

from rsp_sdk.runtime import adapter_runtimes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rsp_conformance: adapter conformance tests from rsp_sdk.testing"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rsp_runtime_name" not in metafunc.fixturenames:
        return
    cls = metafunc.cls
    adapter = getattr(cls, "adapter", None)
    if adapter is None:
        raise pytest.UsageError(
            f"{metafunc.function.__qualname__}: set `adapter = YourAdapter()` on the class"
        )
    names = list(getattr(cls, "runtimes", None) or adapter_runtimes(adapter))
    metafunc.parametrize("rsp_runtime_name", names, ids=[f"{adapter.name}@{n}" for n in names])
