"""The parameters of the social-network generator (``rsp_sdk.streams.generators.social``), in a
module of their own: the command line builds its options from their defaults without loading
the generator (numpy, pyarrow)."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rsp_sdk.streams.generators import social_dicts as dicts

WEEK_MS = 7 * 24 * 3600 * 1000
STREAM_NAMES = ("poststream", "likedpoststream", "photostream", "likedphotostream", "gpsstream")


class SocialParams(BaseModel):
    """Size, time span, activity maxima, correlation probabilities and seed of a social network."""

    model_config = ConfigDict(frozen=True)

    users: int = Field(default=1000, ge=2, le=10_000_000)
    period_ms: int = Field(default=WEEK_MS, ge=1, description="length of the streams (ms)")
    start: datetime = Field(
        default=datetime(2010, 1, 1, tzinfo=UTC), description="wall-clock time of t_app = 0"
    )
    seed: int = Field(default=0, ge=0)
    max_posts_per_week: float = Field(default=25.0, ge=0)
    max_comments_per_week: float = Field(default=20.0, ge=0)
    max_likes_per_week: float = Field(default=50.0, ge=0)
    max_photos_per_week: float = Field(default=10.0, ge=0)
    max_gps_sessions_per_week: float = Field(default=10.0, ge=0)
    gps_users: float = Field(default=0.1, ge=0, le=1, description="share of users sharing GPS")
    max_user_tags: int = Field(default=10, ge=0, description="max users tagged on a photo")
    p_location: float = Field(default=0.45, ge=0, le=1, description="friendships by city")
    p_university: float = Field(default=0.25, ge=0, le=1, description="… by university")
    p_interest: float = Field(default=0.15, ge=0, le=1, description="… by shared interest")
    min_friends: int = Field(default=5, ge=1)
    max_friends: int = Field(default=500, ge=1)
    degree_exponent: float = Field(default=2.3, gt=1.0, le=10.0)
    activity_exponent: float = Field(default=1.2, gt=0.0, le=10.0)
    cities: int = Field(default=len(dicts.CITIES), ge=1, le=len(dicts.CITIES))
    universities_per_city: int = Field(default=3, ge=1, le=len(dicts.UNIVERSITY_PATTERNS))
    max_interests: int = Field(default=10, ge=1, le=len(dicts.INTERESTS))
    stream_prefix: str = "http://deri.org/"

    @model_validator(mode="after")
    def _consistent(self) -> SocialParams:
        total = self.p_location + self.p_university + self.p_interest
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"p_location + p_university + p_interest must be at most 1 (got {total:g}); "
                "the rest is the share of uncorrelated friendships"
            )
        if self.max_friends < self.min_friends:
            raise ValueError("max_friends must be at least min_friends")
        if self.users * self.period_ms >= 2**62:
            raise ValueError("users × period_ms is too large (must stay below 2^62)")
        if self.start.tzinfo is None:
            raise ValueError("start must carry a time zone, e.g. 2010-01-01T00:00:00Z")
        return self

    @property
    def stream_iris(self) -> list[str]:
        return [self.stream_prefix + name for name in STREAM_NAMES]
