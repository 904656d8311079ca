"""``rsp oracle check``: judge an engine's output against the oracle's expected output.

The command group ``oracle`` belongs to the oracle's CLI module; this module contributes the
``check`` command (``register(group)``), kept apart because judging needs the comparison code
(``rsp_sdk.compare``) while computing expected outputs does not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rsp_sdk.cli.common import console, emit_json
from rsp_sdk.cli.queryopts import ParamOpt, QueryOpt, StaticOpt, check_static, parse_params
from rsp_sdk.compare.vocab import Metrics, TimestampClock
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, load_profile
from rsp_sdk.util.outpath import check_output

if TYPE_CHECKING:  # the comparison code (pyarrow, pandas, pyoxigraph) loads only when judging
    import pyarrow as pa

    from rsp_sdk.compare.judge import CheckResult
    from rsp_sdk.compare.yabench import Gracious
    from rsp_sdk.model.profile import R2S
    from rsp_sdk.model.query import QuerySpec


def _expected(
    stream: Path, query: QuerySpec, profile: Profile, t0s: list[int] | None, static: list[Path]
) -> pa.Table:
    """The expected output of every candidate t0 (one Spark job)."""
    from rsp_sdk.oracle import expected  # Spark and the evaluators: only when judging

    return expected(stream, query, profile, t0s=t0s, static=tuple(static))


def _profile(profile: str | None, answers: Path) -> Profile:
    """``--profile``, or the profile recorded in the run directory's config.json: the profile
    the engine declared when it ran is the one its output is judged by, unless told otherwise."""
    if profile is not None:
        return load_profile(profile)
    config = answers / "config.json"
    if not answers.is_dir() or not config.is_file():
        raise InputError(
            "--profile is needed: the answers are not a run directory with a config.json",
            path=answers,
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


def check_command(
    stream: Annotated[Path, typer.Option("--stream", "-s", help="stream Parquet file")],
    query: QueryOpt,
    answers: Annotated[
        Path,
        typer.Option("--answers", help="CSRBench answer JSON, run directory or outputs Parquet"),
    ],
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            "-p",
            help="profile name or TOML/JSON file (default: the run directory's recorded profile)",
        ),
    ] = None,
    static: StaticOpt = None,
    param: ParamOpt = None,
    t0: Annotated[
        list[int] | None,
        typer.Option("--t0", help="only these candidate t0 (ms; repeatable); default: all"),
    ] = None,
    metrics: Annotated[
        Metrics, typer.Option("--metrics", help="csrbench verdict only, or + YABench per window")
    ] = Metrics.CSRBENCH,
    gracious: Annotated[
        bool, typer.Option("--gracious", help="YABench gracious mode: reconstruct window borders")
    ] = False,
    query_name: Annotated[
        str | None, typer.Option("--query-name", help="which query of a multi-query run")
    ] = None,
    clock: Annotated[
        TimestampClock,
        typer.Option("--answers-clock", help="clock of CSRBench JSON timestamps (app or sys ms)"),
    ] = TimestampClock.APP,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="write the per-window table (Parquet)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Judge FILE against the expected output: exit 0 if correct, 1 if incorrect or no output
    (nothing emitted where relations are expected), 2 on bad input, 3 on an internal error."""
    from rsp_sdk.compare.answers import PUSHED_FILE, load_answers, read_pushed
    from rsp_sdk.compare.clock import TimeMap
    from rsp_sdk.compare.judge import judge_run
    from rsp_sdk.query import load_query

    if (gracious or output is not None) and metrics is not Metrics.YABENCH:
        raise InputError("--gracious and --output need --metrics yabench")
    # Read the cheap inputs first so a bad file fails before the Spark job starts.
    if output is not None:
        check_output(output, what="a Parquet file path (--output)")
    static = check_static(static)
    actual = load_answers(answers, query=query_name, clock=clock)
    spec = load_query(query, parse_params(param))
    prof = _profile(profile, answers)
    r2s = prof.r2s or spec.r2s
    with console.status("computing the expected output …", spinner="dots"):
        expected = _expected(stream, spec, prof, t0, static)
    time_map = None
    pushed = read_pushed(answers) if answers.is_dir() else None
    if pushed is not None:
        time_map = TimeMap.from_pushed(pushed, source=answers / PUSHED_FILE)
    event_times = None
    grace = None
    if metrics is Metrics.YABENCH:
        event_times, grace = _yabench_inputs(stream, spec, static, r2s, gracious)
    with console.status("comparing …", spinner="dots"):
        result = judge_run(
            expected,
            actual,
            prof,
            r2s,
            query=query_name,
            metrics=metrics,
            t0=t0[0] if t0 and len(t0) == 1 else None,
            time_map=time_map,
            event_times=event_times,
            gracious=grace,
        )
    if output is not None and result.yabench is not None:
        import pyarrow.parquet as pq

        from rsp_sdk.util.atomic import atomic_path

        with atomic_path(output) as tmp:
            pq.write_table(result.yabench.to_arrow(), tmp)
    _print(result, as_json)
    raise typer.Exit(0 if result.correct else 1)


def _yabench_inputs(
    stream: Path, spec: QuerySpec, static: list[Path], r2s: R2S, gracious: bool
) -> tuple[list[Any], Gracious | None]:
    """The stream's event times, and (``--gracious``) the window re-evaluator."""
    import pyarrow.compute as pc

    from rsp_sdk.compare.yabench import gracious_for
    from rsp_sdk.streams.io import read_static, read_stream

    table = read_stream(stream)
    event_times = pc.unique(table.column("t_app_ms")).to_pylist()
    if not gracious:
        return event_times, None
    return event_times, gracious_for(table, spec, [read_static(f) for f in static], r2s)


def _print(result: CheckResult, as_json: bool) -> None:
    from rsp_sdk.compare.render import verdict_renderable, yabench_renderable

    if as_json:
        emit_json(result)
        return
    console.print(verdict_renderable(result.verdict))
    if result.yabench is not None:
        console.print(yabench_renderable(result.yabench))


def register(group: typer.Typer) -> None:
    """Add ``check`` to an ``oracle`` command group."""
    group.command("check")(check_command)
