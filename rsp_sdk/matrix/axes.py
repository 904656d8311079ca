"""The axes that tell a spec's cells of one engine × query apart in the result tables.

A verdict grid has one column per query (with its parameters and rate, ``column_label``). A
spec can also vary the stream (ren16's rate and static-data sweeps, its 2-/4-stream splits), the
number of simultaneous instances of a query (CityBench's concurrency axis) and the feeding's
time scale (CityBench's ×1 / ×10), and a query axis can name its experiment (``group``:
YABench's E1–E4, ren16's sweeps). Folded into the query's column those cells would look like
repetitions of one series (``correct ×4`` for x1 and x10 at two time scales), so each such axis
gets a column of its own — but only where the cells differ on it: a spec with one stream keeps
its headers as they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: In the order their columns appear after the query.
SPLIT_AXES = ("group", "stream", "instances", "time_scale")

#: The header of each axis' own column.
HEADERS = {
    "group": "experiment",
    "stream": "stream",
    "instances": "instances",
    "time_scale": "time scale",
}

_SCALE_IN_LABEL = re.compile(r"/time-scale=([0-9.eE+-]+)/")


def engine_name(row: Mapping[str, Any]) -> str:
    """The engine as cells, tables and reports name it: the adapter, with the variant that
    tells two entries of it in one spec apart (``csparql[heap=4g]``)."""
    variant = row.get("variant")
    return f"{row.get('engine')}[{variant}]" if variant else str(row.get("engine"))


def who(row: Mapping[str, Any]) -> str:
    """``engine[variant]@runtime``: the rows of a table, the series of a figure."""
    return f"{engine_name(row)}@{row.get('runtime')}"


def axis_text(axis: str, value: Any) -> str:
    """One axis value as the cell labels spell it (``x10``, ``time-scale=10``)."""
    if value is None:
        return "–"
    if axis == "instances":
        return f"x{int(value)}"
    if axis == "time_scale":
        return f"time-scale={float(value):g}"
    return str(value)


def axis_cell(axis: str, value: Any) -> str:
    """One axis value in that axis' own column, whose header names it (``10``, not ``x10``)."""
    if value is None:
        return "–"
    return f"{float(value):g}" if axis == "time_scale" else str(value)


def varying_axes(rows: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """The axes of ``SPLIT_AXES`` on which ``rows`` take more than one value."""
    seen: dict[str, set[Any]] = {a: set() for a in SPLIT_AXES}
    for r in rows:
        for a in SPLIT_AXES:
            seen[a].add(axis_value(r, a))
    return tuple(a for a in SPLIT_AXES if len(seen[a]) > 1)


def axis_value(row: Mapping[str, Any], axis: str) -> Any:
    """``row``'s value on ``axis``, normalised: instances default to 1 (a spec without the
    axis), a time scale missing from a planned cell is read back from its label (matrix.json's
    plan keeps the label, not the feeder)."""
    value = row.get(axis)
    if axis == "instances":
        return int(value) if value is not None else 1
    if axis == "time_scale":
        if value is None:
            found = _SCALE_IN_LABEL.search(str(row.get("label") or ""))
            return float(found.group(1)) if found else None
        return float(value)
    return value


def axes_suffix(row: Mapping[str, Any], axes: Iterable[str]) -> str:
    """`` · aarhus · x10 · time-scale=10``: the part of a grid header naming ``axes``."""
    return "".join(f" · {axis_text(a, axis_value(row, a))}" for a in axes)
