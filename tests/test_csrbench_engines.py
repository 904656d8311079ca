"""CSRBench end to end, as a user runs it: import the data, `rsp run` an engine on an RSP-QL
query from matrix/queries/csrbench, then `rsp oracle check` the run directory against the
oracle under the adapter's declared profile. rsp-js runs for real in CI (Q1); ETALIS where its
sources are provisioned. The verdicts recorded in docs/engines/*.md come from these commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_rsp
from tests.test_jtalis import etalis_missing
from tests.test_rspjs import rspjs_missing

QUERIES = REPO / "matrix" / "queries" / "csrbench"


@pytest.fixture(scope="module")
def csrbench_stream(shared_data: Path, rsp_exe: list[str], tmp_path_factory: Any) -> Path:
    out = tmp_path_factory.mktemp("csrbench") / "csrbench.parquet"
    run_rsp(
        rsp_exe,
        "stream",
        "import",
        shared_data / "dellaglio+csrbench-oracle" / "data",
        "-f",
        "csrbench-ttl",
        "--interval",
        "1000",
        "-o",
        out,
    )
    return out


def run_and_check(
    rsp_exe: list[str], engine: str, profile: Any, query: str, stream: Path, tmp: Path
) -> dict[str, Any]:
    run_dir = tmp / f"run-{engine}-{query}"
    proc = run_rsp(
        rsp_exe,
        "run",
        "-e",
        engine,
        "-r",
        "subprocess",
        "-q",
        QUERIES / f"{query}.rspql",
        "-s",
        stream,
        "-o",
        run_dir,
        "--mode",
        "afap",
        "--drain-quiet",
        "1",
        "--json",
    )
    summary = json.loads(proc.stdout)
    assert summary["state"] == "ok", summary
    profile_file = tmp / f"{engine}.profile.json"
    profile_file.write_text(profile.model_dump_json())
    check = run_rsp(
        rsp_exe,
        "oracle",
        "check",
        "--stream",
        stream,
        "--query",
        QUERIES / f"{query}.rspql",
        "--profile",
        profile_file,
        "--answers",
        run_dir,
        "--json",
        check=False,
    )
    assert check.returncode in (0, 1), check.stderr
    result: dict[str, Any] = json.loads(check.stdout)
    result["events"] = summary["result_events"]
    result["rows"] = summary["result_rows"]
    return result


def test_rspjs_csrbench_q1_is_correct(
    csrbench_stream: Path, rsp_exe: list[str], tmp_path: Path
) -> None:
    reason = rspjs_missing()
    if reason:
        pytest.skip(reason)
    from rsp_adapter_rspjs import PROFILE

    result = run_and_check(rsp_exe, "rspjs", PROFILE, "q1", csrbench_stream, tmp_path)
    # windows [10 s, 20 s), [20 s, 30 s) and — flushed by advance_time — [30 s, 40 s)
    assert (result["events"], result["rows"]) == (3, 15)
    assert result["correct"] is True and result["t0"] == 0, result


def test_jtalis_csrbench_q1_is_correct(
    csrbench_stream: Path, rsp_exe: list[str], tmp_path: Path
) -> None:
    reason = etalis_missing()
    if reason:
        pytest.skip(reason)
    from rsp_adapter_jtalis import PROFILE

    result = run_and_check(rsp_exe, "jtalis", PROFILE, "q1", csrbench_stream, tmp_path)
    # one report per observation completing the 4-pattern join with a value above 80
    assert (result["events"], result["rows"]) == (15, 15)
    assert result["correct"] is True, result
