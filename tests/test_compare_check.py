"""``compare.judge``: verdict + per-window metrics from a run directory, without the oracle."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rsp_sdk.compare.answers import PUSHED_FILE, load_answers, read_pushed
from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.judge import Metrics, is_content_change, judge_run
from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
from tests.compare_tables import expected_table, result_table, s

CSPARQL_LIKE = Profile(
    name="csparql-like",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TIME_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=True,
)
S = 1_000_000_000  # ns per second


def make_run(tmp_path: Path, relations: list, arrivals: list[int]) -> Path:  # type: ignore[type-arg]
    run = tmp_path / "run"
    (run / "outputs.parquet").mkdir(parents=True)
    table = result_table(relations, t_sys_ns=arrivals)
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), run / "outputs.parquet" / "part-00000.parquet")
    pq.write_table(table.slice(half), run / "outputs.parquet" / "part-00001.parquet")
    # real-time feeder: batch k holds app time [1000k, 1000k + 999], pushed at 100 s + k s
    (run / PUSHED_FILE).mkdir()
    pushed = pa.table(
        {
            "phase": ["measure"] * 4,
            "t_app_min_ms": [0, 1000, 2000, 3000],
            "t_app_max_ms": [999, 1999, 2999, 3999],
            "t_sys_start_ns": [100 * S + k * S for k in range(4)],
            "t_sys_end_ns": [100 * S + k * S + 999_000_000 for k in range(4)],
        }
    )
    pq.write_table(pushed, run / PUSHED_FILE / "part-00000.parquet")
    return run


def test_check_a_run_directory_with_delays(tmp_path: Path) -> None:
    expected = expected_table(
        {
            0: [(0, 2000, s("a", "b")), (2000, 4000, s("c"))],
            1000: [(1000, 3000, s("b", "c")), (3000, 5000, [])],
        }
    )
    # answers arrive 40 ms and 1.2 s after the closes at app 2000 / 4000 (sys 102 s / 104 s)
    run = make_run(tmp_path, [s("a", "b"), s("c")], [102 * S + 40_000_000, 105 * S + 200_000_000])
    pushed = read_pushed(run)
    assert pushed is not None
    result = judge_run(
        expected,
        load_answers(run),
        CSPARQL_LIKE,
        R2S.RSTREAM,
        metrics=Metrics.YABENCH,
        time_map=TimeMap.from_pushed(pushed),
    )
    assert result.correct and result.t0 == 0
    rep = result.yabench
    assert rep is not None and rep.t0_ms == 0
    assert [w.delay_ms for w in rep.windows] == pytest.approx([40.0, 1200.0])
    assert [w.expected_sys_ms for w in rep.windows] == pytest.approx([2000.0, 4000.0])
    # the last push ended at 103.999 s; the last answer came at 105.2 s
    assert rep.final_result_arrival_ms == pytest.approx(1201.0)
    dumped = result.model_dump(mode="json")
    assert {"query", "correct", "t0", "divergence", "verdict", "yabench"} <= set(dumped)


def test_check_metrics_follow_the_longest_match_when_incorrect(tmp_path: Path) -> None:
    expected = expected_table(
        {
            0: [(0, 2000, s("a")), (2000, 4000, s("x"))],
            1000: [(1000, 3000, s("b")), (3000, 5000, s("c"))],
        }
    )
    run = make_run(tmp_path, [s("b"), s("d")], [103 * S, 105 * S])
    result = judge_run(
        expected, load_answers(run), CSPARQL_LIKE, R2S.RSTREAM, metrics=Metrics.YABENCH
    )
    assert not result.correct and result.divergence is not None
    assert result.divergence.t0_ms == 1000
    assert result.yabench is not None and result.yabench.t0_ms == 1000
    assert [(w.precision, w.recall) for w in result.yabench.windows] == [(1.0, 1.0), (0.0, 0.0)]
    # a forced t0 must be a candidate: the user's mistake, not an internal failure
    with pytest.raises(InputError, match="not among the expected candidates"):
        judge_run(
            expected, load_answers(run), CSPARQL_LIKE, R2S.RSTREAM, metrics=Metrics.YABENCH, t0=500
        )


def test_content_change_profiles() -> None:
    cqels = Profile(
        name="cqels",
        report=frozenset({ReportPolicy.CONTENT_CHANGE, ReportPolicy.NON_EMPTY_CONTENT}),
        tick=Tick.TUPLE_DRIVEN,
        emits_empty_relations=False,
    )
    assert is_content_change(cqels) and not is_content_change(CSPARQL_LIKE)


def test_check_a_run_written_by_the_recorder(tmp_path: Path) -> None:
    from rsp_sdk.engine.session import ResultEvent
    from rsp_sdk.run.recorder import RunRecorder

    rec = RunRecorder(tmp_path / "run", {"what": "test"}, flush_interval_s=0.0)
    for k in range(3):  # real time: app [1000k, 1000k + 999] pushed at 50 s + k s
        rec.pushed(
            phase="measure",
            stream="http://ex.org/s",
            batch=k,
            count=7,
            t_app_min_ms=1000 * k,
            t_app_max_ms=1000 * k + 999,
            t_due_ns=None,
            t_sys_start_ns=50 * S + k * S,
            t_sys_end_ns=50 * S + k * S + 1_000_000,
        )
    ex = "<http://example.org/{}>"
    dbl = '"{}"^^<http://www.w3.org/2001/XMLSchema#double>'
    rec.outputs(
        [
            ResultEvent(
                "q", 51 * S + 5_000_000, None, ("x", "v"), ((ex.format("a"), dbl.format("1.0e0")),)
            ),
            ResultEvent("q", 52 * S + 9_000_000, None, ("x", "v"), ()),
        ]
    )
    rec.finish("ok")
    run = tmp_path / "run"
    expected = expected_table(
        {
            0: [
                (
                    0,
                    1000,
                    [
                        {
                            "x": {"type": "uri", "value": "http://example.org/a"},
                            "v": {
                                "type": "literal",
                                "value": "1",
                                "datatype": "http://www.w3.org/2001/XMLSchema#integer",
                            },
                        }
                    ],
                ),
                (1000, 2000, []),
            ]
        }
    )
    pushed = read_pushed(run)
    assert pushed is not None
    result = judge_run(
        expected,
        load_answers(run),
        CSPARQL_LIKE,
        R2S.RSTREAM,
        metrics=Metrics.YABENCH,
        time_map=TimeMap.from_pushed(pushed, source=run / PUSHED_FILE),
    )
    assert result.correct and result.t0 == 0  # 1.0e0 (double) = 1 (integer); empty = empty
    assert result.yabench is not None
    # windows close at app 1000 / 2000 = sys 51 s / 52 s
    assert [w.delay_ms for w in result.yabench.windows] == pytest.approx([5.0, 9.0])
    assert result.yabench.final_result_arrival_ms == pytest.approx(9.0 - 1.0)
