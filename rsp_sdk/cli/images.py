"""``rsp images …``: build the pinned base image and the engine images, list them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rsp_sdk.cli.common import RspTyper, console, emit_json
from rsp_sdk.errors import RspError

app = RspTyper(
    help="Docker images: the pinned Debian base and one image per engine (JVM or program).",
    no_args_is_help=True,
)


@app.command("build")
def build(
    engines: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ENGINE",
            help="engines to build images for (default: every provisioned one with an image)",
        ),
    ] = None,
    base_only: Annotated[bool, typer.Option("--base-only", help="only the base image")] = False,
    update_lock: Annotated[
        bool,
        typer.Option(
            "--update-lock", help="accept the package versions the mirror serves now (root)"
        ),
    ] = False,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="build even when an image with the tag exists")
    ] = False,
    lock: Annotated[
        Path | None, typer.Option(help="base lock file (default containers/base/bookworm.lock)")
    ] = None,
    mirror: Annotated[
        str | None, typer.Option(help="Debian mirror (default from the lock, $RSP_DEBIAN_MIRROR)")
    ] = None,
    cache: Annotated[
        Path | None, typer.Option(help="provisioning cache (default $RSP_CACHE)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Build the base image from the lock, then each provisioned engine's image.

    The base needs root and debootstrap and is a no-op when its image exists; a JVM engine's
    image is its classpath from the provisioning cache plus the bridge, on that base; a
    program's (rsp-js, ETALIS) is the files its driver declares (``ProcessDriver.image``).
    """
    from rsp_sdk.engine.provision import ProvisionCache
    from rsp_sdk.images import docker_client
    from rsp_sdk.images.lock import load_lock

    client = docker_client()
    quiet = as_json
    result: dict[str, Any] = {
        "base": _base(client, lock, update_lock, rebuild, mirror, quiet),
        "engines": [],
        "skipped": [],
    }
    pc = ProvisionCache(cache)
    names = [] if base_only else list(engines or []) or _provisioned(pc, result["skipped"])
    current = load_lock(lock)
    for name in names:
        result["engines"].append(_engine_image(name, pc, client, current, rebuild, quiet))
    if as_json:
        emit_json(result)
        return
    for s in result["skipped"]:
        console.print(
            f"[yellow]skipped {s['engine']}[/]: not provisioned: {'; '.join(s['missing'])}"
        )


def _base(
    client: Any,
    lock: Path | None,
    update_lock: bool,
    rebuild: bool,
    mirror: str | None,
    quiet: bool,
) -> dict[str, Any]:
    """The base image, built from the lock unless it exists; its line in the JSON."""
    from rsp_sdk.images import build_base

    with console.status("base image …") as status:

        def step(msg: str) -> None:
            status.update(msg)
            if not quiet:
                console.print(f"  {msg}", highlight=False)

        base = build_base(
            lock_path=lock,
            update_lock=update_lock,
            rebuild=rebuild,
            mirror=mirror,
            client=client,
            step=step,
        )
    if not quiet:
        what = "built" if base.built else "up to date"
        console.print(
            f"[green]base[/] {base.tag} {what} ({base.packages} packages, openjdk {base.java}, "
            f"{base.seconds:.1f} s)",
            highlight=False,
        )
    return {
        "tag": base.tag,
        "id": base.image_id,
        "built": base.built,
        "seconds": round(base.seconds, 2),
        "packages": base.packages,
        "java": base.java,
        "lock": str(base.lock_path),
        "lock_updated": base.lock_updated,
    }


def _provisioned(pc: Any, skipped: list[dict[str, Any]]) -> list[str]:
    """Every engine with a docker runtime that is provisioned; the others go to ``skipped``."""
    from rsp_sdk.engine.registry import list_adapters

    names: list[str] = []
    for info in list_adapters(pc):
        if info.error or "docker" not in info.runtimes:
            continue
        if info.provisioned:
            names.append(info.name)
        else:
            skipped.append({"engine": info.name, "missing": info.missing})
    return names


