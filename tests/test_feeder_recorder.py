"""Feeder schedules (rates, real time, afap, warm-up, several streams), the recorder's part
files, the sampler on a real process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rsp_sdk.engine import ResultEvent
from rsp_sdk.errors import InputError
from rsp_sdk.model.results import RESULT_SCHEMA
from rsp_sdk.run.feeder import FeederConfig, PacingMode, plan
from rsp_sdk.run.recorder import RunRecorder, read_table
from rsp_sdk.run.sampler import Sampler
from rsp_sdk.testing import Scenario


def table(n: int, span: int, stream: str = "http://ex.org/s", t0: int = 0) -> pa.Table:
    t = Scenario(stream=stream, triples=n, span_ms=span).table()
    return t.set_column(1, "t_app_ms", pc.add(t["t_app_ms"], t0))


def test_rate_scales_application_time() -> None:
    t = table(10_000, 10_000)  # ~1000 triples/s at real speed
    p = plan(t, FeederConfig(rate=5_000, batch_size=1_000))
    assert sum(b.batch.count for b in p.batches) == 10_000
    last = max(b.due_ns or 0 for b in p.batches)
    assert last == pytest.approx(10_000 / 5_000 * 1e9, rel=0.01)  # N / rate seconds
    # each batch is due when its last triple is: due = (t_last - t0) / speed
    speed = 5.0 * 9_999 / 10_000  # rate / natural rate
    for b in p.batches:
        assert b.due_ns == pytest.approx(b.batch.t_max_ms / speed * 1e6, abs=2e6)
        assert b.batch.count <= 1_000
    # batches span at most 100 ms of system time by default
    for b in p.batches:
        assert (b.batch.t_max_ms - b.batch.t_min_ms) / speed <= 100


def test_real_time_batches_one_timestamp_each() -> None:
    t = table(300, 3_000)
    p = plan(t, FeederConfig(mode=PacingMode.REAL_TIME))
    assert all(b.batch.t_min_ms == b.batch.t_max_ms for b in p.batches)
    assert [b.due_ns for b in p.batches] == [b.batch.t_min_ms * 1_000_000 for b in p.batches]
    with pytest.raises(ValueError, match="real-time"):
        FeederConfig(mode=PacingMode.REAL_TIME, rate=10)


def test_afap_fixed_number_of_triples() -> None:
    t = table(1_000, 1_000)
    p = plan(t, FeederConfig(mode=PacingMode.AFAP, limit=450, batch_size=100))
    assert [b.batch.count for b in p.batches] == [100, 100, 100, 100, 50]
    assert all(b.due_ns is None for b in p.batches)
    with pytest.raises(InputError, match="exceeds"):
        plan(t, FeederConfig(mode=PacingMode.AFAP, limit=5_000))


def test_several_streams_with_their_own_rates() -> None:
    a = table(1_000, 10_000, "http://ex.org/a")
    b = table(1_000, 10_000, "http://ex.org/b")
    both = pa.concat_tables([a, b]).sort_by([("t_app_ms", "ascending")])
    cfg = FeederConfig(rate=100, streams={"http://ex.org/b": {"rate": 1_000}})  # type: ignore[dict-item]
    p = plan(both, cfg)
    end = {
        s: max(x.due_ns or 0 for x in p.batches if x.stream == s)
        for s in ("http://ex.org/a", "http://ex.org/b")
    }
    assert end["http://ex.org/a"] == pytest.approx(10e9, rel=0.01)
    assert end["http://ex.org/b"] == pytest.approx(1e9, rel=0.01)
    dues = [x.due_ns for x in p.batches]
    assert dues == sorted(dues)  # one merged schedule
    assert {x.stream for x in p.batches} == {"http://ex.org/a", "http://ex.org/b"}


@pytest.mark.parametrize(
    "cfg",
    [
        FeederConfig(rate=1_000, batch_size=50),
        FeederConfig(time_scale=4.0),
        FeederConfig(mode=PacingMode.AFAP, batch_size=64),
    ],
    ids=["rate", "time-scale", "afap"],
)
def test_batching_never_reorders_triples_across_streams(cfg: FeederConfig) -> None:
    """Two interleaved streams (a at even, b at odd ms, plus shared instants) with the default
    100 ms batch span: the pushed triples, batch after batch, are in application-time order,
    each exactly once and each batch of one stream (cutting per stream first pushed a whole
    100 ms of a before b's earlier triples)."""
    a = table(600, 2_000, "http://ex.org/a")
    b = table(400, 2_000, "http://ex.org/b", t0=1)
    both = pa.concat_tables([a, b]).sort_by([("t_app_ms", "ascending")])
    p = plan(both, cfg)
    pushed = [
        (x.stream, line)
        for x in p.batches
        for line in x.batch.packed.decode().splitlines(keepends=True)
    ]
    times = [int(line.split(" ", 1)[0]) for _, line in pushed]
    assert times == sorted(times)
    expected = [
        (s, f"{t} {sub} {pred} {o}\n")
        for s, t, sub, pred, o in zip(
            *(both.column(c).to_pylist() for c in ("stream", "t_app_ms", "s", "p", "o")),
            strict=True,
        )
    ]
    assert sorted(pushed) == sorted(expected)
    assert len({x.stream for x in p.batches}) == 2 and len(p.batches) > 2
    dues = [x.due_ns or 0 for x in p.batches]
    assert dues == sorted(dues)


def test_warmup_comes_first_at_its_own_rate() -> None:
    warm = table(500, 1_000)
    measured = table(1_000, 1_000, t0=5_000)
    p = plan(measured, FeederConfig(rate=10_000), warmup=warm)
    phases = [b.phase for b in p.batches]
    assert phases == sorted(phases, key=lambda x: x != "warmup")
    assert p.warmup_triples == 500 and p.triples == 1_000
    warm_end = max(b.due_ns or 0 for b in p.batches if b.phase == "warmup")
    assert warm_end == pytest.approx(1e9, rel=0.01)  # natural speed: 1 s of stream
    assert p.measured_start_ns > warm_end
    with pytest.raises(InputError, match="overlaps"):
        plan(table(10, 100), FeederConfig(), warmup=table(10, 100))


def test_unsorted_stream_is_named() -> None:
    t = table(10, 100)
    rev = t.take(pa.array(list(range(9, -1, -1))))
    with pytest.raises(InputError, match=r"not sorted .* row 1"):
        plan(rev, FeederConfig())


def test_recorder_part_files_survive_without_finish(tmp_path: Path) -> None:
    rec = RunRecorder(tmp_path / "run", {"x": 1}, flush_interval_s=0.0)
    ev = ResultEvent("q", 10, 1000, ("s",), (("<http://a>",), ("<http://b>",)))
    rec.outputs([ev, ResultEvent("q", 11, 2000, ("s",), ())])
    rec.flush()
    # no finish(): as if the process had been killed here
    out = read_table(tmp_path / "run", "outputs")
    assert out.schema == RESULT_SCHEMA
    assert out.to_pylist() == [
        {
            "query": "q",
            "seq": 0,
            "t_sys_ns": 10,
            "t_app_ms": 1000,
            "binding": '{"s":{"type":"uri","value":"http://a"}}',
        },
        {
            "query": "q",
            "seq": 0,
            "t_sys_ns": 10,
            "t_app_ms": 1000,
            "binding": '{"s":{"type":"uri","value":"http://b"}}',
        },
        {"query": "q", "seq": 1, "t_sys_ns": 11, "t_app_ms": 2000, "binding": None},
    ]
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "run" / "outputs.parquet").num_rows == 3
    with pytest.raises(InputError, match="not empty"):
        RunRecorder(tmp_path / "run", {})
    st = rec.finish("ok")
    assert st.result_events == 2 and st.result_rows == 2
    assert read_table(tmp_path / "run", "perf").num_rows == 0  # empty but with its schema


def test_sampler_watches_a_real_process_tree() -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess,sys,time; subprocess.Popen([sys.executable,'-c','import time; time.sleep(30)']); "
            "x=bytearray(50_000_000); time.sleep(30)",
        ]
    )
    rows: list[dict[str, object]] = []
    try:
        time.sleep(1.0)
        with Sampler(
            child.pid, rows.append, stats=lambda: {"heap_used": 7, "gc_count": 2}, interval_s=0.1
        ):
            time.sleep(0.6)
    finally:
        import psutil

        for p in psutil.Process(child.pid).children(recursive=True):
            p.kill()
        child.kill()
        child.wait()
    assert len(rows) >= 3
    last = rows[-1]
    assert last["processes"] == 2
    assert int(last["rss_bytes"]) > 50_000_000  # type: ignore[call-overload]
    assert last["heap_used"] == 7 and last["gc_count"] == 2 and last["heap_committed"] is None
