"""minijvm against rsp-sdk's adapter conformance kit (`pytest tests/` in this folder), on both
in-process and out-of-process JVM runtimes; provision the engine first (see the tutorial)."""

from rsp_sdk.engine import get_adapter
from rsp_sdk.testing import AdapterConformance


class TestMiniJvm(AdapterConformance):
    adapter = get_adapter("minijvm")  # found through the entry point
    runtimes = ("jpype", "py4j")
