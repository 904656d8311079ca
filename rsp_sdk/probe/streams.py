"""Probe streams: a few timestamped elements, one query, chosen so that two SECRET choices
give visibly different outputs.

Every element is one triple ``<…/e{id}> <…/p> "id"`` (``<…/q>`` for an element no query binds),
so each output row names the element it came from and an output relation reads as a set of
element ids. Windows are whole seconds (every engine dialect we drive can say ``2s``) and start
well after 0 (10 s and later), so "aligned to multiples of STEP from 0" and "anchored at the
first element" put window edges in different places.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from rsp_sdk.model.profile import R2S

NS = "http://rsp-sdk.org/probe/"
STREAM = f"{NS}stream"
MATCH = f"<{NS}p>"
NO_MATCH = f"<{NS}q>"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


class QueryKind(StrEnum):
    """The probe query: the elements' subjects (identity) or how many bind (COUNT(?s))."""

    SELECT = "select"
    COUNT = "count"
    PAIRS = "pairs"  # every two elements sharing a window (a self-join): windows under Istream


@dataclass(frozen=True)
class Element:
    id: int
    t: int
    matches: bool = True

    def triple(self) -> tuple[int, str, str, str]:
        pred = MATCH if self.matches else NO_MATCH
        return (self.t, f"<{NS}e{self.id}>", pred, f'"{self.id}"^^<{XSD_INTEGER}>')


@dataclass(frozen=True)
class ProbeStream:
    """One probe: elements in stream order, the window, the query, and where time ends."""

    name: str
    purpose: str
    range_ms: int
    step_ms: int
    elements: tuple[Element, ...]
    end_ms: int
    kind: QueryKind = QueryKind.SELECT
    r2s: R2S = R2S.RSTREAM
    notes: dict[str, int] = field(default_factory=dict)

    def rspql(self) -> str:
        proj = {QueryKind.COUNT: "(COUNT(?s) AS ?n)", QueryKind.PAIRS: "?s ?t"}.get(
            self.kind, "?s ?o"
        )
        pattern = f"?s {MATCH} ?o"
        if self.kind is QueryKind.PAIRS:
            pattern += f" . ?t {MATCH} ?u"
        return (
            f"REGISTER {self.r2s.value.upper()} <{NS}{self.name}> AS SELECT {proj}\n"
            f"FROM NAMED WINDOW <{NS}w> ON <{STREAM}> "
            f"[RANGE PT{self.range_ms // 1000}S STEP PT{self.step_ms // 1000}S]\n"
            f"WHERE {{ WINDOW <{NS}w> {{ {pattern} }} }}"
        )

    def times(self) -> dict[int, int]:
        return {e.id: e.t for e in self.elements}


def _elements(times: list[int], *, start_id: int = 1) -> tuple[Element, ...]:
    return tuple(Element(start_id + i, t) for i, t in enumerate(times))


GRID_FIRST = 11_250  # ≡ 1 250 (mod 2 000): first-element anchoring moves every edge
GRID_STEP = 250


def grid(r2s: R2S = R2S.RSTREAM, kind: QueryKind = QueryKind.SELECT) -> ProbeStream:
    """Tumbling 2 s windows, one element every 250 ms from 11.25 s: which elements share a
    relation shows where window edges lie (t0's phase), and whether time is application time.
    When every relation holds only the new element (Istream), the PAIRS variant (a self-join:
    each arrival pairs with every element sharing its window) or the COUNT(?s) variant (the
    count starts again at an edge) shows them."""
    times = [GRID_FIRST + i * GRID_STEP for i in range(21)]  # 11.25 s … 16.25 s
    return ProbeStream(
        "grid" if kind is QueryKind.SELECT else f"grid_{kind.value}",
        "window edges (t0 phase) and application time",
        2000,
        2000,
        _elements(times),
        end_ms=22_000,
        kind=kind,
        r2s=r2s,
        notes={"first": GRID_FIRST},
    )


def bounds(
    edge: int, r2s: R2S = R2S.RSTREAM, *, lead: int = 600, kind: QueryKind = QueryKind.SELECT
) -> ProbeStream:
    """Elements 1 ms before, on and after a window edge: the one on the edge goes with the
    earlier (right-closed windows) or the later ones (left-closed). ``lead``: how long before
    the edge the first element comes (RANGE for an engine anchoring windows at it)."""
    times = [edge - lead, edge - 1, edge, edge + 1, edge + 600, edge + 2600]
    return ProbeStream(
        "bounds",
        "window bounds: an element exactly on an edge",
        2000,
        2000,
        _elements(times),
        end_ms=edge + 8000,
        kind=kind,
        r2s=r2s,
        notes={"edge": edge},
    )


# offsets inside the window: two elements share a timestamp; the rest fall in different
# 10 ms / 100 ms / 1 s slots so a time-driven engine's unit shows in how it groups them
REPORT_OFFSETS = (201, 205, 205, 215, 260, 950, 1350)


def report(window_open: int, r2s: R2S = R2S.RSTREAM) -> ProbeStream:
    """One tumbling 2 s window with seven elements, then two windows with one element each:
    how many relations a window gives and what each holds (report policy, tick, unit)."""
    times = [window_open + d for d in REPORT_OFFSETS]
    times += [window_open + 2500, window_open + 4100]
    return ProbeStream(
        "report",
        "report policy, tick and time unit",
        2000,
        2000,
        _elements(times),
        end_ms=window_open + 9000,
        r2s=r2s,
        notes={"open": window_open},
    )


def sliding(window_open: int, r2s: R2S = R2S.RSTREAM) -> ProbeStream:
    """Sliding windows (2 s, step 1 s), two elements per step: each element lies in two
    windows, so Rstream repeats it, Istream reports it when it enters, Dstream when it leaves;
    a first relation holding only the first step's elements is a window opened before the data."""
    times = [window_open + 250 + 500 * i for i in range(6)]
    return ProbeStream(
        f"sliding_{r2s.value}",
        "R2S operator and partial first windows",
        2000,
        1000,
        _elements(times),
        end_ms=window_open + 9000,
        r2s=r2s,
        notes={"open": window_open},
    )


def empty(window_open: int, kind: QueryKind, r2s: R2S = R2S.RSTREAM) -> ProbeStream:
    """Tumbling 2 s windows: [o, o+2 s) holds one element the query does not bind, [o+2 s,
    o+4 s) nothing, [o+4 s, o+6 s) a binding element (the engine got past both)."""
    elems = (
        Element(1, window_open - 1500),
        Element(2, window_open + 500, matches=False),
        Element(3, window_open + 4500),
        Element(4, window_open + 6500),
    )
    return ProbeStream(
        f"empty_{kind.value}",
        "empty relations (data without bindings) and empty windows",
        2000,
        2000,
        elems,
        end_ms=window_open + 11_000,
        kind=kind,
        r2s=r2s,
        notes={"no_binding": window_open, "empty": window_open + 2000, "later": window_open + 4000},
    )
