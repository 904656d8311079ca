"""CSRBench end to end, as a user runs it: `rsp csrbench` (Q1–Q7, every query judged by the
oracle under the adapter's declared profile), and the two-step path `rsp run` + `rsp oracle
check` on a run directory. rsp-js runs everywhere; ETALIS where its sources are provisioned
(CI adds them from ../shared/engines). The verdicts recorded in docs/engines/*.md come from
these commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.images.client import docker_unavailable
from tests.conftest import REPO, run_rsp
from tests.oracle_support import rsp_in_process, spark
from tests.real_engines import engine_missing

__all__ = ["spark"]

QUERIES = REPO / "matrix" / "queries" / "csrbench"


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
    # the check in-process, on the test session's SparkSession (a subprocess starts its own)
    code, stdout = rsp_in_process(
        *("oracle", "check", "--stream", stream, "--query", QUERIES / f"{query}.rspql"),
        *("--profile", profile_file, "--answers", run_dir, "--json"),
    )
    assert code in (0, 1), stdout
    result: dict[str, Any] = json.loads(stdout)
    result["events"] = summary["result_events"]
    result["rows"] = summary["result_rows"]
    return result


def csrbench(
    engine: str,
    shared_data: Path,
    tmp: Path,
    runtimes: list[str] | None = None,
    queries: list[str] | None = None,
) -> dict[Any, Any]:
    """Verdicts by query, or by (query, runtime) when ``runtimes`` are given; ``queries``:
    those only (default Q1–Q7). `rsp csrbench` in-process: the caller holds the ``spark``
    fixture (the engines run in processes of their own)."""
    code, stdout = rsp_in_process(
        "csrbench",
        "-e",
        engine,
        *[arg for r in runtimes or [] for arg in ("-r", r)],
        *[arg for q in queries or [] for arg in ("-q", q)],
        *("--data", shared_data / "dellaglio+csrbench-oracle" / "data"),
        *("-o", tmp / f"csrbench-{engine}", "--json"),
    )
    assert code in (0, 1), stdout
    if runtimes:
        return {(v["query"], v["runtime"]): v for v in json.loads(stdout)}
    return {v["query"]: v for v in json.loads(stdout)}


# the engines whose Q1–Q7 verdicts are checked on the subprocess runtime (the docker one runs
# the same program: rsp-js' and ETALIS' Node/SWI-Prolog code, rsp-rs' binary copied into the
# image; each engine's conformance kit runs it on docker)
ON_SUBPROCESS = ("rspjs", "rsprs", "etalis")


@pytest.fixture(scope="session")
def subprocess_verdicts(
    shared_data: Path, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """Verdicts by engine, then query: ONE `rsp csrbench` over every provisioned engine of
    ON_SUBPROCESS (one Spark session, where three runs had one each). It runs in-process on the
    test session's SparkSession."""
    engines = [e for e in ON_SUBPROCESS if engine_missing(e) is None]
    if not engines:
        return {}
    tmp = tmp_path_factory.mktemp("csrbench-engines")
    code, stdout = rsp_in_process(
        "csrbench",
        *[arg for e in engines for arg in ("-e", e)],
        *("-r", "subprocess", "--data", shared_data / "dellaglio+csrbench-oracle" / "data"),
        *("-o", tmp / "csrbench", "--json"),
    )
    assert code in (0, 1), stdout
    verdicts: dict[str, dict[str, Any]] = {e: {} for e in engines}
    for v in json.loads(stdout):
        assert v["runtime"] == "subprocess", v
        assert v["query"] not in verdicts[v["engine"]], f"two verdicts for {v}"
        verdicts[v["engine"]][v["query"]] = v
    return verdicts


