"""``rsp generate …``: reproducible synthetic streams."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import pyarrow as pa
import typer

from rsp_sdk.cli.common import console, emit_json
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI, StreamMeta
from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms
from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench
from rsp_sdk.streams.io import write_stream

app = typer.Typer(
    help="Generate reproducible streams: same parameters and seed, same bytes.",
    no_args_is_help=True,
)

Out = Annotated[Path, typer.Option("--output", "-o", help="output Parquet file")]
Json = Annotated[bool, typer.Option("--json", help="print a JSON summary")]
StreamIri = Annotated[str, typer.Option("--stream", help="IRI naming the stream")]


def _finish(table: pa.Table, meta: StreamMeta, out: Path, started: float, as_json: bool) -> None:
    write_stream(table, out, meta)
    elapsed = time.perf_counter() - started
    rate = table.num_rows / elapsed if elapsed > 0 else float("inf")
    if as_json:
        emit_json(
            {
                "output": str(out),
                "triples": table.num_rows,
                "seconds": elapsed,
                "triples_per_s": rate,
                "parameters": meta.parameters,
            }
        )
    else:
        console.print(
            f"wrote {table.num_rows:,} triples to {out} in {elapsed:.2f} s ({rate:,.0f} triples/s)"
        )


@app.command("yabench")
def yabench(
    out: Out,
    stations: Annotated[int, typer.Option(help="number of weather stations")] = 10,
    interval: Annotated[int, typer.Option(help="ms between two observations of a station")] = (
        300_000
    ),
    duration: Annotated[int, typer.Option(help="stream duration in ms (inclusive)")] = 3_600_000,
    seed: Annotated[int, typer.Option(help="java.util.Random seed, as YABench's -seed")] = 0,
    min_temp: Annotated[int, typer.Option(help="lowest temperature (inclusive)")] = 0,
    max_temp: Annotated[int, typer.Option(help="highest temperature (exclusive)")] = 100,
    stream: StreamIri = DEFAULT_STREAM_IRI,
    as_json: Json = False,
) -> None:
    """YABench SG1: air temperature observations, 7 triples each, draw for draw as YABench."""
    started = time.perf_counter()
    params = YabenchParams(
        stations=stations,
        interval_ms=interval,
        duration_ms=duration,
        seed=seed,
        min_temp=min_temp,
        max_temp=max_temp,
        stream=stream,
    )
    with console.status("generating …", spinner="dots"):
        table, meta = generate_yabench(params)
        _finish(table, meta, out, started, as_json)


@app.command("rooms")
def rooms(
    out: Out,
    description: Annotated[
        str | None, typer.Argument(help="e.g. '0: m1@r1 m2@r1; 1000: m1@r2'")
    ] = None,
    file: Annotated[Path | None, typer.Option("--file", help="read the description here")] = None,
    namespace: Annotated[str, typer.Option(help="namespace of individuals and rooms")] = (
        "http://example.org/"
    ),
    stream: StreamIri = DEFAULT_STREAM_IRI,
    as_json: Json = False,
) -> None:
    """Micro-stream of individuals detected in rooms, for functional tests."""
    started = time.perf_counter()
    if (description is None) == (file is None):
        raise typer.BadParameter("give either a DESCRIPTION or --file")
    text = file.read_text(encoding="utf-8") if file is not None else str(description)
    params = RoomsParams(description=text, namespace=namespace, stream=stream)
    table, meta = generate_rooms(params, source=file or "<description>")
    _finish(table, meta, out, started, as_json)
