"""Texts the matrix's tables share, in the terminal and in the report.

Kept apart from the modules that compute what they describe (``rsp_sdk.oracle.narrow`` needs
numpy and pyarrow): the command line's tables import this at start-up, and ``rsp --help``
must not load a heavy library.
"""

from __future__ import annotations

# what the tables' mark on a verdict judged on narrowed t0 candidates means
MARK_NOTE = (
    "* judged against the t0 candidates reporting at the engine's relation times: the oracle's "
    "t0 classes were too many to evaluate (cells.parquet's t0_narrowed says why)"
)

__all__ = ["MARK_NOTE"]
