"""The cycle collector is held off while a judgement groups its tables, and given back after.

Judging allocates a tuple per binding and a relation per window and t0 candidate, none in a
cycle; with the collector on, its passes over them were most of a large judgement's time
(``rsp_sdk.util.gcpause``). These tests watch the collector itself (``gc.callbacks``), not a
clock: no automatic collection starts inside a judgement, one does on the same work outside it,
and the collector's state after a pause is the state before it, nested and across threads.
"""

from __future__ import annotations

import gc
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest

from benchmarks.bench_judge import as_answers, synthetic_expected
from rsp_sdk.compare.judge import judge_run
from rsp_sdk.compare.relations import expected_relations
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
from rsp_sdk.util.gcpause import gc_paused, without_gc

PROFILE = Profile(
    name="window-close",
    report=frozenset({ReportPolicy.WINDOW_CLOSE}),
    tick=Tick.TIME_DRIVEN,
    emits_empty_relations=False,
)


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@contextmanager
def _collections(within: Callable[..., Any] | None = None) -> Iterator[list[int]]:
    """The generations of the automatic collections started inside the block — with
    ``within``, only those started while that function's own frame was on the stack (the
    collection its pause defers starts after it returns, on the next allocation)."""
    seen: list[int] = []
    code = None if within is None else inspect.unwrap(within).__code__

    def watch(phase: str, info: dict[str, Any]) -> None:
        frame: FrameType | None = sys._getframe(1)
        while code is not None and frame is not None and frame.f_code is not code:
            frame = frame.f_back
        if phase == "start" and frame is not None:
            seen.append(int(info["generation"]))

    gc.callbacks.append(watch)
    try:
        yield seen
    finally:
        gc.callbacks.remove(watch)


def test_grouping_an_expected_table_starts_no_collection_and_the_same_work_outside_does() -> None:
    table = synthetic_expected(
        candidates=20, relations=50, rows=4
    )  # 4,000 bindings, 1,000 relations
    with _collections(within=expected_relations) as inside:
        grouped = expected_relations(table)
    assert sorted(grouped) == list(range(20))
    assert inside == []
    with _collections() as outside:  # the same allocations, the collector free to run
        kept = [tuple((str(i), (j,)) for j in range(3)) for i in range(4_000)]
    assert outside, "allocating 4,000 tuples with the collector on should start collections"
    assert len(kept) == 4_000
    assert gc.isenabled()


def test_a_judgement_starts_no_collection_and_leaves_the_collector_on() -> None:
    expected = synthetic_expected(candidates=10, relations=40, rows=5)
    with _collections(within=judge_run) as inside:
        result = judge_run(expected, as_answers(expected), PROFILE, R2S.RSTREAM)
    assert result.correct and result.t0 == 0
    assert inside == []
    assert gc.isenabled()


def test_pauses_nest_and_give_back_the_state_they_found() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()  # it was off before: a pause does not turn it on


def test_the_collector_stays_off_until_the_last_thread_leaves_its_pause() -> None:
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with gc_paused():
            entered.set()
            release.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    assert entered.wait(10)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the other thread is still inside its pause
    release.set()
    other.join(10)
    assert gc.isenabled()


def test_a_pause_ends_when_its_function_raises() -> None:
    @without_gc
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()
