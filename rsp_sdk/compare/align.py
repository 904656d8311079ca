"""Which actual relations answer which expected relation: an order-preserving alignment.

Per-window metrics need a pairing between the expected relations (one per report the engine
should make) and the relations the engine really emitted. YABench pairs them by position (the
k-th output answers the k-th window), which shifts every later window as soon as an engine
drops or adds one relation. We align instead: the pairing keeps both orders, maximises the number
of bindings the paired relations share (bag overlap), then the number of pairs, so a dropped
relation costs exactly one window, and an empty expected relation pairs with an empty output.
For tuple-driven engines one expected relation may be answered by several *consecutive* actual
relations (sub-timestamp splits); every part after the first must share a binding with it.

The dynamic programme runs row by row over the expected relations with numpy; the overlap matrix
is sparse (an inverted index from binding to the actual relations holding it), so the cost is
O(n·m) cheap vector operations plus the overlapping pairs, and O(n·m) bytes for the traceback.
Beyond ``max_cells`` it falls back to YABench's positional pairing and says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rsp_sdk.compare.relations import BindingKey

DEFAULT_MAX_CELLS = 60_000_000
_UP, _LEFT, _PAIR = 0, 1, 2


@dataclass
class Alignment:
    """``groups[i]``: indices of the actual relations answering expected relation ``i``."""

    groups: list[list[int]]
    unassigned: list[int]
    positional: bool = False
    notes: list[str] = field(default_factory=list)


def _overlaps(
    expected: Sequence[Counter[BindingKey]], actual: Sequence[Counter[BindingKey]]
) -> list[dict[int, int]]:
    index: dict[BindingKey, list[tuple[int, int]]] = {}
    for j, bag in enumerate(actual):
        for key, n in bag.items():
            index.setdefault(key, []).append((j, n))
    out: list[dict[int, int]] = []
    for bag in expected:
        row: dict[int, int] = {}
        for key, n in bag.items():
            for j, m in index.get(key, ()):
                row[j] = row.get(j, 0) + min(n, m)
        out.append(row)
    return out


def _positional(n: int, m: int, note: str) -> Alignment:
    groups = [[i] if i < m else [] for i in range(n)]
    return Alignment(groups, list(range(n, m)), positional=True, notes=[note])


def align(
    expected: Sequence[Counter[BindingKey]],
    actual: Sequence[Counter[BindingKey]],
    *,
    allow_groups: bool,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> Alignment:
    """Align actual relations to expected relations (see module docstring)."""
    n, m = len(expected), len(actual)
    if n == 0 or m == 0:
        return Alignment([[] for _ in range(n)], list(range(m)))
    if n * m > max_cells:
        return _positional(
            n,
            m,
            f"{n}×{m} relations exceed the alignment budget ({max_cells} cells): paired by "
            "position as YABench does",
        )
    overlaps = _overlaps(expected, actual)
    # Integer weights: one shared binding outweighs every pair bonus together (k > 2·pairs).
    k = 2 * (n + m + 1)
    empty_actual = np.array([not bag for bag in actual], dtype=bool)
    choice_s = np.empty((n, m + 1), dtype=np.int8)
    cont_g = np.zeros((n, m + 1), dtype=bool)
    s_prev = np.zeros(m + 1, dtype=np.int64)
    neg = np.iinfo(np.int64).min // 4
    for i in range(n):
        row = overlaps[i]
        w_new = np.full(m, 2, dtype=np.int64)
        if not expected[i]:
            w_new[empty_actual] += k  # empty vs empty is a perfect answer
        js = sorted(row)
        if js:
            idx = np.fromiter(js, dtype=np.int64, count=len(js))
            w_new[idx] += k * np.fromiter((row[j] for j in js), dtype=np.int64, count=len(js))
        g = np.empty(m + 1, dtype=np.int64)
        g[0] = neg
        g[1:] = s_prev[:-1] + w_new
        if allow_groups:
            for j in js:  # sequential fix-up only where a continuation is allowed
                cont = g[j] + k * row[j] + 1  # g index j == actual j-1 assigned to i
                if j > 0 and cont > g[j + 1]:
                    g[j + 1] = cont
                    cont_g[i, j + 1] = True
        t = np.maximum(s_prev, g)
        s = np.maximum.accumulate(t)
        choice = np.full(m + 1, _LEFT, dtype=np.int8)
        choice[s == s_prev] = _UP
        choice[s == g] = _PAIR
        choice[0] = _UP
        choice_s[i] = choice
        s_prev = s
    groups: list[list[int]] = [[] for _ in range(n)]
    unassigned: list[int] = []
    i, j, in_group = n, m, False
    while i > 0 and j > 0:
        if not in_group:
            c = choice_s[i - 1, j]
            if c == _UP:
                i -= 1
            elif c == _LEFT:
                unassigned.append(j - 1)
                j -= 1
            else:
                in_group = True
            continue
        groups[i - 1].append(j - 1)
        if cont_g[i - 1, j]:
            j -= 1
        else:
            i, j, in_group = i - 1, j - 1, False
    unassigned.extend(range(j - 1, -1, -1))
    for grp in groups:
        grp.reverse()
    unassigned.sort()
    return Alignment(groups, unassigned)