def _engine_image(
    name: str, pc: Any, client: Any, current: Any, rebuild: bool, quiet: bool
) -> dict[str, Any]:
    """One engine's image on the base, built unless its tag exists; its line in the JSON."""
    from rsp_sdk.engine.registry import get_adapter
    from rsp_sdk.images.engine import ensure_engine_image
    from rsp_sdk.runtime.base import JvmDriver, ProcessDriver

    spec = get_adapter(name).driver(pc)
    if not isinstance(spec, JvmDriver) and not (
        isinstance(spec, ProcessDriver) and spec.image is not None
    ):
        raise RspError(f"engine {name} declares no image: it runs on the host (subprocess)")
    with console.status(f"image of {name} …"):
        img = ensure_engine_image(spec, client=client, lock=current, rebuild=rebuild)
    if not quiet:
        what = "built" if img.built else "up to date"
        console.print(f"[green]{name}[/] {img.tag} {what} ({img.seconds:.1f} s)")
    return {
        "engine": name,
        "tag": img.tag,
        "id": img.image_id,
        "built": img.built,
        "seconds": round(img.seconds, 2),
    }


@app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """The rsp-sdk images on this Docker daemon, with what their labels say."""
    from rsp_sdk.images import docker_client
    from rsp_sdk.images.client import LABEL
    from rsp_sdk.images.lock import load_lock

    client = docker_client()
    current = load_lock().tag
    rows = []
    for image in client.images.list(filters={"label": f"{LABEL}.image"}):
        labels = image.labels or {}
        kind = labels.get(f"{LABEL}.image", "")
        base = labels.get(f"{LABEL}.base", "") if kind == "engine" else ""
        rows.append(
            {
                "tags": list(image.tags),
                "id": image.id,
                "kind": kind,
                "engine": labels.get(f"{LABEL}.engine.name", ""),
                "version": labels.get(f"{LABEL}.engine.version", ""),
                "java": labels.get(f"{LABEL}.base.java", "") if kind == "base" else "",
                "bridge": labels.get(f"{LABEL}.bridge.version", ""),
                "base": base,
                "current": (current in image.tags) if kind == "base" else base == current,
                "size_mb": round(image.attrs.get("Size", 0) / 1e6, 1),
                "created": image.attrs.get("Created", ""),
            }
        )
    rows.sort(key=lambda r: (r["kind"], r["engine"], r["created"]))
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("no rsp-sdk images: build them with rsp images build")
        return
    t = Table(title="rsp-sdk images")
    t.add_column("tag", overflow="fold")
    for col in ("kind", "engine", "version", "java / bridge", "current", "MB"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(
            ", ".join(r["tags"]) or r["id"][:19],
            r["kind"],
            r["engine"],
            r["version"],
            r["java"] or r["bridge"],
            "[green]yes[/]" if r["current"] else "[yellow]no[/]",
            f"{r['size_mb']:.0f}",
        )
    console.print(t)


@app.command("prune")
def prune(
    engines: Annotated[
        bool, typer.Option("--engines", help="also every engine image (rebuilt on demand)")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Remove rsp-sdk images not on the current base lock (--engines: all engine images).

    Containers are never left running, so nothing else holds the images."""
    from rsp_sdk.images import docker_client
    from rsp_sdk.images.client import LABEL
    from rsp_sdk.images.lock import load_lock

    client = docker_client()
    current = load_lock().tag
    found = client.images.list(filters={"label": f"{LABEL}.image"})
    # engines first: a base image cannot go while images built on it exist
    found.sort(key=lambda i: (i.labels or {}).get(f"{LABEL}.image") != "engine")
    removed = []
    for image in found:
        labels = image.labels or {}
        kind = labels.get(f"{LABEL}.image")
        stale = (
            current not in image.tags
            if kind == "base"
            else engines or labels.get(f"{LABEL}.base") != current
        )
        if stale:
            client.images.remove(image.id, force=True)
            removed.append({"id": image.id, "tags": list(image.tags), "kind": kind})
    if as_json:
        emit_json({"removed": removed, "current_base": current})
        return
    for r in removed:
        console.print(f"removed {r['kind']} {', '.join(r['tags']) or r['id'][:19]}")
    console.print(f"{len(removed)} image(s) removed; current base {current}")
