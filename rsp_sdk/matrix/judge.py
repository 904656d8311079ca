"""A cell's judgement: its recorded output against the oracle's expected relations.

The verdict is CSRBench's, from ``rsp_sdk.csrbench.judge`` (the single judging function: t0
candidates, contiguous-part rule, no-output rule) against the oracle's output from the
matrix's cache; with the YABench metric, per-window precision, recall and delay too
(``windows.parquet``). A judgement that fails is recorded, never raised: the engine's run
stays, and a rerun judges it again from the recording.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from rsp_sdk.compare.parts import ExpectedTable, metrics_t0
from rsp_sdk.compare.wallclock import (
    scaled_windows,
    stream_timeline,
    wall_clock_paced,
    window_scale,
)
from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.matrix.inputs import PreparedStream
from rsp_sdk.matrix.interrupt import interrupted
from rsp_sdk.matrix.oracle_cache import OracleCache
from rsp_sdk.matrix.plan import Cell
from rsp_sdk.matrix.spec import Metric
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig
from rsp_sdk.util.atomic import atomic_path

VERDICTS = {"correct": "correct", "incorrect": "incorrect", "no output": "no_output"}


def needs_judging(cell: Cell) -> bool:
    """The spec asks for a verdict (CSRBench) or YABench's per-window numbers."""
    return bool({Metric.CSRBENCH.value, Metric.YABENCH.value} & set(cell.metrics))


def unjudged(
    cell: Cell, done: dict[str, Any] | None, store: Store, *, past_limits: bool = False
) -> bool:
    """The engine's run finished but its judgement is missing: the matrix died while judging
    (no cell.json yet, status.json says ok) or judging failed, e.g. the oracle's JVM went down
    with a Ctrl-C (cell.json says ok but not_judged). Such a cell is judged again from its
    recording; the engine is not rerun. A judgement past the oracle's size limits
    (``LIMITS``) would fail again as it did: it is tried again only with ``past_limits``
    (--retry-failed, after raising a limit) — every rerun of YABench's folder spent minutes
    re-planning its eager engines' largest cells to reach the same reason."""
    if done is None:
        return store.run_finished(cell.key)
    if not (done.get("state") == "ok" and done.get("verdict") == "not_judged"):
        return False
    return needs_judging(cell) and (past_limits or not beyond_limits(done))


#: judging failures that come from the oracle's size limits, not from a crash: the same inputs
#: meet them again (``rsp_sdk.oracle.s2r.TooManyReports``, ``rsp_sdk.oracle.narrow.TooLarge``)
LIMITS = ("TooManyReports", "TooLarge")


def beyond_limits(done: dict[str, Any]) -> bool:
    """The cell's judgement failed on one of the oracle's ``LIMITS`` (or was told that an
    earlier cell's had: ``OracleFailedEarlier``, naming it)."""
    reason = str(done.get("reason") or "")
    return reason.startswith(JUDGING_FAILED) and any(f"{name}:" in reason for name in LIMITS)


def judge_output(
    cell: Cell,
    spec: QuerySpec,
    adapter: Adapter,
    stream: PreparedStream,
    run_dir: Path,
    oracle: OracleCache,
) -> dict[str, Any]:
    """The judgement's fields of cell.json. A judgement that fails (the oracle, a malformed
    output) leaves the cell recorded as not_judged with the reason; a rerun judges it again. A
    wall-clock engine fed at speed s is judged on windows s times as long
    (``rsp_sdk.compare.wallclock``)."""
    if interrupted():
        raise KeyboardInterrupt
    try:
        scale = _window_scale(cell, adapter, stream)
        if scale is not None:
            spec = scaled_windows(spec, scale)
        return _judgement(cell, spec, adapter, stream, run_dir, oracle, scale)
    except Exception as exc:
        if interrupted():  # the Spark job was cancelled by Ctrl-C: not a finding
            raise KeyboardInterrupt from exc
        reason = f"{JUDGING_FAILED}{type(exc).__name__}: {exc}"
        if oracle.session_died():  # the next cell gets a new session (a rerun re-judges this)
            reason = f"{JUDGING_FAILED}{DEAD_JVM} ({type(exc).__name__})"
        return {"verdict": "not_judged", "reason": reason}


def _judgement(
    cell: Cell,
    spec: QuerySpec,
    adapter: Adapter,
    stream: PreparedStream,
    run_dir: Path,
    oracle: OracleCache,
    window_scale: float | None,
) -> dict[str, Any]:
    from rsp_sdk.compare.answers import relation_times
    from rsp_sdk.csrbench import divergence_text

    names = _query_names(spec, cell)
    got = oracle.expected(
        stream.path,
        stream.sha256,
        spec,
        adapter.profile,
        stream.static,
        relation_times=lambda: relation_times(run_dir, names),
    )
    table, classes = got.table, got.classes
    # a table in parts is judged a part at a time (``rsp_sdk.compare.parts``)
    expected = table if table.in_parts and classes is not None else table.whole()
    verdict, detail = _judge_instances(cell, spec, adapter, stream, run_dir, expected, classes)
    if window_scale is not None:
        detail["window_scale"] = window_scale
    if got.narrowed is not None:
        detail["t0_narrowed"] = got.narrowed
    with atomic_path(run_dir / "verdict.json") as tmp:  # the full judgement, for fronts
        tmp.write_text(json.dumps(detail, indent=2) + "\n", encoding="utf-8")
    out: dict[str, Any] = {
        "verdict": VERDICTS[verdict],
        "t0_ms": detail.get("t0"),
        "divergence": divergence_text(detail),
    }
    if detail.get("divergence"):
        out["divergence_detail"] = json.dumps(detail["divergence"], sort_keys=True)
    if got.narrowed is not None:
        out["t0_narrowed"] = got.narrowed["why"]
    if Metric.YABENCH.value in cell.metrics:
        first = spec  # with instances: the first one's windows (they all see one stream)
        if cell.instances > 1:
            first = spec.model_copy(update={"name": f"{spec.name}_1"})
        t0 = detail.get("t0")
        if isinstance(expected, ExpectedTable):  # the one candidate the metrics need
            t0 = metrics_t0(table, detail)
            expected = table.of_t0(t0)
        out.update(_yabench(cell, first, adapter, stream, run_dir, expected, t0, classes))
    return out


