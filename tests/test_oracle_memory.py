"""The oracle's plan holds the t0 class representatives' reports only, and refuses past a limit.

An eager (tuple-driven, content-change) profile reports at every element for every t0
candidate: ETALIS ren16 Q6 on 50 000 triples enumerated 1 001 × 50 000 reports at once and the
matrix process was OOM-killed at 16 GB. ``s2r.class_reports`` enumerates candidates a chunk at
a time and keeps one class representative's reports; these tests hold it to ``t0_classes``
over every candidate's reports (the path it replaces) and check that a plan past the limit is
refused with the sizes named, before any Spark job. No Spark: a few seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from rsp_sdk.model.profile import Profile, ReportPolicy, T0Lead, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.stream import STREAM_METADATA_KEY, StreamMeta
from rsp_sdk.oracle import s2r
from rsp_sdk.oracle.job import window_masks
from rsp_sdk.query import parse_rspql
from tests.oracle_support import spark
from tests.test_oracle_reference import Case, cases

__all__ = ["spark"]

ETALIS_LIKE = Profile(
    name="eager",
    report=frozenset({ReportPolicy.NON_EMPTY_CONTENT, ReportPolicy.CONTENT_CHANGE}),
    tick=Tick.TUPLE_DRIVEN,
    r2s=None,
    emits_empty_relations=False,
    time_unit_ms=1,
    t0=T0Policy(span="slide", lead=T0Lead.RANGE_MINUS_STEP),
    event_driven=True,
)
QUERY = """PREFIX ex: <http://ex.org/>
REGISTER RSTREAM <http://ex.org/q> AS SELECT ?o
FROM NAMED WINDOW <http://ex.org/w> ON <http://ex.org/s> [RANGE PT1S STEP PT1S]
WHERE { WINDOW <http://ex.org/w> { ?s ex:p ?o } }
"""


def geometry_of(spec: QuerySpec, times: np.ndarray, streams: Any) -> s2r.Geometry:
    return s2r.geometry(spec, times.astype(np.int64), window_masks(spec, streams))


def case_geometry(case: Case) -> tuple[s2r.Geometry, list[int]]:
    spec, prof, stream = case.spec(), case.profile, case.stream
    meta = StreamMeta.from_bytes((stream.schema.metadata or {})[STREAM_METADATA_KEY])
    times = stream.column("t_app_ms").to_numpy()
    geom = geometry_of(spec, times, stream.column("stream").combine_chunks())
    t_min = int(times.min()) if len(times) else 0
    return geom, s2r.t0_candidates(prof, spec, stream_unit_ms=meta.time_unit_ms, t_min=t_min)


@settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(case=cases())
def test_class_reports_equal_t0_classes_over_every_candidates_reports(case: Case) -> None:
    geom, cands = case_geometry(case)
    every, _ = s2r.report_table(case.profile, geom, cands)
    want = s2r.t0_classes(geom, every, cands)
    old_chunk = s2r.CHUNK_ROWS
    s2r.CHUNK_ROWS = 1  # one candidate per chunk: classes must span chunks
    try:
        got, reports = s2r.class_reports(case.profile, geom, cands, limit=10**9)
    finally:
        s2r.CHUNK_ROWS = old_chunk
    assert got.candidates.tolist() == want.candidates.tolist()
    assert got.representative.tolist() == want.representative.tolist(), case.describe()
    assert reports.equals(s2r.of_t0s(every, want.representatives)), case.describe()


def eager_stream(n: int, gap_ms: int) -> tuple[s2r.Geometry, list[int]]:
    """``n`` elements ``gap_ms`` apart under 1 s tumbling windows, 1 000 candidates."""
    spec = parse_rspql(QUERY)
    times = np.arange(n, dtype=np.int64) * gap_ms
    geom = geometry_of(spec, times, pa.array(["http://ex.org/s"] * n))
    cands = s2r.t0_candidates(ETALIS_LIKE, spec, stream_unit_ms=1, t_min=0)
    return geom, cands


def test_an_eager_plan_past_the_limit_is_refused_with_its_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    geom, cands = eager_stream(3000, 1)  # 1 000 classes × up to 3 000 tuple ticks each
    monkeypatch.setattr(s2r, "CHUNK_ROWS", 60_000)  # refused after the first 20 candidates
    with pytest.raises(s2r.TooManyReports) as err:
        s2r.class_reports(ETALIS_LIKE, geom, cands, limit=50_000)
    text = str(err.value)
    assert "more than 50,000 oracle reports" in text
    assert "1,000 candidates" in text and "3,000 reports each" in text


def test_an_eager_plan_within_the_limit_holds_the_representatives_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    geom, cands = eager_stream(300, 4)  # 2 · 250 + 1 classes
    monkeypatch.setenv("RSP_ORACLE_MAX_REPORTS", "1000000")
    classes, reports = s2r.class_reports(ETALIS_LIKE, geom, cands)
    reps = classes.representatives
    every, _ = s2r.report_table(ETALIS_LIKE, geom, cands)
    assert reps == s2r.t0_classes(geom, every, cands).representatives
    assert len(reps) == 500  # two per element's millisecond within the slide
    assert sorted(set(reports.column("t0").to_pylist())) == reps
    assert reports.num_rows < every.num_rows


def test_driver_rows_are_the_keyed_elements_of_the_spark_path() -> None:
    """``driver_rows`` (small inputs, no Spark job) puts each element under exactly the needed
    closes kc with kc − ω_w ≤ t < kc, as ``_keyed_elements`` explodes them in Spark; checked
    against that definition written out element by element, with two window ranges."""
    from rsp_sdk.oracle.job import driver_rows

    rng = np.random.default_rng(7)
    n = 150
    t = np.sort(rng.integers(0, 5_000, n))
    ranges = rng.choice([1_000, 2_000], n)
    source = pa.table(
        {
            "idx": np.arange(n),
            "t": t,
            **{c: rng.integers(0, 9, n) for c in ("s", "p", "o")},
            "w": pa.array(rng.integers(0, 2, n), pa.int32()),
            "range": ranges,
        }
    )
    closes = rng.choice(np.arange(0, 8_000, 7), 150)
    events = pa.table({c: closes[:50] for c in ("kc", "kb", "kr", "kbb", "krb")})
    out = driver_rows(source, events, closes)
    kind = out.column("kind").to_numpy()
    got = sorted(
        zip(
            out.column("kc").to_numpy()[kind == 0].tolist(),
            out.column("idx").filter(pa.array(kind == 0)).to_pylist(),
            strict=True,
        )
    )
    want = sorted(
        (int(c), i) for c in np.unique(closes) for i in range(n) if c - ranges[i] <= t[i] < c
    )
    assert got == want and len(want) > 500
    assert out.filter(pa.array(kind == 1)).column("kb").to_pylist() == closes[:50].tolist()


WINDOW_CLOSE = Profile(
    name="window-close",
    report=frozenset({ReportPolicy.WINDOW_CLOSE}),
    tick=Tick.TIME_DRIVEN,
    emits_empty_relations=True,
)


def _readings(condition: str) -> QuerySpec:
    """YABench observations and their values over [RANGE 10 s STEP 5 s], ``condition`` after
    the pattern (a FILTER, or nothing)."""
    return parse_rspql(
        "PREFIX om: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>\n"
        "REGISTER RSTREAM <q> AS SELECT ?obs ?value FROM NAMED WINDOW <w> ON "
        "<http://ex.org/streams/test> [RANGE PT10S STEP PT5S] WHERE { WINDOW <w> { "
        f"?obs om:result ?res . ?res om:floatValue ?value{condition} }} }}"
    )


def test_an_oracle_call_leaves_no_arrow_memory_behind(spark: Any) -> None:
    """Once the expected table is dropped, every Arrow buffer of the call is freed by reference
    counting alone. pyparsing's parse of the query left reference cycles (exception →
    traceback → frame) whose frames chained up to the planning frames, so the stream, the term
    dictionary and the whole job waited for Python's cycle collector: 3.3 GB at 21 M triples,
    on which the next call's peak stood. The collector is off during the call so that its
    chance runs cannot hide such a cycle."""
    import gc

    from rsp_sdk.oracle import plan_job
    from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

    stream, _ = generate_yabench(YabenchParams(stations=200, interval_ms=1000, duration_ms=20_000))
    query, profile = _readings(" FILTER(?value > 50)"), WINDOW_CLOSE
    plan_job(stream, query, profile, t0s=[0], spark=spark).run()  # warm: lazy imports, caches
    gc.collect()
    before = pa.total_allocated_bytes()
    gc.disable()
    try:
        out = plan_job(stream, query, profile, t0s=[0], spark=spark).run()
        assert out.num_rows > 100
        del out
        left = pa.total_allocated_bytes() - before
    finally:
        gc.enable()
    assert left == 0, f"{left:,} bytes of Arrow memory outlive the call"


@pytest.mark.parametrize("on_driver", [True, False])
def test_an_evaluation_past_the_row_limit_stops_naming_it(
    spark: Any, monkeypatch: pytest.MonkeyPatch, on_driver: bool
) -> None:
    """pyoxigraph's rows are Python lists until a group ends: one report of an eager profile over
    long windows can hold millions (CityBench Q2 on CQELS's windows scaled ×10 took the matrix
    process to 18 GB). Past ``RSP_ORACLE_MAX_ROWS`` the evaluation stops with ``TooManyRows``,
    on the driver and in Spark's workers alike, and within it the same job is computed."""
    from rsp_sdk.oracle import job, plan_job
    from rsp_sdk.oracle.r2r.oxigraph import TooManyRows
    from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

    stream, _ = generate_yabench(YabenchParams(stations=20, interval_ms=1000, duration_ms=10_000))
    query, profile = _readings(""), WINDOW_CLOSE
    if not on_driver:
        monkeypatch.setattr(job, "DRIVER_ROWS", 0)
    whole = plan_job(stream, query, profile, t0s=[0], spark=spark, evaluator="oxigraph").run()
    assert whole.num_rows > 100  # 20 stations × 5 s or 10 s of readings a window
    monkeypatch.setenv("RSP_ORACLE_MAX_ROWS", "100")
    with pytest.raises(TooManyRows, match=r"passes 100 rows in one evaluation"):
        plan_job(stream, query, profile, t0s=[0], spark=spark, evaluator="oxigraph").run()
