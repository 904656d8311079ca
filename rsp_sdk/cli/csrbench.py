"""``rsp csrbench``: the CSRBench experiment on engines × runtimes, judged by the oracle."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rsp_sdk.cli.common import (
    CacheOpt,
    RspTyper,
    console,
    emit_json,
    parse_engine_config,
)
from rsp_sdk.cli.oracle_opts import Evaluator, EvaluatorOpt, SparkMasterOpt
from rsp_sdk.errors import InputError
from rsp_sdk.util.outdir import check_output_dir

if TYPE_CHECKING:  # the experiment (engines, Spark, pandas) loads when the command runs
    from rsp_sdk.csrbench import Verdict

SUMMARY = "Run CSRBench (34 graphs, Q1–Q7) on engines and judge each output."
app = RspTyper(help=SUMMARY)

_DATA = "dellaglio+csrbench-oracle/data"

COLOURS = {
    "correct": "green",
    "incorrect": "red",
    "no output": "red",
    "unsupported": "yellow",
    "failed": "red",
    "not judged": "dim",
}


def _default_data() -> Path:
    shared = os.environ.get("RSP_SHARED_DATA")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3] / "shared" / "data"
    return base / _DATA


@app.callback(invoke_without_command=True)
def csrbench(
    engine: Annotated[
        list[str], typer.Option("--engine", "-e", help="engine adapter (repeatable)")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="new output directory")],
    runtime: Annotated[
        list[str] | None,
        typer.Option("--runtime", "-r", help="runtime (repeatable); default: every runtime"),
    ] = None,
    query: Annotated[
        list[str] | None, typer.Option("--query", "-q", help="q1 … q7 (repeatable); default all")
    ] = None,
    queries: Annotated[
        Path | None, typer.Option(help="folder of qN.rspql (default matrix/queries/csrbench)")
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(help=f"CSRBench data_XX.ttl folder (default $RSP_SHARED_DATA/{_DATA})"),
    ] = None,
    engine_config: Annotated[
        str | None, typer.Option(help="engine config JSON (or @file.json) passed to open")
    ] = None,
    judge: Annotated[bool, typer.Option(help="judge each output with the oracle")] = True,
    evaluator: EvaluatorOpt = Evaluator.AUTO,
    spark_master: SparkMasterOpt = None,
    cache: CacheOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="replace an OUTPUT an earlier rsp csrbench wrote")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the verdicts as JSON")] = False,
) -> None:
    """Replay the CSRBench data into each engine on each runtime, run Q1–Q7, and judge every
    output with the oracle under the engine's declared profile: correct (with the matching t0)
    or incorrect (with the first diverging relation and why). Runs are recorded under
    OUTPUT/runs/ENGINE@RUNTIME/qN, the verdicts in OUTPUT/csrbench.json. Exit 0 when every
    judged run is correct, 1 otherwise."""
    from rsp_sdk.csrbench import QUERIES, CsrbenchRequest, default_query_dir, run_csrbench
    from rsp_sdk.engine.preflight import check_runnable
    from rsp_sdk.engine.registry import get_adapter

    check_output_dir(output, force=force)
    if cache is not None:  # engines, bridge and glue are found through $RSP_CACHE, in every child
        if not cache.is_dir():
            raise InputError("no such provisioning cache", path=cache, expected="a folder")
        os.environ["RSP_CACHE"] = str(cache.resolve())
    names = query or list(QUERIES)
    bad = [q for q in names if q not in QUERIES]
    if bad:
        raise InputError(f"unknown CSRBench query {bad[0]!r}", expected=", ".join(QUERIES))
    request = CsrbenchRequest(
        engines=engine,
        runtimes=runtime or None,
        queries=names,
        query_dir=queries or default_query_dir(),
        data_dir=data or _default_data(),
        output=output,
        engine_config=parse_engine_config(engine_config),
        judge=judge,
        force=force,
        evaluator=evaluator.value,
        spark_master=spark_master,
    )
    if not request.data_dir.is_dir():
        raise InputError("the CSRBench data folder is missing", path=request.data_dir)
    for name in engine:  # an engine that cannot run is refused now, not as 7 "failed" rows
        check_runnable(get_adapter(name), runtime)

    def progress(v: Verdict) -> None:
        if not as_json:
            colour = COLOURS.get(v.state, "white")
            console.print(
                f"{v.engine}@{v.runtime} {v.query}: [{colour}]{v.state}[/]"
                + (f" ({_t0_text(v)})" if v.t0 is not None else ""),
                highlight=False,
            )

    verdicts = run_csrbench(request, progress=progress)
    if as_json:
        emit_json([v.model_dump(mode="json", exclude={"detail"}) for v in verdicts])
    else:
        console.print(_table(verdicts))
        console.print(f"verdicts: {output / 'csrbench.json'}")
    if any(v.state not in ("correct", "not judged") for v in verdicts):
        raise typer.Exit(1)


def _t0_text(v: Verdict) -> str:
    """``t0 0 ms``, or where it holds: ``t0 ∈ [0, 999] ms`` (candidates with equal contents)."""
    from rsp_sdk.compare.csrbench import t0_ranges_text

    if v.t0_ranges and v.t0_ranges != [(v.t0, v.t0)]:
        return t0_ranges_text(v.t0_ranges)
    return f"t0 {v.t0} ms"


def _table(verdicts: list[Verdict]) -> Table:
    from rsp_sdk.compare.csrbench import t0_set_text

    t = Table(title="CSRBench", show_lines=True)
    for col in ("engine", "runtime", "query", "verdict", "t0 ms", "relations", "why"):
        t.add_column(col, overflow="fold")
    for v in verdicts:
        colour = COLOURS.get(v.state, "white")
        why = v.divergence or v.error or ""
        t.add_row(
            v.engine,
            v.runtime,
            v.query,
            f"[{colour}]{v.state}[/]",
            "" if v.t0 is None else t0_set_text(v.t0_ranges or [(v.t0, v.t0)]),
            str(v.relations),
            why,
        )
    return t
