"""``run_cell``: one cell = one recorded run (``rsp_sdk.run.runner.run``) plus its judgement.

The runner never raises for an engine failure (crash, hang, refusal): those come back as a run
state and land in ``cell.json`` with the engine's message, and the matrix goes on. The verdict
is the CSRBench one, from ``rsp_sdk.csrbench.judge`` (the single judging function: t0
candidates, contiguous-part rule, no-output rule), against the oracle's output from the
matrix's cache. ``cell.json`` is written last: until then the cell does not count as done.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from rsp_sdk.compare.parts import metrics_t0
from rsp_sdk.compare.wallclock import (
    scaled_windows,
    stream_timeline,
    wall_clock_paced,
    window_scale,
)
from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.engine.registry import get_adapter
from rsp_sdk.engine.session import Timeouts
from rsp_sdk.errors import RspError
from rsp_sdk.matrix.coverage import classify_run
from rsp_sdk.matrix.inputs import PreparedStream
from rsp_sdk.matrix.metrics import run_metrics
from rsp_sdk.matrix.oracle_cache import OracleCache
from rsp_sdk.matrix.plan import Cell, CellState
from rsp_sdk.matrix.spec import Metric
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.profile import Profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig
from rsp_sdk.run.runner import RunRequest, run
from rsp_sdk.util.atomic import atomic_path

VERDICTS = {"correct": "correct", "incorrect": "incorrect", "no output": "no_output"}

# set by Ctrl-C while cells run in worker threads (``run_matrix`` clears it when it starts): no
# cell starts or is judged any more, and a judgement that fails meanwhile (its Spark job was
# cancelled) is not recorded as ``not_judged`` — the cell stays without cell.json, to rerun
INTERRUPT = threading.Event()


def interrupted() -> bool:
    """Whether Ctrl-C came: flagged for worker threads (``interrupt_judging``) or seen by the
    oracle session's SIGINT handler while a cell ran or was judged in the main thread."""
    from rsp_sdk.oracle.spark import INTERRUPTED

    return INTERRUPT.is_set() or INTERRUPTED.is_set()


def clear_interrupt() -> None:
    """A new matrix run: an earlier Ctrl-C (handled) no longer counts."""
    from rsp_sdk.oracle.spark import INTERRUPTED

    INTERRUPT.clear()
    INTERRUPTED.clear()


def interrupt_judging() -> None:
    """Ctrl-C for judging in worker threads: flag it and cancel the oracle's Spark jobs."""
    from rsp_sdk.oracle.spark import cancel_jobs

    INTERRUPT.set()
    cancel_jobs()


def base_row(cell: Cell) -> dict[str, Any]:
    """The axes of a cell as cell.json columns, every outcome column still empty."""
    row = cell.model_dump(
        mode="json",
        include={
            "key",
            "label",
            "spec",
            "group",
            "engine",
            "adapter_version",
            "runtime",
            "query",
            "params",
            "stream",
            "stream_sha256",
            "rate",
            "feeding",
            "repetition",
            "profile",
            "reason",
        },
    )
    row.update(
        artifacts=json.dumps(cell.artifacts, sort_keys=True),
        state=cell.state.value,
        verdict="not_judged",
        relations=0,
        rows=0,
        triples_pushed=0,
        wall_s=0.0,
        run_dir=None,
        time_scale=(cell.feeder or {}).get("time_scale"),
        instances=cell.instances,
    )
    return row


def _query_file(store: Store, spec: QuerySpec) -> Path:
    text = spec.model_dump_json(indent=2)
    path = store.root / "queries" / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return path


def _state(summary_state: str, run_dir: Path) -> CellState:
    """ok / interrupted / timeout (the runner's EngineTimeout: a verb overran; RunTimeout: the
    whole run overran limits.cell_timeout_s) / failed."""
    if summary_state == "ok":
        return CellState.OK
    if summary_state == "interrupted":
        return CellState.INTERRUPTED
    status = run_dir / "status.json"
    kind = json.loads(status.read_text()).get("error_type") if status.exists() else None
    return CellState.TIMEOUT if kind in ("EngineTimeout", "RunTimeout") else CellState.FAILED


def _expanded(config: dict[str, Any]) -> dict[str, Any]:
    """``${RSP_SHARED_DATA}``/``${VAR}`` in string values expanded when the cell runs (the key
    keeps the spec's text, so it does not depend on where the data lives)."""
    from rsp_sdk.matrix.inputs import expand

    return {
        k: str(expand(v, Path.cwd())) if isinstance(v, str) and v.startswith("${") else v
        for k, v in config.items()
    }


def _timeouts(limit: float) -> Timeouts:
    """The spec's timeout caps every engine verb (a hung engine is killed, the cell is
    recorded as timeout and the matrix goes on)."""
    d = Timeouts()
    return Timeouts(
        open=min(d.open, limit),
        verb=min(d.verb, limit),
        push=min(d.push, limit),
        poll=min(d.poll, limit),
        stats=min(d.stats, limit),
        close=min(d.close, limit),
    )


