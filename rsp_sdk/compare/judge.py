"""The one judging function: (expected table, engine output, profile) → verdict and metrics.

Every path that calls an engine right or wrong goes through ``judge_run``: ``rsp oracle check``,
``rsp csrbench`` (``rsp_sdk.csrbench.judge``), the matrix and any script. It applies the
CSRBench verdict over all candidate t0 and one rule on top of it: an engine that emitted
nothing where the oracle expects relations has ``no output`` — CSRBench's contiguous-part rule
alone would accept the empty sequence as a part of any expected output, so a crashed or silent
engine would pass. Then — if asked — YABench's per-window metrics against the t0 that matched (or,
when none did, the one that matched longest: the engine's most plausible start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

import pyarrow as pa
from pydantic import BaseModel, Field

from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.csrbench import (
    CsrbenchVerdict,
    Divergence,
    over_classes,
    splits_allowed,
    verdict,
)
from rsp_sdk.compare.relations import RelationStream, expected_relations, result_relations
from rsp_sdk.compare.vocab import Metrics as Metrics
from rsp_sdk.compare.yabench import Gracious, YabenchReport, window_metrics
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy
from rsp_sdk.util.gcpause import without_gc


class Verdict(StrEnum):
    """The state of one judged run (the vocabulary of `rsp csrbench` and the matrix)."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    NO_OUTPUT = "no output"
    NOT_JUDGED = "not judged"


class CheckResult(BaseModel):
    """What ``rsp oracle check --json`` prints."""

    query: str
    state: Verdict
    correct: bool = Field(description="state is correct")
    t0: int | None = Field(description="matching t0 in ms, None when no candidate matches")
    divergence: Divergence | None = None
    verdict: CsrbenchVerdict
    yabench: YabenchReport | None = None
    window_scale: float | None = Field(
        default=None,
        description="the query's windows were judged this many times as long: a wall-clock "
        "engine fed at that time scale (rsp_sdk.compare.wallclock)",
    )


def is_content_change(profile: Profile) -> bool:
    """Reports driven by content change (eager engines) rather than by window close."""
    return (
        ReportPolicy.CONTENT_CHANGE in profile.report
        and ReportPolicy.WINDOW_CLOSE not in profile.report
    )


def state_of(v: CsrbenchVerdict) -> Verdict:
    """The judging rule: correct, no output (nothing emitted where relations are expected), or
    incorrect. ``verdict`` already refuses to call an empty output correct when the expected
    output holds relations; this names that case."""
    if v.correct:
        return Verdict.CORRECT
    return Verdict.NO_OUTPUT if v.actual_relations == 0 else Verdict.INCORRECT


@without_gc
def judge_run(
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
    representative_of: Mapping[int, int] | None = None,
) -> CheckResult:
    """Judge ``actual`` (RESULT_SCHEMA) against ``expected`` (EXPECTED_SCHEMA, all t0s).

    ``query`` picks one query out of a multi-query run (the expected table is not filtered by
    it: its query name comes from the query file). ``t0`` forces the t0 of the per-window
    metrics. ``representative_of``: ``expected`` holds only the oracle's t0 class
    representatives (``rsp_sdk.oracle.plan_job(...).run_classes()``), and this maps every
    candidate to its class's representative; the verdict is stated for every candidate, and
    per-window metrics need a representative ``t0`` (the verdict's own always is one).
    """
    exp = expected_relations(expected, source="<expected>")
    act = result_relations(actual, query=query, source="<answers>")
    allow = splits_allowed(profile, r2s)
    v = verdict(exp, act, allow_split=allow)
    if representative_of is not None:
        v = over_classes(v, exp, representative_of)
    report = None
    if metrics is Metrics.YABENCH:
        chosen = t0 if t0 is not None else v.t0
        if chosen is None:
            chosen = v.divergence.t0_ms if v.divergence else min(exp, default=0)
        if exp and chosen not in exp:
            raise InputError(
                f"t0 {chosen} ms is not among the expected candidates",
                expected=", ".join(str(t) for t in sorted(exp)),
            )
        # no candidate expects a row: every one expects the empty stream, and each relation
        # the engine emitted is an unexpected one
        nothing = RelationStream(query=act.query, relations=[], t0_ms=chosen)
        report = window_metrics(
            exp.get(chosen, nothing),
            act,
            content_change=is_content_change(profile),
            allow_groups=allow,
            time_map=time_map,
            event_times=event_times,
            time_unit_ms=profile.time_unit_ms,
            gracious=gracious,
        )
    return check_result(v, report)


@without_gc
def judge_each(
    expected: pa.Table,
    actual: pa.Table,
    profile: Profile,
    r2s: R2S,
    *,
    queries: Sequence[str | None],
    representative_of: Mapping[int, int] | None = None,
) -> dict[str | None, CheckResult]:
    """``judge_run`` (CSRBench metrics) for each of ``queries`` in one output — the
    simultaneous instances of a query, all expecting the same relations — with the expected
    relations grouped once instead of once per instance."""
    exp = expected_relations(expected, source="<expected>")
    allow = splits_allowed(profile, r2s)
    out: dict[str | None, CheckResult] = {}
    for q in queries:
        act = result_relations(actual, query=q, source="<answers>")
        v = verdict(exp, act, allow_split=allow)
        if representative_of is not None:
            v = over_classes(v, exp, representative_of)
        out[q] = check_result(v)
    return out


def check_result(v: CsrbenchVerdict, yabench: YabenchReport | None = None) -> CheckResult:
    """A verdict (and YABench's metrics) as the judging rule states it (``state_of``)."""
    state = state_of(v)
    return CheckResult(
        query=v.query,
        state=state,
        correct=state is Verdict.CORRECT,
        t0=v.t0,
        divergence=v.divergence,
        verdict=v,
        yabench=yabench,
    )
