"""Developer sessions for rsp-sdk.

All sessions share one virtualenv (``.venv`` by default, or ``$RSP_VENV``): pyspark alone is
hundreds of megabytes, so creating it once per session would make every command slow. It holds
rsp_sdk and every bundled engine adapter (``adapters/*/``), all installed editable, and is
(re)installed only when one of their ``pyproject.toml`` files changes, tracked by a hash stamp
inside the venv.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
VENV = Path(os.environ.get("RSP_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")

nox.options.default_venv_backend = "none"
nox.options.sessions = ["lint", "typecheck", "tests"]


def _adapters() -> list[Path]:
    """The bundled adapter packages: every ``adapters/<engine>/`` with a pyproject.toml."""
    return sorted(p.parent for p in (ROOT / "adapters").glob("*/pyproject.toml"))


def _shared_env(session: nox.Session) -> None:
    """Create or refresh the shared venv, then put it first on PATH for this session."""
    stamp = VENV / ".rsp-stamp"
    h = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for adapter in _adapters():
        h.update(str(adapter.relative_to(ROOT)).encode() + b"\0")
        h.update((adapter / "pyproject.toml").read_bytes())
    want = h.hexdigest()
    if not (BIN / "python").exists():
        session.run(sys.executable, "-m", "venv", str(VENV), external=True)
    if not stamp.exists() or stamp.read_text() != want:
        session.run(
            str(BIN / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip", external=True
        )
        editable = [arg for a in _adapters() for arg in ("-e", str(a))]
        session.run(
            str(BIN / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "-e",
            f"{ROOT}[dev]",
            *editable,
            external=True,
        )
        stamp.write_text(want)
    session.env["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    session.env["VIRTUAL_ENV"] = str(VENV)
    session.env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session.env.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")


def _run(session: nox.Session, tool: str, *args: str) -> None:
    """Run a console script of the shared venv (nox resolves bare names on its own PATH)."""
    session.run(str(BIN / tool), *args, external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (pass pytest arguments after `--`)."""
    _shared_env(session)
    _run(session, "pytest", *(session.posargs or ["tests"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + format check."""
    _shared_env(session)
    paths = ["rsp_sdk", "adapters", "tests", "benchmarks", "noxfile.py"]
    _run(session, "ruff", "check", *paths)
    _run(session, "ruff", "format", "--check", *paths)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the SDK and on each bundled adapter."""
    _shared_env(session)
    _run(session, "mypy", "--strict", "rsp_sdk")
    for adapter in _adapters():
        packages = sorted(p.parent.name for p in adapter.glob("*/__init__.py"))
        _run(session, "mypy", "--strict", *(str(adapter / p) for p in packages))


@nox.session
def bench(session: nox.Session) -> None:
    """Speed benchmarks: prints numbers and ratios (pass benchmark names to select)."""
    _shared_env(session)
    _run(session, "python", "-m", "benchmarks", *session.posargs)


@nox.session
def images(session: nox.Session) -> None:
    """Docker images: the pinned Debian/JRE base from containers/base/bookworm.lock (root and
    debootstrap; a no-op when built), provisioned engines, and the Java fixture engine's image
    (pass `rsp images build` options after `--`, e.g. `-- --update-lock`)."""
    _shared_env(session)
    _run(session, "rsp", "images", "build", *session.posargs)
    _run(session, "python", "-m", "tests.fixtures.images")


@nox.session
def demo(session: nox.Session) -> None:
    """The main job until the matrix exists: generate a YABench stream and summarise it."""
    _shared_env(session)
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    stream = out / "yabench-sg1.parquet"
    _run(
        session,
        "rsp",
        "generate",
        "yabench",
        "--stations",
        "1000",
        "--interval",
        "1000",
        "--duration",
        "30000",
        "--seed",
        "1",
        "-o",
        str(stream),
    )
    _run(session, "rsp", "stream", "info", str(stream))
