"""Row-wise Arrow work on every core of the driver.

Arrow's compute kernels (regex rewrites, string joins, ``take``) run on one thread, and the
oracle's driver-side steps (binding JSON, decoding ids, the output's texts) are chains of them
over millions of rows while Spark's executors sit idle: at 21 M triples they were most of the
call on a two-core machine with one core unused. The kernels release the GIL, so a row-wise
step split into one slice per core and run in threads takes about 1/cores of the time; slicing
an array is free and the results are concatenated in order.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

# below this many rows one thread does it all: starting threads and concatenating results cost
# more than the work saved
PARALLEL_FROM = 200_000


def bounds(rows: int, *, min_rows: int | None = None) -> list[tuple[int, int]]:
    """[lo, hi) row ranges, one per core of Arrow's pool (one range for fewer than
    ``min_rows`` rows, default ``PARALLEL_FROM``, or one core)."""
    cores = max(1, pa.cpu_count())
    if cores < 2 or rows < (PARALLEL_FROM if min_rows is None else min_rows):
        return [(0, rows)]
    size = -(-rows // cores)
    return [(lo, min(lo + size, rows)) for lo in range(0, rows, size)]


def over_ranges(
    fn: Callable[[int, int], pa.Array], ranges: list[tuple[int, int]]
) -> list[pa.Array]:
    """``fn(lo, hi)`` of every range, in order: in threads (at most one per core) when there
    is more than one range, on this thread otherwise."""
    if len(ranges) < 2:
        return [fn(lo, hi) for lo, hi in ranges]
    threads = max(1, min(len(ranges), pa.cpu_count()))
    with ThreadPoolExecutor(threads, thread_name_prefix="rsp-oracle-rows") as pool:
        return list(pool.map(lambda r: fn(*r), ranges))


def map_rows(
    fn: Callable[[int, int], pa.Array], rows: int, *, min_rows: int | None = None
) -> pa.Array:
    """``fn(lo, hi)`` over row ranges covering ``rows``, in threads, concatenated in order:
    ``fn`` must compute rows [lo, hi) of a row-wise result."""
    ranges = bounds(rows, min_rows=min_rows)
    if len(ranges) == 1:
        return fn(0, rows)
    return pa.concat_arrays(over_ranges(fn, ranges))


def map_slices(
    fn: Callable[[pa.Array], pa.Array], array: pa.Array, *, min_rows: int | None = None
) -> pa.Array:
    """``fn`` of a row-wise step applied to slices of ``array`` in threads, concatenated."""
    return map_rows(lambda lo, hi: fn(array.slice(lo, hi - lo)), len(array), min_rows=min_rows)
