"""rsp-sdk adapter for rsp-rs (crates.io ``rsp-rs`` 0.3.5); see docs/engines/rsprs.md."""

from rsp_adapter_rsprs.adapter import CAPABILITIES, PROFILE, RspRsAdapter
from rsp_adapter_rsprs.render import RenderError, render_rsprs

__all__ = ["CAPABILITIES", "PROFILE", "RenderError", "RspRsAdapter", "render_rsprs"]
