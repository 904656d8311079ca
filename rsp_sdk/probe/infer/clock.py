"""Application time or wall clock, from the grid probe pushed as fast as possible.

21 elements spanning 5 s of application time reach the engine within a fraction of a second.
An engine windowing by application time splits them every STEP (2 s) of *their* timestamps; a
wall-clock engine puts elements 2 s or more apart in one relation (they arrived together), or
reports nothing until its own timer fires.
"""

from __future__ import annotations

from rsp_sdk.probe.driver import Observation
from rsp_sdk.probe.infer.windows import splits
from rsp_sdk.probe.model import Evidence, FieldName, Finding, decided, undecided


def infer_clock(grid: Observation, counted: Observation | None = None) -> Finding:
    ev = Evidence(
        probe=grid.probe.name,
        observed=f"pushed in {grid.push_wall_s:.2f} s: {grid.summary()}",
    )
    if not grid.ok:
        return undecided(FieldName.CLOCK, "the grid probe failed", ev)
    if not grid.relations:
        return decided(
            FieldName.CLOCK,
            "wall",
            "no relation by the end of the probe although application time passed several "
            "window closes: windows follow the wall clock (feed in real time)",
            ev,
        )
    times = grid.probe.times()
    omega = grid.probe.range_ms
    for r in grid.relations:
        ts = [times[i] for i in r.ids if i in times]
        if ts and max(ts) - min(ts) >= omega:
            return decided(
                FieldName.CLOCK,
                "wall",
                f"one relation holds elements {max(ts) - min(ts)} ms apart in application "
                f"time, more than RANGE ({omega} ms): they were windowed by arrival",
                ev,
            )
    found = splits(grid)
    if found:
        stamped = sum(r.t_app is not None for r in grid.relations)
        return decided(
            FieldName.CLOCK,
            "application",
            f"relations split the elements at {len(found)} edge(s) {grid.probe.step_ms} ms "
            f"apart in their timestamps; {stamped} of {len(grid.relations)} relations carry "
            "an application time",
            ev,
        )
    if counted is not None and counted.ok and counted.relations:
        top = max((r.count or 0) for r in counted.relations)
        n = len(counted.probe.elements)
        cev = Evidence(probe=counted.probe.name, observed=counted.summary(21))
        if 0 < top < n:
            return decided(
                FieldName.CLOCK,
                "application",
                f"COUNT(?s) never exceeds {top} of the {n} elements although all were pushed "
                f"within {grid.push_wall_s:.2f} s: windows hold only what lies within RANGE "
                "in application time",
                ev,
                cev,
            )
    first, last = min(times.values()), grid.probe.end_ms
    stamps = [r.t_app for r in grid.relations]
    if all(t is not None and first <= t <= last for t in stamps):
        return decided(
            FieldName.CLOCK,
            "application",
            "relations hold single elements, but every one is stamped with an application "
            f"time of the probe ({first}..{last} ms) although all were pushed within "
            f"{grid.push_wall_s:.2f} s",
            ev,
        )
    return undecided(FieldName.CLOCK, "the relations neither split nor merge windows", ev)
