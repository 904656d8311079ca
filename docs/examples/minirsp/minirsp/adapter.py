"""The rsp-sdk adapter of minirsp: what the engine is, how to write a query for it, how to
start it. It describes the engine and never drives it: rsp-sdk's ``EngineSession`` does that,
over the ``subprocess`` runtime, for every adapter alike."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rsp_sdk.engine import BaseAdapter, Capabilities, Feature, ProvisionCache
from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, T0Policy, Tick
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.structure import query_structure
from rsp_sdk.runtime import ProcessDriver

ENGINE = Path(__file__).with_name("engine.py")

# What minirsp does, in SECRET's terms (checked with `rsp engines probe minirsp`).
PROFILE = Profile(
    name="minirsp",
    description="windows [k·STEP, k·STEP+RANGE) from 0, reported at close if non-empty, Rstream",
    report=frozenset({ReportPolicy.WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT}),
    tick=Tick.TUPLE_DRIVEN,
    r2s=R2S.RSTREAM,
    emits_empty_relations=True,
    time_unit_ms=1,
    t0=T0Policy(first_ms=0),
)

# Basic graph patterns (joins included) on one window, Rstream, in application time.
CAPABILITIES = Capabilities.of(Feature.JOIN, Feature.RSTREAM, Feature.APP_TIME_INPUT)


class MiniRspAdapter(BaseAdapter):
    name = "minirsp"
    version = "0.1.0"
    profile = PROFILE
    capabilities = CAPABILITIES
    driver_kind = "process"

    def render(self, query: QuerySpec) -> str:
        """The query as minirsp's JSON: one window, the projection, the triple patterns."""
        structure = query_structure(query)
        beyond = structure.only(Feature.JOIN, Feature.NAMED_GRAPHS)
        if beyond or len(query.windows) != 1:
            what = ", ".join(f.value for f in beyond) or f"{len(query.windows)} windows"
            raise ValueError(f"minirsp cannot express {what}")
        window = query.windows[0]
        return json.dumps(
            {
                "stream": window.stream,
                "range_ms": window.range_ms,
                "step_ms": window.step_ms,
                "select": list(structure.projection),
                "where": [[t.s, t.p, t.o] for t in structure.triples],
            }
        )

    def driver(self, cache: ProvisionCache | None = None) -> ProcessDriver:
        """A program, not a JVM class: run engine.py with this Python, unbuffered."""
        return ProcessDriver(argv=[sys.executable, "-u", str(ENGINE)])
