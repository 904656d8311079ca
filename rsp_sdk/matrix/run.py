"""``run_matrix``: plan, skip what is done, run the rest, aggregate — resumable at any point.

Resume works as asv's: a cell is done iff its ``cell.json`` exists, so a rerun after a kill
re-plans (same keys, since keys hash only inputs), skips finished cells untouched, sets killed
cells aside and runs them again. A cell whose engine run finished but whose judgement is
missing (killed while judging) or failed (the oracle's JVM went down with a Ctrl-C) is judged
again from its recording, without rerunning the engine. ``--retry-failed`` reruns failed,
timed-out and interrupted cells, ``--rerun`` every selected cell whatever its state — a cell
measured beside another load, re-measured (their old directories are kept under
``retried/``; Rate_max probes already done are read back). With
``jobs > 1`` the cells whose numbers do not depend on wall-clock time run side by side in
threads (each engine is its own process; the oracle's Spark session is shared); every other
cell runs alone, afterwards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rsp_sdk.matrix.aggregate import aggregate
from rsp_sdk.matrix.engines import EngineInfo, spec_engines
from rsp_sdk.matrix.execute import judge_cell, run_cell
from rsp_sdk.matrix.inputs import PreparedStream, prepare
from rsp_sdk.matrix.interrupt import clear_interrupt, interrupt_judging, interrupted
from rsp_sdk.matrix.judge import unjudged
from rsp_sdk.matrix.lock import results_lock
from rsp_sdk.matrix.oracle_cache import OracleCache
from rsp_sdk.matrix.plan import Cell, CellState, plan
from rsp_sdk.matrix.select import parse_only, select
from rsp_sdk.matrix.spec import MatrixSpec, Metric
from rsp_sdk.matrix.store import Store
from rsp_sdk.matrix.warmup import with_warmup
from rsp_sdk.run.deadline import interrupt_runs

RETRY = frozenset({"failed", "timeout", "interrupted", "skipped"})
# --rerun: every cell that ran an engine (an unavailable one whose runtime is back runs anyway)
RERUN = frozenset({"ok", *RETRY})


class Progress(BaseModel):
    model_config = ConfigDict(frozen=True)

    event: str  # "start" | "judge" (a finished run judged again) | "done" | "skip"
    cell: Cell
    row: dict[str, Any] | None = None
    total: int = 0  # cells selected in this run
    probe: bool = False  # a Rate_max probe: beyond the plan, not counted in total


ProgressFn = Callable[[Progress], None]


class MatrixResult(BaseModel):
    root: Path
    cells: list[Cell]
    rows: list[dict[str, Any]]
    ran: int
    judged: int = 0  # cells whose finished run was only judged (its judgement was missing)
    skipped: int  # already done: read back
    after_timeout: int = 0  # not run, an earlier repetition timed out (state "skipped")
    oracle_computed: int
    oracle_reused: int
    wall_s: float
    probe_keys: set[str] = set()  # Rate_max probes: a failed probe is a finding, not an error
    engine_s: float = 0.0  # the engine runs of this invocation (status.json durations)


def planned(
    spec: MatrixSpec,
    spec_path: Path,
    inputs: Path,
    only: list[str] | None = None,
    *,
    plan_only: bool = False,
    engines: dict[str, EngineInfo] | None = None,
) -> tuple[dict[str, PreparedStream], list[Cell]]:
    named = parse_only(only or []).get("stream", set())
    picked = spec
    if named:  # --only stream=…: the other streams are neither generated nor imported
        picked = spec.model_copy(update={"streams": [s for s in spec.streams if s.name in named]})
    streams = with_warmup(
        spec, spec_path, inputs, prepare(picked, spec_path, inputs, plan_only=plan_only)
    )
    # planned from the whole spec (its labels name the stream whenever it has several)
    return streams, select(plan(spec, spec_path, streams, engines=engines), only or [])


def _rate_search(
    spec: MatrixSpec,
    spec_path: Path,
    streams: dict[str, PreparedStream],
    cells: list[Cell],
    store: Store,
    oracle: OracleCache,
    only: list[str] | None,
    progress: ProgressFn | None,
    engines: dict[str, EngineInfo],
) -> tuple[set[str], int]:
    """Rate_max searches after the planned cells: (keys of every probe, probes run now)."""
    from rsp_sdk.matrix.plan import load_queries
    from rsp_sdk.matrix.ratesearch import run_searches

    ran: list[str] = []

    def run_one(cell: Cell) -> dict[str, Any]:
        ran.append(cell.key)
        if progress:
            progress(Progress(event="start", cell=cell, total=len(cells), probe=True))
        row = run_cell(cell, store, streams, oracle)
        if progress:
            progress(Progress(event="done", cell=cell, row=row, total=len(cells), probe=True))
        return row

    queries = load_queries(spec, spec_path)
    found = run_searches(spec, cells, streams, queries, engines, store, run_one, only)
    return {p.key for r in found for p in r.probes if p.key is not None}, len(ran)


def _side_by_side(one: Callable[[Cell], None], cells: list[Cell], jobs: int) -> None:
    """Cells in ``jobs`` threads. Ctrl-C reaches the main thread only (waiting here): the cells
    not started are dropped, the running ones are stopped — their engines killed, their Spark
    jobs cancelled — and recorded as interrupted (no cell.json: a rerun runs them again), then
    KeyboardInterrupt goes on. Without this the pool's exit waited for every queued cell."""
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="matrix-cell")
    futures = [pool.submit(one, c) for c in cells]
    try:
        pending = set(futures)
        while pending:  # waits with a timeout: a signal that lands on a worker thread is
            # handled only when the main thread runs Python again, and a wait without one
            # slept until a cell finished
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
            for f in done:
                f.result()
    except KeyboardInterrupt:
        interrupt_judging()
        pool.shutdown(wait=False, cancel_futures=True)
        interrupt_runs()
        # (a cancelled future never counts as done for wait())
        while wait([f for f in futures if not f.cancelled()], timeout=0.5).not_done:
            interrupt_runs()  # again: a run that was starting when the first call came
        raise
    finally:
        pool.shutdown(wait=True)


