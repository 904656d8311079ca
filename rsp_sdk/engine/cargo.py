"""Provisioning of engines published as Rust crates: a driver crate the adapter ships, built with
``cargo build --release --locked`` (cargo checks every crate against the committed Cargo.lock).

Layout in the cache::

    $RSP_CACHE/engines/NAME/cargo/target/        cargo's target dir, reused by every build
    $RSP_CACHE/engines/NAME/cargo/HASH/BINARY    the built driver (HASH: the crate's sources)

The target dir outlives source changes so a changed driver recompiles only itself: the engine's
dependencies (for rsp-rs: Oxigraph and its SPARQL stack) are built once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.errors import RspError


class CargoSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    crate_dir: str = Field(description="folder with Cargo.toml + Cargo.lock, relative")
    binary: str = Field(description="the [[bin]] the build produces")


def crate_digest(crate: Path) -> str:
    """sha256 over the crate's manifest, lock and sources (what decides the binary)."""
    h = hashlib.sha256()
    sources = [*sorted(crate.rglob("Cargo.toml")), *sorted(crate.rglob("*.rs"))]
    files = [
        crate / "Cargo.lock",
        *(f for f in sources if "target" not in f.relative_to(crate).parts),
    ]
    for f in files:
        h.update(str(f.relative_to(crate)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def binary_path(engine_dir: Path, crate: Path, settings: CargoSettings) -> Path:
    return engine_dir / "cargo" / crate_digest(crate)[:16] / settings.binary


def cargo_executable() -> str:
    """``$CARGO``, ``cargo`` on PATH, or rustup's default ``~/.cargo/bin/cargo``."""
    for candidate in (os.environ.get("CARGO"), shutil.which("cargo")):
        if candidate:
            return candidate
    rustup = Path.home() / ".cargo" / "bin" / "cargo"
    if rustup.is_file():
        return str(rustup)
    raise RspError(
        "cargo is needed to build this engine's driver: install a Rust toolchain, 1.85 or later "
        "(https://rustup.rs; Debian bookworm's cargo is too old), or set CARGO to cargo's path"
    )


def build_crate(name: str, engine_dir: Path, crate: Path, settings: CargoSettings) -> Path:
    """Build the driver (once per source digest) and return its binary in the cache."""
    target = binary_path(engine_dir, crate, settings)
    if target.is_file():
        return target
    cargo = cargo_executable()
    for needed in ("Cargo.toml", "Cargo.lock"):
        if not (crate / needed).is_file():
            raise RspError(f"engine {name}: {crate / needed} is missing")
    target_dir = engine_dir / "cargo" / "target"
    target_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.run(
        [cargo, "build", "--release", "--locked", "--manifest-path", str(crate / "Cargo.toml")],
        env={**os.environ, "CARGO_TARGET_DIR": str(target_dir)},
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RspError(
            f"engine {name}: cargo build --release --locked failed in {crate}:\n"
            f"{proc.stderr[-4000:]}"
        )
    built = target_dir / "release" / settings.binary
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    shutil.copy2(built, tmp)
    os.replace(tmp, target)
    (target.parent / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    return target
