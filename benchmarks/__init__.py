"""Speed benchmarks (``nox -s bench``): numbers and ratios are printed, never asserted.

Each ``bench_*.py`` module registers functions with ``@bench``; a function returns result rows.
Where a peer or a limit exists, the row carries the ratio measured in the same run, because
absolute numbers on shared 2-core machines are noisy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Result:
    name: str
    value: float
    unit: str
    target: str = ""
    ratio: float | None = None  # value relative to the target/peer (> 1 is better)
    note: str = ""


BenchFn = Callable[[], list[Result]]
REGISTRY: dict[str, BenchFn] = {}


def bench(name: str) -> Callable[[BenchFn], BenchFn]:
    def register(fn: BenchFn) -> BenchFn:
        REGISTRY[name] = fn
        return fn

    return register
