"""Issue 18, one consistent CLI: every command's help names value types a user types (no
``<bool>`` / ``<list[str]>``), the oracle options reach every command that runs the oracle, and
the tables fit an 80-column terminal without cutting a value. No Spark, no engine: each command
here stops at its help, its option checks or its table."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

from tests.conftest import run_rsp

ROOT = Path(__file__).resolve().parents[1]
CUT = re.compile(r"\S…(\s|$)")  # rich's ellipsis ending a value cut short (not "0 … 9 ms")
ORACLE_COMMANDS = (["oracle", "check"], ["oracle", "expected"], ["csrbench"], ["matrix", "run"])


@functools.cache
def _root() -> Any:  # typer's vendored click Command
    from rsp_sdk.cli import app

    return typer.main.get_command(app)


def _commands() -> list[list[str]]:
    """Every command path of the typer app, groups included (``[]`` is ``rsp`` itself)."""

    def walk(command: Any, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, sub in getattr(command, "commands", {}).items():
            found += walk(sub, [*path, name])
        return found

    return walk(_root(), [])


def _help(path: list[str]) -> str:
    from rsp_sdk.cli import app

    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _types(path: list[str]) -> dict[str, str | None]:
    """The type column of a command's option tables (what typer's rich help prints for each
    parameter, ``display_type_rich``), without rendering the help: one render costs ~0.4 s."""
    command = _root()
    ctx = typer.Context(command, info_name="rsp")
    for name in path:
        command = command.commands[name]
        ctx = typer.Context(command, info_name=name, parent=ctx)
    return {p.name or "": p.display_type_rich(ctx) for p in command.get_params(ctx)}


def test_no_python_types_in_any_option_table() -> None:
    paths = _commands()
    assert len(paths) > 30 and ["csrbench"] in paths
    odd = {
        f"rsp {' '.join(p)} {name}": shown
        for p in paths
        for name, shown in _types(p).items()
        if shown is not None and ("bool" in shown or "list[" in shown or "Path" in shown)
    }
    assert not odd, odd
    # a repeatable option shows its element type, a flag none, and the help prints them so
    types = _types(["run"])
    assert (types["param"], types["static"], types["as_json"]) == ("<str>", "<path>", "")
    assert _types(["stream", "import"])["src"] == "<path>"
    run = _help(["run"]).splitlines()
    assert "<str>" in next(line for line in run if "--param" in line)
    assert "<" not in next(line for line in run if "--json" in line)


def test_oracle_options_on_every_oracle_command() -> None:
    for path in ORACLE_COMMANDS:
        text = _help(path)
        for option in ("--spark-master", "--evaluator"):
            assert option in text, (path, option)
    assert "--cache" in _help(["csrbench"])


def test_a_bad_spark_master_is_refused_before_any_work(rsp_exe: list[str], tmp_path: Path) -> None:
    """Checked first: the inputs named here do not even exist, and no Spark starts."""
    runs: dict[str, list[str | Path]] = {
        "oracle check": ["oracle", "check", "-s", "x", "-q", "y", "--answers", "z"],
        "csrbench": ["csrbench", "-e", "csparql", "-o", tmp_path / "c"],
        "matrix run": ["matrix", "run", ROOT / "matrix" / "csrbench.toml", "-o", tmp_path / "m"],
    }
    for what, args in runs.items():
        proc = run_rsp(rsp_exe, *args, "--spark-master", "local[2", check=False)
        assert proc.returncode == 2, (what, proc.stdout, proc.stderr)
        assert "--spark-master 'local[2' is not a Spark master URL" in proc.stderr, what
        assert "spark://HOST:PORT" in proc.stderr, what
        assert not (tmp_path / "c").exists() and not (tmp_path / "m").exists()
    proc = run_rsp(rsp_exe, *runs["csrbench"], "--cache", tmp_path / "no-cache", check=False)
    assert proc.returncode == 2 and "no such provisioning cache" in proc.stderr, proc.stderr


def _at_80(rsp_exe: list[str], *args: str | Path) -> list[str]:
    proc = subprocess.run(
        [*rsp_exe, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    wide = [line for line in lines if len(line) > 80]
    cut = [line for line in lines if CUT.search(line)]
    assert not wide and not cut, (args, wide, cut)
    return lines


def test_tables_fit_80_columns(rsp_exe: list[str], shared_data: Path) -> None:
    profiles = "\n".join(_at_80(rsp_exe, "profiles", "list"))
    for whole in ("csparql-0.9.7", "non_empty_content", "tuple_driven", "(event-driven)"):
        assert whole in profiles  # each value in full
    engines = "\n".join(_at_80(rsp_exe, "engines", "list"))
    assert "rsp_adapter_sparqlstream" in engines and ":SparqlStreamAdapter" in engines
    # stream info at 80 columns: tests/test_cli_consistency.py::test_durations_accept_units
    plan = _at_80(rsp_exe, "matrix", "plan", ROOT / "tests" / "fixtures" / "report_matrix.toml")
    assert any("cells" in line for line in plan)
