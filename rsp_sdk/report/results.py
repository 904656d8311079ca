"""Reading a matrix results folder (``rsp matrix run -o RESULTS``), and nothing else.

The report never starts an engine: everything it shows comes from the files the matrix wrote
(layout in docs/matrix-results.md). The truth about a cell is its ``cells/<key>/cell.json``
(written last, so its presence means the cell finished); ``cells.parquet`` is derived and may lag
behind an interrupted matrix, so the report reads the cell files. A cell planned in
``matrix.json`` without a ``cell.json`` is *missing* (the matrix was interrupted or is still
running) and the report lists it instead of failing. A matrix resumed after a change that
re-keyed its cells (adapter version, artifacts) holds some cells under two keys, in the plan and
in ``cells/``: each cell is counted once, by its axes (``rsp_sdk.matrix.identity``), over the
union of every invocation's plan that ``matrix.json`` keeps.

Per-cell tables (``windows.parquet``, the run directory's ``perf.parquet`` and
``pushed.parquet``) are read lazily, only by the sections that draw them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, ValidationError

from rsp_sdk.errors import InputError
from rsp_sdk.matrix.axes import axes_suffix, varying_axes, who
from rsp_sdk.matrix.identity import reconcile
from rsp_sdk.matrix.obslatency import with_observation_latency
from rsp_sdk.matrix.store import run_dir_of

#: Axes that, with the engine and runtime, identify a series of repetitions of one cell.
#: ``instances`` and ``time_scale`` are axes too: CityBench's x1 and x10 at time scales 1 and 10
#: are four series, not four repetitions of one.
SERIES_AXES = (
    "engine",
    "variant",  # two entries of one adapter in a spec (two heaps, two settings)
    "runtime",
    "query",
    "params",
    "stream",
    "rate",
    "feeding",
    "profile",
    "instances",
    "time_scale",
    "group",  # YABench's E3 and E4 run one query on one stream, as different experiments
)


#: windows.parquet as ``rsp_sdk.compare.yabench`` writes it → the names of the results layout
WINDOW_COLUMNS = {
    "expected_seq": "window",
    "window_open_ms": "open_ms",
    "window_close_ms": "close_ms",
    "triples_in_window": "triples",
    "expected_size": "expected_rows",
    "actual_size": "actual_rows",
}


class CellRecord(BaseModel):
    """One ``cell.json``: the cell's axes, outcome and metrics (null where not applicable)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    key: str
    label: str = ""
    spec: str = ""
    group: str | None = None
    engine: str
    variant: str | None = None
    adapter_version: str | None = None
    runtime: str
    query: str
    params: str | None = None
    stream: str | None = None
    stream_sha256: str | None = None
    rate: float | None = None
    feeding: str | None = None
    repetition: int = 1
    profile: str | None = None
    state: str = "ok"
    reason: str | None = None
    verdict: str = "not_judged"
    t0_ms: int | None = None
    divergence: str | None = None
    divergence_detail: str | None = None
    relations: int | None = None
    rows: int | None = None
    precision: float | None = None
    recall: float | None = None
    delay_ms_p50: float | None = None
    triples_pushed: int | None = None
    rate_achieved: float | None = None
    engine_time_s: float | None = None
    time_per_triple_us: float | None = None
    latency_ms_p50: float | None = None
    latency_ms_p95: float | None = None
    latency_ms_max: float | None = None
    obs_latency_ms_p50: float | None = None
    obs_latency_ms_p95: float | None = None
    obs_latency_ms_max: float | None = None
    peak_rss_mb: float | None = None
    peak_heap_mb: float | None = None
    mcr_mb_s: float | None = None
    cpu_mean_pct: float | None = None
    threads_max: float | None = None
    gc_count: float | None = None
    wall_s: float | None = None
    started_at: str | None = None
    run_dir: str | None = None
    gracious_precision: float | None = None
    gracious_recall: float | None = None
    final_result_ms: float | None = None
    artifacts: str | None = None  # JSON {file: sha256} of the engine's provisioned files
    instances: int = 1  # simultaneous copies of the query (concurrency axis)
    time_scale: float | None = None  # the feeding's time scale (None: not time-scaled)
    t0_narrowed: str | None = None  # judged on the t0 candidates at the engine's times: why

    @property
    def series(self) -> tuple[Any, ...]:
        """The cell without its repetition: repetitions of one series share a detail block."""
        return tuple(getattr(self, a) for a in SERIES_AXES)

    @property
    def column(self) -> str:
        return column_label(self.query, self.params, self.rate)

    @property
    def row(self) -> str:
        return who(self.model_dump(include={"engine", "variant", "runtime"}))


