"""Feature coverage: what became of each engine@runtime × query, LSBench Table 1 style.

Each box is the matrix's outcome word for that pair (``rsp_sdk.matrix.coverage``: correct,
wrong, no_output, refused, rejected, crashed, …; the worst when repetitions or feedings share a
box), and the reasons below name the construct refused, the engine's message or the first
divergence — the same classification `rsp matrix show --coverage-md` prints.
"""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from rsp_sdk.matrix.coverage import Outcome, coverage
from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import render


class FeatureCoverage:
    name = "coverage"
    title = "Feature coverage"
    order = 40

    def render(self, results: Results, out: Artifacts) -> Markup:
        rows = [c.model_dump() for c in results.cells]
        table = coverage(rows, results.root)
        queries = list(dict.fromkeys(r["query"] for r in rows))
        engines = sorted(table)
        frame = pd.DataFrame(
            [
                [who, *(table[who][q][0].value if q in table[who] else "" for q in queries)]
                for who in engines
            ],
            columns=["engine@runtime", *queries],
        )
        reasons = sorted(
            (f"{who} / {q}", f"{o.value}: {why}")
            for who in engines
            for q, (o, why) in table[who].items()
            if o is not Outcome.CORRECT and why
        )
        ref = out.table("coverage", frame, "Outcome of each query on each engine@runtime")
        return render("coverage.html.j2", ref=ref, reasons=reasons)
