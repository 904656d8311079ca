"""minirsp against rsp-sdk's adapter conformance kit (`pytest tests/` in this folder)."""

from rsp_sdk.engine import get_adapter
from rsp_sdk.testing import AdapterConformance


class TestMiniRsp(AdapterConformance):
    # found through the entry point, as `rsp run -e minirsp` finds it
    adapter = get_adapter("minirsp")
