"""rsp-sdk adapters for C-SPARQL: ``csparql`` (0.9.7, application time) and ``csparql09`` (0.9,
wall clock). Provision with ``rsp engines fetch csparql`` and ``rsp engines add csparql
csparql-*-0.9.7.jar`` (or ``csparql09`` and csparqlengine-0.9.jar)."""

from rsp_adapter_csparql.adapter import (
    CSPARQL09_CAPABILITIES,
    CSPARQL09_PROFILE,
    CSPARQL_CAPABILITIES,
    CSPARQL_PROFILE,
    Csparql09Adapter,
    CsparqlAdapter,
)
from rsp_adapter_csparql.render import RenderError, render_csparql

__all__ = [
    "CSPARQL09_CAPABILITIES",
    "CSPARQL09_PROFILE",
    "CSPARQL_CAPABILITIES",
    "CSPARQL_PROFILE",
    "Csparql09Adapter",
    "CsparqlAdapter",
    "RenderError",
    "render_csparql",
]
