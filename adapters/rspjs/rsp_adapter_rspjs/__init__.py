"""rsp-sdk adapter for rsp-js (npm ``rsp-js`` 1.3.5): see ``adapter`` and docs/engines/rspjs.md."""

from rsp_adapter_rspjs.adapter import CAPABILITIES, PROFILE, RspJsAdapter
from rsp_adapter_rspjs.render import RenderError, render_rspjs

__all__ = ["CAPABILITIES", "PROFILE", "RenderError", "RspJsAdapter", "render_rspjs"]
