"""The rules the benchmarks compute their numbers by (the numbers themselves are never asserted):
Rate_max, the naive baseline doing the oracle's work, and a dead child process ending a wait."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.bench_engines import reply
from benchmarks.bench_jvm_engines import rate_max
from benchmarks.bench_oracle import (
    WINDOW_CLOSE,
    YABENCH_QUERIES,
    YABENCH_T0,
    _answers,
    _write_sg1,
    naive_expected,
    streaming_expected,
)
from rsp_sdk.query import parse_rspql
from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench
from rsp_sdk.streams.io import read_meta, read_stream
from tests.oracle_support import spark

__all__ = ["spark"]

XSD_FLOAT = "http://www.w3.org/2001/XMLSchema#float"


def test_rate_max_is_the_largest_rate_below_which_every_rate_passed() -> None:
    assert rate_max([(1.0, True), (3.0, True), (6.0, False), (12.0, True)]) == 3.0
    assert rate_max([(12.0, True), (1.0, True), (6.0, True), (3.0, False)]) == 1.0  # any order
    assert rate_max([(1.0, False), (3.0, True)]) == 0.0
    assert rate_max([(1.0, True), (3.0, True)]) == 3.0


def test_a_dead_driver_ends_the_wait_for_its_reply() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "print('noise'); import sys; sys.exit(3)"],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
    )
    outcome: list[BaseException | bytes] = []

    def wait() -> None:
        try:
            outcome.append(reply(proc))
        except BaseException as exc:
            outcome.append(exc)

    th = threading.Thread(target=wait, daemon=True)
    th.start()
    th.join(timeout=30)
    proc.wait(timeout=30)
    assert not th.is_alive(), "reply() kept reading after its child died"
    assert isinstance(outcome[0], RuntimeError) and "code 3" in str(outcome[0])


def test_the_naive_baseline_produces_the_oracle_output(spark: Any) -> None:
    # the oracle-vs-naive ratio compares equal work: the same rows, R2S and serialisation
    from rsp_sdk.oracle import expected

    table, _ = generate_yabench(YabenchParams(stations=8, interval_ms=1000, duration_ms=30_000))
    text = YABENCH_QUERIES["Q1 filter"]  # Istream
    naive = naive_expected(table, text, 10_000, 5000, YABENCH_T0[0])
    oracle = expected(table, parse_rspql(text), WINDOW_CLOSE, t0s=YABENCH_T0, spark=spark)
    cols = ["t_app_ms", "window_open_ms", "window_close_ms", "binding"]

    def value(binding: str | None) -> Any:
        # pyoxigraph writes 51.0 (xsd:float) as "51", the oracle keeps the stream's lexical form
        if binding is None:
            return None
        terms = json.loads(binding)
        return sorted(
            (k, float(t["value"]) if t.get("datatype") == XSD_FLOAT else t["value"])
            for k, t in terms.items()
        )

    def rows(t: Any) -> list[tuple[Any, ...]]:
        return sorted(
            ((*list(r.values())[:3], value(r["binding"])) for r in t.select(cols).to_pylist()),
            key=repr,
        )

    assert pc.sum(pc.invert(pc.is_null(naive["binding"]))).as_py() > 10
    assert rows(naive) == rows(oracle)


def test_the_streaming_loop_answers_as_the_per_window_loop() -> None:
    # the 21 M figure times the memory-bounded loop: it must do the per-window loop's work (which
    # the test above ties to the oracle), also when batches straddle windows and windows are empty
    table, _ = generate_yabench(YabenchParams(stations=8, interval_ms=1000, duration_ms=30_000))
    times = table.column("t_app_ms")
    gap = table.filter(pc.or_(pc.less(times, 9000), pc.greater_equal(times, 21_000)))
    for stream, name in ((table, "Q1 filter"), (gap, "Q6 join")):  # Istream; Rstream
        text = YABENCH_QUERIES[name]
        naive = naive_expected(stream, text, 10_000, 5000, YABENCH_T0[0])
        batches = stream.to_batches(max_chunksize=97)
        assert streaming_expected(batches, text, 10_000, 5000, YABENCH_T0[0]).equals(naive)
        assert pc.sum(pc.invert(pc.is_null(naive["binding"]))).as_py() > 0
    assert pc.sum(pc.is_null(naive["binding"])).as_py() > 0  # Q6 has empty relations too


def test_the_large_benchmarks_stream_file_holds_the_generated_stream(tmp_path: Path) -> None:
    # oracle.large hands the oracle and the loops a file written row group by row group (the
    # driver never holds the generated stream): it must read back as the generator's stream
    params = YabenchParams(stations=3, interval_ms=1000, duration_ms=30_000)
    table, meta = generate_yabench(params)
    path = tmp_path / "sg1.parquet"
    _write_sg1(3, str(path), row_group=100)
    assert pq.ParquetFile(path).metadata.num_row_groups > 1
    assert read_stream(path).equals(table.replace_schema_metadata(None))
    assert read_meta(path) == meta


def _avg_rows(*rows: tuple[int, str]) -> pa.Table:
    float_ = "http://www.w3.org/2001/XMLSchema#float"
    bindings = [
        json.dumps({"avg": {"type": "literal", "value": v, "datatype": float_}}) for _, v in rows
    ]
    return pa.table({"t_app_ms": [t for t, _ in rows], "binding": bindings})


def test_answers_tell_float_rounding_from_other_differences() -> None:
    """The 21 M Q4 case: the oracle's AVG (the exact mean rounded once to float32) against
    pyoxigraph's float32 running sum; "51" and "51.0" are the same float."""
    oracle = _avg_rows((5000, "75.01556"), (10000, "75.02815"), (15000, "51.0"))
    loop = _avg_rows((5000, "75.01583"), (10000, "75.03506"), (15000, "51"))
    told = _answers(oracle, loop)
    assert told.startswith("answers differ in float values only, by ≤ 9.2e-05"), told
    assert _answers(oracle, oracle) == "same answers"
    assert _answers(oracle, _avg_rows((5000, "75.01556"), (10000, "75.02815"))) == "ANSWERS DIFFER"
    moved = _avg_rows((5000, "75.01556"), (10001, "75.02815"), (15000, "51"))
    assert _answers(oracle, moved) == "ANSWERS DIFFER"
