"""The CLI boundary's exit codes: a user's mistake (exit 2) never looks like our bug (exit 3).

Each case runs the real ``rsp`` entry point (``rsp_sdk.cli.main``) in a subprocess, with one extra
command that raises the exception under test from inside the command, as library code would.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import sys
import rsp_sdk.cli as cli
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile

def boom(kind: str) -> None:
    if kind == "value":
        raise ValueError("a bug deep in the library [x]")
    if kind == "key":
        {}["missing"]
    if kind == "input":
        raise InputError("bad file", path="q.rspql", line=3, expected="a window")
    Profile.model_validate({"name": "p"})  # kind == "validation": what the user gave

cli.app.command("boom")(boom)
sys.argv = ["rsp", "boom", sys.argv[-1]]
cli.main()
"""


def rsp_boom(kind: str, debug: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, kind],
        capture_output=True,
        text=True,
        env={**os.environ, "RSP_DEBUG": "1" if debug else ""},
        timeout=120,
    )


@pytest.mark.parametrize("kind", ["value", "key"])
def test_an_internal_failure_is_not_reported_as_bad_input(kind: str) -> None:
    proc = rsp_boom(kind)
    assert proc.returncode == 3, proc.stderr
    assert "internal error" in proc.stderr and "bug in rsp-sdk" in proc.stderr
    assert "RSP_DEBUG=1" in proc.stderr and "Traceback" not in proc.stderr
    if kind == "value":
        assert "ValueError: a bug deep in the library [x]" in proc.stderr


@pytest.mark.parametrize("kind", ["input", "validation"])
def test_bad_input_is_exit_2_without_traceback(kind: str) -> None:
    proc = rsp_boom(kind)
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr and "internal error" not in proc.stderr
    assert "Traceback" not in proc.stderr
    if kind == "input":
        assert "q.rspql:3: bad file; expected a window" in proc.stderr


def test_debug_shows_the_traceback_of_an_internal_failure() -> None:
    proc = rsp_boom("value", debug=True)
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "ValueError" in proc.stderr
