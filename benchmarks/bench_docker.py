"""Docker runtime speed against the py4j runtime in the same run: the same bridge protocol, the
JVM in the engine's image instead of a host subprocess.

* push throughput: 5 M triples (1 M distinct, 100k-triple batches) into the Java fixture
  engine's no-op sink, py4j and docker interleaved three times; target docker ≥ 0.8 × py4j;
* container start to ready: ``launch`` with the image already built (create + start the
  container, bridge JVM up, py4j and data lane connected); target ≤ 2 s, py4j's JVM start shown
  next to it. Needs the base image (``rsp images build``); the fixture image is built here.

``runtime.docker.programs``: the programs the docker runtime carries in their pinned images
(rsp-js on Debian's Node 18, rsp-rs's driver binary on the base image, ETALIS on Debian's
SWI-Prolog + python3) against the same adapter on
the host (``subprocess``: the host's Node, binary and swipl), CSRBench's 15 188 triples with Q1 as in
``engines.rspjs``/``engines.etalis`` (rsp-rs, which does that in 0.2 s: YABench SG1 at 1 000
stations, 210 000 triples), interleaved three times, best rate of each; target
docker ≥ 0.8 × subprocess. The 1-minute load average is printed with each ratio.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import Result, bench

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PASSES = 5
LAUNCHES = 5
ROUNDS = 3
RSPRS_STATIONS = 1_000


@bench("runtime.docker")
def docker_runtime() -> list[Result]:
    from benchmarks.bench_runtime import BATCH, STREAM, _batches, _session
    from rsp_sdk.engine import ProvisionCache, TripleBatch
    from rsp_sdk.images import docker_unavailable
    from rsp_sdk.images.engine import ensure_engine_image
    from rsp_sdk.runtime import get_runtime
    from tests.fixtures.adapters import ToyJavaAdapter
    from tests.fixtures.build import provision_toy_java

    reason = docker_unavailable()
    if reason:
        raise RuntimeError(reason)
    out: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        cache = ProvisionCache(tmp / "cache")
        provision_toy_java(cache)
        spec = ToyJavaAdapter().driver(cache)
        image = ensure_engine_image(spec)
        out.append(
            Result(
                "fixture image " + ("built" if image.built else "found"),
                image.seconds,
                "s",
                note=image.tag,
            )
        )

        # container start to ready (the image exists): launch → channel connected
        starts: dict[str, list[float]] = {"py4j": [], "docker": []}
        launches: list[float] = []  # docker, including the image lookup by content hash
        for i in range(LAUNCHES):
            for name in starts:
                runtime = get_runtime(name)
                t0 = time.perf_counter()
                channel = runtime.launch(spec, tmp / f"start-{name}-{i}", log_dir=tmp / "logs")
                took = time.perf_counter() - t0
                starts[name].append(getattr(channel, "start_seconds", 0.0) or took)
                if name == "docker":
                    launches.append(took)
                channel.close()
        docker_start = statistics.median(starts["docker"])
        out.append(
            Result(
                "docker: container start to ready (median)",
                docker_start,
                "s",
                "≤ 2 s",
                2.0 / docker_start,
                note=f"max {max(starts['docker']):.2f} s over {LAUNCHES} starts",
            )
        )
        out.append(
            Result(
                "docker: launch incl. hashing inputs + image lookup (median)",
                statistics.median(launches),
                "s",
            )
        )
        out.append(
            Result(
                "py4j: JVM start to ready (median, peer)", statistics.median(starts["py4j"]), "s"
            )
        )

        # push throughput, interleaved so both see the same machine load
        packed = _batches()
        batches = [TripleBatch(p, BATCH, 0, 0) for p in packed]
        total = len(batches) * BATCH * PASSES
        rates: dict[str, list[float]] = {"py4j": [], "docker": []}
        for rnd in range(ROUNDS):
            for name in rates:
                with _session(name, cache, tmp / f"push-{name}-{rnd}") as session:
                    for b in batches:  # warm-up pass: JIT, buffers
                        session.push(STREAM, b)
                    t0 = time.perf_counter()
                    for _ in range(PASSES):
                        for b in batches:
                            session.push(STREAM, b)
                    rates[name].append(total / (time.perf_counter() - t0))
        py4j, docker = max(rates["py4j"]), max(rates["docker"])
        out.append(Result("py4j: 5 M triples into the sink (best of 3)", py4j, "triples/s"))
        out.append(Result("docker: 5 M triples into the sink (best of 3)", docker, "triples/s"))
        out.append(
            Result(
                "docker / py4j push throughput",
                docker / py4j,
                "ratio",
                "≥ 0.8",
                (docker / py4j) / 0.8,
                note=" ".join(f"{n}={[round(r / 1e6, 2) for r in v]}M/s" for n, v in rates.items()),
            )
        )
    return out


@bench("runtime.docker.programs")
def docker_programs() -> list[Result]:
    import os

    from rsp_adapter_etalis import EtalisAdapter
    from rsp_adapter_rspjs import RspJsAdapter
    from rsp_adapter_rsprs import RspRsAdapter

    from benchmarks.bench_engines import _inputs, _sg1_inputs, _through_adapter
    from rsp_sdk.images import docker_unavailable

    reason = docker_unavailable()
    if reason:
        raise RuntimeError(reason)
    table, csrbench_batches, csrbench_spec = _inputs()
    # rsp-rs does CSRBench in ~0.2 s, too short to time: SG1 at 1 000 stations (210 000 triples)
    sg1_n, sg1_batches, sg1_spec = _sg1_inputs(RSPRS_STATIONS)
    out: list[Result] = []
    for adapter in (RspJsAdapter(), RspRsAdapter(), EtalisAdapter()):
        sg1 = adapter.name == "rsprs"
        n = sg1_n if sg1 else table.num_rows
        batches, spec = (sg1_batches, sg1_spec) if sg1 else (csrbench_batches, csrbench_spec)
        what = f"SG1 {RSPRS_STATIONS} stations" if sg1 else "CSRBench Q1"
        missing = adapter.missing_artifacts()
        if not missing:  # the host peer needs the host's interpreter
            host_missing = adapter.driver().host_missing
            missing = [host_missing] if host_missing else []
        if missing:
            out.append(Result(f"{adapter.name}: docker", 0, "skipped", note="; ".join(missing)))
            continue
        rates: dict[str, list[float]] = {"subprocess": [], "docker": []}
        loads: list[float] = []
        with tempfile.TemporaryDirectory() as tmp_s:
            for rnd in range(ROUNDS):
                for runtime in rates:
                    work = Path(tmp_s) / f"{runtime}-{rnd}"
                    seconds, _rows = _through_adapter(adapter, spec, batches, work, runtime)
                    rates[runtime].append(n / seconds)
                    loads.append(os.getloadavg()[0])
        host, docker = max(rates["subprocess"]), max(rates["docker"])
        out.append(Result(f"{adapter.name}@subprocess: {what} (best of 3)", host, "triples/s"))
        out.append(Result(f"{adapter.name}@docker: {what} (best of 3)", docker, "triples/s"))
        out.append(
            Result(
                f"{adapter.name}: docker / subprocess throughput",
                docker / host,
                "ratio",
                "≥ 0.8",
                (docker / host) / 0.8,
                note=" ".join(f"{k}={[round(r) for r in v]}/s" for k, v in rates.items())
                + f"; load {min(loads):.1f}–{max(loads):.1f}",
            )
        )
    return out
