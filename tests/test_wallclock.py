"""A wall-clock engine fed faster than real time, judged on the windows it applied.

C-SPARQL 0.9 windows its own wall clock. Fed at time scale 2, its ``[RANGE 1s STEP 1s]`` holds
2 s of application time: the oracle judges it on the query with every window twice as long
(``rsp_sdk.compare.wallclock``). The witness is the real engine, which shares no code with
the oracle; the same recording judged on the windows as written is wrong, so the factor is what
decides the verdict. The elements sit 250 ms of wall time from every window edge (the engine's
first window opens at the first element), far from C-SPARQL 0.9's 100 ms timer.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from rsp_sdk.compare.check import check_run
from rsp_sdk.compare.wallclock import Unjudgeable, scaled_windows, window_scale
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.obslatency import observation_latencies
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import load_spec
from rsp_sdk.query import load_query
from rsp_sdk.run.feeder import FeederConfig, PacingMode, StreamPacing
from tests.oracle_support import readings_trig, rsp_in_process, spark
from tests.real_engines import engine_missing

__all__ = ["spark"]  # the session fixture

QUERY = """PREFIX ex: <http://example.org/>
REGISTER RSTREAM ex:readings AS
SELECT ?s ?v
FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT1S STEP PT1S]
WHERE { WINDOW ex:w { ?s ex:value ?v } }
"""

SPEC = """
name = "wallclock"
metrics = ["csrbench"]
[[engines]]
name = "csparql09"
runtimes = ["py4j"]
[[streams]]
name = "readings"
import = { format = "trig", path = "readings.trig" }
[[queries]]
files = ["readings.rspql"]
[feeding]
modes = ["time-scale"]
time_scales = [2]
max_batch_span_ms = 0
"""

# application ms of each reading: the first opens the engine's windows; at time scale 2 the
# others arrive 250 ms of wall time after or before a wall-second edge
TIMES = [0, 500, 1500, 2500, 3500, 4500, 5500, 6500, 7500]


def test_the_factor_is_the_feeding_speed_for_wall_clock_engines_only() -> None:
    timeline = pa.table({"t_app_ms": list(range(0, 10_000, 1000)), "stream": ["s"] * 10})
    scaled = FeederConfig(mode=PacingMode.APP_TIME, time_scale=2.05)
    assert window_scale(False, scaled, timeline) == 2.05
    assert window_scale(True, scaled, timeline) is None  # application time: as written
    assert window_scale(False, FeederConfig(time_scale=1), timeline) is None
    assert window_scale(False, FeederConfig(mode=PacingMode.REAL_TIME), timeline) is None
    # 10 triples over 9 s: 20 triples/s plays the timeline 20 / (10 / 9) = 18 times as fast
    assert window_scale(False, FeederConfig(rate=20), timeline) == pytest.approx(18)
    two = pa.table({"t_app_ms": [0, 0, 1000, 1000], "stream": ["a", "b", "a", "b"]})
    apart = FeederConfig(time_scale=2, streams={"a": StreamPacing(time_scale=4)})
    with pytest.raises(Unjudgeable, match="fed streams at different speeds"):
        window_scale(False, apart, two)
    spec = load_query(QUERY)
    [w] = scaled_windows(spec, 2.05).windows
    assert (w.range_ms, w.step_ms) == (2050, 2050) and w.name == spec.windows[0].name


def test_a_window_scale_that_is_not_positive_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the window scale must be positive, not 0"):
        check_run(tmp_path, tmp_path / "stream.parquet", QUERY, window_scale=0)


def test_csparql09_at_time_scale_2_is_judged_on_twice_as_long_windows(
    spark: Any, tmp_path: Path
) -> None:
    missing = engine_missing("csparql09")
    if missing:
        pytest.skip(missing)
    (tmp_path / "readings.trig").write_text(readings_trig(TIMES), encoding="utf-8")
    (tmp_path / "readings.rspql").write_text(QUERY, encoding="utf-8")
    spec_path = tmp_path / "wallclock.toml"
    spec_path.write_text(SPEC, encoding="utf-8")
    result = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    [row] = result.rows
    assert row["state"] == "ok", row["reason"]
    assert row["verdict"] == "correct", row["divergence"]
    assert row["relations"] == 4 and row["rows"] == len(TIMES)  # [0, 2 s) … [6 s, 8 s)
    run_dir = tmp_path / "out" / row["run_dir"]
    assert json.loads((run_dir / "verdict.json").read_text())["window_scale"] == 2
    # no application time, so no window-close latency; CityBench's is measured: each reading is
    # answered at the close of the 1 s wall-clock window it fell in, 250 ms (less the engine's
    # timer drift, seen up to 70 ms) to 1 s after its push, plus up to one 200 ms poll
    assert row["latency_ms_p50"] is None
    lat = observation_latencies(run_dir)
    assert len(lat) == len(TIMES) and min(lat) > 100 and max(lat) < 1500, lat
    assert row["obs_latency_ms_p50"] == pytest.approx(statistics.median(lat))
    stream = next((tmp_path / "out" / "inputs").glob("*.parquet"))
    # rsp oracle check reads the factor from the run's config.json …
    auto = check_run(run_dir, stream, tmp_path / "readings.rspql")
    assert auto.correct and auto.window_scale == 2
    # … and the windows as written expect one reading a relation where the engine held two
    plain = check_run(run_dir, stream, tmp_path / "readings.rspql", window_scale=1)
    assert not plain.correct and plain.window_scale is None
    code, out = rsp_in_process(
        "oracle", "check", "-s", stream, "-q", tmp_path / "readings.rspql", "--answers", run_dir
    )
    assert code == 0 and "windows judged ×2 (RANGE and STEP)" in out, out
