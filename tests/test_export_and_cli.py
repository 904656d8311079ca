"""Exporters round-trip; the CLI reports bad input cleanly and leaves no file behind."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from rsp_sdk.streams.exporters import ExportFormat, export_stream
from rsp_sdk.streams.importers.n3t import read_n3t
from rsp_sdk.streams.importers.trig import read_trig
from rsp_sdk.streams.io import read_stream
from tests.conftest import run_rsp

COLS = ["stream", "t_app_ms", "s", "p", "o"]


def test_cli_import_info_export_round_trip(
    tmp_path: Path, shared_data: Path, rsp_exe: list[str]
) -> None:
    folder = shared_data / "dellaglio+csrbench-oracle" / "data"
    out = tmp_path / "csr.parquet"
    run_rsp(
        rsp_exe,
        "stream",
        "import",
        folder,
        "--format",
        "csrbench-ttl",
        "--interval",
        "1000",
        "--stream",
        "http://ex.org/csr",
        "-o",
        out,
    )
    info = json.loads(run_rsp(rsp_exe, "stream", "info", out, "--json").stdout)
    assert info["triples"] == 15188 and info["timestamps"] == 34
    assert (info["t_min_ms"], info["t_max_ms"]) == (0, 33000)
    assert info["streams"] == {"http://ex.org/csr": 15188}
    assert sum(info["predicates"].values()) == 15188

    original = read_stream(out)
    n3t = tmp_path / "csr.n3t"
    run_rsp(rsp_exe, "stream", "export", out, "--format", "n3t", "-o", n3t)
    back = read_n3t(n3t, stream="http://ex.org/csr")
    assert back.select(COLS).equals(original.select(COLS))

    trig = tmp_path / "csr.trig"
    run_rsp(rsp_exe, "stream", "export", out, "--format", "trig", "-o", trig)
    back = read_trig(trig)
    assert back.select(COLS).equals(original.select(COLS))  # stream IRI survives via rsp:inStream


def test_trig_round_trip_keeps_graph_ids(tmp_path: Path, shared_data: Path) -> None:
    table = read_trig(shared_data / "YABench+csrbench-validation" / "csrbench-dataset.trig")
    path = export_stream(table, tmp_path / "again.trig", ExportFormat.TRIG)
    assert read_trig(path).equals(table)


def test_cli_bad_input_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path, rsp_exe: list[str]
) -> None:
    src = tmp_path / "bad.n3t"
    src.write_text(
        '<http://a> <http://b> <http://c> "1" .\n<http://a> <http://b> <http://c> "x" .\n'
    )
    out = tmp_path / "out.parquet"
    proc = run_rsp(rsp_exe, "stream", "import", src, "-f", "n3t", "-o", out, check=False)
    assert proc.returncode == 2
    assert f"{src}:2" in proc.stderr and "not a number" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == [src]  # no output, no temp file


def test_cli_sort_flag(tmp_path: Path, rsp_exe: list[str]) -> None:
    src = tmp_path / "unsorted.n3t"
    src.write_text(
        '<http://a> <http://b> <http://c> "10" .\n<http://a> <http://b> <http://d> "5" .\n'
    )
    out = tmp_path / "out.parquet"
    assert (
        run_rsp(rsp_exe, "stream", "import", src, "-f", "n3t", "-o", out, check=False).returncode
        == 2
    )
    assert not out.exists()
    run_rsp(rsp_exe, "stream", "import", src, "-f", "n3t", "-o", out, "--sort")
    assert pq.read_table(out).column("t_app_ms").to_pylist() == [5, 10]


def test_cli_static_import(tmp_path: Path, shared_data: Path, rsp_exe: list[str]) -> None:
    out = tmp_path / "static.parquet"
    run_rsp(
        rsp_exe,
        "stream",
        "import",
        shared_data / "CityBench+Benchmark" / "dataset" / "SensorRepository.n3",
        "-f",
        "turtle",
        "-o",
        out,
    )
    assert pq.read_table(out).column_names == ["s", "p", "o", "g"]


def test_every_command_has_help(rsp_exe: list[str]) -> None:
    for cmd in (
        ["--help"],
        ["stream", "--help"],
        ["stream", "import", "--help"],
        ["stream", "export", "--help"],
        ["stream", "info", "--help"],
        ["generate", "--help"],
        ["generate", "yabench", "--help"],
        ["generate", "rooms", "--help"],
    ):
        assert "Usage" in run_rsp(rsp_exe, *cmd).stdout
