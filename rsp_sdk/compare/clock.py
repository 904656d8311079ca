"""Application time → system time for one run, from the run's pushed-batch records.

YABench's delay compares when an engine *answered* with when the window *closed*, both on the
system clock and relative to the start of the stream. The expected output only knows
application time, so the run's feeder records tell us when each stretch of application time was
pushed: ``pushed.parquet`` holds one row per batch (``rsp_sdk.run.recorder``): its application
time range ``t_app_min_ms``/``t_app_max_ms`` and the system times ``t_sys_start_ns``/
``t_sys_end_ns`` (monotonic) of the push call, plus a ``phase`` — only the measured phase counts,
a warm-up stream is not the stream. (A single ``t_app_ms``/``t_sys_ns`` pair per batch works
too.) Each batch gives two points, (first app time, push start) and (last app time, push end);
between points time is interpolated linearly (the feeder paces linearly); before the first and
after the last point it is extrapolated with the run's mean pace, because windows still close
after the last batch (the end-of-input flush).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.errors import InputError

APP_START = ("t_app_min_ms", "t_app_ms")
SYS_START = ("t_sys_start_ns", "t_sys_ns")
MEASURED_PHASE = "measure"


@dataclass(frozen=True)
class TimeMap:
    """Piecewise-linear map from application ms to system ns, built from (app, sys) points."""

    app_ms: npt.NDArray[np.float64]
    sys_ns: npt.NDArray[np.float64]
    end_sys_ns: float  # when the last batch was pushed (end of input)

    @classmethod
    def from_points(cls, app_ms: Sequence[int], sys_ns: Sequence[int]) -> TimeMap:
        if len(app_ms) == 0 or len(app_ms) != len(sys_ns):
            raise ValueError("a time map needs at least one (t_app_ms, t_sys_ns) point")
        a = np.asarray(app_ms, dtype=np.float64)
        s = np.asarray(sys_ns, dtype=np.float64)
        order = np.lexsort((s, a))
        a, s = a[order], s[order]
        # Several batches can share an application instant: keep the first push of each.
        keep = np.concatenate(([True], np.diff(a) > 0))
        return cls(app_ms=a[keep], sys_ns=s[keep], end_sys_ns=float(s.max()))

    @classmethod
    def from_pushed(cls, table: pa.Table, *, source: Path | str = "pushed.parquet") -> TimeMap:
        """Build the map from a run's pushed-batch table (see module docstring for columns)."""
        names = table.column_names
        app_col = next((c for c in APP_START if c in names), None)
        sys_col = next((c for c in SYS_START if c in names), None)
        if app_col is None or sys_col is None:
            raise InputError(
                "pushed records lack the time columns",
                path=source,
                text=", ".join(names),
                expected=f"one of {list(APP_START)} and one of {list(SYS_START)}",
            )
        if "phase" in names:
            measured = table.filter(pc.equal(table.column("phase"), MEASURED_PHASE))
            table = measured if measured.num_rows else table
        pairs = [(app_col, sys_col)]
        if "t_app_max_ms" in names and "t_sys_end_ns" in names:
            pairs.append(("t_app_max_ms", "t_sys_end_ns"))
        points: list[tuple[int, int]] = []
        for app_name, sys_name in pairs:
            app = table.column(app_name).to_pylist()
            sys = table.column(sys_name).to_pylist()
            points += [(x, y) for x, y in zip(app, sys, strict=True) if None not in (x, y)]
        if not points:
            raise InputError("pushed records hold no batch", path=source)
        return cls.from_points([p[0] for p in points], [p[1] for p in points])

    @property
    def start_sys_ns(self) -> float:
        """System time at which the stream started (first push)."""
        return float(self.sys_ns[0])

    def _pace(self) -> float:
        """Mean ns of system time per ms of application time (1e6 when unknown)."""
        span = self.app_ms[-1] - self.app_ms[0]
        return float((self.sys_ns[-1] - self.sys_ns[0]) / span) if span > 0 else 1e6

    def sys_ns_at(self, t_app_ms: float) -> float:
        """System time (ns) at which the stream reached application time ``t_app_ms``."""
        if t_app_ms <= self.app_ms[0]:
            return float(self.sys_ns[0] - (self.app_ms[0] - t_app_ms) * self._pace())
        if t_app_ms >= self.app_ms[-1]:
            return float(self.sys_ns[-1] + (t_app_ms - self.app_ms[-1]) * self._pace())
        return float(np.interp(t_app_ms, self.app_ms, self.sys_ns))

    def relative_ms(self, t_sys_ns: float) -> float:
        """A system time as ms since the stream started."""
        return (t_sys_ns - self.start_sys_ns) / 1e6
