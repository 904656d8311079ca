"""The recorder's encoding of engine results: rows per second from N-Triples terms to the
binding JSON written in ``outputs.parquet``.

The per-row path (``to_sparql_json`` of each term, then ``binding_to_json`` of the dict) held
the harness to ~21,000 rows/s on CityBench Q5 at ten instances, behind an engine that emitted
faster; ``row_to_json`` encodes each distinct term once. Both are timed here on the same rows,
in one run: 500,000 rows of four variables shaped like CityBench's (an observation IRI per
row, 200 sensors, 1,000 distinct typed values, one plain literal).
"""

from __future__ import annotations

import time

from benchmarks import Result, bench

ROWS = 500_000
NAMES = ("obId", "sensor", "value", "label")


def _rows() -> list[tuple[str | None, ...]]:
    xsd = "http://www.w3.org/2001/XMLSchema#double"
    return [
        (
            f"<http://ex.org/obs/{i}>",
            f"<http://ex.org/sensor/{i % 200}>",
            f'"{(i % 1000) / 10}"^^<{xsd}>',
            '"traffic \\"congested\\""' if i % 3 else None,
        )
        for i in range(ROWS)
    ]


@bench("runtime.record_outputs")
def record_outputs() -> list[Result]:
    from rsp_sdk.model.results import binding_to_json, row_to_json
    from rsp_sdk.model.terms import to_sparql_json

    rows = _rows()
    t = time.perf_counter()
    before = [
        binding_to_json({v: to_sparql_json(x) for v, x in zip(NAMES, r, strict=True) if x})
        for r in rows
    ]
    per_term = time.perf_counter() - t
    t = time.perf_counter()
    after = [row_to_json(NAMES, r) for r in rows]
    cached = time.perf_counter() - t
    assert after == before
    return [
        Result("record outputs, per-term encoding (before)", ROWS / per_term, "rows/s"),
        Result(
            "record outputs, row_to_json",
            ROWS / cached,
            "rows/s",
            target="faster than per-term",
            ratio=per_term / cached,
        ),
    ]
