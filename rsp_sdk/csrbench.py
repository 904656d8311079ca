"""The CSRBench experiment, end to end, on any engine adapter.

CSRBench (Dell'Aglio et al., ISWC 2013) replays 34 graphs of LinkedSensorData, one per second,
into an engine, registers one of seven queries, and calls the engine correct on a query iff its
output is a contiguous part of what the oracle expects for some t0. This module runs that for
every (engine, runtime, query): it imports the data once, runs each query with ``rsp run``'s
runner (so every run is a self-describing run directory), then judges the output with the
oracle (``rsp_sdk.oracle.expected``) and the CSRBench verdict (``rsp_sdk.compare``), under the
SECRET profile the adapter declares.

Engine-agnostic choices, taken from what the adapter says about its engine:

* **R2S.** An engine whose profile fixes its relation-to-stream operator (CQELS: Istream) runs
  the query with that operator, as in the CSRBench experiment; the others get the query's.
* **Feeding.** Application-time engines are fed as fast as possible and then told that time
  moved past the last window; wall-clock engines are paced in real time (the graph at XX s is
  pushed XX s after the start), and the run waits one window after the last graph so the last
  window can close.
* **t0.** A SECRET ("slide") profile puts t0 up to ω − β before the first triple: an engine
  whose query was registered before its stream started has windows that open before the data
  (C-SPARQL reports those partial windows). The candidates are one slide's worth of t0, from
  ω − β before the first triple. A CSRBench ("window") profile enumerates t0 as the published
  oracle does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.capabilities import Feature, required_features
from rsp_sdk.engine.registry import get_adapter
from rsp_sdk.engine.session import UnsupportedQuery
from rsp_sdk.errors import InputError, RspError
from rsp_sdk.model.profile import Profile, ReportPolicy
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.run.feeder import FeederConfig, PacingMode
from rsp_sdk.run.runner import RunRequest, RunSummary, load_query, run
from rsp_sdk.runtime import runtimes_for
from rsp_sdk.streams.importers.csrbench import read_csrbench_folder
from rsp_sdk.streams.io import read_meta, read_stream, write_stream
from rsp_sdk.util.atomic import atomic_path
from rsp_sdk.util.outdir import prepare_output_dir
from rsp_sdk.util.outpath import check_new_dir

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
    tail = 2.0
    if ReportPolicy.WINDOW_CLOSE in adapter.profile.report:
        tail += max(w.range_ms + w.step_ms for w in spec.windows) / 1000
    return FeederConfig(mode=PacingMode.REAL_TIME), tail


def t0_candidates(
    profile: Profile, spec: QuerySpec, t_min: int, stream_unit_ms: int = 1000
) -> list[int] | None:
    """Explicit t0 candidates for a SECRET profile (see the module docstring); None leaves
    the enumeration to the oracle (CSRBench "window" profiles).

    Candidates step by the profile's t0 step or else by the *stream's* time unit, as the
    oracle's own enumeration does: a profile counting time in ms (ETALIS) over CSRBench's
    one-graph-per-second data would otherwise ask for 10,000 candidates per 10 s slide, all
    but ten of them equivalent, and the expected output of each."""
    if profile.t0.span != "slide" or profile.t0.first_ms is not None:
        return None
    unit = profile.t0.step_ms or stream_unit_ms
    window = spec.windows[0]
    lead = max(0, window.range_ms - window.step_ms)
    first = (t_min - lead) // unit * unit
    return list(range(first, first + window.step_ms, unit))


def judge(
    stream: Path, spec: QuerySpec, adapter: Adapter, run_dir: Path, actual_events: int = -1
) -> tuple[str, dict[str, Any]]:
    """(state, verdict as a dict) of one run, judged by the oracle under the adapter's profile."""
    from rsp_sdk.compare.answers import load_answers
    from rsp_sdk.compare.check import check
    from rsp_sdk.oracle import expected as oracle_expected  # Spark: imported when judging

    profile = adapter.profile
    table = read_stream(stream)
    t_min = int(pc.min(table.column("t_app_ms")).as_py())
    meta = read_meta(stream)
    t0s = t0_candidates(profile, spec, t_min, meta.time_unit_ms if meta else 1)
    expected = oracle_expected(stream, spec, profile, t0s=t0s)
    actual = load_answers(run_dir)
    result = check(expected, actual, profile, profile.r2s or spec.r2s, query=spec.name)
    detail = result.model_dump(mode="json")
    if result.correct and actual_events == 0 and expected.num_rows > 0:
        # CSRBench's rule accepts the empty sequence as a contiguous part of any expected
        # output; an engine that said nothing where the oracle expects answers is not "correct"
        return "no output", detail
    return ("correct" if result.correct else "incorrect"), detail


