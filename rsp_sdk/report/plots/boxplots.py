"""Spread over repetitions: one small boxplot per headline metric a series has in ≥ 2 runs."""

from __future__ import annotations

import pandas as pd

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, paper_figure, paper_style
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
    if len(cells) < 2:
        return None
    values = {k: [float(v) for c in cells if (v := getattr(c, k)) is not None] for k in METRICS}
    shown = [k for k, v in values.items() if len(v) >= 2][:MAX_PANELS]
    if not shown:
        return None
    with paper_style():
        fig = paper_figure(FULL_IN, 1.7)
        axes = fig.subplots(1, len(shown), squeeze=False)[0]
        for ax, k in zip(axes, shown, strict=True):
            ax.boxplot(values[k], widths=0.5)
            ax.set_title(METRICS[k])
            ax.set_xticks([1], [f"n={len(values[k])}"])
    data = pd.DataFrame(
        [{"repetition": c.repetition, **{k: getattr(c, k) for k in shown}} for c in cells]
    )
    caption = f"{cells[0].label.rsplit('/rep=', 1)[0]}: spread over {len(cells)} repetitions"
    return out.figure(name, fig, data, caption)
