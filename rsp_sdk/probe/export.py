"""The inferred profile as a ``Profile`` and as a TOML file the oracle loads.

Decided fields give the profile's values; an undecided field keeps the adapter's declared value,
and the file says so in a comment next to it (with the reason), so nobody mistakes a declared
value for an observed one. Findings the Profile cannot express (window bounds, clock, t0 phase)
are written as comments.
"""

from __future__ import annotations

import json
from pathlib import Path

from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Lead, T0Policy, Tick
from rsp_sdk.probe.model import FieldName, Finding, Fingerprint
from rsp_sdk.util.atomic import atomic_path


def _report(fp: Fingerprint) -> tuple[frozenset[ReportPolicy], int | None]:
    declared = fp.declared
    trigger = fp.value(FieldName.REPORT)
    non_empty = fp.value(FieldName.NON_EMPTY_CONTENT)
    policies: set[ReportPolicy] = {
        p for p in declared.report if p is not ReportPolicy.NON_EMPTY_CONTENT
    }
    period = declared.period_ms
    if trigger is not None:
        name, _, every = trigger.partition(":")
        policies = {ReportPolicy(name)}
        if every:
            period = int(every)
    ne = declared.non_empty if non_empty is None else non_empty == "true"
    if ne:
        policies.add(ReportPolicy.NON_EMPTY_CONTENT)
    return frozenset(policies), period


def inferred_profile(fp: Fingerprint) -> Profile:
    """The engine's profile as observed (declared values where the probes could not decide)."""
    d = fp.declared
    report, period = _report(fp)
    tick = fp.value(FieldName.TICK)
    unit = fp.value(FieldName.TIME_UNIT)
    r2s = fp.value(FieldName.R2S)
    empty = fp.value(FieldName.EMPTY_RELATIONS)
    return Profile(
        name=f"{fp.engine}-probed",
        description=f"inferred by rsp engines probe from {fp.engine} on {fp.runtime}",
        report=report,
        period_ms=period,
        tick=Tick(tick) if tick else d.tick,
        r2s=_r2s(r2s, d),
        emits_empty_relations=d.emits_empty_relations if empty is None else empty == "true",
        time_unit_ms=int(unit) if unit else d.time_unit_ms,
        t0=_t0(fp),
        event_driven=d.event_driven and ReportPolicy.CONTENT_CHANGE in report,
    )


def _r2s(found: str | None, declared: Profile) -> R2S | None:
    """An event-driven engine seen as Istream keeps its declared R2S: ``event_driven`` already
    says each report holds only the new results (``declared_values``)."""
    if found is None or (declared.event_driven and found == "istream"):
        return declared.r2s
    return None if found == "query" else R2S(found)


def _t0(fp: Fingerprint) -> T0Policy:
    """Windows on the grid of STEP from 0 that open before the data → ``first_ms = 0`` with the
    ω − β lead: they close at multiples of STEP and the first ones are partial (as rsp-js
    declares); windows anchored at the first element → the default enumeration (from the first
    element); anything else keeps the declared policy."""
    span, phase = fp.value(FieldName.T0), fp.value(FieldName.T0_PHASE)
    if span == "before-data" and phase == "zero":
        return T0Policy(first_ms=0, lead=T0Lead.RANGE_MINUS_STEP)
    if span == "at-data" and phase == "first-element":
        return T0Policy()
    return fp.declared.t0


_NOT_IN_PROFILE = (FieldName.CLOCK, FieldName.T0_PHASE, FieldName.WINDOW_BOUNDS)


def _comment(f: Finding) -> str:
    if f.decided:
        what = f"observed: {f.value}"
    elif f.field in _NOT_IN_PROFILE:
        what = "undecided (no profile field)"
    else:
        what = "undecided, declared value kept"
    return f"# {f.field.value}: {what} — {f.reason}".replace("\n", " ")


def profile_toml(fp: Fingerprint) -> str:
    """TOML for ``load_profile``: the profile's fields, each finding as a comment above."""
    p = inferred_profile(fp)
    lines = [f"# SECRET profile of {fp.engine} ({fp.runtime}), inferred by `rsp engines probe`."]
    lines += [_comment(f) for f in fp.findings.values()]
    data = p.model_dump(mode="json", exclude_none=True)
    t0 = data.pop("t0")
    for key, value in data.items():
        lines.append(f"{key} = {json.dumps(sorted(value) if key == 'report' else value)}")
    lines.append("")
    lines.append("[t0]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in t0.items()]
    return "\n".join(lines) + "\n"


def write_profile(fp: Fingerprint, path: Path) -> Path:
    text = profile_toml(fp)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
