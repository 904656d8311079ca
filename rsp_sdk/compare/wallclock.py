"""Judging an engine that windows on its own wall clock when it was fed faster or slower.

CQELS and C-SPARQL 0.9 have no application time (no ``APP_TIME_INPUT``): a ``[RANGE 5s STEP
5s]`` window holds 5 s of *wall* time. The feeder replays the stream's timeline linearly, s
application ms per wall ms — a time scale s, or a rate r as the scale that gives the stream
that mean rate (``rsp_sdk.run.feeder.app_speed``) — so those 5 wall seconds hold 5·s s of
application time, and the window closes every 5·s s of it. The oracle windows application
time, so it judges such a run against the same query with every window's RANGE and STEP
multiplied by s: the windows the engine actually applied to the stream. Streams replayed at
different speeds have no one factor; such a run is not judged.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.errors import InputError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig, PacingMode, app_speed


class Unjudgeable(InputError):
    """No one window factor fits the run: its streams were replayed at different speeds."""


def wall_clock_paced(app_time_input: bool, feeder: FeederConfig | None) -> bool:
    """A wall-clock engine whose feeder replays the timeline at a chosen speed."""
    return not app_time_input and feeder is not None and feeder.mode is PacingMode.APP_TIME


def window_scale(
    app_time_input: bool, feeder: FeederConfig | None, timeline: pa.Table
) -> float | None:
    """The factor the oracle scales a query's windows by to judge this run, or None: judged as
    written (an application-time engine, real time or speed 1, afap). ``timeline``: the
    stream's ``t_app_ms`` and ``stream`` columns. ``Unjudgeable`` when no factor fits."""
    if not wall_clock_paced(app_time_input, feeder):
        return None
    assert feeder is not None
    speed = app_speed(timeline, feeder)
    if speed is None:
        raise Unjudgeable(
            "a wall-clock engine fed streams at different speeds: its wall seconds hold a "
            "different span of each stream's application time, so no windows fit them all",
            expected="one rate or time scale for every stream",
        )
    return None if speed == 1 else speed


@functools.lru_cache(maxsize=8)
def stream_timeline(path: Path) -> pa.Table:
    """A stream file's ``t_app_ms`` and ``stream`` columns (what the feeder's speed needs)."""
    from rsp_sdk.streams.io import read_stream

    return read_stream(path, columns=["t_app_ms", "stream"])


def scaled_windows(spec: QuerySpec, factor: float) -> QuerySpec:
    """``spec`` with every window's RANGE and STEP multiplied by ``factor`` (whole ms): the
    application-time windows of a wall-clock engine fed at speed ``factor``. The query text
    stays as written; the oracle reads the windows from ``windows``."""
    windows = [
        w.model_copy(
            update={
                "range_ms": max(1, round(w.range_ms * factor)),
                "step_ms": max(1, round(w.step_ms * factor)),
            }
        )
        for w in spec.windows
    ]
    return spec.model_copy(update={"windows": windows})


def recorded_window_scale(run_dir: Path, timeline: pa.Table) -> float | None:
    """The factor for a run directory written by ``rsp run``, from its ``config.json`` (the
    engine's capabilities and the feeder it ran with); None when it has none or needs none."""
    config = run_dir / "config.json"
    if not run_dir.is_dir() or not config.is_file():
        return None
    try:
        doc: dict[str, Any] = json.loads(config.read_text(encoding="utf-8"))
        capabilities = doc["engine"]["capabilities"]
        feeder = FeederConfig.model_validate(doc["feeder"])
    except (ValueError, KeyError, TypeError):
        return None
    return window_scale(Feature.APP_TIME_INPUT.value in capabilities, feeder, timeline)


def judged_query(
    spec: QuerySpec, run_dir: Path, timeline: pa.Table, factor: float | None
) -> tuple[QuerySpec, float | None]:
    """(the query the oracle judges a run by, the window factor applied or None): ``factor``
    when given (1: the windows as written), else the one the run's ``config.json`` implies."""
    scale = recorded_window_scale(run_dir, timeline) if factor is None else factor
    if scale is None or scale == 1:
        return spec, None
    return scaled_windows(spec, scale), scale
