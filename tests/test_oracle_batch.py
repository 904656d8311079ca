"""A batch of (query, profile) pairs (``plan_jobs`` + ``run_jobs``) shares work, never results.

Two profiles whose reports need the same window contents (window close, time-driven) but
differ in R2S and empty relations: the batch computes the query's relations once (one
``SharedWork`` entry), runs both jobs in two threads, and each output equals the independent
reference oracle's (pyoxigraph per window, no Spark).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from rsp_sdk.model.profile import ReportPolicy, T0Policy
from rsp_sdk.oracle import plan_jobs, run_jobs
from tests.oracle_support import profile, query, rooms, spark
from tests.test_oracle_reference import Case, canonical, diff, reference

__all__ = ["spark"]

NO_STATIC = pa.table({c: pa.array([], pa.string()) for c in ("s", "p", "o")})
SIX = "0: m1@r1; 300: m2@r2; 700: m3@r1; 1200: m4@r2; 1500: m5@r1; 1900: m6@r3"


def test_profiles_with_equal_contents_share_relations_and_keep_their_own_output(
    spark: Any,
) -> None:
    text = query("?m ?r", "?m ex:detectedAt ?r", "PT2S", "PT1S", r2s="ISTREAM")
    t0 = T0Policy(step_ms=500, span="window")
    rstream = profile(ReportPolicy.WINDOW_CLOSE, r2s="rstream", empty=True, t0=t0)
    istream = profile(ReportPolicy.WINDOW_CLOSE, r2s="istream", empty=False, t0=t0)
    stream = rooms(SIX)
    cases = [Case(text, p, stream, NO_STATIC) for p in (rstream, istream)]
    jobs = plan_jobs(stream, [(c.spec(), c.profile) for c in cases], spark=spark)
    assert all(job.choice.evaluator == "sql" for job in jobs)
    outputs = run_jobs(jobs, threads=2)
    assert jobs[0].shared is jobs[1].shared
    assert jobs[0].shared is not None and len(jobs[0].shared.relations) == 1
    for case, out in zip(cases, outputs, strict=True):
        want, have = canonical(reference(case, "oxigraph")), canonical(out)
        assert want == have, f"{case.describe()}\n" + diff(want, have)
    # Rstream repeats a binding that Istream reports once: the outputs are each their own
    assert canonical(outputs[0]) != canonical(outputs[1])
