"""Where windows lie: edges and t0's phase (grid probe), bounds (bounds probe), and whether the
first windows open before the data (sliding probe).

On integer milliseconds ``[c − ω, c)`` and ``(c − ω − 1, c − 1]`` are the same windows, so
"left- or right-closed" only means something against a *nominal* edge: a multiple of STEP from
0, or the first element's time. The grid probe finds the edge to within 250 ms; when one end of
that interval is nominal, the bounds probe puts elements 1 ms before, on and after it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from rsp_sdk.probe.driver import Observation
from rsp_sdk.probe.model import Evidence, FieldName, Finding, decided, undecided
from rsp_sdk.probe.streams import QueryKind


@dataclass(frozen=True)
class Split:
    """Two consecutive (reported) elements that never share a relation: an edge lies between."""

    before: int
    after: int


def splits(obs: Observation) -> list[Split] | None:
    """Edges between consecutive reported elements; None when no relation holds two elements
    (then co-occurrence says nothing about windows)."""
    if not any(len(r.ids) > 1 for r in obs.relations):
        return None
    times = obs.probe.times()
    present = [e.id for e in obs.probe.elements if obs.containing(e.id)]
    return [
        Split(times[a], times[b]) for a, b in itertools.pairwise(present) if not obs.together(a, b)
    ]


def count_splits(obs: Observation) -> tuple[list[Split] | None, str]:
    """Edges from a COUNT(?s) grid under per-element reports: one count per element, starting
    again (not growing) after an edge. Also says when the count stops changing instead (a
    window sliding with every element: no STEP edge exists)."""
    counts = [r.count for r in obs.relations]
    n = len(obs.probe.elements)
    if not counts or None in counts:
        return None, "no count came out"
    if 0 in counts:
        return None, (
            "COUNT answers 0 although every element binds the pattern: the engine's count "
            "cannot show windows"
        )
    if len(counts) == n:
        times = [e.t for e in obs.probe.elements]
        found = [
            Split(times[k - 1], times[k])
            for k in range(1, n)
            if (counts[k] or 0) <= (counts[k - 1] or 0)
        ]
        return found, f"one count per element: {counts}"
    if counts == list(range(1, len(counts) + 1)):
        return None, (
            f"the count grows 1..{len(counts)} and then never changes although {n} elements "
            f"came every {GRID_STEP_MS} ms: the window slides with each element (RANGE holds "
            f"{len(counts)}), it has no STEP edges"
        )
    return None, f"{len(counts)} counts for {n} elements: {counts}"


GRID_STEP_MS = 250


def _evidence(obs: Observation) -> Evidence:
    return Evidence(probe=obs.probe.name, observed=obs.summary())


def infer_phase(
    grid: Observation, counted: Observation | None = None
) -> tuple[Finding, int | None]:
    """t0's phase from the grid probe (or its COUNT(?s) variant when relations hold single
    elements), and the nominal edge for the bounds probe (if any)."""
    ev = _evidence(grid)
    if not grid.ok or not grid.relations:
        return undecided(FieldName.T0_PHASE, "the grid probe gave no relation", ev), None
    found = splits(grid)
    if found is None and counted is not None and counted.ok:
        found, how = count_splits(counted)
        cev = Evidence(probe=counted.probe.name, observed=f"{counted.summary(21)} → {how}")
        if found is None:
            return undecided(
                FieldName.T0_PHASE, "relations hold single elements, and " + how, ev, cev
            ), None
        grid, ev = counted, cev
    if found is None:
        return undecided(
            FieldName.T0_PHASE,
            "no relation holds two elements (Istream-like or per-element output), so "
            "relations do not show where windows end",
            ev,
        ), None
    step = grid.probe.step_ms
    gaps = {b.after - a.after for a, b in itertools.pairwise(found)}
    if not found:
        return undecided(
            FieldName.T0_PHASE,
            "every element shares a relation with the one before it: no edge between any two "
            f"elements {GRID_STEP_MS} ms apart (a window sliding with each element?)",
            ev,
        ), None
    if gaps - {step}:
        return undecided(
            FieldName.T0_PHASE,
            f"edges do not repeat every STEP ({step} ms): "
            + ", ".join(f"({s.before}, {s.after}]" for s in found),
            ev,
        ), None
    s = found[0]
    first = grid.probe.notes["first"]
    lo, hi = s.before % step, s.after % step
    where = f"an edge lies in ({s.before}, {s.after}] ms, every {step} ms"
    for end, edge in ((hi, s.after), (lo, s.before)):
        if end == 0:
            return decided(FieldName.T0_PHASE, "zero", f"{where}: multiples of STEP from 0", ev), (
                edge
            )
        if end == first % step:
            return decided(
                FieldName.T0_PHASE, "first-element", f"{where}: anchored at the first element", ev
            ), edge
    return decided(
        FieldName.T0_PHASE,
        f"offset {lo}..{hi}",
        f"{where}: neither STEP multiples nor the first element (registration time?)",
        ev,
    ), None


def infer_bounds(obs: Observation | None, edge: int | None) -> Finding:
    """Left-closed: the element on the edge goes with the later ones; right-closed: earlier."""
    if obs is None or edge is None:
        return undecided(FieldName.WINDOW_BOUNDS, "no nominal window edge was found to probe")
    ev = _evidence(obs)
    if not obs.ok:
        return undecided(FieldName.WINDOW_BOUNDS, "the bounds probe failed", ev)
    if obs.probe.kind is QueryKind.COUNT:
        found, how = count_splits(obs)
        ev = Evidence(probe=obs.probe.name, observed=f"{obs.summary()} → {how}")
        cuts = {(s.before, s.after) for s in found or []}
        with_later = (edge - 1, edge) in cuts and (edge, edge + 1) not in cuts
        with_earlier = (edge, edge + 1) in cuts and (edge - 1, edge) not in cuts
    else:
        before, on, after = 2, 3, 4  # ids at edge − 1, edge, edge + 1
        with_later = obs.together(on, after) and not obs.together(before, on)
        with_earlier = obs.together(before, on) and not obs.together(on, after)
    if with_later:
        return decided(
            FieldName.WINDOW_BOUNDS,
            "left-closed",
            f"the element at {edge} ms shares a window with the one at {edge + 1}, not {edge - 1}",
            ev,
        )
    if with_earlier:
        return decided(
            FieldName.WINDOW_BOUNDS,
            "right-closed",
            f"the element at {edge} ms shares a window with the one at {edge - 1}, not {edge + 1}",
            ev,
        )
    return undecided(
        FieldName.WINDOW_BOUNDS,
        f"the element at {edge} ms shares no relation with exactly one neighbour (1 ms apart)",
        ev,
    )


def infer_t0_span(
    sliding: Observation | None, content_change: bool | None, r2s: str | None
) -> Finding:
    """Does the first reported window open before the first element ("before-data": windows
    exist before the stream starts, the first ones are partial) or at it ("at-data")?"""
    if sliding is None:
        return undecided(FieldName.T0, "the sliding probe did not run")
    ev = _evidence(sliding)
    if not sliding.ok or not sliding.relations:
        return undecided(FieldName.T0, "the sliding probe gave no relation", ev)
    if content_change is not False:
        return undecided(
            FieldName.T0,
            "with content-change (or unknown) reports a scope grows element by element, so a "
            "window opened before the data looks like one opened at it",
            ev,
        )
    if r2s not in ("rstream", "istream"):
        return undecided(
            FieldName.T0,
            f"the R2S operator is {r2s or 'undecided'}: only Rstream and Istream show the first "
            "window's content in the first relation",
            ev,
        )
    first_with_1 = sliding.containing(1)
    if not first_with_1:
        return undecided(FieldName.T0, "the first element is in no relation", ev)
    rel = sliding.relations[first_with_1[0]]
    open_ = sliding.probe.notes["open"]
    if 3 in rel.ids:
        return decided(
            FieldName.T0,
            "at-data",
            f"the first relation naming e1 also names e3 ({open_ + 1250} ms): the first "
            "window opens at the data, not a STEP before it",
            ev,
        )
    if 2 in rel.ids:
        return decided(
            FieldName.T0,
            "before-data",
            f"the first relation naming e1 holds only e1, e2 (< {open_ + 1000} ms): a window "
            "opened a STEP before the data is reported (partial first windows)",
            ev,
        )
    return undecided(FieldName.T0, "the first relation naming e1 holds neither e2 nor e3", ev)
