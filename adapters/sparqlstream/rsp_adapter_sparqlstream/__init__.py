"""rsp-sdk adapter for SPARQLstream (morph-streams on Esper): see ``adapter`` and
docs/engines/sparqlstream.md."""

from rsp_adapter_sparqlstream.adapter import CAPABILITIES, PROFILE, SparqlStreamAdapter
from rsp_adapter_sparqlstream.render import RenderError, render_sparqlstream

__all__ = ["CAPABILITIES", "PROFILE", "RenderError", "SparqlStreamAdapter", "render_sparqlstream"]
