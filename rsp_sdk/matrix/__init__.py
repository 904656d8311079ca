"""The matrix: every engine × runtime × query × feeding of a spec, run, judged and tabulated.

``load_spec`` (spec.py) → ``plan`` (plan.py, pure) → ``run_cell`` (execute.py) →
``aggregate`` (aggregate.py), with ``run_matrix`` (run.py) tying them together over a results
directory (store.py; the layout is docs/matrix-results.md).
"""

from rsp_sdk.matrix.plan import Cell, CellState, plan
from rsp_sdk.matrix.run import MatrixResult, run_matrix
from rsp_sdk.matrix.spec import MATRIX_FORMAT, MatrixSpec, load_spec

__all__ = [
    "MATRIX_FORMAT",
    "Cell",
    "CellState",
    "MatrixResult",
    "MatrixSpec",
    "load_spec",
    "plan",
    "run_matrix",
]
