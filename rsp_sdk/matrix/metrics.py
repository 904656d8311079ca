"""Per-cell performance numbers, read back from a run directory's tables.

Nothing here touches an engine: every number comes from ``pushed.parquet`` (feeding phases),
``outputs.parquet`` (result arrivals) and ``perf.parquet`` (the sampler), so a cell can be
re-measured from its recorded run. Definitions (Ren et al. 2016, YABench, CityBench):

* achieved rate: measured triples / (last push end − first push start);
* engine time T and t = T/N (Ren et al.): time spent inside the engine's ``push`` verb;
* result latency: arrival of a relation minus the moment its window closed on the input side:
  the start of the first push carrying a triple at or after the relation's report time (the
  end of the last push when only ``advance_time`` closed it); a push is the finest grain;
* observation latency (CityBench): the first result naming an observation minus the push that
  sent it (``rsp_sdk.matrix.obslatency``) — measurable for engines whose results carry no
  application time;
* final result arrival (YABench): arrival of the last result minus the end of input (the end
  of the last measured push) — how long the engine still worked off its backlog after the
  stream stopped; negative when it had answered everything before the last push ended;
* peak RSS / heap, mean CPU, max threads, GC count over the run; MCR as Ren et al. 2016 define
  it (mean heap before minus after a GC over the last 10 collections, divided by the mean time
  between two heap maxima), or for runs without two collections the RSS swing over the run.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from rsp_sdk.matrix.obslatency import observation_latency_metrics
from rsp_sdk.run.recorder import read_table


def _f(value: Any) -> float | None:
    if value is None:
        return None
    v = float(value)
    return None if np.isnan(v) else v


def feeding_metrics(run_dir: Path) -> dict[str, float | int | None]:
    pushed = read_table(run_dir, "pushed")
    measured = pushed.filter(pc.equal(pushed.column("phase"), "measure"))
    if measured.num_rows == 0:
        return {
            "triples_pushed": 0,
            "rate_achieved": None,
            "engine_time_s": None,
            "time_per_triple_us": None,
        }
    n = int(pc.sum(measured.column("count")).as_py())
    start = int(pc.min(measured.column("t_sys_start_ns")).as_py())
    end = int(pc.max(measured.column("t_sys_end_ns")).as_py())
    busy = pc.subtract(measured.column("t_sys_end_ns"), measured.column("t_sys_start_ns"))
    engine_s = int(pc.sum(busy).as_py()) / 1e9
    span = (end - start) / 1e9
    return {
        "triples_pushed": n,
        "rate_achieved": n / span if span > 0 else None,
        "engine_time_s": engine_s,
        "time_per_triple_us": engine_s / n * 1e6 if n else None,
    }


def window_latencies(run_dir: Path) -> list[tuple[str, int, float, float]]:
    """(query, seq, report ms, latency ms) of every answered window, in report order per query:
    the per-window numbers ``latency_metrics`` summarises, which a Rate_max probe reads to leave
    the warm-up windows out."""
    pushed = read_table(run_dir, "pushed").sort_by("t_app_min_ms")
    outputs = read_table(run_dir, "outputs")
    if pushed.num_rows == 0 or outputs.num_rows == 0:
        return []
    rel = outputs.group_by(["query", "seq"]).aggregate([("t_sys_ns", "min"), ("t_app_ms", "max")])
    app = rel.column("t_app_ms_max").to_numpy(zero_copy_only=False)
    sys_ns = rel.column("t_sys_ns_min").to_numpy(zero_copy_only=False)
    # the moment input time passed the window close: the start of the first push carrying a
    # triple at or after it (or, for a window closed by advance_time, the end of the last push)
    reach = np.maximum.accumulate(pushed.column("t_app_max_ms").to_numpy())
    starts = pushed.column("t_sys_start_ns").to_numpy()
    last_end = float(pc.max(pushed.column("t_sys_end_ns")).as_py())
    out: list[tuple[str, int, float, float]] = []
    names = rel.column("query").to_pylist()
    seqs = rel.column("seq").to_pylist()
    for q, seq, a, s in zip(names, seqs, app, sys_ns, strict=True):
        if a is None or s is None or np.isnan(a) or np.isnan(s):
            continue
        i = int(np.searchsorted(reach, a, side="left"))
        ref = float(starts[i]) if i < len(starts) else last_end
        out.append((str(q), int(seq), float(a), (float(s) - ref) / 1e6))
    return sorted(out, key=lambda w: (w[0], w[2], w[1]))


def measured_windows(run_dir: Path) -> list[tuple[str, int, float, float]]:
    """``window_latencies`` without a warm-up's windows (``without_warmup``): those measure the
    engine still warming up, not the stream — for the latency columns and for a Rate_max
    probe's STEP rule alike."""
    return without_warmup(run_dir, window_latencies(run_dir))


def without_warmup(
    run_dir: Path, windows: list[tuple[str, int, float, float]]
) -> list[tuple[str, int, float, float]]:
    """``windows`` (``window_latencies``) but the warm-up's: those closing at or before the
    measured stream's first triple hold warm-up data only — also one closing after the
    warm-up's last triple, which the stream's first push closes."""
    start = _measured_start(run_dir)
    return [w for w in windows if start is None or w[2] > start]


