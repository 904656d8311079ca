"""The run directory: everything needed to understand and re-check a run, years later.

::

    RUN_DIR/config.json       what ran: engine, runtime, driver (classpath, JVM flags), query
                              (spec and the text as rendered), stream file + sha256, feeder
                              config, versions, and the clock anchor (one wall-clock time taken
                              together with a monotonic time; all t_sys_ns are monotonic)
    RUN_DIR/status.json       "running" while it runs; then ok / failed / interrupted with the
                              error and the engine's own message and trace
    RUN_DIR/pushed.parquet/   one row per batch: phase, stream, count, t_app range, due and
                              system times of the push
    RUN_DIR/outputs.parquet/  RESULT_SCHEMA: query, seq, t_sys_ns, t_app_ms, binding (SPARQL JSON;
                              null binding = empty relation)
    RUN_DIR/perf.parquet/     sampler rows (RSS, CPU %, threads, heap, GC)
    RUN_DIR/logs/             engine stdout/stderr

The tables are *directories of part files* (``part-00000.parquet`` …), each a complete Parquet
file written atomically (temp name starting with ``.``, then rename). A Parquet footer exists
only once a file is closed, so a single growing file would be unreadable after a crash; with
part files a run killed half-way keeps every row flushed so far (flushes happen every
``flush_interval_s``, default 1 s). ``pyarrow.dataset.dataset(path)``, ``pyarrow.parquet.
read_table(path)`` and Spark's ``spark.read.parquet(path)`` read such a directory as one table
(they skip names starting with ``.`` or ``_``). ``read_table`` here does the same with the schema
guaranteed even for an empty table.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pydantic import BaseModel

from rsp_sdk.engine.session import ResultEvent
from rsp_sdk.model.results import RESULT_SCHEMA, row_to_json
from rsp_sdk.util.atomic import atomic_path

PUSHED_SCHEMA = pa.schema(
    [
        pa.field("phase", pa.string(), nullable=False),
        pa.field("stream", pa.string(), nullable=False),
        pa.field("batch", pa.int64(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("t_app_min_ms", pa.int64(), nullable=False),
        pa.field("t_app_max_ms", pa.int64(), nullable=False),
        pa.field("t_due_ns", pa.int64(), nullable=True),
        pa.field("t_sys_start_ns", pa.int64(), nullable=False),
        pa.field("t_sys_end_ns", pa.int64(), nullable=False),
    ]
)

PERF_SCHEMA = pa.schema(
    [
        pa.field("t_sys_ns", pa.int64(), nullable=False),
        pa.field("processes", pa.int64(), nullable=False),
        pa.field("rss_bytes", pa.int64(), nullable=False),
        pa.field("cpu_percent", pa.float64(), nullable=False),
        pa.field("threads", pa.int64(), nullable=False),
        pa.field("heap_used", pa.int64(), nullable=True),
        pa.field("heap_committed", pa.int64(), nullable=True),
        pa.field("gc_count", pa.int64(), nullable=True),
        pa.field("gc_time_ms", pa.int64(), nullable=True),
    ]
)

TABLES = {"pushed": PUSHED_SCHEMA, "outputs": RESULT_SCHEMA, "perf": PERF_SCHEMA}


def read_table(run_dir: Path | str, name: str) -> pa.Table:
    """One of a run's tables (``pushed``, ``outputs``, ``perf``), all part files together."""
    path = Path(run_dir) / f"{name}.parquet"
    schema = TABLES[name]
    if not path.exists():
        return schema.empty_table()
    return ds.dataset(path, schema=schema, format="parquet").to_table()


class _PartWriter:
    def __init__(self, directory: Path, schema: pa.Schema) -> None:
        self.dir = directory
        self.schema = schema
        self.rows: list[dict[str, Any]] = []
        self.parts = 0
        directory.mkdir(parents=True, exist_ok=True)

    def flush(self, *, ensure_one: bool = False) -> None:
        if not self.rows and not (ensure_one and self.parts == 0):
            return
        table = pa.Table.from_pylist(self.rows, schema=self.schema)
        with atomic_path(self.dir / f"part-{self.parts:05d}.parquet") as tmp:
            pq.write_table(table, tmp)
        self.parts += 1
        self.rows = []