def run_matrix(
    spec: MatrixSpec,
    spec_path: Path,
    output: Path,
    *,
    only: list[str] | None = None,
    jobs: int = 1,
    retry_failed: bool = False,
    rerun: bool = False,
    progress: ProgressFn | None = None,
    evaluator: str = "auto",
    spark_master: str | None = None,
) -> MatrixResult:
    started = time.monotonic()
    clear_interrupt()
    store = Store(output)
    store.check_claim()  # before anything is written in it, the lock included
    with results_lock(output):  # one run per RESULTS: a second would redo and race
        store.open(spec, spec_path, [])
        engines = spec_engines(spec)
        streams, cells = planned(spec, spec_path, output / "inputs", only, engines=engines)
        store.open(spec, spec_path, cells)
        again = RERUN if rerun else RETRY if retry_failed else frozenset()
        todo, to_judge = _todo(cells, store, again, progress)
        probe_keys: set[str] = set()
        probes_ran = 0
        oracle = OracleCache(store, evaluator=evaluator, spark_master=spark_master)
        one = _cell_worker(store, streams, oracle, to_judge, len(cells), progress)
        side_by_side = [c for c in todo if jobs > 1 and c.parallel_ok]
        beside = {c.key for c in side_by_side}
        try:
            if side_by_side:
                _side_by_side(one, side_by_side, jobs)
            for cell in todo:
                if cell.key not in beside:
                    one(cell)
            if spec.rate_search is not None:
                probe_keys, probes_ran = _rate_search(
                    spec, spec_path, streams, cells, store, oracle, only, progress, engines
                )
            if interrupted():  # a stop whose KeyboardInterrupt was lost after the last cell
                raise KeyboardInterrupt
        finally:  # Ctrl-C too: the tables describe every cell finished so far
            aggregate(
                store,
                lsbench=Metric.LSBENCH in spec.metrics,
                epsilon_percent=spec.lsbench_epsilon_percent,
            )
        keys = {c.key for c in cells} | probe_keys
        rows = [r for r in store.rows() if r["key"] in keys]
        not_run = {r["key"] for r in rows if r["state"] == CellState.SKIPPED.value}
        ran_now = [c.key for c in todo if c.key not in to_judge and c.key not in not_run]
        return MatrixResult(
            root=output,
            cells=cells,
            rows=rows,
            ran=len(ran_now) + probes_ran,
            judged=len(to_judge),
            skipped=len(cells) - len(todo),
            after_timeout=len({c.key for c in todo} & not_run),
            oracle_computed=oracle.computed,
            oracle_reused=oracle.reused,
            wall_s=time.monotonic() - started,
            probe_keys=probe_keys,
            engine_s=sum(_run_seconds(store, k) for k in ran_now),
        )


def _cell_worker(
    store: Store,
    streams: dict[str, PreparedStream],
    oracle: OracleCache,
    to_judge: dict[str, dict[str, Any] | None],
    total: int,
    progress: ProgressFn | None,
) -> Callable[[Cell], None]:
    """What the matrix does with one cell to do, in whichever thread: run and judge it, or
    only judge it (``to_judge``: its run is recorded), telling ``progress`` before and after."""

    def one(cell: Cell) -> None:
        judge_only = cell.key in to_judge
        if progress:
            progress(Progress(event="judge" if judge_only else "start", cell=cell, total=total))
        if judge_only:
            row = judge_cell(cell, store, streams, oracle, to_judge[cell.key])
        else:
            row = run_cell(cell, store, streams, oracle)
        if progress:
            progress(Progress(event="done", cell=cell, row=row, total=total))

    return one


def _todo(
    cells: list[Cell], store: Store, again: frozenset[str], progress: ProgressFn | None
) -> tuple[list[Cell], dict[str, dict[str, Any] | None]]:
    """The cells to run or judge, in plan order, and among them those to judge only (a finished
    run whose judgement is missing: its record, None if it has none). A finished cell is
    skipped — so a killed matrix resumes — unless its state is in ``again`` (``RETRY``:
    --retry-failed, ``RERUN``: --rerun); such a cell's old record is retired first. A cell
    not judged for the oracle's size limits is judged again with --retry-failed only."""
    todo: list[Cell] = []
    to_judge: dict[str, dict[str, Any] | None] = {}
    for cell in cells:
        done = store.done(cell.key)
        if again is not RERUN and unjudged(cell, done, store, past_limits=bool(again)):
            to_judge[cell.key] = done
            todo.append(cell)
            continue
        if done is not None and done["state"] == "unavailable" and cell.state is CellState.PLANNED:
            store.retire(cell.key)  # its runtime or engine is back (a Docker daemon started)
            todo.append(cell)
            continue
        if done is not None and done["state"] not in again:
            if progress:
                progress(Progress(event="skip", cell=cell, row=done, total=len(cells)))
            continue
        if done is not None:
            store.retire(cell.key)
        todo.append(cell)
    return todo, to_judge


def _run_seconds(store: Store, key: str) -> float:
    """How long a cell's engine run took (0 for a cell that never ran an engine)."""
    status = store.cell_dir(key) / "status.json"
    if not status.exists():
        return 0.0
    return float(json.loads(status.read_text(encoding="utf-8")).get("duration_s") or 0.0)
