"""rsp-sdk adapter for CQELS 1.x (``cqels``). Provision with ``rsp engines fetch cqels`` and
``rsp engines add cqels cqels.jar``."""

from rsp_adapter_cqels.adapter import CQELS_CAPABILITIES, CQELS_PROFILE, CqelsAdapter
from rsp_adapter_cqels.render import RenderError, render_cqels

__all__ = ["CQELS_CAPABILITIES", "CQELS_PROFILE", "CqelsAdapter", "RenderError", "render_cqels"]
