"""BeRSys 2013's functional tests (Dell'Aglio et al.) on a ``rooms`` micro-stream.

* **R2S** — the identity query over a sliding window (ω = 3 s > β = 1 s), registered with each
  R2S operator the adapter runs: Rstream must output each window's content, Istream what entered
  since the previous window, Dstream what left it.
* **S2R** — window content and eviction, seen through a join (two people detected in the same
  room within the window, never once either detection has left it) and an aggregate (detections
  per room).

The expected relations are derived here by hand-checkable rules straight from the detections
(no oracle, no engine code): window k is [φ + kβ, φ + kβ + ω). Engines place φ differently, so
every phase that moves an edge across a detection is tried; an engine passes a test when, for
some φ, its non-empty relations are a contiguous run of the expected ones that holds every
window lying inside the data. When none fits, the verdict names the first relation where the
output diverged from the closest phase.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.session import ResultEvent
from rsp_sdk.model.profile import R2S
from rsp_sdk.probe.driver import ProbeSettings, run_query
from rsp_sdk.probe.run import operators
from rsp_sdk.query.rspql import parse_rspql
from rsp_sdk.streams.generators.rooms import EX, parse_rooms

# one detection a second, a person moving between rooms (m1: r1 → r2, m2: r1 → r3), so windows
# of 3 s see pairs form and dissolve
ROOMS = """
1500: m1@r1
2500: m2@r1
3500: m3@r2
4500: m1@r2
5500: m2@r3
6500: m4@r2
7500: m3@r3
"""
RANGE_MS, STEP_MS = 3000, 1000
STREAM = f"{EX}rooms"
END_MS = 14_000

Row = tuple[str, ...]
Rel = frozenset[Row]


@dataclass(frozen=True)
class Detection:
    t: int
    who: str
    room: str


def _iri(name: str) -> str:
    return f"<{EX}{name}>"


def identity(win: list[Detection]) -> Rel:
    return frozenset((_iri(d.who), _iri(d.room)) for d in win)


def same_room(win: list[Detection]) -> Rel:
    return frozenset(
        (_iri(a.who), _iri(b.who), _iri(a.room))
        for a in win
        for b in win
        if a.room == b.room and a.who != b.who
    )


def per_room(win: list[Detection]) -> Rel:
    return frozenset((_iri(r), str(n)) for r, n in Counter(d.room for d in win).items())


@dataclass(frozen=True)
class Case:
    name: str
    test: str  # "R2S" or "S2R"
    r2s: R2S
    select: str
    where: str
    window_fn: Callable[[list[Detection]], Rel]
    group_by: str = ""

    def rspql(self) -> str:
        return (
            f"PREFIX ex: <{EX}>\n"
            f"REGISTER {self.r2s.value.upper()} <{EX}{self.name}> AS SELECT {self.select}\n"
            f"FROM NAMED WINDOW <{EX}w> ON <{STREAM}> "
            f"[RANGE PT{RANGE_MS // 1000}S STEP PT{STEP_MS // 1000}S]\n"
            f"WHERE {{ WINDOW <{EX}w> {{ {self.where} }} }} {self.group_by}"
        )


def cases(ops: list[R2S]) -> list[Case]:
    pattern = "?m ex:detectedAt ?r"
    out = [
        Case(f"r2s_{op.value}", "R2S", op, "?m ?r", pattern, identity)
        for op in (R2S.RSTREAM, R2S.ISTREAM, R2S.DSTREAM)
        if op in ops
    ]
    main = ops[0]
    out.append(
        Case(
            "s2r_join",
            "S2R",
            main,
            "?a ?b ?r",
            "?a ex:detectedAt ?r . ?b ex:detectedAt ?r FILTER(?a != ?b)",
            same_room,
        )
    )
    out.append(
        Case("s2r_count", "S2R", main, "?r (COUNT(?m) AS ?n)", pattern, per_room, "GROUP BY ?r")
    )
    return out


class Verdict(BaseModel):
    """One test on one engine: passed (with the phase), failed (where), or not run (why)."""

    model_config = ConfigDict(frozen=True)

    case: str
    test: str
    r2s: str
    passed: bool | None
    reason: str
    phase_ms: int | None = None
    diverged_at: int | None = None
    expected: list[str] = []
    got: list[str] = []


def detections(text: str = ROOMS) -> list[Detection]:
    return [Detection(t, who, room) for t, who, room in parse_rooms(text)]


def expected(dets: list[Detection], phase: int, case: Case) -> list[tuple[int, Rel, bool]]:
    """(window opening, relation, required) for every window touching the data, in order."""
    t_min, t_max = dets[0].t, dets[-1].t
    o = phase + ((t_min - RANGE_MS - phase) // STEP_MS) * STEP_MS
    prev: Rel = frozenset()
    out = []
    while o <= t_max + RANGE_MS:
        cur = case.window_fn([d for d in dets if o <= d.t < o + RANGE_MS])
        if case.r2s is R2S.RSTREAM:
            rel = cur
        elif case.r2s is R2S.ISTREAM:
            rel = cur - prev
        else:
            rel = prev - cur
        prev = cur
        out.append((o, rel, t_min <= o and o + RANGE_MS <= t_max + 1))
        o += STEP_MS
    return out


_INT = re.compile(r'^"(-?\d+)"(\^\^<http://www\.w3\.org/2001/XMLSchema#\w+>)?$')


def observed(events: list[ResultEvent]) -> list[Rel]:
    """Non-empty relations as sets of rows (integer literals as plain numbers)."""

    def norm(term: str | None) -> str:
        m = _INT.match(term or "")
        return m.group(1) if m else (term or "UNDEF")

    rels = [frozenset(tuple(norm(t) for t in row) for row in ev.rows) for ev in events]
    return [r for r in rels if r]


def judge(case: Case, got: list[Rel], dets: list[Detection]) -> Verdict:
    phases = sorted({0} | {d.t % STEP_MS for d in dets} | {(d.t + 1) % STEP_MS for d in dets})
    best: tuple[int, int, int, list[Rel]] | None = None  # (matched, phase, start, expected)
    for phase in phases:
        exp = expected(dets, phase, case)
        rels = [rel for _, rel, _ in exp if rel]
        required = [k for k, (_, rel, req) in enumerate(e for e in exp if e[1]) if req]
        for start in range(len(rels)):
            n = _prefix(got, rels[start:])
            if n == len(got) and all(start <= k < start + n for k in required):
                return Verdict(
                    case=case.name,
                    test=case.test,
                    r2s=case.r2s.value,
                    passed=True,
                    reason=f"{len(got)} relations equal windows {start}..{start + n - 1} "
                    f"of phase {phase} ms",
                    phase_ms=phase,
                )
            if best is None or n > best[0]:
                best = (n, phase, start, rels)
    if case.r2s is R2S.ISTREAM:
        union = _union_verdict(case, got, dets, phases)
        if union is not None:
            return union
    assert best is not None
    n, phase, start, rels = best
    exp_rel = rels[start + n] if start + n < len(rels) else frozenset()
    got_rel = got[n] if n < len(got) else frozenset()
    return Verdict(
        case=case.name,
        test=case.test,
        r2s=case.r2s.value,
        passed=False,
        reason=f"relation {n + 1} of {len(got)} diverges from the closest phase ({phase} ms)"
        if n < len(got)
        else f"the output stops after {n} relations; windows inside the data are missing",
        phase_ms=phase,
        diverged_at=n,
        expected=sorted(" ".join(r) for r in exp_rel),
        got=sorted(" ".join(r) for r in got_rel),
    )


def _union_verdict(
    case: Case, got: list[Rel], dets: list[Detection], phases: list[int]
) -> Verdict | None:
    """Istream from an engine reporting per arrival (content change, CQELS) splits a window's
    new solutions over several relations: then every solution must have entered some window,
    and every solution that entered a window inside the data must have been reported."""
    seen: Rel = frozenset().union(*got) if got else frozenset()
    closest: tuple[int, int, Rel, Rel] | None = None  # (misfits, phase, extra, missing)
    for phase in phases:
        exp = expected(dets, phase, case)
        allowed: Rel = frozenset().union(*(rel for _, rel, _ in exp))
        required: Rel = frozenset().union(*(rel for _, rel, req in exp if req))
        extra, missing = seen - allowed, required - seen
        if closest is None or len(extra) + len(missing) < closest[0]:
            closest = (len(extra) + len(missing), phase, extra, missing)
        if not extra and not missing:
            return Verdict(
                case=case.name,
                test=case.test,
                r2s=case.r2s.value,
                passed=True,
                reason=f"{len(got)} relations at other instants than window closes; what they "
                f"report together is what entered the windows of phase {phase} ms",
                phase_ms=phase,
            )
    if closest is None or len(got) <= 1:
        return None
    _, phase, extra, missing = closest
    return Verdict(
        case=case.name,
        test=case.test,
        r2s=case.r2s.value,
        passed=False,
        reason=f"reported per arrival; against the windows of phase {phase} ms, "
        f"{len(extra)} solution(s) reported that entered no window, {len(missing)} never reported",
        phase_ms=phase,
        expected=sorted(" ".join(r) for r in missing),
        got=sorted(" ".join(r) for r in extra),
    )


def _prefix(got: list[Rel], exp: list[Rel]) -> int:
    n = 0
    while n < len(got) and n < len(exp) and got[n] == exp[n]:
        n += 1
    return n


def run_bersys(adapter: Adapter, settings: ProbeSettings) -> list[Verdict]:
    """Every BeRSys test the adapter can be asked to run, judged; refusals are verdicts too."""
    ops = operators(adapter)
    if not ops:
        return []
    dets = detections()
    ns = f"<{EX}detectedAt>"
    groups: dict[int, list[tuple[int, str, str, str]]] = {}
    for d in dets:
        groups.setdefault(d.t, []).append((d.t, _iri(d.who), ns, _iri(d.room)))
    out = []
    for case in cases(ops):
        spec = parse_rspql(case.rspql(), name=case.name)
        events, error, _ = run_query(adapter, spec, STREAM, groups, END_MS, settings)
        if error is not None:
            out.append(
                Verdict(
                    case=case.name, test=case.test, r2s=case.r2s.value, passed=None, reason=error
                )
            )
            continue
        out.append(judge(case, observed(events), dets))
    return out
