"""Performance numbers come from runs that ran to the end: summary.json, `rsp matrix show`'s
performance table and the report's tables leave out a failed or timed-out run's numbers (they
describe the part that ran: C-SPARQL 0.9.7 on CityBench Q12 × 10 instances, killed after a
60 s hang, showed 266,009 µs per triple), while the cells, the verdicts and the wall time keep
it. Pure Python on cell rows as cell.json holds them; no engine."""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.console import Console

from rsp_sdk.cli.matrix_tables import perf_table
from rsp_sdk.matrix.aggregate import summary
from rsp_sdk.report.sections.across import pivot


def _row(rep: int, state: str, per_triple: float, wall: float) -> dict[str, Any]:
    return {
        "engine": "csparql",
        "runtime": "py4j",
        "query": "q12",
        "stream": "aarhus",
        "feeding": "time-scale",
        "rate": None,
        "time_scale": 1.0,
        "instances": 10,
        "repetition": rep,
        "state": state,
        "verdict": "correct" if state == "ok" else "not_judged",
        "reason": None if state == "ok" else "no answer within 60.0 s",
        "time_per_triple_us": per_triple,
        "latency_ms_p50": per_triple / 10,
        "peak_rss_mb": 500.0,
        "wall_s": wall,
    }


ROWS = [_row(1, "ok", 40.0, 100.0), _row(2, "ok", 60.0, 120.0), _row(3, "timeout", 266009.0, 450.0)]


def test_summary_medians_are_over_finished_runs_and_wall_time_over_all() -> None:
    (entry,) = summary(ROWS)
    assert entry["repetitions"] == 3 and entry["states"] == ["ok", "timeout"]
    assert entry["time_per_triple_us"] == {"median": 50.0, "spread": 20.0, "n": 2}
    assert entry["latency_ms_p50"]["median"] == 5.0
    assert entry["wall_s"] == {"median": 120.0, "spread": 350.0, "n": 3}


def test_the_terminal_performance_table_counts_every_run_and_medians_finished_ones() -> None:
    console = Console(width=200, record=True)
    console.print(perf_table(ROWS, "performance"))
    (line,) = [ln for ln in console.export_text().splitlines() if "csparql@py4j" in ln]
    cols = [c.strip() for c in line.split("│")[1:-1]]
    # engine, cells, correct, triples/s, µs/triple, lat p50, lat p95, RSS, wall
    assert cols[1:3] == ["3", "2"] and cols[4] == "50.0" and cols[-1] == "670"
    assert "266009" not in line


def test_report_tables_leave_out_unfinished_runs() -> None:
    frame = pd.DataFrame(ROWS).assign(row="csparql@py4j", col="q12")
    table = pivot(frame, "time_per_triple_us")
    assert table is not None and table.loc[0, "q12"] == "50"
    only_timeout = frame[frame["state"] == "timeout"]
    assert pivot(only_timeout, "time_per_triple_us") is None
