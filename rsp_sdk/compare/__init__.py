"""Comparisons of engine outputs with the oracle and with each other.

* **CSRBench verdict** (``judge_run``, ``check_run``): correct iff, for some candidate t0, the
  output is a contiguous run of the expected relations; otherwise the first divergence.
* **YABench per-window metrics** (``Metrics.YABENCH``): bag precision/recall, delay on the
  system clock, gracious mode.
* **LSBench mismatch** (``mismatch``, ``comparability``): how much of one engine's output
  another does not produce, in order, without an oracle.

Outputs are RESULT_SCHEMA tables (``load_answers`` reads run directories, outputs Parquet and
CSRBench answer JSON into one). ``check_run`` is the one call from a run directory to a verdict.
The names below load on first use (PEP 562): the comparison code needs pyarrow, pandas and
pyoxigraph, which the command line loads only when it judges.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rsp_sdk.compare.answers import load_answers, read_pushed
    from rsp_sdk.compare.check import check_run, run_profile
    from rsp_sdk.compare.clock import TimeMap
    from rsp_sdk.compare.judge import CheckResult, Verdict, judge_run
    from rsp_sdk.compare.lsbench import comparability, mismatch
    from rsp_sdk.compare.vocab import Metrics, TimestampClock
    from rsp_sdk.compare.yabench import YabenchReport

__all__ = [
    "CheckResult",
    "Metrics",
    "TimeMap",
    "TimestampClock",
    "Verdict",
    "YabenchReport",
    "check_run",
    "comparability",
    "judge_run",
    "load_answers",
    "mismatch",
    "read_pushed",
    "run_profile",
]

_HOME = {
    "load_answers": "answers",
    "read_pushed": "answers",
    "check_run": "check",
    "run_profile": "check",
    "TimeMap": "clock",
    "CheckResult": "judge",
    "Verdict": "judge",
    "judge_run": "judge",
    "comparability": "lsbench",
    "mismatch": "lsbench",
    "Metrics": "vocab",
    "TimestampClock": "vocab",
    "YabenchReport": "yabench",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"rsp_sdk.compare.{_HOME[name]}"), name)
