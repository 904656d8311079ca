"""The plan's wall time, asv-style: from what a results folder has already measured.

A spec's single ``expected_cell_s`` cannot describe a matrix whose cells differ by an order of
magnitude: a CityBench cell with twenty instances of a query ran 330 s where the same query
alone ran 32 s. So ``rsp matrix plan SPEC --results DIR`` counts the cells a run of DIR would
skip (finished) and prices each cell still to run by the measured cells most like it — another
repetition of the same cell first, then the same engine and runtime with as many instances, and
so on — scaling by the number of instances from the nearest count measured. Without a
measurement the spec's ``expected_cell_s`` per instance stands in, or the stream's own where
the spec gives one (YABench's cells at one station take seconds, at 500 stations minutes).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rsp_sdk.matrix.plan import Cell, CellState

# The keys a cell and a measured row are compared on, most alike first; each level is tried
# in turn and the first that finds measured rows prices the cell.
_Level = Callable[[dict[str, Any]], tuple[Any, ...]]
_LEVELS: tuple[tuple[str, _Level], ...] = (
    ("same cell", lambda r: (r["label"].rsplit("/rep=", 1)[0],)),
    ("engine, runtime, instances", lambda r: (r["engine"], r["runtime"], r["instances"])),
    ("engine, instances", lambda r: (r["engine"], r["instances"])),
    ("engine, runtime", lambda r: (r["engine"], r["runtime"])),
    ("engine", lambda r: (r["engine"],)),
)


@dataclass(frozen=True)
class Estimate:
    """What a run of the plan would do and roughly how long it would take."""

    finished: int  # cells the results folder already holds (a run skips them)
    to_run: int
    wall_s: float  # expected for the cells to run
    measured: int  # of those, cells priced from measured cells (the rest from the spec)

    def describe(self) -> str:
        source = (
            "from the spec's expected_cell_s × instances"
            if not self.measured
            else "from measured cells"
            if self.measured == self.to_run
            else f"{self.measured} of {self.to_run} from measured cells, the rest from the "
            "spec's expected_cell_s × instances"
        )
        done = f"{self.finished} finished, " if self.finished else ""
        wall = f"expected wall time ≈ {self.wall_s / 60:.1f} min"
        return f"{done}{self.to_run} to run, {wall} ({source})"


def estimate(
    cells: Iterable[Cell],
    expected_cell_s: float,
    measured_rows: Iterable[dict[str, Any]],
    per_stream: Mapping[str, float] | None = None,
) -> Estimate:
    """Price the runnable cells of a plan. ``measured_rows`` are cell.json rows of a results
    folder (``Store.rows``); a row whose key is a planned cell's marks that cell finished. A
    cell nothing measured prices is its stream's ``per_stream`` seconds, else
    ``expected_cell_s``, per instance."""
    per_stream = per_stream or {}
    rows = [_axes(r) for r in measured_rows if float(r.get("wall_s") or 0) > 0]
    by_key = {r["key"] for r in rows}
    indexes = [_index(rows, level) for _, level in _LEVELS]
    finished = to_run = measured = 0
    wall = 0.0
    for cell in cells:
        if cell.state is not CellState.PLANNED:
            continue
        if cell.key in by_key:
            finished += 1
            continue
        to_run += 1
        priced = _price(_axes(cell.model_dump()), indexes)
        measured += priced is not None
        guess = per_stream.get(cell.stream, expected_cell_s)
        wall += priced if priced is not None else guess * max(1, cell.instances)
    return Estimate(finished=finished, to_run=to_run, wall_s=wall, measured=measured)


def _axes(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("key", "label", "engine", "runtime", "wall_s")
    return {**{k: row.get(k) for k in keys}, "instances": int(row.get("instances") or 1)}


def _index(
    rows: list[dict[str, Any]], level: _Level
) -> tuple[_Level, dict[tuple[Any, ...], list[dict[str, Any]]]]:
    found: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        found.setdefault(level(r), []).append(r)
    return level, found


def _price(
    cell: dict[str, Any],
    indexes: list[tuple[_Level, dict[tuple[Any, ...], list[dict[str, Any]]]]],
) -> float | None:
    """Median measured seconds per instance of the most alike rows — among them those whose
    instance count is nearest the cell's, since cost per instance is not constant (rsp-js: 32 s
    alone, 13 s each of ten) — times the cell's instances (None: nothing alike measured)."""
    for level, found in indexes:
        alike = found.get(level(cell))
        if alike:
            gap = min(_gap(r, cell) for r in alike)
            nearest = [r for r in alike if _gap(r, cell) == gap]
            per_instance = statistics.median(float(r["wall_s"]) / r["instances"] for r in nearest)
            return float(per_instance * cell["instances"])
    return None


def _gap(row: dict[str, Any], cell: dict[str, Any]) -> float:
    return abs(math.log(row["instances"] / cell["instances"]))
