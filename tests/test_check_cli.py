"""The comparison commands end to end: ``rsp compare mismatch`` and ``rsp oracle check``.

Each `rsp` subprocess that judges starts a Spark JVM of its own (20-60 s on a loaded 2-core
machine). One check runs as a subprocess, where the point is the process (``--verbose`` shows
Spark's log lines; without it test_oracle_cli.py finds none); the others call the same typer
app in-process on the test session's SparkSession: same options, exit code and JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rsp_sdk.compare.answers import read_csrbench_answer
from rsp_sdk.compare.lsbench import Partition, mismatch
from rsp_sdk.compare.relations import result_relations
from rsp_sdk.compare.yabench import WINDOW_METRICS_SCHEMA
from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms
from rsp_sdk.streams.io import write_stream
from tests.compare_tables import s
from tests.conftest import run_rsp
from tests.oracle_support import rsp_in_process, spark

__all__ = ["spark"]

ANSWERS = "dellaglio+csrbench-oracle/src/main/resources/answers"


def write_answer(path: Path, relations: list[list[dict[str, Any]]], start: int = 1000) -> Path:
    """A CSRBench answer JSON file (relation k stamped start + 1000·k)."""
    doc = {
        "relations": [
            {
                "head": {"vars": sorted({v for b in rel for v in b})},
                "timestamp": start + 1000 * k,
                "results": {
                    "bindings": [{"timestamp": start + 1000 * k, "binding": b} for b in rel]
                },
            }
            for k, rel in enumerate(relations)
        ]
    }
    path.write_text(json.dumps(doc))
    return path


# --- rsp compare mismatch --------------------------------------------------------------------


def test_compare_help(rsp_exe: list[str]) -> None:
    out = run_rsp(rsp_exe, "compare", "mismatch", "--help").stdout
    assert "--partition-a" in out and "--epsilon" in out and "--json" in out


def test_mismatch_json_by_hand(rsp_exe: list[str], tmp_path: Path) -> None:
    a = write_answer(tmp_path / "a.json", [s("a", "b"), s("c")])
    b = write_answer(tmp_path / "b.json", [s("c"), s("a", "b")])
    data = json.loads(run_rsp(rsp_exe, "compare", "mismatch", a, b, "--json").stdout)
    # mm(A, B): T1 = {a, b} (a at 1, b at 2) → j = 1; T2: c only at 0 < 1 → lost → 1/3
    assert data["mm_a_b"] == pytest.approx(100 / 3)
    # mm(B, A): T1 = {c} at 2 → j = 2; T2: a (0), b (1) < 2 → both lost → 2/3
    assert data["mm_b_a"] == pytest.approx(200 / 3)
    assert [p["e1"] for p in data["pairs"]] == ["a.json", "b.json"]
    assert set(data["pairs"][0]) >= {"e1", "e2", "partition", "elements", "unmatched", "mm_percent"}
    assert "comparable" not in data
    # eager partition of A: blocks [a], [b], [c] → a at 1 (j=1), b at 2 (j=2), c at 0 lost → 1/3
    data = json.loads(
        run_rsp(rsp_exe, "compare", "mismatch", a, b, "--partition-a", "element", "--json").stdout
    )
    assert data["mm_a_b"] == pytest.approx(100 / 3)
    assert data["pairs"][0]["blocks"] == 3


def test_mismatch_epsilon_exit_codes(rsp_exe: list[str], tmp_path: Path) -> None:
    a = write_answer(tmp_path / "a.json", [s("a", "b"), s("c")])
    b = write_answer(tmp_path / "b.json", [s("c"), s("a", "b")])
    bad = run_rsp(rsp_exe, "compare", "mismatch", a, b, "--epsilon", "50", "--json", check=False)
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["comparable"] is False
    good = run_rsp(rsp_exe, "compare", "mismatch", a, b, "--epsilon", "70", check=False)
    assert good.returncode == 0
    assert "comparable within" in good.stdout


def test_mismatch_on_recorded_answers_agrees_with_the_library(
    rsp_exe: list[str], shared_data: Path
) -> None:
    c = shared_data / ANSWERS / "csparql-answer-7.json"
    q = shared_data / ANSWERS / "cqels-answer-7.json"
    data = json.loads(
        run_rsp(rsp_exe, "compare", "mismatch", c, q, "--partition-b", "element", "--json").stdout
    )
    lib_cq = mismatch(
        result_relations(read_csrbench_answer(c)),
        result_relations(read_csrbench_answer(q)),
        partition=Partition.RELATION,
    )
    lib_qc = mismatch(
        result_relations(read_csrbench_answer(q)),
        result_relations(read_csrbench_answer(c)),
        partition=Partition.ELEMENT,
    )
    assert data["mm_a_b"] == lib_cq.mm_percent
    assert data["mm_b_a"] == lib_qc.mm_percent
    assert data["pairs"][1]["blocks"] == 957  # one block per CQELS output element


def test_mismatch_bad_input_exit_2(rsp_exe: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"relations": [\n{"head": {"vars": []}, "timestamp": 1, "results": 3}]}')
    good = write_answer(tmp_path / "good.json", [s("a")])
    proc = run_rsp(rsp_exe, "compare", "mismatch", bad, good, check=False)
    assert proc.returncode == 2
    assert "bad.json" in proc.stderr and "relations[0].results" in proc.stderr
    assert "Traceback" not in proc.stderr


# --- rsp oracle check (parts that need no oracle) ----------------------------------------------


def test_check_help(rsp_exe: list[str]) -> None:
    out = run_rsp(rsp_exe, "oracle", "check", "--help").stdout
    for opt in ("--stream", "--query", "--profile", "--answers", "--static", "--metrics", "--json"):
        assert opt in out


def test_check_bad_answers_exit_2_before_any_oracle_work(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    proc = run_rsp(
        rsp_exe,
        "oracle",
        "check",
        "--stream",
        tmp_path / "s.parquet",
        "--query",
        tmp_path / "q.toml",
        "--profile",
        "csparql",
        "--answers",
        tmp_path / "missing.json",
        check=False,
    )
    assert proc.returncode == 2
    assert "missing.json" in proc.stderr and "no such file" in proc.stderr
    proc = run_rsp(
        rsp_exe,
        "oracle",
        "check",
        "--stream",
        "s",
        "--query",
        "q",
        "--profile",
        "p",
        "--answers",
        "a.json",
        "--gracious",
        check=False,
    )
    assert proc.returncode == 2 and "need --metrics yabench" in proc.stderr


# --- rsp oracle check end to end --------------------------------------------------------------


ROOMS = "0: m1@r1; 1000: m2@r1; 2000: m3@r1; 3000: m4@r2"
IN_R1 = "SELECT ?m WHERE { ?m <http://example.org/detectedAt> <http://example.org/r1> }"


@pytest.fixture()
def rooms_case(tmp_path: Path) -> tuple[Path, Path]:
    table, meta = generate_rooms(RoomsParams(description=ROOMS))
    stream = write_stream(table, tmp_path / "rooms.parquet", meta)
    query = tmp_path / "q.toml"
    query.write_text(
        f"sparql = '{IN_R1}'\nwindow_ms = 2000\nslide_ms = 2000\nfirst_t0_ms = 0\nr2s = 'rstream'\n"
    )
    return stream, query


def m(*names: str) -> list[dict[str, Any]]:
    return s(*names, var="m")


def test_check_rooms_correct(
    rsp_exe: list[str], rooms_case: tuple[Path, Path], tmp_path: Path
) -> None:
    stream, query = rooms_case
    # C-SPARQL, tumbling 2 s windows from t0 = 0: [0, 2000) → m1, m2; [2000, 4000) → m3
    good = write_answer(tmp_path / "good.json", [m("m1", "m2"), m("m3")])
    proc = run_rsp(
        rsp_exe,
        "--verbose",  # Spark's own log lines are shown, as they are nowhere else
        *("oracle", "check", "--stream", stream, "--query", query, "--profile", "csparql"),
        *("--answers", good, "--t0", "0", "--json"),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "log4j" in proc.stderr and "WARN" in proc.stderr, proc.stderr
    data = json.loads(proc.stdout)
    assert data["correct"] is True and data["t0"] == 0 and data["divergence"] is None
    assert data["verdict"]["matched_relations"] == 2 and data["yabench"] is None


def test_check_empty_output_is_no_output_exit_1(
    spark: Any, rooms_case: tuple[Path, Path], tmp_path: Path
) -> None:
    # a crashed or silent engine: a run that answered nothing where the oracle expects relations
    stream, query = rooms_case
    silent = write_answer(tmp_path / "silent.json", [])
    code, stdout = rsp_in_process(
        *("oracle", "check", "--stream", stream, "--query", query, "--profile", "csparql"),
        *("--answers", silent, "--json"),
    )
    assert code == 1, stdout
    data = json.loads(stdout)
    assert data["state"] == "no output" and data["correct"] is False and data["t0"] is None
    assert data["verdict"]["actual_relations"] == 0


def test_check_rooms_incorrect_with_yabench_metrics(
    spark: Any, rooms_case: tuple[Path, Path], tmp_path: Path
) -> None:
    stream, query = rooms_case
    bad = write_answer(tmp_path / "bad.json", [m("m1"), m("m3")])
    out = tmp_path / "windows.parquet"
    code, stdout = rsp_in_process(
        *("oracle", "check", "--stream", stream, "--query", query, "--profile", "csparql"),
        *("--answers", bad, "--t0", "0", "--metrics", "yabench", "--gracious", "-o", out),
        "--json",
    )
    assert code == 1, stdout
    data = json.loads(stdout)
    assert data["correct"] is False and data["t0"] is None
    div = data["divergence"]
    assert (div["t0_ms"], div["actual_index"], div["expected_seq"]) == (0, 0, 0)
    assert div["missing"] == m("m2") and div["extra"] == []
    windows = data["yabench"]["windows"]
    # [0, 2000): m1 of m1, m2 → P 1, R 1/2 (no shifted border explains it); [2000, 4000): exact
    assert [(w["precision"], w["recall"]) for w in windows] == [(1.0, 0.5), (1.0, 1.0)]
    assert [(w["gracious_open_ms"], w["gracious_close_ms"]) for w in windows] == [
        (0, 2000),
        (2000, 4000),
    ]
    table = pq.read_table(out)
    assert table.schema == WINDOW_METRICS_SCHEMA
    assert table.column("recall").to_pylist() == [0.5, 1.0]


def test_check_csrbench_q1_csparql_recorded_answer(
    spark: Any, shared_data: Path, tmp_path: Path
) -> None:
    stream = tmp_path / "csrbench.parquet"
    code, stdout = rsp_in_process(
        "stream",
        "import",
        shared_data / "dellaglio+csrbench-oracle/data",
        "-f",
        "csrbench-ttl",
        "--interval",
        "1000",
        "-o",
        stream,
    )
    assert code == 0, stdout
    props = shared_data / "dellaglio+csrbench-oracle/src/main/resources/srbench-queries.properties"
    answer = shared_data / ANSWERS / "csparql-answer-1.json"
    code, stdout = rsp_in_process(
        *("oracle", "check", "--stream", stream, "--query", f"{props}#srb.query1"),
        *("--profile", "csparql", "--answers", answer),
    )
    assert code == 0, stdout
    # people get a table: the recorded C-SPARQL answer to Q1 is correct for some t0
    assert "CORRECT" in stdout and "INCORRECT" not in stdout
    assert "matching t0" in stdout


def test_check_refuses_an_evaluator_that_cannot_run_the_query_before_spark(
    rsp_exe: list[str], rooms_case: tuple[Path, Path], tmp_path: Path
) -> None:
    """``--evaluator`` means what it means on ``rsp oracle expected``; ``sql`` on an OPTIONAL
    query is refused at once (exit 2), not after starting Spark, nor run with another one."""
    stream, _ = rooms_case
    query = tmp_path / "optional.toml"
    sparql = (
        "SELECT ?m ?x WHERE { ?m <http://example.org/detectedAt> ?r "
        "OPTIONAL { ?m <http://example.org/p> ?x } }"
    )
    query.write_text(f"sparql = '{sparql}'\nwindow_ms = 2000\nslide_ms = 2000\n")
    answers = write_answer(tmp_path / "a.json", [])
    proc = run_rsp(
        rsp_exe,
        *("oracle", "check", "-s", stream, "-q", query, "-p", "csparql", "--answers", answers),
        *("--evaluator", "sql"),
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the Spark SQL evaluator cannot run this query" in proc.stderr, proc.stderr
