"""Scalability curves (CityBench, Ren et al.): throughput achieved and result latency against
the rate asked, one line per engine@runtime and query, medians over repetitions."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure


def figure(out: Artifacts, name: str, frame: pd.DataFrame) -> FigureRef | None:
    """The curves, or None when no engine and query ran at two rates."""
    rated = frame[frame["rate"].notna() & (frame["state"] == "ok")]  # runs that ran to the end
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


def _thousands(value: float, _pos: int) -> str:
    """Axis labels for rates: 500, 10k, 1.5M."""
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def draw(med: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    fig = paper_figure(FULL_IN, 2.6)
    ax_thr, ax_lat = fig.subplots(1, 2)
    for (row, q), g in med.groupby(["row", "qcol"]):
        g = g.sort_values("rate")
        label = f"{row} {q}"
        ax_thr.plot(g["rate"], g["rate_achieved"], marker="o", label=label)
        ax_lat.plot(g["rate"], g["latency_ms_p50"], marker="o", label=label)
    top = float(med["rate"].max())
    low = float(med[["rate", "rate_achieved"]].min().min()) / 2
    low = low if low > 0 else 0.0
    ax_thr.plot([low, top], [low, top], color="#999", ls=":", lw=0.8, label="achieved = asked")
    ax_thr.set_xlabel("input rate asked (triples/s)")
    ax_thr.set_ylabel("rate achieved (triples/s)")
    ax_lat.set_xlabel("input rate asked (triples/s)")
    ax_lat.set_ylabel("latency p50 (ms)")
    for ax in (ax_thr, ax_lat):
        ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
    if float(med["rate_achieved"].min()) > 0:  # achieved can be far below asked: log–log
        ax_thr.set_xscale("log")
        ax_thr.set_yscale("log")
        ax_thr.xaxis.set_major_formatter(FuncFormatter(_thousands))
        ax_thr.yaxis.set_major_formatter(FuncFormatter(_thousands))
    ax_thr.legend(fontsize=6)
    margins(fig, left=0.6, bottom=0.45, wgap=0.75)
    return fig, med
