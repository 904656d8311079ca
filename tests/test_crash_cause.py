"""A crash message's first line says why the engine died — tables and progress lines show only
that line, and real logs end in stack traces. Each case is a real process dying its own way."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from rsp_sdk.report.outcome import short_reason
from rsp_sdk.runtime._process import crashed, kill_tree, spawn

NODE_OOM = "const a = []; for (;;) a.push(new Array(1e4).fill(Math.random()));"
JAVA_OOM = """
public class Oom {
  public static void main(String[] args) {
    java.util.List<long[]> kept = new java.util.ArrayList<>();
    for (;;) kept.add(new long[1 << 16]);
  }
}
"""


def _first_line_of_crash(argv: list[str], tmp_path: Path) -> str:
    log = tmp_path / "engine.log"
    proc = spawn(argv, log_path=log, stdin_pipe=False)
    try:
        proc.wait(timeout=120)
        message = str(crashed("push", proc, log))
    finally:
        kill_tree(proc)
    assert "ends with:" in message, message  # the tail is still quoted after the cause
    head = message.splitlines()[0].split("; log ")[0]
    assert head in short_reason(message), message  # the cause fits in what a table shows
    return head


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (`node` on PATH)")
def test_node_out_of_heap_is_named_not_its_native_stack(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None
    first = _first_line_of_crash([node, "--max-old-space-size=16", "-e", NODE_OOM], tmp_path)
    assert "died (killed by SIGABRT): FATAL ERROR:" in first, first
    assert "JavaScript heap out of memory" in first, first


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK (`java` on PATH)")
def test_jvm_out_of_heap_is_named_not_its_frames(tmp_path: Path) -> None:
    java = shutil.which("java")
    assert java is not None
    (tmp_path / "Oom.java").write_text(JAVA_OOM)
    argv = [java, "-Xmx16m", str(tmp_path / "Oom.java")]
    first = _first_line_of_crash(argv, tmp_path)
    assert "died (exit code 1): " in first, first
    assert first.endswith("java.lang.OutOfMemoryError: Java heap space"), first


def test_python_traceback_names_its_last_line(tmp_path: Path) -> None:
    code = "def f():\n    raise ValueError('no such window')\nf()\n"
    first = _first_line_of_crash([sys.executable, "-c", code], tmp_path)
    assert first.endswith("died (exit code 1): ValueError: no such window"), first


def test_a_log_without_an_error_word_gives_its_last_line(tmp_path: Path) -> None:
    code = "import sys; print('loading'); print('gave up on the socket', file=sys.stderr)"
    first = _first_line_of_crash([sys.executable, "-c", code + "; sys.exit(3)"], tmp_path)
    assert first.endswith("died (exit code 3): gave up on the socket"), first
