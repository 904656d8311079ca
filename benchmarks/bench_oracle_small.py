"""Oracle speed on small inputs, where the t0 candidates — not the data — cost the time.

Run it on its own (``nox -s bench -- oracle.small``) for the small-input session (C1 JIT only,
``rsp_sdk.oracle.spark.SMALL_JAVA_OPTIONS``); after another oracle benchmark in the same process
it reuses that benchmark's session, and says so in its Spark start row.

Printed, never asserted. Targets (issue 17, "Small inputs"): a 6-triple stream with all 2,001
t0 candidates ≤ 1 s warm; CSRBench Q1–Q7 × 3 profiles, all t0, ≤ 20 s including Spark start;
the 350-triple YABench WindowFactoryTest stream with all 60,001 t0 candidates ≤ 2 s warm.
"Before" is the same oracle evaluating every candidate on its own (``t0_classes=False``), in the
same process, after the same warm-up: the ratio is before / after (``RSP_BENCH_ORACLE_BEFORE=0``
leaves the "before" runs out: they take minutes).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from benchmarks import Result, bench
from benchmarks.bench_oracle import _STARTED, CSRBENCH, SHARED, SLIDES, WINDOWS
from rsp_sdk.model.profile import Profile, ReportPolicy, T0Policy, Tick

WFT = (
    SHARED / "YABench+yabench/yabench-oracle/src/test/resources/io/github/yabench/oracle/tests"
    "/WindowFactoryTest/testOnWindowClose/input.stream"
)
IDENTITY = (
    "REGISTER RSTREAM <id> AS SELECT ?s ?p ?o "
    "FROM NAMED WINDOW <w> ON <http://ex.org/streams/test> [RANGE PT60S STEP PT30S] "
    "WHERE { WINDOW <w> { ?s ?p ?o } }"
)
ROOMS = (
    "PREFIX ex: <http://example.org/>\nREGISTER ISTREAM <q> AS SELECT ?m ?r\n"
    "FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT2S STEP PT1S]\n"
    "WHERE { WINDOW ex:w { ?m ex:detectedAt ?r } }"
)
SIX = "0: m1@r1; 300: m2@r2; 700: m3@r1; 1200: m4@r2; 1500: m5@r1; 1900: m6@r3"
# every millisecond a candidate, over one window (the CSRBench oracle's enumeration)
# RSP_BENCH_ORACLE_BEFORE=0 leaves out the per-candidate "before" runs (minutes on CSRBench)
BEFORE = os.environ.get("RSP_BENCH_ORACLE_BEFORE", "1") != "0"
EVERY_MS = Profile(
    name="window-close-every-ms",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TIME_DRIVEN,
    emits_empty_relations=False,
    t0=T0Policy(step_ms=1, span="window"),
)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def _before_after(
    label: str, target: str, limit: float, run: Callable[[bool], tuple[int, int, int]]
) -> list[Result]:
    """Warm both paths once, then time the class path and the per-t0 path."""
    run(True)
    after, (cands, classes, rows) = _timed(lambda: run(True))
    out = [
        Result(
            f"{label}: all t0, one evaluation per class (warm)",
            after,
            "s",
            target,
            limit / after,
            f"{cands:,} candidates in {classes:,} classes, {rows:,} rows",
        )
    ]
    if not BEFORE:
        return out
    before, (_, _, rows_before) = _timed(lambda: run(False))
    return [
        *out,
        Result(
            f"{label}: all t0, every candidate on its own (warm, before)",
            before,
            "s",
            note=f"{rows_before:,} rows; before/after = {before / after:.1f}×",
        ),
    ]


@bench("oracle.small")
def small() -> list[Result]:
    """6-triple stream and the YABench WindowFactoryTest stream, every t0; CSRBench all t0."""
    from rsp_sdk.oracle import plan_job
    from rsp_sdk.query import parse_rspql
    from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms

    spark, spark_s = _small_spark()
    results = _show([Result("Spark start", spark_s, "s", note=f"{_cds(spark)}; {_jit(spark)}")])

    rooms, _ = generate_rooms(RoomsParams(description=SIX))
    rooms_q = parse_rspql(ROOMS)

    def six(grouped: bool) -> tuple[int, int, int]:
        job = plan_job(rooms, rooms_q, EVERY_MS, spark=spark, t0_classes=grouped, time_unit_ms=1)
        return len(job.candidates), len(job.t0s), job.run().num_rows

    results += _show(_before_after(f"{rooms.num_rows}-triple rooms stream", "≤ 1 s", 1.0, six))
    if WFT.exists():
        results += _show(_yabench_wft(spark))
    if CSRBENCH.exists():
        results += _show(_csrbench_all_t0(spark, spark_s))
    return results


def _small_spark(master: str = "local[2]") -> tuple[Any, float]:
    """The session as a process started for small inputs has it (``get_spark(small=True)``:
    ``plan_jobs`` starts it so for a stream under ``SMALL_ROWS`` rows), and the time its start
    took; a session already started by another benchmark of the process is reused as it is."""
    from rsp_sdk.oracle.spark import get_spark

    started = time.perf_counter()
    spark = get_spark(master, partitions=2, small=True)
    spark.range(1).collect()
    return spark, _STARTED.setdefault(master, time.perf_counter() - started)


def _jit(spark: Any) -> str:
    """Which JIT the driver JVM runs: the small figures are the C1-only session's."""
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "") or ""
    if "TieredStopAtLevel=1" in options:
        return "C1 JIT only (a session for small inputs)"
    return "full tiered JIT (a session started for large inputs: not a small-input session)"


