"""The inferred profile as a ``Profile`` and as a TOML file the oracle loads.

Decided fields give the profile's values; an undecided field keeps the adapter's declared value,
and the file says so in a comment next to it (with the reason), so nobody mistakes a declared
value for an observed one. Findings the Profile cannot express (window bounds, clock, t0 phase)
are written as comments.
"""

from __future__ import annotations

import json
from pathlib import Path

from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Policy, Tick
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
    span = fp.value(FieldName.T0)
    return Profile(
        name=f"{fp.engine}-probed",
        description=f"inferred by rsp engines probe from {fp.engine} on {fp.runtime}",
        report=report,
        period_ms=period,
        tick=Tick(tick) if tick else d.tick,
        r2s=d.r2s if r2s is None else (None if r2s == "query" else R2S(r2s)),
        emits_empty_relations=d.emits_empty_relations if empty is None else empty == "true",
        time_unit_ms=int(unit) if unit else d.time_unit_ms,
        t0=_t0(span, d.t0),
        event_driven=d.event_driven and ReportPolicy.CONTENT_CHANGE in report,
    )


def _t0(found: str | None, declared: T0Policy) -> T0Policy:
    """ "before-data" → CSRBench's enumeration (span = window), as the C-SPARQL profile says it;
    the partial first windows themselves come from the query's ``first_t0_ms`` (as ``rsp
    csrbench`` sets it), which a profile cannot hold."""
    if found is None:
        return declared
    return T0Policy(span="window") if found == "before-data" else T0Policy()


def _comment(f: Finding) -> str:
    what = f"observed: {f.value}" if f.decided else "undecided, declared value kept"
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
