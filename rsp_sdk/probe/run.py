"""The probe sequence for one engine: each probe is placed where the previous ones found the
window edges, then every field is inferred from the outputs alone.

1. grid — clock, t0 phase (window edges to 250 ms);
2. bounds — 1 ms around a nominal edge (if the phase gave one);
3. report — seven elements in one window: report policy, tick, time unit;
4. sliding, once per R2S operator the adapter runs — R2S, partial first windows;
5. empty, identity and (if the adapter runs aggregates) COUNT(?s) — empty relations, empty windows.

A wall-clock engine stops after the grid: its window edges depend on when it started, so only
the clock is decided (``--real-time`` paces every probe on the wall clock for engines that need
it to produce anything).
"""

from __future__ import annotations

from collections.abc import Callable

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.errors import RspError
from rsp_sdk.model.profile import R2S
from rsp_sdk.probe import streams
from rsp_sdk.probe.driver import Observation, ProbeSettings, run_probe
from rsp_sdk.probe.infer.clock import infer_clock
from rsp_sdk.probe.infer.empty import infer_empty_relations, infer_non_empty
from rsp_sdk.probe.infer.r2s import infer_r2s
from rsp_sdk.probe.infer.report import infer_report
from rsp_sdk.probe.infer.windows import infer_bounds, infer_phase, infer_t0_span, splits
from rsp_sdk.probe.model import FieldName, Finding, Fingerprint, ProbeRecord, undecided

_R2S_FEATURE = {
    R2S.RSTREAM: Feature.RSTREAM,
    R2S.ISTREAM: Feature.ISTREAM,
    R2S.DSTREAM: Feature.DSTREAM,
}
DEFAULT_OPEN = 20_000  # where probes start when the phase is unknown (a multiple of 2 s)


def operators(adapter: Adapter) -> list[R2S]:
    """The R2S operators the adapter runs, Rstream first."""
    return [op for op, f in _R2S_FEATURE.items() if f in adapter.capabilities]


def probe_engine(
    adapter: Adapter,
    settings: ProbeSettings,
    *,
    progress: Callable[[str], None] | None = None,
) -> Fingerprint:
    ops = operators(adapter)
    if not ops:
        raise ValueError(f"{adapter.name} declares no R2S operator: no probe query can run")
    main = ops[0]
    records: list[ProbeRecord] = []

    def run(probe: streams.ProbeStream, s: ProbeSettings) -> Observation:
        if progress:
            progress(f"{probe.name}: {probe.purpose}")
        obs = run_probe(adapter, probe, s)
        records.append(
            ProbeRecord(
                name=probe.name, purpose=probe.purpose, query=probe.rspql(), output=obs.summary(40)
            )
        )
        return obs

    grid = run(streams.grid(main), settings)
    if not grid.started:
        raise RspError(f"{adapter.name} on {settings.runtime}: {grid.error}")
    counted = None
    if splits(grid) is None and grid.relations and Feature.JOIN in adapter.capabilities:
        pairs = run(streams.grid(main, streams.QueryKind.PAIRS), settings)
        if splits(pairs) is not None:
            grid = pairs  # relations name window mates: read it as the grid
    if splits(grid) is None and grid.relations and Feature.AGGREGATES in adapter.capabilities:
        counted = run(streams.grid(main, streams.QueryKind.COUNT), settings)
    clock = infer_clock(grid, counted)
    if settings.real_time:
        clock = undecided(
            FieldName.CLOCK,
            "the probes were paced on the wall clock (--real-time), so both clocks agree",
            *clock.evidence,
        )
    if clock.value == "wall":
        return _fingerprint(adapter, settings, records, _wall_clock(clock))
    findings: dict[FieldName, Finding] = {FieldName.CLOCK: clock}
    phase, edge = infer_phase(grid, counted)
    findings[FieldName.T0_PHASE] = phase
    lead = grid.probe.range_ms if phase.value == "first-element" else 600
    by_count = phase.evidence[-1].probe == "grid_count" if phase.evidence else False
    kind = streams.QueryKind.COUNT if by_count else grid.probe.kind
    bounds = (
        run(streams.bounds(edge, main, lead=lead, kind=kind), settings)
        if edge is not None
        else None
    )
    findings[FieldName.WINDOW_BOUNDS] = infer_bounds(bounds, edge)
    open_ = _window_open(edge, grid.probe.step_ms)
    report_obs = run(streams.report(open_, main), settings)
    report, tick, unit = infer_report(report_obs)
    findings.update({f.field: f for f in (report, tick, unit)})
    cc = None if report.value is None else report.value.startswith("content_change")
    slidings: dict[str, Observation] = {}
    if cc is False:
        for op in ops:
            slidings[op.value] = run(streams.sliding(open_, op), settings)
    findings[FieldName.R2S] = infer_r2s(slidings, report_obs, cc)
    main_sliding = slidings.get(main.value)
    findings[FieldName.T0] = infer_t0_span(main_sliding, cc, _r2s_seen(findings, main))
    select = run(streams.empty(open_, streams.QueryKind.SELECT, main), settings)
    count = (
        run(streams.empty(open_, streams.QueryKind.COUNT, main), settings)
        if Feature.AGGREGATES in adapter.capabilities
        else None
    )
    r2s_seen = _r2s_seen(findings, main)
    empty = infer_empty_relations(select, r2s_seen)
    findings[FieldName.EMPTY_RELATIONS] = empty
    findings[FieldName.NON_EMPTY_CONTENT] = infer_non_empty(
        count, select, cc, empty.value, r2s_seen
    )
    return _fingerprint(adapter, settings, records, findings)


def _fingerprint(
    adapter: Adapter,
    settings: ProbeSettings,
    records: list[ProbeRecord],
    findings: dict[FieldName, Finding],
) -> Fingerprint:
    return Fingerprint(
        engine=adapter.name,
        runtime=settings.runtime,
        findings={name: findings[name] for name in FieldName if name in findings},
        declared=adapter.profile,
        declared_app_time=Feature.APP_TIME_INPUT in adapter.capabilities,
        probes=records,
    )


def _wall_clock(clock: Finding) -> dict[FieldName, Finding]:
    """A wall-clock engine's window edges depend on when it started, not on the probes'
    timestamps: every other inference needs application time, so none is attempted."""
    why = (
        "the engine windows by the wall clock: its edges depend on when it started, not on the "
        "probes' timestamps, which every other inference relies on"
    )
    out = {FieldName.CLOCK: clock}
    out.update({name: undecided(name, why) for name in FieldName if name is not FieldName.CLOCK})
    return out


def _window_open(edge: int | None, step: int) -> int:
    """A window opening at least 20 s in, on the edge grid found (or a multiple of 2 s)."""
    if edge is None:
        return DEFAULT_OPEN
    return edge + ((DEFAULT_OPEN - edge) // step + 1) * step


def _r2s_seen(findings: dict[FieldName, Finding], main: R2S) -> str | None:
    value = findings[FieldName.R2S].value
    return main.value if value == "query" else value
