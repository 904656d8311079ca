"""The CSRBench experiment, end to end, on any engine adapter.

CSRBench (Dell'Aglio et al., ISWC 2013) replays 34 graphs of LinkedSensorData, one per second,
into an engine, registers one of seven queries, and calls the engine correct on a query iff its
output is a contiguous part of what the oracle expects for some t0. This module runs that for
every (engine, runtime, query) as the ``matrix/csrbench.toml`` matrix spec (``run_csrbench`` is
a front for ``rsp_sdk.matrix``: every run is a cell, a self-describing run directory plus its
judgement), judging each output with the oracle (``rsp_sdk.oracle.expected``) and the CSRBench
verdict (``rsp_sdk.compare``) under the SECRET profile the adapter declares. The rules below
(``engine_query``, ``feeding``, ``t0_candidates``, ``judge``) are what the matrix calls.

Engine-agnostic choices, taken from what the adapter says about its engine:

* **R2S.** An engine whose profile fixes its relation-to-stream operator (CQELS: Istream) runs
  the query with that operator, as in the CSRBench experiment; the others get the query's.
* **Feeding.** Application-time engines are fed as fast as possible and then told that time
  moved past the last window; wall-clock engines are paced in real time (the graph at XX s is
  pushed XX s after the start), and the run waits one window after the last graph so the last
  window can close.
* **t0.** The oracle's candidates for the adapter's profile (``rsp_sdk.oracle.s2r.t0_candidates``):
  an engine whose query is registered before its stream starts declares that its windows open
  before the data (``T0Policy.lead``; C-SPARQL 0.9.7 reports those partial windows), a
  CSRBench ("window") profile enumerates t0 as the published oracle does. Judging is
  ``rsp_sdk.compare.judge.judge_run``, the function `rsp oracle check` calls, so that command
  with the adapter's profile gives the same verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import Profile, ReportPolicy
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig, PacingMode
from rsp_sdk.streams.importers.csrbench import read_csrbench_folder
from rsp_sdk.streams.io import read_meta, read_stream, write_stream
from rsp_sdk.util.atomic import atomic_path
from rsp_sdk.util.outdir import check_output_dir, prepare_output_dir

if TYPE_CHECKING:
    from rsp_sdk.compare.parts import ExpectedTable

QUERIES = tuple(f"q{n}" for n in range(1, 8))
STREAM_IRI = "http://ex.org/streams/test"
INTERVAL_MS = 1000


def default_query_dir() -> Path:
    """matrix/queries/csrbench of this checkout."""
    return Path(__file__).resolve().parent.parent / "matrix" / "queries" / "csrbench"


class Verdict(BaseModel):
    """One line of the CSRBench table."""

    model_config = ConfigDict(frozen=True)

    engine: str
    runtime: str
    query: str
    state: str = Field(
        description="correct, incorrect, no output, unsupported, failed or not judged"
    )
    t0: int | None = Field(default=None, description="the matching t0 (ms)")
    t0_ranges: list[tuple[int, int]] = Field(
        default_factory=list,
        description="runs [first, last] of candidates expecting what t0 expects: correct for all",
    )
    relations: int = 0
    rows: int = 0
    matched_relations: int | None = None
    divergence: str | None = Field(
        default=None, description="the first diverging relation and why (incorrect runs)"
    )
    detail: dict[str, Any] | None = Field(default=None, description="the full verdict")
    error: str | None = None
    run_dir: str | None = None
    duration_s: float | None = None


class CsrbenchRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    engines: list[str]
    runtimes: list[str] | None = Field(
        default=None, description="None: every runtime that can carry each engine"
    )
    queries: list[str] = Field(default_factory=lambda: list(QUERIES))
    query_dir: Path = Field(default_factory=default_query_dir)
    data_dir: Path
    output: Path
    engine_config: dict[str, Any] = Field(default_factory=dict)
    judge: bool = True
    force: bool = False
    evaluator: str = Field(default="auto", description="the oracle's: auto, oxigraph, sql")
    spark_master: str | None = Field(default=None, description="None: local[*]")


def prepare_stream(data_dir: Path, output: Path) -> Path:
    """The CSRBench graphs (data_XX.ttl at XX s) as a stream Parquet file in ``output``."""
    from rsp_sdk.model.stream import StreamMeta

    table = read_csrbench_folder(data_dir, interval_ms=INTERVAL_MS, stream=STREAM_IRI)
    meta = StreamMeta(
        producer="import:csrbench-ttl",
        time_unit_ms=INTERVAL_MS,
        parameters={"source": str(data_dir), "interval_ms": str(INTERVAL_MS)},
    )
    return write_stream(table, output / "csrbench.parquet", meta)


def engine_query(spec: QuerySpec, adapter: Adapter) -> QuerySpec:
    """The query as CSRBench asks the engine: with the engine's own R2S operator, if it has one."""
    r2s = adapter.profile.r2s
    return spec if r2s is None or r2s == spec.r2s else spec.model_copy(update={"r2s": r2s})


