"""The pacing modes of a feeder, in a module of their own: the command line needs the names to
build its options, and the feeder itself (numpy, pyarrow) only when a run starts."""

from __future__ import annotations

from enum import StrEnum


class PacingMode(StrEnum):
    """How batches are released: scaled application time, real time, or as fast as possible."""

    APP_TIME = "app-time"
    REAL_TIME = "real-time"
    AFAP = "afap"
