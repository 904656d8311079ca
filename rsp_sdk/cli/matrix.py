"""``rsp matrix``: plan and run a matrix spec (``matrix/*.toml``), print its tables."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from rsp_sdk.cli.common import RspTyper, console, emit_json
from rsp_sdk.cli.matrix_progress import matrix_progress
from rsp_sdk.cli.matrix_tables import (
    COLOURS,
    comparability_table,
    coverage_table,
    mismatch_table,
    perf_table,
    rate_max_table,
    reasons_table,
    verdict_table,
)
from rsp_sdk.cli.oracle_opts import Evaluator, EvaluatorOpt, SparkMasterOpt
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.axes import who

if TYPE_CHECKING:  # the matrix machinery (engines, Spark, pyarrow) loads when a command runs
    from rsp_sdk.matrix.engines import EngineInfo
    from rsp_sdk.matrix.estimate import Estimate
    from rsp_sdk.matrix.inputs import PreparedStream
    from rsp_sdk.matrix.plan import Cell
    from rsp_sdk.matrix.run import MatrixResult
    from rsp_sdk.matrix.spec import MatrixSpec, Rule

app = RspTyper(help="The engine matrix: plan, run and tabulate a spec (matrix/*.toml).")

Spec = Annotated[Path, typer.Argument(help="matrix spec (TOML), e.g. matrix/csrbench.toml")]
Only = Annotated[
    list[str] | None,
    typer.Option(
        "--only",
        help="pick cells: engine=cqels,query=q4 (repeatable; same key = or; commas inside "
        "brackets stay in the value: query=qt[R=PT5S,S=PT1S]); axes: engine, runtime, query, "
        "group (the experiment), stream, feeding, rate, time_scale, instances, repetition, "
        "state",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="print JSON instead of tables")]


@app.command("plan")
def plan_command(
    spec: Spec,
    only: Only = None,
    as_json: AsJson = False,
    summary: Annotated[
        bool, typer.Option("--summary", help="one line: cells to run and expected wall time")
    ] = False,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            "-o",
            help="a results directory of this spec: its finished cells are counted as done and "
            "its measured cells price the rest",
        ),
    ] = None,
) -> None:
    """List a spec's cells, why some will be skipped, and the expected wall time.

    Runs nothing (a stream is generated, in a temporary folder, only the first time its
    recipe is seen: its sha256 is part of every cell key)."""
    from rsp_sdk.matrix.engines import spec_engines
    from rsp_sdk.matrix.estimate import estimate
    from rsp_sdk.matrix.plan import CellState
    from rsp_sdk.matrix.ratesearch import max_probes, targets
    from rsp_sdk.matrix.run import planned
    from rsp_sdk.matrix.spec import load_spec

    loaded = load_spec(spec)
    measured = _measured_rows(results)
    engines = spec_engines(loaded)
    with tempfile.TemporaryDirectory(prefix="rsp-matrix-plan-") as tmp:
        streams, cells = planned(loaded, spec, Path(tmp), only, plan_only=True, engines=engines)
    cut = _exclusions(loaded, spec, streams, only, engines)
    runnable = [c for c in cells if c.state is CellState.PLANNED]
    per_stream = {s.name: s.expected_cell_s for s in loaded.streams if s.expected_cell_s}
    priced = estimate(runnable, loaded.expected_cell_s, measured, per_stream)
    searches = targets(loaded, runnable)
    probes = len(searches) * max_probes(loaded.rate_search) if loaded.rate_search else 0
    wall = priced.wall_s + probes * loaded.expected_cell_s
    if as_json:
        emit_json(_plan_json(loaded.name, cells, searches, probes, priced, wall, cut))
        return
    if not summary:
        console.print(_plan_table(loaded.name, cells))
        for rule, n in cut:
            console.print(f"excluded: {n} cell(s) by {_rule_text(rule)}", highlight=False)
        for c in searches:
            console.print(f"Rate_max search: {escape(who(c.axes()))}/{c.query}/{c.stream}")
    console.print(
        (f"{loaded.name}: " if summary else "")
        + f"{len(runnable)} runnable, {len(cells) - len(runnable)} refused or unavailable"
        + (f", up to {probes} Rate_max probes" if probes else "")
        + "; "
        + priced.describe()
        + (f" + {probes * loaded.expected_cell_s / 60:.1f} min of probes" if probes else "")
    )


def _exclusions(
    loaded: MatrixSpec,
    path: Path,
    streams: dict[str, PreparedStream],
    only: list[str] | None,
    engines: dict[str, EngineInfo],
) -> list[tuple[Rule, int]]:
    """The spec's exclude rules and how many selected cells each cuts (planned without them,
    with the engines the plan resolved)."""
    from rsp_sdk.matrix.plan import exclusions, plan
    from rsp_sdk.matrix.select import select

    if not loaded.exclude:
        return []
    unruled = plan(loaded.model_copy(update={"exclude": []}), path, streams, engines=engines)
    return exclusions(loaded, select(unruled, only or []))


def _rule_text(rule: Rule) -> str:
    axes = rule.model_dump(exclude_none=True, exclude={"reason"})
    text = "rule " + ", ".join(f"{k}={v}" for k, v in axes.items())
    return text + (f": {rule.reason}" if rule.reason else "")


def _plan_json(
    name: str,
    cells: list[Cell],
    searches: list[Cell],
    probes: int,
    priced: Estimate,
    wall: float,
    cut: list[tuple[Rule, int]],
) -> dict[str, Any]:
    """``rsp matrix plan --json``: every cell (without its rendered query), the Rate_max
    searches and the price."""
    return {
        "spec": name,
        "cells": [c.model_dump(mode="json", exclude={"query_spec"}) for c in cells],
        "rate_searches": [
            {k: getattr(c, k) for k in ("engine", "variant", "runtime", "query", "stream")}
            for c in searches
        ],
        "rate_search_max_probes": probes,
        "finished": priced.finished,
        "expected_wall_s": wall,
        "priced_from_measured": priced.measured,
        "excluded": [
            {
                "rule": r.model_dump(exclude_none=True, exclude={"reason"}),
                "reason": r.reason,
                "cells": n,
            }
            for r, n in cut
        ],
    }


def _plan_table(name: str, cells: list[Cell]) -> Table:
    """One row per cell: its label, state, key prefix and why it will not run."""
    t = Table(title=f"matrix {name}: {len(cells)} cells", show_lines=False)
    for col in ("cell", "state", "key", "why not"):
        t.add_column(col, overflow="fold")
    for c in cells:
        colour = COLOURS.get(c.state.value, "white")
        state = f"[{colour}]{c.state.value}[/]"
        t.add_row(escape(c.label), state, c.key[:12], escape(c.reason or ""))
    return t


def _measured_rows(results: Path | None) -> list[dict[str, Any]]:
    """The finished cells of a results directory (none without one)."""
    from rsp_sdk.matrix.store import Store

    if results is None:
        return []
    store = Store(results)
    if not store.marker.exists():
        raise InputError(
            "not a results directory of rsp matrix",
            path=results,
            expected="a directory holding matrix.json (written by rsp matrix run -o)",
        )
    return store.current_rows()


@app.command("run")
def run_command(
    spec: Spec,
    output: Annotated[Path, typer.Option("--output", "-o", help="results directory")],
    only: Only = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="cells side by side (clock-free ones)")
    ] = 1,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="rerun failed, timed-out, interrupted cells; judge again the cells not judged for "
            "the oracle's size limits (after raising RSP_ORACLE_MAX_REPORTS or _SCOPE)",
        ),
    ] = False,
    rerun: Annotated[
        bool,
        typer.Option(
            "--rerun",
            help="run every selected cell again, finished ones too (old runs kept under "
            "retried/); with --only, the cells to re-measure",
        ),
    ] = False,
    evaluator: EvaluatorOpt = Evaluator.AUTO,
    spark_master: SparkMasterOpt = None,
    as_json: AsJson = False,
) -> None:
    """Run and judge every cell of SPEC not yet done in OUTPUT (a rerun resumes).

    Then print the comparison tables and the results path. Exit 0 unless a cell that ran was
    judged incorrect or failed (1)."""
    from rsp_sdk.matrix.run import run_matrix
    from rsp_sdk.matrix.spec import load_spec
    from rsp_sdk.matrix.store import Store

    loaded = load_spec(spec)
    with matrix_progress(loaded.name, console, quiet=as_json) as (stop, progress):
        try:
            result = run_matrix(
                loaded,
                spec,
                output,
                only=only,
                jobs=jobs,
                retry_failed=retry_failed,
                rerun=rerun,
                progress=progress,
                evaluator=evaluator.value,
                spark_master=spark_master,
            )
        except KeyboardInterrupt:
            stop()
            print_tables(output, Store(output).current_rows())
            console.print(f"interrupted: rerun the same command to resume; results: {output}")
            raise typer.Exit(130) from None
    if as_json:
        emit_json({"results": str(output), "cells": result.rows})
    else:
        print_tables(output, result.rows)
        console.print(_time_split(result))
        console.print(f"results: {output}")
    if any(
        r["state"] in ("failed", "timeout") or r.get("verdict") in ("incorrect", "no_output")
        for r in result.rows
        if r["key"] not in result.probe_keys  # a probe failing is how Rate_max is found
    ):
        raise typer.Exit(1)


def _time_split(result: MatrixResult) -> str:
    """What ran and where the time went: engine runs against oracle + harness."""
    return (
        f"ran {result.ran} cell(s), {result.skipped} already done"
        + (
            f", {result.after_timeout} not run after a timeout (skipped)"
            if result.after_timeout
            else ""
        )
        + (f", judged {result.judged} finished run(s)" if result.judged else "")
        + "; oracle computed "
        f"{result.oracle_computed}, reused {result.oracle_reused}; {result.wall_s:.0f} s "
        f"(engine runs {result.engine_s:.0f} s, oracle + harness "
        f"{max(0.0, result.wall_s - result.engine_s):.0f} s)"
    )


@app.command("show")
def show_command(
    results: Annotated[Path, typer.Argument(help="a results directory of rsp matrix run")],
    coverage_md: Annotated[
        bool,
        typer.Option("--coverage-md", help="print only the feature-coverage table, as Markdown"),
    ] = False,
) -> None:
    """Print the tables of a results directory (reads RESULTS/ only, never runs an engine)."""
    from rsp_sdk.matrix.store import Store

    store = Store(results)
    if not store.marker.exists():
        raise InputError("not a matrix results directory (no matrix.json)", path=results)
    if coverage_md:
        from rsp_sdk.matrix.coverage import coverage_markdown

        print(coverage_markdown(store.current_rows(), results), end="")
        return
    print_tables(results, store.current_rows())
    console.print(f"results: {results}")


@app.command("schema")
def schema_command() -> None:
    """The JSON Schema of a matrix spec."""
    from rsp_sdk.matrix.spec import schema

    emit_json(schema())


def _metrics(root: Path) -> list[str]:
    """The metrics the spec recorded in RESULTS/matrix.json asked for."""
    marker = root / "matrix.json"
    if not marker.exists():
        return []
    metrics: list[str] = json.loads(marker.read_text()).get("spec", {}).get("metrics", [])
    return metrics


def print_tables(root: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow.parquet as pq

    from rsp_sdk.matrix.ratesearch import read_results

    specs = list(dict.fromkeys(r["spec"] for r in rows))
    for name in specs:
        mine = [r for r in rows if r["spec"] == name]
        console.print(verdict_table(mine, f"{name}: verdicts (t0 ms)", console.width))
        if "coverage" in _metrics(root):
            console.print(coverage_table(mine, f"{name}: feature coverage", root))
        console.print(perf_table(mine, f"{name}: performance (medians)", console.width))
        odd = [  # a judgement that failed (verdict not_judged with a reason) is listed too
            r
            for r in mine
            if r["state"] != "ok"
            or r.get("verdict") in ("incorrect", "no_output")
            or (r.get("verdict") == "not_judged" and r.get("reason"))
        ]
        if odd:
            console.print(reasons_table(odd, f"{name}: cells without a correct verdict"))
    mm_path = root / "mismatch.parquet"
    if mm_path.exists():
        mm = pq.read_table(mm_path).to_pylist()
        if mm:
            console.print(mismatch_table(mm, "LSBench mismatch mm(E1, E2)"))
    comp_path = root / "comparability.parquet"
    if comp_path.exists():
        comps = pq.read_table(comp_path).to_pylist()
        if comps:
            console.print(comparability_table(comps, "LSBench comparability within ε"))
    searches = read_results(root)
    if searches:
        console.print(rate_max_table(searches, "Rate_max (Ren et al.): highest sustained rate"))
