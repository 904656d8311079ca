"""The fingerprint of an engine: one finding per SECRET field, each with its evidence.

A finding is either decided (a value, and the probe output that rules out the alternatives) or
undecided with the reason — the probes never guess. ``Fingerprint.differences`` compares the
decided findings with the profile the adapter declares.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.model.profile import Profile, ReportPolicy, T0Lead


class FieldName(StrEnum):
    """What the probes establish: the Profile's fields, plus window bounds and the clock."""

    CLOCK = "clock"
    T0 = "t0"
    T0_PHASE = "t0_phase"
    WINDOW_BOUNDS = "window_bounds"
    REPORT = "report"
    NON_EMPTY_CONTENT = "non_empty_content"
    TICK = "tick"
    TIME_UNIT = "time_unit_ms"
    R2S = "r2s"
    EMPTY_RELATIONS = "emits_empty_relations"


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    probe: str
    observed: str


class Finding(BaseModel):
    """One field: ``value`` (None = undecided), why, and what came out of which probe."""

    model_config = ConfigDict(frozen=True)

    field: FieldName
    value: str | None = None
    reason: str = ""
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.value is not None


def decided(field: FieldName, value: str, reason: str, *evidence: Evidence) -> Finding:
    return Finding(field=field, value=value, reason=reason, evidence=list(evidence))


def undecided(field: FieldName, reason: str, *evidence: Evidence) -> Finding:
    return Finding(field=field, value=None, reason=reason, evidence=list(evidence))


class ProbeRecord(BaseModel):
    """One probe as run: what it is for, its query, and its output in short."""

    model_config = ConfigDict(frozen=True)

    name: str
    purpose: str
    query: str
    output: str


class Difference(BaseModel):
    model_config = ConfigDict(frozen=True)

    field: FieldName
    declared: str
    inferred: str


def declared_values(profile: Profile, app_time: bool | None) -> dict[FieldName, str]:
    """The declared profile in the findings' vocabulary (fields it does not state are absent)."""
    triggers = sorted(p.value for p in profile.report if p is not ReportPolicy.NON_EMPTY_CONTENT)
    out = {
        FieldName.REPORT: "+".join(triggers),
        FieldName.NON_EMPTY_CONTENT: str(profile.non_empty).lower(),
        FieldName.TICK: profile.tick.value,
        FieldName.TIME_UNIT: str(profile.time_unit_ms),
        FieldName.R2S: _declared_r2s(profile),
        FieldName.EMPTY_RELATIONS: str(profile.emits_empty_relations).lower(),
        FieldName.T0: _declared_t0(profile),
        # the oracle's windows are [c − ω, c): what every profile implies
        FieldName.WINDOW_BOUNDS: "left-closed",
    }
    if app_time is not None:
        out[FieldName.CLOCK] = "application" if app_time else "wall"
    if profile.t0.first_ms == 0:
        out[FieldName.T0_PHASE] = "zero"
    return out


def _declared_r2s(profile: Profile) -> str:
    """An event-driven profile reports only what each element completed: on the probes'
    single-pattern queries that is exactly Istream's output, whatever R2S it names."""
    if profile.event_driven:
        return "istream"
    return profile.r2s.value if profile.r2s else "query"


def _declared_t0(profile: Profile) -> str:
    """``first_ms = 0`` (windows at multiples of STEP from 0, as rsp-js declares), span
    "window" (CSRBench's enumeration) and ``lead = range_minus_step`` (windows anchored at the
    first element opening ω − β before it, as rsp-rs declares) all have windows open before the
    first element; the default enumeration starts t0 at the first element."""
    t0 = profile.t0
    if t0.first_ms == 0 or t0.span == "window" or t0.lead == T0Lead.RANGE_MINUS_STEP:
        return "before-data"
    return "at-data"


class Fingerprint(BaseModel):
    """The probe's whole answer for one engine on one runtime."""

    engine: str
    runtime: str
    findings: dict[FieldName, Finding]
    declared: Profile
    declared_app_time: bool | None = None
    probes: list[ProbeRecord] = Field(default_factory=list)

    def value(self, name: FieldName) -> str | None:
        f = self.findings.get(name)
        return f.value if f else None

    @property
    def differences(self) -> list[Difference]:
        declared = declared_values(self.declared, self.declared_app_time)
        return [
            Difference(field=name, declared=declared[name], inferred=f.value)
            for name, f in self.findings.items()
            if f.value is not None and name in declared and declared[name] != f.value
        ]
