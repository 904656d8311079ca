"""The conformance kit catches what its test names promise: the Python fixture engine, told to
drop a batch, invent a literal or say nothing in stats(), must fail (or skip, saying why) the
kit's own tests — including for a custom query and for an engine that may drop data, where the
kit used to check nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine.session import EngineSession
from rsp_sdk.runtime import get_runtime
from rsp_sdk.testing import AdapterConformance, Scenario, default_query
from tests.fixtures.adapters import ToyPyAdapter

BASE = Scenario(triples=2_000, span_ms=4_000, batch_size=500)
CUSTOM = default_query(BASE.stream).model_copy(update={"name": "custom"})


def kit(scenario: Scenario) -> AdapterConformance:
    """The kit for the Python fixture engine, which answers every push within milliseconds: a
    dropped batch is judged after 3 s, not after the kit's default 30 s of waiting for it."""
    attrs = {"adapter": ToyPyAdapter(), "scenario": scenario, "drain_limit_s": 3.0}
    cls = type("Kit", (AdapterConformance,), attrs)
    return cls()  # type: ignore[no-any-return]


@pytest.fixture
def opener(tmp_path: Path) -> Iterator[Any]:
    """The kit's ``open_session`` on the subprocess runtime (config merged the kit's way)."""
    opened: list[EngineSession] = []

    def make(scenario: Scenario) -> Any:
        def open_(config: dict[str, Any] | None = None, timeouts: Any = None) -> EngineSession:
            session = ToyPyAdapter().open(
                get_runtime("subprocess"),
                tmp_path / f"engine-{len(opened)}",
                config={**scenario.config, **(config or {})},
            )
            opened.append(session)
            return session

        return open_

    yield make
    for session in opened:
        session.kill()


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (replace(BASE, config={"drop_push": 2}), "matching triples never came out"),
        (replace(BASE, query=CUSTOM, config={"drop_push": 2}), "matching triples never came out"),
        (
            replace(BASE, expect_complete=False, config={"drop_push": 2}),
            r"no result holds any matching triple of batch\(es\) \[1\]",
        ),
    ],
    ids=["default", "custom-query", "may-drop-data"],
)
def test_a_dropped_batch_is_caught(scenario: Scenario, message: str, opener: Any) -> None:
    with pytest.raises(AssertionError, match=message):
        kit(scenario).test_batches_all_reach_the_engine(opener(scenario))


def test_an_honest_engine_passes_for_a_custom_query(opener: Any) -> None:
    scenario = replace(BASE, query=CUSTOM)
    kit(scenario).test_batches_all_reach_the_engine(opener(scenario))


def test_an_invented_literal_is_caught(opener: Any) -> None:
    scenario = replace(BASE, config={"invent_literal": True})
    with pytest.raises(AssertionError, match="was never pushed"):
        kit(scenario).test_results_carry_system_time_and_projection(opener(scenario))


def test_stats_that_say_nothing_are_a_named_skip(opener: Any) -> None:
    scenario = replace(BASE, config={"no_stats": True})
    with pytest.raises(pytest.skip.Exception, match=r"reports no stats \(stats\(\) == \{\}\)"):
        kit(scenario).test_stats_during_push(opener(scenario))
