"""``rsp compare …``: compare engines with each other (LSBench mismatch and comparability)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsp_sdk.cli.common import RspTyper, console, emit_json
from rsp_sdk.compare.vocab import Partition, TimestampClock

app = RspTyper(
    help="Compare engines' outputs with each other (no oracle needed).",
    no_args_is_help=True,
)


@app.command("mismatch")
def mismatch_command(
    a: Annotated[
        Path, typer.Argument(metavar="A", help="engine A: CSRBench answer JSON, run dir or Parquet")
    ],
    b: Annotated[
        Path, typer.Argument(metavar="B", help="engine B: CSRBench answer JSON, run dir or Parquet")
    ],
    partition_a: Annotated[
        Partition,
        typer.Option(
            "--partition-a",
            help="blocks of A: relation (periodic engine) or element (eager engine)",
        ),
    ] = Partition.RELATION,
    partition_b: Annotated[
        Partition, typer.Option("--partition-b", help="blocks of B (see --partition-a)")
    ] = Partition.RELATION,
    query: Annotated[
        str | None, typer.Option("--query-name", help="which query of a multi-query run")
    ] = None,
    epsilon: Annotated[
        float | None,
        typer.Option(
            "--epsilon", help="also judge comparability: mm ≤ ε % both ways (exit 1 if not)"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """LSBench mismatch mm(A, B) and mm(B, A): how much of one output the other misses, in order."""
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.compare.lsbench import comparability
    from rsp_sdk.compare.relations import result_relations
    from rsp_sdk.compare.render import mismatch_renderable

    name_a, name_b = a.name or str(a), b.name or str(b)
    if name_a == name_b:
        name_a, name_b = f"A: {name_a}", f"B: {name_b}"
    streams = {
        name_a: (
            result_relations(load_answers(a, clock=TimestampClock.APP), query=query, source=name_a),
            partition_a,
        ),
        name_b: (
            result_relations(load_answers(b, clock=TimestampClock.APP), query=query, source=name_b),
            partition_b,
        ),
    }
    comp = comparability(streams, epsilon if epsilon is not None else 100.0)
    ordered = sorted(comp.pairs, key=lambda p: (p.e1 != name_a, p.e1))
    if as_json:
        out: dict[str, object] = {
            "mm_a_b": ordered[0].mm_percent,
            "mm_b_a": ordered[1].mm_percent,
            "pairs": [p.model_dump(mode="json") for p in ordered],
        }
        if epsilon is not None:
            out["epsilon_percent"] = epsilon
            out["comparable"] = comp.comparable
        emit_json(out)
    else:
        console.print(mismatch_renderable(ordered, comp if epsilon is not None else None))
    if epsilon is not None and not comp.comparable:
        raise typer.Exit(1)