def verdicts_of(engine: str, verdicts: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    reason = engine_missing(engine)
    if reason:
        pytest.skip(reason)
    return {q: (v["state"], v["t0"], v["relations"]) for q, v in verdicts[engine].items()}


def test_rspjs_answers_csrbench_q1_to_q7_correctly(
    subprocess_verdicts: dict[str, dict[str, Any]],
) -> None:
    got = verdicts_of("rspjs", subprocess_verdicts)
    # window-close Rstream without empty relations, windows closing at multiples of STEP (Q5's
    # first one is [-4 s, 1 s): t0 = -(RANGE - STEP)); Q7 lacks its last window
    # (docs/engines/rspjs.md), which the contiguous-part rule accepts
    assert got == {
        "q1": ("correct", 0, 3),
        "q2": ("correct", 0, 15),
        "q3": ("correct", 0, 6),
        "q4": ("correct", 0, 9),
        "q5": ("correct", -4000, 26),
        "q6": ("correct", 0, 5),
        "q7": ("correct", 0, 4),
    }


def test_rsprs_answers_csrbench_as_documented(
    subprocess_verdicts: dict[str, dict[str, Any]],
) -> None:
    got = verdicts_of("rsprs", subprocess_verdicts)
    # windows anchored at the first element — re-anchored at 1000 ms because the data starts at
    # t = 0, which rsp-rs takes for "no t0 yet"; Q4 and Q6 get reports of both grids and Q4 the
    # evaluated empty window before the data (docs/engines/rsprs.md)
    assert got == {
        "q1": ("correct", 1000, 3),
        "q2": ("correct", 0, 15),
        "q3": ("correct", 1000, 4),
        "q4": ("incorrect", None, 11),
        "q5": ("correct", -4000, 26),
        "q6": ("incorrect", None, 5),
        "q7": ("correct", 1000, 5),
    }


# ETALIS' verdicts (docs/engines/etalis.md); JTALIS runs the same rules through its Java API
# and gives the same ones on every runtime that carries it (docs/engines/jtalis.md; Q3 is checked
# on each runtime below)
ETALIS_VERDICTS = {
    "q1": ("correct", 0, 15),
    "q2": ("correct", 0, 15),
    "q3": ("correct", 0, 12),
    "q4": ("unsupported", None, 0),  # AVG: EP-SPARQL has no aggregates
    "q5": ("correct", -4000, 15),
    "q6": ("no output", None, 0),  # the self-join never fires (docs/engines/etalis.md)
    "q7": ("unsupported", None, 0),  # a join of patterns sharing no variable
}


def test_etalis_answers_csrbench_as_documented(
    subprocess_verdicts: dict[str, dict[str, Any]],
) -> None:
    assert verdicts_of("etalis", subprocess_verdicts) == ETALIS_VERDICTS


@pytest.mark.slow
@pytest.mark.timeout(600)  # 2 runs of ~22 s (JTALIS takes ~1 000 triples/s) + one oracle
def test_jtalis_gives_etalis_verdicts_on_every_jvm_transport(
    shared_data: Path, spark: Any, tmp_path: Path
) -> None:
    """JTALIS runs ETALIS' rules through its Java API, so what can differ between runtimes is
    the transport: terms in (the packed batches), results out (InterProlog's terms written back
    as N-Triples). Q3 exercises both — it projects ?value, a float every runtime must write back
    as ETALIS does — and is the one query run per transport: each JTALIS run costs ~22 s on
    2 cores (15 188 triples through pushEvent). The two transports are jpype (in process, the
    host's SWI-Prolog) and the bridge (py4j control + data lane), run on docker (the image's
    own JRE and SWI-Prolog; py4j runs the same bridge on the host's, and its conformance kit
    and the engine tests of test_etalis.py run JTALIS there) — on py4j when Docker is absent.
    The full Q1–Q7 table on each runtime is docs/engines/jtalis.md (`rsp csrbench -e jtalis`);
    Q1, Q2 and Q5 are Q3's join with other windows, which ETALIS' per-observation derivations
    do not see, Q4 and Q7 are refused by the shared renderer before any runtime is involved,
    and Q6's missing derivation is ETALIS'."""
    reason = engine_missing("jtalis")
    if reason:
        pytest.skip(reason)
    runtimes = ["jpype", "py4j" if docker_unavailable() else "docker"]
    verdicts = csrbench("jtalis", shared_data, tmp_path, runtimes=runtimes, queries=["q3"])
    got = {r: (v["state"], v["t0"], v["relations"]) for (_, r), v in verdicts.items()}
    assert got == {r: ETALIS_VERDICTS["q3"] for r in runtimes}


def test_etalis_csrbench_q1_is_correct(
    csrbench_stream: Path, rsp_exe: list[str], spark: Any, tmp_path: Path
) -> None:
    reason = engine_missing("etalis")
    if reason:
        pytest.skip(reason)
    from rsp_adapter_etalis import PROFILE

    result = run_and_check(rsp_exe, "etalis", PROFILE, "q1", csrbench_stream, tmp_path)
    # one report per observation completing the 4-pattern join with a value above 80
    assert (result["events"], result["rows"]) == (15, 15)
    assert result["correct"] is True, result
