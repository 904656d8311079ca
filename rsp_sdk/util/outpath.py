"""Output paths a command may write: checked before any work, written all-or-nothing.

Every writer renames a finished temporary file over its target (``util.atomic``). That is right
for a regular file and wrong for anything else: renaming over ``/dev/stdout`` or ``/dev/null``
replaces the device link with a plain file, renaming onto a directory fails after the work is
done, and a two-file output (stream + static data) could end with one file written. So a command
checks each target up front with ``check_output`` — a target that exists and is not a regular
file, a missing parent, a parent that is not a directory or cannot be written is refused with
one message naming the path (``InputError``, exit 2) — and writes several files with
``atomic_files``, which renames them only when all are complete and puts back what was there if
a rename fails. ``-`` (``STDOUT``) names standard output for the formats that can stream.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rsp_sdk.errors import InputError

STDOUT = "-"
"""``-o -``: write to standard output (formats that stream only)."""


def is_stdout(target: Path | str) -> bool:
    """True for the ``-`` that means standard output."""
    return str(target) == STDOUT


def check_output(target: Path | str, *, what: str = "a file path") -> Path:
    """The path to write for ``target``, or ``InputError`` if it cannot be written there.

    A symlink to a regular file is followed (the link stays a link); an existing target that is
    not a regular file — a directory, a device, a FIFO, a socket, a symlink to one — is refused,
    never renamed over. The parent must exist, be a directory and be writable.
    """
    path = Path(target)
    if is_stdout(path):
        raise InputError(
            "this output cannot be written to standard output", text=STDOUT, expected=what
        )
    path = regular_target(path, what=what)
    check_parent(path, what=what)
    return path


def regular_target(path: Path, *, what: str = "a file path") -> Path:
    """The file to replace for ``path``: ``path`` itself, or the regular file a symlink points
    to. ``InputError`` if it exists and is not a regular file (never renamed over)."""
    try:
        mode = path.stat().st_mode  # follows links, magic ones like /dev/stdout too
    except (FileNotFoundError, NotADirectoryError):  # nothing there (the parent is checked)
        if path.is_symlink():
            raise InputError(
                "the output is a dangling symbolic link", path=path, expected=what
            ) from None
        mode = None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise InputError("the output is an existing directory", path=path, expected=what)
        if not stat.S_ISREG(mode):
            raise InputError(
                f"the output exists and is not a regular file ({_kind(mode)}); "
                "it is never replaced (use -o - for standard output where the format allows)",
                path=path,
                expected=what,
            )
        if path.is_symlink():  # a link to a regular file: write the file, keep the link
            path = Path(os.path.realpath(path))
    return path


def check_new_dir(
    target: Path | str, *, what: str = "a new directory", must_be_empty: bool = False
) -> Path:
    """A directory the command will create: its parent must be a writable directory, and the
    target itself, if it exists, a directory (empty, with ``must_be_empty``)."""
    path = Path(target)
    if is_stdout(path):
        raise InputError("a directory output cannot be standard output", text=STDOUT)
    if path.exists() and not path.is_dir():
        raise InputError("the output exists and is not a directory", path=path, expected=what)
    if must_be_empty and path.is_dir() and any(path.iterdir()):
        raise InputError("the output directory exists and is not empty", path=path, expected=what)
    check_parent(path, what=what)
    return path


def check_parent(path: Path, *, what: str) -> None:
    """The parent of ``path`` exists, is a directory and can be written."""
    parent = path.parent
    existing = parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(
            f"{existing} is not a directory, so nothing can be written under it",
            path=path,
            expected=what,
        )
    if existing != parent:
        raise InputError(
            f"the output's folder {parent} does not exist (create it first)",
            path=path,
            expected=what,
        )
    try:  # a real probe: os.access says yes to root even where nothing can be created
        temp_sibling(path).unlink()
    except OSError as exc:
        raise InputError(
            f"nothing can be written in the output's folder {parent} ({exc.strerror})",
            path=path,
            expected=what,
        ) from None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


@contextlib.contextmanager
def atomic_files(*targets: Path) -> Iterator[list[Path]]:
    """Temporary siblings of ``targets``, renamed onto them together once the block succeeds.

    All-or-nothing: every target is checked first; an exception in the block removes every
    temporary file; a rename that fails after others succeeded puts the earlier targets back as
    they were (restored from a hard-linked backup, or removed if they did not exist).
    """
    paths = [check_output(t) for t in targets]
    if len({p.resolve() for p in paths}) != len(paths):
        raise InputError("two outputs name the same file", text=", ".join(map(str, targets)))
    tmps: list[Path] = []
    try:
        tmps += [temp_sibling(p) for p in paths]
        yield list(tmps)
        _commit(tmps, paths)
    finally:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)


def temp_sibling(target: Path) -> Path:
    """A new empty file next to ``target`` with the permissions a plain ``open`` would give;
    an OS refusal names ``target`` (what the user asked for), not the temporary name."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    os.close(fd)
    os.chmod(name, 0o666 & ~_umask())
    return Path(name)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _commit(tmps: list[Path], paths: list[Path]) -> None:
    done: list[tuple[Path, Path | None]] = []  # (target, backup of its old content)
    try:
        for tmp, path in zip(tmps, paths, strict=True):
            backup: Path | None = None
            if path.is_file():
                backup = path.with_name(f".{path.name}.{os.getpid()}.bak")
                backup.unlink(missing_ok=True)
                os.link(path, backup)
            try:
                os.replace(tmp, path)
            except BaseException:
                if backup is not None:
                    backup.unlink(missing_ok=True)
                raise
            done.append((path, backup))
    except BaseException:
        for path, backup in reversed(done):
            if backup is not None:
                os.replace(backup, path)
            else:
                path.unlink(missing_ok=True)
        raise
    finally:
        for _, backup in done:
            if backup is not None:
                backup.unlink(missing_ok=True)
