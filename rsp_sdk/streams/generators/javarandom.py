"""``java.util.Random``, vectorised with numpy.

YABench's generators draw from ``java.util.Random``; reproducing its 48-bit linear congruential
generator bit for bit lets ``rsp generate yabench --seed N`` produce the very stream YABench's Java
tool produces for the same seed. Drawing millions of values one by one in Python would take
seconds, so the k-th state is computed in closed form, S_k = a^k·S_0 + c·(a^(k-1) + … + 1)
mod 2^48, for a whole block at once (uint64 arithmetic wraps mod 2^64, a multiple of 2^48).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_A = np.uint64(0x5DEECE66D)
_C = np.uint64(0xB)
_MASK = np.uint64((1 << 48) - 1)
_INT31 = 1 << 31


def _affine_powers(n: int) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """A[i], C[i] with S_(i+1) = A[i]·S_0 + C[i] (mod 2^64), built by doubling."""
    a = np.empty(n, dtype=np.uint64)
    c = np.empty(n, dtype=np.uint64)
    a[0], c[0] = _A, _C
    filled = 1
    with np.errstate(over="ignore"):
        while filled < n:
            m = min(filled, n - filled)
            a_f, c_f = a[filled - 1], c[filled - 1]
            a[filled : filled + m] = a[:m] * a_f
            c[filled : filled + m] = a[:m] * c_f + c[:m]
            filled += m
    return a, c


class JavaRandom:
    """The subset of ``java.util.Random`` YABench uses: ``nextInt(bound)``, in bulk."""

    def __init__(self, seed: int) -> None:
        self._state = np.uint64((seed ^ 0x5DEECE66D) & ((1 << 48) - 1))

    def _next31(self, n: int) -> npt.NDArray[np.int64]:
        """The next n values of ``next(31)``, advancing the generator."""
        a, c = _affine_powers(n)
        with np.errstate(over="ignore"):
            states = (a * self._state + c) & _MASK
        self._state = states[-1]
        return (states >> np.uint64(17)).astype(np.int64)

    def next_ints(self, bound: int, count: int) -> npt.NDArray[np.int64]:
        """``count`` successive ``nextInt(bound)`` values, rejections included, as Java does."""
        if not 0 < bound < _INT31:
            raise ValueError(f"bound must be in 1..2^31-1, got {bound}")
        if count == 0:
            return np.empty(0, dtype=np.int64)
        if bound & (bound - 1) == 0:
            return (self._next31(count) * bound) >> 31
        # Java discards a draw whose modulo would be biased and draws again. Drawing exactly as
        # many raw values as are still needed consumes each one as Java would (accepted or
        # discarded), so the state stays exact without ever rewinding.
        out: list[npt.NDArray[np.int64]] = []
        need = count
        while need:
            raw = self._next31(need)
            val = raw % bound
            accepted = val[raw - val + (bound - 1) < _INT31]
            out.append(accepted)
            need -= len(accepted)
        return np.concatenate(out)
