"""The parameters of the water-network generator (``rsp_sdk.streams.generators.water``), in a
module of their own: the command line builds its options from their defaults without loading
the generator (numpy, pyarrow)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

EX = "http://myexample.org/"


class WaterParams(BaseModel):
    """Ren et al. 2016 workload: sensors, stream length, tags per observation, rate, seed."""

    model_config = ConfigDict(frozen=True)

    sensors: int = Field(default=50, ge=2, description="sensors in the static data")
    messages: int | None = Field(
        default=None, ge=1, description="messages per stream (default 10 000 unless duration_ms)"
    )
    duration_ms: int | None = Field(
        default=None, ge=1, description="stream length instead of a message count"
    )
    rate: int = Field(default=1000, ge=1, description="triples per second in each stream")
    tags: int = Field(default=3, ge=1, le=1000, description="tags per observation")
    chlorine_every: int = Field(
        default=50, ge=2, description="message c is a chlorine observation iff c % this == 0"
    )
    streams: int = Field(default=1, ge=1, le=1000, description="parallel streams, same content")
    sectors: int | None = Field(
        default=None, ge=1, description="sectors to spread sensors over (default: one per sensor)"
    )
    linked_observations: int | None = Field(
        default=None,
        ge=0,
        description="observations whose ex:isProducedBy link is in the static data (default all)",
    )
    seed: int = Field(default=0, ge=0)
    namespace: str = EX
    stream: str = EX + "stream"

    @model_validator(mode="after")
    def _length(self) -> WaterParams:
        if self.messages is not None and self.duration_ms is not None:
            raise ValueError("give either messages or duration_ms, not both")
        return self

    @property
    def message_count(self) -> int:
        """Messages per stream: as given, or those stamped before ``duration_ms``."""
        if self.duration_ms is not None:
            # t_c < D  <=>  (c - 1)(1 + tags)·1000 < D·rate, so c - 1 < D·rate / ((1 + tags)·1000)
            return max(1, -(-(self.duration_ms * self.rate) // ((1 + self.tags) * 1000)))
        return self.messages if self.messages is not None else 10_000

    @property
    def stream_iris(self) -> list[str]:
        if self.streams == 1:
            return [self.stream]
        return [f"{self.stream}{k}" for k in range(1, self.streams + 1)]
