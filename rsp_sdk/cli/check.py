"""``rsp oracle check``: judge an engine's output against the oracle's expected output.

The command group ``oracle`` belongs to the oracle's CLI module; this module contributes the
``check`` command (``register(group)``), kept apart because judging needs the comparison code
(``rsp_sdk.compare``) while computing expected outputs does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pyarrow as pa
import pyarrow.compute as pc
import typer

from rsp_sdk.cli.common import console, emit_json
from rsp_sdk.compare.answers import PUSHED_FILE, TimestampClock, load_answers, read_pushed
from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.evaluate import OxigraphWindowEvaluator
from rsp_sdk.compare.judge import CheckResult, Metrics, judge_run
from rsp_sdk.compare.render import verdict_renderable, yabench_renderable
from rsp_sdk.compare.yabench import Gracious
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query import load_query
from rsp_sdk.streams.io import read_static, read_stream
from rsp_sdk.util.atomic import atomic_path


def _load_query(path: Path, params: dict[str, str]) -> QuerySpec:
    """RSP-QL / CSRBench / YABench query file → QuerySpec."""
    return load_query(path, params=params)


def _expected(
    stream: Path, query: QuerySpec, profile: Profile, t0s: list[int] | None, static: list[Path]
) -> pa.Table:
    """The expected output of every candidate t0 (one Spark job)."""
    from rsp_sdk.oracle import expected  # Spark and the evaluators: only when judging

    return expected(stream, query, profile, t0s=t0s, static=tuple(static))


def _params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError("bad --param", text=item, expected="KEY=VALUE")
        out[key] = value
    return out


def check_command(
    stream: Annotated[Path, typer.Option("--stream", help="stream Parquet file")],
    query: Annotated[Path, typer.Option("--query", help="query file (RSP-QL, CSRBench, YABench)")],
    profile: Annotated[str, typer.Option("--profile", help="profile name or TOML/JSON file")],
    answers: Annotated[
        Path,
        typer.Option("--answers", help="CSRBench answer JSON, run directory or outputs Parquet"),
    ],
    static: Annotated[
        list[Path] | None, typer.Option("--static", help="static data file (repeatable)")
    ] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="query template parameter K=V")
    ] = None,
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
    """Judge the answers against the expected output: exit 0 if correct, 1 if incorrect or no
    output (nothing emitted where relations are expected), 2 on bad input."""
    static = static or []
    if (gracious or output is not None) and metrics is not Metrics.YABENCH:
        raise InputError("--gracious and --output need --metrics yabench")
    # Read the cheap inputs first so a bad file fails before the Spark job starts.
    actual = load_answers(answers, query=query_name, clock=clock)
    spec = _load_query(query, _params(param or []))
    prof = load_profile(profile)
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
        table = read_stream(stream)
        event_times = pc.unique(table.column("t_app_ms")).to_pylist()
        if gracious:
            evaluator = OxigraphWindowEvaluator(
                table,
                spec.sparql,
                static=[read_static(f) for f in static],
                window_names=(
                    [w.name for w in spec.windows]
                    if getattr(spec, "window_graphs", False)
                    else None
                ),
                base_iri=getattr(spec, "base_iri", None),
            )
            grace = Gracious(evaluator, r2s)
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

        with atomic_path(output) as tmp:
            pq.write_table(result.yabench.to_arrow(), tmp)
    _print(result, as_json)
    raise typer.Exit(0 if result.correct else 1)


def _print(result: CheckResult, as_json: bool) -> None:
    if as_json:
        emit_json(result)
        return
    console.print(verdict_renderable(result.verdict))
    if result.yabench is not None:
        console.print(yabench_renderable(result.yabench))


def register(group: typer.Typer) -> None:
    """Add ``check`` to an ``oracle`` command group."""
    group.command("check")(check_command)
