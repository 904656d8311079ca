"""``rsp oracle …``: expected outputs of a continuous query under an engine's semantics."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rsp_sdk.cli.common import RspTyper, console, emit_json
from rsp_sdk.cli.oracle_opts import Evaluator, EvaluatorOpt, SparkMasterOpt
from rsp_sdk.cli.queryopts import ParamOpt, QueryOpt, StaticOpt, check_static, parse_params
from rsp_sdk.cli.sparkprogress import spark_progress
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import load_profile
from rsp_sdk.util.atomic import atomic_path
from rsp_sdk.util.outpath import check_output

app = RspTyper(
    help="The oracle: what a correct engine must output, for every candidate t0.",
    no_args_is_help=True,
)


class OutFormat(StrEnum):
    PARQUET = "parquet"
    CSRBENCH_JSON = "csrbench-json"


@app.command("expected")
def expected_cmd(
    stream: Annotated[Path, typer.Option("--stream", "-s", help="stream Parquet file")],
    query: QueryOpt,
    profile: Annotated[str, typer.Option("--profile", "-p", help="profile name or TOML/JSON file")],
    out: Annotated[Path, typer.Option("--output", "-o", help="output file")],
    t0: Annotated[
        list[int] | None, typer.Option("--t0", help="candidate t0 in ms (repeatable)")
    ] = None,
    static: StaticOpt = None,
    param: ParamOpt = None,
    fmt: Annotated[OutFormat, typer.Option("--format", "-f", help="output format")] = (
        OutFormat.PARQUET
    ),
    evaluator: EvaluatorOpt = Evaluator.AUTO,
    spark_master: SparkMasterOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON summary")] = False,
) -> None:
    """Compute the expected relations of every candidate t0 in one Spark job."""
    from rsp_sdk.oracle.api import plan_job
    from rsp_sdk.oracle.csrbench_json import write_csrbench
    from rsp_sdk.oracle.spark import stop_spark
    from rsp_sdk.query import load_query

    started = time.perf_counter()
    # every option is checked before Spark starts: a mistake costs no Spark job
    if fmt is OutFormat.CSRBENCH_JSON and (t0 is None or len(t0) != 1):
        raise InputError(
            "csrbench-json holds the relations of one t0", expected="exactly one --t0 MS"
        )
    check_output(out, what="a file path (--output)")
    spec = load_query(query, parse_params(param))
    static = check_static(static)
    load_profile(profile)
    if not stream.is_file():
        raise InputError("stream file not found", path=stream, expected="a stream Parquet file")
    try:
        # plan_job checks the stream and the evaluator, then starts Spark (spark_master)
        with spark_progress(console, "planning the expected output, starting Spark …") as relabel:
            job = plan_job(
                stream,
                spec,
                profile,
                t0s=t0,
                static=static or (),
                spark_master=spark_master,
                evaluator=evaluator.value,
            )
            relabel(
                f"expected output of {len(job.t0s):,} t0 classes ({len(job.candidates):,} "
                f"candidates), evaluator {job.choice.evaluator}"
            )
            table = job.run()
    finally:
        stop_spark()
    if fmt is OutFormat.PARQUET:
        import pyarrow.parquet as pq

        with atomic_path(out) as tmp:
            pq.write_table(table, tmp, compression="zstd")
    else:
        write_csrbench(out, table, list(spec.variables), t0[0] if t0 else None)
    elapsed = time.perf_counter() - started
    relations = len({(r["t0_ms"], r["seq"]) for r in table.select(["t0_ms", "seq"]).to_pylist()})
    summary = {
        "output": str(out),
        "query": spec.name,
        "profile": job.profile.name,
        "evaluator": job.choice.evaluator,
        "evaluator_reason": job.choice.reason,
        "t0_candidates": job.candidates,
        "t0_classes": len(job.t0s),
        "reports": job.all_reports.num_rows,
        "relations": relations,
        "rows": table.num_rows,
        "seconds": elapsed,
        "warnings": spec.warnings,
    }
    if as_json:
        emit_json(summary)
    else:
        console.print(
            f"wrote {table.num_rows:,} rows ({relations:,} relations over "
            f"{len(job.candidates)} t0 candidates in {len(job.t0s)} classes of equal window "
            f"contents) to {out} in {elapsed:.1f} s "
            f"[evaluator: {job.choice.evaluator} — {job.choice.reason}]"
        )
