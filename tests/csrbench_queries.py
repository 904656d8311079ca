"""The CSRBench queries Q1–Q7 as QuerySpecs, for the adapter tests.

``rspql(n)`` reads matrix/queries/csrbench/qN.rspql with the RSP-QL parser (``rsp_sdk.query``)
when this build has it; otherwise it builds the QuerySpec that parser produces — the text with
the REGISTER and FROM NAMED WINDOW clauses blanked and ``WINDOW <w> {`` read as ``GRAPH <w> {``
— so the renderers are tested on the same input either way. ``plain(n)`` is the CSRBench
properties form: plain SPARQL over the window (the body of the hand-written C-SPARQL text).
"""

from __future__ import annotations

import re
from pathlib import Path

from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.query import load_query

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO / "matrix" / "queries" / "csrbench"
STREAM = "http://ex.org/streams/test"
EXTRACTED = "dellaglio+csrbench-oracle-engines/extracted-queries"


def rspql(n: int) -> QuerySpec:
    """Q``n`` of matrix/queries/csrbench, read by the RSP-QL parser."""
    return load_query(QUERIES / f"q{n}.rspql")


def plain(n: int, shared_data: Path) -> QuerySpec:
    """Q``n`` as plain SPARQL with a window (the CSRBench oracle's form)."""
    text = (shared_data / EXTRACTED / "csparql" / f"q{n}.rq").read_text()
    m = re.search(r"FROM STREAM <([^>]+)> \[RANGE (\d+)s STEP (\d+)s\]", text)
    assert m
    sparql = text.replace(m.group(0), "").replace("REGISTER QUERY test AS", "")
    return QuerySpec(
        name=f"q{n}",
        text=text,
        sparql=sparql,
        prefixes=dict(re.findall(r"PREFIX\s+([\w-]*):\s*<([^>]*)>", text)),
        windows=[
            WindowSpec(
                name=m.group(1),
                stream=m.group(1),
                range_ms=int(m.group(2)) * 1000,
                step_ms=int(m.group(3)) * 1000,
            )
        ],
    )
