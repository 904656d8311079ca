"""Developer sessions for rsp-sdk.

All sessions share one virtualenv (``.venv`` by default, or ``$RSP_VENV``): pyspark alone is
hundreds of megabytes, so creating it once per session would make every command slow. It holds
rsp_sdk and every bundled engine adapter (``adapters/*/``), all installed editable, and is
(re)installed only when one of their ``pyproject.toml`` files changes, tracked by a hash stamp
inside the venv.
"""

from __future__ import annotations

import hashlib
import json
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
            # editable installs as plain path entries, not import hooks: mypy (and other static
            # tools) then find rsp_sdk and the adapters from the venv, as users' projects do
            "--config-settings",
            "editable_mode=compat",
            "-e",
            f"{ROOT}[dev,docs]",
            *editable,
            external=True,
            # compat is chosen (above): setuptools' banner saying it is transitional, once per
            # package, was the first thing every fresh `nox -s matrix` printed (eight times);
            # when compat goes away the install fails loudly instead
            env={"PYTHONWARNINGS": "ignore:Compat editable installs"},
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
    # the suite's Spark JVMs (each `rsp` subprocess of the CLI tests starts one) start from a
    # class data sharing archive, dumped once into the rsp cache (a no-op when there)
    _run(session, "python", "-m", "rsp_sdk.oracle.cds")
    _run(session, "pytest", *(session.posargs or ["tests"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + format check."""
    _shared_env(session)
    paths = ["rsp_sdk", "adapters", "tests", "benchmarks", "docs", "noxfile.py"]
    _run(session, "ruff", "check", *paths)
    _run(session, "ruff", "format", "--check", *paths)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the SDK and on each bundled adapter (an adapter may import another's
    shared module, e.g. jtalis uses etalis' EP-SPARQL renderer: mypy cannot follow setuptools'
    editable-install finders, so the adapter folders go on MYPYPATH)."""
    _shared_env(session)
    session.env["MYPYPATH"] = os.pathsep.join(str(a) for a in _adapters())
    _run(session, "mypy", "--strict", "rsp_sdk")
    for adapter in _adapters():
        packages = sorted(p.parent.name for p in adapter.glob("*/__init__.py"))
        _run(session, "mypy", "--strict", *(str(adapter / p) for p in packages))


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site (mkdocs.yml → site/) with warnings as errors: API pages come
    from the docstrings and the CLI reference from the typer app, so neither can drift."""
    _shared_env(session)
    session.env["NO_MKDOCS_2_WARNING"] = "1"  # mkdocs-material's banner about its successor
    _run(session, "mkdocs", "build", "--strict", "--site-dir", str(ROOT / "site"), *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Speed benchmarks: prints numbers and ratios (pass benchmark names to select)."""
    _shared_env(session)
    _run(session, "python", "-m", "rsp_sdk.oracle.cds")  # Spark start as users see it
    _run(session, "python", "-m", "benchmarks", *session.posargs)


@nox.session
def images(session: nox.Session) -> None:
    """Docker images: the pinned Debian/JRE base from containers/base/bookworm.lock (root and
    debootstrap; a no-op when built), provisioned engines, and the Java fixture engine's image
    (pass `rsp images build` options after `--`, e.g. `-- --update-lock`)."""
    _shared_env(session)
    _run(session, "rsp", "images", "build", *session.posargs)
    _run(session, "python", "-m", "tests.fixtures.images")


def _provisioned(session: nox.Session) -> set[str]:
    """Engines whose files are in the cache (rsp engines list --json)."""
    out = session.run(str(BIN / "rsp"), "engines", "list", "--json", silent=True, external=True)
    return {e["name"] for e in json.loads(str(out)) if e.get("provisioned")}


@nox.session
def matrix(session: nox.Session) -> None:
    """The main job: run the shipped matrix specs (matrix/*.toml) on the provisioned engines
    (fetching rsp-js when missing: it needs only npm), judge every output with the oracle, print
    the comparison tables, the time split and the results and report paths.

    Default (< 15 min on a fresh 2-core machine, where only rsp-js is provisioned): CSRBench
    Q1–Q7, the functional suite (one query per feature) and a YABench slice (E1–E4 at 1 and 50
    stations, one repetition), on every provisioned engine, one runtime each, cells fed as fast
    as possible — `rsp matrix plan` prints each spec's expected wall time first. rsp-rs joins
    once provisioned (`rsp engines fetch rsprs`: a cargo build of several minutes, once per
    machine; not started here so the default stays within budget). `-- --full` runs every cell
    of every spec. Results go to ./results/<spec>/ (a rerun resumes), reports to ./reports/."""
    import time

    started = time.monotonic()
    _shared_env(session)
    times = {"venv": time.monotonic() - started}
    full = "--full" in session.posargs
    mark = time.monotonic()
    ready = _provisioned(session)
    if "rspjs" not in ready:
        _run(session, "rsp", "engines", "fetch", "rspjs")
        ready = _provisioned(session)
    times["engine fetch"] = time.monotonic() - mark
    if "rsprs" not in ready and not full:
        session.log("rsp-rs is not provisioned: `rsp engines fetch rsprs` (cargo) adds it")
    quick = ["--only", "feeding=afap", "--only", "runtime=subprocess", "--only", "runtime=py4j"]
    engines = ["--only", ",".join(f"engine={e}" for e in sorted(ready))]
    specs = {s: [] for s in MATRIX_SPECS_FULL} if full else MATRIX_SPECS
    results = ROOT / "results"
    for spec, slice_ in specs.items():
        only = [] if full else [*engines, *quick, *slice_]
        _run(session, "rsp", "matrix", "plan", str(ROOT / spec), *only, "--summary")
    for spec, slice_ in specs.items():
        only = [] if full else [*engines, *quick, *slice_]
        mark = time.monotonic()
        # exit 1 = some engine was incorrect or failed: a finding of the matrix, not an error
        session.run(
            str(BIN / "rsp"),
            "matrix",
            "run",
            str(ROOT / spec),
            "-o",
            str(results / Path(spec).stem),
            *only,
            external=True,
            success_codes=[0, 1],
        )
        times[f"{Path(spec).stem} (engines + oracle)"] = time.monotonic() - mark
    # the report of each spec: one page + paper figures and tables (reads only the results)
    mark = time.monotonic()
    for spec in specs:
        stem = Path(spec).stem
        _run(session, "rsp", "report", str(results / stem), "-o", str(ROOT / "reports" / stem))
    times["reports"] = time.monotonic() - mark
    split = ", ".join(f"{k} {v:.0f} s" for k, v in times.items())
    session.log(f"wall {time.monotonic() - started:.0f} s: {split}")
    for spec in specs:
        stem = Path(spec).stem
        session.log(f"{stem}: results {results / stem}, report {ROOT / 'reports' / stem}")


# the default selection of each spec, beside the provisioned engines and the quick feeding
MATRIX_SPECS: dict[str, list[str]] = {
    "matrix/csrbench.toml": [],
    "matrix/functional.toml": [],
    # E1–E4 on the two smallest streams (the 1 000 and 10 000 station ones are not generated)
    "matrix/yabench.toml": [
        "--only",
        "repetition=1",
        "--only",
        "stream=sg1-1",
        "--only",
        "stream=sg1-50",
    ],
}
MATRIX_SPECS_FULL = [
    "matrix/csrbench.toml",
    "matrix/yabench.toml",
    "matrix/lsbench.toml",
    "matrix/ren16.toml",
    "matrix/citybench.toml",
]
