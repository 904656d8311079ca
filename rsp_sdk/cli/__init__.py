"""The ``rsp`` command line: one typer app, one module per command group.

Exit codes: 0 success (and "correct"), 1 a verdict other than correct or a failed run, 2 an
error the user can fix (bad input files, bad parameters: ``RspError`` and pydantic validation
of what the user gave), 3 an internal error — any other exception is a bug in rsp-sdk, never the
user's fault, so it is not dressed up as bad input; an ``OSError`` (a path the system refused)
is exit 2 naming the path. All are printed as one message, never as a
traceback; ``RSP_DEBUG=1`` shows the traceback too.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated, Any

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
    matrix,
    oracle,
    profiles,
    stream,
)
from rsp_sdk.cli.common import RspTyper
from rsp_sdk.cli.report import report_command
from rsp_sdk.cli.run import run_command
from rsp_sdk.errors import RspError
from rsp_sdk.run.deadline import request_stop

app = RspTyper(
    name="rsp",
    help="Benchmark RDF Stream Processing engines: streams, oracle, engines, matrix.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _global_options(
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="show Spark's own log lines (hidden otherwise) on every command that starts it",
        ),
    ] = False,
) -> None:
    """Options before the command name apply to every command (``rsp -v oracle expected …``)."""
    if verbose:  # an environment variable, so processes the command starts inherit it
        os.environ["RSP_VERBOSE"] = "1"


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
app.add_typer(matrix.app, name="matrix")
app.command("report")(report_command)

err = Console(stderr=True)


EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def main() -> None:
    """Console-script entry point."""
    install_signal_handlers()
    try:
        app()
    except (RspError, ValidationError) as exc:
        _fail(str(exc))
    except OSError as exc:  # a file or folder the OS refused: an input/output error
        _fail(_os_message(exc))
    except Exception as exc:
        if os.environ.get("RSP_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {escape(f'{type(exc).__name__}: {exc}')}\n"
            "This is a bug in rsp-sdk, not a problem with your input; rerun with RSP_DEBUG=1 "
            "for the traceback and report it.",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_INTERNAL)


def install_signal_handlers() -> None:
    """SIGTERM, and Ctrl-C unless the process ignores it (started in the background by a
    shell), end a command through ``_stop``."""
    signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop)


def _stop(signum: int, frame: Any) -> None:
    """SIGTERM (``kill``, ``pkill``, a scheduler's stop) ends a command as Ctrl-C does.

    Python's default action for SIGTERM is to die at once, skipping every ``finally``: a
    matrix stopped with ``kill`` left its engine running (rsp-js's driver on YABench, a
    process of its own session, still at 110 % CPU). Handled, the engine sessions close,
    the cell is recorded as interrupted and the command exits 130 — also for a run started
    in the background, where the shell makes it ignore SIGINT. The oracle's SIGINT handler,
    when installed, runs first so a Spark job in progress is cancelled. Both signals also
    request the stop process-wide (``request_stop``): the KeyboardInterrupt raised here is
    lost when it lands in a finalizer or a weakref callback, the request is not."""
    request_stop()
    handler = signal.getsignal(signal.SIGINT)
    if signum == signal.SIGTERM and callable(handler) and handler not in _PLAIN_SIGINT:
        handler(signal.SIGINT, frame)  # the oracle's: cancels the Spark job, flags the stop
    raise KeyboardInterrupt


_PLAIN_SIGINT = (signal.default_int_handler, _stop)


def _fail(message: str) -> None:
    """One clean message and exit 2 (``RSP_DEBUG=1``: the traceback instead)."""
    if os.environ.get("RSP_DEBUG"):
        raise  # the exception main() is handling
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(EXIT_BAD_INPUT)


def _os_message(exc: OSError) -> str:
    """``input/output error: PATH: reason`` — the path the OS refused, not a traceback."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return f"input/output error: {reason}"
    return f"input/output error: {exc.filename}: {reason}"
