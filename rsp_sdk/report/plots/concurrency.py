"""CityBench's concurrency curves: latency and peak memory against the number of simultaneous
instances of a query (1, 10, 20), medians over the runs that ran to the end. The latency is
CityBench's own (the first result naming an observation minus its push,
``rsp_sdk.matrix.obslatency``): every engine has one, where the window-close latency needs the
application time that wall-clock engines (CQELS, C-SPARQL 0.9) do not report.

The rate curves (``curves``) need two rates; CityBench varies the instances and the replay
speed instead, and its paper plots latency and memory against the instances. One panel pair
(latency above memory) per query, one colour per engine@runtime in every panel, one line style
per time scale: ×1 and ×10 replays are different loads, not repetitions. A single pair of axes
for every engine × query × time scale ran past ten lines on CityBench, repeated colours and
hid the plot under its legend."""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, paper_figure

SERIES = ["row", "query", "params", "stream", "time_scale"]
MEASURES = ["obs_latency_ms_p50", "peak_rss_mb"]
PANEL_COLUMNS = 4
STYLES = ["-", "--", ":", "-."]  # time scales, in ascending order


def figure(out: Artifacts, name: str, frame: pd.DataFrame) -> FigureRef | None:
    """The curves, or None when no engine and query ran at two instance counts."""
    med = _medians(frame)
    if med is None:
        return None
    caption = (
        "Observation latency p50 (top: the first result naming an observation minus its push, "
        "as CityBench measures it) and peak RSS (bottom) vs simultaneous instances of each "
        "query: one colour per engine@runtime, one line style per time scale (medians over "
        "repetitions that ran to the end)"
    )
    return out.figure(name, draw, (med,), caption)


def _medians(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Per (engine@runtime, query, time scale, instances) medians of the finished runs, for the
    series measured at two instance counts or more; None when there is none."""
    if "instances" not in frame:
        return None
    done = frame[frame["state"] == "ok"].copy()
    for column in MEASURES:  # cells.parquet written before the column
        if column not in done:
            done[column] = float("nan")
    # a cell that measured none of them adds no point (and its group's median of nothing
    # would warn on the terminal)
    done = done.dropna(subset=list(MEASURES), how="all")
    if done.empty:
        return None
    done["instances"] = done["instances"].fillna(1).astype(int)
    # afap/rate cells: no replay speed (a column of None only is of object type: made float
    # first, pandas would otherwise warn on every report of such a matrix)
    done["time_scale"] = done["time_scale"].astype(float).fillna(0.0)
    done["params"] = done["params"].fillna("")
    with warnings.catch_warnings():
        # a series that measured one of the two and not the other: that median is NaN, as it
        # should be, and numpy says "Mean of empty slice" on the terminal for it
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        med = done.groupby([*SERIES, "instances"])[MEASURES].median().reset_index()
    multi = med.groupby(SERIES)["instances"].transform("nunique") >= 2
    if not multi.any():
        return None
    med = med[multi].reset_index(drop=True)
    scales = med["time_scale"].nunique() > 1
    streams = med["stream"].nunique() > 1
    med["label"] = [
        f"{row} {query}" + (f" ×{scale:g}" if scales and scale else "")
        for row, query, scale in zip(med["row"], med["query"], med["time_scale"], strict=True)
    ]
    med["panel"] = [
        query + (f" {params}" if params not in ("", "{}") else "") + (f" · {s}" if streams else "")
        for query, params, s in zip(med["query"], med["params"], med["stream"], strict=True)
    ]
    return med[["label", "panel", "row", "query", "time_scale", "instances", *MEASURES]]


@dataclass(frozen=True)
class _Look:
    """One colour per engine@runtime and one line style per time scale, in every panel."""

    colour: dict[str, str]
    style: dict[float, str]

    @classmethod
    def of(cls, med: pd.DataFrame) -> _Look:
        rows = sorted(med["row"].unique())
        scales = sorted(med["time_scale"].unique())
        return cls(
            {r: f"C{i % 10}" for i, r in enumerate(rows)},
            {s: STYLES[i % len(STYLES)] for i, s in enumerate(scales)},
        )

    def legend(self, fig: Figure) -> None:
        handles = [Line2D([], [], c=c, marker="o", ms=3, label=r) for r, c in self.colour.items()]
        if len(self.style) > 1:
            handles += [
                Line2D([], [], c="0.4", ls=ls, label=f"time scale {s:g}" if s else "no scale")
                for s, ls in self.style.items()
            ]
        fig.legend(handles=handles, loc="lower center", ncol=4, frameon=False)


def draw(med: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    panels = sorted(med["panel"].unique(), key=_natural)
    look = _Look.of(med)
    cols = min(PANEL_COLUMNS, len(panels))
    blocks = math.ceil(len(panels) / cols)
    legend_in = 0.2 + 0.16 * math.ceil((len(look.colour) + len(look.style)) / 4)
    height = blocks * 2.9 + legend_in
    fig = paper_figure(FULL_IN, height)
    # each block: latency, memory, then a spacer row that holds the x label and the next
    # block's titles
    ratios = ([1.0, 1.0, 0.5] * blocks)[:-1]
    spec = fig.add_gridspec(len(ratios), cols, height_ratios=ratios, hspace=0.12, wspace=0.45)
    ticks = sorted(med["instances"].unique().tolist())
    for i, panel in enumerate(panels):
        top, col = 3 * (i // cols), i % cols
        lat = fig.add_subplot(spec[top, col])
        mem = fig.add_subplot(spec[top + 1, col], sharex=lat)
        _panel(lat, mem, med[med["panel"] == panel], look)
        lat.set_title(panel)
        mem.set_xticks(ticks)
        if col == 0:
            lat.set_ylabel("obs. latency p50 (ms)")
            mem.set_ylabel("peak RSS (MB)")
    look.legend(fig)
    fig.subplots_adjust(
        left=0.6 / FULL_IN,
        right=1 - 0.1 / FULL_IN,
        top=1 - 0.2 / height,
        bottom=(0.4 + legend_in) / height,
    )
    return fig, med


def _panel(lat: Axes, mem: Axes, med: pd.DataFrame, look: _Look) -> None:
    """One query's latency (above) and memory (below) lines."""
    for (row, scale), g in med.groupby(["row", "time_scale"]):
        g = g.sort_values("instances")
        line: dict[str, Any] = {"marker": "o", "ms": 3, "c": look.colour[str(row)]}
        line["ls"] = look.style[float(cast(float, scale))]
        if g["obs_latency_ms_p50"].notna().any():
            lat.plot(g["instances"], g["obs_latency_ms_p50"], **line)
        mem.plot(g["instances"], g["peak_rss_mb"], **line)
    if not lat.lines:  # no result named an observation (none expected, or no IRI projected)
        lat.text(0.5, 0.5, "no latency", ha="center", va="center", transform=lat.transAxes)
        lat.set_yticks([])
    lat.tick_params(labelbottom=False)
    mem.set_xlabel("instances")


def _natural(text: str) -> tuple[str, int, str]:
    """q2 before q10: the first number in a panel's name compared as a number."""
    found = re.match(r"(\D*)(\d+)(.*)", text)
    if found is None:
        return (text, -1, "")
    return (found.group(1), int(found.group(2)), found.group(3))
