"""``rsp engines …``: list adapters, provision their Maven Central dependencies and user-supplied
engine artifacts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from rsp_sdk.cli.common import CacheOpt, RspTyper, console, emit_json
from rsp_sdk.cli.probe import probe_command
from rsp_sdk.errors import RspError

if TYPE_CHECKING:  # adapters, provisioning and the engine code load when a command runs
    from rsp_sdk.engine.provision import ProvisionCache

app = RspTyper(
    help="Engine adapters: list them, fetch their dependencies, add engine artifacts.",
    no_args_is_help=True,
)

app.command("probe")(probe_command)


def _cache(path: Path | None) -> ProvisionCache:
    from rsp_sdk.engine.provision import ProvisionCache

    return ProvisionCache(path)


def _manifest(name: str):  # type: ignore[no-untyped-def]
    from rsp_sdk.engine.registry import get_adapter

    adapter = get_adapter(name)
    manifest_fn = getattr(adapter, "manifest", None)
    manifest = manifest_fn() if callable(manifest_fn) else None
    if manifest is None:
        raise RspError(f"engine {name} has no provisioning manifest: nothing to fetch or add")
    return manifest


@app.command("list")
def list_(
    cache: CacheOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Every adapter found (entry points, $RSP_ADAPTERS), its runtimes and provisioning state."""
    from rsp_sdk.engine.registry import list_adapters

    rows = list_adapters(_cache(cache))
    if as_json:
        emit_json([r.model_dump(mode="json") for r in rows])
        return
    # fits 80 columns: one runtime a line, the origin (module:Class) on two, one-space gaps
    t = Table(title="engines", box=box.SIMPLE_HEAD, show_edge=False, padding=0)
    for col in ("engine", "version", "driver", "runtimes", "provisioned"):
        t.add_column(col, no_wrap=True)
    t.add_column("origin", overflow="fold")
    for r in rows:
        origin = r.origin.replace(":", "\n:", 1)
        if r.error:
            t.add_row(r.name, "", "", "", f"[red]load error: {r.error}[/]", origin)
            continue
        state = "[green]yes[/]" if r.provisioned else "[yellow]no[/] (below)"
        t.add_row(r.name, r.version, r.driver_kind, "\n".join(r.runtimes), state, origin)
    if not rows:
        console.print("no engine adapters installed (see README: adapters, RSP_ADAPTERS)")
        return
    console.print(t)
    for r in rows:
        if not r.provisioned and not r.error:
            what = ", ".join(_RUN.sub("", m) for m in r.missing)
            todo = " && ".join(provision_commands(r.name, r.missing)) or "see its documentation"
            console.print(f"{r.name} lacks {what}: {todo}", highlight=False, soft_wrap=True)


_RUN = re.compile(r" \(run: (?P<cmd>[^)]*)\)$")


def provision_commands(engine: str, missing: list[str]) -> list[str]:
    """The commands that provision everything ``missing`` lists (each item ends with ``(run:
    CMD)``, as ``ProvisionCache.missing`` writes it): one fetch, and one add naming every
    missing artifact, instead of one line per file."""
    fetch: list[str] = []
    paths: list[str] = []
    add = f"rsp engines add {engine} "
    for item in missing:
        m = _RUN.search(item)
        if m is None:
            continue
        cmd = m["cmd"]
        if cmd.startswith(add):
            paths.append(cmd.removeprefix(add))
        elif cmd not in fetch:
            fetch.append(cmd)
    return fetch + ([add + " ".join(paths)] if paths else [])


@app.command("fetch")
def fetch(
    name: Annotated[str, typer.Argument(metavar="ENGINE", help="engine name")],
    cache: CacheOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Resolve the engine's pinned Maven Central dependencies into the cache (sha256-checked)."""
    manifest = _manifest(name)
    c = _cache(cache)
    what = (
        [f"{len(manifest.dependencies)} Maven Central dependencies"] * bool(manifest.dependencies)
        + ["npm packages (npm ci)"] * bool(manifest.npm)
        + ["the driver crate (cargo build --release --locked: minutes the first time)"]
        * bool(manifest.cargo)
    )
    with console.status(f"provisioning {name}: {', '.join(what) or 'nothing to fetch'} …"):
        paths = c.fetch(manifest)
    missing = c.missing(manifest)
    npm = str(c.npm_modules(manifest)) if manifest.npm else None
    binary = str(c.cargo_binary(manifest)) if manifest.cargo else None
    deps = [str(p) for p in paths if str(p) not in (npm, binary)]
    if as_json:
        emit_json(
            {"engine": name, "dependencies": deps, "npm": npm, "cargo": binary, "missing": missing}
        )
        return
    if manifest.dependencies:
        console.print(f"{name}: {len(deps)} dependencies verified in {c.engine_dir(name) / 'deps'}")
    if npm:
        console.print(f"{name}: npm packages installed from the pinned lock file in {npm}")
    if binary:
        console.print(f"{name}: driver built from the pinned Cargo.lock: {binary}")
    for m in missing:
        console.print(f"  still missing: {m}")


@app.command("add")
def add(
    name: Annotated[str, typer.Argument(metavar="ENGINE", help="engine name")],
    paths: Annotated[list[Path], typer.Argument(metavar="PATH", help="engine jar(s) or folder")],
    cache: CacheOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Record user-supplied engine artifacts (jars or a folder) with their sha256."""
    manifest = _manifest(name)
    c = _cache(cache)
    records = c.add(manifest, paths)
    missing = c.missing(manifest)
    if as_json:
        emit_json({"engine": name, "artifacts": records, "missing": missing})
        return
    for r in records:
        note = "[green]known build[/]" if r["verified"] else "[yellow]unknown build[/] (recorded)"
        console.print(f"{name}: {r['file']} sha256 {r['sha256']} {note}")
    for m in missing:
        console.print(f"  still missing: {m}")
    if not missing:
        console.print(f"{name} is ready to run")
