"""The oracle's Spark job: every candidate t0 at once, windows assigned by keys.

1. S2R (``s2r``): the ranked reports of all t0 candidates, each with its content key (c, B, R).
2. Keys: every element is exploded (``sequence``) into the window-close instants c of the
   scopes that contain it — c ≡ one of the candidates' residues mod β, c ∈ (t, t + ω_w] — and
   kept where some report needs c. Reports of different t0 with the same key share the work.
3. R2R, one of
   * pyoxigraph per group c (``applyInArrow``): all of SPARQL 1.1, incremental over events;
   * compiled Spark SQL (window close / periodic): a single-window query is joined once over
     the raw rows and its matches keyed afterwards (``sqlgen.Prejoin``); several windows join
     over the keyed content;
   * the temporal join for content change with a monotone fragment query: solutions are joined
     once over the raw stream (elements less than ω apart); a solution is born with its last
     element's report and dies when its earliest element's window k closes (c_k); Istream
     /Dstream/event-driven reports come straight from these presence intervals.
4. R2S and empty relations (``r2s``), then bindings as canonical SPARQL JSON.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.results import EXPECTED_SCHEMA
from rsp_sdk.oracle import s2r
from rsp_sdk.oracle.bindings import binding_codes, codes_from_terms
from rsp_sdk.oracle.encoding import TermDictionary, isin_mask, used_values
from rsp_sdk.oracle.r2r.fragment import (
    ANY_WINDOW,
    STATIC,
    Aggregate,
    NotInFragment,
    Pattern,
    SqlPlan,
    analyze,
    monotone_core,
    solution_core,
)
from rsp_sdk.oracle.r2r.oxigraph import (
    MAX_ROWS,
    OUTPUT_SCHEMA,
    OxConfig,
    RowBudget,
    TooManyRows,
    evaluate_group,
    lexical_restorer,
    static_store,
)
from rsp_sdk.oracle.r2r.relevance import constraints, relevant
from rsp_sdk.oracle.r2r.sqlgen import (
    CompiledQuery,
    Prejoin,
    compile_plan,
    projected,
    value_table_sql,
)
from rsp_sdk.oracle.r2r.witness import kept_solutions
from rsp_sdk.oracle.r2s import apply_r2s, attach, finalize, repeated_r2s, temporal_emissions
from rsp_sdk.oracle.spark import for_small_inputs

# below this many relevant elements, adaptive execution's re-planning and code generation
# cost more than they save
SMALL_ROWS = 100_000
# below this many relevant elements, pyoxigraph evaluates the window groups on the driver
DRIVER_ROWS = 20_000
# below this many keyed rows (elements × the windows that need them), pyoxigraph's window
# groups load every relevant element under window close: finding the support of a query's
# pattern (``Choice.support``) is one more Spark job, which costs more than it saves there
SUPPORT_ROWS = 100_000
# a job with at most this many representative reports is computed in one part
# (``run_class_parts``); a larger one starts with a part of FIRST_PART_REPORTS
SPLIT_REPORTS = 1_000
FIRST_PART_REPORTS = 250
# reports a part of a job past the report limit enumerates at most (``_enumerated_parts``)
ENUMERATED_PART_REPORTS = 1_000_000
# binding rows a part aims at: ~1 M rows is a few hundred MB in the driver JVM's collect and
# in the judging process's relations
PART_ROWS = 1_000_000


def enumerate_parts() -> bool:
    """``RSP_ORACLE_ENUMERATE=1``: a job past ``s2r.max_reports()`` is computed in parts whose
    reports are enumerated one part at a time (``OracleJob._enumerated_parts``) instead of
    refused. Off by default: a part holds whole classes, and one class of an eager profile on
    a large stream can expect hundreds of millions of rows — judging CQELS's YABench E3 at 500
    stations (106 classes × 105,000 reports) took the matrix process past 11 GB within five
    minutes, while the same at 200 stations (248 × 42,000) was judged in ten."""
    return os.environ.get("RSP_ORACLE_ENUMERATE", "") == "1"


def part_rows() -> int:
    """The rows a part aims at: ``RSP_ORACLE_PART_ROWS`` or ``PART_ROWS``."""
    return max(1, s2r.env_rows("RSP_ORACLE_PART_ROWS", PART_ROWS))


@dataclass(frozen=True)
class Choice:
    """Which evaluator runs, and why (reported by the CLI)."""

    evaluator: str  # "oxigraph", "sql" or "temporal"
    reason: str
    plan: SqlPlan | None = None
    # content change with pyoxigraph: the monotone pattern under the query, whose solutions'
    # completion events are the only events at which the result can change within a window
    inner: SqlPlan | None = None
    # the inner pattern leaves out filters outside the SQL fragment: a solution counts only if
    # the query, evaluated by pyoxigraph on that solution's own triples, answers
    check_solutions: bool = False
    # the query is a function of the inner pattern's kept solutions alone (``monotone_core``,
    # or ``solution_core`` under window close; every pattern variable projected): the window
    # groups need only the elements those solutions are made of (``OracleJob._support_rows``)
    support: bool = False


def choose_evaluator(
    query: QuerySpec, algebra: Any, profile: Profile, r2s: R2S, *, requested: str, has_static: bool
) -> Choice:
    if requested not in ("auto", "oxigraph", "sql"):
        raise InputError(f"unknown evaluator {requested!r}", expected="auto, oxigraph or sql")
    if requested == "oxigraph":
        return Choice("oxigraph", "requested")
    try:
        plan = analyze(query, algebra, has_static=has_static)
    except NotInFragment as exc:
        if requested == "sql":
            raise InputError(
                f"the Spark SQL evaluator cannot run this query: {exc}",
                path=query.source,
                expected="BGP + FILTER + projection + aggregates (or --evaluator oxigraph)",
            ) from None
        return _outside_fragment(query, algebra, profile, has_static, f"{exc}")
    if ReportPolicy.CONTENT_CHANGE not in profile.report:
        return Choice("sql", "BGP/FILTER/aggregate fragment", plan)
    # an event-driven report is what its event adds to the bag of solutions; under DISTINCT
    # a solution new to the window may project onto a row already there, which the temporal
    # join (new solutions, made distinct) would report again
    temporal_ok = (
        plan.monotone
        and len(query.windows) == 1
        and (profile.event_driven or r2s in (R2S.ISTREAM, R2S.DSTREAM))
        and not (profile.event_driven and plan.distinct)
    )
    if temporal_ok:
        return Choice("temporal", "content change over a monotone query: temporal join", plan)
    reason = (
        "content change needs the temporal join, which covers monotone single-window queries "
        "with Istream, Dstream or event-driven reports"
    )
    if requested == "sql":
        raise InputError(
            f"the Spark SQL evaluator cannot run this query under this profile: {reason}",
            expected="--evaluator oxigraph",
        )
    first = next((v for p in plan.patterns for v in p.variables), None)
    if len(query.windows) == 1 and not profile.event_driven and first is not None:
        projection: list[tuple[str, str | Aggregate]] = [(first, first)]
        inner = SqlPlan(patterns=plan.patterns, filters=plan.filters, projection=projection)
        return Choice(
            "oxigraph",
            f"{reason}; pyoxigraph evaluates only where the pattern gains a solution",
            inner=inner,
        )
    return Choice("oxigraph", reason)


def _outside_fragment(
    query: QuerySpec, algebra: Any, profile: Profile, has_static: bool, why: str
) -> Choice:
    """pyoxigraph; under content change, with the change points of the query's monotone core
    when it has one (``monotone_core``): a REGEX filter or a GROUP BY without aggregates
    must not make a tuple-driven profile evaluate every event of every t0 class (ren16 Q3 on
    CQELS: 501 classes × ~800 events, 13 minutes)."""
    reason = f"outside the SQL fragment: {why}"
    content_change = ReportPolicy.CONTENT_CHANGE in profile.report
    if profile.event_driven or len(query.windows) != 1:
        return Choice("oxigraph", reason)
    found = monotone_core(query, algebra, has_static=has_static)
    if found is None and not content_change:
        return _support_only(query, algebra, has_static, reason)
    if found is None:
        return Choice("oxigraph", reason)
    core, residual = found
    inner = _projecting_all(core)
    if inner is None:
        return Choice("oxigraph", reason)
    where = (
        "evaluates only where the monotone core gains a solution"
        if content_change
        else "loads only the triples of the monotone core's solutions (large windows)"
    )
    return Choice(
        "oxigraph",
        f"{reason}; pyoxigraph {where}",
        inner=inner,
        check_solutions=bool(residual),
        support=True,
    )


def _projecting_all(core: SqlPlan) -> SqlPlan | None:
    """The core's patterns and filters projecting every pattern variable (None: it has none),
    so its solutions name every triple they are made of."""
    names = list(dict.fromkeys(v for p in core.patterns for v in p.variables))
    if not names:
        return None
    return SqlPlan(patterns=core.patterns, filters=core.filters, projection=[(v, v) for v in names])


def _support_only(query: QuerySpec, algebra: Any, has_static: bool, reason: str) -> Choice:
    """pyoxigraph on the triples of the solutions of the query's core (``solution_core``),
    for a query that is a function of those solutions but not monotone (COUNT, ORDER BY).

    Not under content change: without change points the cut content is all the core gives.
    ren16 Q2 (GROUP BY, COUNT, ORDER BY) under rsp-js on 25,000 triples: 1,000 t0 classes ×
    5 windows of ~3,400 relevant elements each, 17 M keyed rows, filled the driver's 4 GB heap;
    the support (the 125 chlorine observations and their tags) is a few hundred triples.
    """
    core = solution_core(query, algebra, has_static=has_static)
    inner = None if core is None else _projecting_all(core)
    if inner is None:
        return Choice("oxigraph", reason)
    return Choice(
        "oxigraph",
        f"{reason}; pyoxigraph loads only the triples of its pattern's solutions (large windows)",
        inner=inner,
        support=True,
    )


def window_masks(query: QuerySpec, streams: pa.Array | pa.ChunkedArray) -> list[np.ndarray]:
    """Rows each window sees; plain single-stream queries bind to the only stream present."""
    present = sorted(set(used_values(streams).to_pylist()))
    masks = []
    for w in query.windows:
        mask = isin_mask(streams, [w.stream])
        if not mask.any():
            if not query.window_graphs and len(query.windows) == 1 and len(present) == 1:
                mask = np.ones(len(streams), dtype=bool)
            elif len(streams):
                raise InputError(
                    f"the stream has no element of <{w.stream}>, which window <{w.name}> reads",
                    text=", ".join(present[:5]),
                    expected="a stream file holding that stream IRI",
                )
        masks.append(mask)
    return masks


@dataclass
class SharedWork:
    """Work shared by the jobs of one batch (``plan_jobs``): one stream, one static graph.

    Profiles whose reports need the same content keys (C-SPARQL and SPARQLstream on CSRBench)
    get the same SQL relations; R2S, empty relations and report times stay each job's own.
    """

    relations: dict[tuple[Any, ...], pa.Table] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _locks: dict[tuple[Any, ...], threading.Lock] = field(default_factory=dict)

    def relations_of(self, key: tuple[Any, ...], compute: Callable[[], pa.Table]) -> pa.Table:
        """The relations under ``key``, computed once: jobs run in threads (``run_jobs``) wait
        for the one computing them rather than computing them again."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            hit = self.relations.get(key)
            if hit is None:
                hit = self.relations[key] = compute()
            return hit


