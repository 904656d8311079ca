"""The adapter conformance kit (rsp_sdk.testing) on the real C-SPARQL and CQELS engines, through
every runtime that can carry them. Skips, with the missing-artifact message, where an engine is
not provisioned (CI provisions them from ../shared/engines)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from rsp_adapter_cqels import CqelsAdapter
from rsp_adapter_csparql import Csparql09Adapter, CsparqlAdapter

from rsp_sdk.engine import EngineSession, ResultEvent, TripleBatch
from rsp_sdk.model.profile import R2S
from rsp_sdk.testing import AdapterConformance, Scenario, default_query, drain
from tests.real_engines import require

STREAM = "http://rsp-sdk.org/conformance/stream"


@pytest.mark.slow
class _Provisioned(AdapterConformance):
    @pytest.fixture
    def rsp_cache(self) -> Any:
        require(self.adapter)
        return None


class TestCsparqlConformance(_Provisioned):
    adapter = CsparqlAdapter()
    scenario = Scenario(triples=10_000, span_ms=4_000, batch_size=4_000)


class TestCqelsConformance(_Provisioned):
    """CQELS answers during push (eager Istream), so the kit's unpaced pushes still give every
    result; the query registers Istream, the only operator CQELS has."""

    adapter = CqelsAdapter()
    scenario = Scenario(
        triples=6_000,
        span_ms=4_000,
        batch_size=2_500,
        query=default_query(STREAM).model_copy(update={"r2s": R2S.ISTREAM}),
    )


class TestCsparql09Conformance(_Provisioned):
    """C-SPARQL 0.9 reports when Esper's wall-clock timer closes a window: wait for it."""

    adapter = Csparql09Adapter()
    scenario = Scenario(triples=10_000, span_ms=4_000, batch_size=4_000, expect_complete=False)
    runtimes: ClassVar[list[str]] = ["jpype"]

    def run_all(self, session: EngineSession, batches: list[TripleBatch]) -> list[ResultEvent]:
        for b in batches:
            session.push(self.scenario.stream, b)
        first = drain(session, until=bool, limit_s=30.0)  # the first window closes ≥ 1 s later
        return first + drain(session, quiet_s=2.5)
