"""Feature coverage: which engine@runtime accepted which query, and why the others refused.

A cell an engine cannot carry (a refused feature, a missing runtime, an engine not provisioned)
is recorded by the matrix as ``refused``/``unavailable`` with its reason, so this table is the
LSBench/CSRBench feature table of the engines actually tried.
"""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import render

NOT_CARRIED = ("refused", "unavailable")


class FeatureCoverage:
    name = "coverage"
    title = "Feature coverage"
    order = 40

    def render(self, results: Results, out: Artifacts) -> Markup:
        marks: dict[tuple[str, str], str] = {}
        reasons: dict[str, str] = {}
        for c in results.cells:
            q = c.column.rsplit(" @", 1)[0]
            if c.state in NOT_CARRIED:
                marks.setdefault((c.row, q), c.state)
                if c.reason:
                    reasons.setdefault(f"{c.row} / {q}", c.reason)
            else:
                marks[(c.row, q)] = "✓"
        rows = sorted({r for r, _ in marks})
        cols = sorted({q for _, q in marks})
        frame = pd.DataFrame(
            [[r, *(marks.get((r, q), "") for q in cols)] for r in rows],
            columns=["engine@runtime", *cols],
        )
        ref = out.table("coverage", frame, "Queries each engine@runtime accepted (✓) or not")
        return render("coverage.html.j2", ref=ref, reasons=sorted(reasons.items()))
