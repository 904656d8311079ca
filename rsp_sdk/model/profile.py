"""SECRET operational semantics of an engine, as a typed Profile.

Two correct engines can answer the same continuous query differently because they *report* at
different moments, *tick* on different events, start their first window at a different t0, and
emit or suppress empty relations (Botan et al., SECRET, VLDB 2010; CSRBench). A Profile names
those choices so the oracle can compute what a given engine must output. Names follow the model
(and RSP4J's enums) so a reader who knows the papers finds each concept where its name says.

Report strategies combine as a *conjunction*, as in SECRET and RSP4J (``ReportImpl`` reports only
when every strategy matches): ``window_close`` + ``non_empty_content`` reports a window when it
closes and only if it is not empty; ``content_change`` + ``periodic`` reports at the periodic
instants at which the content changed. ``non_empty_content`` is a condition, never a trigger on
its own, and ``window_close`` + ``content_change`` can never both hold for one report, so both
combinations are rejected with a message instead of silently producing nothing.

The precise window arithmetic the oracle applies to each strategy is written down in
``rsp_sdk.oracle.s2r``.
"""

from __future__ import annotations

import json
import tomllib
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsp_sdk.errors import InputError, validated

__all__ = [
    "BUILTIN_PROFILES",
    "R2S",
    "Profile",
    "ReportPolicy",
    "T0Lead",
    "T0Policy",
    "Tick",
    "load_profile",
]


class ReportPolicy(StrEnum):
    """When a window's content is evaluated and reported (combinable)."""

    WINDOW_CLOSE = "window_close"
    CONTENT_CHANGE = "content_change"
    NON_EMPTY_CONTENT = "non_empty_content"
    PERIODIC = "periodic"


class Tick(StrEnum):
    """What drives the engine to (re)consider its windows.

    It matters for content-change reports: a tuple-driven engine reports after every single
    element (triples sharing a timestamp give one report each, in stream order), a batch-driven
    one after all elements of one timestamp, a time-driven one at multiples of its time unit.
    """

    TUPLE_DRIVEN = "tuple_driven"
    TIME_DRIVEN = "time_driven"
    BATCH_DRIVEN = "batch_driven"


class R2S(StrEnum):
    """Relation-to-stream operator applied to the sequence of window results."""

    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"


class T0Lead(StrEnum):
    """How far before the first triple the data-derived first t0 candidate lies."""

    NONE = "none"
    RANGE_MINUS_STEP = "range_minus_step"


class T0Policy(BaseModel):
    """Where the oracle looks for the (uncontrollable) opening of the first window.

    Candidates run from ``first_ms`` (or the query's first t0, or else the stream's first
    timestamp moved back by ``lead``) in steps of ``step_ms`` (the stream's time unit when unset)
    across ``span``: one slide, as the SECRET model needs (``slide``: first ≤ t0 < first + β), or
    one window size inclusive, as the published CSRBench oracle enumerates (``window``: first ≤
    t0 ≤ first + ω). ``window`` also reproduces that oracle's placement of the first window-close
    scope: [t0, t0 + ω) when t0 < ω, else [t0 + β − ω, t0 + β) (its ``WindowOperator`` adds ω
    while the clock is below ω, then β).

    ``lead = range_minus_step`` states that an engine's windows may open before its data: a query
    registered before its stream starts has windows that already hold the first triple while
    they are partial, so t0 lies up to ω − β before the first triple (C-SPARQL reports those
    partial windows). The data-derived first candidate is then ⌊(t_min − (ω − β)) / step⌋ · step,
    and a fixed ``first_ms`` becomes ``first_ms − (ω − β)``: windows on a grid from ``first_ms``
    whose first closes at ``first_ms + β`` (rsp-js opens [β − ω, β) at registration).
    """

    model_config = ConfigDict(frozen=True)

    first_ms: int | None = None
    step_ms: int | None = Field(default=None, ge=1)
    span: str = Field(default="slide", pattern="^(slide|window)$")
    lead: T0Lead = Field(
        default=T0Lead.NONE,
        description="how far before the first triple the candidates start when neither the "
        "profile nor the query fixes the first t0: none, or range_minus_step (ω − β)",
    )


