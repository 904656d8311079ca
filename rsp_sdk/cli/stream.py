"""``rsp stream …``: import, export and inspect stream files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rsp_sdk.cli.common import RspTyper, console, duration_ms, emit_json
from rsp_sdk.errors import InputError
from rsp_sdk.streams.formats import STATIC_FORMATS, ExportFormat, StreamFormat
from rsp_sdk.streams.vocab import DEFAULT_STREAM_IRI
from rsp_sdk.util.outpath import check_output, is_stdout

if TYPE_CHECKING:  # importers, exporters and pyarrow load when a command runs
    import pyarrow as pa

app = RspTyper(
    help="Import, export and inspect streams (Parquet tables of timestamped triples).",
    no_args_is_help=True,
)


@app.command("import")
def import_(
    src: Annotated[
        list[Path],
        typer.Argument(
            metavar="SRC",
            help="input file (folder for csrbench-ttl; .stream files or a folder: citybench)",
        ),
    ],
    fmt: Annotated[StreamFormat, typer.Option("--format", "-f", help="input format")],
    out: Annotated[Path, typer.Option("--output", "-o", help="output Parquet file")],
    interval: Annotated[
        int | None,
        typer.Option(
            "--interval",
            metavar="DURATION",
            parser=duration_ms,
            help="time between data_XX.ttl files (csrbench-ttl) or between user locations "
            "(citybench): ms, 1s, 5m",
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="CityBench dataset/ folder (default: ../dataset)"),
    ] = None,
    stream: Annotated[str, typer.Option("--stream", help="IRI naming the stream")] = (
        DEFAULT_STREAM_IRI
    ),
    sort: Annotated[bool, typer.Option("--sort", help="accept unsorted input and sort it")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON summary")] = False,
) -> None:
    """Import a stream (n3t, csrbench-ttl, trig, citybench) or static data (ntriples, turtle)."""
    from rsp_sdk.model.terms import check_iri
    from rsp_sdk.streams.importers import import_any
    from rsp_sdk.streams.io import write_static, write_stream

    check_output(out, what="a Parquet file path (--output)")
    check_iri(stream, option="--stream")
    shown = " ".join(map(str, src))
    with console.status(f"importing {shown} …", spinner="dots"):
        table, meta = import_any(
            src, fmt, stream=stream, interval_ms=interval, sort=sort, dataset=dataset
        )
        if fmt in STATIC_FORMATS:
            write_static(table, out, meta)
        else:
            write_stream(table, out, meta)
    if as_json:
        emit_json(
            {
                "output": str(out),
                "rows": table.num_rows,
                "format": fmt.value,
                "static": fmt in STATIC_FORMATS,
            }
        )
    else:
        kind = "static triples" if fmt in STATIC_FORMATS else "stream triples"
        console.print(f"wrote {table.num_rows} {kind} to {out}")


@app.command("export")
def export(
    src: Annotated[Path, typer.Argument(metavar="SRC", help="stream Parquet file")],
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="output format")],
    out: Annotated[
        Path, typer.Option("--output", "-o", help="output file, or - for standard output")
    ],
    stream: Annotated[
        str | None, typer.Option("--stream", help="export only this stream (IRI)")
    ] = None,
) -> None:
    """Export a stream to timestamped N-Triples (n3t) or TriG named graphs."""
    from rsp_sdk.streams.exporters import export_stream, write_export
    from rsp_sdk.streams.io import read_stream

    to_stdout = is_stdout(out)
    if not to_stdout:
        check_output(out, what="a file path (--output), or - for standard output")
    table = read_stream(src)
    if stream is not None:
        table = _one_stream(table, stream, src)
    if to_stdout:
        write_export(table, sys.stdout, fmt)
        sys.stdout.flush()
        return
    with console.status(f"exporting to {out} …", spinner="dots"):
        export_stream(table, out, fmt)
    console.print(f"wrote {table.num_rows} triples to {out}")


def _one_stream(table: pa.Table, iri: str, src: Path) -> pa.Table:
    import pyarrow.compute as pc

    picked = table.filter(pc.equal(table.column("stream"), iri))
    if picked.num_rows == 0:
        found = sorted(str(s) for s in pc.unique(table.column("stream")).to_pylist())
        raise InputError(
            f"no stream {iri} in the file", path=src, expected="one of: " + ", ".join(found)
        )
    return picked


@app.command("info")
def info(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="stream Parquet file")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    top: Annotated[int, typer.Option(help="predicates to show")] = 15,
) -> None:
    """Triples, timestamps, time span, rate and the predicate histogram of a stream."""
    from rsp_sdk.streams.info import summarize
    from rsp_sdk.streams.prefixes import prefixed

    summary = summarize(file)
    if as_json:
        emit_json(summary)
        return
    t = Table(title=str(file), show_header=False)
    t.add_row("triples", f"{summary.triples:,}")
    t.add_row("distinct timestamps", f"{summary.timestamps:,}")
    t.add_row("time span", f"{summary.t_min_ms} … {summary.t_max_ms} ms ({summary.span_ms:,} ms)")
    rate = summary.rate_triples_per_s
    t.add_row("rate", f"{rate:,.1f} triples/s" if rate is not None else "n/a (single instant)")
    for name, n in summary.streams.items():
        t.add_row("stream", f"{name} ({n:,} triples)")
    if summary.graphs:
        t.add_row("named graphs", f"{summary.graphs:,}")
    if summary.producer:
        t.add_row("producer", summary.producer)
    console.print(t)
    shown = list(summary.predicates.items())[:top]
    names, used = prefixed(pred for pred, _ in shown)
    h = Table(title="predicates")
    h.add_column("predicate", overflow="fold")  # never cut: an IRI's end tells them apart
    h.add_column("triples", justify="right")
    h.add_column("share", justify="right")
    for name, (_, n) in zip(names, shown, strict=True):
        h.add_row(name, f"{n:,}", f"{100.0 * n / max(summary.triples, 1):.1f} %")
    if len(summary.predicates) > top:
        h.add_row(f"… {len(summary.predicates) - top} more", "", "")
    console.print(h)
    for prefix, namespace in sorted(used.items()):
        console.print(f"  {prefix}: <{namespace}>", highlight=False, soft_wrap=True)
