"""What the matrix hands back beyond the cells: ``cells.parquet``, ``summary.json`` and, where
the spec asks, the LSBench tables (``rsp_sdk.matrix.mismatch``).

``summary.json``: per (engine, runtime, query, stream, feeding, rate), the verdicts over the
repetitions and, for each number, the median and the spread (max − min) over the repetitions
that ran to the end (state ok; wall time over all) — repetitions of a timed run differ, and a
single number would hide by how much.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rsp_sdk.matrix.identity import IDENTITY_AXES
from rsp_sdk.matrix.mismatch import write_tables
from rsp_sdk.matrix.obslatency import with_observation_latency
from rsp_sdk.matrix.ratesearch import summary_entries
from rsp_sdk.matrix.store import Store
from rsp_sdk.util.atomic import atomic_path

NUMBERS = (
    "relations",
    "t0_ms",
    "precision",
    "recall",
    "delay_ms_p50",
    "gracious_precision",
    "gracious_recall",
    "final_result_ms",
    "rate_achieved",
    "engine_time_s",
    "time_per_triple_us",
    "latency_ms_p50",
    "latency_ms_p95",
    "latency_ms_max",
    "obs_latency_ms_p50",
    "obs_latency_ms_p95",
    "obs_latency_ms_max",
    "peak_rss_mb",
    "peak_heap_mb",
    "mcr_mb_s",
    "cpu_mean_pct",
    "threads_max",
    "gc_count",
    "wall_s",
)
#: a series: a cell without its repetition (the experiment too: YABench's E3 and E4 run one
#: query on one stream)
GROUP = tuple(a for a in IDENTITY_AXES if a != "repetition")


def _stats(values: Iterable[Any]) -> dict[str, float] | None:
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "spread": max(vals) - min(vals), "n": len(vals)}


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[tuple(r.get(k) for k in GROUP)].append(r)
    out = []
    for key, members in groups.items():
        entry: dict[str, Any] = dict(zip(GROUP, key, strict=True))
        entry["repetitions"] = len(members)
        entry["states"] = sorted({m["state"] for m in members})
        entry["verdicts"] = sorted({m.get("verdict") or "not_judged" for m in members})
        entry["reason"] = next((m["reason"] for m in members if m.get("reason")), None)
        done = [m for m in members if m["state"] == "ok"]
        for n in NUMBERS:  # a failed or timed-out run's numbers describe the part that ran
            s = _stats(m.get(n) for m in (members if n == "wall_s" else done))
            if s is not None:
                entry[n] = s
        out.append(entry)
    return out


def _with_time_scale(root: Path, row: dict[str, Any]) -> dict[str, Any]:
    """cell.json written before the time_scale column: read it from the run's config.json."""
    if "time_scale" in row or not row.get("run_dir"):
        return row
    config = root / row["run_dir"] / "config.json"
    feeder = json.loads(config.read_text()).get("feeder", {}) if config.exists() else {}
    return {**row, "time_scale": feeder.get("time_scale")}


def aggregate(
    store: Store, *, lsbench: bool = True, epsilon_percent: float = 5.0
) -> dict[str, Path]:
    """Rebuild cells.parquet (every cell.json), summary.json and (when asked) mismatch.parquet
    and comparability.parquet (each cell once: ``rsp_sdk.matrix.identity``) from cell.json."""
    every = [
        with_observation_latency(_with_time_scale(store.root, r), store.root / r["run_dir"])
        if r.get("run_dir")
        else r
        for r in store.rows()
    ]
    written = {"cells": store.write_tables(every)}
    # a cell re-keyed on a resumed matrix has two cell.json: summarised once (its newest)
    current = {r["key"] for r in store.current_rows()}
    rows = [r for r in every if r["key"] in current]
    target = store.root / "summary.json"
    with atomic_path(target) as tmp:
        entries = summary(rows) + summary_entries(store.root)  # + Rate_max searches, if any
        tmp.write_text(json.dumps(entries, indent=2, default=str) + "\n", encoding="utf-8")
    written["summary"] = target
    if lsbench:
        written.update(write_tables(store, rows, epsilon_percent))
    return written
