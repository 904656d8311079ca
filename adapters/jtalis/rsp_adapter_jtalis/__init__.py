"""rsp-sdk adapter for JTALIS/ETALIS (EP-SPARQL on SWI-Prolog): see ``adapter`` and
docs/engines/jtalis.md."""

from rsp_adapter_jtalis.adapter import CAPABILITIES, PROFILE, JtalisAdapter
from rsp_adapter_jtalis.render import RenderError, render_ep_sparql

__all__ = ["CAPABILITIES", "PROFILE", "JtalisAdapter", "RenderError", "render_ep_sparql"]
