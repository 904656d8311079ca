"""Rate_max (Ren et al. 2016): the highest input rate an engine sustains on a query.

An engine *sustains* a rate when the feeder reached it (at least ``min_achieved`` of it: an
engine whose ``push`` blocks slows the feeder down), every window was answered within its STEP
of closing (result latency ≤ the query's smallest slide: the next window is due by then; for
an engine whose relations carry no application time, each relation within its STEP of the
push of the newest observation it names) and the answer is still correct (the oracle's
verdict, when the spec judges). The first ``warmup_windows`` windows of each query (default 1)
are left out of the STEP rule — an engine's first evaluation pays class loading and JIT
warm-up, not the rate — and each probe lists them.
The search doubles the rate from ``start`` until it fails or reaches ``max_rate``, then
bisects between the highest sustained and the lowest failed rate. Every probe is an ordinary
cell (feeding ``rate``) whose key hashes only its inputs, so a killed search resumes: the probes
already done are read back, the same decisions replay, and only the missing probes run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from rsp_sdk.matrix.engines import EngineInfo
from rsp_sdk.matrix.inputs import PreparedStream
from rsp_sdk.matrix.judge import needs_judging
from rsp_sdk.matrix.metrics import window_latencies, without_warmup
from rsp_sdk.matrix.obslatency import relation_lags
from rsp_sdk.matrix.plan import Cell, CellState, Query, Slot, cells_for
from rsp_sdk.matrix.select import select
from rsp_sdk.matrix.spec import FeedMode, MatrixSpec, RateSearch
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.profile import load_profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.util.atomic import atomic_path

RESULT_FILE = "ratesearch.json"
# what a probe's window latency counts from (``probe_windows``)
CLOSING = "after closing"
NEWEST = "after the newest observation it names was sent"


class Window(BaseModel):
    """One answered window of a probe: which, and how long after its close it came."""

    model_config = ConfigDict(frozen=True)

    query: str
    seq: int
    latency_ms: float


class Probe(BaseModel):
    model_config = ConfigDict(frozen=True)

    rate: float
    sustained: bool
    why: str
    key: str | None = None
    warmup_excluded: list[Window] = []


class SearchResult(BaseModel):
    """One search: ``rate_max`` is None when not even the lowest probe was sustained;
    ``capped`` when ``max_rate`` was sustained (the engine may go higher)."""

    engine: str
    variant: str | None = None  # another entry of the same adapter (spec.engine_variants)
    runtime: str
    query: str
    stream: str
    step_ms: int
    rate_max: float | None
    capped: bool
    probes: list[Probe]
    reason: str | None = None


def _round(rate: float) -> float:
    """Rates in whole triples/s (a stable, readable cell label) above 10, else 3 digits."""
    return float(round(rate)) if rate >= 10 else float(f"{rate:.3g}")


def search(probe: Callable[[float], Probe], cfg: RateSearch) -> tuple[float | None, bool]:
    """(rate_max, capped) by doubling then bisecting; ``probe`` runs (or reads back) one rate."""
    lo: float | None = None
    hi: float | None = None
    rate = _round(min(cfg.start, cfg.max_rate))
    if probe(rate).sustained:
        lo = rate
        while hi is None and lo < cfg.max_rate:
            rate = _round(min(lo * 2, cfg.max_rate))
            if probe(rate).sustained:
                lo = rate
            else:
                hi = rate
    else:  # not even the start: halve (as many times as bisection steps) to find a floor
        hi = rate
        for _ in range(max(1, cfg.bisect_steps)):
            rate = _round(rate / 2)
            if probe(rate).sustained:
                lo = rate
                break
            hi = rate
    for _ in range(cfg.bisect_steps):
        if lo is None or hi is None:
            break
        mid = _round((lo + hi) / 2)
        if mid in (lo, hi):
            break
        if probe(mid).sustained:
            lo = mid
        else:
            hi = mid
    return lo, hi is None


def sustained(
    row: dict[str, Any],
    rate: float,
    step_ms: int,
    min_achieved: float,
    windows: list[tuple[str, int, float, float]] | None = None,
    warmup: int = 0,
    *,
    judged: bool = True,
    after: str = CLOSING,
) -> Probe:
    """Did this probe's cell keep up (rate reached, every window in its STEP, correct)?

    ``windows`` are the cell's answered windows (``probe_windows``); the first
    ``warmup`` of each query are left out of the STEP rule and listed in the probe. Without
    them (no run directory) the row's ``latency_ms_max`` over every window decides. ``judged``:
    the spec asks for a verdict, and then only a correct one sustains — a probe the oracle
    could not judge shows nothing about correctness. A probe without a single answered window
    never sustains either: nothing shows the engine kept up (CQELS fed at a rate answered
    nothing, and such probes made the feeder's ceiling its Rate_max). ``after`` says what a
    window's latency is measured from (``probe_windows``: its close, or the newest observation it
    names for an engine that reports no application time)."""
    key = row.get("key")
    if row.get("state") != "ok":
        why = f"{row.get('state')}: {row.get('reason') or 'no reason given'}"
        return Probe(rate=rate, sustained=False, why=why, key=key)
    verdict = row.get("verdict")
    if verdict in ("incorrect", "no_output") or (judged and verdict != "correct"):
        why = f"verdict {verdict}" + (f" ({row['reason']})" if row.get("reason") else "")
        return Probe(rate=rate, sustained=False, why=why, key=key)
    if not (windows if windows is not None else row.get("relations")):
        return Probe(rate=rate, sustained=False, why="no window answered", key=key)
    achieved = row.get("rate_achieved")
    if achieved is None or achieved < min_achieved * rate:
        got = "nothing" if achieved is None else f"{achieved:.0f}"
        why = f"feeder reached {got} of {rate:g} triples/s"
        return Probe(rate=rate, sustained=False, why=why, key=key)
    latency: float | None = row.get("latency_ms_max")
    skipped: list[Window] = []
    if windows is not None:
        latency, skipped = _after_warmup(windows, warmup)
    gone = f" (warm-up left out: {len(skipped)} window(s))" if skipped else ""
    if windows is not None and latency is None:  # every answered window was warm-up
        why = (
            f"no window answered after the warm-up{gone}: nothing shows the engine kept up "
            "(the stream is too short at this rate; a longer one would)"
        )
        return Probe(rate=rate, sustained=False, why=why, key=key, warmup_excluded=skipped)
    if latency is not None and latency > step_ms:
        why = f"a window answered {latency:.0f} ms {after} (STEP {step_ms} ms){gone}"
        return Probe(rate=rate, sustained=False, why=why, key=key, warmup_excluded=skipped)
    lat = "no results" if latency is None else f"latency max {latency:.0f} ms"
    lat += "" if latency is None or after == CLOSING else f" {after}"
    why = f"reached {achieved:.0f} triples/s, {lat}{gone}, verdict {row.get('verdict')}"
    return Probe(rate=rate, sustained=True, why=why, key=key, warmup_excluded=skipped)


def _after_warmup(
    windows: list[tuple[str, int, float, float]], warmup: int
) -> tuple[float | None, list[Window]]:
    """(largest latency after the first ``warmup`` windows of each query, the windows left out);
    ``windows`` in report order per query, as ``probe_windows`` gives them."""
    seen: dict[str, int] = {}
    skipped: list[Window] = []
    kept: list[float] = []
    for query, seq, _, latency in windows:
        seen[query] = seen.get(query, 0) + 1
        if seen[query] <= warmup:
            skipped.append(Window(query=query, seq=seq, latency_ms=round(latency, 1)))
        else:
            kept.append(latency)
    return (max(kept) if kept else None), skipped


def step_ms(query: QuerySpec) -> int:
    """The STEP an execution must fit in: the smallest slide of the query's windows."""
    return min((w.step_ms for w in query.windows), default=1000)


