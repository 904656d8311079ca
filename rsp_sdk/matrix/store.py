"""``RESULTS/``: where a matrix keeps what it ran (docs/matrix-results.md is the contract).

A cell is done iff ``cells/<key>/cell.json`` exists: it is written last, atomically, after the
run directory and the judgement, so a matrix killed at any moment leaves either a finished cell
or a directory without ``cell.json`` — a killed cell, set aside under ``killed/`` and rerun.
``cells.parquet`` and ``summary.json`` are derived from the ``cell.json`` files and rebuilt
after every run. ``matrix.json`` marks a directory the matrix wrote: nothing else is ever
replaced or deleted.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.parquet as pq

from rsp_sdk.errors import InputError
from rsp_sdk.matrix.identity import reconcile
from rsp_sdk.matrix.lock import LOCK, OWNER
from rsp_sdk.matrix.plan import Cell
from rsp_sdk.matrix.spec import MATRIX_FORMAT, MatrixSpec
from rsp_sdk.util.atomic import atomic_path
from rsp_sdk.util.outdir import MARKER

CELL_COLUMNS: dict[str, pa.DataType] = {
    "key": pa.string(),
    "label": pa.string(),
    "spec": pa.string(),
    "group": pa.string(),
    "engine": pa.string(),
    "variant": pa.string(),
    "adapter_version": pa.string(),
    "runtime": pa.string(),
    "query": pa.string(),
    "params": pa.string(),
    "stream": pa.string(),
    "stream_sha256": pa.string(),
    "rate": pa.float64(),
    "feeding": pa.string(),
    "repetition": pa.int64(),
    "profile": pa.string(),
    "state": pa.string(),
    "reason": pa.string(),
    "verdict": pa.string(),
    "outcome": pa.string(),
    "t0_ms": pa.int64(),
    "divergence": pa.string(),
    "divergence_detail": pa.string(),
    "relations": pa.int64(),
    "rows": pa.int64(),
    "precision": pa.float64(),
    "recall": pa.float64(),
    "delay_ms_p50": pa.float64(),
    "triples_pushed": pa.int64(),
    "rate_achieved": pa.float64(),
    "engine_time_s": pa.float64(),
    "time_per_triple_us": pa.float64(),
    "latency_ms_p50": pa.float64(),
    "latency_ms_p95": pa.float64(),
    "latency_ms_max": pa.float64(),
    "peak_rss_mb": pa.float64(),
    "peak_heap_mb": pa.float64(),
    "mcr_mb_s": pa.float64(),
    "cpu_mean_pct": pa.float64(),
    "threads_max": pa.float64(),
    "gc_count": pa.float64(),
    "wall_s": pa.float64(),
    "started_at": pa.string(),
    "run_dir": pa.string(),
    # added after the first layout (older cell.json files: null)
    "gracious_precision": pa.float64(),
    "gracious_recall": pa.float64(),
    "final_result_ms": pa.float64(),
    "artifacts": pa.string(),
    "time_scale": pa.float64(),  # feeding time-scale: tells its cells apart (rate is None)
    "instances": pa.int64(),  # concurrency axis: simultaneous copies of the query
    # CityBench's latency: first result naming an observation minus its push (obslatency)
    "obs_latency_ms_p50": pa.float64(),
    "obs_latency_ms_p95": pa.float64(),
    "obs_latency_ms_max": pa.float64(),
    # the t0 candidates were narrowed to the engine's relation times, and why (oracle.narrow)
    "t0_narrowed": pa.string(),
}
CELLS_SCHEMA = pa.schema([pa.field(n, t) for n, t in CELL_COLUMNS.items()])


class Store:
    """One results directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def marker(self) -> Path:
        return self.root / "matrix.json"

    def cell_dir(self, key: str) -> Path:
        return self.root / "cells" / key

    def cell_json(self, key: str) -> Path:
        return self.cell_dir(key) / "cell.json"

    def expected_dir(self, key: str) -> Path:
        return self.root / "expected" / key

    # ---- opening ------------------------------------------------------------------------

    def open(self, spec: MatrixSpec, spec_path: Path, cells: list[Cell]) -> None:
        """Claim ``root`` (new, empty — or holding only the output marker of
        ``rsp_sdk.util.outdir`` — or one of ours) and record the spec and plan."""
        self.check_claim()
        self.root.mkdir(parents=True, exist_ok=True)
        previous: list[dict[str, Any]] = []
        if self.marker.exists():
            previous = json.loads(self.marker.read_text()).get("plan", [])
        planned = {c["key"]: c for c in previous}
        planned.update({c.key: _plan_row(c) for c in cells})
        doc = {
            "format": MATRIX_FORMAT,
            "spec": spec.model_dump(mode="json", by_alias=True),
            "spec_path": str(spec_path),
            "plan": list(planned.values()),
            "created": _now(),
        }
        with atomic_path(self.marker) as tmp:
            tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        if not (self.root / "machine.json").exists():
            with atomic_path(self.root / "machine.json") as tmp:
                tmp.write_text(json.dumps(machine(), indent=2) + "\n", encoding="utf-8")

    def check_claim(self) -> None:
        """``InputError`` unless ``root`` is new, empty (but for the output marker of
        ``rsp_sdk.util.outdir`` or a results lock) or ours — checked before anything is
        written in it, the lock included."""
        ignored = {MARKER, LOCK, OWNER}
        foreign = self.root.exists() and any(p.name not in ignored for p in self.root.iterdir())
        if foreign and not self.marker.exists():
            raise InputError(
                "the results directory exists and was not written by rsp matrix",
                path=self.root,
                expected="a new directory, or one holding matrix.json",
            )

    # ---- cells --------------------------------------------------------------------------

    def done(self, key: str) -> dict[str, Any] | None:
        path = self.cell_json(key)
        if not path.exists():
            return None
        row: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return row

    def run_finished(self, key: str) -> bool:
        """The cell's engine run ended ok (status.json) but cell.json was never written: the
        matrix was killed after the run, while measuring or judging it."""
        status = self.cell_dir(key) / "status.json"
        if self.cell_json(key).exists() or not status.exists():
            return False
        try:
            return bool(json.loads(status.read_text(encoding="utf-8")).get("state") == "ok")
        except ValueError:  # cut short while being written: not a finished run
            return False

    def set_aside(self, key: str) -> Path | None:
        """Move a killed cell's directory (no cell.json) out of the way; returns where."""
        d = self.cell_dir(key)
        if not d.exists() or self.cell_json(key).exists():
            return None
        target = self.root / "killed" / f"{key}-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S%f}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(d, target)
        return target

    def retire(self, key: str) -> None:
        """A finished cell to run again (--retry-failed): kept under retried/, never deleted."""
        d = self.cell_dir(key)
        target = self.root / "retried" / f"{key}-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S%f}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(d, target)

    def finish(self, key: str, row: dict[str, Any]) -> None:
        """cell.json, last and atomically: from now on the cell counts as done."""
        with atomic_path(self.cell_json(key)) as tmp:
            tmp.write_text(json.dumps(row, indent=2, default=str) + "\n", encoding="utf-8")

    def plan(self) -> list[dict[str, Any]]:
        """matrix.json's plan: the union of every invocation's (older keys first)."""
        if not self.marker.exists():
            return []
        plan: list[dict[str, Any]] = json.loads(self.marker.read_text()).get("plan", [])
        return plan

    def rows(self) -> list[dict[str, Any]]:
        """Every finished cell of this directory, in plan order when known."""
        order: dict[str, int] = {}
        if self.marker.exists():
            plan = json.loads(self.marker.read_text()).get("plan", [])
            order = {c["key"]: i for i, c in enumerate(plan)}
        rows = []
        for path in sorted((self.root / "cells").glob("*/cell.json")):
            row = json.loads(path.read_text(encoding="utf-8"))
            rows.append({**row, "run_dir": run_dir_of(self.root, row)})
        return sorted(rows, key=lambda r: order.get(r["key"], len(order)))

    def current_rows(self) -> list[dict[str, Any]]:
        """``rows`` with each cell once: a cell re-keyed on a resumed matrix has a cell.json
        per key; its newest stands for it (``rsp_sdk.matrix.identity``)."""
        return reconcile(self.plan(), self.rows(), _same).current

    def write_tables(self, rows: list[dict[str, Any]]) -> Path:
        """cells.parquet from the cell.json rows (derived: rebuilt every time)."""
        cols = {n: [r.get(n) for r in rows] for n in CELL_COLUMNS}
        table = pa.Table.from_pydict(cols, schema=CELLS_SCHEMA)
        target = self.root / "cells.parquet"
        with atomic_path(target) as tmp:
            pq.write_table(table, tmp)
        return target


