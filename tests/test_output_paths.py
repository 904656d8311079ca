"""Bad output paths and destructive flags, walked over every command that writes.

Each command is given each kind of bad ``-o``: an existing directory (or, for commands that
create a directory, a non-empty one this tool did not write), a regular file where a directory
is expected, a missing parent folder, a FIFO (a special file that a rename would replace), and a
place nothing can be created in. Every one must end with exit 2, one message naming the path,
no traceback, and nothing new (or changed) on disk. ``--force`` deletes only a directory that
``rsp`` recognisably wrote.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.streams.io import read_stream
from rsp_sdk.util.outdir import MARKER, prepare_output_dir, write_marker
from rsp_sdk.util.outpath import atomic_files, check_output
from tests.conftest import run_rsp
from tests.oracle_support import rsp_main

QUERY = Path(__file__).resolve().parents[1] / "matrix" / "queries" / "csrbench" / "q1.rspql"

# /proc accepts no new entries, even from root (os.access would say yes: the tests run as root)
UNWRITABLE = Path("/proc")


class Workspace:
    """A folder holding each kind of bad target, and the inputs the commands read."""

    def __init__(self, root: Path, rsp_exe: list[str]) -> None:
        self.root = root
        self.existdir = root / "existdir"
        self.existdir.mkdir()
        (self.existdir / "keep.txt").write_text("not written by rsp\n")
        self.afile = root / "afile"
        self.afile.write_text("a plain file\n")
        self.fifo = root / "fifo"
        os.mkfifo(self.fifo)
        inputs = root / "inputs"
        inputs.mkdir()
        self.stream = inputs / "s.parquet"
        run_rsp(rsp_exe, "generate", "yabench", "-o", self.stream, "--duration", "600000")
        self.n3t = inputs / "s.n3t"
        self.n3t.write_text('<http://e/a> <http://e/p> <http://e/b> "0" .\n')

    def snapshot(self) -> dict[str, tuple[str, bytes | None]]:
        """Every path under the workspace with its kind and (for files) its content."""
        out: dict[str, tuple[str, bytes | None]] = {}
        for p in self.root.rglob("*"):
            rel = str(p.relative_to(self.root))
            if p.is_fifo():
                out[rel] = ("fifo", None)
            elif p.is_dir():
                out[rel] = ("dir", None)
            else:
                out[rel] = ("file", p.read_bytes())
        return out


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, rsp_exe: list[str]) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("outpaths"), rsp_exe)


Args = Callable[[Workspace, Path], list[str | Path]]

FILE_COMMANDS: dict[str, Args] = {
    "generate yabench": lambda w, o: ["generate", "yabench", "-o", o, "--duration", "1000"],
    "generate rooms": lambda w, o: ["generate", "rooms", "-o", o, "0: m1@r1"],
    "generate water": lambda w, o: ["generate", "water", "-o", o, "--messages", "10"],
    "generate social": lambda w, o: ["generate", "social", "-o", o, "--users", "10"],
    "stream import": lambda w, o: ["stream", "import", w.n3t, "-f", "n3t", "-o", o],
    "stream export n3t": lambda w, o: ["stream", "export", w.stream, "-f", "n3t", "-o", o],
    "stream export trig": lambda w, o: ["stream", "export", w.stream, "-f", "trig", "-o", o],
    "oracle expected": lambda w, o: [
        *("oracle", "expected", "-s", w.stream, "-q", QUERY, "-p", "csparql", "-o", o),
    ],
    "oracle check": lambda w, o: [
        *("oracle", "check", "-s", w.stream, "-q", QUERY, "-p", "csparql"),
        *("--answers", w.afile, "--metrics", "yabench", "-o", o),
    ],
}

DIR_COMMANDS: dict[str, Args] = {
    "run": lambda w, o: [
        *("run", "-e", "no-such-engine", "-r", "subprocess", "-q", QUERY, "-s", w.stream),
        *("-o", o),
    ],
    "csrbench": lambda w, o: ["csrbench", "-e", "no-such-engine", "-o", o],
}

Target = tuple[Callable[[Workspace], Path], str]  # the bad path, and what the message says

FILE_TARGETS: dict[str, Target] = {
    "existing directory": (lambda w: w.existdir, "is an existing directory"),
    "file as directory": (lambda w: w.afile / "out.parquet", "afile is not a directory"),
    "missing parent": (lambda w: w.root / "no-such-folder" / "out.parquet", "does not exist"),
    "fifo": (lambda w: w.fifo, "not a regular file (a FIFO)"),
    "unwritable folder": (
        lambda w: UNWRITABLE / "rsp-sdk-out.parquet",
        "nothing can be written in the output's folder /proc",
    ),
}

DIR_TARGETS: dict[str, Target] = {
    "non-empty directory": (lambda w: w.existdir, "not empty"),
    "existing file": (lambda w: w.afile, "exists and is not a directory"),
    "file as directory": (lambda w: w.afile / "out", "afile is not a directory"),
    "missing parent": (lambda w: w.root / "no-such-folder" / "out", "does not exist"),
    "fifo": (lambda w: w.fifo, "exists and is not a directory"),
    "unwritable folder": (
        lambda w: UNWRITABLE / "rsp-sdk-out",
        "nothing can be written in the output's folder /proc",
    ),
}

CASES = [
    pytest.param(args, target, why, id=f"{cmd} / {kind}")
    for commands, targets in ((FILE_COMMANDS, FILE_TARGETS), (DIR_COMMANDS, DIR_TARGETS))
    for cmd, args in commands.items()
    for kind, (target, why) in targets.items()
]


@pytest.mark.parametrize(("args", "target", "why"), CASES)
def test_bad_output_is_exit_2_with_one_message_and_nothing_left(
    ws: Workspace,
    capsys: pytest.CaptureFixture[str],
    args: Args,
    target: Callable[[Workspace], Path],
    why: str,
) -> None:
    out = target(ws)
    before = ws.snapshot()
    # through the console script's main in this process (57 cases: a Python start each cost
    # more than the check); its exit code and standard error are what a shell sees
    code, stderr = rsp_main(capsys, *args(ws, out), cwd=ws.root)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.startswith("error:")
    assert str(out) in stderr and why in stderr, stderr
    assert "no-such-engine" not in stderr  # refused before anything else was tried
    assert ws.snapshot() == before
    assert not (UNWRITABLE / "rsp-sdk-out.parquet").exists()


def test_export_to_standard_output_streams_and_special_files_stay(
    ws: Workspace, rsp_exe: list[str]
) -> None:
    text = run_rsp(rsp_exe, "stream", "export", ws.stream, "-f", "n3t", "-o", "-").stdout
    lines = text.splitlines()
    assert len(lines) == read_stream(ws.stream).num_rows and lines[0].endswith('"0" .')
    before = os.stat("/dev/null")
    proc = run_rsp(
        rsp_exe, "stream", "export", ws.stream, "-f", "n3t", "-o", "/dev/null", check=False
    )
    assert proc.returncode == 2 and "not a regular file (a character device)" in proc.stderr
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    # Parquet cannot stream: -o - is refused by name, nothing written
    proc = run_rsp(rsp_exe, "generate", "yabench", "-o", "-", check=False)
    assert proc.returncode == 2 and "standard output" in proc.stderr


def test_a_symlink_to_a_regular_file_is_followed_and_kept(
    tmp_path: Path, ws: Workspace, rsp_exe: list[str]
) -> None:
    real = tmp_path / "real.n3t"
    real.write_text("old\n")
    link = tmp_path / "link.n3t"
    link.symlink_to(real)
    run_rsp(rsp_exe, "stream", "export", ws.stream, "-f", "n3t", "-o", link)
    assert link.is_symlink()
    assert real.read_text().count("\n") == read_stream(ws.stream).num_rows


def test_two_file_output_is_all_or_nothing(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    a.write_text("old a")
    with pytest.raises(IsADirectoryError), atomic_files(a, b) as (ta, tb):
        ta.write_text("new a")
        tb.write_text("new b")
        b.mkdir()  # the second rename will now fail, after the first one succeeded
    assert a.read_text() == "old a"  # put back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "b.parquet"]
    with pytest.raises(RuntimeError), atomic_files(tmp_path / "c", tmp_path / "d") as (tc, _):
        tc.write_text("half")
        raise RuntimeError("generator failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "b.parquet"]
    with pytest.raises(InputError, match="same file"), atomic_files(tmp_path / "e", tmp_path / "e"):
        pass


def test_check_output_refuses_what_a_rename_would_destroy(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "to-fifo").symlink_to(tmp_path / "f")
    for name, why in (
        ("f", "a FIFO"),
        ("to-fifo", "a FIFO"),
        ("dangling", "dangling symbolic link"),
        (".", "existing directory"),
    ):
        with pytest.raises(InputError, match=why):
            check_output(tmp_path / name)
    assert check_output(tmp_path / "new.parquet") == tmp_path / "new.parquet"


def test_force_deletes_only_a_directory_rsp_wrote(tmp_path: Path, rsp_exe: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("years of work\n")
    write_marker(home, "csrbench")  # even a marked home directory is never deleted
    env = {**os.environ, "HOME": str(home), "COLUMNS": "400"}

    def csrbench(out: Path | str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*rsp_exe, "csrbench", "-e", "no-such-engine", "-o", str(out), "--force"],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=120,
        )

    proc = csrbench(home, tmp_path)
    assert proc.returncode == 2 and "home directory" in proc.stderr, proc.stderr
    work = tmp_path / "work"
    work.mkdir()
    write_marker(work, "csrbench")
    proc = csrbench(".", work)
    assert proc.returncode == 2 and "working directory" in proc.stderr, proc.stderr
    assert (work / MARKER).exists()
    assert (home / "thesis.tex").read_text() == "years of work\n"

    other = tmp_path / "results"
    other.mkdir()
    (other / "data.csv").write_text("1,2\n")
    proc = csrbench(other, tmp_path)
    assert proc.returncode == 2 and MARKER in proc.stderr, proc.stderr
    assert (other / "data.csv").exists()

    # a directory this tool prepared is replaced
    ours = prepare_output_dir(tmp_path / "ours", kind="csrbench", force=False)
    (ours / "csrbench.json").write_text("[]\n")
    with pytest.raises(InputError, match="not empty"):
        prepare_output_dir(ours, kind="csrbench", force=False)
    again = prepare_output_dir(ours, kind="csrbench", force=True)
    assert sorted(p.name for p in again.iterdir()) == [MARKER]