def max_probes(cfg: RateSearch) -> int:
    """Probes one search runs at most (for the plan's wall time)."""
    up = max(1, math.ceil(math.log2(max(cfg.max_rate / cfg.start, 1.0))) + 1)
    return up + cfg.bisect_steps + 1


def targets(spec: MatrixSpec, cells: list[Cell]) -> list[Cell]:
    """One planned cell per (engine, runtime, stream, query) the spec searches Rate_max for."""
    cfg = spec.rate_search
    if cfg is None:
        return []
    seen: dict[tuple[str, str | None, str, str, str], Cell] = {}
    for c in cells:
        if c.state is not CellState.PLANNED or c.repetition != 1:
            continue
        if cfg.engines is not None and c.engine not in cfg.engines:
            continue
        if cfg.queries is not None and c.query not in cfg.queries:
            continue
        if cfg.streams is not None and c.stream not in cfg.streams:
            continue
        seen.setdefault((c.engine, c.variant, c.runtime, c.stream, c.query), c)
    return list(seen.values())


def probe_cell(
    spec: MatrixSpec,
    info: EngineInfo,
    engine_config: dict[str, Any],
    runtime: str,
    stream: PreparedStream,
    query: Query,
    rate: float,
    variant: str | None = None,
) -> Cell | None:
    """The cell of one probe: the spec's cell for this engine, query and stream fed at
    ``rate`` (None if the spec's rules exclude it)."""
    feeding = spec.feeding.model_copy(update={"modes": [FeedMode.RATE], "rates": [rate]})
    probe_spec = spec.model_copy(update={"feeding": feeding})
    override = load_profile(spec.profile) if spec.profile else None
    slot = Slot(probe_spec, info, engine_config, runtime, stream, query, 1, variant)
    cells = cells_for(slot, override)
    return cells[0] if cells else None


