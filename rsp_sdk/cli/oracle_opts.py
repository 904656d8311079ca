"""Options of every command that runs the oracle, defined once so they mean the same everywhere."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class Evaluator(StrEnum):
    """How the oracle evaluates each window content (``rsp_sdk.oracle.job.choose_evaluator``)."""

    AUTO = "auto"
    OXIGRAPH = "oxigraph"
    SQL = "sql"


EvaluatorOpt = Annotated[
    Evaluator, typer.Option("--evaluator", help="auto (SQL when possible), oxigraph, sql")
]
