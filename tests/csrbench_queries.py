"""The CSRBench queries Q1–Q7 as QuerySpecs, for the adapter tests.

``rspql(n)`` reads matrix/queries/csrbench/qN.rspql with the RSP-QL parser (``rsp_sdk.query``)
when this build has it; otherwise it builds the QuerySpec that parser produces — the text with
the REGISTER and FROM NAMED WINDOW clauses blanked and ``WINDOW <w> {`` read as ``GRAPH <w> {``
— so the renderers are tested on the same input either way. ``plain(n)`` is the CSRBench
properties form: plain SPARQL over the window (the body of the hand-written C-SPARQL text).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec, WindowSpec

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO / "matrix" / "queries" / "csrbench"
STREAM = "http://ex.org/streams/test"
EXTRACTED = "dellaglio+csrbench-oracle-engines/extracted-queries"
HAS_PARSER = importlib.util.find_spec("rsp_sdk.query") is not None


def rspql(n: int) -> QuerySpec:
    path = QUERIES / f"q{n}.rspql"
    if HAS_PARSER:
        from rsp_sdk.query import load_query

        return load_query(path)
    text = path.read_text()
    prefixes = dict(re.findall(r"PREFIX\s+([\w-]*):\s*<([^>]*)>", text))

    def iri(term: str) -> str:
        head, _, tail = term.partition(":")
        return term[1:-1] if term.startswith("<") else prefixes[head] + tail

    m = re.search(r"FROM NAMED WINDOW (\S+) ON (\S+) \[RANGE PT(\d+)S STEP PT(\d+)S\]", text)
    name = re.search(r"REGISTER RSTREAM (\S+) AS", text)
    select = re.search(r"SELECT (.*)\n", text)
    assert m and name and select, path
    sparql = "\n".join(" " * len(x) if x.startswith("#") else x for x in text.split("\n"))
    for clause in (name.group(0), m.group(0)):
        sparql = sparql.replace(clause, " " * len(clause))
    sparql = sparql.replace("WINDOW csrbench:w {", "GRAPH  csrbench:w {")
    return QuerySpec(
        name=iri(name.group(1)),
        r2s=R2S.RSTREAM,
        text=text,
        sparql=sparql,
        prefixes=prefixes,
        variables=re.findall(r"\?(\w+)(?![^(]*\))", select.group(1))
        or re.findall(r"AS \?(\w+)", select.group(1)),
        windows=[
            WindowSpec(
                name=iri(m.group(1)),
                stream=iri(m.group(2)),
                range_ms=int(m.group(3)) * 1000,
                step_ms=int(m.group(4)) * 1000,
            )
        ],
    )


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
