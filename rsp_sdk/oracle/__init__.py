"""The oracle: expected outputs of a continuous query under an engine's SECRET semantics.

Shaped like the model it implements (CQL + SECRET): ``s2r`` (windows, reports, t0 candidates),
``r2r`` (evaluators: pyoxigraph for all of SPARQL 1.1, compiled Spark SQL for the
BGP/FILTER/aggregate fragment and temporal joins), ``r2s`` (Rstream/Istream/Dstream, empty
relations), ``job`` (the one Spark job), ``api`` (``expected()``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["expected", "plan_job", "plan_jobs", "run_jobs"]


def __getattr__(name: str) -> Any:
    # pyspark is heavy to import: load the job machinery only when asked for
    if name in ("expected", "plan_job", "plan_jobs", "run_jobs"):
        from rsp_sdk.oracle import api as module

        return getattr(module, name)
    raise AttributeError(name)
