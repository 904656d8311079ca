"""Scalability curves (CityBench, Ren et al.): throughput achieved and result latency against
the rate asked, one line per engine@runtime and query, medians over repetitions."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure


def figure(out: Artifacts, name: str, frame: pd.DataFrame) -> FigureRef | None:
    """The curves, or None when no engine and query ran at two rates."""
    rated = frame[frame["rate"].notna()]
    if rated.empty:
        return None
    med = (
        rated.groupby(["row", "qcol", "rate"])[["rate_achieved", "latency_ms_p50"]]
        .median()
        .reset_index()
    )
    multi = med.groupby(["row", "qcol"])["rate"].transform("nunique") >= 2
    if not multi.any():
        return None
    caption = "Throughput achieved and result latency vs input rate (medians over repetitions)"
    return out.figure(name, draw, (med[multi].reset_index(drop=True),), caption)


def draw(med: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    fig = paper_figure(FULL_IN, 2.6)
    ax_thr, ax_lat = fig.subplots(1, 2)
    for (row, q), g in med.groupby(["row", "qcol"]):
        g = g.sort_values("rate")
        label = f"{row} {q}"
        ax_thr.plot(g["rate"], g["rate_achieved"], marker="o", label=label)
        ax_lat.plot(g["rate"], g["latency_ms_p50"], marker="o", label=label)
    top = float(med["rate"].max())
    ax_thr.plot([0, top], [0, top], color="#999", ls=":", lw=0.8, label="achieved = asked")
    ax_thr.set_xlabel("input rate asked (triples/s)")
    ax_thr.set_ylabel("rate achieved (triples/s)")
    ax_lat.set_xlabel("input rate asked (triples/s)")
    ax_lat.set_ylabel("latency p50 (ms)")
    ax_thr.legend(fontsize=6)
    margins(fig, left=0.6, bottom=0.45, wgap=0.75)
    return fig, med
