"""Report policy, tick and time unit, from how one tumbling window's seven elements come out.

Window close: one relation holding all seven. Content change: one relation per *event* — each
element (tuple-driven: the two elements sharing a timestamp come one by one), each timestamp
(batch-driven) or each unit of time with arrivals (time-driven; 10 ms, 100 ms and 1 s slots
group the elements differently). Periodic: the same content reported again with nothing new.
Whether a relation holds the whole scope (Rstream) or only what is new (Istream) does not
matter here: the *increments* are compared.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from rsp_sdk.probe.driver import Observation, Relation
from rsp_sdk.probe.model import Evidence, FieldName, Finding, decided, undecided

UNITS = (10, 100, 1000)


def window_relations(obs: Observation) -> tuple[list[Relation], frozenset[int]]:
    """The relations naming an element of the probed window, and that window's element ids."""
    open_ = obs.probe.notes["open"]
    ids = frozenset(e.id for e in obs.probe.elements if open_ <= e.t < open_ + obs.probe.range_ms)
    return [r for r in obs.relations if r.ids & ids], ids


def increments(rels: Sequence[Relation]) -> list[frozenset[int]] | None:
    """What each relation adds: itself minus the previous (cumulative output) or itself
    (disjoint output); None when the output is neither."""
    sets = [r.ids for r in rels]
    if all(b >= a for a, b in itertools.pairwise(sets)):
        return [sets[0]] + [b - a for a, b in itertools.pairwise(sets)]
    if all(not (a & b) for a, b in itertools.pairwise(sets)):
        return list(sets)
    return None


def cumulative(rels: Sequence[Relation]) -> bool | None:
    """True: each relation holds the previous (scope grows); False: disjoint; None: neither."""
    sets = [r.ids for r in rels]
    if len(sets) < 2:
        return None
    if all(b > a for a, b in itertools.pairwise(sets)):
        return True
    if all(not (a & b) for a, b in itertools.pairwise(sets)):
        return False
    return None


def _partition(obs: Observation, ids: frozenset[int], key: int | None) -> list[frozenset[int]]:
    """The elements grouped by timestamp (key None), by ceil(t / key), or one by one (key 0)."""
    groups: dict[object, set[int]] = {}
    for e in obs.probe.elements:
        if e.id not in ids:
            continue
        k: object = e.id if key == 0 else e.t if key is None else -(-e.t // key)
        groups.setdefault(k, set()).add(e.id)
    return [frozenset(g) for g in groups.values()]


def infer_report(obs: Observation) -> tuple[Finding, Finding, Finding]:
    """(report, tick, time unit) findings."""
    ev = Evidence(probe=obs.probe.name, observed=obs.summary(12))
    if not obs.ok or not obs.relations:
        why = "the report probe gave no relation"
        return tuple(undecided(f, why, ev) for f in _FIELDS)  # type: ignore[return-value]
    rels, ids = window_relations(obs)
    if not rels:
        why = "no relation names an element of the probed window"
        return tuple(undecided(f, why, ev) for f in _FIELDS)  # type: ignore[return-value]
    repeats = [a.t_app for a, b in itertools.pairwise(rels) if a.ids == b.ids]
    if repeats:
        return _periodic(rels, ev)
    if len(rels) == 1 and rels[0].ids >= ids:
        why = "window-close reports have the same content whatever drives the engine"
        return (
            decided(
                FieldName.REPORT,
                "window_close",
                f"the window's {len(ids)} elements come out in one relation",
                ev,
            ),
            undecided(FieldName.TICK, why, ev),
            undecided(FieldName.TIME_UNIT, why, ev),
        )
    return _content_change(obs, rels, ids, ev)


_FIELDS = (FieldName.REPORT, FieldName.TICK, FieldName.TIME_UNIT)


def _periodic(rels: list[Relation], ev: Evidence) -> tuple[Finding, Finding, Finding]:
    stamps = sorted({r.t_app for r in rels if r.t_app is not None})
    diffs = {b - a for a, b in itertools.pairwise(stamps) if b > a}
    period = min(diffs) if diffs else None
    value = f"periodic:{period}" if period else None
    why = "the same content is reported again with no new element: periodic reports"
    report = (
        decided(FieldName.REPORT, value, why + f" every {period} ms", ev)
        if value
        else undecided(
            FieldName.REPORT, why + ", but relations carry no time to give the period", ev
        )
    )
    tick_why = "periodic reports do not depend on what drives the engine between them"
    return (
        report,
        undecided(FieldName.TICK, tick_why, ev),
        undecided(FieldName.TIME_UNIT, tick_why, ev),
    )


def _content_change(
    obs: Observation, rels: list[Relation], ids: frozenset[int], ev: Evidence
) -> tuple[Finding, Finding, Finding]:
    report = decided(
        FieldName.REPORT,
        "content_change",
        f"the window's elements come out over {len(rels)} relations, as they arrive",
        ev,
    )
    inc = increments(rels)
    if inc is None or frozenset().union(*inc) != ids:
        why = "the relations neither grow nor follow one another element by element"
        return report, undecided(FieldName.TICK, why, ev), undecided(FieldName.TIME_UNIT, why, ev)
    seen = sorted(inc, key=min)
    unit_why = "only a time-driven engine has a unit that groups arrivals"
    if seen == sorted(_partition(obs, ids, 0), key=min):
        return (
            report,
            decided(
                FieldName.TICK,
                "tuple_driven",
                "one relation per element, also for two elements sharing a timestamp",
                ev,
            ),
            undecided(FieldName.TIME_UNIT, unit_why, ev),
        )
    if seen == sorted(_partition(obs, ids, None), key=min):
        return (
            report,
            decided(
                FieldName.TICK,
                "batch_driven",
                "one relation per timestamp (the two elements sharing one come together); "
                "a time-driven engine with a 1 ms unit reports the same",
                ev,
            ),
            undecided(FieldName.TIME_UNIT, unit_why, ev),
        )
    for unit in UNITS:
        if seen == sorted(_partition(obs, ids, unit), key=min):
            why = f"elements come out grouped by {unit} ms slots of application time"
            return (
                report,
                decided(FieldName.TICK, "time_driven", why, ev),
                decided(FieldName.TIME_UNIT, str(unit), why, ev),
            )
    why = "the grouping of elements matches no tick (element, timestamp, 10 ms/100 ms/1 s)"
    return report, undecided(FieldName.TICK, why, ev), undecided(FieldName.TIME_UNIT, why, ev)