def _divergence(detail: dict[str, Any]) -> str | None:
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


def run_one(
    adapter: Adapter,
    runtime: str,
    spec: QuerySpec,
    stream: Path,
    run_dir: Path,
    *,
    engine_config: dict[str, Any] | None = None,
    judged: bool = True,
) -> Verdict:
    """Run one query on one engine and runtime, and judge it."""
    spec = engine_query(spec, adapter)
    base = {"engine": adapter.name, "runtime": runtime, "query": spec.name}
    missing = adapter.capabilities.missing(required_features(spec))
    if missing:
        names = ", ".join(sorted(f.value for f in missing))
        return Verdict(**base, state="unsupported", error=f"needs {names}")
    try:  # a dialect may lack a construct no feature flag names (EP-SPARQL: disjoint joins)
        adapter.render(spec)
    except UnsupportedQuery as exc:
        return Verdict(**base, state="unsupported", error=str(exc))
    run_dir.mkdir(parents=True, exist_ok=True)
    query_file = run_dir.parent / f"{run_dir.name}.query.json"
    with atomic_path(query_file) as tmp:
        tmp.write_text(spec.model_dump_json(indent=2))
    feeder, tail = feeding(adapter, spec)
    summary: RunSummary = run(
        RunRequest(
            engine=adapter.name,
            runtime=runtime,
            query=query_file,
            stream=stream,
            output=run_dir,
            feeder=feeder,
            engine_config=engine_config or {},
            drain_quiet_s=tail,
            drain_max_s=max(60.0, 4 * tail),
        ),
        adapter=adapter,
    )
    done = {
        **base,
        "relations": summary.result_events,
        "rows": summary.result_rows,
        "run_dir": summary.run_dir,
        "duration_s": summary.duration_s,
    }
    if summary.state != "ok":
        return Verdict(**done, state="failed", error=summary.engine_message or summary.error)
    if not judged:
        return Verdict(**done, state="not judged")
    state, detail = judge(stream, spec, adapter, run_dir, summary.result_events)
    verdict = detail.get("verdict", {})
    return Verdict(
        **done,
        state=state,
        t0=detail.get("t0"),
        matched_relations=verdict.get("matched_relations"),
        divergence=_divergence(detail),
        detail=detail,
    )


Progress = Callable[[Verdict], None]


def run_csrbench(request: CsrbenchRequest, *, progress: Progress | None = None) -> list[Verdict]:
    """Every requested engine × runtime × query, recorded under ``request.output``."""
    out = request.output
    check_new_dir(out)
    specs = _queries(request.query_dir, request.queries)
    adapters = [get_adapter(name) for name in request.engines]
    prepare_output_dir(out, kind="csrbench", force=request.force)
    stream = prepare_stream(request.data_dir, out)
    verdicts: list[Verdict] = []
    for adapter in adapters:
        runtimes = request.runtimes or runtimes_for(adapter.driver_kind)
        for runtime in runtimes:
            for spec in specs:
                run_dir = out / "runs" / f"{adapter.name}@{runtime}" / spec.name
                try:
                    v = run_one(
                        adapter,
                        runtime,
                        spec,
                        stream,
                        run_dir,
                        engine_config=request.engine_config,
                        judged=request.judge,
                    )
                except (RspError, ValueError) as exc:  # a usage error for this combination
                    v = Verdict(
                        engine=adapter.name,
                        runtime=runtime,
                        query=spec.name,
                        state="failed",
                        error=str(exc),
                    )
                verdicts.append(v)
                if progress is not None:
                    progress(v)
    with atomic_path(out / "csrbench.json") as tmp:
        tmp.write_text(
            "[\n" + ",\n".join(v.model_dump_json() for v in verdicts) + "\n]\n", encoding="utf-8"
        )
    return verdicts


def _queries(folder: Path, names: Sequence[str]) -> list[QuerySpec]:
    specs = []
    for name in names:
        path = folder / f"{name}.rspql"
        if not path.exists():
            raise InputError("no such CSRBench query", path=path, expected="q1 … q7")
        loaded = load_query(path)
        assert loaded.spec is not None
        specs.append(loaded.spec.model_copy(update={"name": name}))
    return specs