class RunStatus(BaseModel):
    state: str  # running | ok | failed | interrupted
    started_wall: str
    ended_wall: str | None = None
    duration_s: float | None = None
    error_type: str | None = None
    error: str | None = None
    verb: str | None = None
    engine_message: str | None = None
    engine_trace: str | None = None
    triples_pushed: int = 0
    batches_pushed: int = 0
    result_events: int = 0
    result_rows: int = 0
    samples: int = 0
    engine_pid: int | None = None
    runtime: str | None = None


class RunRecorder:
    """Writes one run directory; thread-safe (the sampler records from its own thread)."""

    def __init__(
        self, run_dir: Path, config: BaseModel | dict[str, Any], *, flush_interval_s: float = 1.0
    ) -> None:
        self.dir = Path(run_dir)
        if self.dir.exists() and any(self.dir.iterdir()):
            from rsp_sdk.errors import InputError

            raise InputError(
                "the run directory already exists and is not empty",
                path=self.dir,
                expected="a new or empty directory (runs are never overwritten)",
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "logs").mkdir(exist_ok=True)
        self._lock = threading.Lock()
        self._writers = {n: _PartWriter(self.dir / f"{n}.parquet", s) for n, s in TABLES.items()}
        self._seq: dict[str, int] = {}
        self._last_flush = time.monotonic()
        self.flush_interval_s = flush_interval_s
        self._started = time.monotonic()
        self.status = RunStatus(state="running", started_wall=_now())
        data = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
        self._write_json("config.json", data)
        self._write_json("status.json", self.status.model_dump(mode="json"))

    @property
    def log_dir(self) -> Path:
        return self.dir / "logs"

    def _write_json(self, name: str, data: Any) -> None:
        with atomic_path(self.dir / name) as tmp:
            tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")

    def engine_started(self, pid: int, runtime: str) -> None:
        """Note the engine host's pid (so anyone can check it is gone after the run)."""
        with self._lock:
            self.status.engine_pid = pid
            self.status.runtime = runtime
            self._write_json("status.json", self.status.model_dump(mode="json"))

    def pushed(
        self,
        *,
        phase: str,
        stream: str,
        batch: int,
        count: int,
        t_app_min_ms: int,
        t_app_max_ms: int,
        t_due_ns: int | None,
        t_sys_start_ns: int,
        t_sys_end_ns: int,
    ) -> None:
        with self._lock:
            self._writers["pushed"].rows.append(
                {
                    "phase": phase,
                    "stream": stream,
                    "batch": batch,
                    "count": count,
                    "t_app_min_ms": t_app_min_ms,
                    "t_app_max_ms": t_app_max_ms,
                    "t_due_ns": t_due_ns,
                    "t_sys_start_ns": t_sys_start_ns,
                    "t_sys_end_ns": t_sys_end_ns,
                }
            )
            self.status.triples_pushed += count
            self.status.batches_pushed += 1
        self.maybe_flush()

    def outputs(self, events: list[ResultEvent]) -> None:
        if not events:
            return
        with self._lock:
            rows = self._writers["outputs"].rows
            for ev in events:
                seq = self._seq.get(ev.query, 0)
                self._seq[ev.query] = seq + 1
                base = {
                    "query": ev.query,
                    "seq": seq,
                    "t_sys_ns": ev.t_sys_ns,
                    "t_app_ms": ev.t_app_ms,
                }
                if ev.empty:
                    rows.append({**base, "binding": None})
                else:
                    rows.extend({**base, "binding": row_to_json(ev.vars, r)} for r in ev.rows)
                    self.status.result_rows += len(ev.rows)
                self.status.result_events += 1
        self.maybe_flush()

    def perf(self, sample: dict[str, Any]) -> None:
        with self._lock:
            self._writers["perf"].rows.append(sample)
            self.status.samples += 1

    def maybe_flush(self) -> None:
        if time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            for w in self._writers.values():
                w.flush()
            self._last_flush = time.monotonic()

    def finish(self, state: str, error: BaseException | None = None) -> RunStatus:
        with self._lock:
            for w in self._writers.values():
                w.flush(ensure_one=True)
            st = self.status
            st.state = state
            st.ended_wall = _now()
            st.duration_s = round(time.monotonic() - self._started, 3)
            if error is not None:
                st.error_type = type(error).__name__
                st.error = str(error)
                st.verb = getattr(error, "verb", None)
                st.engine_message = getattr(error, "engine_message", None)
                trace = getattr(error, "engine_trace", None)
                st.engine_trace = trace[-20_000:] if trace else None
            self._write_json("status.json", st.model_dump(mode="json"))
            return st


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
