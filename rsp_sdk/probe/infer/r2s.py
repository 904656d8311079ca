"""The R2S operator: sliding windows (2 s, step 1 s) put every element in two windows.

Under window-close reports Rstream names an element in two relations, Istream once when it
enters (the relation's stamp is less than RANGE after the element), Dstream once when it left
(RANGE or more after). Under content-change reports the report probe already shows it: relations
that grow (Rstream) or that each hold only the new elements (Istream). When the adapter runs
more than one operator, the probe is run with each: an engine whose output follows the query's
keyword applies "the query's" operator.
"""

from __future__ import annotations

from rsp_sdk.probe.driver import Observation
from rsp_sdk.probe.infer.report import cumulative, window_relations
from rsp_sdk.probe.model import Evidence, FieldName, Finding, decided, undecided


def observed_r2s(sliding: Observation) -> tuple[str | None, str]:
    """The operator one window-close sliding observation shows, and why."""
    if not sliding.ok or not sliding.relations:
        return None, "no relation"
    interior = (3, 4)  # both lie in two windows whatever the phase
    counts = {e: len(sliding.containing(e)) for e in interior}
    if all(c == 2 for c in counts.values()):
        return "rstream", "e3 and e4 are each named by two relations (both their windows)"
    if not all(c == 1 for c in counts.values()):
        return None, f"e3, e4 are named by {counts[3]} and {counts[4]} relations"
    rel = sliding.relations[sliding.containing(3)[0]]
    if rel.t_app is None:
        return None, "each element is named once, and relations carry no time to tell when"
    delay = rel.t_app - sliding.probe.times()[3]
    if delay < sliding.probe.range_ms:
        return "istream", f"each element is named once, {delay} ms after it arrived (entered)"
    return "dstream", f"each element is named once, {delay} ms after it arrived (left)"


def infer_r2s(
    slidings: dict[str, Observation], report: Observation | None, content_change: bool | None
) -> Finding:
    """``slidings``: registered operator → sliding observation (window-close engines)."""
    if content_change:
        return _from_report(report)
    if content_change is None:
        return undecided(FieldName.R2S, "the report policy is undecided")
    seen = {reg: observed_r2s(obs) for reg, obs in slidings.items()}
    ev = [
        Evidence(probe=obs.probe.name, observed=f"{obs.summary()} → {seen[reg][1]}")
        for reg, obs in slidings.items()
    ]
    values = {v for v, _ in seen.values()}
    if None in values or not values:
        return undecided(FieldName.R2S, "a sliding probe shows no operator", *ev)
    if len(seen) > 1 and all(v == reg for reg, (v, _) in seen.items()):
        return decided(
            FieldName.R2S, "query", "the output follows the query's R2S keyword each time", *ev
        )
    if len(values) == 1:
        (value,) = values
        note = (
            "the only operator the adapter runs"
            if len(seen) == 1
            else "whatever the query registers"
        )
        return decided(FieldName.R2S, str(value), f"{value} output ({note})", *ev)
    return undecided(FieldName.R2S, "the operators seen differ but do not follow the query", *ev)


def _from_report(report: Observation | None) -> Finding:
    if report is None:
        return undecided(FieldName.R2S, "the report probe did not run")
    rels, _ = window_relations(report)
    ev = Evidence(probe=report.probe.name, observed=report.summary(12))
    grows = cumulative(rels)
    if grows is True:
        return decided(FieldName.R2S, "rstream", "each relation holds the previous one", ev)
    if grows is False:
        return decided(
            FieldName.R2S, "istream", "each relation holds only the newly arrived elements", ev
        )
    return undecided(FieldName.R2S, "relations neither grow nor hold only new elements", ev)
