"""`rsp run` end to end on the fixture engines: the run directory, its tables and their meaning."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pyarrow.compute as pc
import pytest

from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.run.recorder import read_table
from rsp_sdk.runtime.bridge import bridge_classpath
from rsp_sdk.streams.io import write_stream
from rsp_sdk.testing import Scenario, default_query
from rsp_sdk.testing.scenario import NS

REPO = Path(__file__).resolve().parent.parent
SC = Scenario(triples=20_000, span_ms=4_000)


def prepare_inputs(tmp: Path, sc: Scenario = SC) -> tuple[Path, Path]:
    stream, query = tmp / "stream.parquet", tmp / "query.json"
    write_stream(sc.table(), stream, StreamMeta(producer="test", streams=[sc.stream]))
    query.write_text(default_query(sc.stream).model_dump_json())
    return stream, query


def rsp_env(cache: Any) -> dict[str, str]:
    return {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": str(REPO),
        "RSP_ADAPTERS": "tests.fixtures.adapters:ToyJavaAdapter,tests.fixtures.adapters:ToyPyAdapter",
        "RSP_CACHE": str(cache.root),
        "RSP_BRIDGE_CLASSPATH": os.pathsep.join(str(p) for p in bridge_classpath()),
    }


def run_rsp_env(
    rsp_exe: list[str], env: dict[str, str], *args: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*rsp_exe, *map(str, args)], capture_output=True, text=True, env=env, timeout=300
    )


def rsp_run(
    rsp_exe: list[str],
    cache: Any,
    engine: str,
    runtime: str,
    query: Any,
    stream: Any,
    output: Any,
    *extra: Any,
) -> subprocess.CompletedProcess[str]:
    """``rsp run`` on a fixture engine, with the fixture cache and adapters in the environment."""
    return run_rsp_env(
        rsp_exe,
        rsp_env(cache),
        "run",
        "-e",
        engine,
        "-r",
        runtime,
        "-q",
        query,
        "-s",
        stream,
        "-o",
        output,
        *extra,
    )


def expected_rows(sc: Scenario) -> dict[int, set[tuple[str, str]]]:
    """What a window-close, tumbling 1 s, Rstream engine must give for the default query."""
    t = sc.table()
    out: dict[int, set[tuple[str, str]]] = {}
    for ts, s, p, o in zip(
        t["t_app_ms"].to_pylist(),
        t["s"].to_pylist(),
        t["p"].to_pylist(),
        t["o"].to_pylist(),
        strict=True,
    ):
        if p == f"<{NS}p0>":
            out.setdefault((ts // 1000 + 1) * 1000, set()).add((s, o))
    return out


@pytest.mark.parametrize(
    ("engine", "runtime"),
    [("toy-java", "jpype"), ("toy-java", "py4j"), ("toy-java", "docker"), ("toy-py", "subprocess")],
)
def test_rsp_run_records_everything(
    toy_cache: Any,
    tmp_path: Path,
    rsp_exe: list[str],
    engine: str,
    runtime: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.engines import skip_if_unavailable

    skip_if_unavailable(runtime)
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=512")  # recorded, not used here
    monkeypatch.setenv("RSP_MAX_REPLY_BYTES", "268435456")  # the default limit, recorded
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    stream, query = prepare_inputs(tmp_path)
    out = tmp_path / "run"
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        engine,
        runtime,
        query,
        stream,
        out,
        "--rate",
        "20000",
        "--sample-interval",
        "0.2",
        "--drain-quiet",
        "0.5",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["state"] == "ok" and summary["triples_pushed"] == SC.triples

    config = json.loads((out / "config.json").read_text())
    import hashlib

    assert config["stream"]["sha256"] == hashlib.sha256(stream.read_bytes()).hexdigest()
    assert config["query"]["rendered"].startswith("SELECT ?s ?o FROM <")
    assert config["runtime"] == runtime and config["engine"]["name"] == engine
    assert config["clock"]["wall_anchor_ns"] > 1_600_000_000 * 10**9
    environment = config["environment"]
    assert environment["NODE_OPTIONS"] == "--max-old-space-size=512"
    assert environment["RSP_MAX_REPLY_BYTES"] == "268435456"
    assert "JAVA_TOOL_OPTIONS" not in environment  # only the variables set
    if engine == "toy-java":
        assert config["driver"]["driver_class"] == "org.rspsdk.fixture.ToyDriver"
        assert config["driver"]["jvm_flags"] == ["-Xss1m"]

    pushed = read_table(out, "pushed")
    assert pc.sum(pushed["count"]).as_py() == SC.triples
    # never early: each batch was pushed at or after its due time
    assert all(
        s >= d
        for s, d in zip(
            pushed["t_sys_start_ns"].to_pylist(), pushed["t_due_ns"].to_pylist(), strict=True
        )
    )

    outputs = read_table(out, "outputs")
    got: dict[int, set[tuple[str, str]]] = {}
    for t_app, binding in zip(
        outputs["t_app_ms"].to_pylist(), outputs["binding"].to_pylist(), strict=True
    ):
        b = json.loads(binding)
        got.setdefault(t_app, set()).add(
            (f"<{b['s']['value']}>", f'"{b["o"]["value"]}"^^<{b["o"]["datatype"]}>')
        )
    assert got == expected_rows(SC)
    # results arrive after the data that produced them was pushed
    first_push = min(pushed["t_sys_start_ns"].to_pylist())
    assert min(outputs["t_sys_ns"].to_pylist()) >= first_push
    assert set(outputs["query"].to_pylist()) == {"conformance"}
    assert sorted(set(outputs["seq"].to_pylist())) == list(range(len(got)))

    perf = read_table(out, "perf")
    assert perf.num_rows >= 1 and min(perf["rss_bytes"].to_pylist()) > 1_000_000
    if engine == "toy-java":
        assert all(h and h > 0 for h in perf["heap_used"].to_pylist())
    status = json.loads((out / "status.json").read_text())
    assert status["state"] == "ok" and status["result_events"] == len(got)
    assert (
        not psutil.pid_exists(status["engine_pid"])
        or psutil.Process(status["engine_pid"]).status() == psutil.STATUS_ZOMBIE
    )


def test_killed_run_keeps_what_it_had(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    """SIGKILL `rsp run` half-way: flushed part files stay readable, the engine follows."""
    sc = Scenario(triples=40_000, span_ms=20_000)
    stream, query = prepare_inputs(tmp_path, sc)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            *rsp_exe,
            "run",
            "-e",
            "toy-java",
            "-r",
            "jpype",
            "-q",
            str(query),
            "-s",
            str(stream),
            "-o",
            str(out),
            "--json",
        ],  # real speed: 20 s of stream
        env=rsp_env(toy_cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (out / "outputs.parquet").exists() and any((out / "outputs.parquet").glob("part-*")):
                break
            time.sleep(0.2)
        else:
            pytest.fail("no outputs part file appeared")
        status = json.loads((out / "status.json").read_text())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert status["state"] == "running" and status["engine_pid"]
    outputs = read_table(out, "outputs")
    pushed = read_table(out, "pushed")
    assert outputs.num_rows > 0 and pushed.num_rows > 0
    import pyarrow.dataset as ds

    assert ds.dataset(out / "outputs.parquet").to_table().num_rows == outputs.num_rows
    host = status["engine_pid"]
    deadline = time.monotonic() + 15
    while psutil.pid_exists(host) and time.monotonic() < deadline:
        try:
            if psutil.Process(host).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    else:
        pass
    alive = psutil.pid_exists(host) and psutil.Process(host).status() != psutil.STATUS_ZOMBIE
    assert not alive, "the engine outlived the killed rsp run"


def test_rsp_run_bad_input(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    stream, _ = prepare_inputs(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "q"')
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-py",
        "subprocess",
        tmp_path / "missing.json",
        stream,
        tmp_path / "r1",
    )
    assert proc.returncode == 2 and "query file not found" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "nope",
        "subprocess",
        bad,
        stream,
        tmp_path / "r2",
    )
    assert proc.returncode == 2 and "unknown engine 'nope'" in proc.stderr
    assert "toy-java" in proc.stderr
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-java",
        "subprocess",
        bad,
        stream,
        tmp_path / "r3",
        "--raw",
    )
    assert proc.returncode == 2 and "cannot carry" in proc.stderr


def test_rsp_run_unsupported_query_is_refused(
    toy_cache: Any, tmp_path: Path, rsp_exe: list[str]
) -> None:
    stream, _ = prepare_inputs(tmp_path)
    spec = default_query(SC.stream).model_copy(
        update={"sparql": f"SELECT ?s WHERE {{ ?s <{NS}p0> ?o OPTIONAL {{ ?s <{NS}p1> ?x }} }}"}
    )
    q = tmp_path / "optional.json"
    q.write_text(spec.model_dump_json())
    out = tmp_path / "run"
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-py",
        "subprocess",
        q,
        stream,
        out,
        "--json",
    )
    assert proc.returncode == 1
    status = json.loads((out / "status.json").read_text())
    assert status["error_type"] == "UnsupportedQuery" and "optional" in status["error"]
    assert status["batches_pushed"] == 0


def test_rsp_run_raw_dialect_query(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    stream, _ = prepare_inputs(tmp_path)
    q = tmp_path / "count.toy"
    q.write_text(
        f"SELECT (COUNT(*) AS ?n) FROM <{SC.stream}> WHERE {{ ?s ?p ?o }} WINDOW 2000 STEP 2000"
    )
    out = tmp_path / "run"
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-java",
        "jpype",
        q,
        stream,
        out,
        "--raw",
        "--mode",
        "afap",
        "--flush-ms",
        "5000",
        "--drain-quiet",
        "0.5",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    outputs = read_table(out, "outputs")
    counts = {
        t: json.loads(b)["n"]["value"]
        for t, b in zip(
            outputs["t_app_ms"].to_pylist(), outputs["binding"].to_pylist(), strict=True
        )
    }
    assert counts == {2000: "10000", 4000: "10000"}


def test_rsp_run_with_warmup(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    """A warm-up stream (its own IRI and rate) goes first and is marked in pushed.parquet."""
    stream, query = prepare_inputs(tmp_path)
    warm_sc = Scenario(stream=f"{NS}warm", triples=2_000, span_ms=1_000)
    t = warm_sc.table()
    t = t.set_column(1, "t_app_ms", pc.subtract(t["t_app_ms"], 5_000))  # before the stream
    warm = tmp_path / "warm.parquet"
    write_stream(t, warm, StreamMeta(producer="test", streams=[warm_sc.stream]))
    out = tmp_path / "run"
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-py",
        "subprocess",
        query,
        stream,
        out,
        "--rate",
        "40000",
        "--warmup",
        warm,
        "--warmup-rate",
        "20000",
        "--drain-quiet",
        "0.5",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    pushed = read_table(out, "pushed").to_pylist()
    phases = [r["phase"] for r in pushed]
    assert phases == sorted(phases, key=lambda p: p != "warmup") and "warmup" in phases
    assert {r["stream"] for r in pushed if r["phase"] == "warmup"} == {warm_sc.stream}
    assert sum(r["count"] for r in pushed if r["phase"] == "measure") == SC.triples
    assert json.loads(proc.stdout)["push_rate"] > 0
