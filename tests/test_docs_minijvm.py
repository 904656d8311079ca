"""The adapter tutorial's part (b): docs/examples/minijvm, a Java engine built with Maven, its
adapter installed as a third-party package, provisioned the way a user provisions an engine
(`rsp engines add minijvm minijvm-engine.jar` compiles its driver glue), then the example's own
conformance test file run on jpype and py4j, and its declared profile checked by the probe."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _java_tools_missing

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples" / "minijvm"


@pytest.fixture(scope="module")
def minijvm_env(tmp_path_factory: pytest.TempPathFactory, rsp_exe: list[str]) -> dict[str, str]:
    """The environment of a user who built, installed and provisioned minijvm: the package in
    a site folder of its own, the engine in a provisioning cache of its own (the bridge jars
    reused from the usual cache: building them is not what this tests)."""
    reason = _java_tools_missing()
    if reason:
        pytest.skip(reason)
    from rsp_sdk.runtime.bridge import bridge_classpath, run_maven

    root = tmp_path_factory.mktemp("minijvm")
    source, site = root / "minijvm", root / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "target", "*.egg-info"))
    run_maven(source / "engine", ["package"])  # offline first: a warm ~/.m2 needs no network
    jar = source / "engine" / "target" / "minijvm-engine.jar"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
    subprocess.run([*pip, str(source)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k != "RSP_ADAPTERS"}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
        "RSP_CACHE": str(root / "cache"),
        "RSP_BRIDGE_CLASSPATH": os.pathsep.join(map(str, bridge_classpath())),
        "COLUMNS": "200",
    }
    add = subprocess.run(
        [*rsp_exe, "engines", "add", "minijvm", str(jar)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert add.returncode == 0, add.stdout + add.stderr
    return env


def test_minijvm_passes_the_conformance_kit_on_jpype_and_py4j(
    minijvm_env: dict[str, str], tmp_path: Path
) -> None:
    tests = tmp_path / "tests"
    shutil.copytree(EXAMPLE / "tests", tests)  # outside the repository, as a user runs it
    pytest_ = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    proc = subprocess.run(
        [*pytest_, "--rootdir", str(tmp_path), str(tests)],
        env=minijvm_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    assert re.search(r"\b20 passed\b", proc.stdout), tail  # 10 kit tests × 2 runtimes, no skip


def test_minijvm_profile_is_what_the_probe_infers(
    minijvm_env: dict[str, str], rsp_exe: list[str]
) -> None:
    proc = subprocess.run(
        [*rsp_exe, "engines", "probe", "minijvm", "--runtime", "jpype", "--json"],
        env=minijvm_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["differences"] == [], data["differences"]
    assert data["findings"]["report"]["value"] == "window_close", data["findings"]["report"]
