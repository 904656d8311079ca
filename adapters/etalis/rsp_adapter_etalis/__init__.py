"""rsp-sdk adapter for ETALIS (EP-SPARQL on SWI-Prolog, driven directly): see ``adapter`` and
docs/engines/etalis.md. ``common`` and ``render`` are shared with the ``jtalis`` adapter."""

from rsp_adapter_etalis.adapter import EtalisAdapter
from rsp_adapter_etalis.common import CAPABILITIES, PROFILE
from rsp_adapter_etalis.render import RenderError, render_ep_sparql

__all__ = ["CAPABILITIES", "PROFILE", "EtalisAdapter", "RenderError", "render_ep_sparql"]
