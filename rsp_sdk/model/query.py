"""A continuous query, parsed: what every engine dialect renderer and the oracle start from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsp_sdk.model.profile import R2S

# Relative IRIs (RSP-QL examples name windows <w1>) are resolved against this base, in the
# window names and by both SPARQL parsers, unless the query declares its own BASE.
DEFAULT_BASE_IRI = "http://rsp-sdk.local/"


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
    SPARQL 1.1 that the oracle evaluates on each window:

    * RSP-QL with ``WINDOW <w> { … }`` blocks (``window_graphs`` true): each block became
      ``GRAPH <w> { … }``; the content of window ``w`` is the named graph ``<w>`` and the static
      ``FROM`` data is the default graph, so several windows and static data never mix.
    * Plain SPARQL (CSRBench, YABench, or RSP-QL without WINDOW blocks; ``window_graphs`` false):
      the default graph is the union of the window contents and the static data.

    The REGISTER and FROM NAMED WINDOW clauses are blanked out (not removed) in ``sparql``, so a
    line and column in ``sparql`` is the same line and column in ``text``.
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
    window_graphs: bool = Field(
        default=False, description="WINDOW blocks were rewritten to GRAPH <window> patterns"
    )
    first_t0_ms: int | None = Field(
        default=None,
        description="first candidate t0 the benchmark definition gives (CSRBench firstt0; "
        "YABench aligns its windows to multiples of the slide)",
    )
    report_hint: str | None = Field(
        default=None, description="report policy named by the benchmark definition (YABench)"
    )
    source: str | None = Field(default=None, description="file (and key) the query came from")
    warnings: list[str] = Field(
        default_factory=list,
        description="problems that do not stop parsing (e.g. pyoxigraph rejects the query)",
    )
    base_iri: str = Field(
        default=DEFAULT_BASE_IRI, description="base for relative IRIs in ``sparql``"
    )

    @model_validator(mode="after")
    def _check(self) -> QuerySpec:
        steps = {w.step_ms for w in self.windows}
        if len(steps) > 1:
            raise ValueError(
                "all windows of one query must share the STEP (reports happen at common instants)"
            )
        return self

    @property
    def slide_ms(self) -> int:
        return self.windows[0].step_ms

    @property
    def range_ms(self) -> int:
        """ω of the first window: the window whose scope drives report instants."""
        return self.windows[0].range_ms

    def with_window(self, range_ms: int, step_ms: int | None = None) -> QuerySpec:
        """The same query over windows of another size (e.g. CSRBench Q6 with 5 s, not 50 s)."""
        step = step_ms if step_ms is not None else range_ms
        wins = [w.model_copy(update={"range_ms": range_ms, "step_ms": step}) for w in self.windows]
        return self.model_copy(update={"windows": wins})
