"""Relation-to-stream: Rstream, Istream, Dstream, empty relations and ``seq`` numbering.

Input: the ranked reports of every t0 (``rsp_sdk.oracle.s2r.report_table``) and the relations
evaluated per content key. Istream and Dstream work on *sets* of bindings, as the CSRBench
oracle does: Istream emits the bindings of report r absent from report r − 1 (the previous
report that was evaluated: a report dropped by the non-empty-content condition is no previous),
Dstream those of r − 1 absent from r, and nothing at all for the first report (there is no
previous relation). Rstream keeps the bag of solutions. A report whose emitted relation is empty
becomes one row with a null binding if the profile emits empty relations, else nothing; ``seq``
numbers the emitted relations of each t0 from 0.

Relations are small next to the stream (they are per report, deduplicated across t0), so this
runs vectorised in Arrow on the driver; bindings are canonical JSON strings, so binding
equality is string equality.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.model.profile import R2S
from rsp_sdk.oracle.bindings import binding_ids, texts_of, with_texts


def attach(relations: pa.Table, reports: pa.Table) -> pa.Table:
    """(t0, rank, binding) of every report, from relations keyed by (kc, kb, kr)."""
    rep = reports.select(["t0", "rank", "kc", "kb", "kr"])
    keyed, texts = _binding_ids(relations)
    joined = keyed.join(rep, keys=["kc", "kb", "kr"], join_type="inner")
    return _binding_texts(joined.select(["t0", "rank", "bid"]), texts)


def _binding_ids(table: pa.Table) -> tuple[pa.Table, pa.Array]:
    """``table`` with its binding column as int64 ids (``bid``), and the texts they index.

    Joins then carry 8 bytes a row instead of a dictionary column: Acero slices a payload
    column into its output batches, and each later step that combines them compared the
    ~400 MB dictionary of every batch (seconds at 21 M triples)."""
    bids, texts = binding_ids(table.column("binding"))
    at = table.schema.get_field_index("binding")
    return table.set_column(at, "bid", bids), texts


def _binding_texts(table: pa.Table, texts: pa.Array) -> pa.Table:
    """``_binding_ids`` undone: ``bid`` back to a (dictionary-encoded) binding column."""
    at = table.schema.get_field_index("bid")
    return table.set_column(at, "binding", with_texts(table.column("bid"), texts))


def _distinct(table: pa.Table, keys: list[str]) -> pa.Table:
    return table.group_by(keys, use_threads=False).aggregate([]).select(keys)


def apply_r2s(relations: pa.Table, r2s: R2S) -> pa.Table:
    """(t0, rank, binding) per report → (t0, rank, binding) emitted at each report."""
    if r2s is R2S.RSTREAM:
        return relations
    # bindings joined as integer ids, not strings: the joins' hash tables then hold 8 bytes
    # per row, not a copy of each binding's text (gigabytes at 21 M triples)
    if not relations.column("binding").num_chunks:  # an empty relation
        return relations.select(["t0", "rank", "binding"])
    keyed, texts = _binding_ids(relations.select(["t0", "rank", "binding"]))
    keys = ["t0", "rank", "bid"]
    cur = _distinct(keyed, keys)
    nxt = cur.set_column(1, "rank", pc.add(cur.column("rank"), 1))
    if r2s is R2S.ISTREAM:
        out = cur.join(nxt, keys=keys, join_type="left anti")
    else:
        out = nxt.join(cur, keys=keys, join_type="left anti")
    return _binding_texts(out, texts)


def repeated_r2s(relations: pa.Table, evaluated: pa.Table, reports: pa.Table, r2s: R2S) -> pa.Table:
    """``apply_r2s(attach(...))`` for Istream/Dstream when most reports repeat a relation.

    ``evaluated`` lists the content keys (kc, kb, kr) where the relation was evaluated, the
    first of each window group (kc) among them; every other key has the relation of the last
    evaluated key before it in its group, in (kb, kr) order (pyoxigraph's change points).
    ``relations`` holds the evaluated keys' bindings only. A report whose previous report (same
    t0, rank − 1) has the same source has the same relation, so Istream and Dstream emit nothing
    there: only the other reports, and the reports just before them, are joined to their
    bindings — not every report of every t0 (ren16 Q3 on CQELS: 2.5 M reports, each with the
    window's solutions so far)."""
    rep = _with_sources(reports.select(["t0", "rank", "kc", "kb", "kr"]), evaluated)
    t0, rank, kc, skb, skr = (rep.column(c).to_numpy() for c in ("t0", "rank", "kc", "skb", "skr"))
    follows = (t0[1:] == t0[:-1]) & (rank[1:] == rank[:-1] + 1)
    same = follows & (kc[1:] == kc[:-1]) & (skb[1:] == skb[:-1]) & (skr[1:] == skr[:-1])
    changed = np.r_[True, ~same] if len(t0) else np.zeros(0, dtype=bool)
    before_change = np.r_[changed[1:] & follows, False] if len(t0) else changed
    sub = rep.filter(pa.array(changed | before_change)).select(["t0", "rank", "kc", "skb", "skr"])
    bound, texts = _binding_ids(relations.select(["kc", "kb", "kr", "binding"]))
    bound = bound.rename_columns(["kc", "skb", "skr", "bid"])
    per_report = sub.join(bound, keys=["kc", "skb", "skr"], join_type="inner")
    emitted = apply_r2s(_binding_texts(per_report.select(["t0", "rank", "bid"]), texts), r2s)
    own = rep.filter(pa.array(changed)).select(["t0", "rank"])
    keyed, texts = _binding_ids(emitted.select(["t0", "rank", "binding"]))
    return _binding_texts(keyed.join(own, keys=["t0", "rank"], join_type="inner"), texts)


def _with_sources(reports: pa.Table, evaluated: pa.Table) -> pa.Table:
    """(t0, rank, kc, kb, kr, skb, skr) in (t0, rank) order: each report with its key's last
    evaluated key (kc, skb, skr) at or before it.

    The keys are ranked into one int64 each and every report looks its source up by binary
    search (no distinct, join and sort of the 2.25 M reports of ren16 Q3 on CQELS through
    Arrow's hash tables: 9–17 s loaded); ``_sources`` when the ranks' product exceeds int64."""
    names = ["kc", "kb", "kr"]
    q = [reports.column(c).to_numpy() for c in names]
    e = [evaluated.column(c).to_numpy() for c in names]
    ranked = [
        np.unique(np.concatenate([a, b]), return_inverse=True) for a, b in zip(q, e, strict=True)
    ]
    sizes = [len(u) for u, _ in ranked]
    if float(sizes[0]) * sizes[1] * sizes[2] >= 2.0**62:
        src = _sources(reports.select(names), evaluated)
        rep = reports.join(src, keys=names, join_type="inner")
        return rep.sort_by([("t0", "ascending"), ("rank", "ascending")])
    n = len(q[0])
    inv = [inverse.astype(np.int64) for _, inverse in ranked]
    flat = (inv[0] * sizes[1] + inv[1]) * sizes[2] + inv[2]
    mine, theirs = flat[:n], np.unique(flat[n:])
    at = np.searchsorted(theirs, mine, side="right") - 1
    group = theirs[np.maximum(at, 0)] // (sizes[1] * sizes[2])
    if n and (at.min() < 0 or (group != inv[0][:n]).any()):
        raise AssertionError("a window group whose first event was not evaluated")
    found = theirs[at] if n else theirs[:0]
    kb_rank, kr_rank = (found // sizes[2]) % sizes[1], found % sizes[2]
    rep = reports.append_column("skb", pa.array(ranked[1][0][kb_rank], pa.int64()))
    rep = rep.append_column("skr", pa.array(ranked[2][0][kr_rank], pa.int64()))
    t0, rank = rep.column("t0").to_numpy(), rep.column("rank").to_numpy()
    in_order = (t0[1:] > t0[:-1]) | ((t0[1:] == t0[:-1]) & (rank[1:] > rank[:-1]))
    if not in_order.all():
        rep = rep.take(pa.array(np.lexsort((rank, t0))))
    return rep


def _sources(keys: pa.Table, evaluated: pa.Table) -> pa.Table:
    """(kc, kb, kr, skb, skr): each key's last evaluated key (kc, skb, skr) at or before it."""
    names = ["kc", "kb", "kr"]
    both = pa.concat_tables(
        [
            _flag(_distinct(keys, names), 0),
            _flag(_distinct(evaluated, names), 1),
        ]
    )
    both = both.group_by(names, use_threads=False).aggregate([("ev", "max")])
    both = both.sort_by([(c, "ascending") for c in names])
    kc, kb, kr = (both.column(c).to_numpy() for c in names)
    at = np.where(both.column("ev_max").to_numpy() == 1, np.arange(len(kc)), -1)
    at = np.maximum.accumulate(at) if len(at) else at
    if len(at) and (at.min() < 0 or (kc[at] != kc).any()):
        raise AssertionError("a window group whose first event was not evaluated")
    return pa.table({"kc": kc, "kb": kb, "kr": kr, "skb": kb[at], "skr": kr[at]})


def _flag(table: pa.Table, value: int) -> pa.Table:
    return table.append_column("ev", pa.array(np.full(table.num_rows, value, dtype=np.int8)))


def finalize(
    emitted: pa.Table, reports: pa.Table, *, emits_empty: bool, skip_first: bool
) -> pa.Table:
    """Rows (t0, seq, t_app, open, close, n, binding), sorted; empty relations added.

    Bindings go through the joins and the sort as ids (``_binding_ids``; the sort by each
    text's rank among the distinct texts), and each row's text is copied once, at the end:
    at 21 M triples the joins and the sort had moved 1.5 M texts of ~290 bytes three times."""
    emitted, texts = _binding_ids(emitted)
    # the texts' order does not depend on the joins below: it is sorted on the other core
    with ThreadPoolExecutor(1, thread_name_prefix="rsp-oracle-sort") as pool:
        order = pool.submit(pc.sort_indices, texts)
        rows = _numbered_rows(emitted, reports, emits_empty=emits_empty, skip_first=skip_first)
        text_order = order.result().to_numpy()
    # a text's rank among the distinct texts orders as the text does; an empty relation's
    # null binding comes last, as in a sort by the texts
    text_rank = np.empty(len(texts) + 1, np.int64)
    text_rank[text_order] = np.arange(len(texts))
    text_rank[-1] = len(texts)
    bid = pc.fill_null(rows.column("bid"), len(texts)).to_numpy()
    rows = rows.append_column("text_rank", pa.array(text_rank[bid]))
    rows = rows.sort_by([("t0", "ascending"), ("seq", "ascending"), ("text_rank", "ascending")])
    out = rows.select(["t0", "seq", "t_app", "open", "close", "n"])
    return out.append_column("binding", texts_of(rows.column("bid"), texts))


def _numbered_rows(
    emitted: pa.Table, reports: pa.Table, *, emits_empty: bool, skip_first: bool
) -> pa.Table:
    """``finalize``'s rows (binding ids ``bid``) with their report's columns and ``seq``, the
    relation's number among the emitting reports of its t0; empty relations added."""
    rep = reports.select(["t0", "rank", "t_app", "open", "close", "n"])
    if skip_first:
        rep = rep.filter(pc.greater(rep.column("rank"), 1))
    rows = emitted.join(rep, keys=["t0", "rank"], join_type="inner")
    having = _distinct(rows.select(["t0", "rank"]), ["t0", "rank"])
    if emits_empty:
        empty = rep.join(having, keys=["t0", "rank"], join_type="left anti")
        empty = empty.append_column("bid", pa.nulls(empty.num_rows, pa.int64()))
        rows = pa.concat_tables([rows.select(empty.column_names), empty])
        emitting = rep
    else:
        emitting = rep.join(having, keys=["t0", "rank"], join_type="inner")
    emitting = emitting.select(["t0", "rank"]).sort_by([("t0", "ascending"), ("rank", "ascending")])
    t0 = emitting.column("t0").to_numpy()
    starts = np.r_[0, np.flatnonzero(np.diff(t0)) + 1] if len(t0) else np.zeros(0, np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, len(t0)])) if len(t0) else starts
    seq = np.arange(len(t0), dtype=np.int64) - first
    emitting = emitting.append_column("seq", pa.array(seq, pa.int64()))
    return rows.join(emitting, keys=["t0", "rank"], join_type="inner")


