"""Runtime speed: 10 M triples pushed into the Java fixture engine's no-op sink through each JVM
runtime, against the limit — a pure-Java loop pushing the same packed batches through the same
Bridge and driver — measured in the same run; and the sampler's own CPU cost (< 2 % target).

Targets: JPype ≥ 1.5 M triples/s, py4j ≥ 0.8 M triples/s.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Result, bench

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STREAM = "http://rsp-sdk.org/bench/stream"
DISTINCT = 1_000_000  # distinct triples, packed once
PASSES = 10  # pushed 10 times: 10 M triples
BATCH = 100_000


def _batches() -> list[bytes]:
    import pyarrow as pa

    from rsp_sdk.engine.batch import fixed_bounds, pack_lines, slice_batches
    from rsp_sdk.testing import Scenario

    t = Scenario(stream=STREAM, triples=DISTINCT, span_ms=DISTINCT).table()
    assert isinstance(t, pa.Table)
    return [
        b.packed
        for b in slice_batches(pack_lines(t), t["t_app_ms"], fixed_bounds(t.num_rows, BATCH))
    ]


def _session(runtime: str, cache: object, workdir: Path):  # type: ignore[no-untyped-def]
    from rsp_sdk.runtime import get_runtime
    from tests.fixtures.adapters import ToyJavaAdapter

    session = ToyJavaAdapter().open(get_runtime(runtime), workdir, cache=cache)  # type: ignore[arg-type]
    session.register_stream(STREAM)
    session.register_query(f"SINK FROM <{STREAM}>", name="sink")
    return session


@bench("runtime.push")
def push() -> list[Result]:
    from rsp_sdk.engine import ProvisionCache, TripleBatch
    from rsp_sdk.engine.provision import load_manifest
    from rsp_sdk.run.sampler import Sampler
    from rsp_sdk.runtime.bridge import bridge_classpath
    from tests.fixtures.build import MANIFEST, provision_toy_java

    out: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cache = ProvisionCache(tmp / "cache")
        provision_toy_java(cache)
        packed = _batches()
        batches = [TripleBatch(p, BATCH, 0, 0) for p in packed]
        total = len(batches) * BATCH * PASSES

        # the limit: a pure-Java loop over the same bytes, same Bridge and ToyDriver
        data = tmp / "batches.bin"
        with open(data, "wb") as f:
            for p in packed:
                f.write(struct.pack("!I", len(p)))
                f.write(p)
        cp = [*bridge_classpath(), *cache.classpath(load_manifest(MANIFEST))]
        java = subprocess.run(
            [
                "java",
                "-Xmx2g",
                "-cp",
                os.pathsep.join(map(str, cp)),
                "org.rspsdk.fixture.ToyBench",
                str(data),
                STREAM,
                str(PASSES),
                "3",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        n, secs = java.stdout.split()
        limit = int(n) / float(secs)
        out.append(Result("pure-Java loop (limit)", limit, "triples/s", note=f"{n} triples"))

        targets = {"jpype": 1_500_000, "py4j": 800_000}
        for runtime, target in targets.items():
            with _session(runtime, cache, tmp / runtime) as session:
                for b in batches:  # warm-up pass: JIT, buffers
                    session.push(STREAM, b)
                cpu = []
                sampler = Sampler(session.pid, cpu.append, stats=session.stats, interval_s=0.5)
                sampler.start()
                t0 = time.perf_counter()
                for _ in range(PASSES):
                    for b in batches:
                        session.push(STREAM, b)
                wall = time.perf_counter() - t0
                sampler.stop()
            rate = total / wall
            out.append(
                Result(
                    f"{runtime}: 10 M triples into the sink",
                    rate,
                    "triples/s",
                    f"≥ {target / 1e6:.1f} M/s",
                    rate / target,
                )
            )
            out.append(Result(f"{runtime}: rate / pure-Java limit", rate / limit, "ratio"))
            share = 100.0 * sampler.cpu_seconds / wall
            out.append(
                Result(
                    f"{runtime}: sampler CPU (psutil tree + stats verb, 500 ms)",
                    share,
                    "% of one core",
                    "< 2 %",
                    2.0 / share if share else None,
                    note=f"{sampler.samples} samples in {wall:.1f} s",
                )
            )
    return out
