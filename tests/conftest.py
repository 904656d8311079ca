"""Shared fixtures: where the reference data lives, and how to run the real ``rsp`` CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("RSP_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()


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