def _window_scale(cell: Cell, adapter: Adapter, stream: PreparedStream) -> float | None:
    """How many times longer the windows the engine applied are than the query's: a wall-clock
    engine fed at a speed ≠ 1 (``rsp_sdk.compare.wallclock``), else None."""
    app_time = Feature.APP_TIME_INPUT in adapter.capabilities
    feeder = FeederConfig.model_validate(cell.feeder) if cell.feeder is not None else None
    if not wall_clock_paced(app_time, feeder):  # no stream read for the others
        return None
    return window_scale(app_time, feeder, stream_timeline(stream.path))


#: how the reason of a failed judgement starts
JUDGING_FAILED = "judging failed: "

#: why a judgement failed when the oracle's JVM died under it (the cause seen so far: its heap)
DEAD_JVM = (
    "the oracle's Spark JVM died (most likely out of heap: RSP_SPARK_DRIVER_MEMORY, "
    "default 4g, sets it); the next cell starts a new session"
)


def _query_names(spec: QuerySpec, cell: Cell) -> list[str]:
    """The names the cell's output gives its query: one per instance on the concurrency axis."""
    from rsp_sdk.run.runner import instance_names

    return instance_names(spec.name, cell.instances) if cell.instances > 1 else [spec.name]


def _judge_instances(
    cell: Cell,
    spec: QuerySpec,
    adapter: Adapter,
    stream: PreparedStream,
    run_dir: Path,
    expected: Any,
    classes: dict[int, int] | None,
) -> tuple[str, dict[str, Any]]:
    """The verdict of the query, or with the concurrency axis of every instance: the cell is
    correct only if each instance is; the first instance that is not decides the detail, and
    ``instances.json`` lists every instance's verdict and t0."""
    from rsp_sdk.csrbench import judge, judge_each

    if cell.instances == 1:
        return judge(
            stream.path, spec, adapter, run_dir, expected=expected, representative_of=classes
        )
    names = _query_names(spec, cell)
    judged = judge_each(
        stream.path, spec, adapter, run_dir, names, expected=expected, representative_of=classes
    )
    each = [(name, *judged[name]) for name in names]
    with atomic_path(run_dir / "instances.json") as tmp:
        listing = [{"query": n, "verdict": v, "t0": d.get("t0")} for n, v, d in each]
        tmp.write_text(json.dumps(listing, indent=2) + "\n", encoding="utf-8")
    worst = next((e for e in each if e[1] != "correct"), each[0])
    return worst[1], worst[2]


def _yabench(
    cell: Cell,
    spec: QuerySpec,
    adapter: Adapter,
    stream: PreparedStream,
    run_dir: Path,
    expected: Any,
    t0: int | None,
    classes: dict[int, int] | None,
) -> dict[str, Any]:
    """YABench precision / recall / delay per window (windows.parquet) and overall; with the
    query axis's ``gracious``, the gracious scores too (the same run judged both ways)."""
    import pyarrow.compute as pc

    from rsp_sdk.compare.answers import PUSHED_FILE, load_answers, read_pushed
    from rsp_sdk.compare.clock import TimeMap
    from rsp_sdk.compare.judge import Metrics, judge_run
    from rsp_sdk.compare.yabench import gracious_for
    from rsp_sdk.streams.io import read_static, read_stream

    profile = adapter.profile
    r2s = profile.r2s or spec.r2s
    table = read_stream(stream.path)
    pushed = read_pushed(run_dir)
    time_map = (
        TimeMap.from_pushed(pushed, source=run_dir / PUSHED_FILE)
        if pushed is not None and pushed.num_rows
        else None
    )
    grace = None
    if cell.gracious:
        grace = gracious_for(table, spec, [read_static(f) for f in stream.static], r2s)
    result = judge_run(
        expected,
        load_answers(run_dir),
        profile,
        r2s,
        query=spec.name,
        metrics=Metrics.YABENCH,
        t0=t0,
        time_map=time_map,
        event_times=pc.unique(table.column("t_app_ms")).to_pylist(),
        gracious=grace,
        representative_of=classes,
    )
    report = result.yabench
    if report is None:
        return {}
    with atomic_path(run_dir / "windows.parquet") as tmp:
        pq.write_table(report.to_arrow(), tmp)
    delays = [w.delay_ms for w in report.windows if w.delay_ms is not None]
    return {
        "precision": report.mean_precision,
        "recall": report.mean_recall,
        "delay_ms_p50": statistics.median(delays) if delays else None,
        "gracious_precision": report.mean_gracious_precision,
        "gracious_recall": report.mean_gracious_recall,
    }
