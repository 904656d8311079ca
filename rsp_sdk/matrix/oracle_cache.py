"""The oracle's answers, computed once per (stream, query, profile, t0 candidates).

Every runtime and repetition of an engine, and every engine sharing a profile, is judged
against the same expected output; computing it once (in the one Spark session of this process)
and keeping it under ``RESULTS/expected/<key>/`` keyed by its inputs' hash makes a rerun or a
larger matrix pay for the oracle only on new inputs.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rsp_sdk.compare.parts import ExpectedTable, write_parts
from rsp_sdk.matrix.plan import canonical
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.profile import Profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.util.atomic import atomic_path


def oracle_key(
    stream_sha256: str, spec: QuerySpec, profile: Profile, t0s: list[int] | None, static: list[str]
) -> str:
    doc = {
        "stream": stream_sha256,
        "query": canonical(spec.model_dump(mode="python", exclude={"source"})),
        "profile": canonical(profile),
        "t0s": t0s,
        "static": static,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class OracleCache:
    """``expected(...)`` from ``RESULTS/expected/`` or, the first time, from the oracle."""

    def __init__(
        self, store: Store, *, evaluator: str = "auto", spark_master: str | None = None
    ) -> None:
        self.store = store
        self.evaluator = evaluator  # the oracle options of the command (--evaluator, …)
        self.spark_master = spark_master
        self._lock = threading.Lock()
        self._keys: dict[str, threading.Lock] = {}
        self.computed = 0
        self.reused = 0
        # the oracle's work shared by the profiles of one stream (the last one seen: a matrix
        # runs a stream's cells together, and a stream's relations can be large)
        self._shared: tuple[tuple[str, tuple[str, ...]], Any] | None = None
        # why the oracle failed on a key in this process: the other cells sharing the key are
        # told at once instead of computing it again (an out-of-heap job fails after minutes,
        # and takes the session with it each time); a rerun, a new process, tries again
        self._failed: dict[str, str] = {}

    def session_died(self) -> bool:
        """True when the oracle's Spark JVM died (its OutOfMemoryError, a kill) during the last
        judgement; the dead session and the work shared through it are then dropped, so the
        next judgement starts a new session instead of failing at once like every later one."""
        from rsp_sdk.oracle.spark import forget_dead_session

        if not forget_dead_session():
            return False
        with self._lock:
            self._shared = None  # its DataFrames belonged to the dead session
        return True

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._keys.setdefault(key, threading.Lock())

    def expected(
        self,
        stream: Path,
        stream_sha256: str,
        spec: QuerySpec,
        profile: Profile,
        static: list[Path] | None = None,
    ) -> tuple[ExpectedTable, str, dict[int, int] | None]:
        """(expected table, cache key, candidate → class representative).

        The table holds the rows of each t0 class representative only
        (``plan_job(...).run_classes()``): a verdict ignores time, so the representatives
        decide it (``judge_run(representative_of=...)``). Copying every row to every member, as
        ``expected()`` does, multiplies the table by the class sizes — thousands of candidates
        on YABench's 1 ms streams, past 2 GiB of bindings and 18 GB of RAM on a 10 k-triple
        join. A folder written before classes were kept has no ``classes.parquet``: its table
        is the full one (mapping None). A large table is written and read in parts of whole
        classes (``ExpectedTable``).
        """
        from rsp_sdk.csrbench import judge_t0s

        t0s = judge_t0s(stream, spec, profile)
        statics = [str(s) for s in static or []]
        key = oracle_key(stream_sha256, spec, profile, t0s, statics)
        folder = self.store.expected_dir(key)
        target, classes = folder / "expected.parquet", folder / CLASSES_FILE
        with self._key_lock(key):
            if target.exists():
                self.reused += 1
                return ExpectedTable(target), key, _read_classes(classes)
            if key in self._failed:
                raise OracleFailedEarlier(
                    f"the oracle failed on the same inputs earlier in this run "
                    f"({self._failed[key]}); not computed again until the matrix is rerun"
                )
            inputs: dict[str, Any] = {
                "stream_sha256": stream_sha256,
                "query": spec.name,
                "profile": profile.name,
                "t0s": t0s,
                "static": statics,
            }
            try:
                return self._compute(key, inputs, stream, spec, profile, static or [])
            except Exception as exc:
                self._failed[key] = f"{type(exc).__name__}: {exc}"
                raise

    def _compute(
        self,
        key: str,
        inputs: dict[str, Any],
        stream: Path,
        spec: QuerySpec,
        profile: Profile,
        static: list[Path],
    ) -> tuple[ExpectedTable, str, dict[int, int] | None]:
        """The oracle's table for ``key``, written under ``RESULTS/expected/<key>/``."""
        from rsp_sdk.oracle import plan_job  # Spark: only when needed

        folder = self.store.expected_dir(key)
        target, classes = folder / "expected.parquet", folder / CLASSES_FILE
        job = plan_job(
            stream,
            spec,
            profile,
            t0s=inputs["t0s"],
            static=static,
            evaluator=self.evaluator,
            spark_master=self.spark_master,
            shared=self._shared_work(inputs["stream_sha256"], inputs["static"]),
            small_session=False,  # the session goes on to serve every stream of the run
        )
        t0_classes = job.classes
        mapping = pa.table(
            {"t0": t0_classes.candidates, "representative": t0_classes.representative}
        )
        with atomic_path(folder / "inputs.json") as tmp:
            tmp.write_text(json.dumps(inputs, indent=2) + "\n")
        with atomic_path(classes) as tmp:
            pq.write_table(mapping, tmp)
        with atomic_path(target) as tmp:  # last: its presence marks a finished entry
            write_parts(tmp, job.run_class_parts())
        self.computed += 1
        return ExpectedTable(target), key, _read_classes(classes)

    def _shared_work(self, stream_sha256: str, statics: list[str]) -> Any:
        """The ``SharedWork`` of this stream content and static data (profiles that need the
        same window contents of a query then get its relations computed once)."""
        from rsp_sdk.oracle.job import SharedWork

        ident = (stream_sha256, tuple(statics))
        with self._lock:
            if self._shared is None or self._shared[0] != ident:
                self._shared = (ident, SharedWork())
            return self._shared[1]


CLASSES_FILE = "classes.parquet"


class OracleFailedEarlier(RuntimeError):
    """The oracle already failed on these inputs in this process (the reason is in the text)."""


def _read_classes(path: Path) -> dict[int, int] | None:
    """candidate t0 → its class representative (None: no classes file, a full table)."""
    if not path.exists():
        return None
    t = pq.read_table(path)
    reps = t.column("representative").to_pylist()
    return dict(zip(t.column("t0").to_pylist(), reps, strict=True))
