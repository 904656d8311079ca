"""The documentation's promises, run: the tutorial's example adapter package passes the
conformance kit when installed the way a user installs it, its query-structure helper reads what
renderers need, the README's Python snippets run as written, and the spec page's example runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.query import parse_rspql
from rsp_sdk.query.structure import Aggregate, TriplePattern, query_structure

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples" / "minirsp"


@pytest.fixture(scope="module")
def installed_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example package installed (not editable) into a folder of its own: its entry point
    is then found only through the installed metadata, as for any third-party adapter."""
    root = tmp_path_factory.mktemp("example")
    source, target = root / "minirsp", root / "site"
    # a copy: building writes build/ and *.egg-info next to the sources
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__*"))
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run(
        [*pip, "--target", str(target), str(source)],
        check=True,
        timeout=300,
    )
    assert (target / "minirsp" / "engine.py").is_file()
    return target


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RSP_ADAPTERS"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return env


def test_example_adapter_passes_the_conformance_kit(installed_example: Path) -> None:
    """The example's own test file (tests/test_conformance.py: the kit, adapter found by its
    entry point), run from the copy outside the repository against the installed package."""
    source = installed_example.parent / "minirsp"
    pytest_ = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(
        [*pytest_, "--rootdir", str(source), str(source / "tests")],
        env=_env(installed_example),
        cwd=installed_example,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    assert re.search(r"\b10 passed\b", proc.stdout), tail  # every kit test ran, none skipped


def test_example_adapter_is_listed_by_its_entry_point(
    installed_example: Path, rsp_exe: list[str]
) -> None:
    proc = subprocess.run(
        [*rsp_exe, "engines", "list", "--json"],
        env=_env(installed_example),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"minirsp"' in proc.stdout


def test_example_profile_is_what_the_probe_infers(
    installed_example: Path, rsp_exe: list[str]
) -> None:
    """The tutorial's step 5: the profile minirsp declares is the one its behaviour shows."""
    proc = subprocess.run(
        [*rsp_exe, "engines", "probe", "minirsp", "--json"],
        env=_env(installed_example),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["differences"] == [], data["differences"]
    assert data["findings"]["report"]["value"] == "window_close", data["findings"]["report"]


def test_mypy_finds_rsp_sdk_from_the_installed_environment(installed_example: Path) -> None:
    """A user's adapter type-checks against rsp_sdk (py.typed) from outside the repository:
    mypy finds rsp_sdk in the environment (an editable install must be a path entry, not an
    import hook mypy cannot follow: noxfile installs with editable_mode=compat)."""
    source = installed_example.parent / "minirsp"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(source / ".mypy"),
            "-p",
            "minirsp.adapter",
        ],
        cwd=source,
        env=_env(Path(os.devnull)),  # no PYTHONPATH help: only what is installed
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_query_structure_reads_projection_triples_and_aggregates() -> None:
    spec = parse_rspql(
        "PREFIX ex: <http://ex.org/>\n"
        "REGISTER RSTREAM <q> AS SELECT ?room (COUNT(DISTINCT ?p) AS ?n) "
        "FROM NAMED WINDOW <w> ON ex:s [RANGE PT10S STEP PT5S] "
        'WHERE { WINDOW <w> { ?p ex:in ?room . ?p ex:age 5 . ?room ex:name "a"@en } } '
        "GROUP BY ?room"
    )
    st = query_structure(spec)
    assert st.projection == ("room", "n")
    xsd = "http://www.w3.org/2001/XMLSchema#integer"
    assert set(st.triples) == {
        TriplePattern("?p", "<http://ex.org/in>", "?room"),
        TriplePattern("?p", "<http://ex.org/age>", f'"5"^^<{xsd}>'),
        TriplePattern("?room", "<http://ex.org/name>", '"a"@en'),
    }
    assert st.aggregates == (Aggregate("n", "count", "p", True),)
    assert st.group_by == ("room",)
    assert Feature.AGGREGATES in st.features and Feature.JOIN in st.features
    assert st.only(Feature.JOIN, Feature.AGGREGATES, Feature.NAMED_GRAPHS) == []
    assert TriplePattern("?p", "<http://ex.org/in>", "?room").variables() == ["p", "room"]


def _readme_snippets() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


def test_readme_python_snippets_run_as_written(
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every ```python block of the README, in order, in one namespace, from a folder that has
    the benchmark data at ../shared/data as a clone of the repository does; the example
    adapter package on the path as `pip install docs/examples/minirsp` would put it."""
    snippets = _readme_snippets()
    assert len(snippets) >= 4, "the README's Python snippets were not found"
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared_data)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    namespace: dict[str, object] = {"__name__": "readme"}
    for number, code in enumerate(snippets, 1):
        exec(compile(code, f"README.md python block {number}", "exec"), namespace)
    assert (work / "sg1.parquet").is_file() and (work / "social.static.parquet").is_file()
    assert "correct 0" in capsys.readouterr().out  # what the comparison snippet says it prints
    table = namespace["table"]
    assert getattr(table, "num_rows", 0) > 0, "the oracle snippet computed nothing"


def test_readme_python_snippets_are_formatted() -> None:
    """The README's Python is what a reader copies into a project checked by ruff: each block
    is as ``ruff format`` writes it with this project's settings (the lint session's paths hold
    no Markdown, and docs/ pages include real files instead)."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the dev extra: pip install -e .[dev])")
    snippets = _readme_snippets()
    assert len(snippets) >= 4, "the README's Python snippets were not found"
    unformatted = []
    for number, code in enumerate(snippets, 1):
        done = subprocess.run(
            [ruff, "format", "--diff", "--stdin-filename", f"README_block_{number}.py", "-"],
            input=code,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        if done.returncode != 0:
            unformatted.append(f"block {number}:\n{done.stdout}{done.stderr}")
    assert not unformatted, "\n".join(unformatted)


SWEEP = REPO / "docs" / "examples" / "matrix" / "window-sweep.toml"


def test_the_spec_pages_example_plans_and_runs_as_the_page_shows(
    shared_data: Path, rsp_exe: list[str], tmp_path: Path
) -> None:
    """docs/matrix-spec.md's window sweep: the plan's exclusion line is the one the page
    quotes, and its rsp-js cells run and are judged correct, as the page's table shows."""
    from tests.real_engines import engine_missing

    page = (REPO / "docs" / "matrix-spec.md").read_text(encoding="utf-8")
    env = {**os.environ, "RSP_SHARED_DATA": str(shared_data), "COLUMNS": "200"}
    plan = subprocess.run(
        [*rsp_exe, "matrix", "plan", str(SWEEP)], env=env, capture_output=True, text=True
    )
    assert plan.returncode == 0, plan.stderr
    excluded = [line for line in plan.stdout.splitlines() if line.startswith("excluded:")]
    assert len(excluded) == 1 and excluded[0] in page
    assert "6 runnable, 0 refused or unavailable" in plan.stdout
    missing = engine_missing("rspjs")
    if missing:
        pytest.skip(missing)
    out = tmp_path / "sweep"
    cmd = [*rsp_exe, "matrix", "run", str(SWEEP), "-o", str(out), "--only", "engine=rspjs"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [json.loads(p.read_text()) for p in sorted((out / "cells").glob("*/cell.json"))]
    assert sorted((r["query"], r["repetition"], r["verdict"], r["t0_ms"]) for r in rows) == [
        ("hot[MIN=80,RANGE=PT10S]", 1, "correct", 0),
        ("hot[MIN=80,RANGE=PT10S]", 2, "correct", 0),
        ("hot[MIN=80,RANGE=PT5S]", 1, "correct", 0),
        ("hot[MIN=80,RANGE=PT5S]", 2, "correct", 0),
    ]
