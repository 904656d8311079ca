"""Issue 18's sharp edges, each through the real ``rsp`` command: silent acceptance, late
validation, static data and parameters reaching a run, and an engine's own profile judging it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from rsp_adapter_csparql import CsparqlAdapter

from rsp_sdk.model.profile import load_profile
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.run.recorder import read_table
from rsp_sdk.run.runner import load_query
from rsp_sdk.streams.io import stream_table, write_stream
from tests.conftest import run_rsp
from tests.oracle_support import rsp_in_process, spark
from tests.real_engines import engine_missing, require

__all__ = ["spark"]

ROOT = Path(__file__).resolve().parents[1]
Q1 = ROOT / "matrix" / "queries" / "csrbench" / "q1.rspql"
SRB_PROPERTIES = "dellaglio+csrbench-oracle/src/main/resources/srbench-queries.properties"


def fails(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2, one message (no traceback) holding every needle."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error:"), proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


# ---- silent acceptance ------------------------------------------------------------------------


def test_empty_and_negative_n3t_are_refused(tmp_path: Path, rsp_exe: list[str]) -> None:
    empty = tmp_path / "empty.n3t"
    empty.write_text("# nothing but a comment\n\n")
    out = tmp_path / "out.parquet"
    fails(
        run_rsp(rsp_exe, "stream", "import", empty, "-f", "n3t", "-o", out, check=False),
        f"{empty}: the input holds no triples",
    )
    neg = tmp_path / "neg.n3t"
    neg.write_text(
        '<http://e/a> <http://e/p> <http://e/b> "0" .\n<http://e/a> <http://e/p> 1 "-5" .\n'
    )
    fails(
        run_rsp(rsp_exe, "stream", "import", neg, "-f", "n3t", "-o", out, "--sort", check=False),
        f"{neg}:2: timestamp -5 is negative",
    )
    assert not out.exists()


def test_a_stream_name_must_be_an_iri(tmp_path: Path, rsp_exe: list[str]) -> None:
    src = tmp_path / "s.n3t"
    src.write_text('<http://e/a> <http://e/p> <http://e/b> "0" .\n')
    out = tmp_path / "out.parquet"
    for args in (
        ("stream", "import", src, "-f", "n3t", "-o", out, "--stream", "not an iri"),
        ("generate", "yabench", "-o", out, "--stream", "stream1"),
    ):
        fails(run_rsp(rsp_exe, *args, check=False), "--stream is not an absolute IRI")
    assert not out.exists()


def test_n3t_export_refuses_to_merge_streams(tmp_path: Path, rsp_exe: list[str]) -> None:
    a, b = "http://e/streamA", "http://e/streamB"
    table = pa.concat_tables(
        [
            stream_table(a, [0, 1000], ["<http://e/x>"] * 2, ["<http://e/p>"] * 2, ['"1"', '"2"']),
            stream_table(b, [2000], ["<http://e/y>"], ["<http://e/p>"], ['"3"']),
        ]
    )
    src = write_stream(table, tmp_path / "two.parquet", StreamMeta(producer="test"))
    out = tmp_path / "out.n3t"
    fails(
        run_rsp(rsp_exe, "stream", "export", src, "-f", "n3t", "-o", out, check=False),
        "n3t cannot tell 2 streams apart",
        a,
        b,
    )
    assert not out.exists()
    text = run_rsp(rsp_exe, "stream", "export", src, "-f", "n3t", "-o", "-", "--stream", b).stdout
    assert text == '<http://e/y> <http://e/p> "3" "2000" .\n'
    proc = run_rsp(
        rsp_exe,
        "stream",
        "export",
        src,
        "-f",
        "n3t",
        "-o",
        "-",
        "--stream",
        "http://e/c",
        check=False,
    )
    fails(proc, "no stream http://e/c", a)


def test_a_truncated_answer_file_or_no_run_directory_is_a_clear_error(
    tmp_path: Path, rsp_exe: list[str]
) -> None:
    src = tmp_path / "s.parquet"
    run_rsp(rsp_exe, "generate", "yabench", "-o", src, "--duration", "1000")
    answers = tmp_path / "answer.json"
    answers.write_text('{"relations": [{"head": {"vars": ["a"]}, "timestamp": 1, "results": {"bi')
    proc = run_rsp(
        rsp_exe,
        *("oracle", "check", "-s", src, "-q", Q1, "-p", "csparql", "--answers", answers),
        check=False,
    )
    fails(proc, f"{answers}:1:", "not valid JSON")
    # cut right after a newline: the error lies past the last line (once an IndexError)
    answers.write_text('{"relations": [{"head": {"vars": ["a"]},\n')
    proc = run_rsp(
        rsp_exe,
        *("oracle", "check", "-s", src, "-q", Q1, "-p", "csparql", "--answers", answers),
        check=False,
    )
    fails(proc, f"{answers}:2:", "not valid JSON", "the file ends early")
    # a folder that is neither a run directory nor a Parquet dataset says so
    proc = run_rsp(
        rsp_exe,
        *("oracle", "check", "-s", src, "-q", Q1, "-p", "csparql", "--answers", tmp_path),
        check=False,
    )
    fails(proc, f"{tmp_path}: not a run directory (no outputs.parquet)")


# ---- late validation --------------------------------------------------------------------------


def test_oracle_options_are_checked_before_spark_starts(tmp_path: Path, rsp_exe: list[str]) -> None:
    """With Java unusable, Spark cannot start: every refusal below names the option, so each
    was made before Spark was asked for anything."""
    src = tmp_path / "s.parquet"
    run_rsp(rsp_exe, "generate", "yabench", "-o", src, "--duration", "1000")
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java"), "COLUMNS": "400"}

    def expected(*extra: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*rsp_exe, "oracle", "expected", "-q", str(Q1), *map(str, extra)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    out = tmp_path / "q1.json"
    fails(
        expected("-s", src, "-p", "csparql", "-o", out, "--format", "csrbench-json"),
        "exactly one --t0",
    )
    fails(expected("-s", src, "-p", "no-such-profile", "-o", out), "unknown profile")
    fails(expected("-s", tmp_path / "none.parquet", "-p", "csparql", "-o", out), "none.parquet")
    fails(
        expected("-s", src, "-p", "csparql", "-o", out, "--static", tmp_path / "kb.ttl"), "kb.ttl"
    )
    fails(expected("-s", src, "-p", "csparql", "-o", out, "--param", "W"), "bad --param")
    optional = tmp_path / "optional.rspql"  # outside the SQL fragment (the last -q counts)
    optional.write_text(
        Q1.read_text().replace("WHERE {", "WHERE { OPTIONAL { ?x <http://e/p> ?y }", 1)
    )
    fails(
        expected("-s", src, "-p", "csparql", "-o", out, "-q", optional, "--evaluator", "sql"),
        "the Spark SQL evaluator cannot run this query",
    )
    assert not out.exists()


def test_csrbench_refuses_an_engine_it_cannot_run_up_front(
    tmp_path: Path, rsp_exe: list[str], shared_data: Path
) -> None:
    require(CsparqlAdapter())
    proc = run_rsp(
        rsp_exe, "csrbench", "-e", "csparql", "-r", "subprocess", "-o", tmp_path / "o", check=False
    )
    fails(proc, "runtime subprocess cannot carry csparql's jvm driver", "jpype")
    empty_cache = tmp_path / "cache"
    empty_cache.mkdir()
    proc = subprocess.run(
        [*rsp_exe, "csrbench", "-e", "csparql", "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env={**os.environ, "RSP_CACHE": str(empty_cache), "COLUMNS": "400"},
        timeout=120,
    )
    fails(proc, "engine csparql is not provisioned", "rsp engines add csparql")
    assert not (tmp_path / "o").exists()


# ---- one query loader, parameters, static data ------------------------------------------------


def test_run_reads_queries_as_the_oracle_does(shared_data: Path, tmp_path: Path) -> None:
    query = load_query(f"{shared_data / SRB_PROPERTIES}#srb.query1")
    assert query.spec is not None and query.spec.windows
    template = tmp_path / "t.rspql"
    template.write_text(Q1.read_text().replace("RANGE PT10S STEP PT10S", "RANGE ${W} STEP ${W}"))
    spec = load_query(template, params={"W": "PT4S"}).spec
    assert spec is not None and spec.windows[0].range_ms == 4000


WATER_QUERY = """PREFIX ex: <http://myexample.org/>
REGISTER RSTREAM ex:q AS
SELECT ?obs ?sensor
FROM <http://myexample.org/sensors>
FROM NAMED WINDOW ex:w ON <http://myexample.org/stream> [RANGE ${W} STEP ${W}]
WHERE {
  WINDOW ex:w { ?m ex:observeFlow ?obs }
  ?obs ex:isProducedBy ?sensor .
}
"""


def test_static_data_and_parameters_reach_the_engine_and_the_oracle_agrees(
    tmp_path: Path, rsp_exe: list[str], spark: Any
) -> None:
    """rsp-js joins each window with the static sensor data of ``rsp generate water``; every
    result row needs a static triple, so rows prove the data reached the engine. The oracle,
    given the same static file and parameter, judges the run correct under the profile the
    run recorded (no --profile)."""
    reason = engine_missing("rspjs")
    if reason:
        pytest.skip(reason)
    stream = tmp_path / "w.parquet"
    static = tmp_path / "w.static.parquet"
    run_rsp(rsp_exe, "generate", "water", "-o", stream, "--messages", "12", "--rate", "4",
            "--sensors", "3")  # fmt: skip
    query = tmp_path / "w.rspql"
    query.write_text(WATER_QUERY)
    run_dir = tmp_path / "run"
    common = ("-q", query, "--param", "W=PT5S", "--static", static)
    proc = run_rsp(rsp_exe, "run", "-e", "rspjs", "-r", "subprocess", "-s", stream,
                   *common, "-o", run_dir, "--json")  # fmt: skip
    assert json.loads(proc.stdout)["state"] == "ok"
    outputs = read_table(run_dir, "outputs")
    sensors = {json.loads(b)["sensor"]["value"] for b in outputs.column("binding").to_pylist()}
    assert outputs.num_rows == 12 and sensors <= {
        f"http://myexample.org/sensor_{i}" for i in (1, 2, 3)
    }
    config = json.loads((run_dir / "config.json").read_text())
    assert config["static"]["graphs"] == ["http://myexample.org/sensors"]
    assert config["engine"]["profile"]["name"] == "rspjs"
    # the check in-process, on the test session's SparkSession (a subprocess starts its own)
    code, stdout = rsp_in_process("oracle", "check", "-s", stream, *common, "--answers", run_dir,
                                  "--t0", "0", "--json")  # fmt: skip
    assert code == 0, stdout
    assert json.loads(stdout)["verdict"]["matched_relations"] == 3


def test_static_data_a_query_cannot_see_is_refused(tmp_path: Path, rsp_exe: list[str]) -> None:
    stream = tmp_path / "w.parquet"
    run_rsp(rsp_exe, "generate", "water", "-o", stream, "--messages", "4")
    proc = run_rsp(
        rsp_exe,
        *("run", "-e", "rspjs", "-r", "subprocess", "-s", stream, "-q", Q1),
        *("--static", tmp_path / "w.static.parquet", "-o", tmp_path / "run"),
        check=False,
    )
    fails(proc, "the query reads no static graph", "FROM <graph-iri>")
    assert not (tmp_path / "run").exists()


# ---- profiles ---------------------------------------------------------------------------------


def test_every_adapter_profile_is_a_profile_name(rsp_exe: list[str]) -> None:
    listed = json.loads(run_rsp(rsp_exe, "profiles", "list", "--json").stdout)
    by_name = {p["name"]: p["adapter"] for p in listed}
    assert by_name["rspjs"] == "rspjs" and by_name["cqels-1.x"] == "cqels"
    assert by_name["csparql"] == "csparql09" and by_name["csparql-0.9.7"] == "csparql"
    assert by_name["cqels"] is None  # built-in (CSRBench's published profile), no adapter
    assert load_profile("rspjs").name == "rspjs"
    shown = json.loads(run_rsp(rsp_exe, "profiles", "show", "cqels-1.x", "--json").stdout)
    assert shown["name"] == "cqels-1.x"


def test_check_without_profile_needs_a_run_directory(tmp_path: Path, rsp_exe: list[str]) -> None:
    src = tmp_path / "s.parquet"
    run_rsp(rsp_exe, "generate", "yabench", "-o", src, "--duration", "1000")
    answers = tmp_path / "a.json"
    answers.write_text('{"relations": []}')
    proc = run_rsp(
        rsp_exe, "oracle", "check", "-s", src, "-q", Q1, "--answers", answers, check=False
    )
    fails(proc, "--profile is needed")


@pytest.mark.parametrize("name", ["rspjs", "cqels-1.x"])
def test_adapter_profiles_load_by_name(name: str) -> None:
    assert load_profile(name).name == name


# ---- help -------------------------------------------------------------------------------------


def test_help_shows_commands_as_commands(rsp_exe: list[str]) -> None:
    usage = run_rsp(rsp_exe, "csrbench", "--help").stdout
    assert "rsp csrbench [OPTIONS]" in usage and "COMMAND" not in usage
    top = run_rsp(rsp_exe, "--help").stdout
    assert "csrbench  Run CSRBench (34 graphs, Q1–Q7) on engines and judge each output." in top
    for cmd, name in ((("stream", "import"), "SRC"), (("stream", "export"), "SRC")):
        text = run_rsp(rsp_exe, *cmd, "--help").stdout
        assert name in text and "{src}" not in text
    run_help = run_rsp(rsp_exe, "run", "--help").stdout
    for option in ("--static", "--param", "--query"):
        assert option in run_help


def test_afap_with_a_rate_is_an_error(tmp_path: Path, rsp_exe: list[str]) -> None:
    stream = tmp_path / "s.parquet"
    run_rsp(rsp_exe, "generate", "yabench", "-o", stream, "--duration", "1000")
    proc = run_rsp(
        rsp_exe,
        *("run", "-e", "rspjs", "-r", "subprocess", "-q", Q1, "-s", stream),
        *("-o", tmp_path / "run", "--mode", "afap", "--rate", "10"),
        check=False,
    )
    fails(proc, "--mode afap pushes as fast as possible: it takes no --rate")
    assert "validation error" not in proc.stderr  # the user's option names, not pydantic's
    assert not (tmp_path / "run").exists()


def test_a_short_social_stream_works(tmp_path: Path, rsp_exe: list[str]) -> None:
    """50 users for an hour make (almost) no items to like: an IndexError, now an empty
    stream with its static data (``--period`` is the old name of ``--duration``)."""
    out = tmp_path / "s.parquet"
    run_rsp(rsp_exe, "generate", "social", "--users", "50", "--period", "3600000", "-o", out)
    assert out.is_file() and (tmp_path / "s.static.parquet").is_file()


def test_generator_limits_are_in_option_names(tmp_path: Path, rsp_exe: list[str]) -> None:
    out = tmp_path / "w.parquet"
    proc = run_rsp(rsp_exe, "generate", "water", "--sensors", "1", "-o", out, check=False)
    fails(proc, "--sensors: must be greater than or equal to 2, got 1")
    assert "WaterParams" not in proc.stderr and "pydantic" not in proc.stderr
    assert not out.exists()  # a rule over several options: test_generators_social_water
