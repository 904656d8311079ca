"""``build_report``: the whole report folder, written all or nothing.

The folder is built in a temporary sibling of the target and renamed onto it only when every
section rendered (``rsp_sdk.util.atomic``), so a bad results folder or a crash leaves the old
report, or none, never half a page. An existing target is replaced only when it is a report
(it has ``report.json``) or an empty folder: pointing ``-o`` at the results folder or at a
home directory by mistake is an input error, not a deletion.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

from rsp_sdk.errors import InputError
from rsp_sdk.report.artifacts import Artifacts, TableRef
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import Section, render
from rsp_sdk.report.sections import SECTIONS
from rsp_sdk.report.sections.details import cells_table
from rsp_sdk.util.atomic import atomic_path

MARKER = "report.json"
REPORT_FORMAT = 1
PARALLEL_FROM = 8  # cells; below this, starting worker processes costs more than it saves


@dataclass(frozen=True)
class ReportSummary:
    index: Path
    headline: list[TableRef]
    cells: int
    missing: int
    figures: int
    tables: int
    seconds: float


def check_target(target: Path) -> None:
    """Refuse to replace anything but a previous report or an empty folder."""
    if not target.exists():
        return
    if not target.is_dir():
        raise InputError(
            "output exists and is not a folder",
            path=target,
            expected="a new folder, or a report folder written by `rsp report`",
        )
    if (target / MARKER).is_file() or not any(target.iterdir()):
        return
    raise InputError(
        f"refusing to overwrite a folder that is not a report (no {MARKER})",
        path=target,
        expected="a new folder, an empty one, or a report folder written by `rsp report`",
    )


def _version() -> str:
    try:
        return metadata.version("rsp_sdk")
    except metadata.PackageNotFoundError:
        return "?"


def _workers(results: Results) -> int:
    """Processes drawing figures: one per CPU when there are enough figures to pay for them."""
    return min(os.cpu_count() or 1, 4) if len(results.cells) >= PARALLEL_FROM else 1


def build_report(
    results_dir: Path | str, output: Path | str, sections: tuple[Section, ...] = SECTIONS
) -> ReportSummary:
    started = time.perf_counter()
    results = Results(results_dir)
    target = Path(output).resolve()
    if target == results.root.resolve() or results.root.resolve().is_relative_to(target):
        raise InputError(
            "the report cannot replace its results folder",
            path=target,
            expected="an output folder outside RESULTS",
        )
    check_target(target)
    with atomic_path(target, directory=True) as tmp:
        out = Artifacts(tmp, workers=_workers(results))
        rendered = [
            {"name": s.name, "title": s.title, "html": s.render(results, out)} for s in sections
        ]
        all_cells = results.frame()
        all_cells.to_csv(tmp / "data" / "cells.csv", index=False)
        caption = "Every finished cell: verdict and headline numbers (all of cell.json: "
        caption += "data/cells.csv)"
        out.table("cells", cells_table(results.cells), caption)
        generated = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        css = resources.files("rsp_sdk.report").joinpath("templates/page.css").read_text("utf-8")
        page = render(
            "page.html.j2",
            title=results.spec_name,
            subtitle=f"{len(results.cells)} cells finished, {len(results.missing)} missing; "
            f"results {results.root.resolve()}",
            sections=rendered,
            css=css,
            version=_version(),
            results=str(results.root.resolve()),
            generated=generated,
        )
        out.finish()
        (tmp / "index.html").write_text(out.inline(page), encoding="utf-8")
        marker = {
            "format": REPORT_FORMAT,
            "generator": f"rsp report {_version()}",
            "results": str(results.root.resolve()),
            "generated": generated,
            "cells": len(results.cells),
            "missing": [p.key for p in results.missing],
            "figures": [f.name for f in out.figures],
            "tables": [t.name for t in out.tables],
        }
        (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    return ReportSummary(
        index=target / "index.html",
        headline=[t for t in out.tables if t.headline],
        cells=len(results.cells),
        missing=len(results.missing),
        figures=len(out.figures),
        tables=len(out.tables),
        seconds=time.perf_counter() - started,
    )