def _cds(spark: Any) -> str:
    """Whether this JVM started from a class data sharing archive (``rsp_sdk.oracle.cds``)."""
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "") or ""
    if "SharedArchiveFile=" in options:
        return "class data sharing archive mapped"
    if "ArchiveClassesAtExit=" in options:
        return "no class data sharing archive yet: this JVM dumps one at exit"
    return "class data sharing off (RSP_SPARK_CDS=0, no java, or another JVM dumps the archive)"


def _show(results: list[Result]) -> list[Result]:
    """Print as soon as measured: the whole function takes minutes on a loaded machine."""
    for r in results:
        met = (
            ""
            if r.ratio is None
            else f" — target {r.target}, met: {'yes' if r.ratio >= 1 else 'NO'}"
        )
        print(f"    {r.name}: measured {r.value:.2f} {r.unit}{met}; {r.note}", flush=True)
    return results


def _yabench_wft(spark: Any) -> list[Result]:
    """60,001 candidates: the class output (what a time-blind verdict needs) against one t0;
    the per-t0 path over all candidates is not timed (minutes: 215 s in issue 17)."""
    from rsp_sdk.oracle import plan_job
    from rsp_sdk.query import parse_rspql
    from rsp_sdk.streams.importers.n3t import read_n3t

    stream = read_n3t(WFT)
    spec = parse_rspql(IDENTITY)
    label = f"YABench WindowFactoryTest ({stream.num_rows} triples)"

    def classes() -> tuple[int, int, int]:
        job = plan_job(stream, spec, EVERY_MS, spark=spark, time_unit_ms=1)
        out, cls = job.run_classes()
        return len(job.candidates), len(cls.representatives), out.num_rows

    classes()
    took, (cands, n_cls, rows) = _timed(classes)
    one, _ = _timed(
        lambda: plan_job(stream, spec, EVERY_MS, spark=spark, t0s=[0], time_unit_ms=1).run()
    )
    return [
        Result(
            f"{label}: all t0, class output (warm)",
            took,
            "s",
            "≤ 2 s",
            2 / took,
            f"{cands:,} candidates in {n_cls:,} classes, {rows:,} representative rows",
        ),
        Result(
            f"{label}: one t0 (warm)",
            one,
            "s",
            note=f"all {cands:,} candidates by class cost {took / one:.2f}× one candidate",
        ),
    ]


def _csrbench_all_t0(spark: Any, spark_s: float) -> list[Result]:
    """The 21 (query, profile) pairs as one batch (``plan_jobs``: one stream read, relations
    shared by profiles that need the same contents; ``run_jobs``: two jobs at a time);
    "before": each pair on its own, one after the other, every candidate on its own."""
    from rsp_sdk.model.stream import StreamMeta
    from rsp_sdk.oracle import plan_job, plan_jobs, run_jobs
    from rsp_sdk.query import load_query
    from rsp_sdk.streams.importers.csrbench import read_csrbench_folder

    stream = read_csrbench_folder(CSRBENCH / "data", interval_ms=1000)
    meta = StreamMeta(producer="import:csrbench-ttl", time_unit_ms=1000)
    stream = stream.replace_schema_metadata({b"rsp_sdk.stream": meta.to_bytes()})
    props = CSRBENCH / "src/main/resources/srbench-queries.properties"
    combos = [
        (load_query(f"{props}#srb.query{n}").with_window(WINDOWS[n], SLIDES[n]), name)
        for n in range(1, 8)
        for name in ("csparql", "cqels", "sparqlstream")
    ]

    def batch() -> tuple[int, int]:
        jobs = plan_jobs(stream, combos, spark=spark)
        run_jobs(jobs, threads=2)
        return sum(len(j.candidates) for j in jobs), sum(len(j.t0s) for j in jobs)

    took, (cands, classes) = _timed(batch)
    after = took + spark_s
    out = [
        Result(
            "CSRBench 21 runs (one batch, 2 threads), all t0, Spark start included",
            after,
            "s",
            "≤ 20 s",
            20 / after,
            f"{cands} candidates in {classes} classes; Spark start {spark_s:.1f} s, "
            f"oracle {took:.1f} s",
        )
    ]
    if not BEFORE:
        return out

    def one_by_one() -> None:
        for q, name in combos:
            plan_job(stream, q, name, spark=spark, t0_classes=False).run()

    before, _ = _timed(one_by_one)
    return [
        *out,
        Result(
            "CSRBench 21 runs, every candidate on its own (before), Spark start included",
            before + spark_s,
            "s",
            note=f"before/after = {(before + spark_s) / after:.2f}×",
        ),
    ]
