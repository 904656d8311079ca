"""Up-front checks that an engine can run at all, before any run starts.

An engine whose files are not provisioned, or a runtime that cannot carry its driver, would
otherwise show up as one "failed" row per query after minutes of work. Both are usage errors
the user fixes with one command, so commands that fan out over engines × runtimes × queries
(``rsp csrbench``, the matrix) call ``check_runnable`` first and stop with exit 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.errors import InputError


def check_runnable(adapter: Adapter, runtimes: Sequence[str] | None, cache: Any = None) -> None:
    """``InputError`` if ``adapter`` is not provisioned or a runtime cannot carry its driver."""
    from rsp_sdk.runtime import adapter_runtimes

    missing = adapter.missing_artifacts(cache)
    if missing:
        raise InputError(
            f"engine {adapter.name} is not provisioned: missing {', '.join(missing)}",
            expected=f"rsp engines add {adapter.name}",
        )
    able = adapter_runtimes(adapter)
    for runtime in runtimes or ():
        if runtime not in able:
            raise InputError(
                f"runtime {runtime} cannot carry {adapter.name}'s {adapter.driver_kind} driver",
                expected=f"one of: {', '.join(able)}",
            )
