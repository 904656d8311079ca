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
from rich.markup import escape

from rsp_sdk.cli import (
    check,
    compare,
    csrbench,
    engines,
    generate,
    images,
    oracle,
    profiles,
    stream,
)
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
app.command("csrbench", short_help=csrbench.SUMMARY)(csrbench.csrbench)  # a command, no group

err = Console(stderr=True)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except (RspError, ValidationError, ValueError) as exc:
        _fail(str(exc))
    except OSError as exc:  # a file or folder the OS refused: an input/output error
        _fail(_os_message(exc))


def _fail(message: str) -> None:
    """One clean message and exit 2 (``RSP_DEBUG=1``: the traceback instead)."""
    if os.environ.get("RSP_DEBUG"):
        raise  # the exception main() is handling
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(2)


def _os_message(exc: OSError) -> str:
    """``input/output error: PATH: reason`` — the path the OS refused, not a traceback."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return f"input/output error: {reason}"
    return f"input/output error: {exc.filename}: {reason}"
