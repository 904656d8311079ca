"""What the matrix hands back beyond the cells: ``summary.json`` and ``mismatch.parquet``.

``summary.json``: per (engine, runtime, query, stream, feeding, rate), the verdicts over the
repetitions and, for each number, the median and the spread (max − min) over the repetitions
that ran to the end (state ok; wall time over all) — repetitions of a timed run differ, and a
single number would hide by how much.

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
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rsp_sdk.matrix.axes import who
from rsp_sdk.matrix.identity import IDENTITY_AXES
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
        ("time_scale", pa.float64()),
        ("instances", pa.int64()),
    ]
)


COMPARABILITY_SCHEMA = pa.schema(
    [
        ("query", pa.string()),
        ("stream", pa.string()),
        ("feeding", pa.string()),
        ("rate", pa.float64()),
        ("repetition", pa.int64()),
        ("engines", pa.string()),
        ("max_mm_percent", pa.float64()),
        ("epsilon_percent", pa.float64()),
        ("comparable", pa.bool_()),
        ("time_scale", pa.float64()),
        ("instances", pa.int64()),
    ]
)


def mismatch_rows(
    store: Store, rows: list[dict[str, Any]], epsilon_percent: float = 5.0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(mm per ordered pair, LSBench comp(engines, Q, R, ε) per group of two or more)."""
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.compare.lsbench import comparability, partition_for
    from rsp_sdk.compare.relations import result_relations
    from rsp_sdk.engine.registry import get_adapter

    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["state"] == "ok" and r.get("run_dir"):
            axes = (r["query"], r["stream"], r["feeding"], r["rate"], r["repetition"])
            groups[(*axes, r.get("time_scale"), r.get("instances"))].append(r)
    out: list[dict[str, Any]] = []
    comps: list[dict[str, Any]] = []
    for (query, stream, feeding, rate, rep, scale, instances), members in groups.items():
        if len(members) < 2:
            continue
        loaded = {}
        keys = {}
        for m in members:
            name = who(m)
            rel = result_relations(load_answers(store.root / m["run_dir"]), source=name)
            loaded[name] = (rel, partition_for(get_adapter(m["engine"]).profile))
            keys[name] = m["key"]
        comp = comparability(loaded, epsilon_percent)
        where: dict[str, Any] = {"query": query, "stream": stream, "feeding": feeding}
        where.update(rate=rate, repetition=rep, time_scale=scale, instances=instances)
        for res in comp.pairs:
            a, b = res.e1, res.e2
            out.append(
                {
                    **where,
                    "e1": a,
                    "e2": b,
                    "e1_key": keys[a],
                    "e2_key": keys[b],
                    "partition": res.partition.value,
                    "elements": res.elements,
                    "unmatched": res.unmatched,
                    "mm_percent": res.mm_percent,
                }
            )
        comps.append(
            {
                **where,
                "engines": ", ".join(sorted(loaded)),
                "max_mm_percent": comp.max_mm_percent,
                "epsilon_percent": epsilon_percent,
                "comparable": comp.comparable,
            }
        )
    return out, comps


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
        mm, comps = mismatch_rows(store, rows, epsilon_percent)
        for name, got, schema in (
            ("mismatch", mm, MISMATCH_SCHEMA),
            ("comparability", comps, COMPARABILITY_SCHEMA),
        ):
            path = store.root / f"{name}.parquet"
            with atomic_path(path) as tmp:
                pq.write_table(pa.Table.from_pylist(got, schema=schema), tmp)
            written[name] = path
    return written