def _adapter(cell: Cell) -> Adapter:
    adapter = get_adapter(cell.engine)
    if cell.profile_json is not None and cell.profile_json != adapter.profile.model_dump(
        mode="json"
    ):  # the spec overrides the profile the engine is judged under
        adapter = copy.copy(adapter)
        adapter.profile = Profile.model_validate(cell.profile_json)
    return adapter


def run_cell(
    cell: Cell, store: Store, streams: dict[str, PreparedStream], oracle: OracleCache
) -> dict[str, Any]:
    """Run, judge and record one cell; returns its cell.json row (never raises for engines)."""
    row = base_row(cell)
    started = time.monotonic()
    row["started_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    if cell.state in (CellState.REFUSED, CellState.UNAVAILABLE):
        row["outcome"] = cell.state.value
        store.finish(cell.key, row)
        return row
    if interrupted():
        raise KeyboardInterrupt
    store.set_aside(cell.key)
    stream = streams[cell.stream]
    assert cell.query_spec is not None and cell.feeder is not None
    spec = QuerySpec.model_validate(cell.query_spec)
    adapter = _adapter(cell)
    run_dir = store.cell_dir(cell.key)
    try:
        summary = run(
            RunRequest(
                engine=cell.engine,
                runtime=cell.runtime,
                query=_query_file(store, spec),
                stream=stream.path,
                output=run_dir,
                feeder=FeederConfig.model_validate(cell.feeder),
                engine_config=_expanded(cell.engine_config),
                drain_quiet_s=cell.drain_quiet_s,
                drain_max_s=cell.drain_max_s,
                # no verb may outlast the cell's own deadline either
                timeouts=_timeouts(min(cell.timeout_s, cell.cell_timeout_s or cell.timeout_s)),
                deadline_s=cell.cell_timeout_s,
                # static data goes to the graphs the query reads (FROM <g>); none: not sent
                static=list(stream.static) if spec.static_graphs else [],
                instances=cell.instances,
            ),
            adapter=adapter,
        )
    except (RspError, ValueError, OSError) as exc:  # a usage error for this combination
        run_dir.mkdir(parents=True, exist_ok=True)
        reason = f"{type(exc).__name__}: {exc}"
        row.update(state=CellState.FAILED.value, reason=reason, wall_s=time.monotonic() - started)
        row["outcome"] = classify_run(row["state"], None, None).value
        store.finish(cell.key, row)
        return row
    state = _state(summary.state, run_dir)
    row.update(
        state=state.value,
        reason=summary.engine_message or summary.error if state is not CellState.OK else None,
        relations=summary.result_events,
        rows=summary.result_rows,
        run_dir=str(run_dir.relative_to(store.root)),
    )
    row.update(run_metrics(run_dir))
    if state is CellState.OK and needs_judging(cell):
        row.update(_judge(cell, spec, adapter, stream, run_dir, oracle))
    row["wall_s"] = time.monotonic() - started
    row["outcome"] = classify_run(row["state"], row["verdict"], run_dir).value
    store.finish(cell.key, row)
    return row


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


def judge_cell(
    cell: Cell,
    store: Store,
    streams: dict[str, PreparedStream],
    oracle: OracleCache,
    done: dict[str, Any] | None,
) -> dict[str, Any]:
    """Finish an ``unjudged`` cell from its run directory: metrics (when cell.json is missing)
    and the judgement; returns its new cell.json row."""
    run_dir = store.cell_dir(cell.key)
    if done is None:
        status = json.loads((run_dir / "status.json").read_text(encoding="utf-8"))
        row = base_row(cell)
        row.update(
            state=CellState.OK.value,
            relations=status.get("result_events", 0),
            rows=status.get("result_rows", 0),
            run_dir=str(run_dir.relative_to(store.root)),
            started_at=status.get("started_wall"),
            wall_s=status.get("duration_s") or 0.0,
        )
        row.update(run_metrics(run_dir))
    else:
        row = dict(done)
    started = time.monotonic()
    row.update(verdict="not_judged", reason=None, t0_narrowed=None)
    if needs_judging(cell):
        assert cell.query_spec is not None
        spec = QuerySpec.model_validate(cell.query_spec)
        row.update(_judge(cell, spec, _adapter(cell), streams[cell.stream], run_dir, oracle))
    row["wall_s"] = float(row.get("wall_s") or 0.0) + time.monotonic() - started
    row["outcome"] = classify_run(row["state"], row["verdict"], run_dir).value
    store.finish(cell.key, row)
    return row


def _judge(
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
    expected = table.parts if table.in_parts and classes is not None else table.whole()
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
        if callable(expected):  # the one candidate the metrics need, from its part
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
