"""Spread over repetitions: one small boxplot per headline metric a series has in ≥ 2 runs."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure
from rsp_sdk.report.results import CellRecord

METRICS = {
    "wall_s": "wall time (s)",
    "latency_ms_p50": "latency p50 (ms)",
    "delay_ms_p50": "delay p50 (ms)",
    "time_per_triple_us": "time/triple (µs)",
    "peak_rss_mb": "peak RSS (MB)",
    "cpu_mean_pct": "mean CPU (%)",
    "precision": "precision (0–1)",
    "recall": "recall (0–1)",
}
MAX_PANELS = 6


def figure(out: Artifacts, name: str, cells: list[CellRecord]) -> FigureRef | None:
    """The boxplots, or None with fewer than two repetitions having some metric."""
    if len(cells) < 2:
        return None
    data = pd.DataFrame(
        [{"repetition": c.repetition, **{k: getattr(c, k) for k in METRICS}} for c in cells]
    )
    shown = [k for k in METRICS if data[k].notna().sum() >= 2][:MAX_PANELS]
    if not shown:
        return None
    caption = f"{cells[0].label.rsplit('/rep=', 1)[0]}: spread over {len(cells)} repetitions"
    return out.figure(name, draw, (data[["repetition", *shown]],), caption)


def draw(data: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    shown = [c for c in data.columns if c != "repetition"]
    fig = paper_figure(FULL_IN, 1.7)
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    for ax, k in zip(axes, shown, strict=True):
        values = data[k].dropna().astype(float)
        ax.boxplot(values, widths=0.5)
        ax.plot([1] * len(values), values, "o", ms=3, alpha=0.6, color="#08519c")  # each run
        ax.set_title(METRICS[k])
        ax.set_xticks([1], [f"n={len(values)}"])
    margins(fig, left=0.45, top=0.22, bottom=0.25, wgap=0.5)
    return fig, data
