"""One call from a run directory to a verdict: ``check_run``.

``judge_run`` needs the expected table, the profile, the R2S, the system-time map of the run's
pushes and, for YABench metrics, the stream's event times: five inputs a script would have to
assemble in the right way. ``check_run`` assembles them as ``rsp oracle check`` does (it is what
that command calls), so a script and the command give the same verdict for the same run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsp_sdk.compare.vocab import Metrics, TimestampClock
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, load_profile

if TYPE_CHECKING:
    import pyarrow as pa

    from rsp_sdk.compare.judge import CheckResult
    from rsp_sdk.compare.yabench import Gracious
    from rsp_sdk.model.profile import R2S
    from rsp_sdk.model.query import QuerySpec

__all__ = ["check_run", "run_profile"]


def check_run(
    run_dir: Path | str,
    stream: Path | str | pa.Table,
    query: str | Path | QuerySpec,
    *,
    profile: str | Path | Profile | None = None,
    params: Mapping[str, str] | None = None,
    static: Sequence[Path | str] = (),
    metrics: Metrics = Metrics.CSRBENCH,
    t0: Sequence[int] | None = None,
    gracious: bool = False,
    query_name: str | None = None,
    clock: TimestampClock = TimestampClock.APP,
    evaluator: str = "auto",
    spark_master: str | None = None,
    window_scale: float | None = None,
) -> CheckResult:
    """Judge a run against the oracle: the expected output of ``query`` on ``stream``.

    ``run_dir`` is a run directory written by ``rsp run`` (or a CSRBench answer JSON, or an
    outputs Parquet); ``stream`` a stream Parquet file or table. The profile is ``profile`` (a
    name, file or ``Profile``) or else the one the run recorded in its ``config.json``. With
    ``metrics=Metrics.YABENCH`` the result also holds the per-window table, with delays
    measured on the run's ``pushed.parquet`` clock. ``t0`` restricts the candidate t0 (ms).
    ``evaluator``: the oracle's (``auto``, ``oxigraph``, ``sql``); ``spark_master``: where the
    process's Spark session starts (default ``local[*]``). ``window_scale``: judge on windows
    that many times as long, as for a wall-clock engine fed at that time scale; None takes it
    from the run's ``config.json`` (``rsp_sdk.compare.wallclock``), 1 judges the windows as
    written. Bad input raises ``InputError`` before Spark starts.
    """
    from rsp_sdk.compare.answers import PUSHED_FILE, load_answers, read_pushed
    from rsp_sdk.compare.clock import TimeMap
    from rsp_sdk.compare.judge import judge_run
    from rsp_sdk.compare.parts import judge_in_parts
    from rsp_sdk.compare.wallclock import judged_query
    from rsp_sdk.oracle import plan_job
    from rsp_sdk.query import load_query
    from rsp_sdk.streams.io import read_stream

    if gracious and metrics is not Metrics.YABENCH:
        raise InputError("gracious mode needs the YABench metrics (--metrics yabench)")
    if window_scale is not None and window_scale <= 0:
        raise InputError(f"the window scale must be positive, not {window_scale:g}")
    run_dir = Path(run_dir)
    statics = [Path(s) for s in static]
    actual = load_answers(run_dir, query=query_name, clock=clock)
    columns = ["t_app_ms", "stream"]  # the feeder's speed: rsp_sdk.compare.wallclock
    timeline = (
        read_stream(stream, columns=columns)
        if isinstance(stream, str | Path)
        else stream.select(columns)
    )
    spec, scale = judged_query(load_query(query, params), run_dir, timeline, window_scale)
    prof = run_profile(run_dir) if profile is None else load_profile(profile)
    r2s = prof.r2s or spec.r2s
    # the t0 classes' representatives only, as the matrix judges: ``expected()`` copies every
    # class's rows to each member (thousands of candidates on a 1 ms stream; a 42 k-triple
    # YABench join took 20 GB that way)
    job = plan_job(
        stream,
        spec,
        prof,
        t0s=list(t0) if t0 else None,
        static=tuple(statics),
        evaluator=evaluator,
        spark_master=spark_master,
    )
    classes = job.classes
    representative_of = dict(
        zip(classes.candidates.tolist(), classes.representative.tolist(), strict=True)
    )
    pushed = read_pushed(run_dir) if run_dir.is_dir() else None
    time_map = None
    if pushed is not None:  # delays are measured on the run's own push clock
        time_map = TimeMap.from_pushed(pushed, source=run_dir / PUSHED_FILE)
    event_times: list[Any] | None = None
    grace = None
    if metrics is Metrics.YABENCH:
        event_times, grace = _yabench_inputs(stream, spec, statics, r2s, gracious)
    result = judge_in_parts(
        job.run_class_parts(),
        lambda table: judge_run(
            table,
            actual,
            prof,
            r2s,
            query=query_name,
            metrics=metrics,
            t0=t0[0] if t0 and len(t0) == 1 else None,
            time_map=time_map,
            event_times=event_times,
            gracious=grace,
            representative_of=representative_of,
        ),
        actual,
        prof,
        r2s,
        query=query_name,
        representative_of=representative_of,
        metrics=metrics,
    )
    return result.model_copy(update={"window_scale": scale})


def run_profile(run_dir: Path) -> Profile:
    """The profile a run directory recorded (its engine's declared profile when it ran): the
    profile its output is judged by unless the caller names another."""
    config = run_dir / "config.json"
    if not run_dir.is_dir() or not config.is_file():
        raise InputError(
            "--profile is needed: the answers are not a run directory with a config.json",
            path=run_dir,
            expected="--profile NAME|FILE, or --answers RUN_DIR written by rsp run",
        )
    try:
        recorded = json.loads(config.read_text(encoding="utf-8"))["engine"]["profile"]
        return Profile.model_validate(recorded)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"the run's config.json records no usable profile ({exc})",
            path=config,
            expected="engine.profile as rsp run writes it, or pass --profile",
        ) from None


def _yabench_inputs(
    stream: Path | str | pa.Table, spec: QuerySpec, static: list[Path], r2s: R2S, gracious: bool
) -> tuple[list[Any], Gracious | None]:
    """The stream's event times, and (``gracious``) the window re-evaluator."""
    import pyarrow.compute as pc

    from rsp_sdk.compare.yabench import gracious_for
    from rsp_sdk.streams.io import read_static, read_stream

    table = read_stream(stream) if isinstance(stream, Path | str) else stream
    event_times = pc.unique(table.column("t_app_ms")).to_pylist()
    if not gracious:
        return event_times, None
    return event_times, gracious_for(table, spec, [read_static(f) for f in static], r2s)
