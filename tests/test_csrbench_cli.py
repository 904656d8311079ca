"""``rsp csrbench`` and ``rsp_sdk.csrbench``: the engine-agnostic rules (R2S, feeding, t0
candidates), the command's input errors, a run where every query is refused before any engine
starts, and — where C-SPARQL is provisioned and the oracle is installed — Q1 and Q5 end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rsp_adapter_cqels import CqelsAdapter
from rsp_adapter_csparql import Csparql09Adapter, CsparqlAdapter

from rsp_sdk.csrbench import (
    CsrbenchRequest,
    engine_query,
    feeding,
    run_csrbench,
)
from rsp_sdk.engine import registry
from rsp_sdk.model.profile import R2S, Profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.oracle.s2r import t0_candidates as oracle_t0_candidates
from rsp_sdk.run.feeder import PacingMode
from tests.conftest import run_rsp
from tests.csrbench_queries import rspql
from tests.fixtures.adapters import ToyPyAdapter
from tests.oracle_support import rsp_in_process, spark
from tests.real_engines import CSRBENCH_DATA, require

__all__ = ["spark"]


def test_engines_run_the_queries_with_their_own_r2s() -> None:
    q1 = rspql(1)
    assert engine_query(q1, CsparqlAdapter()) is q1
    assert engine_query(q1, CqelsAdapter()).r2s is R2S.ISTREAM


def test_feeding_follows_the_engine_clock() -> None:
    q5 = rspql(5)  # 5 s / 1 s
    feeder, tail = feeding(CsparqlAdapter(), q5)
    assert feeder.mode is PacingMode.AFAP and tail == 2.0  # application time: advance_time
    feeder, tail = feeding(CqelsAdapter(), q5)
    assert feeder.mode is PacingMode.REAL_TIME and tail == 2.0  # reports while data arrives
    feeder, tail = feeding(Csparql09Adapter(), q5)
    assert feeder.mode is PacingMode.REAL_TIME and tail == 2.0 + 6.0  # the last window closes


def t0_candidates(
    profile: Profile, spec: QuerySpec, t_min: int, stream_unit_ms: int = 1000
) -> list[int]:
    """The one t0 rule (the oracle's), which `rsp csrbench` judges with."""
    return oracle_t0_candidates(profile, spec, stream_unit_ms=stream_unit_ms, t_min=t_min)


def test_t0_candidates_start_one_window_before_the_data() -> None:
    csparql = CsparqlAdapter.profile
    assert t0_candidates(csparql, rspql(5), 0) == [-4000]  # ω − β = 4 s before, one slide
    assert t0_candidates(csparql, rspql(1), 0) == list(range(0, 10_000, 1000))
    assert t0_candidates(csparql, rspql(1), 1500) == list(range(1000, 11_000, 1000))
    # CSRBench's enumeration: one window inclusive, from the first triple
    assert t0_candidates(CqelsAdapter.profile, rspql(5), 0) == list(range(0, 6000, 1000))
    # a profile counting in ms over a stream in seconds: candidates step by the stream's unit
    ms = csparql.model_copy(update={"time_unit_ms": 1})
    assert t0_candidates(ms, rspql(1), 0, stream_unit_ms=1000) == list(range(0, 10_000, 1000))
    assert len(t0_candidates(ms, rspql(1), 0, stream_unit_ms=1)) == 10_000


def test_help_and_input_errors(rsp_exe: list[str], tmp_path: Path) -> None:
    out = run_rsp(rsp_exe, "csrbench", "--help").stdout
    for option in ("--engine", "--runtime", "--query", "--output", "--json", "--no-judge"):
        assert option in out
    bad = run_rsp(
        rsp_exe, "csrbench", "-e", "csparql", "-q", "q9", "-o", tmp_path / "o", check=False
    )
    assert bad.returncode == 2 and "unknown CSRBench query 'q9'" in bad.stderr
    nodata = run_rsp(
        rsp_exe,
        "csrbench",
        "-e",
        "csparql",
        "--data",
        tmp_path / "nope",
        "-o",
        tmp_path / "o",
        check=False,
    )
    assert nodata.returncode == 2 and "data folder is missing" in nodata.stderr
    for config, says in (("@" + str(tmp_path / "no.json"), "no.json"), ("[1]", "JSON object")):
        bad_config = run_rsp(
            rsp_exe,
            "csrbench",
            "-e",
            "rspjs",
            "--engine-config",
            config,
            "-o",
            tmp_path / "o",
            check=False,
        )
        assert bad_config.returncode == 2 and says in bad_config.stderr, bad_config.stderr


def test_queries_an_engine_cannot_run_are_recorded_unsupported(
    shared_data: Path, tmp_path: Path
) -> None:
    """The Python fixture engine takes one triple pattern and no FILTER: every CSRBench query is
    refused before an engine starts, and the verdicts say which features were missing."""
    registry.register(ToyPyAdapter())
    try:
        verdicts = run_csrbench(
            CsrbenchRequest(
                engines=["toy-py"],
                data_dir=shared_data / CSRBENCH_DATA,
                output=tmp_path / "out",
            )
        )
    finally:
        registry.unregister("toy-py")
    assert [(v.query, v.runtime, v.state) for v in verdicts] == [
        (f"q{n}", "subprocess", "unsupported") for n in range(1, 8)
    ]
    assert all("filter" in (v.error or "") and "join" in (v.error or "") for v in verdicts)
    saved = json.loads((tmp_path / "out" / "csrbench.json").read_text())
    assert [v["state"] for v in saved] == ["unsupported"] * 7
    assert (tmp_path / "out" / "csrbench.parquet").exists()
    with pytest.raises(Exception, match="not empty"):
        run_csrbench(
            CsrbenchRequest(
                engines=["csparql"], data_dir=shared_data / CSRBENCH_DATA, output=tmp_path / "out"
            )
        )


def test_csparql_q1_and_q5_end_to_end(spark: Any, shared_data: Path, tmp_path: Path) -> None:
    """`rsp csrbench` in-process: judged on the test session's SparkSession (a subprocess
    would start a Spark JVM of its own); C-SPARQL runs in its own JVM (py4j)."""
    require(CsparqlAdapter())
    code, stdout = rsp_in_process(
        *("csrbench", "-e", "csparql", "-r", "py4j", "-q", "q1", "-q", "q5"),
        *("--data", shared_data / CSRBENCH_DATA, "-o", tmp_path / "out", "--json"),
    )
    assert code == 0, stdout
    verdicts = {v["query"]: v for v in json.loads(stdout)}
    assert verdicts["q1"]["state"] == "correct" and verdicts["q1"]["t0"] == 0
    assert verdicts["q1"]["relations"] == 4
    # Q5's first windows open before the data: C-SPARQL's SECRET t0 is ω − β before it
    assert verdicts["q5"]["state"] == "correct" and verdicts["q5"]["t0"] == -4000
    run = Path(verdicts["q1"]["run_dir"])
    assert json.loads((run / "status.json").read_text())["state"] == "ok"