def feeding(adapter: Adapter, spec: QuerySpec) -> tuple[FeederConfig, float]:
    """(feeder config, seconds to wait for results after the last push)."""
    if Feature.APP_TIME_INPUT in adapter.capabilities:
        return FeederConfig(mode=PacingMode.AFAP), 2.0
    return FeederConfig(mode=PacingMode.REAL_TIME), wall_clock_tail(adapter, spec) or 2.0


def wall_clock_tail(adapter: Adapter, spec: QuerySpec) -> float | None:
    """Seconds a wall-clock engine that reports at window close needs after the last push for
    its last window to close — ω + β of wall time, whatever the feeding pace (LSBench at time
    scale 20.5 ends 1.2 s after the first push: C-SPARQL 0.9's first 5 s window had not
    closed) — plus 2 s; None for the others (the spec's quiet time)."""
    if Feature.APP_TIME_INPUT in adapter.capabilities or not spec.windows:
        return None
    if ReportPolicy.WINDOW_CLOSE not in adapter.profile.report:
        return None
    return 2.0 + max(w.range_ms + w.step_ms for w in spec.windows) / 1000


def judge_t0s(stream: Path, spec: QuerySpec, profile: Profile) -> list[int]:
    """The t0 candidates the oracle enumerates for this stream, query and profile (its one t0
    rule, ``rsp_sdk.oracle.s2r.t0_candidates``): the matrix keys its oracle cache by them."""
    from rsp_sdk.oracle.s2r import t0_candidates

    table = read_stream(stream, columns=["t_app_ms"])
    t_min = int(pc.min(table.column("t_app_ms")).as_py())
    meta = read_meta(stream)
    unit = meta.time_unit_ms if meta and meta.time_unit_ms else 1
    return t0_candidates(profile, spec, stream_unit_ms=unit, t_min=t_min)


