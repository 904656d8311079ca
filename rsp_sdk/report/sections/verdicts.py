"""The verdict grid: engine@runtime × query, one coloured cell per series, linking to its detail.

A spec that varies the stream, the number of instances or the time scale gets one column per
query and value (``Results.column``), so those cells are not folded into one as repetitions.

CSRBench and LSBench publish their results as such a table; here each cell aggregates the
repetitions of one series (worst outcome first, ``correct ×3`` or ``incorrect 1/3``), and a
planned cell that never finished shows as *missing* rather than as a gap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
from markupsafe import Markup

from rsp_sdk.matrix.notes import MARK_NOTE
from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.outcome import Outcome, short_reason, summarize
from rsp_sdk.report.results import CellRecord, Results, series_id
from rsp_sdk.report.section import render


@dataclass(frozen=True)
class GridCell:
    text: str
    outcome: Outcome
    href: str | None
    title: str


def grid(results: Results) -> tuple[list[str], list[str], dict[tuple[str, str], GridCell]]:
    """(rows, columns, cells) of the verdict grid."""
    by_pos: dict[tuple[str, str], list[list[CellRecord]]] = {}
    for cells in results.series().values():
        by_pos.setdefault((cells[0].row, results.column(cells[0])), []).append(cells)
    out: dict[tuple[str, str], GridCell] = {}
    for pos, groups in by_pos.items():
        flat = [c for g in groups for c in g]
        text, worst = summarize(flat)
        reasons = sorted({short_reason(c.reason) for c in flat if c.reason})
        narrowed = sorted({c.t0_narrowed for c in flat if c.t0_narrowed})
        if narrowed:  # marked, and the grid's note says what the mark means
            text += " *"
        title = "; ".join([*reasons, *narrowed])
        out[pos] = GridCell(text, worst, "#" + series_id(groups[0][0].series), title)
    for p in results.missing:
        pos = (p.row, results.column(p))
        if pos not in out:
            out[pos] = GridCell("missing", Outcome.MISSING, None, "planned, no cell.json")
    rows = sorted({r for r, _ in out})
    cols = sorted({c for _, c in out}, key=_natural)
    return rows, cols, out


def _natural(text: str) -> tuple[object, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


class VerdictGrid:
    name = "verdicts"
    title = "Verdicts"
    order = 10

    def render(self, results: Results, out: Artifacts) -> Markup:
        rows, cols, cells = grid(results)
        frame = pd.DataFrame(
            [[r, *(cells[(r, c)].text if (r, c) in cells else "" for c in cols)] for r in rows],
            columns=["engine@runtime", *cols],
        )
        ref = out.table(
            "verdicts", frame, "Verdict per engine@runtime and query (repetitions)", headline=True
        )
        legend = [o for o in Outcome if any(g.outcome is o for g in cells.values())]
        narrowed = MARK_NOTE if any(c.t0_narrowed for c in results.cells) else None
        return render(
            "verdicts.html.j2",
            ref=ref,
            rows=rows,
            cols=cols,
            cells=cells,
            legend=legend,
            narrowed=narrowed,
        )
