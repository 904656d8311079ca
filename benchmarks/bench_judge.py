"""Judging an output against a large expected table, the cycle collector paused and not.

The shape of an eager engine's YABench judgement (CQELS's E3 at 200 stations): many t0
candidates, each expecting thousands of small relations. Two outputs: one that follows
candidate 0 until its last relation differs (every candidate tried to its end), one whose first
relation matches no expected relation (the closest one searched in every candidate). "Before"
is the same judgement with ``rsp_sdk.util.gcpause`` made a no-op (the collector running its
passes over the bindings being grouped), in the same process, after the same warm-up; the ratio
is before / after. Printed, never asserted.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from benchmarks import Result, bench
from rsp_sdk.model.results import EXPECTED_SCHEMA

CANDIDATES = 200
RELATIONS = 4_000
ROWS = 2
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def binding(n: int) -> str:
    """The ``n``-th binding: a sensor IRI and an integer reading (SPARQL 1.1 JSON)."""
    return json.dumps(
        {
            "s": {"type": "uri", "value": f"http://ex.org/sensor{n % 97}"},
            "v": {"type": "literal", "value": str(n), "datatype": XSD_INTEGER},
        }
    )


def synthetic_expected(candidates: int, relations: int, rows: int) -> pa.Table:
    """An expected table: candidate ``t0`` expects ``relations`` of ``rows`` bindings each,
    candidate t0's relation ``seq`` the same bindings as candidate 0's relation ``seq + t0``
    (shifted windows see shifted data)."""
    cols: dict[str, list[Any]] = {k: [] for k in EXPECTED_SCHEMA.names}
    for t0 in range(candidates):
        for seq in range(relations):
            close = t0 + (seq + 1) * 1000
            for r in range(rows):
                row = (
                    "q",
                    t0,
                    seq,
                    close,
                    close - 1000,
                    close,
                    rows,
                    binding((seq + t0) * rows + r),
                )
                for k, v in zip(EXPECTED_SCHEMA.names, row, strict=True):
                    cols[k].append(v)
    return pa.table(cols, schema=EXPECTED_SCHEMA)


def as_answers(expected: pa.Table, *, wrong_seq: int | None = None) -> pa.Table:
    """Candidate 0's relations as an engine's output; relation ``wrong_seq`` (if any) holds a
    binding no candidate expects instead."""
    mine = expected.filter(pc.equal(expected.column("t0_ms"), 0))
    texts = mine.column("binding").to_pylist()
    if wrong_seq is not None:
        at = mine.column("seq").to_pylist().index(wrong_seq)
        texts[at] = binding(-1)
    return pa.table(
        {
            "query": mine.column("query"),
            "seq": mine.column("seq"),
            "t_app_ms": mine.column("t_app_ms"),
            "t_sys_ns": pa.nulls(mine.num_rows, pa.int64()),
            "binding": pa.array(texts, pa.string()),
        }
    )


def _judge_s(expected: pa.Table, answers: pa.Table, paused: bool) -> tuple[float, bool]:
    from rsp_sdk.compare.judge import judge_run
    from rsp_sdk.model.profile import R2S, Profile, ReportPolicy, Tick
    from rsp_sdk.util import gcpause

    profile = Profile(
        name="content-change",
        report=frozenset({ReportPolicy.CONTENT_CHANGE}),
        tick=Tick.TUPLE_DRIVEN,
        emits_empty_relations=False,
    )
    gcpause.ACTIVE = paused
    try:
        started = time.perf_counter()
        result = judge_run(expected, answers, profile, R2S.RSTREAM)
        return time.perf_counter() - started, result.correct
    finally:
        gcpause.ACTIVE = True


@bench("compare.judge")
def judge() -> list[Result]:
    """An incorrect output against 200 candidates × 4,000 relations, collector paused / on."""
    expected = synthetic_expected(CANDIDATES, RELATIONS, ROWS)
    shape = f"{CANDIDATES} candidates × {RELATIONS:,} relations × {ROWS} rows"
    out: list[Result] = []
    for label, wrong in (("last relation differs", RELATIONS - 1), ("first matches none", 0)):
        answers = as_answers(expected, wrong_seq=wrong)
        _judge_s(expected, answers, paused=True)  # warm-up: imports, caches
        after, correct = _judge_s(expected, answers, paused=True)
        before, _ = _judge_s(expected, answers, paused=False)
        assert not correct, "the benchmark's output must be judged incorrect"
        out.append(
            Result(
                f"judge ({label}), collector paused",
                after,
                "s",
                target="faster than the collector on",
                ratio=before / after,
                note=f"{shape}; collector on: {before:.2f} s",
            )
        )
    return out
