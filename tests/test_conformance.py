"""The conformance kit run on both fixture engines: the Java fixture on docker, the Python
fixture on subprocess. The kit on jpype and py4j runs on the tutorial's Java engine
(tests/test_docs_minijvm.py: the same kit, the same kind of small Java engine and glue), so the
Java fixture does not repeat that evidence there."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from rsp_sdk.testing import AdapterConformance
from tests.engines import skip_if_unavailable
from tests.fixtures.adapters import ToyJavaAdapter, ToyPyAdapter


class TestToyJava(AdapterConformance):
    adapter = ToyJavaAdapter()
    runtimes: ClassVar[list[str]] = ["docker"]  # jpype, py4j: tests/test_docs_minijvm.py

    @pytest.fixture
    def rsp_cache(self, toy_cache: Any, rsp_runtime_name: str) -> Any:
        skip_if_unavailable(rsp_runtime_name)  # docker: a daemon, and the base image built
        return toy_cache


class TestToyPy(AdapterConformance):
    adapter = ToyPyAdapter()
