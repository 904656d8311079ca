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

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._keys: dict[str, threading.Lock] = {}
        self.computed = 0
        self.reused = 0

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
    ) -> tuple[pa.Table, str]:
        """(expected table, cache key)."""
        from rsp_sdk.csrbench import judge_t0s

        t0s = judge_t0s(stream, spec, profile)
        statics = [str(s) for s in static or []]
        key = oracle_key(stream_sha256, spec, profile, t0s, statics)
        target = self.store.expected_dir(key) / "expected.parquet"
        with self._key_lock(key):
            if target.exists():
                self.reused += 1
                return pq.read_table(target), key
            from rsp_sdk.oracle import expected as oracle_expected  # Spark: only when needed

            table = oracle_expected(stream, spec, profile, t0s=t0s, static=static or ())
            inputs: dict[str, Any] = {
                "stream_sha256": stream_sha256,
                "query": spec.name,
                "profile": profile.name,
                "t0s": t0s,
                "static": statics,
            }
            with atomic_path(target.parent / "inputs.json") as tmp:
                tmp.write_text(json.dumps(inputs, indent=2) + "\n")
            with atomic_path(target) as tmp:
                pq.write_table(table, tmp)
            self.computed += 1
            return table, key
