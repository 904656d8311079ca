"""The conformance kit run on both fixture engines through every runtime that can carry them:
Java fixture × {jpype, py4j, docker}, Python fixture × {subprocess}."""

from __future__ import annotations

from typing import Any

import pytest

from rsp_sdk.testing import AdapterConformance
from tests.engines import skip_if_unavailable
from tests.fixtures.adapters import ToyJavaAdapter, ToyPyAdapter


class TestToyJava(AdapterConformance):
    adapter = ToyJavaAdapter()

    @pytest.fixture
    def rsp_cache(self, toy_cache: Any, rsp_runtime_name: str) -> Any:
        skip_if_unavailable(rsp_runtime_name)  # docker: a daemon, and the base image built
        return toy_cache


class TestToyPy(AdapterConformance):
    adapter = ToyPyAdapter()