RunOne = Callable[[Cell], dict[str, Any]]


def run_searches(
    spec: MatrixSpec,
    planned_cells: list[Cell],
    streams: dict[str, PreparedStream],
    queries: list[Query],
    engines: dict[str, EngineInfo],
    store: Store,
    run_one: RunOne,
    only: list[str] | None = None,
) -> list[SearchResult]:
    """Every search of the spec; ``run_one`` runs a probe cell that is not done yet."""
    cfg = spec.rate_search
    if cfg is None:
        return []
    by_name = {q.name: q for q in queries}
    results: list[SearchResult] = []
    for target in targets(spec, planned_cells):
        prober = _Prober(
            spec,
            cfg,
            engines[target.engine],
            target.engine_config,  # the entry's own: two entries of an adapter differ here
            target,
            by_name[target.query],
            streams[target.stream],
            store,
            run_one,
            only or [],
        )
        if prober.cell(1.0) is None:
            continue  # excluded: no search (an earlier one in ratesearch.json stays)
        rate_max, capped = search(prober, cfg)
        results.append(
            SearchResult(
                engine=target.engine,
                variant=target.variant,
                runtime=target.runtime,
                query=target.query,
                stream=target.stream,
                step_ms=prober.step,
                rate_max=rate_max,
                capped=capped and rate_max is not None,
                probes=prober.probes,
                reason=None if rate_max is not None else prober.probes[-1].why,
            )
        )
    write_results(store.root, results)
    return results


