"""Judging an engine that windows on its own wall clock when it was fed faster or slower.

CQELS and C-SPARQL 0.9 have no application time (no ``APP_TIME_INPUT``): a ``[RANGE 5s STEP
5s]`` window holds 5 s of *wall* time. Fed at time scale s (s application ms per wall ms) with
the stream's own spacing, those 5 wall seconds hold 5·s s of application time, and the window
closes every 5·s s of it. The oracle windows application time, so it judges such a run against
the same query with every window's RANGE and STEP multiplied by s: the windows the engine
actually applied to the stream. At a constant *rate* (triples/s) the map from application to
wall time follows the stream's density, so no single factor exists and the run is not judged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig, PacingMode


def window_scale(app_time_input: bool, feeder: FeederConfig | None) -> float | None:
    """The factor the oracle scales a query's windows by to judge this run, or None (judged as
    written: an application-time engine, or a wall-clock one fed in real time or at scale 1)."""
    if app_time_input or feeder is None or feeder.mode is not PacingMode.APP_TIME:
        return None
    if feeder.time_scale is None or feeder.time_scale == 1:
        return None
    return feeder.time_scale


def unjudgeable(app_time_input: bool, feeder: FeederConfig | None) -> str | None:
    """Why a run cannot be judged at all, or None: a wall-clock engine fed at a rate."""
    if app_time_input or feeder is None or feeder.mode is not PacingMode.APP_TIME:
        return None
    if feeder.rate is None:
        return None
    return (
        f"not judged: a wall-clock engine fed at {feeder.rate:g} triples/s windows wall "
        "seconds, and at a fixed rate how much application time a wall second holds follows "
        "the stream's density (feed it by time scale or in real time to judge it)"
    )


def scaled_windows(spec: QuerySpec, factor: float) -> QuerySpec:
    """``spec`` with every window's RANGE and STEP multiplied by ``factor`` (whole ms): the
    application-time windows of a wall-clock engine fed at time scale ``factor``. The query
    text stays as written; the oracle reads the windows from ``windows``."""
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


def recorded_window_scale(run_dir: Path) -> float | None:
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
    return window_scale(Feature.APP_TIME_INPUT.value in capabilities, feeder)


def judged_query(
    spec: QuerySpec, run_dir: Path, factor: float | None
) -> tuple[QuerySpec, float | None]:
    """(the query the oracle judges a run by, the window factor applied or None): ``factor``
    when given (1: the windows as written), else the one the run's ``config.json`` implies."""
    scale = recorded_window_scale(run_dir) if factor is None else factor
    if scale is None or scale == 1:
        return spec, None
    return scaled_windows(spec, scale), scale
