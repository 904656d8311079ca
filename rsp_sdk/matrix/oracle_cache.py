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
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

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
        relation_times: Callable[[], list[int]] | None = None,
    ) -> Expected:
        """The expected table of the class representatives, its cache key and classes.

        The table holds the rows of each t0 class representative only
        (``plan_job(...).run_classes()``): a verdict ignores time, so the representatives
        decide it (``judge_run(representative_of=...)``). Copying every row to every member, as
        ``expected()`` does, multiplies the table by the class sizes — thousands of candidates
        on YABench's 1 ms streams, past 2 GiB of bindings and 18 GB of RAM on a 10 k-triple
        join. A folder written before classes were kept has no ``classes.parquet``: its table
        is the full one (mapping None). A large table is written and read in parts of whole
        classes (``ExpectedTable``).

        When the classes are too many to evaluate (``rsp_sdk.oracle.narrow``), the candidates
        are those reporting at the engine's ``relation_times`` (its output's application
        times), and ``narrowed`` says so; without such times, ``narrow.TooLarge``.
        """
        from rsp_sdk.csrbench import judge_t0s

        t0s = judge_t0s(stream, spec, profile)
        inputs = self._inputs(stream_sha256, spec, profile, t0s, static)
        cached = self._cached(inputs)
        if cached is not None:
            return cached
        job = self._plan(stream, spec, profile, inputs, static or [])
        too_large = self._too_large(job)
        if too_large is None:
            return self._computed(inputs, job)
        times = relation_times() if relation_times is not None else []  # sorted, distinct
        return self._narrowed(stream, stream_sha256, spec, profile, static, job, too_large, times)

    def _narrowed(
        self,
        stream: Path,
        stream_sha256: str,
        spec: QuerySpec,
        profile: Profile,
        static: list[Path] | None,
        job: Any,
        too_large: str,
        times: list[int],
    ) -> Expected:
        """``expected`` over the candidates reporting at the engine's relation ``times``."""
        from rsp_sdk.oracle import narrow

        kept, matched = narrow.consistent_t0s(profile, job.geom, job.candidates, times)
        if not kept:
            why = "carry no application time" if not times else "fall at no candidate's reports"
            raise narrow.TooLarge(
                f"{too_large}, and the engine's relations {why} to narrow the candidates by",
                expected="an engine stamping its relations with application time, or "
                "RSP_ORACLE_MAX_SCOPE raised",
            )
        n = len(job.candidates)
        note = {
            "enumerated": n,
            "kept": kept,
            "matched_times": matched,
            "relation_times": len(times),
            "why": f"{too_large}: judged against the candidates reporting at {matched:,} of "
            f"the engine's {len(times):,} relation times ({len(kept):,} of {n:,})",
        }
        inputs = self._inputs(stream_sha256, spec, profile, kept, static)
        inputs["narrowed"] = note
        cached = self._cached(inputs)
        if cached is None:
            job = self._plan(stream, spec, profile, inputs, static or [])
            still = self._too_large(job)
            if still is not None:
                raise narrow.TooLarge(f"{note['why']}, and {still}")
            cached = self._computed(inputs, job)
        return cached._replace(narrowed=note)

    @staticmethod
    def _inputs(
        stream_sha256: str,
        spec: QuerySpec,
        profile: Profile,
        t0s: list[int],
        static: list[Path] | None,
    ) -> dict[str, Any]:
        """What an expected output is keyed by (written beside it as inputs.json)."""
        statics = [str(s) for s in static or []]
        return {
            "key": oracle_key(stream_sha256, spec, profile, t0s, statics),
            "stream_sha256": stream_sha256,
            "query": spec.name,
            "profile": profile.name,
            "t0s": t0s,
            "static": statics,
        }

    def _cached(self, inputs: dict[str, Any]) -> Expected | None:
        """The stored entry of ``inputs``; an earlier failure on them in this process raised."""
        with self._key_lock(inputs["key"]):
            return self._stored(inputs["key"])

    def _stored(self, key: str) -> Expected | None:
        """``_cached`` under the key's lock."""
        folder = self.store.expected_dir(key)
        target, classes = folder / "expected.parquet", folder / CLASSES_FILE
        if target.exists():
            self.reused += 1
            return Expected(ExpectedTable(target), key, _read_classes(classes))
        if key in self._failed:
            raise OracleFailedEarlier(
                f"the oracle failed on the same inputs earlier in this run "
                f"({self._failed[key]}); not computed again until the matrix is rerun"
            )
        return None

    def _plan(
        self,
        stream: Path,
        spec: QuerySpec,
        profile: Profile,
        inputs: dict[str, Any],
        static: list[Path],
    ) -> Any:
        """The oracle's job for ``inputs`` (reports and classes enumerated, nothing run); a
        failure is remembered for the other cells sharing the inputs (``_cached``)."""
        from rsp_sdk.oracle import plan_job  # Spark: only when needed

        try:
            return plan_job(
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
        except Exception as exc:
            with self._lock:
                self._failed[inputs["key"]] = f"{type(exc).__name__}: {exc}"
            raise

    @staticmethod
    def _too_large(job: Any) -> str | None:
        """Why the job is too large to run (``rsp_sdk.oracle.narrow``), or None."""
        from rsp_sdk.oracle import narrow

        reps = job.classes.representatives
        scope = narrow.scope_triples(job.profile, job.geom, reps)
        limit = narrow.max_scope()
        if scope <= limit:
            return None
        return narrow.too_large_text(len(reps), len(job.candidates), scope, limit)

    def _computed(self, inputs: dict[str, Any], job: Any) -> Expected:
        """The oracle's table for ``inputs``, written under ``RESULTS/expected/<key>/`` (an
        entry another thread wrote meanwhile is read instead)."""
        key = inputs["key"]
        with self._key_lock(key):
            stored = self._stored(key)
            if stored is not None:
                return stored
            folder = self.store.expected_dir(key)
            target, classes = folder / "expected.parquet", folder / CLASSES_FILE
            try:
                t0_classes = job.classes
                mapping = pa.table(
                    {"t0": t0_classes.candidates, "representative": t0_classes.representative}
                )
                with atomic_path(folder / "inputs.json") as tmp:
                    doc = {k: v for k, v in inputs.items() if k != "key"}
                    tmp.write_text(json.dumps(doc, indent=2) + "\n")
                with atomic_path(classes) as tmp:
                    pq.write_table(mapping, tmp)
                with atomic_path(target) as tmp:  # last: its presence marks a finished entry
                    write_parts(tmp, job.run_class_parts())
            except Exception as exc:
                self._failed[key] = f"{type(exc).__name__}: {exc}"
                raise
            self.computed += 1
            return Expected(ExpectedTable(target), key, _read_classes(classes))

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


class Expected(NamedTuple):
    """An expected output of the cache: the table, its key, candidate → class representative
    (None: a full table), and how its candidates were narrowed (None: every candidate)."""

    table: ExpectedTable
    key: str
    classes: dict[int, int] | None
    narrowed: dict[str, Any] | None = None


class OracleFailedEarlier(RuntimeError):
    """The oracle already failed on these inputs in this process (the reason is in the text)."""


def _read_classes(path: Path) -> dict[int, int] | None:
    """candidate t0 → its class representative (None: no classes file, a full table)."""
    if not path.exists():
        return None
    t = pq.read_table(path)
    reps = t.column("representative").to_pylist()
    return dict(zip(t.column("t0").to_pylist(), reps, strict=True))
