"""Shared fixtures: where the reference data lives, and how to run the real ``rsp`` CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("RSP_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()

# hypothesis: "ci" (loaded by default) keeps the property tests to a few minutes on 2 cores;
# `nox -s tests -- --hypothesis-profile=thorough` runs many more examples. Tests that set their
# own max_examples keep it. (test_oracle_reference: one example = a batch of 4 cases.)
# "ci" is derandomized, so a landing is judged on the same examples every time: exploring
# belongs to "thorough" (random, with the example database), whose finds become plain tests.
settings.register_profile("ci", max_examples=6, deadline=None, derandomize=True, database=None)
settings.register_profile("thorough", max_examples=150, deadline=None)
settings.load_profile("ci")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or $RSP_SHARED_DATA): the public benchmark files the tests read."""
    if not (SHARED_DATA / "README.md").exists():
        pytest.skip(f"reference data folder {SHARED_DATA} is missing (set RSP_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def rsp_exe() -> list[str]:
    """Command prefix running the installed ``rsp`` console script (falls back to python -m)."""
    exe = shutil.which("rsp", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-c", "from rsp_sdk.cli import main; main()"]


@pytest.fixture(scope="session")
def csrbench_stream(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CSRBench data (34 graphs, one per second) as a stream Parquet, imported once."""
    from rsp_sdk.model.stream import StreamMeta
    from rsp_sdk.streams.importers.csrbench import read_csrbench_folder
    from rsp_sdk.streams.io import write_stream

    table = read_csrbench_folder(
        shared_data / "dellaglio+csrbench-oracle" / "data", interval_ms=1000
    )
    out = tmp_path_factory.mktemp("csrbench") / "csrbench.parquet"
    write_stream(table, out, StreamMeta(producer="import:csrbench-ttl", time_unit_ms=1000))
    return out


def run_rsp(
    rsp_exe: list[str], *args: str | Path, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*rsp_exe, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"rsp {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def _java_tools_missing() -> str | None:
    missing = [t for t in ("java", "javac", "mvn") if shutil.which(t) is None]
    if missing:
        return (
            f"{', '.join(missing)} not installed: the JVM runtimes need a JDK 17 and Maven "
            "(Debian: apt-get install openjdk-17-jdk-headless maven)"
        )
    return None


@pytest.fixture(scope="session")
def toy_cache(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A provisioning cache holding the Java test engine, added the way users add engines."""
    reason = _java_tools_missing()
    if reason:
        pytest.skip(reason)
    from rsp_sdk.engine.provision import ProvisionCache
    from tests.fixtures.build import provision_toy_java

    cache = ProvisionCache(tmp_path_factory.mktemp("rsp-cache"))
    provision_toy_java(cache)
    return cache


@pytest.fixture(scope="session", autouse=True)
def no_container_left_behind():  # type: ignore[no-untyped-def]
    """After the whole session: no engine container this process started is still there, after
    every crash, timeout, kill and close the docker-runtime tests went through."""
    yield
    from rsp_sdk.images.client import docker_unavailable

    if docker_unavailable():
        return
    from rsp_sdk.images import docker_client

    client = docker_client()
    try:
        left = client.containers.list(
            all=True,
            filters={"label": ["org.rspsdk.runtime=docker", f"org.rspsdk.owner-pid={os.getpid()}"]},
        )
        assert not left, f"engine containers left behind: {[c.name for c in left]}"
    finally:
        client.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The 15 costliest test files (setup + call + teardown): CI's budget is spent per file, and
    --durations alone hides a file of many 5 s tests behind its single slowest one."""
    totals: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                path = report.nodeid.split("::", 1)[0]
                totals[path] = totals.get(path, 0.0) + report.duration
    if not totals:
        return
    terminalreporter.write_sep("=", "costliest test files (setup + call + teardown)")
    for path, seconds in sorted(totals.items(), key=lambda kv: -kv[1])[:15]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {path}")
