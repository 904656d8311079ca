"""Empty relations and empty windows.

Tumbling 2 s windows: W1 holds a binding element, W2 one element the query does not bind, W3
nothing, W4 and W5 one binding element each. With the identity query, W2's evaluation is an
empty relation — reported only by an engine that emits empty relations; W3's too, if the engine
evaluates windows without content at all. With COUNT(?s), W2 and W3 both evaluate to one row
``0`` (never empty), so how many zero counts lie between W1 and W4 shows whether windows without
content are reported (no ``non_empty_content``) — whatever the engine does with empty relations.
"""

from __future__ import annotations

from rsp_sdk.probe.driver import Observation
from rsp_sdk.probe.model import Evidence, FieldName, Finding, decided, undecided


def _between(obs: Observation) -> list[int] | None:
    """Indexes of the relations after W1's and before W4's (None if either is missing)."""
    first, later = obs.containing(1), obs.containing(3)
    if not first or not later:
        return None
    return list(range(first[-1] + 1, later[0]))


_DSTREAM = (
    "under Dstream a relation lists what left the window, so an empty relation does not show "
    "an empty evaluation"
)


def infer_empty_relations(select: Observation | None, r2s: str | None) -> Finding:
    if select is None:
        return undecided(FieldName.EMPTY_RELATIONS, "the empty probe did not run")
    if r2s == "dstream":
        return undecided(FieldName.EMPTY_RELATIONS, _DSTREAM)
    ev = Evidence(probe=select.probe.name, observed=select.summary())
    between = _between(select) if select.ok else None
    if between is None:
        return undecided(
            FieldName.EMPTY_RELATIONS, "the windows around the probed ones were not reported", ev
        )
    empties = [k for k in between if select.relations[k].rows == 0]
    if empties:
        return decided(
            FieldName.EMPTY_RELATIONS,
            "true",
            f"{len(empties)} empty relation(s) between the reports of e1 and e3",
            ev,
        )
    return decided(
        FieldName.EMPTY_RELATIONS,
        "false",
        "nothing between the reports of e1 and e3, though a window held an element no "
        "pattern binds",
        ev,
    )


def infer_non_empty(
    count: Observation | None,
    select: Observation | None,
    content_change: bool | None,
    emits_empty: str | None,
    r2s: str | None,
) -> Finding:
    """``non_empty_content``: windows without any element are not reported."""
    if r2s == "dstream":
        return undecided(FieldName.NON_EMPTY_CONTENT, _DSTREAM)
    if content_change:
        return undecided(
            FieldName.NON_EMPTY_CONTENT,
            "content-change reports are triggered by an arriving element, so their scope is "
            "never empty",
        )
    if count is not None and count.ok:
        ev = Evidence(probe=count.probe.name, observed=count.summary())
        zeros = _zero_counts(count)
        if zeros == 2:
            return decided(
                FieldName.NON_EMPTY_CONTENT,
                "false",
                "two counts of 0: the window with no element is reported too",
                ev,
            )
        if zeros == 0:
            return undecided(
                FieldName.NON_EMPTY_CONTENT,
                "COUNT(?s) gave no count of 0 even for the window holding an element no pattern "
                "binds, so it cannot show whether windows without elements are evaluated",
                ev,
            )
        if zeros == 1:
            return decided(
                FieldName.NON_EMPTY_CONTENT,
                "true",
                "one count of 0 (the window with an unbound element), none for the empty window",
                ev,
            )
    if select is not None and select.ok and emits_empty == "true":
        between = _between(select) or []
        empties = sum(1 for k in between if select.relations[k].rows == 0)
        ev = Evidence(probe=select.probe.name, observed=select.summary())
        if empties in (1, 2):
            return decided(
                FieldName.NON_EMPTY_CONTENT,
                str(empties == 1).lower(),
                f"{empties} empty relation(s): the window without elements is "
                + ("not reported" if empties == 1 else "reported too"),
                ev,
            )
    return undecided(
        FieldName.NON_EMPTY_CONTENT,
        "no COUNT(?s) probe result to tell, and an engine that emits no empty relations looks "
        "the same whether it skips empty windows or evaluates them to nothing",
    )


def _zero_counts(count: Observation) -> int | None:
    """Relations counting 0 between the first count of 1 and the last ones."""
    counts = [r.count for r in count.relations]
    ones = [k for k, c in enumerate(counts) if c == 1]
    if len(ones) < 2:
        return None
    return sum(1 for c in counts[ones[0] + 1 : ones[1]] if c == 0)