def series_id(series: tuple[Any, ...]) -> str:
    """The HTML anchor of a series' detail block (stable across reports of the same results)."""
    return "series-" + hashlib.sha256(repr(series).encode()).hexdigest()[:12]


def column_label(query: str, params: str | None, rate: float | None, axes: str = "") -> str:
    """The verdict grid's column: the query, with its parameters, the axes the spec varies
    (``axes``, from ``rsp_sdk.matrix.axes.axes_suffix``) and the rate when set.

    The matrix already names a template's cells ``q1[RANGE=PT1S]``: a parameter the name
    spells is not repeated (``q1[RANGE=PT1S] RANGE=PT1S`` filled every header of ren16)."""
    out = query
    if params and params not in ("{}", "null"):
        with contextlib.suppress(ValueError, AttributeError):
            pairs = [f"{k}={v}" for k, v in sorted(json.loads(params).items())]
            extra = [p for p in pairs if p not in query]
            out += " " + ",".join(extra) if extra else ""
    out += axes
    if rate is not None:
        out += f" @{rate:g}/s"
    return out


class PlannedCell(BaseModel):
    """A cell of ``matrix.json``'s plan (only the fields the missing-cells list shows)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    key: str
    label: str = ""
    engine: str = "?"
    variant: str | None = None
    runtime: str = "?"
    query: str = "?"
    params: str | None = None
    stream: str | None = None
    rate: float | None = None
    repetition: int | None = None
    instances: int = 1

    @property
    def column(self) -> str:
        return column_label(self.query, self.params, self.rate)

    @property
    def row(self) -> str:
        return who(self.model_dump(include={"engine", "variant", "runtime"}))


def _fields(row: BaseModel) -> dict[str, Any]:
    return row.model_dump()


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} is not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
        ) from None
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", path=path) from None


class Results:
    """A matrix results folder, validated on opening; per-cell tables read on demand."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._configs: dict[str, dict[str, Any]] = {}
        expected = "a folder written by `rsp matrix run SPEC -o RESULTS` (with matrix.json)"
        if not self.root.is_dir():
            raise InputError("results folder not found", path=self.root, expected=expected)
        matrix_path = self.root / "matrix.json"
        if not matrix_path.is_file():
            empty = not any(self.root.iterdir())
            raise InputError(
                "empty folder" if empty else "not a matrix results folder (no matrix.json)",
                path=self.root,
                expected=expected,
            )
        self.matrix: dict[str, Any] = _read_json(matrix_path, "matrix.json")
        if not isinstance(self.matrix, dict) or "plan" not in self.matrix:
            raise InputError(
                "matrix.json has no plan", path=matrix_path, expected='{"format", "spec", "plan"}'
            )
        machine = self.root / "machine.json"
        self.machine: dict[str, Any] = (
            _read_json(machine, "machine.json") if machine.is_file() else {}
        )
        # a resumed matrix keeps every key a cell ever had (plan rows and cell.json files):
        # each cell is counted once, by its axes (rsp_sdk.matrix.identity)
        seen = reconcile(
            [self._planned(i, c) for i, c in enumerate(self.matrix["plan"])],
            self._load_cells(),
            _fields,
        )
        self.cells: list[CellRecord] = seen.current
        #: one entry per planned cell: the newest key it was planned under
        self.planned: list[PlannedCell] = seen.planned
        self.missing: list[PlannedCell] = seen.missing
        self._done = {p.key for p in seen.done}
        #: cell.json files of a cell that has a newer one (an older key): on disk, not counted
        self.superseded: list[CellRecord] = seen.superseded
        #: counted cells whose result is under an older key than the newest one planned
        self.older_key: list[CellRecord] = seen.older_key
        #: the axes beside the query on which this matrix's cells differ (own grid columns)
        self.split_axes = varying_axes(
            [c.model_dump() for c in self.cells] + [p.model_dump() for p in self.missing]
        )
        if not self.cells:
            raise InputError(
                f"no finished cell ({len(self.planned)} planned, none has cells/<key>/cell.json)",
                path=self.root,
                expected="a matrix that ran at least one cell: `rsp matrix run SPEC -o RESULTS`",
            )

    def _planned(self, index: int, raw: Any) -> PlannedCell:
        try:
            return PlannedCell.model_validate(raw)
        except ValidationError as exc:
            raise InputError(
                f"plan entry {index} of matrix.json is not a cell: {exc.errors()[0]['msg']}",
                path=self.root / "matrix.json",
                expected="a cell dict with at least 'key'",
            ) from None

    def _load_cells(self) -> list[CellRecord]:
        out = []
        for path in sorted((self.root / "cells").glob("*/cell.json")):
            raw = _read_json(path, "cell.json")
            if isinstance(raw, dict):  # a cell recorded before CityBench's latency: from its run
                raw = with_observation_latency(raw, path.parent)
            try:
                out.append(CellRecord.model_validate(raw))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise InputError(
                    f"cell.json field {where!r}: {err['msg']}",
                    path=path,
                    expected="the cell.json columns of docs/matrix-results.md",
                ) from None
        out.sort(
            key=lambda c: (
                c.engine,
                c.variant or "",
                c.runtime,
                c.query,
                c.rate or 0,
                c.repetition,
                c.key,
            )
        )
        return out

    @property
    def spec_name(self) -> str:
        spec = self.matrix.get("spec") or {}
        name = spec.get("name") if isinstance(spec, dict) else None
        return str(name or self.matrix.get("spec_path") or self.root.name)

    @property
    def metrics(self) -> list[str] | None:
        """The metrics the spec asked for (None: matrix.json does not say)."""
        spec = self.matrix.get("spec")
        found = spec.get("metrics") if isinstance(spec, dict) else None
        return [str(m) for m in found] if isinstance(found, list) else None

    def progress(self) -> pd.DataFrame:
        """Per engine@runtime: cells planned, finished (cell.json written) and missing."""
        rows: dict[str, list[int]] = {}
        for p in self.planned:
            counts = rows.setdefault(p.row, [0, 0])
            counts[0] += 1
            counts[1] += p.key in self._done
        return pd.DataFrame(
            [[row, f"{f} of {n}", n - f] for row, (n, f) in rows.items()],
            columns=["engine@runtime", "finished of planned", "missing"],
        )

    def frame(self) -> pd.DataFrame:
        """Every finished cell as one row (the columns of cell.json)."""
        return pd.DataFrame([c.model_dump() for c in self.cells])

    def column(self, cell: CellRecord | PlannedCell) -> str:
        """``cell``'s verdict-grid column: its query, and the axes this matrix varies."""
        suffix = axes_suffix(cell.model_dump(), self.split_axes)
        return column_label(cell.query, cell.params, cell.rate, suffix)

    def series(self) -> dict[tuple[Any, ...], list[CellRecord]]:
        """Cells grouped by series (every axis but the repetition), in cell order."""
        out: dict[tuple[Any, ...], list[CellRecord]] = {}
        for c in self.cells:
            out.setdefault(c.series, []).append(c)
        return out

    def run_dir(self, cell: CellRecord) -> Path:
        found = run_dir_of(self.root, {"key": cell.key, "run_dir": cell.run_dir})
        return self.root / (found or f"cells/{cell.key}")

    def cell_dir(self, cell: CellRecord) -> Path:
        return self.root / "cells" / cell.key

    def config(self, cell: CellRecord) -> dict[str, Any]:
        """The run directory's config.json ({} when the cell never started a run)."""
        if cell.key not in self._configs:
            path = self.run_dir(cell) / "config.json"
            self._configs[cell.key] = _read_json(path, "config.json") if path.is_file() else {}
        return self._configs[cell.key]

    def table(self, cell: CellRecord, name: str) -> pd.DataFrame | None:
        """``windows`` (beside cell.json or in the run directory) or a run table (``perf``,
        ``pushed``, ``outputs``); None if absent or empty."""
        for base in (self.cell_dir(cell), self.run_dir(cell)):
            path = base / f"{name}.parquet"
            if path.exists():
                break
        else:
            return None
        try:
            frame: pd.DataFrame = pq.read_table(path).to_pandas()
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable Parquet table: {exc}", path=path) from None
        if name == "windows":  # compare.yabench's column names → the layout's
            frame = frame.rename(columns=WINDOW_COLUMNS)
        return frame if len(frame) else None

    def optional_table(self, name: str) -> pd.DataFrame | None:
        """A folder-wide table (``mismatch``) when the matrix wrote one."""
        path = self.root / f"{name}.parquet"
        if not path.exists():
            return None
        try:
            frame: pd.DataFrame = pq.read_table(path).to_pandas()
        except (OSError, ValueError) as exc:
            raise InputError(f"unreadable Parquet table: {exc}", path=path) from None
        return frame if len(frame) else None
