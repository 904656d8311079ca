"""Every judging path gives one verdict: `rsp oracle check` with the adapter's profile and
`rsp csrbench`'s judge agree, on real C-SPARQL 0.9.7 runs recorded by `rsp csrbench` before the
two shared a t0 rule (tests/fixtures/csrbench-csparql-0.9.7/README.md)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rsp_adapter_csparql import CsparqlAdapter
from typer.testing import CliRunner

from rsp_sdk.cli import app
from rsp_sdk.csrbench import default_query_dir, judge, prepare_stream
from rsp_sdk.model.profile import load_profile
from rsp_sdk.query import load_query
from tests.oracle_support import spark
from tests.real_engines import CSRBENCH_DATA

__all__ = ["spark"]

RECORDED = Path(__file__).parent / "fixtures" / "csrbench-csparql-0.9.7"
VERDICTS = {v["query"]: v for v in json.loads((RECORDED / "csrbench.json").read_text())}


@pytest.fixture(scope="module")
def stream(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stream exactly as `rsp csrbench` prepares it."""
    return prepare_stream(shared_data / CSRBENCH_DATA, tmp_path_factory.mktemp("csrbench"))


def test_the_adapter_profile_is_the_builtin_one() -> None:
    assert CsparqlAdapter.profile == load_profile("csparql-0.9.7")
    assert CsparqlAdapter.profile.t0.lead == "range_minus_step"


@pytest.mark.parametrize("query", sorted(VERDICTS))
def test_oracle_check_with_the_adapter_profile_gives_csrbench_verdict(
    query: str, stream: Path, spark: Any
) -> None:
    recorded = VERDICTS[query]
    run_dir = RECORDED / query
    qfile = default_query_dir() / f"{query}.rspql"
    result = CliRunner().invoke(
        app,
        [
            *("oracle", "check", "--stream", str(stream), "--query", str(qfile)),
            *("--profile", "csparql-0.9.7", "--answers", str(run_dir), "--json"),
        ],
    )
    assert result.exit_code == (0 if recorded["state"] == "correct" else 1), result.output
    cli = json.loads(result.stdout[result.stdout.index("{") :])
    spec = load_query(qfile)
    state, detail = judge(
        stream, spec.model_copy(update={"name": query}), CsparqlAdapter(), run_dir
    )
    got = {
        "cli": (cli["state"], cli["t0"], cli["verdict"]["matched_relations"]),
        "csrbench": (state, detail["t0"], detail["verdict"]["matched_relations"]),
    }
    want = (recorded["state"], recorded["t0"], recorded["matched_relations"])
    assert got == {"cli": want, "csrbench": want}


def test_ctrl_c_during_a_spark_action_interrupts_it_at_once_and_cancels_it(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT while the oracle's session runs an action (a few seconds of CPU): KeyboardInterrupt
    comes within a second and the Spark job is cancelled. PySpark's own handler called
    cancelAllJobs down the interrupted thread's one Py4J connection (pinned threads), busy
    with the action itself, so Ctrl-C waited for the whole action to end. And Py4J never sends
    its cancel command: the JVM closes every gateway connection on it, so PySpark's unwinding
    call raced it and raised Py4JNetworkError instead of KeyboardInterrupt (CI, stop 14)."""
    from py4j.clientserver import ClientServerConnection
    from pyspark.sql import functions as F

    cancels: list[tuple[int, int]] = []
    send_cancel = ClientServerConnection.shutdown_socket

    def spy(self: Any, remote_port: int, local_port: int) -> None:  # the real one still runs
        cancels.append((remote_port, local_port))
        send_cancel(self, remote_port, local_port)

    monkeypatch.setattr(ClientServerConnection, "shutdown_socket", spy)

    from rsp_sdk.oracle.spark import _on_sigint

    installed = signal.getsignal(signal.SIGINT)
    assert getattr(installed, "__qualname__", "") == "_on_sigint.<locals>.handler"
    # as under a terminal (a suite started in the background inherits SIGINT ignored)
    signal.signal(signal.SIGINT, _on_sigint(signal.default_int_handler))
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    group = "rsp-ctrl-c-test"  # this action's jobs only: other tests share the session

    def running() -> list[int]:
        jobs = (tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group))
        return [j.jobId for j in jobs if j is not None and j.status == "RUNNING"]

    sent: list[float] = []

    def interrupt() -> None:  # once the job runs, not at a fixed delay (a loaded machine)
        until = time.monotonic() + 60
        while not running() and time.monotonic() < until:
            time.sleep(0.05)
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    action = spark.range(0, 400_000_000, numPartitions=2).select(
        F.sum(F.sqrt("id") * F.sin("id") * F.cos("id"))
    )
    sc.setJobGroup(group, "SIGINT during an action", interruptOnCancel=True)
    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            action.collect()
        raised = time.monotonic()
    finally:
        thread.join(timeout=70)
        signal.signal(signal.SIGINT, installed)
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert sent and raised - sent[0] < 3.0
    assert cancels == [], "Py4J sent its cancel command, which closes every gateway connection"
    until = time.monotonic() + 10
    while running() and time.monotonic() < until:
        time.sleep(0.1)
    assert running() == [] and tracker.getJobIdsForGroup(group)
