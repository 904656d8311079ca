"""One ``rsp matrix run`` per results directory at a time.

Two runs on one RESULTS would both see a cell as not done, run it twice side by side (each
disturbing the other's timings) and race on ``cell.json``, the expected outputs and the
Parquet tables. The second run is refused with the first one's pid instead. The lock is an
OS file lock (``filelock``), so a killed run releases it with its process: nothing to clean
up by hand, no stale lock.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rsp_sdk.errors import InputError

LOCK = ".lock"
OWNER = ".lock.owner"  # who holds it: the lock file itself is truncated by every contender


@contextmanager
def results_lock(root: Path) -> Iterator[None]:
    """Hold ``root``'s lock for the block; ``InputError`` (exit 2) if another run holds it."""
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(root / LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise InputError(
            f"another rsp matrix run is writing these results ({_owner(root)})",
            path=root,
            expected="one run per results directory: wait for it to end, or pick another -o",
        ) from None
    try:
        owner = {"pid": os.getpid(), "host": socket.gethostname()}
        (root / OWNER).write_text(json.dumps(owner) + "\n", encoding="utf-8")
        yield
    finally:
        (root / OWNER).unlink(missing_ok=True)
        lock.release()


def _owner(root: Path) -> str:
    try:
        owner = json.loads((root / OWNER).read_text(encoding="utf-8"))
        return f"pid {owner['pid']} on {owner['host']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "its pid not yet recorded"
