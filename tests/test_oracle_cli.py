"""``rsp profiles`` and ``rsp oracle expected`` as a user runs them, including on a real
standalone Spark cluster (master and worker on 127.0.0.1, torn down afterwards)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import BUILTIN_PROFILES, load_profile
from rsp_sdk.oracle import expected
from tests.conftest import run_rsp
from tests.oracle_support import spark, spark_lines

__all__ = ["spark"]

ORACLE = "dellaglio+csrbench-oracle"
QUERIES = f"{ORACLE}/src/main/resources/srbench-queries.properties"


def test_profiles_list_and_show(rsp_exe: list[str]) -> None:
    listed = json.loads(run_rsp(rsp_exe, "profiles", "list", "--json").stdout)
    names = [p["name"] for p in listed]  # the built-in ones, then the adapters' own
    assert names[:5] == ["csparql", "csparql-0.9.7", "cqels", "sparqlstream", "jtalis"]
    assert {"rspjs", "cqels-1.x"} <= set(names[5:])
    shown = json.loads(run_rsp(rsp_exe, "profiles", "show", "cqels", "--json").stdout)
    assert shown["report"] == sorted(["content_change", "non_empty_content"]) or set(
        shown["report"]
    ) == {"content_change", "non_empty_content"}
    assert shown["tick"] == "tuple_driven" and shown["r2s"] == "istream"
    human = run_rsp(rsp_exe, "profiles", "show", "jtalis").stdout
    assert "event-driven" in human and "True" in human


def test_profile_files_and_bad_profiles(rsp_exe: list[str], tmp_path: Path) -> None:
    good = tmp_path / "mine.toml"
    good.write_text(
        'report = ["window_close", "periodic"]\ntick = "time_driven"\nperiod_ms = 2000\n'
        "emits_empty_relations = false\n[t0]\nfirst_ms = -1000\nstep_ms = 500\n"
    )
    p = load_profile(good)
    assert p.name == "mine" and p.period_ms == 2000 and p.t0.first_ms == -1000
    shown = json.loads(run_rsp(rsp_exe, "profiles", "show", str(good), "--json").stdout)
    assert shown["t0"] == {"first_ms": -1000, "step_ms": 500, "span": "slide", "lead": "none"}
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "report": ["window_close", "content_change"],
                "tick": "tuple_driven",
                "emits_empty_relations": True,
            }
        )
    )
    with pytest.raises(InputError, match="pick one"):
        load_profile(bad)
    proc = run_rsp(rsp_exe, "profiles", "show", str(bad), check=False)
    assert proc.returncode == 2 and "pick one" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_rsp(rsp_exe, "profiles", "show", "nope", check=False)
    assert proc.returncode == 2 and "csparql" in proc.stderr
    for builtin in BUILTIN_PROFILES.values():
        assert load_profile(builtin.name) == builtin


@pytest.fixture(scope="module")
def csrbench_parquet(
    rsp_exe: list[str], shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("cli") / "csrbench.parquet"
    run_rsp(
        rsp_exe,
        "stream",
        "import",
        shared_data / ORACLE / "data",
        "-f",
        "csrbench-ttl",
        "--interval",
        "1000",
        "-o",
        out,
    )
    return out


def test_expected_csrbench_json(
    rsp_exe: list[str], shared_data: Path, csrbench_parquet: Path, tmp_path: Path
) -> None:
    out = tmp_path / "q1.json"
    proc = run_rsp(
        rsp_exe,
        "oracle",
        "expected",
        "--stream",
        csrbench_parquet,
        "--query",
        f"{shared_data / QUERIES}#srb.query1",
        "--profile",
        "csparql",
        "--t0",
        "0",
        "--format",
        "csrbench-json",
        "-o",
        out,
        "--json",
    )
    assert not spark_lines(proc.stderr), proc.stderr  # Spark's log lines only with --verbose
    summary = json.loads(proc.stdout)
    assert summary["t0_candidates"] == [0] and summary["relations"] == 4
    got = json.loads(out.read_text())
    recorded = json.loads(
        (shared_data / ORACLE / "src/main/resources/answers/csparql-answer-1.json").read_text()
    )
    assert [r["timestamp"] for r in got["relations"]] == [
        r["timestamp"] for r in recorded["relations"]
    ]
    for mine, theirs in zip(got["relations"], recorded["relations"], strict=True):
        assert mine["head"]["vars"] == ["sensor", "obs"]
        key = lambda b: json.dumps(b["binding"], sort_keys=True)  # noqa: E731
        assert sorted(map(key, mine["results"]["bindings"])) == sorted(
            map(key, theirs["results"]["bindings"])
        )


def test_expected_bad_input_is_a_clean_error(
    rsp_exe: list[str], csrbench_parquet: Path, tmp_path: Path
) -> None:
    q = tmp_path / "q.rspql"
    q.write_text(
        "SELECT ?s\nFROM NAMED WINDOW <w> ON <s> [RANGE PT${N}S]\nWHERE { WINDOW <w> { ?s ?p ?o } }"
    )
    out = tmp_path / "out.parquet"
    proc = run_rsp(
        rsp_exe,
        "oracle",
        "expected",
        "-s",
        csrbench_parquet,
        "-q",
        q,
        "-p",
        "csparql",
        "-o",
        out,
        check=False,
    )
    assert proc.returncode == 2 and "'N'" in proc.stderr and "q.rspql:2:" in proc.stderr
    assert not out.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark standalone master and one worker (pyspark's own spark-class), on 127.0.0.1."""
    spark_class = shutil.which("spark-class", path=str(Path(sys.executable).parent))
    if spark_class is None:
        pytest.skip("pyspark's spark-class script is missing next to the Python interpreter")
    work = tmp_path_factory.mktemp("cluster")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_WORKER_DIR": str(work / "worker"),
        "SPARK_LOG_DIR": str(work / "logs"),
        "PYSPARK_PYTHON": sys.executable,
    }
    master = subprocess.Popen(
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(ui),
        ],
        env=env,
        stdout=(work / "master.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"spark://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [
            spark_class,
            "org.apache.spark.deploy.worker.Worker",
            url,
            "--host",
            "127.0.0.1",
            "--cores",
            "2",
            "--memory",
            "2g",
            "--webui-port",
            str(worker_ui),
        ],
        env=env,
        stdout=(work / "worker.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as r:
                    state = json.loads(r.read())
                if any(w.get("state") == "ALIVE" for w in state.get("workers", [])):
                    break
            except OSError:
                pass
            if (
                time.monotonic() > deadline
                or master.poll() is not None
                or worker.poll() is not None
            ):
                raise AssertionError(
                    "the standalone cluster did not come up:\n"
                    + (work / "master.log").read_text()[-2000:]
                    + (work / "worker.log").read_text()[-2000:]
                )
            time.sleep(1)
        yield url
    finally:
        for proc in (worker, master):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in (worker, master):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_same_job_on_a_standalone_cluster(
    rsp_exe: list[str],
    shared_data: Path,
    csrbench_parquet: Path,
    standalone_cluster: str,
    tmp_path: Path,
    spark: Any,
) -> None:
    args = [
        "oracle",
        "expected",
        "-s",
        csrbench_parquet,
        "-q",
        f"{shared_data / QUERIES}#srb.query5",
        "-p",
        "sparqlstream",
        "--json",
    ]
    remote = tmp_path / "cluster.parquet"
    proc = run_rsp(rsp_exe, *args, "-o", remote, "--spark-master", standalone_cluster)
    assert json.loads(proc.stdout)["rows"] > 0
    # the same job in this process's local session gives the same table
    local = expected(
        csrbench_parquet, f"{shared_data / QUERIES}#srb.query5", "sparqlstream", spark=spark
    )
    assert pq.read_table(remote).equals(local)
