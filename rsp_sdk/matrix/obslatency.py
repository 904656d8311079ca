"""CityBench's latency: how long after an observation was sent a result first names it.

The window-close latency of ``rsp_sdk.matrix.metrics`` needs the application time a relation
reports; engines that window their own wall clock (CQELS, C-SPARQL 0.9) give none, so CityBench's
concurrency curves had no latency line for them. CityBench (Ali et al., ISWC 2015) measures
something every engine's output carries: each result names observations (``?obId``), and the
latency of an observation is the arrival of the first result naming it minus the moment it was
sent (``CSPARQLResultObserver`` / ``CQELSResultListener``: first sighting only, results seen
before skipped).

Here, read back from a run directory like every other metric:

* an observation is an IRI that is the subject of stream triples at one (stream, time) only —
  a sensor or station IRI that recurs at every timestamp names no single sending moment;
* it was sent at the start of the push that carried that (stream, time) (``pushed.parquet``);
* a result names it when an IRI binding of an output row equals it; the first row of each
  (query, observation) counts, so an Rstream engine repeating a row in later windows does not
  inflate it. CityBench keys its first sighting by observation alone, across the queries of a
  run; per query here, so each of N simultaneous instances is measured, not only the fastest.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from rsp_sdk.run.recorder import TABLES, read_table
from rsp_sdk.util.atomic import atomic_path

COLUMNS = ("obs_latency_ms_p50", "obs_latency_ms_p95", "obs_latency_ms_max")


def observation_latency_metrics(run_dir: Path) -> dict[str, float | None]:
    """p50, p95 and max of ``observation_latencies`` (None each when no result names one)."""
    lat = observation_latencies(run_dir)
    if not lat:
        return dict.fromkeys(COLUMNS)
    arr = np.asarray(lat)
    return {
        "obs_latency_ms_p50": float(np.percentile(arr, 50)),
        "obs_latency_ms_p95": float(np.percentile(arr, 95)),
        "obs_latency_ms_max": float(arr.max()),
    }


def with_observation_latency(row: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """``row`` (a cell.json) with the observation latency columns: a cell recorded before them
    gets them computed once from its run directory and kept beside it (``CACHE``, derived like
    cells.parquet; not kept where the folder is read-only)."""
    if COLUMNS[0] in row or not run_dir.is_dir():
        return row
    cache = run_dir / CACHE
    if cache.exists():
        return {**row, **json.loads(cache.read_text(encoding="utf-8"))}
    found = observation_latency_metrics(run_dir)
    with contextlib.suppress(OSError), atomic_path(cache) as tmp:
        tmp.write_text(json.dumps(found) + "\n", encoding="utf-8")
    return {**row, **found}


CACHE = "obs_latency.json"


def observation_latencies(run_dir: Path) -> list[float]:
    """One latency (ms) per (query, observation) some result names, in no particular order."""
    sent = _sent(run_dir)
    if not sent:
        return []
    seen: dict[tuple[str, str], int] = {}
    for query, binding, at in _first_rows(run_dir):
        for iri in _iris(binding):
            if iri in sent and at < seen.get((query, iri), at + 1):
                seen[(query, iri)] = at
    return [(at - sent[iri]) / 1e6 for (_, iri), at in seen.items()]


def relation_lags(run_dir: Path) -> list[tuple[str, int, float, float]]:
    """(query, seq, ms from the first push, lag ms) of every relation naming an observation
    that arrived while the stream was being pushed, in arrival order per query: the lag is the
    relation's arrival minus the push of the newest observation it names — for an engine
    reporting no application time, the stand-in for the time since its window closed
    (``metrics.window_latencies``), which the Rate_max STEP rule reads. The newest observation
    was sent at or before the close of the window that holds it, so the lag bounds the time
    past that close from above. A relation arriving after the last push is left out: a
    wall-clock window closing after the stream ended waited on the clock, not on the engine,
    and the lag would count that wait."""
    sent = _sent(run_dir)
    path = run_dir / "outputs.parquet"
    if not sent or not path.exists():
        return []
    start = min(sent.values())
    end = int(pc.max(read_table(run_dir, "pushed").column("t_sys_end_ns")).as_py())
    newest: dict[tuple[str, int], int] = {}
    arrival: dict[tuple[str, int], int] = {}
    table = ds.dataset(path, schema=TABLES["outputs"], format="parquet")
    for batch in table.to_batches(columns=["query", "seq", "t_sys_ns", "binding"]):
        for query, seq, at, binding in zip(*(c.to_pylist() for c in batch.columns), strict=True):
            if at is None or binding is None:
                continue
            key = (query, seq)
            arrival[key] = min(at, arrival.get(key, at))
            for iri in _iris(binding):
                if iri in sent and sent[iri] > newest.get(key, -1):
                    newest[key] = sent[iri]
    out = [
        (q, seq, (newest[q, seq] - start) / 1e6, (arrival[q, seq] - t) / 1e6)
        for (q, seq), t in newest.items()
        if arrival[q, seq] <= end
    ]
    return sorted(out, key=lambda r: (r[0], arrival[r[0], r[1]], r[1]))


def _sent(run_dir: Path) -> dict[str, int]:
    """``sent_at`` of the run's stream and pushes (empty without them)."""
    stream = _stream_path(run_dir)
    pushed = read_table(run_dir, "pushed")
    if stream is None or pushed.num_rows == 0:
        return {}
    return sent_at(pq.read_table(stream, columns=["stream", "t_app_ms", "s"]), pushed)


