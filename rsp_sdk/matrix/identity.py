"""Which cell a ``cell.json`` stands for, across the keys one cell had over a resumed matrix.

A cell's key hashes everything that decides its numbers (adapter version, artifact sha256s,
rendered query, limits…), so a code or provisioning change gives the *same* cell — same engine,
runtime, query, stream, feeding, rate, repetition — a new key. ``matrix.json``'s plan is the
union of every invocation's plan, and ``cells/`` keeps every cell.json ever written, so a
results folder resumed across such a change holds the cell under both keys: ren16 listed each
refused JTALIS cell twice, and 41 finished cells whose current key had not run yet showed up
both as finished and as missing.

``reconcile`` counts each cell once: the plan and the finished cells are grouped by the cell's
identity (its axes, not its key); the finished cell that stands for an identity is the one
under its newest planned key, else the most recently started one (on a tie, the one planned
later). The others are *superseded* (kept on disk, left out of the counts); a planned identity
without any finished cell is *missing*. Rate_max probe cells are outside the static plan and
are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rsp_sdk.matrix.axes import axis_value

#: The axes that name a cell within one spec (its label's parts): two keys with equal values
#: here are one cell run under two configurations.
IDENTITY_AXES = (
    "group",
    "engine",
    "variant",
    "runtime",
    "query",
    "stream",
    "feeding",
    "rate",
    "time_scale",
    "instances",
    "repetition",
)

Identity = tuple[Any, ...]
P = TypeVar("P")
C = TypeVar("C")


def identity(row: Mapping[str, Any]) -> Identity:
    """``row``'s (a plan row or a cell.json) identity; a rate is compared as a float."""
    out: list[Any] = []
    for axis in IDENTITY_AXES:
        value = axis_value(row, axis)
        if axis == "rate" and value is not None:
            value = float(value)
        out.append(value)
    return tuple(out)


@dataclass
class Reconciled(Generic[P, C]):
    """The finished cells counted once, the ones they supersede, and what is still missing."""

    current: list[C] = field(default_factory=list)
    #: the newest plan row of each planned cell, in plan order
    planned: list[P] = field(default_factory=list)
    #: the planned cells (of ``planned``) that have a current finished cell
    done: list[P] = field(default_factory=list)
    superseded: list[C] = field(default_factory=list)
    missing: list[P] = field(default_factory=list)
    #: current cells that ran under an older key than the newest one planned for them
    older_key: list[C] = field(default_factory=list)


def reconcile(
    plan: Sequence[P],
    finished: Sequence[C],
    fields: Callable[[P | C], Mapping[str, Any]],
) -> Reconciled[P, C]:
    """Group ``plan`` (in the order matrix.json keeps it: a newer invocation's keys come later)
    and ``finished`` by identity; ``fields`` gives a row's columns (``key``, the axes,
    ``started_at``). Finished cells keep their order."""
    by_id: dict[Identity, list[C]] = {}
    of_key: dict[str, Identity] = {}
    for c in finished:
        row = fields(c)
        of_key[row["key"]] = identity(row)
        by_id.setdefault(of_key[row["key"]], []).append(c)
    newest: dict[Identity, P] = {}
    position: dict[str, int] = {}  # a key planned later is newer (started_at has seconds only)
    for p in plan:
        position[fields(p)["key"]] = len(position)
        row = fields(p)  # a plan row with its cell.json is that cell, whatever fields it lacks
        ident = of_key.get(row["key"]) or identity(row)
        newest[ident] = p  # later plan rows are newer keys of the same cell
    chosen: dict[Identity, C] = {}
    for ident, cells in by_id.items():
        planned_key = fields(newest[ident])["key"] if ident in newest else None
        under_plan = [c for c in cells if fields(c)["key"] == planned_key]
        newest_run = max(cells, key=lambda c: _newness(fields(c), position))
        chosen[ident] = under_plan[0] if under_plan else newest_run
    out: Reconciled[P, C] = Reconciled()
    for c in finished:
        ident = of_key[fields(c)["key"]]
        if chosen[ident] is not c:
            out.superseded.append(c)
            continue
        out.current.append(c)
        if ident in newest and fields(newest[ident])["key"] != fields(c)["key"]:
            out.older_key.append(c)
    out.planned = list(newest.values())
    out.missing = [p for ident, p in newest.items() if ident not in chosen]
    out.done = [p for ident, p in newest.items() if ident in chosen]
    return out


def _newness(row: Mapping[str, Any], position: Mapping[str, int]) -> tuple[str, int]:
    return str(row.get("started_at") or ""), position.get(row["key"], -1)
