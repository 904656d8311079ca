"""``rsp oracle check``: judge an engine's output against the oracle's expected output.

The command group ``oracle`` belongs to the oracle's CLI module; this module contributes the
``check`` command (``register(group)``), kept apart because judging needs the comparison code
(``rsp_sdk.compare``) while computing expected outputs does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rsp_sdk.cli.common import console, emit_json
from rsp_sdk.cli.oracle_opts import Evaluator, EvaluatorOpt, SparkMasterOpt
from rsp_sdk.cli.queryopts import ParamOpt, QueryOpt, StaticOpt, check_static, parse_params
from rsp_sdk.cli.sparkprogress import spark_progress
from rsp_sdk.compare.vocab import Metrics, TimestampClock
from rsp_sdk.errors import InputError
from rsp_sdk.util.outpath import check_output

if TYPE_CHECKING:  # the comparison code (pyarrow, pandas, pyoxigraph) loads only when judging
    from rsp_sdk.compare.judge import CheckResult


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
    window_scale: Annotated[
        float | None,
        typer.Option(
            "--window-scale",
            help="judge windows this many times as long: a wall-clock engine (CQELS, C-SPARQL "
            "0.9) fed at this time scale; default: from the run's config.json, 1: as written",
        ),
    ] = None,
    evaluator: EvaluatorOpt = Evaluator.AUTO,
    spark_master: SparkMasterOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Judge FILE against the expected output of every candidate t0.

    Exit 0 if correct, 1 if incorrect or no output (nothing emitted where relations are
    expected), 2 on bad input, 3 on an internal error."""
    from rsp_sdk.compare.check import check_run

    if (gracious or output is not None) and metrics is not Metrics.YABENCH:
        raise InputError("--gracious and --output need --metrics yabench")
    if output is not None:  # checked before any work, like every input
        check_output(output, what="a Parquet file path (--output)")
    with spark_progress(console, "computing the expected output and comparing …"):
        result = check_run(
            answers,
            stream,
            query,
            profile=profile,
            params=parse_params(param),
            static=check_static(static),
            metrics=metrics,
            t0=t0,
            gracious=gracious,
            query_name=query_name,
            clock=clock,
            evaluator=evaluator.value,
            spark_master=spark_master,
            window_scale=window_scale,
        )
    if output is not None and result.yabench is not None:
        import pyarrow.parquet as pq

        from rsp_sdk.util.atomic import atomic_path

        with atomic_path(output) as tmp:
            pq.write_table(result.yabench.to_arrow(), tmp)
    _print(result, as_json)
    raise typer.Exit(0 if result.correct else 1)


def _print(result: CheckResult, as_json: bool) -> None:
    from rsp_sdk.compare.render import verdict_renderable, yabench_renderable

    if as_json:
        emit_json(result)
        return
    if result.window_scale is not None:
        console.print(
            f"windows judged ×{result.window_scale:g} (RANGE and STEP): a wall-clock engine "
            f"fed at time scale {result.window_scale:g} holds {result.window_scale:g} s of "
            "application time in each wall second"
        )
    console.print(verdict_renderable(result.verdict))
    if result.yabench is not None:
        console.print(yabench_renderable(result.yabench))


def register(group: typer.Typer) -> None:
    """Add ``check`` to an ``oracle`` command group."""
    group.command("check")(check_command)
