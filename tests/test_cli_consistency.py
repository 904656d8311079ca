"""One consistent command line: durations written alike everywhere, t0 candidates summarised,
and a start-up that loads no heavy library (the speed itself is in `nox -s bench -- cli`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import typer
import typer.core

from rsp_sdk.cli.engines import provision_commands
from rsp_sdk.compare.render import candidates_text
from rsp_sdk.streams.io import read_stream

HEAVY = ("pyarrow", "pandas", "numpy", "pyspark", "pyoxigraph", "rdflib", "jpype", "docker")


def test_the_command_line_loads_no_heavy_library_for_help() -> None:
    code = (
        "import sys; from rsp_sdk.cli.reference import markdown; markdown(); "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stdout  # every command's help was built


def test_durations_accept_units(rsp_exe: list[str], tmp_path: Path) -> None:
    out = tmp_path / "y.parquet"
    proc = subprocess.run(
        [
            *rsp_exe,
            "generate",
            "yabench",
            "-o",
            str(out),
            "--stations",
            "2",
            "--duration",
            "5m",
            "--interval",
            "30s",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    times = read_stream(out).column("t_app_ms")
    assert pc.max(times).as_py() <= 300_000
    assert len(pc.unique(times)) == 2 * 10  # two stations, one reading per 30 s in 5 min
    # stream info names predicates with known prefixes, listed once, instead of cut IRIs
    info = subprocess.run(
        [*rsp_exe, "stream", "info", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert info.returncode == 0, info.stderr
    assert max(len(line) for line in info.stdout.splitlines()) <= 80, info.stdout
    assert "om-owl:procedure" in info.stdout and "rdf:type" in info.stdout
    assert "om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>" in info.stdout


def test_a_bad_duration_names_the_option(rsp_exe: list[str], tmp_path: Path) -> None:
    proc = subprocess.run(
        [*rsp_exe, "generate", "water", "-o", str(tmp_path / "w.parquet"), "--duration", "5x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "--duration" in proc.stderr and "5x" in proc.stderr
    assert not (tmp_path / "w.parquet").exists()


def test_many_t0_candidates_are_a_count_and_a_range() -> None:
    assert candidates_text(list(range(60_001))) == "60,001 from 0 to 60000 ms, every 1 ms"
    assert candidates_text([0, 1000]) == "0 ms, 1000 ms"
    assert candidates_text([]) == "none"
    assert candidates_text([0, 1, 5, 9, 10, 30]) == "6 from 0 to 30 ms"


def test_engines_list_says_once_what_is_missing(rsp_exe: list[str], tmp_path: Path) -> None:
    """With an empty provisioning cache, each engine's gaps come once, under the table, with
    the commands that fill them (one fetch, one add naming every file)."""
    proc = subprocess.run(
        [*rsp_exe, "engines", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RSP_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "rspjs lacks npm packages: rsp engines fetch rspjs" in proc.stdout
    assert "(run:" not in proc.stdout
    assert provision_commands(
        "jtalis",
        [
            "a.jar (run: rsp engines add jtalis PATH/a.jar)",
            "b (run: rsp engines add jtalis PATH/b)",
        ],
    ) == ["rsp engines add jtalis PATH/a.jar PATH/b"]


def test_usage_lines_are_plain() -> None:
    """Every command's usage line names its arguments as SRC / RESULTS…, not typer's {SRC}."""
    import typer.main

    from rsp_sdk.cli import app

    def usages(command: typer.core.TyperGroup | typer.core.TyperCommand, path: str) -> list[str]:
        ctx = typer.Context(command, info_name=path)
        lines = [f"{path} {' '.join(command.collect_usage_pieces(ctx))}"]
        for name, sub in getattr(command, "commands", {}).items():
            lines += usages(sub, f"{path} {name}")
        return lines

    lines = usages(typer.main.get_command(app), "rsp")
    assert "rsp stream import [OPTIONS] SRC..." in lines
    assert len(lines) > 30
    odd = [line for line in lines if "{" in line or "<" in line]
    assert not odd, odd


def test_every_command_summary_is_one_line_and_every_help_reflows() -> None:
    """A group's command list shows each command's first help paragraph, and a command's
    --help its paragraphs, with their line breaks kept (typer's rich mode): docstrings wrapped
    at 100 columns came out broken mid-sentence. Every command reflows its help (the RspTyper
    classes), and every summary is one short sentence."""
    import typer.main

    from rsp_sdk.cli import app

    def helps(group: typer.core.TyperGroup, path: str) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for name, sub in getattr(group, "commands", {}).items():
            text = sub.help or ""
            found[f"{path} {name}"] = ((sub.short_help or text).split("\n\n")[0], text)
            found |= helps(sub, f"{path} {name}")
        return found

    found = helps(typer.main.get_command(app), "rsp")
    assert "rsp matrix plan" in found and len(found) > 30
    long = {path: first for path, (first, _) in found.items() if not 0 < len(first) <= 90}
    assert not long, long
    ragged = [path for path, (_, text) in found.items() if "\n" in text.replace("\n\n", "")]
    assert not ragged, ragged
