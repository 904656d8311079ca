"""The adapter conformance suite: subclass ``AdapterConformance`` to run it on your adapter.

::

    # test_my_engine.py (run with `pytest -p rsp_sdk.testing.plugin`, or automatically when
    # rsp_sdk is installed: the plugin is registered under the pytest11 entry point)
    from rsp_sdk.testing import AdapterConformance, Scenario

    class TestMyEngine(AdapterConformance):
        adapter = MyEngineAdapter()
        scenario = Scenario(triples=20_000)          # optional: stream, query, expectations

Every test runs once per runtime that can carry the adapter's driver (``jpype``, ``py4j`` and
``docker`` for a JVM driver, ``subprocess`` for a JSON-lines program; set ``runtimes`` to narrow
it). A runtime that cannot work on this machine says why (``unavailable()``, e.g. no Docker
daemon) and its tests are skipped with that reason. Each test checks that the engine's process
tree and ports are gone afterwards. Override the ``rsp_cache``
fixture to point at a provisioning cache other than ``$RSP_CACHE``.

What is checked: the lifecycle (open, register, push, advance, poll, close; context manager,
idempotent close), batching (several 10k-triple batches and one large batch all reach the
engine), time (``t_sys_ns`` on our monotonic clock between push and poll; ``advance_time``
flushes the last windows of an application-time engine), results (projection variables, valid
N-Triples terms, only pushed data), errors (a query the engine rejects raises ``EngineError``
with the engine's message and the session stays usable; a query needing an unsupported feature
is refused before reaching the engine), faults (the engine killed mid-run raises
``EngineCrashed``, a frozen engine raises ``EngineTimeout``; nothing is left running and the next
session opens fine), and ``stats``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rsp_sdk.engine.adapter import Adapter
from rsp_sdk.engine.batch import TripleBatch, fixed_bounds, pack_lines, slice_batches
from rsp_sdk.engine.capabilities import Feature
from rsp_sdk.engine.session import EngineSession, ResultEvent, Timeouts, UnsupportedQuery
from rsp_sdk.model.profile import ReportPolicy
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.model.terms import split_literal
from rsp_sdk.runtime import get_runtime
from rsp_sdk.runtime.base import EngineCrashed, EngineError, EngineTimeout
from rsp_sdk.testing.leaks import TreeWatch
from rsp_sdk.testing.scenario import FEATURE_PROBES, NS, Scenario, default_query

Opener = Callable[..., EngineSession]

JVM_STATS = ("heap_used", "heap_committed", "gc_count", "gc_time_ms", "threads")


def drain(
    session: EngineSession,
    *,
    quiet_s: float = 1.0,
    limit_s: float = 30.0,
    until: Callable[[list[ResultEvent]], bool] | None = None,
) -> list[ResultEvent]:
    """Poll until ``until(events)`` holds, or nothing new arrived for ``quiet_s``."""
    events: list[ResultEvent] = []
    deadline = time.monotonic() + limit_s
    last_new = time.monotonic()
    while time.monotonic() < deadline:
        got = session.poll()
        if got:
            events.extend(got)
            last_new = time.monotonic()
        if until is not None and until(events):
            break
        if until is None and time.monotonic() - last_new >= quiet_s:
            break
        time.sleep(0.05)
    return events


class AdapterConformance:
    """Base class of a conformance test class; set ``adapter`` (and optionally the rest)."""

    adapter: ClassVar[Adapter]
    scenario: ClassVar[Scenario] = Scenario()
    runtimes: ClassVar[Sequence[str] | None] = None
    # short limits so the fault tests finish quickly; raise them for slow engines
    timeouts: ClassVar[Timeouts] = Timeouts(open=120, verb=60, push=120, poll=60, close=15)
    hang_timeout_s: ClassVar[float] = 3.0
    # how long run_all waits for every expected row before the kit judges what came: an engine
    # that lost a batch makes the kit wait all of it, so an engine that answers at once (a
    # fixture) may shorten it
    drain_limit_s: ClassVar[float] = 30.0

    @pytest.fixture
    def rsp_cache(self) -> Any:
        """The provisioning cache the adapter's driver is built from (None: ``$RSP_CACHE``)."""
        return None

    @pytest.fixture
    def open_session(
        self, rsp_runtime_name: str, rsp_cache: Any, tmp_path: Path
    ) -> Iterator[Opener]:
        unavailable = getattr(get_runtime(rsp_runtime_name), "unavailable", None)
        reason = unavailable() if callable(unavailable) else None
        if reason:
            pytest.skip(str(reason))
        opened: list[tuple[EngineSession, TreeWatch]] = []

        def opener(
            config: dict[str, Any] | None = None, timeouts: Timeouts | None = None
        ) -> EngineSession:
            session = self.adapter.open(
                get_runtime(rsp_runtime_name),
                tmp_path / f"engine-{len(opened)}",
                config={**self.scenario.config, **(config or {})},
                timeouts=timeouts or self.timeouts,
                cache=rsp_cache,
            )
            watch = TreeWatch(session.pid)
            watch.observe()
            opened.append((session, watch))
            return session

        yield opener
        for session, watch in opened:
            watch.observe()
            session.kill()
            watch.assert_clean()

    # ---- helpers -----------------------------------------------------------------------------

    def batches(self, size: int | None = None, *, shift_ms: int = 0) -> list[TripleBatch]:
        """The scenario in batches; ``shift_ms`` moves it later in application time (to push it
        again without going back in time, which application-time engines refuse)."""
        table = self.scenario.table()
        if shift_ms:
            times = pc.add(table.column("t_app_ms"), pa.scalar(shift_ms, pa.int64()))
            table = table.set_column(table.schema.get_field_index("t_app_ms"), "t_app_ms", times)
        lines = pack_lines(table)
        return slice_batches(
            lines,
            table.column("t_app_ms"),
            fixed_bounds(table.num_rows, size or self.scenario.batch_size),
        )

    def start(self, open_session: Opener, **kw: Any) -> EngineSession:
        session = open_session(**kw)
        session.register_stream(self.scenario.stream)
        session.register_query(self.scenario.spec())
        return session

    def end_time(self) -> int:
        spec = self.scenario.spec()
        longest = max((w.range_ms + w.step_ms for w in spec.windows), default=1000)
        return self.scenario.span_ms + longest

    def expected_rows(self) -> set[tuple[str, str]] | None:
        """Every (s, o) the default query must output over the scenario (any R2S: under Istream
        each matching triple is new in the first window holding it); None for a custom query."""
        spec = self.scenario.spec()
        if spec.sparql != default_query(self.scenario.stream).sparql:
            return None
        t = self.scenario.table()
        return {
            (s, o)
            for s, p, o in zip(
                t["s"].to_pylist(), t["p"].to_pylist(), t["o"].to_pylist(), strict=True
            )
            if p == f"<{NS}p0>"
        }

    def _check_batches_arrived(
        self, batches: list[TripleBatch], events: list[ResultEvent], what: str
    ) -> None:
        """Every matching triple came out (``expect_complete``), or — for an engine that may
        drop data on its wall clock — every batch contributed at least one matching triple."""
        expected = self.expected_rows()
        if expected is None:
            pytest.skip(
                f"scenario.query {self.scenario.spec().name!r} is not the default query, so the "
                "kit cannot tell which rows each batch must produce"
            )
        got = _rows(events)
        if self.scenario.expect_complete:
            lost = expected - got
            assert not lost, (
                f"{what}: {len(lost)} of {len(expected)} matching triples never came out"
            )
            return
        silent = [k for k, b in enumerate(batches) if not _batch_rows(b) & got]
        assert not silent, f"{what}: no result holds any matching triple of batch(es) {silent}"

    def run_all(self, session: EngineSession, batches: list[TripleBatch]) -> list[ResultEvent]:
        for b in batches:
            session.push(self.scenario.stream, b)
        if Feature.APP_TIME_INPUT in self.adapter.capabilities:
            session.advance_time(self.end_time())
        expected = self.expected_rows() if self.scenario.expect_complete else None
        if expected is None:
            return drain(session)
        return drain(session, until=lambda ev: expected <= _rows(ev), limit_s=self.drain_limit_s)

    # ---- the suite ---------------------------------------------------------------------------

    def test_lifecycle(self, open_session: Opener) -> None:
        session = self.start(open_session)
        assert session.pid > 0
        events = self.run_all(session, self.batches())
        assert events, "the engine produced no result events for the scenario"
        session.close()
        session.close()  # idempotent

    def test_context_manager_cleans_up(self, open_session: Opener) -> None:
        with self.start(open_session) as session:
            pid = session.pid
        assert not _alive(pid), f"host process {pid} survived the with block"

    def test_batches_all_reach_the_engine(self, open_session: Opener) -> None:
        session = self.start(open_session)
        small = self.batches(self.scenario.batch_size)
        assert len(small) >= 2 and all(b.count <= self.scenario.batch_size for b in small)
        events = self.run_all(session, small)
        self._check_batches_arrived(small, events, f"{len(small)} batches")
        session.close()
        big = open_session()
        big.register_stream(self.scenario.stream)
        big.register_query(self.scenario.spec())
        one = self.batches(self.scenario.triples)
        assert len(one) == 1
        events = self.run_all(big, one)
        self._check_batches_arrived(one, events, "a single large batch")

    def test_results_carry_system_time_and_projection(self, open_session: Opener) -> None:
        session = self.start(open_session)
        before = time.monotonic_ns()
        events = self.run_all(session, self.batches())
        after = time.monotonic_ns()
        assert events
        spec = self.scenario.spec()
        pushed_terms = _pushed_terms(self.scenario)
        computed = self.scenario.computes_literals
        for ev in events:
            assert ev.query == spec.name
            assert before <= ev.t_sys_ns <= after, (
                f"t_sys_ns {ev.t_sys_ns} outside [{before}, {after}]: not CLOCK_MONOTONIC ns?"
            )
            if spec.variables:
                assert set(ev.vars) == set(spec.variables)
            for row in ev.rows:
                for term in row:
                    if term is None or term in pushed_terms:
                        continue
                    # only a query that computes values (scenario.computes_literals) may output
                    # a literal that was never pushed; nothing may invent an IRI or blank node
                    assert computed and term.startswith('"'), f"{term!r} was never pushed"
                    split_literal(term)  # a well-formed N-Triples literal
            ev.bindings  # noqa: B018 - every term converts to SPARQL JSON
        stamps = [ev.t_sys_ns for ev in events]
        assert stamps == sorted(stamps), "result events are not in arrival order"
        if Feature.APP_TIME_INPUT in self.adapter.capabilities:
            apps = [ev.t_app_ms for ev in events if ev.t_app_ms is not None]
            assert apps == sorted(apps), "application times of results go backwards"

    def test_advance_time_flushes_last_window(self, open_session: Opener) -> None:
        """What ``advance_time`` must do depends on what the adapter declares.

        Application-time, window-close/periodic engines: it releases the last window. Eager
        (content-change) engines: results arrive without it. Wall-clock engines: it is accepted
        and changes nothing, the session stays usable.
        """
        session = self.start(open_session)
        for b in self.batches():
            session.push(self.scenario.stream, b)
        waits_for_time = bool(
            self.adapter.profile.report & {ReportPolicy.WINDOW_CLOSE, ReportPolicy.PERIODIC}
        )
        if Feature.APP_TIME_INPUT not in self.adapter.capabilities:
            session.advance_time(self.end_time())  # must be harmless on a wall-clock engine
            # its windows close on its own timer, up to a window after the last push, and the
            # evaluation then takes what it takes: wait for the first result, not for quiet
            limit = 30.0 + self.scenario.span_ms / 1000
            assert drain(session, until=bool, limit_s=limit), (
                f"no result {limit:.0f} s after pushing and advance_time"
            )
            return
        before = drain(session, quiet_s=0.5)
        if not waits_for_time:
            assert before, (
                f"{self.adapter.name} declares an eager (content-change) report, but no result "
                "arrived before time was advanced"
            )
            session.advance_time(self.end_time())
            drain(session, quiet_s=0.5)
            return
        session.advance_time(self.end_time())
        after = drain(session, quiet_s=0.5)
        assert after, "advance_time to the end of input released no results"
        last_t = max(b.t_max_ms for b in self.batches())
        assert any(ev.t_app_ms is None or ev.t_app_ms > last_t for ev in after), (
            "the window holding the last triples was not reported after advance_time"
        )

    def test_engine_rejects_invalid_query(self, open_session: Opener) -> None:
        session = open_session()
        session.register_stream(self.scenario.stream)
        with pytest.raises(EngineError) as info:
            session.register_query(self.scenario.invalid_query, name="invalid")
        assert not isinstance(info.value, EngineCrashed | EngineTimeout)
        assert info.value.engine_message, "the engine's own message is missing"
        # the session is still usable
        session.register_query(self.scenario.spec())
        assert self.run_all(session, self.batches())

    def test_unsupported_query_refused_before_the_engine(self, open_session: Opener) -> None:
        """Probes for features the adapter lacks are refused before the engine sees them; probes
        for features it declares render in its dialect (so a declaration cannot be vacuous)."""
        session = open_session()
        session.register_stream(self.scenario.stream)
        base = self.scenario.spec()
        for feature, text in FEATURE_PROBES.items():
            probe = QuerySpec(
                name=f"probe-{feature.value}", text=text, sparql=text, windows=base.windows
            )
            if feature in self.adapter.capabilities:
                # declared: the adapter's dialect renderer must be able to express it
                assert self.adapter.render(probe).strip(), f"empty rendering of {feature.value}"
                continue
            with pytest.raises(UnsupportedQuery) as info:
                session.register_query(probe)
            assert feature in info.value.missing and feature.value in str(info.value)
        assert not session.queries, "a refused query was registered anyway"
        session.register_query(base)
        assert self.run_all(session, self.batches()), "the session is unusable after refusals"

    def test_engine_killed_mid_run(self, open_session: Opener) -> None:
        session = self.start(open_session)
        batches = self.batches()
        session.push(self.scenario.stream, batches[0])
        os.kill(session.pid, signal.SIGKILL)
        with pytest.raises(EngineCrashed) as info:
            for b in batches[1:] * 3:
                session.push(self.scenario.stream, b)
            session.poll()
        assert "died" in str(info.value) or "SIGKILL" in str(info.value)
        with pytest.raises(EngineError):  # the channel stays dead, with the same story
            session.poll()
        session.close()
        # the caller can go on: a fresh session works
        again = self.start(open_session)
        assert self.run_all(again, batches)

    def test_frozen_engine_times_out(self, open_session: Opener) -> None:
        t = self.hang_timeout_s
        session = self.start(
            open_session,
            timeouts=Timeouts(open=120, verb=t, push=t, poll=t, stats=t, close=t),
        )
        os.kill(session.pid, signal.SIGSTOP)
        started = time.monotonic()
        with pytest.raises(EngineTimeout):
            for b in self.batches(self.scenario.triples) * 20:
                session.push(self.scenario.stream, b)
            session.advance_time(self.end_time())
            session.poll()
        assert time.monotonic() - started < 4 * t + 10
        assert not _alive(session.pid), "a timed-out engine must be killed"

    def test_stats_during_push(self, open_session: Opener) -> None:
        session = self.start(open_session)
        first = session.stats()
        jvm = self.adapter.driver_kind == "jvm"
        if not first and not jvm:
            pytest.skip(
                f"{self.adapter.name}'s {self.adapter.driver_kind} driver reports no stats "
                "(stats() == {}), so there is nothing to sample during a push"
            )
        self._check_stats(first)
        errors: list[BaseException] = []
        pushing = threading.Event()

        def pusher() -> None:
            try:
                pushing.set()
                for k in range(3):
                    for b in self.batches(
                        self.scenario.triples, shift_ms=k * self.scenario.span_ms
                    ):
                        session.push(self.scenario.stream, b)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        th = threading.Thread(target=pusher)
        th.start()
        pushing.wait(timeout=60)
        samples = [session.stats()]  # at least one sample once pushing started
        while th.is_alive():
            samples.append(session.stats())
            time.sleep(0.01)
        th.join()
        assert not errors, errors
        for sample in samples:
            assert isinstance(sample, dict), sample
            if jvm:  # the JVM runtimes answer stats on their own lane, concurrently with a push
                self._check_stats(sample)
            elif sample:  # a single-threaded driver may say {} ("cannot say now") while busy
                lost = set(first) - set(sample)
                assert not lost, f"stats lost {sorted(lost)} during a push: {sample}"
        if jvm:
            lost = set(first) - set().union(*samples)
            assert not lost, f"stats lost {sorted(lost)} during a push"

    def _check_stats(self, stats: dict[str, Any]) -> None:
        assert isinstance(stats, dict) and stats, f"stats() said nothing: {stats!r}"
        if self.adapter.driver_kind == "jvm":
            missing = [k for k in JVM_STATS if not isinstance(stats.get(k), int)]
            assert not missing, f"JVM stats lack {missing}: {stats}"


def _rows(events: list[ResultEvent]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for ev in events:
        if "s" in ev.vars and "o" in ev.vars:
            si, oi = ev.vars.index("s"), ev.vars.index("o")
            out.update((r[si], r[oi]) for r in ev.rows if r[si] and r[oi])  # type: ignore[misc]
    return out


def _batch_rows(batch: TripleBatch) -> set[tuple[str, str]]:
    """(s, o) of the batch's p0 triples (the packed lines are ``t s p o``)."""
    p0 = f"<{NS}p0>"
    out = set()
    for line in batch.packed.decode().splitlines():
        _, s, p, o = line.split(" ", 3)
        if p == p0:
            out.add((s, o))
    return out


def _pushed_terms(scenario: Scenario) -> set[str]:
    t = scenario.table()
    return set(t["s"].to_pylist()) | set(t["p"].to_pylist()) | set(t["o"].to_pylist())


def _alive(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