class Profile(BaseModel):
    """The SECRET parameters of one engine (or of a hypothetical one, from TOML/JSON)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    report: frozenset[ReportPolicy]
    tick: Tick
    r2s: R2S | None = Field(
        default=None, description="R2S the engine applies; None = the one the query registers"
    )
    emits_empty_relations: bool
    time_unit_ms: int = Field(default=1000, ge=1)
    period_ms: int | None = Field(default=None, ge=1, description="for the periodic report")
    t0: T0Policy = Field(default_factory=T0Policy)
    event_driven: bool = Field(
        default=False,
        description=(
            "each report carries only the solutions completed by the triggering element(s), "
            "as a bag (ETALIS derives every complex event once, when its last event arrives); "
            "needs content_change"
        ),
    )

    @model_validator(mode="after")
    def _check(self) -> Profile:
        if not self.report:
            raise ValueError("a profile needs at least one report policy")
        triggers = self.report - {ReportPolicy.NON_EMPTY_CONTENT}
        if not triggers:
            raise ValueError(
                "non_empty_content only filters other reports; combine it with window_close, "
                "content_change or periodic"
            )
        if {ReportPolicy.WINDOW_CLOSE, ReportPolicy.CONTENT_CHANGE} <= self.report:
            raise ValueError(
                "window_close and content_change combine as a conjunction that never holds; "
                "pick one of them"
            )
        if ReportPolicy.PERIODIC in self.report and self.period_ms is None:
            raise ValueError("the periodic report policy needs period_ms")
        if self.event_driven and ReportPolicy.CONTENT_CHANGE not in self.report:
            raise ValueError("event_driven reports need the content_change report policy")
        return self

    @property
    def non_empty(self) -> bool:
        return ReportPolicy.NON_EMPTY_CONTENT in self.report

    def r2s_for(self, query_r2s: R2S) -> R2S:
        """The R2S operator applied: the engine's own, or the query's when the engine obeys it."""
        return self.r2s if self.r2s is not None else query_r2s


# The profiles of the engines the project drives. ``csparql``, ``cqels`` and ``sparqlstream`` carry
# the values CSRBench published (the oracle's csparql/cqels/sparqlstream.properties) for the
# engines it ran on the wall clock, and enumerate t0 as that oracle does (span = window).
# ``csparql-0.9.7`` is C-SPARQL 0.9.7 as the csparql adapter drives it in application time: the
# same report policy, but its windows open before the data (lead ω − β, one slide of
# candidates), so `rsp oracle check --profile csparql-0.9.7` judges exactly as `rsp csrbench -e
# csparql` does. CQELS is eager: it processes each triple as it arrives, so its content-change
# reports are tuple-driven. JTALIS/ETALIS is event-driven: each element that completes a pattern
# yields the newly derived results, once; its query is registered before the stream starts, so
# its windows may open before the data too.
BUILTIN_PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            name="csparql",
            description="C-SPARQL 0.9: window close + non-empty content, time-driven, Rstream, "
            "emits empty relations (CSRBench)",
            report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
            tick=Tick.TIME_DRIVEN,
            r2s=R2S.RSTREAM,
            emits_empty_relations=True,
            time_unit_ms=1000,
            t0=T0Policy(span="window"),
        ),
        Profile(
            name="csparql-0.9.7",
            description="C-SPARQL 0.9.7 in application time (the csparql adapter): window close "
            "+ non-empty content, time-driven, Rstream, emits empty relations, windows open up "
            "to ω − β before the data",
            report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
            tick=Tick.TIME_DRIVEN,
            r2s=R2S.RSTREAM,
            emits_empty_relations=True,
            time_unit_ms=1000,
            t0=T0Policy(span="slide", lead=T0Lead.RANGE_MINUS_STEP),
        ),
        Profile(
            name="cqels",
            description="CQELS 1.x: content change, tuple-driven (eager), Istream, no empty "
            "relations (CSRBench)",
            report=frozenset({ReportPolicy.CONTENT_CHANGE, ReportPolicy.NON_EMPTY_CONTENT}),
            tick=Tick.TUPLE_DRIVEN,
            r2s=R2S.ISTREAM,
            emits_empty_relations=False,
            time_unit_ms=100,
            t0=T0Policy(span="window"),
        ),
        Profile(
            name="sparqlstream",
            description="SPARQLstream: window close + non-empty content, time-driven, the "
            "query's R/I/Dstream, no empty relations (CSRBench)",
            report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
            tick=Tick.TIME_DRIVEN,
            r2s=None,
            emits_empty_relations=False,
            time_unit_ms=100,
            t0=T0Policy(span="window"),
        ),
        Profile(
            name="jtalis",
            description="JTALIS/ETALIS: eager, event-driven content change, tuple-driven, "
            "Rstream of the new results, no empty relations",
            report=frozenset({ReportPolicy.CONTENT_CHANGE, ReportPolicy.NON_EMPTY_CONTENT}),
            tick=Tick.TUPLE_DRIVEN,
            r2s=R2S.RSTREAM,
            emits_empty_relations=False,
            time_unit_ms=1,
            t0=T0Policy(span="slide", lead=T0Lead.RANGE_MINUS_STEP),
            event_driven=True,
        ),
    )
}


def load_profile(spec: str | Path | Profile) -> Profile:
    """A built-in profile by name, or a profile from a TOML/JSON file (same fields as Profile)."""
    if isinstance(spec, Profile):
        return spec
    text = str(spec)
    if text in BUILTIN_PROFILES:
        return BUILTIN_PROFILES[text]
    path = Path(text)
    if not path.exists():
        from rsp_sdk.engine.registry import adapter_profiles  # adapters declare profiles too

        declared = adapter_profiles()
        if text in declared:
            return declared[text][1]
        names = sorted({*BUILTIN_PROFILES, *declared})
        raise InputError(
            f"unknown profile {text!r}",
            expected=f"one of {', '.join(names)} or a .toml/.json file",
        )
    raw = path.read_text(encoding="utf-8")
    try:
        data = json.loads(raw) if path.suffix.lower() == ".json" else tomllib.loads(raw)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(f"cannot parse the profile: {exc}", path=path, line=line) from exc
    if not isinstance(data, dict):
        raise InputError("a profile file must hold one table/object", path=path)
    data.setdefault("name", path.stem)
    return validated(
        Profile,
        data,
        path=path,
        what="profile",
        expected="the fields of rsp_sdk.model.profile.Profile",
    )