def _first_rows(run_dir: Path) -> Iterator[tuple[str, str, int]]:
    """(query, binding, first arrival) of the output rows, a batch at a time: an engine's
    output can hold gigabytes of bindings (rsp-rs on CityBench Q2 × 20: 400 MB of Parquet),
    past what one in-memory grouping of the whole column holds (pyarrow's 2 GiB string
    offsets: the process crashed). A row repeated across batches is read again, harmlessly."""
    path = run_dir / "outputs.parquet"
    if not path.exists():
        return
    table = ds.dataset(path, schema=TABLES["outputs"], format="parquet")
    for batch in table.to_batches(columns=["query", "binding", "t_sys_ns"], batch_size=BATCH):
        valid = pc.and_(pc.is_valid(batch.column("binding")), pc.is_valid(batch.column("t_sys_ns")))
        part = pa.Table.from_batches([batch]).filter(valid)
        first = part.group_by(["query", "binding"]).aggregate([("t_sys_ns", "min")])
        yield from zip(
            first.column("query").to_pylist(),
            first.column("binding").to_pylist(),
            first.column("t_sys_ns_min").to_pylist(),
            strict=True,
        )


BATCH = 65_536  # output rows grouped at once


def sent_at(stream: pa.Table, pushed: pa.Table) -> dict[str, int]:
    """Observation IRI → start (monotonic ns) of the push that carried it.

    A push carries one stream's elements in time order, so an element at time t went with the
    first push of its stream whose latest time reaches t."""
    iris = stream.filter(pc.starts_with(stream.column("s"), "<"))
    per = iris.group_by("s").aggregate(
        [("t_app_ms", "min"), ("t_app_ms", "max"), ("stream", "min"), ("stream", "max")]
    )
    one = per.filter(
        pc.and_(
            pc.equal(per.column("t_app_ms_min"), per.column("t_app_ms_max")),
            pc.equal(per.column("stream_min"), per.column("stream_max")),
        )
    )
    sent: dict[str, int] = {}
    for name in pc.unique(one.column("stream_min")).to_pylist():
        pushes = pushed.filter(pc.equal(pushed.column("stream"), name)).sort_by("t_sys_start_ns")
        if pushes.num_rows == 0:
            continue
        reach = np.maximum.accumulate(pushes.column("t_app_max_ms").to_numpy())
        starts = pushes.column("t_sys_start_ns").to_numpy()
        mine = one.filter(pc.equal(one.column("stream_min"), name))
        at = np.searchsorted(reach, mine.column("t_app_ms_min").to_numpy(), side="left")
        for term, i in zip(mine.column("s").to_pylist(), at.tolist(), strict=True):
            if i < len(starts):  # an element past the last push was never sent
                sent[term[1:-1]] = int(starts[i])
    return sent


def _iris(binding: str) -> list[str]:
    """The IRI values of one output row (SPARQL JSON results: ``{"var": {"type": "uri", …}}``)."""
    row: dict[str, Any] = json.loads(binding)
    return [
        str(term["value"])
        for term in row.values()
        if isinstance(term, dict) and term.get("type") == "uri"
    ]


def _stream_path(run_dir: Path) -> Path | None:
    """The stream file the run pushed: its config's path, else (a results folder moved
    elsewhere) ``RESULTS/inputs/<sha256>.parquet`` beside the cell."""
    config = run_dir / "config.json"
    if not config.exists():
        return None
    doc = json.loads(config.read_text(encoding="utf-8")).get("stream") or {}
    path = Path(doc["path"]) if doc.get("path") else None
    if path is not None and path.exists():
        return path
    moved = run_dir.parent.parent / "inputs" / f"{doc.get('sha256')}.parquet"
    return moved if moved.exists() else None
