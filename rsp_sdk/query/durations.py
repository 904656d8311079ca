"""Window sizes and slides as written in queries: ISO-8601 durations and YABench shorthands.

RSP-QL writes ``RANGE PT10S STEP PT0.5S`` (ISO-8601 / xsd:duration, day-time part only: a window
of "one month" has no fixed length in milliseconds); YABench configs write ``60s``, ``5m``,
``500ms``. Both become integer milliseconds; a fraction of a millisecond is an error rather than
a silent rounding, because window borders decide which triples an oracle window holds.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_ISO = re.compile(
    r"P(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)
_SHORT = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<u>ms|s|m|min|h|d)")
_UNIT_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "min": 60_000, "s": 1000, "ms": 1}


class DurationError(ValueError):
    """A duration that cannot be a window size/slide in milliseconds."""


def _to_ms(total: Decimal, text: str) -> int:
    if total != total.to_integral_value():
        raise DurationError(f"{text!r} is not a whole number of milliseconds")
    if total <= 0:
        raise DurationError(f"{text!r} must be positive")
    return int(total)


def parse_iso_duration(text: str) -> int:
    """``PT10S`` → 10000, ``PT0.5S`` → 500, ``PT1M`` → 60000, ``P1DT2H`` → 93600000."""
    m = _ISO.fullmatch(text.strip())
    if not m or text.strip() in ("P", "PT") or text.strip().endswith("T"):
        raise DurationError(f"{text!r} is not an ISO-8601 day-time duration such as PT10S")
    parts = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000}
    total = Decimal(0)
    for key, factor in parts.items():
        if m.group(key) is not None:
            total += Decimal(m.group(key)) * factor
    return _to_ms(total, text)


def parse_short_duration(text: str) -> int:
    """YABench's ``60s``, ``5m``, ``500ms`` (and plain integers, read as milliseconds)."""
    t = text.strip()
    if t.isdigit():
        return _to_ms(Decimal(t), text)
    m = _SHORT.fullmatch(t)
    if not m:
        raise DurationError(f"{text!r} is not a duration such as 60s, 5m or 500ms")
    try:
        value = Decimal(m.group("n"))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise DurationError(str(exc)) from exc
    return _to_ms(value * _UNIT_MS[m.group("u")], text)


def parse_duration(text: str) -> int:
    """Either form: ISO-8601 when it starts with ``P``, the YABench shorthand otherwise."""
    t = text.strip()
    if t[:1].upper() == "P":
        return parse_iso_duration(t.upper())
    return parse_short_duration(t)
