"""SECRET operational semantics of an engine, as a typed Profile.

Two correct engines can answer the same continuous query differently because they *report* at
different moments, *tick* on different events, start their first window at a different t0, and
emit or suppress empty relations (Botan et al., SECRET, VLDB 2010; CSRBench). A Profile names
those choices so the oracle can compute what a given engine must output. Names follow the model
(and RSP4J's enums) so a reader who knows the papers finds each concept where its name says.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ReportPolicy(StrEnum):
    """When a window's content is evaluated and reported (combinable)."""

    WINDOW_CLOSE = "window_close"
    CONTENT_CHANGE = "content_change"
    NON_EMPTY_CONTENT = "non_empty_content"
    PERIODIC = "periodic"


class Tick(StrEnum):
    """What drives the engine to (re)consider its windows."""

    TUPLE_DRIVEN = "tuple_driven"
    TIME_DRIVEN = "time_driven"
    BATCH_DRIVEN = "batch_driven"


class R2S(StrEnum):
    """Relation-to-stream operator applied to the sequence of window results."""

    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"


class T0Policy(BaseModel):
    """Where the oracle looks for the (uncontrollable) opening of the first window.

    Candidates run from ``first_ms`` (or the query's / stream's first t0 when unset) in steps of
    ``step_ms`` (the stream's time unit when unset) across ``span``: one slide, as the SECRET model
    needs, or one window size, as the published CSRBench oracle enumerates.
    """

    model_config = ConfigDict(frozen=True)

    first_ms: int | None = None
    step_ms: int | None = Field(default=None, ge=1)
    span: str = Field(default="slide", pattern="^(slide|window)$")


class Profile(BaseModel):
    """The SECRET parameters of one engine (or of a hypothetical one, from TOML/JSON)."""

    model_config = ConfigDict(frozen=True)

    name: str
    report: frozenset[ReportPolicy]
    tick: Tick
    r2s: R2S | None = Field(
        default=None, description="R2S the engine applies; None = the one the query registers"
    )
    emits_empty_relations: bool
    time_unit_ms: int = Field(default=1000, ge=1)
    period_ms: int | None = Field(default=None, ge=1, description="for the periodic report")
    t0: T0Policy = Field(default_factory=T0Policy)

    @model_validator(mode="after")
    def _check(self) -> Profile:
        if not self.report:
            raise ValueError("a profile needs at least one report policy")
        if ReportPolicy.PERIODIC in self.report and self.period_ms is None:
            raise ValueError("the periodic report policy needs period_ms")
        return self