@dataclass
class _Prober:
    """One search's probes: the cell of a rate, run (or read back when done) and judged
    sustained or not; every probe made is kept, in order, for ratesearch.json."""

    spec: MatrixSpec
    cfg: RateSearch
    info: EngineInfo
    engine_config: dict[str, Any]
    target: Cell
    query: Query
    stream: PreparedStream
    store: Store
    run_one: RunOne
    only: list[str]
    probes: list[Probe] = field(default_factory=list)

    @cached_property
    def step(self) -> int:
        assert self.target.query_spec is not None
        return step_ms(QuerySpec.model_validate(self.target.query_spec))

    def cell(self, rate: float) -> Cell | None:
        """The probe cell at ``rate``; None where the spec's rules or --only exclude it."""
        cell = probe_cell(
            self.spec,
            self.info,
            self.engine_config,
            self.target.runtime,
            self.stream,
            self.query,
            rate,
            self.target.variant,
        )
        return None if cell is None or (self.only and not select([cell], self.only)) else cell

    def __call__(self, rate: float) -> Probe:
        probe = self._probe(rate)
        self.probes.append(probe)
        return probe

    def _probe(self, rate: float) -> Probe:
        cell = self.cell(rate)
        if cell is None:
            return Probe(rate=rate, sustained=False, why="excluded by the spec or --only")
        if cell.state is not CellState.PLANNED:
            return Probe(rate=rate, sustained=False, why=cell.reason or cell.state.value)
        row = self.store.done(cell.key) or self.run_one(cell)
        windows, after = probe_windows(self.store, row)
        return sustained(
            row,
            rate,
            self.step,
            self.cfg.min_achieved,
            windows,
            self.cfg.warmup_windows,
            judged=needs_judging(cell),
            after=after,
        )


def probe_windows(
    store: Store, row: dict[str, Any]
) -> tuple[list[tuple[str, int, float, float]] | None, str]:
    """The probe cell's answered windows, read back from its run directory (None without one),
    and what their latency counts from. Windows closing within a spec's warm-up are not the
    rate's (``metrics.measured_windows``); relations naming only warm-up observations have no
    lag (``obslatency.sent_at`` maps the measured stream only). Relations without application
    time (CQELS, C-SPARQL 0.9: wall-clock windows) count from the newest observation they name
    (``obslatency.relation_lags``): an engine answering no window would otherwise never
    sustain a rate, and Ren et al. define Rate_max for C-SPARQL, time-driven on its wall
    clock."""
    run_dir = row.get("run_dir")
    if not run_dir or not (store.root / run_dir / "pushed.parquet").exists():
        return None, CLOSING
    found = window_latencies(store.root / run_dir)
    if found:  # an engine with application-time windows: only the measured ones count
        return without_warmup(store.root / run_dir, found), CLOSING
    lags = relation_lags(store.root / run_dir)
    return (lags, NEWEST) if lags else (found, CLOSING)


def write_results(root: Path, results: list[SearchResult]) -> None:
    """Merge into ``ratesearch.json`` (a run with ``--only`` keeps the other searches)."""
    target = root / RESULT_FILE

    def ident(r: dict[str, Any]) -> tuple[str, ...]:
        return (r["engine"], r.get("variant") or "", r["runtime"], r["query"], r["stream"])

    merged = {ident(r): r for r in read_results(root)}
    merged.update({ident(d): d for d in (r.model_dump(mode="json") for r in results)})
    with atomic_path(target) as tmp:
        doc = list(merged.values())
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def read_results(root: Path) -> list[dict[str, Any]]:
    path = root / RESULT_FILE
    if not path.exists():
        return []
    doc: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def summary_entries(root: Path) -> list[dict[str, Any]]:
    """summary.json's Rate_max entries: feeding ``rate-max``, rate = Rate_max."""
    out = []
    for r in read_results(root):
        out.append(
            {
                "engine": r["engine"],
                "variant": r.get("variant"),
                "runtime": r["runtime"],
                "query": r["query"],
                "stream": r["stream"],
                "feeding": "rate-max",
                "rate": r["rate_max"],
                "rate_max": r["rate_max"],
                "rate_max_capped": r["capped"],
                "step_ms": r["step_ms"],
                "probes": [
                    {k: p.get(k) for k in ("rate", "sustained", "why", "warmup_excluded")}
                    for p in r["probes"]
                ],
                "reason": r.get("reason"),
            }
        )
    return out