def latency_metrics(run_dir: Path) -> dict[str, float | None]:
    """Latency against window close over the windows of the measured stream
    (``measured_windows``)."""
    lat = [w[3] for w in measured_windows(run_dir)]
    if not lat:
        return {"latency_ms_p50": None, "latency_ms_p95": None, "latency_ms_max": None}
    arr = np.asarray(lat)
    return {
        "latency_ms_p50": float(np.percentile(arr, 50)),
        "latency_ms_p95": float(np.percentile(arr, 95)),
        "latency_ms_max": float(arr.max()),
    }


def _measured_start(run_dir: Path) -> float | None:
    """The first application time of the measured stream's pushes (None: no warm-up)."""
    pushed = read_table(run_dir, "pushed")
    if pushed.num_rows == 0 or "phase" not in pushed.column_names:
        return None
    if not pc.any(pc.equal(pushed.column("phase"), "warmup")).as_py():
        return None
    measured = pushed.filter(pc.equal(pushed.column("phase"), "measure"))
    start = pc.min(measured.column("t_app_min_ms")).as_py() if measured.num_rows else None
    return None if start is None else float(start)


def final_result_metrics(run_dir: Path) -> dict[str, float | None]:
    """``final_result_ms``: last result's arrival minus the end of input (YABench's final
    result arrival; ``rsp_sdk.compare.yabench`` reports the same from its TimeMap)."""
    pushed = read_table(run_dir, "pushed")
    measured = pushed.filter(pc.equal(pushed.column("phase"), "measure"))
    outputs = read_table(run_dir, "outputs")
    if measured.num_rows == 0 or outputs.num_rows == 0:
        return {"final_result_ms": None}
    end = pc.max(measured.column("t_sys_end_ns")).as_py()
    last = pc.max(outputs.column("t_sys_ns")).as_py()
    if end is None or last is None:
        return {"final_result_ms": None}
    return {"final_result_ms": (int(last) - int(end)) / 1e6}


def resource_metrics(run_dir: Path) -> dict[str, float | None]:
    perf = read_table(run_dir, "perf")
    if perf.num_rows == 0:
        return {
            k: None
            for k in (
                "peak_rss_mb",
                "peak_heap_mb",
                "mcr_mb_s",
                "cpu_mean_pct",
                "threads_max",
                "gc_count",
            )
        }
    rss = perf.column("rss_bytes").to_numpy() / 1e6
    t = perf.column("t_sys_ns").to_numpy() / 1e9
    period = float(t.max() - t.min())
    gc = pc.max(perf.column("gc_count")).as_py()
    gc0 = pc.min(perf.column("gc_count")).as_py()
    heap = pc.max(perf.column("heap_used")).as_py()
    mcr = heap_mcr(perf)
    if mcr is None:  # no GC cycle seen (or no JVM): the RSS swing over the run
        mcr = float(rss.max() - rss.min()) / period if period > 0 else None
    return {
        "peak_rss_mb": float(rss.max()),
        "peak_heap_mb": None if heap is None else heap / 1e6,
        "mcr_mb_s": mcr,
        "cpu_mean_pct": _f(pc.mean(perf.column("cpu_percent")).as_py()),
        "threads_max": _f(pc.max(perf.column("threads")).as_py()),
        "gc_count": None if gc is None or gc0 is None else float(gc - gc0),
    }


def heap_mcr(perf: Any, cycles: int = 10) -> float | None:
    """Ren et al.'s memory consumption rate, MCR = (Max − Min) / Period in MB/s: Max and Min
    the mean heap just before and just after a garbage collection (a sample where the JVM's
    GC count rose) over the last ``cycles`` collections, Period the mean time between two
    maxima. Only a sampling interval where the GC count rose *and* the heap fell brackets a
    collection: V8 scavenges many times per interval, and its "after" sample then already holds
    a heap regrown past the "before" one (a negative MCR on every rsp-js cell). None without two
    such collections in the samples (or without a heap at all)."""
    rows = [
        r
        for r in perf.select(["t_sys_ns", "heap_used", "gc_count"]).to_pylist()
        if r["heap_used"] is not None and r["gc_count"] is not None
    ]
    before: list[tuple[int, float]] = []
    after: list[float] = []
    for prev, cur in pairwise(rows):
        if cur["gc_count"] > prev["gc_count"] and cur["heap_used"] < prev["heap_used"]:
            before.append((prev["t_sys_ns"], prev["heap_used"] / 1e6))
            after.append(cur["heap_used"] / 1e6)
    before, after = before[-cycles:], after[-cycles:]
    if len(before) < 2:
        return None
    period = (before[-1][0] - before[0][0]) / 1e9 / (len(before) - 1)
    high = sum(h for _, h in before) / len(before)
    low = sum(after) / len(after)
    return (high - low) / period if period > 0 else None


def run_metrics(run_dir: Path) -> dict[str, Any]:
    """Every performance column of cells.parquet for one run directory."""
    return {
        **feeding_metrics(run_dir),
        **latency_metrics(run_dir),
        **observation_latency_metrics(run_dir),
        **final_result_metrics(run_dir),
        **resource_metrics(run_dir),
    }
