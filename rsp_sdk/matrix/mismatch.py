"""The matrix's LSBench tables: ``mismatch.parquet`` and ``comparability.parquet``.

mm(E1, E2) (``rsp_sdk.compare.lsbench``) for every ordered pair of finished cells that ran the
same query on the same stream and feeding in the same repetition but on different engines or
runtimes: how much of E1's output E2 does not produce in order; comp(engines, Q, R, ε) per such
group.

The tables are rebuilt after every ``rsp matrix run``, also one that ran a single cell. Loading
a cell's output is most of the cost (YABench's folder of 1,000 cells: over nine minutes), so a
pair whose two cells are those of the previous mismatch.parquet — same key, same stamp — keeps
its row, and a group loads only the cells of the pairs it computes again. Comparability is a
function of the pairs and ε, so it is always recomputed from them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from itertools import permutations
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rsp_sdk.compare.lsbench import MismatchResult, comparability_of, mismatch, partition_for
from rsp_sdk.compare.relations import RelationStream, result_relations
from rsp_sdk.compare.vocab import Partition
from rsp_sdk.matrix.axes import who
from rsp_sdk.matrix.store import Store
from rsp_sdk.util.atomic import atomic_path

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
        ("blocks", pa.int64()),
        ("first_unmatched_block", pa.int64()),
        ("e1_stamp", pa.string()),
        ("e2_stamp", pa.string()),
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

#: (e1_key, e1_stamp, e2_key, e2_stamp) → a row of an earlier mismatch.parquet
Known = dict[tuple[str, str, str, str], dict[str, Any]]


def stamp(root: Path, row: dict[str, Any]) -> str:
    """What a pair's row was computed from: the cell's start and its output's modification
    time. A rerun cell keeps its key but not both (started_at has whole seconds: a toy cell
    rerun within one second starts at the same one, its fresh outputs directory does not)."""
    outputs = root / str(row["run_dir"]) / "outputs.parquet"
    mtime = outputs.stat().st_mtime_ns if outputs.exists() else 0
    return f"{row.get('started_at') or ''}|{mtime}"


def known_pairs(path: Path) -> Known:
    """The rows of the mismatch.parquet at ``path`` by what they were computed from (none from
    a file written before the stamps, or one that cannot be read: those are recomputed)."""
    try:
        table = pq.read_table(path) if path.exists() else None
    except (OSError, pa.ArrowInvalid):
        return {}
    if table is None or not {"e1_stamp", "e2_stamp"} <= set(table.schema.names):
        return {}
    return {(r["e1_key"], r["e1_stamp"], r["e2_key"], r["e2_stamp"]): r for r in table.to_pylist()}


def mismatch_rows(
    store: Store,
    rows: list[dict[str, Any]],
    epsilon_percent: float = 5.0,
    known: Known | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(mm per ordered pair, LSBench comp(engines, Q, R, ε) per group of two or more); a pair
    in ``known`` (``known_pairs``) is taken from there."""
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
        where: dict[str, Any] = {"query": query, "stream": stream, "feeding": feeding}
        where.update(rate=rate, repetition=rep, time_scale=scale, instances=instances)
        by_name = {who(m): {**m, "stamp": stamp(store.root, m)} for m in members}
        pairs = _group_pairs(store, by_name, known or {})
        comp = comparability_of(pairs, epsilon_percent)
        out.extend({**where, **_pair_row(res, by_name)} for res in pairs)
        comps.append(
            {
                **where,
                "engines": ", ".join(sorted(by_name)),
                "max_mm_percent": comp.max_mm_percent,
                "epsilon_percent": epsilon_percent,
                "comparable": comp.comparable,
            }
        )
    return out, comps


def _group_pairs(
    store: Store, by_name: dict[str, dict[str, Any]], known: Known
) -> list[MismatchResult]:
    """Every ordered pair of the group, in name order (mm is not symmetric)."""
    load = _loader(store, by_name)
    pairs = []
    for a, b in permutations(sorted(by_name), 2):
        ma, mb = by_name[a], by_name[b]
        row = known.get((ma["key"], ma["stamp"], mb["key"], mb["stamp"]))
        if row is not None and (row["e1"], row["e2"]) == (a, b):
            pairs.append(_known_result(row))
            continue
        (rel_a, part), (rel_b, _) = load(a), load(b)
        pairs.append(mismatch(rel_a, rel_b, partition=part, e1_name=a, e2_name=b))
    return pairs


def _loader(
    store: Store, by_name: dict[str, dict[str, Any]]
) -> Callable[[str], tuple[RelationStream, Partition]]:
    """A cell's result relations and output partition, read at most once and only if asked."""
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.engine.registry import get_adapter

    cache: dict[str, tuple[RelationStream, Partition]] = {}

    def load(name: str) -> tuple[RelationStream, Partition]:
        if name not in cache:
            m = by_name[name]
            rel = result_relations(load_answers(store.root / m["run_dir"]), source=name)
            cache[name] = (rel, partition_for(get_adapter(m["engine"]).profile))
        return cache[name]

    return load


def _known_result(row: dict[str, Any]) -> MismatchResult:
    fields = ("e1", "e2", "partition", "blocks", "elements", "unmatched", "mm_percent")
    return MismatchResult(
        **{f: row[f] for f in fields}, first_unmatched_block=row["first_unmatched_block"]
    )


def _pair_row(res: MismatchResult, by_name: dict[str, dict[str, Any]]) -> dict[str, Any]:
    a, b = by_name[res.e1], by_name[res.e2]
    return {
        "e1": res.e1,
        "e2": res.e2,
        "e1_key": a["key"],
        "e2_key": b["key"],
        "partition": res.partition.value,
        "elements": res.elements,
        "unmatched": res.unmatched,
        "mm_percent": res.mm_percent,
        "blocks": res.blocks,
        "first_unmatched_block": res.first_unmatched_block,
        "e1_stamp": a["stamp"],
        "e2_stamp": b["stamp"],
    }


def write_tables(
    store: Store, rows: list[dict[str, Any]], epsilon_percent: float
) -> dict[str, Path]:
    """mismatch.parquet and comparability.parquet, atomically, reusing the pairs still valid."""
    target = store.root / "mismatch.parquet"
    mm, comps = mismatch_rows(store, rows, epsilon_percent, known_pairs(target))
    written = {}
    for name, got, schema in (
        ("mismatch", mm, MISMATCH_SCHEMA),
        ("comparability", comps, COMPARABILITY_SCHEMA),
    ):
        path = store.root / f"{name}.parquet"
        with atomic_path(path) as tmp:
            pq.write_table(pa.Table.from_pylist(got, schema=schema), tmp)
        written[name] = path
    return written
