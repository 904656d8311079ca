"""The matrix: every engine × runtime × query × feeding of a spec, run, judged and tabulated.

``load_spec`` (spec.py) → ``plan`` (plan.py, pure) → ``run_cell`` (execute.py) →
``aggregate`` (aggregate.py), with ``run_matrix`` (run.py) tying them together over a results
directory (store.py; the layout is docs/matrix-results.md).

The names below are imported on first use (PEP 562): run.py pulls in pandas and pyarrow's
dataset layer (seconds on 2 cores), and every `rsp` command imports the light submodules
(axes.py for the CLI's tables) whether or not it runs a matrix. ``rsp_sdk.matrix.plan`` is the
planning module (its function: ``rsp_sdk.matrix.plan.plan``): a lazily bound function of the
same name would be replaced by the submodule as soon as anything imported it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rsp_sdk.matrix.plan import Cell, CellState
    from rsp_sdk.matrix.run import MatrixResult, run_matrix
    from rsp_sdk.matrix.spec import MATRIX_FORMAT, MatrixSpec, load_spec

_HOME = {
    "Cell": "plan",
    "CellState": "plan",
    "MatrixResult": "run",
    "run_matrix": "run",
    "MATRIX_FORMAT": "spec",
    "MatrixSpec": "spec",
    "load_spec": "spec",
}

__all__ = [
    "MATRIX_FORMAT",
    "Cell",
    "CellState",
    "MatrixResult",
    "MatrixSpec",
    "load_spec",
    "run_matrix",
]


def __getattr__(name: str) -> Any:
    """``from rsp_sdk.matrix import run_matrix``: the submodule is imported here, once."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"rsp_sdk.matrix.{module}"), name)
    globals()[name] = value
    return value
