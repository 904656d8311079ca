"""Judging an engine whose stream has more t0 classes than the oracle can evaluate.

The oracle enumerates every t0 an engine could have started at and evaluates one representative
per class of candidates that see equal window contents (``s2r.class_reports``). On a stream
timed in milliseconds with many sources, nearly every candidate is its own class: YABench's SG1
at 10,000 stations (2.1 M triples, 5 s windows) has 5,000 classes whose windows hold 9.6 G
triples in all, where 1,000 stations have 3,201 classes and 0.6 G. The first runs for an hour
and its expected output would not fit on disk, so the cell was never judged.

An engine that stamps its relations with application time has already said which t0 it used:
under the engine's own profile, a candidate's windows report at known instants
(``s2r.report_table``), and only candidates reporting at the engine's relation times can be the
one it ran. Judging against those (one class, usually) costs one evaluation instead of
thousands. It is a narrower judgement than the full one, and is reported as such (the verdict
names the candidates kept and why): an engine that reports the right contents at wrong instants
is judged wrong here, where the full enumeration could have found the contents at another t0.
An engine whose relations carry no application time cannot be narrowed: its cell is not judged,
with the sizes that made it too large, instead of running for an hour.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, ReportPolicy
from rsp_sdk.oracle import s2r

# triples in scope, summed over the distinct window contents of the class representatives'
# reports, past which the oracle's whole enumeration is not attempted: YABench's SG1 E1 at
# 1,000 stations (0.62 G, 3,201 classes) is evaluated in full, at 10,000 (9.6 G, 5,000
# classes) it is not
MAX_SCOPE = 2_000_000_000


def max_scope() -> int:
    """The limit: ``RSP_ORACLE_MAX_SCOPE`` or ``MAX_SCOPE``."""
    return s2r.env_rows("RSP_ORACLE_MAX_SCOPE", MAX_SCOPE)


class TooLarge(InputError):
    """The oracle's enumeration is too large and the engine's output cannot narrow it."""


def scope_triples(profile: Profile, geom: s2r.Geometry, representatives: list[int]) -> int:
    """Triples the oracle would evaluate: Σ over the distinct window contents the
    representatives' reports see, of the triples in them (0 for a content-change profile,
    whose reports overlap and are evaluated incrementally: its size is bounded by
    ``s2r.TooManyReports`` instead)."""
    if ReportPolicy.CONTENT_CHANGE in profile.report or not representatives:
        return 0
    reports = s2r.shared_keys(geom, s2r.report_table(profile, geom, representatives)[0])
    keys = np.stack([reports.column(c).to_numpy() for c in ("kc", "kb", "kr")], axis=1)
    _, first = np.unique(keys, axis=0, return_index=True)
    return int(reports.column("n").to_numpy()[first].sum())


def consistent_t0s(
    profile: Profile, geom: s2r.Geometry, candidates: list[int], times: Iterable[int]
) -> tuple[list[int], int]:
    """(candidates whose reports fall at the most of the engine's relation ``times``, how many
    of those times they match). No candidate matching any: ([], 0)."""
    wanted = np.unique(np.fromiter(times, dtype=np.int64))
    cands = np.unique(np.asarray(candidates, dtype=np.int64))
    if not len(wanted) or not len(cands):
        return [], 0
    per = s2r.rows_per_candidate(profile, geom)
    step = max(1, s2r.CHUNK_ROWS // per)
    score = np.zeros(len(cands), dtype=np.int64)
    for lo in range(0, len(cands), step):
        chunk = cands[lo : lo + step]
        reports, _ = s2r.report_table(profile, geom, chunk.tolist())
        t0 = reports.column("t0").to_numpy()
        t_app = reports.column("t_app").to_numpy()
        hit = np.isin(t_app, wanted)
        pairs = np.unique(np.stack([t0[hit], t_app[hit]], axis=1), axis=0)
        score[lo : lo + len(chunk)] = np.bincount(
            np.searchsorted(chunk, pairs[:, 0]), minlength=len(chunk)
        )
    best = int(score.max())
    if best == 0:
        return [], 0
    return cands[score == best].tolist(), best


def too_large_text(classes: int, candidates: int, scope: int, limit: int) -> str:
    """The sizes that make the full enumeration too large, in words."""
    return (
        f"the oracle's {candidates:,} t0 candidates form {classes:,} classes whose windows hold "
        f"{scope:,} triples, past the {limit:,} it evaluates at once"
    )


__all__ = [
    "MAX_SCOPE",
    "TooLarge",
    "consistent_t0s",
    "max_scope",
    "scope_triples",
    "too_large_text",
]