def islands(t0: np.ndarray, key: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pa.Table:
    """Merge per (t0, key) the report-rank intervals [lo, hi] in which a binding is present.

    Returns (t0, key, start, end) for every maximal run of consecutive reports.
    """
    if len(lo) == 0:
        return pa.table(
            {
                "t0": pa.array([], pa.int64()),
                "key": pa.array([], pa.int64()),
                "start": pa.array([], pa.int64()),
                "end": pa.array([], pa.int64()),
            }
        )
    order = np.lexsort((hi, lo, key, t0))
    t0, key, lo, hi = t0[order], key[order], lo[order], hi[order]
    group_change = np.r_[True, (t0[1:] != t0[:-1]) | (key[1:] != key[:-1])]
    # running maximum of hi within each (t0, key) group: offset every group above the previous
    # ones so one cumulative maximum never carries a value across groups
    group_id = np.cumsum(group_change).astype(np.int64) - 1
    scale = np.int64(hi.max() + 2)
    run_max = np.maximum.accumulate(group_id * scale + hi) - group_id * scale
    prev_max = np.r_[np.int64(-2), run_max[:-1]]
    new = group_change | (lo > prev_max + 1)
    idx = np.flatnonzero(new)
    ends = np.maximum.reduceat(hi, idx)
    return pa.table(
        {
            "t0": pa.array(t0[idx], pa.int64()),
            "key": pa.array(key[idx], pa.int64()),
            "start": pa.array(lo[idx], pa.int64()),
            "end": pa.array(ends.astype(np.int64), pa.int64()),
        }
    )


def temporal_emissions(
    intervals: pa.Table, r2s: R2S, event_driven: bool, totals: dict[int, int]
) -> pa.Table:
    """(t0, rank, binding) emitted, from presence intervals (t0, lo, hi, binding)."""
    binding = intervals.column("binding").combine_chunks()
    if event_driven:
        return pa.table(
            {
                "t0": intervals.column("t0"),
                "rank": intervals.column("lo"),
                "binding": binding,
            }
        )
    ids, dictionary = binding_ids(binding)
    runs = islands(
        intervals.column("t0").to_numpy(),
        ids.to_numpy(zero_copy_only=False),
        intervals.column("lo").to_numpy(),
        intervals.column("hi").to_numpy(),
    )
    names = with_texts(runs.column("key"), dictionary)
    if r2s is R2S.ISTREAM:
        return pa.table({"t0": runs.column("t0"), "rank": runs.column("start"), "binding": names})
    if r2s is R2S.DSTREAM:
        rank = pc.add(runs.column("end"), 1)
        total = pa.array([totals[int(t)] for t in runs.column("t0").to_pylist()], pa.int64())
        out = pa.table({"t0": runs.column("t0"), "rank": rank, "binding": names})
        return out.filter(pc.less_equal(rank, total))
    raise ValueError("the temporal-join path produces Istream, Dstream or event-driven reports")