def judge(
    stream: Path,
    spec: QuerySpec,
    adapter: Adapter,
    run_dir: Path,
    *,
    expected: pa.Table | ExpectedTable | None = None,
    representative_of: dict[int, int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """(state, verdict as a dict) of one run, judged by the oracle under the adapter's profile.

    A thin caller of ``rsp_sdk.compare.judge.judge_run`` with the oracle's own t0 candidates for
    that profile: `rsp oracle check --profile <the adapter's profile>` gives the same verdict.
    ``expected``: the oracle's output for (stream, spec, profile), when the caller already has
    it (the matrix computes it once and reuses it across cells); ``representative_of``: it
    holds the t0 class representatives only (see ``judge_run``). ``expected`` may also be
    a table too large to hold, on disk in parts (``rsp_sdk.compare.parts``), with
    ``representative_of``."""
    return judge_each(
        stream,
        spec,
        adapter,
        run_dir,
        [spec.name],
        expected=expected,
        representative_of=representative_of,
    )[spec.name]


def judge_each(
    stream: Path,
    spec: QuerySpec,
    adapter: Adapter,
    run_dir: Path,
    queries: list[str],
    *,
    expected: pa.Table | ExpectedTable | None = None,
    representative_of: dict[int, int] | None = None,
) -> dict[str, tuple[str, dict[str, Any]]]:
    """``judge`` for each of ``queries`` in the run: the simultaneous instances of ``spec``
    (CityBench's concurrency axis), all expecting its output, which is grouped once."""
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.compare.judge import judge_each as judge_table
    from rsp_sdk.compare.parts import ExpectedTable, judge_parts_each

    profile, r2s = adapter.profile, adapter.profile.r2s or spec.r2s
    actual = load_answers(run_dir)
    if expected is None:
        from rsp_sdk.oracle import expected as oracle_expected  # Spark: imported when judging

        expected = oracle_expected(stream, spec, profile)
    names: list[str | None] = list(queries)
    if isinstance(expected, ExpectedTable):
        assert representative_of is not None, "parts hold class representatives"
        results = judge_parts_each(
            expected, actual, profile, r2s, queries=names, representative_of=representative_of
        )
    else:
        results = judge_table(
            expected, actual, profile, r2s, queries=names, representative_of=representative_of
        )
    return {str(q): (r.state.value, r.model_dump(mode="json")) for q, r in results.items()}


def divergence_text(detail: dict[str, Any]) -> str | None:
    d = detail.get("divergence")
    if not d:
        return None
    at = d.get("actual_t_app_ms")
    when = f"t_app {at} ms" if at is not None else f"received #{d['actual_index'] + 1}"
    exp = d.get("expected_t_app_ms")
    scope = (
        f"; expected relation at {exp} ms over [{d['expected_window_open_ms']}, "
        f"{d['expected_window_close_ms']})"
        if exp is not None
        else ""
    )
    return (
        f"relation {d['actual_index'] + 1} ({when}), best t0 {d['t0_ms']} ms: {d['reason']}"
        f"{scope}; {len(d['missing'])} missing, {len(d['extra'])} extra binding(s)"
    )


def default_spec() -> Path:
    """matrix/csrbench.toml of this checkout: the spec ``rsp csrbench`` is a front for."""
    return default_query_dir().parent.parent / "csrbench.toml"


def _verdict(row: dict[str, Any], root: Path) -> Verdict:
    """A matrix cell as a line of the CSRBench table."""
    base = {"engine": row["engine"], "runtime": row["runtime"], "query": row["query"]}
    if row["state"] == "refused":
        return Verdict(**base, state="unsupported", error=row.get("reason"))
    run_dir = root / row["run_dir"] if row.get("run_dir") else None
    status = run_dir / "status.json" if run_dir else None
    duration = (
        json.loads(status.read_text()).get("duration_s") if status and status.exists() else None
    )
    done: dict[str, Any] = {
        **base,
        "relations": row.get("relations") or 0,
        "rows": row.get("rows") or 0,
        "run_dir": str(run_dir) if run_dir else None,
        "duration_s": duration,
    }
    if row["state"] != "ok":
        return Verdict(**done, state="failed", error=row.get("reason"))
    verdict = row.get("verdict") or "not_judged"
    if verdict == "not_judged":
        return Verdict(**done, state="not judged", error=row.get("reason"))
    detail_file = run_dir / "verdict.json" if run_dir else None
    detail = json.loads(detail_file.read_text()) if detail_file and detail_file.exists() else {}
    return Verdict(
        **done,
        state=verdict.replace("_", " "),
        t0=row.get("t0_ms"),
        t0_ranges=[(int(a), int(b)) for a, b in detail.get("verdict", {}).get("t0_ranges", [])],
        matched_relations=detail.get("verdict", {}).get("matched_relations"),
        divergence=row.get("divergence"),
        detail=detail or None,
    )


def csrbench_spec(request: CsrbenchRequest) -> Any:
    """matrix/csrbench.toml narrowed to the request's engines, runtimes, queries and data."""
    from rsp_sdk.matrix.spec import EngineAxis, ImportSource, Metric, QueryAxis, StreamAxis
    from rsp_sdk.matrix.spec import load_spec as load_matrix_spec

    spec = load_matrix_spec(default_spec())
    engines = [
        EngineAxis(name=e, runtimes=request.runtimes, engine_config=request.engine_config)
        for e in request.engines
    ]
    source = ImportSource(
        format="csrbench",
        path=str(request.data_dir.resolve()),
        interval_ms=INTERVAL_MS,
        stream=STREAM_IRI,
    )
    files = [str((request.query_dir / f"{q}.rspql").resolve()) for q in request.queries]
    return spec.model_copy(
        update={
            "engines": engines,
            "streams": [StreamAxis.model_validate({"name": "csrbench", "import": source})],
            "queries": [QueryAxis(files=files)],
            "metrics": [Metric.CSRBENCH] if request.judge else [],
        }
    )


Progress = Callable[[Verdict], None]


def run_csrbench(request: CsrbenchRequest, *, progress: Progress | None = None) -> list[Verdict]:
    """Every requested engine × runtime × query, as the ``csrbench`` matrix spec: recorded
    under ``request.output`` (a matrix results directory), one verdict per cell."""
    from rsp_sdk.matrix.run import Progress as CellProgress
    from rsp_sdk.matrix.run import run_matrix

    out = request.output
    check_output_dir(out, force=request.force)  # refused before any work, nothing deleted
    for q in request.queries:  # a clean error before any work
        if not (request.query_dir / f"{q}.rspql").exists():
            raise InputError(
                "no such CSRBench query", path=request.query_dir / f"{q}.rspql", expected="q1 … q7"
            )
    prepare_output_dir(out, kind="csrbench", force=request.force)

    def on_cell(p: CellProgress) -> None:
        if progress is not None and p.event == "done" and p.row is not None:
            progress(_verdict(p.row, out))

    spec = csrbench_spec(request)
    result = run_matrix(
        spec,
        default_spec(),
        out,
        progress=on_cell,
        evaluator=request.evaluator,
        spark_master=request.spark_master,
    )
    verdicts = [_verdict(row, out) for row in result.rows]
    prepare_stream(request.data_dir, out)  # the stream as before, beside the matrix files
    with atomic_path(out / "csrbench.json") as tmp:
        tmp.write_text(
            "[\n" + ",\n".join(v.model_dump_json() for v in verdicts) + "\n]\n", encoding="utf-8"
        )
    return verdicts
