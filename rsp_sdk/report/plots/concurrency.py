"""CityBench's concurrency curves: result latency and peak memory against the number of
simultaneous instances of a query (1, 10, 20), one line per engine@runtime, query and time
scale, medians over the runs that ran to the end.

The rate curves (``curves``) need two rates; CityBench varies the instances and the replay
speed instead, and its paper plots latency and memory against the instances. A time scale is a
line of its own: ×1 and ×10 replays are different loads, not repetitions."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure

SERIES = ["row", "query", "params", "stream", "time_scale"]
MEASURES = ["latency_ms_p50", "peak_rss_mb"]


def figure(out: Artifacts, name: str, frame: pd.DataFrame) -> FigureRef | None:
    """The curves, or None when no engine and query ran at two instance counts."""
    if "instances" not in frame:
        return None
    done = frame[frame["state"] == "ok"].copy()
    if done.empty:
        return None
    done["instances"] = done["instances"].fillna(1).astype(int)
    done["time_scale"] = done["time_scale"].fillna(0.0)  # afap/rate cells: no replay speed
    done["params"] = done["params"].fillna("")
    med = done.groupby([*SERIES, "instances"])[MEASURES].median().reset_index()
    multi = med.groupby(SERIES)["instances"].transform("nunique") >= 2
    if not multi.any():
        return None
    med = med[multi].reset_index(drop=True)
    scales = med["time_scale"].nunique() > 1
    med["label"] = [
        f"{row} {query}" + (f" ×{scale:g}" if scales and scale else "")
        for row, query, scale in zip(med["row"], med["query"], med["time_scale"], strict=True)
    ]
    caption = (
        "Result latency p50 and peak RSS vs simultaneous instances of the query "
        "(medians over repetitions that ran to the end)"
    )
    return out.figure(name, draw, (med[["label", "instances", *MEASURES]],), caption)


def draw(med: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    fig = paper_figure(FULL_IN, 2.6)
    ax_lat, ax_mem = fig.subplots(1, 2)
    # one colour per line in both panels (a line missing from one must not shift the others):
    # the legend of the memory panel names the latency panel's lines too
    for n, (label, g) in enumerate(med.groupby("label", sort=True)):
        g = g.sort_values("instances")
        style = {"marker": "o", "label": label, "color": f"C{n % 10}"}
        if n >= 10:
            style["linestyle"] = "--"
        if g["latency_ms_p50"].notna().any():
            ax_lat.plot(g["instances"], g["latency_ms_p50"], **style)
        ax_mem.plot(g["instances"], g["peak_rss_mb"], **style)
    ticks = sorted(med["instances"].unique().tolist())
    for ax, ylabel in ((ax_lat, "latency p50 (ms)"), (ax_mem, "peak RSS (MB)")):
        ax.set_xlabel("simultaneous instances")
        ax.set_ylabel(ylabel)
        ax.set_xticks(ticks)
    handles, labels = ax_mem.get_legend_handles_labels()
    if handles:
        ax_mem.legend(handles, labels, fontsize=6)
    margins(fig, left=0.6, bottom=0.45, wgap=0.75)
    return fig, med
