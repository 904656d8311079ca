"""How large an engine's answer the harness reads at once.

A ``poll`` answer holds every result the engine buffered since the last one. When an engine
emits faster than the harness records (rsp-rs on CityBench Q5 at ten instances: ~3 M rows per
second of stream), the next answer is larger, the harness slower, the answer after larger
still: one line of JSON was parsed into Python objects at some 20× its size, and the matrix
process was OOM-killed at 24 GB with every later cell. Past the limit the answer is not read:
the verb fails as the engine's (``EngineError``: the cell is ``failed`` with this message),
the engine is killed, and the matrix goes on.
"""

from __future__ import annotations

import os

from rsp_sdk.errors import InputError
from rsp_sdk.runtime.base import EngineError

MAX_REPLY_BYTES = 256 << 20  # ~1 M result rows of JSON; parsed, a few GB


def max_reply_bytes() -> int:
    """``RSP_MAX_REPLY_BYTES`` or ``MAX_REPLY_BYTES``."""
    raw = os.environ.get("RSP_MAX_REPLY_BYTES")
    if raw is None:
        return MAX_REPLY_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise InputError(
            "RSP_MAX_REPLY_BYTES is not a whole number", text=raw, expected="bytes, e.g. 268435456"
        ) from None
    if value <= 0:
        raise InputError("RSP_MAX_REPLY_BYTES must be positive", text=raw, expected="bytes > 0")
    return value


def reply_too_large(verb: str, size: int | None, limit: int) -> EngineError:
    """The error of an answer past ``limit`` (``size`` None: known only to exceed it)."""
    got = f"{_bytes(size)}" if size is not None else f"more than {_bytes(limit)}"
    return EngineError(
        verb,
        f"the engine's answer to {verb} is {got}, past the {_bytes(limit)} the harness reads "
        "at once (RSP_MAX_REPLY_BYTES): it emits results faster than they are recorded; the "
        "engine was killed",
    )


def _bytes(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n:,} bytes"
