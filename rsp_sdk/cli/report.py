"""``rsp report RESULTS -o REPORT``: the page, figures and tables of a matrix's results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from rsp_sdk.cli.common import console


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
        table = Table(title=ref.caption, title_justify="left")
        for col in ref.frame.columns:
            table.add_column(str(col))
        for row in ref.frame.itertuples(index=False):
            table.add_row(*map(str, row))
        console.print(table)
    if summary.missing:
        console.print(
            f"[yellow]{summary.missing} planned cell(s) missing: the matrix is partial[/]"
        )
    console.print(
        f"{summary.cells} cells, {summary.figures} figures, {summary.tables} tables "
        f"in {summary.seconds:.1f} s"
    )
    console.print(f"report: {summary.index}", highlight=False, soft_wrap=True)
