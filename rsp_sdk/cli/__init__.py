"""The ``rsp`` command line: one typer app, one module per command group.

Errors the user can fix (bad input files, bad parameters) are printed as one clear message with
exit code 2, never as a traceback; ``RSP_DEBUG=1`` shows the traceback too.
"""

from __future__ import annotations

import os
import sys

import typer
from pydantic import ValidationError
from rich.console import Console

from rsp_sdk.cli import (
    check,
    compare,
    csrbench,
    engines,
    generate,
    images,
    matrix,
    oracle,
    profiles,
    stream,
)
from rsp_sdk.cli.report import report_command
from rsp_sdk.cli.run import run_command
from rsp_sdk.errors import RspError

app = typer.Typer(
    name="rsp",
    help="Benchmark RDF Stream Processing engines: streams, oracle, engines, matrix.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(stream.app, name="stream")
app.add_typer(generate.app, name="generate")
app.add_typer(engines.app, name="engines")
app.add_typer(images.app, name="images")
app.command("run")(run_command)
check.register(oracle.app)
app.add_typer(oracle.app, name="oracle")
app.add_typer(profiles.app, name="profiles")
app.add_typer(compare.app, name="compare")
app.add_typer(csrbench.app, name="csrbench")
app.add_typer(matrix.app, name="matrix")
app.command("report")(report_command)

err = Console(stderr=True)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except (RspError, ValidationError, ValueError) as exc:
        if os.environ.get("RSP_DEBUG"):
            raise
        err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
