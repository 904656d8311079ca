"""Options of every command that runs the oracle, defined once so they mean the same everywhere.

``--evaluator`` and ``--spark-master`` appear on ``rsp oracle expected|check``, ``rsp csrbench``
and ``rsp matrix run``; the master URL is checked here, before any input is read or Spark
starts, so a typo costs no Spark start-up (Spark itself would say so only after its JVM is up).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

import typer

from rsp_sdk.errors import InputError


class Evaluator(StrEnum):
    """How the oracle evaluates each window content (``rsp_sdk.oracle.job.choose_evaluator``)."""

    AUTO = "auto"
    OXIGRAPH = "oxigraph"
    SQL = "sql"


EvaluatorOpt = Annotated[
    Evaluator, typer.Option("--evaluator", help="auto (SQL when possible), oxigraph, sql")
]

# the master URL forms Spark's documentation lists ("Master URLs")
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\d+)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn"
    r"|(spark|mesos)://\S+(:\d+)?(,\S+)*|k8s://\S+"
)
MASTER_FORMS = "local, local[N], local[*], spark://HOST:PORT, yarn, k8s://URL"


def check_spark_master(master: str | None) -> str | None:
    """``master`` if it is a Spark master URL, else an InputError naming the forms."""
    if master is not None and not _MASTER.fullmatch(master):
        raise InputError(
            f"--spark-master {master!r} is not a Spark master URL", expected=MASTER_FORMS
        )
    return master


SparkMasterOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="Spark master URL for the oracle (default local[*])",
        callback=check_spark_master,
    ),
]
