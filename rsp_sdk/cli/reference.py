"""The CLI reference page, generated from the ``rsp`` typer app itself (with typer's own
Markdown generator), so the documentation cannot drift from what the command line parses.
``nox -s docs`` puts it into docs/cli.md through the MkDocs hook in docs/hooks.py."""

from __future__ import annotations

import typer.cli
import typer.main

from rsp_sdk.cli import app

__all__ = ["markdown"]


def markdown(level: int = 2) -> str:
    """Markdown for every command and option of ``rsp``, headings from ``level`` down."""
    command = typer.main.get_command(app)
    ctx = typer.Context(command)
    return typer.cli.get_docs_for_click(obj=command, ctx=ctx, indent=level - 1, name="rsp")
