"""Per-window correctness of one cell, as YABench's viewer drew it: precision and recall per
window with the window borders marked, the delay per window, and result vs window sizes."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure
from rsp_sdk.report.results import CellRecord

MAX_BORDERS = 200  # beyond this many windows the border lines would paint the axes grey
# beyond this many windows the points and bars are drawn as one image inside the vector figure:
# an eager engine's thousands of windows made a 4 MB SVG (the page inlines every figure)
DENSE = 500


def figure(out: Artifacts, name: str, cell: CellRecord, frame: pd.DataFrame) -> FigureRef | None:
    """The figure, or None when no row answers a window (only unexpected outputs)."""
    f = frame[frame["close_ms"].notna() & frame["open_ms"].notna()]
    if f.empty:
        return None
    unexpected = len(frame) - len(f)
    caption = (
        f"{cell.label}: precision/recall, delay and sizes per window "
        f"(dotted lines: window borders; {len(f)} windows"
        + (f"; {unexpected} output(s) answering no window not drawn)" if unexpected else ")")
    )
    return out.figure(name, draw, (f,), caption)


def draw(frame: pd.DataFrame) -> tuple[Figure, pd.DataFrame]:
    f = frame.sort_values(["close_ms", "window"]).reset_index(drop=True)
    t0 = float(f["open_ms"].min())
    close_s = (f["close_ms"] - t0) / 1000.0
    width = _width(close_s)
    fig = paper_figure(FULL_IN, 4.2)
    ax_pr, ax_delay, ax_size = fig.subplots(3, 1, sharex=True)
    dense = len(f) > DENSE
    if len(f) <= MAX_BORDERS:
        borders = sorted(set(((f["open_ms"] - t0) / 1000.0).tolist()) | set(close_s.tolist()))
        for ax in (ax_pr, ax_delay, ax_size):
            for b in borders:
                ax.axvline(b, color="#9e9e9e", lw=0.4, ls=":", zorder=0)
    # precision as big hollow circles, recall as small squares: both stay visible when equal
    ax_pr.plot(
        close_s, f["precision"], label="precision", marker="o", ms=6, mfc="none", rasterized=dense
    )
    ax_pr.plot(close_s, f["recall"], label="recall", marker="s", ms=2.5, ls="--", rasterized=dense)
    ax_pr.set_ylim(-0.05, 1.4)  # the legend sits above 1, clear of the points
    ax_pr.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax_pr.set_ylabel("score (0–1)")
    ax_pr.legend(loc="upper right", ncols=2)
    if f["delay_ms"].notna().any():
        ax_delay.bar(
            close_s, f["delay_ms"].fillna(0), width=width, color="#5e81ac", rasterized=dense
        )
        ax_delay.axhline(0, color="#444", lw=0.6)
    else:
        ax_delay.text(0.5, 0.5, "no delay measured", transform=ax_delay.transAxes, ha="center")
    ax_delay.set_ylabel("delay (ms)")
    open_s = (f["open_ms"] - t0) / 1000.0
    ax_size.bar(
        open_s,
        f["triples"],
        width=close_s - open_s,
        align="edge",
        color="#b0bccf",
        alpha=0.5,
        edgecolor="#7b88a0",
        lw=0.4,
        label="triples in window [open, close)",
        rasterized=dense,
    )
    ax_size.set_ylabel("triples")
    ax_size.set_ylim(0, max(float(f["triples"].max()), 1.0) * 1.45)  # room for the legend
    rows = ax_size.twinx()
    rows.plot(
        close_s,
        f["expected_rows"],
        marker="o",
        color="#1a9850",
        label="expected rows",
        rasterized=dense,
    )
    rows.plot(
        close_s,
        f["actual_rows"],
        marker="x",
        ls="--",
        color="#d73027",
        label="actual rows",
        rasterized=dense,
    )
    rows.set_ylabel("result rows")
    rows.yaxis.set_major_locator(MaxNLocator(integer=True))
    top = max(float(f[["expected_rows", "actual_rows"]].max().max()), 1.0)
    rows.set_ylim(0, top * 1.45)
    rows.grid(False)
    rows.spines["right"].set_visible(True)
    h1, l1 = ax_size.get_legend_handles_labels()
    h2, l2 = rows.get_legend_handles_labels()
    rows.legend(h1 + h2, l1 + l2, loc="upper left", ncols=3)
    margins(fig, right=0.55, bottom=0.42, gap=0.15)
    ax_size.set_xlabel("time (s after the first window opened); points at window close")
    return fig, f.assign(close_s=close_s)


def _width(x: pd.Series) -> float:
    diffs = x.diff().dropna()
    step = float(diffs[diffs > 0].min()) if (diffs > 0).any() else 1.0
    return step * 0.6
