"""``rsp run``: one engine × query × stream run, recorded in a run directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from rsp_sdk.cli.common import console, emit_json, parse_engine_config
from rsp_sdk.cli.queryopts import ParamOpt, QueryOpt, StaticOpt, check_static, parse_params
from rsp_sdk.errors import InputError
from rsp_sdk.run.pacing import PacingMode

if TYPE_CHECKING:  # the runner (engines, pyarrow, numpy) loads when a run starts
    from rsp_sdk.run.runner import RunRequest, RunSummary
from rsp_sdk.util.outpath import check_new_dir


def run_command(
    engine: Annotated[str, typer.Option("--engine", "-e", help="engine adapter name")],
    runtime: Annotated[
        str, typer.Option("--runtime", "-r", help="jpype | py4j | docker | subprocess …")
    ],
    query: QueryOpt,
    stream: Annotated[Path, typer.Option("--stream", "-s", help="stream Parquet file")],
    output: Annotated[Path, typer.Option("--output", "-o", help="new run directory")],
    param: ParamOpt = None,
    static: StaticOpt = None,
    rate: Annotated[float | None, typer.Option(help="target rate, triples/s (app-time)")] = None,
    time_scale: Annotated[
        float | None, typer.Option(help="application ms per system ms (app-time)")
    ] = None,
    mode: Annotated[PacingMode, typer.Option(help="pacing")] = PacingMode.APP_TIME,
    limit: Annotated[int | None, typer.Option(help="afap: triples to push")] = None,
    batch_size: Annotated[int, typer.Option(help="max triples per batch")] = 10_000,
    warmup: Annotated[Path | None, typer.Option(help="warm-up stream pushed first")] = None,
    warmup_rate: Annotated[float | None, typer.Option(help="warm-up rate, triples/s")] = None,
    raw: Annotated[bool, typer.Option("--raw", help="query file is in the engine's dialect")] = (
        False
    ),
    engine_config: Annotated[
        str | None, typer.Option(help="engine config JSON (or @file.json) passed to open")
    ] = None,
    flush_ms: Annotated[
        int | None, typer.Option(help="advance time this far past the last triple at the end")
    ] = None,
    push_timeout: Annotated[float, typer.Option(help="seconds a push may take")] = 300.0,
    verb_timeout: Annotated[float, typer.Option(help="seconds other verbs may take")] = 60.0,
    memory: Annotated[
        str | None, typer.Option(help="memory limit of the engine, e.g. 2g (docker runtime)")
    ] = None,
    cpus: Annotated[
        float | None, typer.Option(help="CPU limit of the engine in cores (docker runtime)")
    ] = None,
    sample_interval: Annotated[float, typer.Option(help="sampler period, seconds")] = 0.5,
    drain_quiet: Annotated[
        float, typer.Option(help="end when no result came for this many seconds")
    ] = 2.0,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON summary")] = False,
) -> None:
    """Run an engine on a stream and record pushes, results, samples and logs in OUTPUT.

    The query is read as `rsp oracle` reads it (QuerySpec .json too, or --raw engine text);
    --static data is loaded into every static graph the query names (FROM <g>)."""
    _check_pacing(mode, rate, time_scale)
    check_new_dir(output, what="a new or empty run directory (--output)", must_be_empty=True)
    from rsp_sdk.engine.session import Timeouts
    from rsp_sdk.run.feeder import FeederConfig
    from rsp_sdk.run.runner import RunRequest
    from rsp_sdk.runtime.base import ResourceLimits

    request = RunRequest(
        engine=engine,
        runtime=runtime,
        query=Path(query),
        raw_query=raw,
        params=parse_params(param),
        static=check_static(static),
        stream=stream,
        output=output,
        warmup=warmup,
        feeder=FeederConfig(
            mode=mode,
            rate=rate,
            time_scale=time_scale,
            limit=limit,
            batch_size=batch_size,
            warmup_rate=warmup_rate,
        ),
        engine_config=parse_engine_config(engine_config),
        timeouts=Timeouts(push=push_timeout, verb=verb_timeout, poll=verb_timeout),
        limits=ResourceLimits(memory=memory.lower() if memory else None, cpus=cpus),
        sample_interval_s=sample_interval,
        drain_quiet_s=drain_quiet,
        flush_ms=flush_ms,
    )
    try:
        summary = _run(request, engine, runtime, as_json)
    except KeyboardInterrupt:
        console.print(f"[red]interrupted[/]: the engine was stopped; partial results in {output}")
        sys.exit(130)
    if as_json:
        emit_json(summary)
    else:
        colour = "green" if summary.state == "ok" else "red"
        console.print(
            f"[{colour}]{summary.state}[/]: {summary.triples_pushed:,} triples in "
            f"{summary.batches_pushed} batches, {summary.result_events} result events "
            f"({summary.result_rows} rows), {summary.samples} samples → {summary.run_dir}"
        )
        if summary.error:
            console.print(f"[red]error:[/] {summary.error}", highlight=False)
    if summary.state != "ok":
        sys.exit(1)


def _check_pacing(mode: PacingMode, rate: float | None, time_scale: float | None) -> None:
    """The pacing options that go together, in the user's option names (the feeder's own
    check says the same in its field names)."""
    given = [o for o, v in (("--rate", rate), ("--time-scale", time_scale)) if v is not None]
    if len(given) == 2:
        raise InputError("give either --rate or --time-scale, not both")
    if given and mode is not PacingMode.APP_TIME:
        what = "as fast as possible" if mode is PacingMode.AFAP else "in real time (1:1)"
        raise InputError(
            f"--mode {mode.value} pushes {what}: it takes no {given[0]}",
            expected=f"--mode app-time with {given[0]}, or --mode {mode.value} alone",
        )


def _run(request: RunRequest, engine: str, runtime: str, as_json: bool) -> RunSummary:
    from rsp_sdk.run.runner import run

    if as_json:
        return run(request)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} triples"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task(f"{engine}@{runtime}", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return run(request, progress=progress)
