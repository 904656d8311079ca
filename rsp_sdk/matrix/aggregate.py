"""What the matrix hands back beyond the cells: ``summary.json`` and ``mismatch.parquet``.

``summary.json``: per (engine, runtime, query, stream, feeding, rate), the verdicts over the
repetitions and, for each number, the median and the spread (max − min) — repetitions of a
timed run differ, and a single number would hide by how much.

``mismatch.parquet``: LSBench's mm(E1, E2) (``rsp_sdk.compare.lsbench``) for every ordered
pair of finished cells that ran the same query on the same stream and feeding in the same
repetition but on different engines or runtimes: how much of E1's output E2 does not produce
in order.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from itertools import permutations
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rsp_sdk.matrix.ratesearch import summary_entries
from rsp_sdk.matrix.store import Store
from rsp_sdk.util.atomic import atomic_path

NUMBERS = (
    "relations",
    "t0_ms",
    "precision",
    "recall",
    "delay_ms_p50",
    "rate_achieved",
    "engine_time_s",
    "time_per_triple_us",
    "latency_ms_p50",
    "latency_ms_p95",
    "latency_ms_max",
    "peak_rss_mb",
    "peak_heap_mb",
    "mcr_mb_s",
    "cpu_mean_pct",
    "threads_max",
    "gc_count",
    "wall_s",
)
GROUP = ("engine", "runtime", "query", "stream", "feeding", "rate")


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
        for n in NUMBERS:
            s = _stats(m.get(n) for m in members)
            if s is not None:
                entry[n] = s
        out.append(entry)
    return out


MISMATCH_SCHEMA = pa.schema(
    [
        ("query", pa.string()),
        ("stream", pa.string()),
        ("feeding", pa.string()),
        ("rate", pa.float64()),
        ("repetition", pa.int64()),
        ("e1", pa.string()),
        ("e2", pa.string()),
        ("e1_key", pa.string()),
        ("e2_key", pa.string()),
        ("partition", pa.string()),
        ("elements", pa.int64()),
        ("unmatched", pa.int64()),
        ("mm_percent", pa.float64()),
    ]
)


def mismatch_rows(store: Store, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.compare.lsbench import mismatch, partition_for
    from rsp_sdk.compare.relations import result_relations
    from rsp_sdk.engine.registry import get_adapter

    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["state"] == "ok" and r.get("run_dir"):
            groups[(r["query"], r["stream"], r["feeding"], r["rate"], r["repetition"])].append(r)
    out: list[dict[str, Any]] = []
    for (query, stream, feeding, rate, rep), members in groups.items():
        if len(members) < 2:
            continue
        loaded = {}
        for m in members:
            name = f"{m['engine']}@{m['runtime']}"
            rel = result_relations(load_answers(store.root / m["run_dir"]), source=name)
            loaded[name] = (rel, partition_for(get_adapter(m["engine"]).profile), m["key"])
        for a, b in permutations(sorted(loaded), 2):
            res = mismatch(loaded[a][0], loaded[b][0], partition=loaded[a][1], e1_name=a, e2_name=b)
            out.append(
                {
                    "query": query,
                    "stream": stream,
                    "feeding": feeding,
                    "rate": rate,
                    "repetition": rep,
                    "e1": a,
                    "e2": b,
                    "e1_key": loaded[a][2],
                    "e2_key": loaded[b][2],
                    "partition": res.partition.value,
                    "elements": res.elements,
                    "unmatched": res.unmatched,
                    "mm_percent": res.mm_percent,
                }
            )
    return out


def aggregate(store: Store, *, lsbench: bool = True) -> dict[str, Path]:
    """Rebuild cells.parquet, summary.json and (when asked) mismatch.parquet from cell.json."""
    rows = store.rows()
    written = {"cells": store.write_tables(rows)}
    target = store.root / "summary.json"
    with atomic_path(target) as tmp:
        entries = summary(rows) + summary_entries(store.root)  # + Rate_max searches, if any
        tmp.write_text(json.dumps(entries, indent=2, default=str) + "\n", encoding="utf-8")
    written["summary"] = target
    if lsbench:
        mm = mismatch_rows(store, rows)
        table = pa.Table.from_pylist(mm, schema=MISMATCH_SCHEMA)
        path = store.root / "mismatch.parquet"
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
        written["mismatch"] = path
    return written
