"""One call from (expected table, engine output, profile) to a verdict and per-window metrics.

``rsp oracle check`` and any script share this: the CSRBench verdict over all candidate t0,
then — if asked — YABench's per-window metrics against the t0 that matched (or, when none did,
the one that matched longest: the engine's most plausible start).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pydantic import BaseModel, Field

from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.csrbench import CsrbenchVerdict, Divergence, splits_allowed, verdict
from rsp_sdk.compare.relations import expected_relations, result_relations
from rsp_sdk.compare.vocab import Metrics as Metrics
from rsp_sdk.compare.yabench import Gracious, YabenchReport, window_metrics
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy


class CheckResult(BaseModel):
    """What ``rsp oracle check --json`` prints."""

    query: str
    correct: bool
    t0: int | None = Field(description="matching t0 in ms, None when no candidate matches")
    divergence: Divergence | None = None
    verdict: CsrbenchVerdict
    yabench: YabenchReport | None = None


def is_content_change(profile: Profile) -> bool:
    """Reports driven by content change (eager engines) rather than by window close."""
    return (
        ReportPolicy.CONTENT_CHANGE in profile.report
        and ReportPolicy.WINDOW_CLOSE not in profile.report
    )


def check(
    expected: pa.Table,
    actual: pa.Table,
    profile: Profile,
    r2s: R2S,
    *,
    query: str | None = None,
    metrics: Metrics = Metrics.CSRBENCH,
    t0: int | None = None,
    time_map: TimeMap | None = None,
    event_times: Sequence[int] | None = None,
    gracious: Gracious | None = None,
) -> CheckResult:
    """Judge ``actual`` (RESULT_SCHEMA) against ``expected`` (EXPECTED_SCHEMA, all t0s).

    ``query`` picks one query out of a multi-query run (the expected table is not filtered by
    it: its query name comes from the query file). ``t0`` forces the t0 of the per-window
    metrics.
    """
    exp = expected_relations(expected, source="<expected>")
    act = result_relations(actual, query=query, source="<answers>")
    allow = splits_allowed(profile, r2s)
    v = verdict(exp, act, allow_split=allow)
    report = None
    if metrics is Metrics.YABENCH:
        chosen = t0 if t0 is not None else v.t0
        if chosen is None:
            chosen = v.divergence.t0_ms if v.divergence else min(exp)
        if chosen not in exp:
            raise ValueError(f"t0 {chosen} ms is not among the expected candidates {sorted(exp)}")
        report = window_metrics(
            exp[chosen],
            act,
            content_change=is_content_change(profile),
            allow_groups=allow,
            time_map=time_map,
            event_times=event_times,
            time_unit_ms=profile.time_unit_ms,
            gracious=gracious,
        )
    return CheckResult(
        query=v.query,
        correct=v.correct,
        t0=v.t0,
        divergence=v.divergence,
        verdict=v,
        yabench=report,
    )
