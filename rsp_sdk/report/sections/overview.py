"""What the results are: the spec, the machine, how many cells finished and which are missing.

A matrix that was interrupted (or is still running) has planned cells without ``cell.json``;
they are listed here by label, so a reader knows the page is partial and what to rerun.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.outcome import outcome
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import render

SHOWN_MISSING = 200  # the page lists this many; tables/missing.md has them all


class Overview:
    name = "overview"
    title = "Overview"
    order = 0

    def render(self, results: Results, out: Artifacts) -> Markup:
        counts = Counter(outcome(c).value for c in results.cells)
        summary = pd.DataFrame(
            [[k.replace("_", " "), v] for k, v in sorted(counts.items())]
            + [["missing (planned, not finished)", len(results.missing)]],
            columns=["outcome", "cells"],
        )
        summary_ref = out.table("outcomes", summary, "Cells by outcome", headline=True)
        engines_ref = out.table(
            "engines-progress", results.progress(), "Cells per engine: finished of planned"
        )
        missing_ref = None
        if results.missing:
            frame = pd.DataFrame(
                [
                    [p.label or p.key[:12], p.engine, p.runtime, p.query, p.key]
                    for p in results.missing
                ],
                columns=["cell", "engine", "runtime", "query", "key"],
            )
            missing_ref = out.table("missing", frame, "Planned cells without a result")
        machine = {k: v for k, v in results.machine.items() if not isinstance(v, dict | list)}
        return render(
            "overview.html.j2",
            results=results,
            summary=summary_ref,
            engines=engines_ref,
            missing=missing_ref,
            shown=SHOWN_MISSING,
            machine=machine,
        )
