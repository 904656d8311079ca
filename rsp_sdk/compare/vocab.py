"""The closed vocabularies of judging, in a module that imports nothing heavy.

The ``rsp`` command line builds its options from these enums at start-up; keeping them apart
from the comparison code (pyarrow, pandas, pyoxigraph) lets ``rsp --help`` start fast.
"""

from __future__ import annotations

from enum import StrEnum


class Metrics(StrEnum):
    """What ``rsp oracle check`` reports: the CSRBench verdict, or also YABench per window."""

    CSRBENCH = "csrbench"
    YABENCH = "yabench"


class TimestampClock(StrEnum):
    """Which clock a CSRBench answer's ``timestamp`` is on (the format does not say)."""

    APP = "app"  # application time in ms (C-SPARQL, SPARQLstream answers)
    SYS = "sys"  # system time in ms since some origin (e.g. CQELS wall-clock stamps)


class Partition(StrEnum):
    """How an engine's output sequence is cut into blocks."""

    RELATION = "relation"  # periodic engines: one block per execution (emitted relation)
    ELEMENT = "element"  # eager engines: one block per output element
