"""Output directories a command may create, and replace only when it recognisably wrote them.

``rsp csrbench --force`` (and any future "replace the output" flag) deletes a whole tree. Given
``-o ~`` or ``-o .`` that would be a disaster, so a directory is only ever deleted when it holds
the marker file this module writes into every output directory it prepares, and never when it is
the working directory, an ancestor of it, the home directory or a file-system root.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rsp_sdk.errors import InputError
from rsp_sdk.util.outpath import check_new_dir

MARKER = ".rsp-sdk-output"
"""Name of the file that marks a directory as written by this tool."""


def is_marked(directory: Path) -> bool:
    """True when ``directory`` holds this tool's marker file (a regular file, not a link)."""
    marker = directory / MARKER
    return marker.is_file() and not marker.is_symlink()


def write_marker(directory: Path, kind: str) -> None:
    """Mark ``directory`` as an output of ``kind`` (e.g. ``csrbench``) written by this tool."""
    (directory / MARKER).write_text(
        json.dumps({"tool": "rsp-sdk", "kind": kind}) + "\n", encoding="utf-8"
    )


def _protected(path: Path) -> str | None:
    real = Path(os.path.realpath(path))
    if real == real.parent:
        return "a file-system root"
    if real == Path(os.path.realpath(Path.home())):
        return "the home directory"
    cwd = Path(os.path.realpath(Path.cwd()))
    if real == cwd or real in cwd.parents:
        return "the working directory or one of its parents"
    return None


def check_output_dir(target: Path, *, force: bool) -> Path:
    """Refuse an output directory that cannot be used, before any work; deletes nothing.

    A missing or empty directory is fine. A non-empty one needs ``force`` and may be replaced
    only if it is not protected (root, home, working directory) and carries this tool's marker:
    everything else — an unrelated folder, a folder without the marker — is refused with exit 2.
    """
    path = check_new_dir(target)
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise InputError(
                "the output directory exists and is not empty",
                path=path,
                expected="a new directory, or --force to replace one this tool wrote",
            )
        why = _protected(path)
        if why is not None:
            raise InputError(f"--force refuses to delete {why}", path=path)
        if not is_marked(path):
            raise InputError(
                f"--force deletes only a directory this tool wrote (it holds {MARKER}); "
                "this one does not, so it is left alone",
                path=path,
            )
    return path


def prepare_output_dir(target: Path, *, kind: str, force: bool) -> Path:
    """``check_output_dir``, then empty ``target`` (if ``force`` allowed it), create and mark it."""
    path = check_output_dir(target, force=force)
    if path.is_dir() and any(path.iterdir()):
        shutil.rmtree(path)
    path.mkdir(exist_ok=True)
    write_marker(path, kind)
    return path