class OracleJob:
    """One expected-output computation (all t0 candidates) on one SparkSession."""

    def __init__(
        self,
        spark: Any,
        stream: pa.Table,
        query: QuerySpec,
        algebra: Any,
        profile: Profile,
        t0s: list[int],
        static: pa.Table | None,
        evaluator: str,
        *,
        t0_classes: bool = True,
        shared: SharedWork | None = None,
    ) -> None:
        self.spark = spark
        self.shared = shared
        self.query = query
        self.profile = profile
        self.candidates = sorted(set(t0s))
        self.r2s = profile.r2s_for(query.r2s)
        times = np.asarray(stream.column("t_app_ms").to_numpy(), dtype=np.int64)
        self.stream = stream.append_column("idx", pa.array(np.arange(len(times), dtype=np.int64)))
        self.masks = window_masks(query, stream.column("stream"))
        self.geom = s2r.geometry(query, times, self.masks)
        self.static = static if static is not None and static.num_rows else None
        self.choice = choose_evaluator(
            query,
            algebra,
            profile,
            self.r2s,
            requested=evaluator,
            has_static=self.static is not None,
        )
        if self.choice.evaluator == "oxigraph" and query.warnings:
            raise InputError(
                query.warnings[0], path=query.source, expected="SPARQL 1.1 pyoxigraph accepts"
            )
        # the job evaluates one representative per class of candidates that see the same
        # contents (``t0s``) and copies its relations; it holds the representatives' reports
        # only (``s2r.class_reports``), every candidate's (``all_reports``) when asked for
        self._all_reports: pa.Table | None = None
        # not under content change: a window group there reuses the previous event's result
        # between change points, which needs every event of the group
        self._share = t0_classes and ReportPolicy.CONTENT_CHANGE not in profile.report
        # too many representative reports to hold at once: the classes now, each part's
        # reports when ``run_class_parts`` computes it (None: they are held)
        self._too_many: s2r.TooManyReports | None = None
        try:
            self.classes, self.reports = s2r.class_reports(
                profile, self.geom, self.candidates, classes=t0_classes
            )
        except s2r.TooManyReports as exc:
            if not enumerate_parts():
                raise
            if s2r.rows_per_candidate(profile, self.geom) > s2r.max_reports():
                raise  # one class alone is past the limit: no part could hold it
            self._too_many = exc
            self.classes, self.reports = s2r.class_reports(
                profile, self.geom, self.candidates, classes=t0_classes, hold=False
            )
        self.t0s = self.classes.representatives
        if self._share:
            self.reports = s2r.shared_keys(self.geom, self.reports)
        self.relevance = constraints(query, algebra)
        self._persisted: list[DataFrame] = []
        self._terms: TermDictionary | None = None
        self._ids: dict[int, list[pa.Array]] = {}
        self._scans: dict[str, DataFrame] = {}
        self._tmp: Path | None = None
        # pyoxigraph under content change: relations only at evaluated events, and their keys
        # (``OxConfig.compact``)
        self._compacted = False
        self._evaluated: pa.Table | None = None
        # with ``Choice.support``: mixed (s, p, o) ids of the kept solutions' stream triples
        self._support: np.ndarray | None = None

    @property
    def all_reports(self) -> pa.Table:
        """Every candidate's reports, built on first use: ``run`` copies the rows to every
        member, and ``rsp oracle`` counts them; ``run_classes`` (the matrix) never needs them."""
        if self._all_reports is None:
            self._all_reports, _ = s2r.report_table(self.profile, self.geom, self.candidates)
        return self._all_reports

    # -- terms as ids ---------------------------------------------------------------------------
    @property
    def terms(self) -> TermDictionary:
        """The dictionary of every term of the (relevant) stream elements and static data."""
        if self._terms is None:
            rows = self._relevant_rows()
            tables = [rows] + ([self.static] if self.static is not None else [])
            columns = [t.column(c) for t in tables for c in ("s", "p", "o")]
            # one hash pass gives the dictionary and every id (no second lookup per column)
            self._terms, ids = TermDictionary.build_encoded(columns)
            self._ids = {id(t): ids[3 * k : 3 * k + 3] for k, t in enumerate(tables)}
        return self._terms

    def _relevant_rows(self) -> pa.Table:
        """(w, ω_w, idx, t, s, p, o) of the elements some triple pattern of window w can match."""
        if not hasattr(self, "_relevant"):
            parts = []
            for w, (spec, mask) in enumerate(zip(self.query.windows, self.masks, strict=True)):
                sub = self.stream.select(["idx", "t_app_ms", "s", "p", "o"])
                if not mask.all():  # one stream: no copy of every row's strings
                    sub = sub.filter(pa.array(mask))
                sub = sub.filter(pa.array(relevant(sub, w, self.relevance)))
                sub = sub.rename_columns(["idx", "t", "s", "p", "o"])
                sub = sub.append_column("w", pa.array(np.full(sub.num_rows, w, dtype=np.int32)))
                sub = sub.append_column(
                    "range", pa.array(np.full(sub.num_rows, spec.range_ms, dtype=np.int64))
                )
                parts.append(sub)
            self._relevant: pa.Table = pa.concat_tables(parts)
        return self._relevant

    def _encoded(self, table: pa.Table) -> pa.Table:
        """The same table (the relevant rows or the static data) with s, p, o as term ids."""
        _ = self.terms
        ids = self._ids[id(table)]
        for c, column in zip(("s", "p", "o"), ids, strict=True):
            table = table.set_column(table.schema.get_field_index(c), c, column)
        return table

    def _df(self, table: pa.Table) -> DataFrame:
        """A small driver-side table as a DataFrame (keys, literals, reports)."""
        df: DataFrame = self.spark.createDataFrame(table)
        return df

    def _scan(self, name: str, table: pa.Table) -> DataFrame:
        """A large table as a Parquet scan: one file per core, written once per job.

        ``createDataFrame`` of an Arrow table serialises it through the driver JVM in 10,000-row
        batches, each its own partition (121 tasks for 1.2 M rows); a scan of a few local files
        is split by the planner into one task per core and read without the driver.
        """
        hit = self._scans.get(name)
        if hit is None:
            folder = self._workdir() / name
            folder.mkdir()
            parts = max(
                1, min(self.spark.sparkContext.defaultParallelism, table.num_rows // 50_000)
            )
            size = -(-table.num_rows // parts) if table.num_rows else 1
            for k in range(parts):
                pq.write_table(table.slice(k * size, size), folder / f"part-{k}.parquet")
            # the schema given, the reader plans from the files' paths alone: without it a
            # Spark job reads a footer to infer it (60–400 ms a call, most of a small job)
            schema = from_arrow_schema(table.schema)
            hit = self._scans[name] = self.spark.read.schema(schema).parquet(str(folder))
        df: DataFrame = hit
        return df

    def _workdir(self) -> Path:
        """The job's own temporary folder (scans, the shared term dictionary): ``_cleanup``
        removes it after the last Spark action."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="rsp-oracle-scan-"))
        return self._tmp

    def _cleanup(self) -> None:
        """Drop cached DataFrames and the job's Parquet files (after the last Spark action)."""
        for df in self._persisted:
            df.unpersist()
        self._persisted.clear()
        self._scans.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _rows(self) -> DataFrame:
        if "rows" not in self._scans:
            return self._scan("rows", self._encoded(self._relevant_rows()))
        return self._scans["rows"]

    def _window_content(self) -> DataFrame:
        """(idx, t, s, p, o) ids of the single window's relevant elements (temporal joins)."""
        return self._rows().select("idx", "t", "s", "p", "o")

    def _static_df(self) -> DataFrame:
        if self.static is None:
            df: DataFrame = self.spark.sql(
                "SELECT CAST(NULL AS BIGINT) AS s, CAST(NULL AS BIGINT) AS p, "
                "CAST(NULL AS BIGINT) AS o WHERE false"
            )
            return df
        return self._df(self._encoded(self.static).select(["s", "p", "o"]))

    def _run_sql(self, compiled: CompiledQuery, **views: DataFrame) -> DataFrame:
        sql = compiled.sql
        if "{static}" in sql:  # built only when read: one DataFrame less per query
            views["static"] = self._static_df()
        if "{num}" in sql:
            literals = self._df(self.terms.literals())
            views["num"] = self._raw_sql(value_table_sql(), literals=literals)
        if "{terms}" in sql:
            ids = np.arange(len(self.terms.terms), dtype=np.int64)
            views["terms"] = self._df(pa.table({"id": ids, "term": self.terms.terms}))
        out: DataFrame = self._raw_sql(sql, **views)
        return out

    def _raw_sql(self, sql: str, **views: DataFrame) -> DataFrame:
        for name, df in views.items():
            view = f"rsp_oracle_{name}_{id(self)}"
            df.createOrReplaceTempView(view)
            sql = sql.replace("{" + name + "}", view)
        out: DataFrame = self.spark.sql(sql)
        return out

    def _decode(self, table: pa.Table, compiled: CompiledQuery) -> pa.Array:
        """Binding JSON of SQL output rows (term ids, or computed texts)."""
        columns = []
        for k in range(len(self.query.variables)):
            column = table.column(projected(k)).combine_chunks()
            if k in compiled.text_positions:
                columns.append(column)
            else:
                columns.append(self.terms.decode_encoded(column))
        return binding_codes(columns, list(self.query.variables))

    def _distinct_df(self, columns: list[str]) -> DataFrame:
        """Distinct report columns as a DataFrame, deduplicated on the driver: the reports are
        already there, and a ``distinct`` in Spark is one more shuffle stage (and, under
        adaptive execution, one more job) in every query that reads them."""
        return self._df(self.reports.select(columns).group_by(columns).aggregate([]))

    def _keys(self) -> DataFrame:
        """(kc, kb, kr) of every content key some report needs."""
        return self._distinct_df(["kc", "kb", "kr"])

    def _residues(self) -> list[int]:
        """The residues mod β of the closes some report needs."""
        kc = np.unique(self.reports.column("kc").to_numpy())
        return sorted({int(r) for r in np.mod(kc, self.geom.step_ms)})

    def _keyed_elements(self, rows: DataFrame) -> DataFrame:
        """Explode each element into the closes c of the scopes [c − ω_w, c) containing it.

        c runs over the residues mod β of the reports' closes, within (t, t + ω_w]; elements
        are then kept only for the closes some report needs.
        """
        beta = self.geom.step_ms
        kc = np.unique(self.reports.column("kc").to_numpy())
        residues = self._residues()
        keys = self._df(pa.table({"kc": kc}))
        c1 = F.col("t") + 1 + F.pmod(F.col("res") - F.col("t") - 1, F.lit(beta))
        exploded = (
            rows.withColumn("res", F.explode(F.array(*[F.lit(r) for r in residues])))
            .withColumn("c1", c1)
            .where(F.col("c1") <= F.col("t") + F.col("range"))
            .withColumn("kc", F.explode(F.sequence("c1", F.col("t") + F.col("range"), F.lit(beta))))
            .drop("c1", "res")
        )
        return exploded.join(F.broadcast(keys), "kc", "left_semi")

    # -- evaluators ---------------------------------------------------------------------------
    def _relations_oxigraph(self, events: pa.Table) -> pa.Table:
        """pyoxigraph per window group: in Spark's Python workers, or on the driver when the
        input is small (``DRIVER_ROWS``)."""
        cfg, static_bytes = self._ox_config()  # first: it finds the change points and support
        if self._compacted and cfg.change_points is not None:
            events = evaluated_events(events, cfg.change_points)
        source = self._support_rows()
        if source is None:
            source = self._encoded(self._relevant_rows())
            elems = self._keyed_elements(self._rows())
        else:
            elems = self._keyed_elements(self._scan("support", source))
        if source.num_rows < DRIVER_ROWS:
            rows = driver_rows(source, events, self.reports.column("kc").to_numpy())
            return self._oxigraph_on_driver(rows, cfg, static_bytes)
        rows = self._ox_rows(elems, self._df(events))
        bc = self.spark.sparkContext.broadcast(static_bytes)
        cfg = replace(cfg, terms_file=self.terms.share(self.spark, self._workdir()))

        def fn(table: pa.Table) -> pa.Table:
            return evaluate_group(table, cfg, lambda: bc.value)

        schema = ", ".join(f"{f.name} {_spark_type(f.type)}" for f in OUTPUT_SCHEMA)
        try:
            out: pa.Table = rows.groupBy("kc").applyInArrow(fn, schema).toArrow()
        except Exception as exc:  # a worker's TooManyRows reaches here as Spark's error
            if TooManyRows.__name__ in str(exc):
                raise RowBudget(cfg.max_rows).error() from None
            raise
        return out

    def _oxigraph_on_driver(
        self, rows: pa.Table, cfg: OxConfig, static_bytes: bytes | None
    ) -> pa.Table:
        """The groups evaluated one after the other in this process, terms decoded here.

        A Python worker's start (a fork, pyarrow, pyoxigraph, the term dictionary read) and the
        Arrow round trip cost seconds of CPU; a few thousand elements take milliseconds in
        pyoxigraph. The store is this job's own: ``run_jobs`` threads must not share one.
        """
        terms = self.terms.terms
        for c in ("s", "p", "o"):
            rows = rows.set_column(rows.schema.get_field_index(c), c, terms.take(rows.column(c)))
        rows = rows.sort_by("kc")
        store = static_store(static_bytes)
        budget = RowBudget(cfg.max_rows)  # the part's groups together: all held until concat
        # few elements per group (only the support's): groups of other t0 classes often load
        # the same ones, so their solutions are looked up rather than queried again
        memo: dict[Any, Any] | None = {} if self._support is not None else None
        kc = rows.column("kc").to_numpy()
        starts = np.flatnonzero(np.r_[True, kc[1:] != kc[:-1]]) if len(kc) else kc
        ends = np.r_[starts[1:], len(kc)] if len(kc) else kc
        parts = [
            evaluate_group(rows.slice(a, b - a), cfg, lambda: static_bytes, store, memo, budget)
            for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
        ]
        return pa.concat_tables(parts) if parts else OUTPUT_SCHEMA.empty_table()

    def _ox_config(self) -> tuple[OxConfig, bytes | None]:
        """The groups' configuration (terms as strings: ``terms_file`` set by the caller) and
        the static data as N-Triples."""
        window_names = [w.name for w in self.query.windows] if self.query.window_graphs else None
        static_bytes: bytes | None = None
        digest = None
        if self.static is not None:
            s, p, o = (self.static.column(c).to_pylist() for c in ("s", "p", "o"))
            static_bytes = "\n".join(
                f"{a} {b} {c} ." for a, b, c in zip(s, p, o, strict=True)
            ).encode()
            digest = hashlib.sha256(static_bytes).hexdigest()
        cfg = OxConfig(
            sparql=self.query.sparql,
            base_iri=self.query.base_iri,
            variables=list(self.query.variables),
            window_names=window_names,
            event_driven=self.profile.event_driven,
            static_digest=digest,
            restore=lexical_restorer(used_values(self.stream.column("o"))),
            change_points=self._change_points(),
            max_rows=s2r.env_rows("RSP_ORACLE_MAX_ROWS", MAX_ROWS),
        )
        self._compacted = self._compact(cfg.change_points)
        return replace(cfg, compact=self._compacted), static_bytes

    def _ox_rows(self, elems: DataFrame, events: DataFrame) -> DataFrame:
        """Elements (kind 0) and report events (kind 1) in one frame, to be grouped by kc."""
        elem_rows = elems.select(
            F.lit(0).cast("int").alias("kind"),
            "kc",
            F.col("w").cast("int").alias("w"),
            "idx",
            "t",
            "s",
            "p",
            "o",
            *[F.lit(None).cast("long").alias(c) for c in ("kb", "kr", "kbb", "krb")],
        )
        event_rows = events.select(
            F.lit(1).cast("int").alias("kind"),
            "kc",
            F.lit(None).cast("int").alias("w"),
            *[F.lit(None).cast("long").alias(c) for c in ("idx", "t", "s", "p", "o")],
            "kb",
            "kr",
            "kbb",
            "krb",
        )
        out: DataFrame = elem_rows.unionByName(event_rows)
        return out

    def _compact(self, change_points: frozenset[int] | None) -> bool:
        """Whether events between change points need no relation of their own: Istream and
        Dstream emit nothing where the relation repeats the previous report's."""
        return (
            change_points is not None
            and not self.profile.event_driven
            and self.r2s in (R2S.ISTREAM, R2S.DSTREAM)
        )

    def _event_key(self) -> tuple[str, int | None]:
        """How a solution's completion becomes an event key: (column, tick unit or None)."""
        profile = self.profile
        if ReportPolicy.PERIODIC in profile.report:
            return "maxt", profile.period_ms
        if profile.tick is Tick.TIME_DRIVEN:
            return "maxt", profile.time_unit_ms
        if profile.tick is Tick.TUPLE_DRIVEN:
            return "maxidx", None
        return "maxt", None

    def _change_points(self) -> frozenset[int] | None:
        """Event keys at which the query's monotone pattern gains a solution (or None).

        Within one content-change window group the content only grows, so a query over a
        monotone pattern (also under aggregates) can change its result only at such events;
        the group evaluates there and reuses the previous result elsewhere.
        """
        inner = self.choice.inner
        content_change = ReportPolicy.CONTENT_CHANGE in self.profile.report
        if inner is None:
            return None
        if not content_change and (not self.choice.support or self._keyed_rows() < SUPPORT_ROWS):
            return None
        compiled = compile_plan(inner, self.terms.id_of, temporal=True, omega=self.geom.omega)
        matches = self._run_sql(compiled, content=self._window_content())
        col, unit = self._event_key()
        ek = F.col(col) if unit is None else F.ceil(F.col(col) / F.lit(unit)).cast("long") * unit
        if not self.choice.check_solutions and not self.choice.support:
            keys = matches.select(ek.alias("ek")).distinct().toArrow()
            return frozenset(int(v) for v in keys.column("ek").to_pylist())
        names = [v for v, _ in inner.projection]
        positions = [projected(k) for k in range(len(names))]
        found = matches.select(ek.alias("ek"), *positions).distinct().toArrow()
        keep = np.ones(found.num_rows, dtype=np.bool_)
        if self.choice.check_solutions:
            keep = kept_solutions(
                inner.patterns,
                names,
                [self.terms.decode(found.column(c)) for c in positions],
                sparql=self.query.sparql,
                base_iri=self.query.base_iri,
                window_names=(
                    [w.name for w in self.query.windows] if self.query.window_graphs else None
                ),
            )
        if self.choice.support:
            self._support = self._support_keys(inner.patterns, names, found.filter(pa.array(keep)))
        if not content_change:  # the support only: every report is evaluated
            return None
        return frozenset(int(v) for v in found.column("ek").filter(pa.array(keep)).to_pylist())

    def _keyed_rows(self) -> int:
        """How many (element, close) rows the window groups of the needed closes hold: each
        relevant element of window w under every close kc with kc − ω_w ≤ t < kc."""
        kc = np.unique(self.reports.column("kc").to_numpy())
        return sum(int((hi - lo).sum()) for _, lo, hi in _close_spans(self._relevant_rows(), kc))

    def _support_keys(
        self, patterns: list[Pattern], names: list[str], found: pa.Table
    ) -> np.ndarray:
        """Mixed (s, p, o) ids (``_mixed``) of the stream triples the kept solutions (``found``:
        a term id per projected position) instantiate the window patterns to."""
        column = {v: found.column(projected(k)).to_numpy() for k, v in enumerate(names)}
        n = found.num_rows
        parts = []
        for pat in patterns:
            if pat.graph == STATIC:
                continue
            spo = [
                column[node.var]
                if node.var is not None
                else np.full(n, self.terms.id_of(node.const or ""), dtype=np.int64)
                for node in (pat.s, pat.p, pat.o)
            ]
            parts.append(_mixed(spo))
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)

    def _support_rows(self) -> pa.Table | None:
        """The encoded relevant rows whose triple some kept solution of the monotone core is
        made of (None: no ``Choice.support``), after ``_change_points``.

        The query is a function of the solutions of that core that pass every filter
        (``monotone_core``), and each such solution in a window is one the temporal join found
        and the witness kept, made of triples the window holds: the window's content cut down
        to these triples has exactly the same solutions, so pyoxigraph gives the same result
        from it. On ren16 Q3 (REGEX on the observation) the window groups then load the few
        triples of matching observations instead of every element, ~1 000 per group over
        501 t0 classes. A collision of the mixed ids only keeps an element more."""
        if self._support is None:
            return None
        rows = self._encoded(self._relevant_rows())
        keys = _mixed([rows.column(c).to_numpy(zero_copy_only=False) for c in ("s", "p", "o")])
        return rows.filter(pa.array(np.isin(keys, self._support)))

    def _repeats(self, columns: list[str]) -> bool:
        """Whether some (w,) s, p, o may occur twice among the relevant rows.

        One sort of a single int64 per row (the ids mixed by multiply-add, wrapping):
        equal rows give equal keys, so a repeat is never missed; a collision only answers
        "maybe" and costs a DISTINCT that changes nothing (0.05 s, not the multi-column
        group-by's 0.6 s, at 1.2 M rows)."""
        rows = self._encoded(self._relevant_rows()).select(columns)
        if rows.num_rows < 2:
            return False
        key = _mixed([rows.column(c).to_numpy(zero_copy_only=False) for c in columns])
        # sorted in place, a repeat is two equal neighbours: Arrow's hash count of random
        # 64-bit keys took ~400 bytes a row (~5 GB of driver memory at 21 M triples)
        key.sort()
        return bool((key[1:] == key[:-1]).any())

    def _relations_prejoined(self) -> pa.Table:
        """The compiled query joined once over the single window's rows, then keyed.

        Each element enters the join once rather than once per window containing it (ω/β
        times), and nothing is exploded, deduplicated or cached before the join.
        """
        assert self.choice.plan is not None
        pre = Prejoin(
            beta=self.geom.step_ms,
            residues=tuple(self._residues()),
            omega=self.query.windows[0].range_ms,
            distinct=self._repeats(["s", "p", "o"]),
        )
        compiled = compile_plan(self.choice.plan, self.terms.id_of, prejoin=pre)
        out = self._run_sql(compiled, content=self._window_content(), keys=self._keys()).toArrow()
        return self._keyed_bindings(out, compiled)

    def _keyed_bindings(self, out: pa.Table, compiled: CompiledQuery) -> pa.Table:
        return pa.table(
            {
                "kc": out.column("kc"),
                "kb": out.column("kb"),
                "kr": out.column("kr"),
                "binding": self._decode(out, compiled),
            }
        )

    def _relations_sql(self) -> pa.Table:
        """The compiled query over the keyed content, materialised once.

        Every triple pattern scans the same keyed content; persisting it (and counting it, so
        the planner sees its real size) computes the explode once and lets small contents be
        broadcast into the joins instead of shuffled.
        """
        assert self.choice.plan is not None
        if len(self.query.windows) == 1:
            return self._relations_prejoined()
        keyed = (
            self._keyed_elements(self._rows())
            .join(F.broadcast(self._keys()), "kc")
            .where((F.col("t") < F.col("kb")) & (F.col("idx") <= F.col("kr")))
            .select("kc", "kb", "kr", "w", "s", "p", "o")
        )
        plain = any(p.graph == ANY_WINDOW for p in self.choice.plan.patterns)
        content = keyed.select("kc", "kb", "kr", "s", "p", "o") if plain else keyed
        # a window content is a set: duplicates can only arise from a triple the stream repeats
        if self._repeats(["s", "p", "o"] if plain else ["w", "s", "p", "o"]):
            content = content.dropDuplicates()
        content = content.persist()
        self._persisted.append(content)
        content.count()
        compiled = compile_plan(self.choice.plan, self.terms.id_of)
        out = self._run_sql(
            compiled,
            content=content,
            content_any=content,
            keys=self._keys(),
        ).toArrow()
        return self._keyed_bindings(out, compiled)

    def _temporal_intervals(self) -> pa.Table:
        """Presence intervals (t0, lo, hi, binding) of every solution, in report ranks.

        Solutions are joined once over the raw stream in Spark; per t0, a solution becomes
        visible with the report of its last element (or the first report, if it was complete
        at t0) and stays visible while the report instant is before c_k, the close of window k,
        the latest window opened at or before its earliest element.
        """
        assert self.choice.plan is not None
        geom = self.geom
        compiled = compile_plan(self.choice.plan, self.terms.id_of, temporal=True, omega=geom.omega)
        matches = self._run_sql(compiled, content=self._window_content()).toArrow()
        empty = pa.table(
            {
                "t0": pa.array([], pa.int64()),
                "lo": pa.array([], pa.int64()),
                "hi": pa.array([], pa.int64()),
                "binding": pa.array([], pa.string()),
            }
        )
        if matches.num_rows == 0:
            return empty
        binding = self._decode(matches, compiled)
        mint = matches.column("mint").to_numpy()
        maxt = matches.column("maxt").to_numpy()
        maxidx = matches.column("maxidx").to_numpy()
        col, unit = self._event_key()
        if col == "maxidx":
            ek, x = maxidx, maxt
        elif unit is None:
            ek = x = maxt
        else:
            ek = x = -np.floor_divide(-maxt, unit) * unit
        t0 = np.asarray(self.t0s, dtype=np.int64)
        ends = s2r.window_ends(t0, t0, geom, self.reports)
        n_m, n_t = len(mint), len(t0)
        m = np.tile(np.arange(n_m, dtype=np.int64), n_t)
        t = np.repeat(t0, n_m)
        keep = mint[m] >= t
        m, t = m[keep], t[keep]
        k = np.floor_divide(mint[m] - t, geom.step_ms)
        cand = pa.table({"t0": t, "ek": ek[m], "k": k, "m": m, "late": x[m] > t})
        if self.profile.event_driven:
            # an event-driven report carries the solutions its triggering element(s) complete;
            # one complete at t0 was there at registration, triggers nothing and is never
            # reported (as the pyoxigraph path and the reference oracle have it)
            cand = cand.filter(cand.column("late"))
        ranks = self.reports.select(["t0", "ek", "rank"])
        cand = cand.join(ranks, keys=["t0", "ek"], join_type="left outer")
        lo = pc.if_else(cand.column("late"), cand.column("rank"), pa.scalar(1, pa.int64()))
        cand = cand.append_column("lo", lo).filter(pc.is_valid(lo))
        cand = cand.join(ends, keys=["t0", "k"], join_type="inner")
        cand = cand.filter(pc.less_equal(cand.column("lo"), cand.column("hi")))
        return pa.table(
            {
                "t0": cand.column("t0"),
                "lo": cand.column("lo"),
                "hi": cand.column("hi"),
                "binding": binding.take(cand.column("m")),
            }
        )

    def relations(self) -> pa.Table:
        """(kc, kb, kr, binding) of every content key some report needs: the Spark job.

        Its cached DataFrames and Parquet files are dropped by ``run``/``run_classes``, which
        own the job from first scan to last action."""
        if self.choice.evaluator == "sql":
            if self.shared is None:
                return self._relations_sql()
            return self.shared.relations_of(self._share_key(), self._relations_sql)
        columns = ["kc", "kb", "kr", "kbb", "krb"]
        events = self.reports.select(columns).group_by(columns).aggregate([])
        table = self._relations_oxigraph(events)
        # with ``compact`` only evaluated events have rows (null terms: no solution)
        self._evaluated = table.select(["kc", "kb", "kr"])
        table = table.filter(pc.is_valid(table.column("terms")))
        binding = codes_from_terms(table.column("terms"), list(self.query.variables))
        return pa.table(
            {
                "kc": table.column("kc"),
                "kb": table.column("kb"),
                "kr": table.column("kr"),
                "binding": binding,
            }
        )

    def _share_key(self) -> tuple[Any, ...]:
        """What the SQL relations depend on besides the stream and static data (which a
        ``SharedWork`` holds fixed): the query, the geometry, and the content keys needed."""
        keys = self.reports.select(["kc", "kb", "kr"]).group_by(["kc", "kb", "kr"]).aggregate([])
        keys = keys.sort_by([("kc", "ascending"), ("kb", "ascending"), ("kr", "ascending")])
        flat = np.stack([keys.column(c).to_numpy() for c in ("kc", "kb", "kr")])
        return (
            self.query.sparql,
            self.query.base_iri,
            tuple(self.query.variables),
            tuple((w.name, w.stream, w.range_ms, w.step_ms) for w in self.query.windows),
            self.query.window_graphs,
            self.geom.step_ms,
            hashlib.sha256(np.ascontiguousarray(flat, dtype=np.int64).tobytes()).hexdigest(),
        )

    # -- the whole job --------------------------------------------------------------------------
    def run(self) -> pa.Table:
        """The expected output of every candidate t0 (EXPECTED_SCHEMA)."""
        if self._too_many is not None:
            raise self._too_many  # every candidate's rows: more than the classes' parts
        if self.reports.num_rows == 0:
            return EXPECTED_SCHEMA.empty_table()
        try:
            with self._plans():
                emitted = self._emitted()
            return self._finish(self.classes.expand(emitted), self.all_reports)
        finally:
            self._cleanup()

    def run_classes(self) -> tuple[pa.Table, s2r.T0Classes]:
        """The expected output of each class representative only, and the classes.

        Every member of a class has its representative's rows (``seq``, sizes, bindings) at
        its own report times (``all_reports``): what a verdict that ignores time needs, without
        copying the rows to thousands of candidates.
        """
        if self._too_many is not None:
            raise self._too_many  # one table: ``run_class_parts`` computes it in parts
        if self.reports.num_rows == 0:
            return EXPECTED_SCHEMA.empty_table(), self.classes
        return self._one_part(), self.classes

    def run_class_parts(self, rows: int | None = None) -> Iterator[pa.Table]:
        """``run_classes``'s table in parts, each whole classes in ascending representative
        order, sized to about ``rows`` binding rows (``part_rows()``).

        YABench's E3 join at 500 stations under rsp-js's profile has 1,942 classes and ~41 M
        expected bindings: collected at once they killed the Spark driver's 4 GiB heap, and
        their relations would fill the judging process. A job of at most ``SPLIT_REPORTS``
        representative reports is one part (one Spark job, as ``run_classes``); a larger one
        runs its first ``FIRST_PART_REPORTS`` reports, then parts sized by the rows per
        report measured so far (growing at most 8× a part). Each part is evaluated on its own
        (no ``SharedWork``: the shared relations would hold every part in memory).
        """
        limit = part_rows() if rows is None else rows
        if self._too_many is not None:
            yield from self._enumerated_parts(limit)
            return
        full = self.reports
        if full.num_rows == 0:
            yield EXPECTED_SCHEMA.empty_table()
            return
        if full.num_rows <= SPLIT_REPORTS:
            yield self.run_classes()[0]
            return
        reps, counts = np.unique(full.column("t0").to_numpy(), return_counts=True)
        ends = np.cumsum(counts)

        def upto(lo: int, budget: int) -> int:
            base = int(ends[lo - 1]) if lo else 0
            return max(lo + 1, int(np.searchsorted(ends, base + budget, side="right")))

        yield from self._sized_parts(
            len(reps), upto, lambda lo, hi: s2r.of_t0s(full, reps[lo:hi].tolist()), limit
        )

    def _enumerated_parts(self, limit: int) -> Iterator[pa.Table]:
        """``run_class_parts`` when the representatives' reports are too many to hold
        (``s2r.TooManyReports`` at planning): each part's reports are enumerated for it, at
        most ``ENUMERATED_PART_REPORTS`` at a time, sized like the held parts.

        CQELS's and ETALIS's eager profiles report at every element for every class: YABench's
        E3 join at 200 stations asks for 248 classes × 42,000 reports, past the 10 M a process
        may hold. Only with ``enumerate_parts()``: one class can still expect too many rows."""
        reps = self.classes.representatives
        per = s2r.rows_per_candidate(self.profile, self.geom)
        # representatives a part holds: ENUMERATED_PART_REPORTS reports (one class at least);
        # parts of up to the whole limit: the process judging CQELS's YABench E3 at 500
        # stations reached 13.6 GB and was OOM-killed (1 M a part: past 11 GB, stopped)
        cap = max(1, min(s2r.max_reports(), ENUMERATED_PART_REPORTS) // per)

        def reports_of(lo: int, hi: int) -> pa.Table:
            reports, _ = s2r.report_table(self.profile, self.geom, reps[lo:hi])
            return s2r.shared_keys(self.geom, reports) if self._share else reports

        yield from self._sized_parts(
            len(reps), lambda lo, budget: lo + min(cap, max(1, budget // per)), reports_of, limit
        )

    def _sized_parts(
        self,
        n: int,
        upto: Callable[[int, int], int],
        reports_of: Callable[[int, int], pa.Table],
        limit: int,
    ) -> Iterator[pa.Table]:
        """The parts of representatives ``[lo, upto(lo, budget))`` of ``n``, each computed on
        ``reports_of(lo, hi)``: a first part of ``FIRST_PART_REPORTS`` reports, then parts of
        ``limit`` rows at the rows per report measured so far, growing at most 8× a part (rows
        per report vary along the stream). Each part is evaluated on its own (no
        ``SharedWork``: the shared relations would hold every part in memory)."""
        held, shared, self.shared = self.reports, self.shared, None
        try:
            lo, budget, seen_rows, seen_reports = 0, FIRST_PART_REPORTS, 0, 0
            while lo < n:
                hi = upto(lo, budget)
                self.reports = reports_of(lo, hi)
                part = self._one_part()
                yield part
                seen_rows += part.num_rows
                seen_reports += self.reports.num_rows
                budget = max(1, min(8 * budget, int(limit * seen_reports / max(1, seen_rows))))
                lo = hi
        finally:
            self.reports, self.shared = held, shared

    def _one_part(self) -> pa.Table:
        """The expected rows of the classes in ``self.reports`` (all of them, or one part's),
        the state a previous part left dropped."""
        self._evaluated, self._compacted, self._support = None, False, None
        try:
            with self._plans():
                return self._finish(self._emitted(), self.reports)
        finally:
            self._cleanup()

    def _plans(self) -> AbstractContextManager[None]:
        """Small inputs: no adaptive execution, no generated code (``for_small_inputs``)."""
        if self._relevant_rows().num_rows < SMALL_ROWS:
            return for_small_inputs(self.spark)
        return nullcontext()

    def _emitted(self) -> pa.Table:
        """(t0, rank, binding) emitted at each report of each class representative."""
        event_driven = self.profile.event_driven
        if self.choice.evaluator == "temporal":
            t0 = self.reports.column("t0").to_numpy()
            totals = {
                int(v): int(c) for v, c in zip(*np.unique(t0, return_counts=True), strict=True)
            }
            emitted = temporal_emissions(self._temporal_intervals(), self.r2s, event_driven, totals)
        else:
            relations = self.relations()
            if self._compacted and self._evaluated is not None:
                return repeated_r2s(relations, self._evaluated, self.reports, self.r2s)
            per_report = attach(relations, self.reports)
            # event-driven reports carry their new results already: Rstream of them
            emitted = apply_r2s(per_report, R2S.RSTREAM if event_driven else self.r2s)
        return emitted

    def _finish(self, emitted: pa.Table, reports: pa.Table) -> pa.Table:
        out = finalize(
            emitted,
            reports,
            emits_empty=self.profile.emits_empty_relations,
            skip_first=self.r2s is R2S.DSTREAM and not self.profile.event_driven,
        )
        return _to_expected(out, self.query.name)


def evaluated_events(events: pa.Table, change_points: frozenset[int]) -> pa.Table:
    """The events (kc, kb, kr, kbb, krb) a compact pyoxigraph group evaluates: the first of
    each window group (kc) in (kb, kr) order and those at a change point (``evaluate_group``
    skips every other one and emits nothing for it under ``OxConfig.compact``).

    Dropping the others on the driver keeps them out of Spark altogether: ren16 Q3 on CQELS
    sent the keys of 2.25 M reports (501 t0 classes, a report per tuple) through a shuffle
    and the workers' per-event loop, which evaluates a few of each window group's ~1 000.
    """
    if events.num_rows == 0:
        return events
    kc, kb, kr = (events.column(c).to_numpy() for c in ("kc", "kb", "kr"))
    order = np.lexsort(
        (events.column("krb").to_numpy(), events.column("kbb").to_numpy(), kr, kb, kc)
    )
    first = np.zeros(len(kc), dtype=bool)
    first[order[np.r_[True, kc[order][1:] != kc[order][:-1]]]] = True
    key = np.where(kr >= s2r.INF, kb - 1, kr)  # as ``oxigraph._key``: the row or the time
    points = np.fromiter(change_points, dtype=np.int64, count=len(change_points))
    return events.filter(pa.array(first | np.isin(key, points)))


def driver_rows(source: pa.Table, events: pa.Table, closes: np.ndarray) -> pa.Table:
    """What ``_ox_rows`` gives for ``_keyed_elements(source)``, built on the driver: each
    element (kind 0) under every needed close kc with kc − ω_w ≤ t < kc, then the events
    (kind 1). A small input's groups are evaluated on the driver anyway (``DRIVER_ROWS``), and
    the Spark job that only exploded and collected them cost ~7 s of ren16 Q3's judging on a
    loaded machine."""
    kc = np.unique(closes)
    pos_parts, kc_parts = [], []
    for rows, lo, hi in _close_spans(source, kc):
        counts = hi - lo
        offsets = np.repeat(lo - (np.cumsum(counts) - counts), counts)
        pos_parts.append(rows[np.arange(int(counts.sum())) + offsets])
        kc_parts.append(np.repeat(kc, counts))
    pos = np.concatenate(pos_parts) if pos_parts else np.zeros(0, dtype=np.int64)
    elems = source.take(pa.array(pos, pa.int64()))
    n, m = len(pos), events.num_rows
    null = pa.nulls
    columns = {
        "kind": pa.array(np.zeros(n, dtype=np.int32)),
        "kc": pa.array(np.concatenate(kc_parts) if kc_parts else pos, pa.int64()),
        "w": elems.column("w").cast(pa.int32()),
        **{c: elems.column(c).cast(pa.int64()) for c in ("idx", "t", "s", "p", "o")},
        **{c: null(n, pa.int64()) for c in ("kb", "kr", "kbb", "krb")},
    }
    marks = {
        "kind": pa.array(np.ones(m, dtype=np.int32)),
        "kc": events.column("kc").cast(pa.int64()),
        "w": null(m, pa.int32()),
        **{c: null(m, pa.int64()) for c in ("idx", "t", "s", "p", "o")},
        **{c: events.column(c).cast(pa.int64()) for c in ("kb", "kr", "kbb", "krb")},
    }
    return pa.concat_tables([pa.table(columns), pa.table(marks)])


def _close_spans(
    source: pa.Table, kc: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per window range r of ``source``: its row positions sorted by t, and for each close in
    ``kc`` (sorted) the span [lo, hi) of those rows with kc − r ≤ t < kc."""
    t = source.column("t").to_numpy(zero_copy_only=False)
    ranges = source.column("range").to_numpy(zero_copy_only=False)
    order = np.argsort(t, kind="stable")
    for r in np.unique(ranges):
        rows = order[ranges[order] == r]  # this range's rows, by t
        yield rows, np.searchsorted(t[rows], kc - r, "left"), np.searchsorted(t[rows], kc, "left")


def _mixed(columns: list[np.ndarray]) -> np.ndarray:
    """One uint64 per row from its int64 ids, mixed by multiply-add (wrapping): equal rows give
    equal keys; different rows almost never do."""
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for ids in columns:
            key = key * np.uint64(0x9E3779B97F4A7C15) + np.asarray(ids).astype(np.uint64)
    return key


def _spark_type(t: pa.DataType) -> str:
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_list(t):
        return "array<string>"
    return "string"


def _to_expected(table: pa.Table, name: str) -> pa.Table:
    n = table.num_rows
    return pa.Table.from_arrays(
        [
            pa.array([name] * n, pa.string()),
            table.column("t0").cast(pa.int64()),
            table.column("seq").cast(pa.int64()),
            table.column("t_app").cast(pa.int64()),
            table.column("open").cast(pa.int64()),
            table.column("close").cast(pa.int64()),
            table.column("n").cast(pa.int64()),
            table.column("binding").cast(pa.string()),
        ],
        schema=EXPECTED_SCHEMA,
    )
