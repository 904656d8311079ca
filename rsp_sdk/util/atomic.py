"""Atomic file output: nothing is ever half-written.

Every command that writes a file writes to a temporary sibling and renames it into place only
after the content is complete, so a crash, a parse error or Ctrl-C leaves either the old file or
no file — never a truncated Parquet file that a later step would misread.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: Path | str, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` on success.

    On any exception the temporary file (or directory) is removed and ``target`` is untouched.
    A file target that exists and is not a regular file (a device, a FIFO, a directory, a
    symlink to one) is refused with ``InputError`` before anything is written — renaming over
    it would replace ``/dev/null`` with a plain file; a symlink to a regular file is followed.
    Missing parent folders are created (library use; the CLI checks paths first with
    ``util.outpath.check_output``).
    """
    target = Path(target)
    if not directory and (target.exists() or target.is_symlink()):
        from rsp_sdk.util.outpath import regular_target

        target = regular_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    else:
        from rsp_sdk.util.outpath import temp_sibling

        tmp = temp_sibling(target)  # mode 0666 & ~umask, as a plain open() would give
    try:
        yield tmp
        if directory and target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise
