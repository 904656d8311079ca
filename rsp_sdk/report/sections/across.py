"""Across engines: the scalability curves and tables of CityBench and Ren et al.

* throughput achieved and result latency vs the rate asked (when the matrix has ≥ 2 rates);
* result latency and peak RSS vs simultaneous instances of a query (CityBench's concurrency
  axis, when some query ran at ≥ 2 instance counts);
* Rate_max per engine and query: with a spec's rate search (``ratesearch.json``), exactly the
  matrix's own answer (``rsp matrix show`` prints the same), probes listed; otherwise the highest
  of the spec's rates whose every repetition ran to the end, was not judged wrong, and was fed
  at ≥ 90 % of the rate asked;
* memory consumption rate (MB/s, Ren et al. 2016: heap swing per GC cycle) and peak RSS;
* execution time per triple t = T/N (Ren et al.'s table).

Each value is the median over the repetitions that ran to the end (state ok); the tables say
which metrics the matrix did not measure instead of showing empty grids.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from rsp_sdk.matrix.axes import who
from rsp_sdk.report.artifacts import Artifacts, TableRef
from rsp_sdk.report.plots import concurrency, curves
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import render

BAD = {"incorrect", "no_output"}
KEPT_UP = 0.9  # a rate is sustained when the feeder achieved at least 90 % of it


def number(value: float) -> str:
    """Table numbers: 3 significant digits, thousands without exponent (1,920 not 1.92e+03)."""
    if pd.isna(value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def cells_frame(results: Results) -> pd.DataFrame:
    frame = results.frame()
    frame["row"] = [c.row for c in results.cells]
    frame["col"] = [results.column(c) for c in results.cells]
    frame["qcol"] = [col.rsplit(" @", 1)[0] for col in frame["col"]]
    return frame


def pivot(frame: pd.DataFrame, value: str, col: str = "col") -> pd.DataFrame | None:
    """engine@runtime × column of the median of ``value`` over the cells that ran to the end
    (None when none has it). A failed or timed-out run's numbers describe the part that ran
    (a C-SPARQL run killed after a 60 s hang shows 266,009 µs per triple): its verdict row
    says what happened, a number beside finished ones would mislead."""
    have = frame[frame[value].notna() & (frame["state"] == "ok")]
    if have.empty:
        return None
    table = have.pivot_table(index="row", columns=col, values=value, aggfunc="median")
    text = table.map(number)
    return text.reset_index().rename(columns={"row": "engine@runtime"})


def searched_rate_max(searches: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The matrix's Rate_max searches as a table: one rule for the terminal and the page."""
    if not searches:
        return None
    rows = []
    for r in searches:
        best = r.get("rate_max")
        value = "none sustained" if best is None else f"{best:,.0f}"
        rows.append(
            {
                "engine@runtime": who(r),
                "query": r["query"],
                "Rate_max": value + (" (capped)" if r.get("capped") else ""),
                "probes": ", ".join(
                    f"{p['rate']:,.0f}{'' if p['sustained'] else ' ✗'}" for p in r["probes"]
                ),
            }
        )
    return pd.DataFrame(rows)


def rate_max(frame: pd.DataFrame) -> pd.DataFrame | None:
    rated = frame[frame["rate"].notna()]
    if rated.empty:
        return None
    kept_up = rated["rate_achieved"].isna() | (rated["rate_achieved"] >= KEPT_UP * rated["rate"])
    good = (rated["state"] == "ok") & ~rated["verdict"].isin(BAD) & kept_up
    ok = rated.assign(good=good).groupby(["row", "qcol", "rate"])["good"].all()
    best = ok[ok].reset_index().groupby(["row", "qcol"])["rate"].max()
    every = rated.groupby(["row", "qcol"])["rate"].max()
    table = pd.DataFrame({"tried up to": every, "Rate_max": best}).reset_index()
    table["Rate_max"] = table["Rate_max"].map(
        lambda v: "none sustained" if pd.isna(v) else f"{v:,.0f}"
    )
    table["tried up to"] = table["tried up to"].map(lambda v: f"{v:,.0f}")
    return table.rename(columns={"row": "engine@runtime", "qcol": "query"})[
        ["engine@runtime", "query", "Rate_max", "tried up to"]
    ]


class AcrossEngines:
    name = "across"
    title = "Across engines"
    order = 20

    def render(self, results: Results, out: Artifacts) -> Markup:
        frame = cells_frame(results)
        curve = curves.figure(out, "scalability", frame)
        crowd = concurrency.figure(out, "concurrency", frame)
        parts = [
            (
                "Execution time per triple",
                _table(
                    out,
                    "time-per-triple",
                    pivot(frame, "time_per_triple_us"),
                    "Execution time per triple t = T/N (µs), median over repetitions",
                    True,
                ),
                "No cell measured engine time per triple.",
            ),
            (
                "Rate_max",
                _rate_max_table(out, results, frame),
                "The matrix has no rate axis (cells fed as fast as possible or in real time).",
            ),
            (
                "Memory consumption rate",
                _table(
                    out,
                    "mcr",
                    pivot(frame, "mcr_mb_s"),
                    "Memory consumption rate (MB/s), median over repetitions",
                ),
                "No cell measured a memory consumption rate.",
            ),
            (
                "Peak memory",
                _table(
                    out,
                    "peak-rss",
                    pivot(frame, "peak_rss_mb"),
                    "Peak RSS (MB), median over repetitions",
                ),
                "No cell has a peak RSS (no resource samples).",
            ),
            (
                "Result latency",
                _table(
                    out,
                    "latency",
                    pivot(frame, "latency_ms_p50"),
                    "Result latency p50 after window close (ms), median over repetitions",
                ),
                "No cell measured result latency.",
            ),
            (
                "Observation latency",
                _table(
                    out,
                    "obs-latency",
                    pivot(frame, "obs_latency_ms_p50"),
                    "Observation latency p50 (ms; CityBench's: the first result naming an "
                    "observation minus its push — engines without application time too), "
                    "median over repetitions",
                ),
                "No result named an observation (an IRI sent at one stream time only).",
            ),
        ]
        return render("across.html.j2", curve=curve, concurrency=crowd, parts=parts)


def _rate_max_table(out: Artifacts, results: Results, frame: pd.DataFrame) -> TableRef | None:
    from rsp_sdk.matrix.ratesearch import read_results

    searched = searched_rate_max(read_results(results.root))
    if searched is not None:
        return out.table(
            "rate-max",
            searched,
            "Rate_max (triples/s) found by the spec's rate search: every probe fed at ≥ 90 % of "
            "its rate, no result later than one STEP after its window closed, never judged "
            "wrong (✗: a probe that was not sustained)",
        )
    return _table(
        out,
        "rate-max",
        rate_max(frame),
        "Rate_max (triples/s): highest rate with every repetition finished, "
        "not judged wrong and fed at ≥ 90 % of the rate",
    )


def _table(
    out: Artifacts, name: str, frame: pd.DataFrame | None, caption: str, headline: bool = False
) -> TableRef | None:
    return None if frame is None else out.table(name, frame, caption, headline=headline)
