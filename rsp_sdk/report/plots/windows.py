"""Per-window correctness of one cell, as YABench's viewer drew it: precision and recall per
window with the window borders marked, the delay per window, and result vs window sizes."""

from __future__ import annotations

import pandas as pd

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, paper_figure, paper_style
from rsp_sdk.report.results import CellRecord

MAX_BORDERS = 200  # beyond this many windows the border lines would paint the axes grey


def figure(out: Artifacts, name: str, cell: CellRecord, frame: pd.DataFrame) -> FigureRef:
    f = frame.sort_values(["close_ms", "window"]).reset_index(drop=True)
    t0 = float(f["open_ms"].min())
    close_s = (f["close_ms"] - t0) / 1000.0
    with paper_style():
        fig = paper_figure(FULL_IN, 4.2)
        ax_pr, ax_delay, ax_size = fig.subplots(3, 1, sharex=True)
        if len(f) <= MAX_BORDERS:
            borders = sorted(set(((f["open_ms"] - t0) / 1000.0).tolist()) | set(close_s.tolist()))
            for ax in (ax_pr, ax_delay, ax_size):
                for b in borders:
                    ax.axvline(b, color="#9e9e9e", lw=0.4, ls=":", zorder=0)
        ax_pr.step(close_s, f["precision"], where="post", label="precision", marker="o")
        ax_pr.step(close_s, f["recall"], where="post", label="recall", marker="s", ls="--")
        ax_pr.set_ylim(-0.05, 1.05)
        ax_pr.set_ylabel("score (0–1)")
        ax_pr.legend(loc="lower right", ncols=2)
        if f["delay_ms"].notna().any():
            ax_delay.bar(close_s, f["delay_ms"].fillna(0), width=_width(close_s), color="#5e81ac")
        else:
            ax_delay.text(0.5, 0.5, "no delay measured", transform=ax_delay.transAxes, ha="center")
        ax_delay.set_ylabel("delay (ms)")
        ax_size.bar(
            close_s, f["triples"], width=_width(close_s), color="#d8dee9", label="triples in window"
        )
        ax_size.set_ylabel("triples")
        rows = ax_size.twinx()
        rows.plot(close_s, f["expected_rows"], marker="o", color="#1a9850", label="expected rows")
        rows.plot(
            close_s, f["actual_rows"], marker="x", ls="--", color="#d73027", label="actual rows"
        )
        rows.set_ylabel("result rows")
        rows.grid(False)
        handles = ax_size.get_legend_handles_labels()
        more = rows.get_legend_handles_labels()
        rows.legend(handles[0] + more[0], handles[1] + more[1], loc="upper left", ncols=3)
        ax_size.set_xlabel("window close (s after the first window opened)")
    data = f.assign(close_s=close_s)
    caption = (
        f"{cell.label}: precision/recall, delay and sizes per window "
        f"(dotted lines: window borders; {len(f)} windows)"
    )
    return out.figure(name, fig, data, caption)


def _width(x: pd.Series) -> float:
    diffs = x.diff().dropna()
    step = float(diffs[diffs > 0].min()) if (diffs > 0).any() else 1.0
    return step * 0.6