def run_dir_of(root: Path, row: dict[str, Any]) -> str | None:
    """A cell's run directory relative to ``root``: the recorded ``run_dir``, or the cell's own
    ``cells/<key>/`` when that one is gone but this one holds a run (status.json). A cell run
    always writes into ``cells/<key>/``; a folder re-keyed by hand (ren16: 43 cell directories
    renamed to their new key, cell.json's run_dir still naming the old one) moved it there."""
    recorded = row.get("run_dir")
    if not recorded or (root / recorded).is_dir():
        return recorded if isinstance(recorded, str) else None
    own = f"cells/{row['key']}"
    return own if (root / own / "status.json").is_file() else str(recorded)


def _same(row: dict[str, Any]) -> dict[str, Any]:
    return row


def _plan_row(cell: Cell) -> dict[str, Any]:
    return cell.model_dump(
        mode="json", exclude={"query_spec", "feeder", "profile_json", "engine_config", "earlier"}
    )


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _version(cmd: list[str]) -> str | None:
    exe = shutil.which(cmd[0])
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, *cmd[1:]], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else None


def machine() -> dict[str, Any]:
    """What the numbers were measured on (asv's machine.json), written once per results dir."""
    return {
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "java": _version(["java", "-version"]),
        "node": _version(["node", "--version"]),
        "recorded": _now(),
    }
