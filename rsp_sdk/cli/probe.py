"""``rsp engines probe NAME``: infer an engine's SECRET profile from its outputs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rsp_sdk.cli.common import CacheOpt, console, emit_json, parse_engine_config

if TYPE_CHECKING:  # the probe (engines, pyarrow) loads when the command runs
    from rsp_sdk.probe.model import Fingerprint


def probe_command(
    name: Annotated[str, typer.Argument(help="engine name")],
    runtime: Annotated[
        str | None, typer.Option("--runtime", "-r", help="runtime (default: the first that fits)")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="write the inferred profile (TOML)")
    ] = None,
    engine_config: Annotated[
        str | None, typer.Option(help="engine config JSON (or @file.json) passed to open")
    ] = None,
    real_time: Annotated[
        bool,
        typer.Option(
            "--real-time",
            help="pace every probe on the wall clock (a wall-clock engine's windows then follow "
            "the timestamps, up to its own phase; the clock stays undecided)",
        ),
    ] = False,
    cache: CacheOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Feed the engine short probe streams and infer its SECRET profile from its outputs."""
    from rsp_sdk.engine.provision import ProvisionCache
    from rsp_sdk.engine.registry import get_adapter
    from rsp_sdk.probe import ProbeSettings, inferred_profile, probe_engine, write_profile

    adapter = get_adapter(name)
    rt = runtime or _default_runtime(adapter.driver_kind)
    settings = ProbeSettings(
        runtime=rt,
        config=parse_engine_config(engine_config),
        real_time=real_time,
        cache=ProvisionCache(cache) if cache else None,
    )
    if as_json:
        fp = probe_engine(adapter, settings)
    else:
        with console.status(f"probing {name} on {rt} …") as status:
            fp = probe_engine(adapter, settings, progress=lambda m: status.update(f"{name}: {m}"))
    if output is not None:
        write_profile(fp, output)
    if as_json:
        data = fp.model_dump(mode="json")
        data["differences"] = [d.model_dump(mode="json") for d in fp.differences]
        data["profile"] = inferred_profile(fp).model_dump(mode="json")
        emit_json(data)
        return
    show(fp)
    if output is not None:
        console.print(f"profile written to {output}")


def _default_runtime(kind: str) -> str:
    from rsp_sdk.runtime import runtimes_for

    names = runtimes_for(kind)
    for preferred in ("subprocess", "jpype", "py4j"):
        if preferred in names:
            return preferred
    return names[0]


def show(fp: Fingerprint) -> None:
    t = Table(title=f"{fp.engine} on {fp.runtime}: inferred SECRET profile")
    for col in ("field", "inferred", "why / evidence"):
        t.add_column(col, overflow="fold")
    for f in fp.findings.values():
        value = f.value if f.decided else "[yellow]undecided[/]"
        t.add_row(f.field.value, value, f.reason)
    console.print(t)
    console.print("[bold]evidence[/] (probe: output)")
    for f in fp.findings.values():
        for e in f.evidence:
            console.print(f"  {f.field.value} ← {e.probe}: {e.observed}", highlight=False)
    diffs = fp.differences
    if not diffs:
        console.print("[green]no difference from the declared profile[/] (decided fields)")
    for d in diffs:
        console.print(
            f"[red]differs[/]: {d.field.value} declared {d.declared}, inferred {d.inferred}",
            highlight=False,
        )
