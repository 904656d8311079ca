"""A continuous query, parsed: what every engine dialect renderer and the oracle start from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.model.profile import R2S


class WindowSpec(BaseModel):
    """A time-based sliding window ``FROM NAMED WINDOW <name> ON <stream> [RANGE ω STEP β]``."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="window IRI (no angle brackets)")
    stream: str = Field(description="stream IRI (no angle brackets)")
    range_ms: int = Field(ge=1)
    step_ms: int = Field(ge=1)


class QuerySpec(BaseModel):
    """An RSP-QL query after parsing and template substitution.

    ``text`` is the query as written (parameters substituted); ``sparql`` is the body as plain
    SPARQL 1.1 over the union of the window contents and the static graphs — what the oracle
    evaluates on each window.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    r2s: R2S = R2S.RSTREAM
    text: str
    sparql: str
    prefixes: dict[str, str] = Field(default_factory=dict)
    variables: list[str] = Field(default_factory=list, description="projected variables")
    windows: list[WindowSpec] = Field(default_factory=list)
    static_graphs: list[str] = Field(default_factory=list)
    parameters: dict[str, str] = Field(default_factory=dict)
