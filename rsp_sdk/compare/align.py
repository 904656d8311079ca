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
Long outputs are first cut at *anchors* — relations equal on both sides and unique on each —
and the blocks between anchors are aligned one by one; only a block still beyond ``max_cells``
falls back to YABench's positional pairing, and says so.
"""

from __future__ import annotations

import bisect
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


def _anchors(
    expected: Sequence[Counter[BindingKey]], actual: Sequence[Counter[BindingKey]]
) -> list[tuple[int, int]]:
    """Pairs of equal non-empty relations that occur once on each side, in increasing order
    on both (the longest such chain, as ``patience diff`` finds it)."""

    def unique(side: Sequence[Counter[BindingKey]]) -> dict[frozenset[tuple[BindingKey, int]], int]:
        seen: dict[frozenset[tuple[BindingKey, int]], int] = {}
        for idx, bag in enumerate(side):
            if bag:
                key = frozenset(bag.items())
                seen[key] = -1 if key in seen else idx
        return {k: v for k, v in seen.items() if v >= 0}

    in_actual = unique(actual)
    pairs = sorted((i, in_actual[k]) for k, i in unique(expected).items() if k in in_actual)
    # longest chain increasing in j (pairs are sorted by i)
    tails: list[int] = []  # tails[k]: index in pairs of the chain of length k+1 ending lowest
    tail_js: list[int] = []  # the j of each tail, for bisection
    back: list[int] = [-1] * len(pairs)
    for p, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tail_js, j)
        back[p] = tails[pos - 1] if pos > 0 else -1
        if pos == len(tails):
            tails.append(p)
            tail_js.append(j)
        else:
            tails[pos] = p
            tail_js[pos] = j
    chain: list[tuple[int, int]] = []
    p = tails[-1] if tails else -1
    while p >= 0:
        chain.append(pairs[p])
        p = back[p]
    return chain[::-1]


def align(
    expected: Sequence[Counter[BindingKey]],
    actual: Sequence[Counter[BindingKey]],
    *,
    allow_groups: bool,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> Alignment:
    """Align actual relations to expected relations (see module docstring).

    Small problems are solved exactly by the dynamic programme. Beyond ``max_cells``, relations
    equal on both sides and unique on each (anchors, as in patience diff) cut the problem into
    blocks solved one by one; a block still too large is paired by position, with a note.
    """
    n, m = len(expected), len(actual)
    if n * m <= max_cells:
        return _dp(expected, actual, allow_groups=allow_groups, max_cells=max_cells)
    groups: list[list[int]] = [[] for _ in range(n)]
    out = Alignment(groups, [])
    i0 = j0 = 0
    for ai, aj in [*_anchors(expected, actual), (n, m)]:
        block = _dp(expected[i0:ai], actual[j0:aj], allow_groups=allow_groups, max_cells=max_cells)
        for di, grp in enumerate(block.groups):
            groups[i0 + di] = [j0 + dj for dj in grp]
        out.unassigned += [j0 + dj for dj in block.unassigned]
        out.positional |= block.positional
        out.notes += block.notes
        if ai < n:
            groups[ai] = [aj]
        i0, j0 = ai + 1, aj + 1
    return out


def _dp(
    expected: Sequence[Counter[BindingKey]],
    actual: Sequence[Counter[BindingKey]],
    *,
    allow_groups: bool,
    max_cells: int,
) -> Alignment:
    n, m = len(expected), len(actual)
    if n == 0 or m == 0:
        return Alignment([[] for _ in range(n)], list(range(m)))
    if n * m > max_cells:
        return _positional(
            n,
            m,
            f"{n}×{m} relations between anchors exceed the alignment budget ({max_cells} "
            "cells): paired by position there, as YABench does",
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
