"""``rsp report RESULTS -o REPORT``: the page, figures and tables of a matrix's results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsp_sdk.cli.common import console
from rsp_sdk.cli.matrix_tables import frame_table


def report_command(
    results: Annotated[Path, typer.Argument(help="results folder of `rsp matrix run`")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="report folder (new, empty, or a report)")
    ],
) -> None:
    """Figures, tables and one page from a matrix's RESULTS (runs nothing).

    Writes REPORT/index.html (self-contained: inline CSS and SVG, no network),
    figures/*.pdf|svg, tables/*.md|tex and data/*.csv. A partial matrix reports its missing
    cells; a folder that is not matrix results is an error (exit 2)."""
    from rsp_sdk.report import build_report  # matplotlib only when reporting

    summary = build_report(results, output)
    for ref in summary.headline:
        console.print(frame_table(ref.caption, ref.frame, console.width))
    if summary.missing:
        console.print(
            f"[yellow]{summary.missing} planned cell(s) missing: the matrix is partial[/]"
        )
    console.print(
        f"{summary.cells} cells, {summary.figures} figures, {summary.tables} tables "
        f"in {summary.seconds:.1f} s"
    )
    console.print(f"report: {summary.index}", highlight=False, soft_wrap=True)
