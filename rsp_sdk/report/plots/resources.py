"""Memory (RSS, JVM heap) and CPU of one run over time, with its feeding phases shaded:
the sampler's ``perf.parquet`` and the feeder's ``pushed.parquet`` of the run directory."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from rsp_sdk.report.artifacts import FULL_IN, Artifacts, FigureRef, margins, paper_figure
from rsp_sdk.report.results import CellRecord

PHASE_COLOURS = {"warmup": "#fdd49e", "measure": "#c6dbef", "drain": "#e5e5e5"}
MB = 1024 * 1024


def phases(pushed: pd.DataFrame | None, t0_ns: int, end_s: float) -> list[tuple[str, float, float]]:
    """(phase, start s, end s) per feeding phase, then the drain until the last sample."""
    if pushed is None:
        return []
    out = []
    for phase, g in pushed.groupby("phase", sort=False):
        start = (int(g["t_sys_start_ns"].min()) - t0_ns) / 1e9
        end = (int(g["t_sys_end_ns"].max()) - t0_ns) / 1e9
        out.append((str(phase), start, end))
    out.sort(key=lambda p: p[1])
    last = max(p[2] for p in out)
    if end_s > last:
        out.append(("drain", last, end_s))
    return out


def figure(
    out: Artifacts, name: str, cell: CellRecord, perf: pd.DataFrame, pushed: pd.DataFrame | None
) -> FigureRef:
    caption = f"{cell.label}: memory and CPU over time (shaded: feeding phases)"
    return out.figure(name, draw, (perf, pushed), caption)


def draw(perf: pd.DataFrame, pushed: pd.DataFrame | None) -> tuple[Figure, pd.DataFrame]:
    perf = perf.sort_values("t_sys_ns")
    starts = [int(perf["t_sys_ns"].min())]
    if pushed is not None:
        starts.append(int(pushed["t_sys_start_ns"].min()))
    t0 = min(starts)
    t = (perf["t_sys_ns"] - t0) / 1e9
    rss = perf["rss_bytes"] / MB
    heap = perf["heap_used"].astype("float64") / MB
    spans = phases(pushed, t0, float(t.max()))
    fig = paper_figure(FULL_IN, 2.8)
    ax_mem, ax_cpu = fig.subplots(2, 1, sharex=True)
    for ax in (ax_mem, ax_cpu):
        for phase, a, b in spans:
            colour = PHASE_COLOURS.get(phase, "#eeeeee")
            ax.axvspan(a, max(b, a + 1e-3), color=colour, lw=0, zorder=0)
    ax_mem.plot(t, rss, label="RSS", color="#08519c")
    if heap.notna().any():
        ax_mem.plot(t, heap, label="heap used", color="#a63603", ls="--")
    ax_mem.set_ylabel("memory (MB)")
    ax_mem.set_ylim(bottom=0)
    ax_cpu.plot(t, perf["cpu_percent"], color="#54278f", label="CPU")
    ax_cpu.set_ylabel("CPU (% of a core)")
    ax_cpu.set_ylim(bottom=0)
    ax_cpu.set_xlabel("time since the run started (s)")
    handles, labels = ax_mem.get_legend_handles_labels()
    for phase in dict.fromkeys(p for p, _, _ in spans):
        handles.append(Patch(color=PHASE_COLOURS.get(phase, "#eeeeee")))
        labels.append(f"{phase} phase")
    fig.legend(handles, labels, loc="upper center", ncols=len(labels), fontsize=6, frameon=False)
    margins(fig, top=0.28, bottom=0.42)
    data = pd.DataFrame(
        {"t_s": t, "rss_mb": rss, "heap_used_mb": heap, "cpu_percent": perf["cpu_percent"]}
    )
    return fig, data
