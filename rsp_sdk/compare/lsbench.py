"""LSBench mismatch mm(E1, E2, Q, R) and comparability comp(𝓔, Q, R, ε).

LSBench (Le-Phuoc et al., ISWC 2012) asks how much of one engine's output another engine does
not produce, *in order*, without an oracle. Definitions (docs/concepts.md), 1-based in the
paper, 0-based here:

* O_E = b_1 … b_n is E's output as one sequence of elements (bindings). An output partition
  A_1 … A_m splits O_E1 into consecutive blocks: one block per execution for periodic engines
  (:attr:`Partition.RELATION`), one element per block for eager engines
  (:attr:`Partition.ELEMENT`).
* The slice O_E2[j] = b_j … b_n. The maximal remainder P_i^j is the elements of A_i that occur
  in O_E2[j] (a multiset filter of A_i by membership: every copy of a duplicated element counts
  when the element occurs at least once in the slice — the definition as written, which lets a
  periodic Rstream engine repeat the same binding in consecutive executions).
* match(P) at slice j is j when P is empty, else the smallest t ≥ j where some element of P
  occurs — the next block may start at the earliest element of the previous one, so elements
  within one block may come in any order.
* T_1 = P_1^1 and T_i = P_i^{match(T_{i-1})}; mm = Σ(|A_i| − |T_i|) / Σ|A_i| × 100 %. When E1
  emitted no element at all there is nothing E2 could miss: mm = 0.

Elements are compared as whole bindings with RDF-term equality (numbers by value), the same
equality as every other comparison (:mod:`rsp_sdk.compare.relations`).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from itertools import permutations

from pydantic import BaseModel, Field

from rsp_sdk.compare.relations import BindingKey, RelationStream
from rsp_sdk.compare.vocab import Partition as Partition
from rsp_sdk.model.profile import Profile, ReportPolicy


def partition_for(profile: Profile) -> Partition:
    """Eager (content-change) engines output element by element; the others periodically."""
    eager = ReportPolicy.CONTENT_CHANGE in profile.report and not (
        ReportPolicy.WINDOW_CLOSE in profile.report or ReportPolicy.PERIODIC in profile.report
    )
    return Partition.ELEMENT if eager else Partition.RELATION


def blocks(stream: RelationStream, partition: Partition) -> list[list[BindingKey]]:
    """The output partition of a relation stream (empty relations are empty blocks)."""
    if partition is Partition.ELEMENT:
        return [[k] for k in stream.elements()]
    return [list(rel.rows) for rel in stream.relations]


class MismatchResult(BaseModel):
    """mm(E1, E2): the share of E1's output that E2 does not produce in order."""

    e1: str
    e2: str
    partition: Partition
    blocks: int
    elements: int = Field(description="Σ|A_i|: elements in E1's output")
    unmatched: int = Field(description="Σ(|A_i| − |T_i|)")
    mm_percent: float
    first_unmatched_block: int | None = Field(
        default=None, description="0-based index of the first block with |T_i| < |A_i|"
    )


def mismatch_blocks(
    a_blocks: Sequence[Sequence[BindingKey]], o_e2: Sequence[BindingKey]
) -> tuple[int, int, int | None]:
    """(Σ|A_i|, Σ(|A_i| − |T_i|), first block index with a loss) for blocks of E1 vs O_E2."""
    positions: dict[BindingKey, list[int]] = {}
    for t, b in enumerate(o_e2):
        positions.setdefault(b, []).append(t)
    j = 0
    total = lost = 0
    first_loss: int | None = None
    for i, block in enumerate(a_blocks):
        # T_i = P_i^j: elements of A_i occurring at an index >= j
        remainder = [a for a in block if a in positions and positions[a][-1] >= j]
        total += len(block)
        if len(remainder) < len(block):
            lost += len(block) - len(remainder)
            if first_loss is None:
                first_loss = i
        if remainder:
            j = min(positions[a][bisect.bisect_left(positions[a], j)] for a in remainder)
    return total, lost, first_loss


def mismatch(
    e1: RelationStream,
    e2: RelationStream,
    *,
    partition: Partition,
    e1_name: str = "E1",
    e2_name: str = "E2",
) -> MismatchResult:
    """mm(E1, E2, Q, R) with E1's output cut by ``partition``."""
    a_blocks = blocks(e1, partition)
    total, lost, first = mismatch_blocks(a_blocks, e2.elements())
    return MismatchResult(
        e1=e1_name,
        e2=e2_name,
        partition=partition,
        blocks=len(a_blocks),
        elements=total,
        unmatched=lost,
        mm_percent=100.0 * lost / total if total else 0.0,
        first_unmatched_block=first,
    )


class Comparability(BaseModel):
    """comp(𝓔, Q, R, ε): every ordered pair of engines mismatches by at most ε percent."""

    epsilon_percent: float
    comparable: bool
    max_mm_percent: float
    pairs: list[MismatchResult]


def comparability(
    outputs: Mapping[str, tuple[RelationStream, Partition]], epsilon_percent: float
) -> Comparability:
    """Check comp over all ordered pairs (mm is not symmetric, so both directions count)."""
    pairs = [
        mismatch(outputs[a][0], outputs[b][0], partition=outputs[a][1], e1_name=a, e2_name=b)
        for a, b in permutations(sorted(outputs), 2)
    ]
    return comparability_of(pairs, epsilon_percent)


def comparability_of(pairs: list[MismatchResult], epsilon_percent: float) -> Comparability:
    """comp from the ordered pairs' mismatches alone: a caller that kept the pairs of an
    earlier computation (the matrix's mismatch.parquet) need not load the outputs again."""
    worst = max((p.mm_percent for p in pairs), default=0.0)
    return Comparability(
        epsilon_percent=epsilon_percent,
        comparable=worst <= epsilon_percent,
        max_mm_percent=worst,
        pairs=pairs,
    )
