"""Per series (a cell and its repetitions): what YABench's viewer showed, from the results only.

For each series: a table of its repetitions; the first diverging relation of an incorrect
CSRBench cell, expected beside actual; and up to three figures — per-window precision/recall
with the window borders, delay and result vs window sizes (from ``windows.parquet``); memory
and CPU over time with the feeding phases (``perf.parquet`` + ``pushed.parquet`` of the run);
and boxplots of the headline metrics over repetitions. Window and resource figures show one
representative repetition (the first that has the table), named in the caption.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd
from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts, FigureRef, TableRef
from rsp_sdk.report.outcome import outcome, short_reason, summarize
from rsp_sdk.report.plots import boxplots, resources, windows
from rsp_sdk.report.results import CellRecord, Results, series_id
from rsp_sdk.report.section import render

REPETITION_COLUMNS = {
    "repetition": "rep",
    "state": "state",
    "verdict": "verdict",
    "t0_ms": "t0 (ms)",
    "relations": "relations",
    "rows": "rows",
    "precision": "precision",
    "recall": "recall",
    "delay_ms_p50": "delay p50 (ms)",
    "latency_ms_p50": "latency p50 (ms)",
    "obs_latency_ms_p50": "obs. latency p50 (ms)",
    "rate_achieved": "rate (triples/s)",
    "time_per_triple_us": "t/triple (µs)",
    "peak_rss_mb": "peak RSS (MB)",
    "peak_heap_mb": "peak heap (MB)",
    "wall_s": "wall (s)",
    "reason": "reason",
}


@dataclass(frozen=True)
class Line:
    text: str
    differs: bool  # missing from the actual, or extra in it


#: rows shown per side of a divergence: a YABench relation at 1,000 stations holds thousands,
#: and every one of them on the page made it hundreds of megabytes
SHOWN_ROWS = 40


@dataclass(frozen=True)
class Side:
    """One side of a divergence: the rows shown (those that differ first), and how many more
    rows, and of them differing ones, the page leaves out."""

    lines: list[Line]
    total: int
    hidden_differing: int

    @property
    def hidden(self) -> int:
        return self.total - len(self.lines)


@dataclass(frozen=True)
class Divergence:
    label: str
    text: str
    where: str
    expected: Side
    actual: Side
    no_expected: bool  # the expected output had ended: no expected relation to compare with


@dataclass(frozen=True)
class SeriesBlock:
    id: str
    title: str
    summary: str
    outcome: str
    table: TableRef
    divergences: list[Divergence]
    figures: list[FigureRef]
    notes: list[str]
    reasons: list[tuple[str, str]]  # (cell label, full reason) where the table shows one line


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    if isinstance(v, str):
        return short_reason(v).replace("_", " ")
    return str(v)


def repetition_table(cells: list[CellRecord]) -> TableRef:
    """The repetitions of a series: only the columns some repetition has a value for."""
    rows = [{k: getattr(c, k) for k in REPETITION_COLUMNS} for c in cells]
    cols = [k for k in REPETITION_COLUMNS if any(r[k] is not None for r in rows)]
    frame = pd.DataFrame([[_fmt(r[k]) for k in cols] for r in rows])
    frame.columns = [REPETITION_COLUMNS[k] for k in cols]
    return TableRef("cells", "Repetitions", frame)


def cells_table(cells: list[CellRecord]) -> pd.DataFrame:
    """Every cell by its label with the repetition table's columns — the paper's table; the
    rest of cell.json (keys, hashes, a divergence's bindings) is data/cells.csv's."""
    frame = repetition_table(cells).frame
    frame.insert(0, "cell", [c.label for c in cells])
    return frame


def _canonical(binding: Any) -> str:
    return json.dumps(binding, sort_keys=True, ensure_ascii=False)


def _relation(results: Results, cell: CellRecord, seq: int | None) -> list[str]:
    """The bindings of the emitted relation ``seq`` (run's outputs.parquet), canonical JSON."""
    outputs = results.table(cell, "outputs")
    if outputs is None or seq is None:
        return []
    rows = outputs[outputs["seq"] == seq]["binding"].dropna()
    return [_canonical(json.loads(b)) for b in rows]


def divergence(results: Results, cell: CellRecord) -> Divergence | None:
    """Expected vs actual of the first diverging relation, side by side.

    ``divergence_detail`` (the CSRBench check's ``Divergence``) names the diverging emitted
    relation (``actual_seq``) and the bag differences ``missing`` (expected, not emitted) and
    ``extra`` (emitted, not expected); the actual relation is read from the run's outputs and
    the expected one is actual − extra + missing.
    """
    if cell.verdict != "incorrect" or not (cell.divergence or cell.divergence_detail):
        return None
    try:
        detail = json.loads(cell.divergence_detail or "{}")
    except ValueError:
        detail = {}
    if not isinstance(detail, dict):
        detail = {}
    missing = Counter(_canonical(b) for b in detail.get("missing") or [])
    extra = Counter(_canonical(b) for b in detail.get("extra") or [])
    actual = _relation(results, cell, detail.get("actual_seq"))
    expected = Counter(actual)
    expected.subtract(extra)
    expected.update(missing)
    left, budget = [], Counter(missing)
    for text in sorted(expected.elements()):
        left.append(Line(text, budget[text] > 0))
        budget[text] -= 1
    right, budget = [], Counter(extra)
    for text in sorted(actual):
        right.append(Line(text, budget[text] > 0))
        budget[text] -= 1
    right += [Line(t, True) for t in sorted((extra - Counter(actual)).elements())]
    opened, closed = detail.get("expected_window_open_ms"), detail.get("expected_window_close_ms")
    where = f"t0 = {detail.get('t0_ms')} ms"
    if opened is not None:
        where += f", expected window [{opened}, {closed}) ms"
    if detail.get("actual_seq") is not None:
        where += f", emitted relation #{detail['actual_seq']}"
    ended = "expected_seq" in detail and detail["expected_seq"] is None
    return Divergence(cell.label, cell.divergence or "", where, _side(left), _side(right), ended)


def _side(lines: list[Line], limit: int = SHOWN_ROWS) -> Side:
    """At most ``limit`` of ``lines``: the differing ones first, then the others, in order."""
    if len(lines) <= limit:
        return Side(lines, len(lines), 0)
    differing = [n for n, line in enumerate(lines) if line.differs]
    same = [n for n, line in enumerate(lines) if not line.differs]
    kept = sorted((differing + same)[:limit])
    return Side([lines[n] for n in kept], len(lines), max(0, len(differing) - limit))


def _first(
    results: Results, cells: list[CellRecord], name: str
) -> tuple[CellRecord, pd.DataFrame] | None:
    for c in cells:
        frame = results.table(c, name)
        if frame is not None:
            return c, frame
    return None


def _alike(cells: list[CellRecord], field: str) -> list[CellRecord]:
    """The first repetition of each distinct ``field`` text: ten repetitions failing alike are
    shown once (the repetition table lists them all)."""
    seen: dict[Any, CellRecord] = {}
    for c in cells:
        seen.setdefault(getattr(c, field), c)
    return list(seen.values())


def series_block(results: Results, cells: list[CellRecord], out: Artifacts) -> SeriesBlock:
    first = cells[0]
    sid = series_id(first.series)
    title = first.label.rsplit("/rep=", 1)[0] if first.label else f"{first.row}/{first.column}"
    text, worst = summarize(cells)
    figures, notes = [], []
    win = _first(results, cells, "windows")
    win_fig = None if win is None else windows.figure(out, f"{sid}-windows", win[0], win[1])
    if win_fig is not None:
        figures.append(win_fig)
    else:
        notes.append("No per-window metrics (the cell was not judged per window).")
    perf = _first(results, cells, "perf")
    if perf is not None:
        pushed = results.table(perf[0], "pushed")
        figures.append(resources.figure(out, f"{sid}-resources", perf[0], perf[1], pushed))
    else:
        notes.append("No resource samples (the engine never ran, or the sampler saw nothing).")
    box = boxplots.figure(out, f"{sid}-repetitions", cells)
    if box is not None:
        figures.append(box)
    elif len(cells) > 1:
        notes.append("No metric has a value in two repetitions: no boxplots.")
    divs = [d for c in _alike(cells, "divergence") if (d := divergence(results, c)) is not None]
    reasons = [
        (c.label, c.reason)
        for c in _alike(cells, "reason")
        if c.reason and short_reason(c.reason) != c.reason
    ]
    table = repetition_table(cells)
    return SeriesBlock(sid, title, text, worst.value, table, divs, figures, notes, reasons)


class CellDetails:
    name = "details"
    title = "Cell details"
    order = 60

    def render(self, results: Results, out: Artifacts) -> Markup:
        blocks = [series_block(results, cells, out) for cells in results.series().values()]
        outcomes = {outcome(c) for c in results.cells}
        return render("details.html.j2", blocks=blocks, any_judged=bool(outcomes))
