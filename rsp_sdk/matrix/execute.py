"""``run_cell``: one cell = one recorded run (``rsp_sdk.run.runner.run``) plus its judgement
(``judge.py``); ``judge_cell`` finishes a cell whose run is recorded but not judged.

The runner never raises for an engine failure (crash, hang, refusal): those come back as a run
state and land in ``cell.json`` with the engine's message, and the matrix goes on.
``cell.json`` is written last: until then the cell does not count as done.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import time
from pathlib import Path
from typing import Any

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.registry import get_adapter
from rsp_sdk.engine.session import Timeouts
from rsp_sdk.errors import RspError
from rsp_sdk.matrix.coverage import classify_run
from rsp_sdk.matrix.given import judged_stream
from rsp_sdk.matrix.inputs import PreparedStream
from rsp_sdk.matrix.interrupt import interrupted
from rsp_sdk.matrix.judge import judge_output, needs_judging
from rsp_sdk.matrix.metrics import run_metrics
from rsp_sdk.matrix.oracle_cache import OracleCache
from rsp_sdk.matrix.plan import Cell, CellState
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.profile import Profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig
from rsp_sdk.run.runner import RunRequest, run
from rsp_sdk.util.atomic import atomic_path


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
            "variant",
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


def _timed_out_before(cell: Cell, store: Store) -> str | None:
    """Why ``cell`` is not run (``limits.skip_after_timeout``): the first of its earlier
    repetitions recorded as timeout, with its reason; None when none is."""
    for rep, key in enumerate(cell.earlier, 1):
        done = store.done(key)
        if done is not None and done.get("state") == CellState.TIMEOUT.value:
            first = str(done.get("reason") or "").strip().splitlines()
            why = f": {first[0][:200]}" if first else ""
            return f"not run: repetition {rep} timed out{why} (limits.skip_after_timeout)"
    return None


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
    timed_out = _timed_out_before(cell, store)
    if timed_out is not None:
        row.update(state=CellState.SKIPPED.value, reason=timed_out, outcome="skipped")
        store.finish(cell.key, row)
        return row
    if interrupted():
        raise KeyboardInterrupt
    store.set_aside(cell.key)
    stream = streams[cell.stream]
    assert cell.query_spec is not None and cell.feeder is not None
    spec = QuerySpec.model_validate(cell.query_spec)
    adapter = _adapter(cell)
    feeder = FeederConfig.model_validate(cell.feeder)
    run_dir = store.cell_dir(cell.key)
    try:
        summary = run(
            RunRequest(
                engine=cell.engine,
                runtime=cell.runtime,
                query=_query_file(store, spec),
                stream=stream.path,
                warmup=stream.warmup,
                output=run_dir,
                feeder=feeder,
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
        given = judged_stream(stream, feeder)
        row.update(judge_output(cell, spec, adapter, given, run_dir, oracle))
    row["wall_s"] = time.monotonic() - started
    row["outcome"] = classify_run(row["state"], row["verdict"], run_dir).value
    store.finish(cell.key, row)
    return row


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
        feeder = FeederConfig.model_validate(cell.feeder) if cell.feeder else None
        stream = judged_stream(streams[cell.stream], feeder)
        row.update(judge_output(cell, spec, _adapter(cell), stream, run_dir, oracle))
    row["wall_s"] = float(row.get("wall_s") or 0.0) + time.monotonic() - started
    row["outcome"] = classify_run(row["state"], row["verdict"], run_dir).value
    store.finish(cell.key, row)
    return row
