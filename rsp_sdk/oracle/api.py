"""``expected()``: what a correct engine with a given SECRET profile must output.

A pure function of (stream, query, profile, t0 candidates, static data): it never looks at an
engine's output. The result follows ``rsp_sdk.model.results.EXPECTED_SCHEMA``: one row per
binding, an empty relation as one row with a null binding, ``seq`` numbering the relations of
each t0, ``t_app_ms`` the report time, the evaluated scope [window_open_ms, window_close_ms)
and its number of elements.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.stream import STREAM_METADATA_KEY, STREAM_SCHEMA, StreamMeta
from rsp_sdk.oracle.job import SMALL_ROWS, Choice, OracleJob, SharedWork, choose_evaluator
from rsp_sdk.oracle.s2r import t0_candidates
from rsp_sdk.query import load_query
from rsp_sdk.query.sparql import parse_select
from rsp_sdk.streams.io import conform, first_decrease, read_meta, read_static, read_stream


def _stream(stream: Path | str | pa.Table, time_unit_ms: int | None) -> tuple[pa.Table, int | None]:
    """The stream table (sorted, in the stream schema with its term columns
    dictionary-encoded: no string per row on the driver) and its time unit (ms).

    The unit is the stream's own (its metadata) or ``time_unit_ms``; a table that carries no
    metadata has no unit unless one is given (None): the t0 candidates step by the unit, so
    guessing 1 ms would silently make a 1 s stream's candidates a thousand times too many.
    """
    if isinstance(stream, pa.Table):
        meta_raw = (stream.schema.metadata or {}).get(STREAM_METADATA_KEY)
        unit = StreamMeta.from_bytes(meta_raw).time_unit_ms if meta_raw else None
        table = conform(stream, STREAM_SCHEMA, dictionary=True)
        source: Path | str = "<table>"
    else:
        table = read_stream(stream, dictionary=True)
        meta = read_meta(stream)
        unit = meta.time_unit_ms if meta else 1  # a foreign Parquet file: ms, as documented
        source = stream
    if time_unit_ms is not None:
        if unit is not None and isinstance(stream, pa.Table) and unit != time_unit_ms:
            raise InputError(
                f"time_unit_ms={time_unit_ms} contradicts the stream's metadata ({unit} ms)",
                path=source,
            )
        unit = time_unit_ms
    bad = first_decrease(table)
    if bad is not None:
        raise InputError(
            f"the stream is not sorted by t_app_ms (row {bad})",
            path=source,
            expected="a stream sorted by application time (rsp stream import --sort)",
        )
    return table, unit


def _static(static: Iterable[Path | str | pa.Table]) -> pa.Table | None:
    tables = [s if isinstance(s, pa.Table) else read_static(s) for s in static]
    if not tables:
        return None
    return pa.concat_tables([t.select(["s", "p", "o"]) for t in tables])


def plan_job(
    stream: Path | str | pa.Table,
    query: QuerySpec | Path | str,
    profile: Profile | Path | str,
    *,
    t0s: Iterable[int] | None = None,
    static: Iterable[Path | str | pa.Table] = (),
    spark: Any = None,
    evaluator: str = "auto",
    params: Mapping[str, str] | None = None,
    t0_classes: bool = True,
    time_unit_ms: int | None = None,
    spark_master: str | None = None,
    shared: SharedWork | None = None,
    small_session: bool | None = None,
) -> OracleJob:
    """Everything but running: inputs read, reports enumerated, evaluator chosen.

    ``t0_classes=False`` evaluates every candidate on its own instead of one per class of
    candidates that see equal window contents (same output, slower: the classes' witness).
    ``time_unit_ms``: the stream's time unit, needed for a table without stream metadata when
    the candidates come from the profile (no ``t0s``). Without ``spark``, the process's session
    is used, started on ``spark_master`` (default ``local[*]``) once every input has been checked.
    ``shared``: work shared with other jobs over the same stream content and static data (see
    ``plan_jobs``); the caller vouches for that sameness (the matrix keys it by the stream's hash).
    ``small_session``: see ``plan_jobs``.
    """
    (job,) = plan_jobs(
        stream,
        [(query, profile)],
        t0s=t0s,
        static=static,
        spark=spark,
        evaluator=evaluator,
        params=params,
        t0_classes=t0_classes,
        time_unit_ms=time_unit_ms,
        spark_master=spark_master,
        shared=shared,
        small_session=small_session,
    )
    return job


def plan_jobs(
    stream: Path | str | pa.Table,
    combos: Iterable[tuple[QuerySpec | Path | str, Profile | Path | str]],
    *,
    t0s: Iterable[int] | None = None,
    static: Iterable[Path | str | pa.Table] = (),
    spark: Any = None,
    evaluator: str = "auto",
    params: Mapping[str, str] | None = None,
    t0_classes: bool = True,
    time_unit_ms: int | None = None,
    spark_master: str | None = None,
    shared: SharedWork | None = None,
    small_session: bool | None = None,
) -> list[OracleJob]:
    """``plan_job`` for many (query, profile) pairs over one stream and static graph.

    The stream and static data are read and checked once, every pair is checked before Spark
    starts, and the jobs share their work (``SharedWork``): profiles that need the same window
    contents of the same query get its relations computed once. Run the jobs in any order.
    ``small_session``: whether a session this call starts is tuned for small inputs
    (``spark.SMALL_JAVA_OPTIONS``); None: if the stream has fewer than ``SMALL_ROWS`` rows. A
    caller whose session goes on to serve other, larger inputs (the matrix) passes False.
    """
    from rsp_sdk.oracle.spark import get_spark

    table, unit = _stream(stream, time_unit_ms)
    static_table = _static(static)
    explicit = sorted(set(int(t) for t in t0s)) if t0s is not None else None
    planned = [
        _plan(table, unit, static_table, q, p, explicit, evaluator, params) for q, p in combos
    ]
    if small_session is None:
        small_session = table.num_rows < SMALL_ROWS
    session = spark if spark is not None else get_spark(spark_master, small=small_session)
    shared = shared if shared is not None else SharedWork()
    return [
        OracleJob(
            session,
            table,
            spec,
            algebra,
            prof,
            candidates,
            static_table,
            evaluator,
            t0_classes=t0_classes,
            shared=shared,
        )
        for spec, algebra, prof, candidates in planned
    ]


def run_jobs(jobs: Sequence[OracleJob], *, threads: int = 2) -> list[pa.Table]:
    """``job.run()`` of each job, ``threads`` at a time, in the jobs' order.

    On small inputs a job is mostly latency (planning, Py4J round trips, task launches): two
    jobs at once keep the driver and the executors busy while the other waits.
    """
    if threads <= 1 or len(jobs) <= 1:
        return [job.run() for job in jobs]
    with ThreadPoolExecutor(threads, thread_name_prefix="rsp-oracle") as pool:
        return list(pool.map(lambda job: job.run(), jobs))


def _plan(
    table: pa.Table,
    unit: int | None,
    static_table: pa.Table | None,
    query: QuerySpec | Path | str,
    profile: Profile | Path | str,
    t0s: list[int] | None,
    evaluator: str,
    params: Mapping[str, str] | None,
) -> tuple[QuerySpec, Any, Profile, list[int]]:
    """One pair's query, algebra, profile and candidates, checked (pure Python, no Spark)."""
    spec = load_query(query, params)
    prof = load_profile(profile)
    if t0s is None and unit is None:
        raise InputError(
            "the stream table carries no time unit (no rsp_sdk.stream metadata), and the t0 "
            "candidates step by it",
            expected="time_unit_ms=… (e.g. 1000 for a stream timed in seconds) or explicit t0s",
        )
    parsed = parse_select(spec.sparql, path=spec.source, base_iri=spec.base_iri)
    if not spec.variables and parsed.variables:
        # a QuerySpec built by hand may leave the projection to the SPARQL text; without this
        # every binding would project to nothing
        spec = spec.model_copy(update={"variables": parsed.variables})
    times = table.column("t_app_ms")
    t_min = int(pa.compute.min(times).as_py()) if table.num_rows else 0
    candidates = (
        t0s if t0s is not None else t0_candidates(prof, spec, stream_unit_ms=unit or 1, t_min=t_min)
    )
    # an evaluator that cannot run the query is refused before Spark starts (the job decides
    # again, on the same inputs: the choice is cheap, pure Python)
    choose_evaluator(
        spec,
        parsed.algebra,
        prof,
        prof.r2s_for(spec.r2s),
        requested=evaluator,
        has_static=static_table is not None and static_table.num_rows > 0,
    )
    return spec, parsed.algebra, prof, candidates


def expected(
    stream: Path | str | pa.Table,
    query: QuerySpec | Path | str,
    profile: Profile | Path | str,
    *,
    t0s: Iterable[int] | None = None,
    static: Iterable[Path | str | pa.Table] = (),
    spark: Any = None,
    evaluator: str = "auto",
    time_unit_ms: int | None = None,
    spark_master: str | None = None,
) -> pa.Table:
    """The expected output (EXPECTED_SCHEMA) of every candidate t0, from one Spark job.

    ``stream``: a stream Parquet file or table; ``query``: a QuerySpec or anything
    ``rsp_sdk.query.load_query`` reads; ``profile``: a Profile, a built-in name or a TOML/JSON
    file; ``t0s``: explicit candidates (default: the profile's t0 policy); ``static``: RDF or
    Parquet files (or tables) loaded into the default graph; ``evaluator``: ``auto``,
    ``oxigraph`` or ``sql``; ``time_unit_ms``: the stream's time unit in ms, required for a
    bare ``pa.Table`` (no stream metadata) unless ``t0s`` are given — the candidates step by it;
    ``spark_master``: where the process's session starts when ``spark`` is not given.
    """
    job = plan_job(
        stream,
        query,
        profile,
        t0s=t0s,
        static=static,
        spark=spark,
        evaluator=evaluator,
        time_unit_ms=time_unit_ms,
        spark_master=spark_master,
    )
    return job.run()


__all__ = ["Choice", "SharedWork", "expected", "plan_job", "plan_jobs", "run_jobs"]
