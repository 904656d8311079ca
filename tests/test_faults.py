"""Faults driven by the fixture engines' knobs, through every runtime: crash, failure, hang,
an engine that never answers or prints garbage, a parent that dies. Each must end with a clear
error carrying the engine's own words, and leave no process or port behind."""

from __future__ import annotations

import gc
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from rsp_sdk.engine import EngineSession, Timeouts, TripleBatch
from rsp_sdk.runtime.base import EngineCrashed, EngineError, EngineTimeout
from rsp_sdk.testing import TreeWatch, drain
from tests.engines import COMBOS, SCENARIO, open_toy, skip_if_unavailable

REPO = Path(__file__).resolve().parent.parent
FAST = Timeouts(open=120, verb=3, push=3, poll=3, stats=3, close=3)


def batches(n: int = 4) -> list[TripleBatch]:
    from rsp_sdk.engine.batch import fixed_bounds, pack_lines, slice_batches

    t = SCENARIO.table()
    return slice_batches(pack_lines(t), t["t_app_ms"], fixed_bounds(t.num_rows, t.num_rows // n))


@pytest.fixture(params=COMBOS, ids=[f"{a}@{r}" for a, r in COMBOS])
def combo(request: pytest.FixtureRequest, toy_cache: Any) -> tuple[str, str, Any]:
    adapter, runtime = request.param
    skip_if_unavailable(runtime)
    return adapter, runtime, toy_cache


def start(
    combo: tuple[str, str, Any], tmp_path: Path, **kw: Any
) -> tuple[EngineSession, TreeWatch]:
    adapter, runtime, cache = combo
    return open_toy(adapter, runtime, tmp_path / "engine", cache, **kw)


def test_crash_on_push(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    session, watch = start(combo, tmp_path, config={"crash_on_push": 2})
    b = batches()
    session.push(SCENARIO.stream, b[0])
    with pytest.raises(EngineCrashed) as info:
        session.push(SCENARIO.stream, b[1])
    msg = str(info.value)
    assert "exit code 77" in msg and "simulated crash in push 2" in msg, msg
    assert "simulated crash in push 2" in msg.splitlines()[0], msg  # what a table shows
    assert info.value.verb == "push"
    session.close()
    watch.assert_clean()


def test_failure_on_push_keeps_engine_usable(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    session, watch = start(combo, tmp_path, config={"fail_on_push": 2})
    b = batches()
    session.push(SCENARIO.stream, b[0])
    with pytest.raises(EngineError) as info:
        session.push(SCENARIO.stream, b[1])
    assert not isinstance(info.value, EngineCrashed | EngineTimeout)
    assert "simulated failure on push 2" in info.value.engine_message
    assert info.value.engine_trace  # the engine's stack trace travels with it
    for rest in b[2:]:
        session.push(SCENARIO.stream, rest)
    session.advance_time(10_000)
    assert drain(session, quiet_s=0.3)
    session.close()
    watch.assert_clean()


def test_hang_on_push_times_out(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    session, watch = start(combo, tmp_path, config={"hang_on_push": 2}, timeouts=FAST)
    b = batches()
    session.push(SCENARIO.stream, b[0])
    started = time.monotonic()
    with pytest.raises(EngineTimeout) as info:
        session.push(SCENARIO.stream, b[1])
    assert 2.5 < time.monotonic() - started < 15
    assert "no answer within 3" in str(info.value)
    with pytest.raises(EngineTimeout):  # dead channel, same story
        session.poll()
    session.close()
    watch.assert_clean()


def test_hang_on_close_is_killed(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    session, watch = start(combo, tmp_path, config={"hang_on": "close"}, timeouts=FAST)
    started = time.monotonic()
    with pytest.raises(EngineTimeout):
        session.close()
    assert time.monotonic() - started < 15
    watch.assert_clean()


def test_an_answer_past_the_reply_limit_fails_the_verb_and_kills_the_engine(
    combo: tuple[str, str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine whose poll answer is larger than the harness reads at once (the matrix was
    OOM-killed by one): the verb fails with the sizes and the knob, the engine is killed and
    leaves nothing behind — on every runtime (jpype hands the answer over whole and is stopped
    before it is parsed)."""
    monkeypatch.setenv("RSP_MAX_REPLY_BYTES", "2000")
    session, watch = start(combo, tmp_path)
    for b in batches():
        session.push(SCENARIO.stream, b)
    session.advance_time(10_000)
    with pytest.raises(EngineError) as info:
        drain(session, quiet_s=5.0, limit_s=30.0)
    msg = str(info.value)
    assert info.value.verb == "poll" and "past the 2,000 bytes the harness reads" in msg, msg
    assert "RSP_MAX_REPLY_BYTES" in msg and "the engine was killed" in msg
    session.close()
    watch.assert_clean()


@pytest.mark.parametrize("verb", ["open", "register_query"])
def test_crash_while_starting(combo: tuple[str, str, Any], tmp_path: Path, verb: str) -> None:
    with pytest.raises(EngineCrashed) as info:
        start(combo, tmp_path, config={"crash_on": verb})
    assert f"simulated crash in {verb}" in str(info.value)
    m = re.search(r"engine process (\d+) died", str(info.value))
    assert m, str(info.value)
    watch = TreeWatch(int(m.group(1)))
    watch.pids[int(m.group(1))] = ""
    watch.assert_clean()


def test_stats_answer_during_a_slow_push(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    adapter, _, _ = combo
    session, watch = start(combo, tmp_path, config={"push_delay_ms": 2000})
    b = batches()[0]
    th = threading.Thread(target=session.push, args=(SCENARIO.stream, b))
    th.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    stats = session.stats()
    took = time.monotonic() - t0
    pushing = th.is_alive()
    th.join()
    assert pushing
    if adapter == "toy-java":  # served by a bridge-side thread, concurrently with the push
        assert took < 1.0 and stats["heap_used"] > 0 and stats["gc_count"] >= 0, stats
    else:  # a single-threaded JSON-lines program cannot answer now: {} instead of blocking
        assert stats == {} and took < 0.5
    session.close()
    watch.assert_clean()


@pytest.mark.parametrize("knob", ["never_answer_on", "garbage_on"])
def test_foreign_program_misbehaves(toy_cache: Any, tmp_path: Path, knob: str) -> None:
    session, watch = open_toy(
        "toy-py", "subprocess", tmp_path / "e", None, config={knob: "push"}, timeouts=FAST
    )
    b = batches()[0]
    if knob == "never_answer_on":
        with pytest.raises(EngineTimeout):
            session.push(SCENARIO.stream, b)
    else:
        session.push(SCENARIO.stream, b)  # a stray stdout line is logged, not fatal
        session.close()
        log = (tmp_path / "e" / "logs" / "engine.log").read_text()
        assert "[stdout] PyEngine says hello" in log
    session.close()
    watch.assert_clean()


CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from rsp_sdk.engine.provision import ProvisionCache
    from tests.engines import open_toy
    cache = ProvisionCache({cache!r})
    session, _ = open_toy({adapter!r}, {runtime!r}, __import__("pathlib").Path({work!r}), cache)
    print(session.pid, flush=True)
    time.sleep(600)
    """
)


def test_engine_dies_with_its_parent(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    """SIGKILL the Python process that owns the engine: the lifeline takes the engine down."""
    adapter, runtime, cache = combo
    code = CHILD.format(
        repo=str(REPO),
        cache=str(cache.root),
        adapter=adapter,
        runtime=runtime,
        work=str(tmp_path / "engine"),
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        assert line.strip().isdigit(), f"child failed: {line!r}"
        host = int(line)
        watch = TreeWatch(host)
        watch.observe()
        assert psutil.pid_exists(host)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        watch.assert_clean(timeout=15)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_rsp_run_reports_engine_crash(toy_cache: Any, tmp_path: Path, rsp_exe: list[str]) -> None:
    """`rsp run` with a crashing engine: exit 1, status.json failed with the engine's words,
    results until then kept, engine gone."""
    from tests.test_run import prepare_inputs, rsp_run

    stream, query = prepare_inputs(tmp_path)
    out = tmp_path / "run"
    proc = rsp_run(
        rsp_exe,
        toy_cache,
        "toy-java",
        "py4j",
        query,
        stream,
        out,
        "--rate",
        "40000",
        "--batch-size",
        "2000",
        "--engine-config",
        json.dumps({"crash_on_push": 6}),
        "--json",
    )
    assert proc.returncode == 1, proc.stderr
    status = json.loads((out / "status.json").read_text())
    assert status["state"] == "failed" and status["error_type"] == "EngineCrashed"
    assert "simulated crash in push 6" in status["error"]
    assert status["batches_pushed"] == 5
    assert (
        not psutil.pid_exists(status["engine_pid"])
        or psutil.Process(status["engine_pid"]).status() == psutil.STATUS_ZOMBIE
    )
    from rsp_sdk.run.recorder import read_table

    assert read_table(out, "pushed").num_rows == 5


@pytest.mark.parametrize("runtime", ["jpype", "py4j"])
def test_unknown_driver_class_fails_to_start(toy_cache: Any, tmp_path: Path, runtime: str) -> None:
    from rsp_sdk.runtime import get_runtime
    from rsp_sdk.runtime.base import JvmDriver

    spec = JvmDriver(driver_class="org.example.NoSuchDriver", classpath=[])
    with pytest.raises(EngineError) as info:
        get_runtime(runtime).launch(spec, tmp_path / "w", log_dir=tmp_path / "logs")
    assert "org.example.NoSuchDriver" in str(info.value)
    assert "ClassNotFoundException" in str(info.value)


def test_missing_program_fails_to_start(tmp_path: Path) -> None:
    from rsp_sdk.runtime import get_runtime
    from rsp_sdk.runtime.base import ProcessDriver

    with pytest.raises(EngineError, match="cannot start '/no/such/engine'"):
        get_runtime("subprocess").launch(
            ProcessDriver(argv=["/no/such/engine"]), tmp_path / "w", log_dir=tmp_path / "logs"
        )


def test_py4j_ports_are_loopback_released_and_never_dialled_again(
    toy_cache: Any, tmp_path: Path
) -> None:
    """The bridge listens on loopback only, its ports are free after close, and a py4j object
    collected after close does not dial the old control port: py4j's close() left its client
    "connected", so the finalizer of a late-collected JavaObject (an engine exception kept by a
    traceback cycle) opened a new socket there and waited for the auth answer without a timeout.
    With host networking the port may by then belong to a later engine's data lane, which never
    answers: the thread that ran the GC blocked until pytest-timeout (CI: 602.7 s in
    TestCqelsConformance::test_batches_all_reach_the_engine[cqels@docker])."""
    session, watch = open_toy("toy-java", "py4j", tmp_path / "e", toy_cache)
    channel = session.channel
    ports = set(channel.ports)  # type: ignore[attr-defined]
    held = [channel.gateway.jvm.java.util.ArrayList()]  # type: ignore[attr-defined]
    assert set(watch.ports) == ports and len(ports) == 2
    listening = {
        c.laddr.port: c.laddr.ip
        for c in psutil.net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port in ports
    }
    import ipaddress

    for ip in listening.values():  # never on a public interface (Java reports ::ffff:127.0.0.1)
        addr = ipaddress.ip_address(ip)
        mapped = getattr(addr, "ipv4_mapped", None)
        assert (mapped or addr).is_loopback, ip
    session.close()
    watch.assert_clean()
    assert not watch.survivors()
    # a listener that never answers on the old control port, as a later engine's data lane is
    mute = socket.socket()
    mute.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        mute.bind(("127.0.0.1", channel.ports[0]))  # type: ignore[attr-defined]
    except OSError as exc:
        mute.close()
        pytest.skip(f"the old control port was taken by another process at once: {exc}")
    with mute:
        mute.listen(4)
        # the last reference goes; the object sits in a cycle (py4j caches its bound methods),
        # so, as in CI, a cyclic collection in some later thread runs its finalizer
        collect = threading.Thread(target=lambda: (held.clear(), gc.collect()), daemon=True)
        collect.start()
        collect.join(5.0)
        assert not collect.is_alive(), "collecting a py4j object dialled the closed gateway"


def test_malformed_batch_is_an_engine_error(combo: tuple[str, str, Any], tmp_path: Path) -> None:
    session, watch = start(combo, tmp_path)
    with pytest.raises(EngineError) as info:
        session.push(
            SCENARIO.stream,
            TripleBatch(b"12 <http://a> <http://p> <http://o>\nnot-a-time <a>\n", 2, 0, 0),
        )
    assert not isinstance(info.value, EngineCrashed | EngineTimeout)
    assert "line 2" in info.value.engine_message, info.value.engine_message
    session.push(SCENARIO.stream, batches()[0])  # still usable
    session.close()
    watch.assert_clean()
