"""Helpers for the tests that drive the real C-SPARQL and CQELS engines.

They run only where the engine is provisioned (``rsp engines fetch NAME`` + ``rsp engines add
NAME JAR…`` into ``$RSP_CACHE``; CI adds the artifacts of ``../shared/engines``); elsewhere — a
fresh clone without them — they skip with the provisioning cache's own missing-artifact
message, which names the file, where upstream keeps it and the command that adds it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rsp_sdk.engine import Adapter, EngineSession, MissingArtifact, ResultEvent, TripleBatch
from rsp_sdk.model.stream import STREAM_SCHEMA
from rsp_sdk.model.terms import from_sparql_json
from rsp_sdk.runtime import get_runtime
from rsp_sdk.streams.importers.csrbench import read_csrbench_folder
from rsp_sdk.testing import TreeWatch
from tests.conftest import _java_tools_missing

CSRBENCH_DATA = "dellaglio+csrbench-oracle/data"
ANSWERS = "dellaglio+csrbench-oracle/src/main/resources/answers"
STREAM = "http://ex.org/streams/test"
EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"


# what each engine needs on PATH besides its provisioned artifacts, and how to get it
TOOLS = {
    "node": "Node.js 18+ (Debian: apt-get install nodejs npm)",
    "swipl": "SWI-Prolog (Debian: apt-get install swi-prolog-nox)",
    "javac": "a JDK 17 to compile its glue (Debian: apt-get install openjdk-17-jdk-headless)",
}
ENGINE_TOOLS = {"rspjs": ("node",), "etalis": ("swipl",), "jtalis": ("swipl", "javac")}


def engine_missing(name: str, *, host: bool = True) -> str | None:
    """Why engine ``name`` cannot run here (None: it can), naming the exact prerequisite: a
    program not on PATH, else what ``adapter.missing_artifacts()`` lists, each with the
    command that adds it. The one provisioning check of every engine test's skip.
    ``host=False``: the engine in its image (docker runtime), which needs no host program."""
    from rsp_sdk.engine.registry import get_adapter

    for tool in ENGINE_TOOLS.get(name, ()) if host else ():
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH: engine {name} needs {TOOLS[tool]}"
    missing = get_adapter(name).missing_artifacts()
    if missing:
        return f"engine {name} is not provisioned: missing {'; '.join(missing)}"
    return None


def require(adapter: Adapter) -> Adapter:
    """Skip the test unless ``adapter``'s engine is provisioned (and a JDK and Maven exist)."""
    reason = _java_tools_missing()
    if reason:
        pytest.skip(reason)
    try:
        adapter.driver()
    except MissingArtifact as exc:
        pytest.skip(str(exc))
    return adapter


def open_engine(
    adapter: Adapter, runtime: str, workdir: Path, config: dict[str, Any] | None = None
) -> EngineSession:
    session = adapter.open(get_runtime(runtime), workdir, config=config or {})
    TreeWatch(session.pid).observe()
    return session


def table(rows: Iterable[tuple[Any, ...]], stream: str = STREAM) -> pa.Table:
    """A stream table; a row may carry its own stream IRI as a fifth element."""
    rows = list(rows)
    return pa.table(
        {
            "stream": [r[4] if len(r) > 4 else stream for r in rows],
            "t_app_ms": pa.array([r[0] for r in rows], pa.int64()),
            "s": [r[1] for r in rows],
            "p": [r[2] for r in rows],
            "o": [r[3] for r in rows],
            "g": pa.nulls(len(rows), pa.string()),
        },
        schema=STREAM_SCHEMA,
    )


def csrbench_stream(shared_data: Path) -> pa.Table:
    return read_csrbench_folder(shared_data / CSRBENCH_DATA, interval_ms=1000, stream=STREAM)


def paced(session: EngineSession, stream: pa.Table, *, tail_s: float = 0.0) -> list[ResultEvent]:
    """Push each timestamp's triples at its time on the wall clock (for wall-clock engines);
    returns the events polled until ``tail_s`` after the last push."""
    times = sorted(set(stream.column("t_app_ms").to_pylist()))
    origin = times[0]
    start = time.monotonic()
    events: list[ResultEvent] = []
    for t in times:
        due = start + (t - origin) / 1000
        while (now := time.monotonic()) < due:
            events += session.poll()
            time.sleep(min(0.02, due - now))
        part = stream.filter(pc.equal(stream.column("t_app_ms"), t))
        for iri in dict.fromkeys(part.column("stream").to_pylist()):
            one = part.filter(pc.equal(part.column("stream"), iri))
            session.push(iri, TripleBatch.from_table(one))
    end = time.monotonic() + tail_s
    while time.monotonic() < end:
        events += session.poll()
        time.sleep(0.05)
    return events + session.poll()


Relation = frozenset[tuple[tuple[str, str], ...]]


def relations(events: Sequence[ResultEvent]) -> list[Relation]:
    """Each event's rows as a set of (var, N-Triples term) tuples, in order."""
    return [
        frozenset(
            tuple(sorted((v, t) for v, t in zip(ev.vars, row, strict=True) if t is not None))
            for row in ev.rows
        )
        for ev in events
    ]


def recorded(shared_data: Path, engine: str, n: int) -> list[Relation]:
    """A recorded CSRBench answer (2013) as relations of N-Triples bindings."""
    data = json.loads((shared_data / ANSWERS / f"{engine}-answer-{n}.json").read_text())
    out: list[Relation] = []
    for rel in data["relations"]:
        rows = []
        for b in rel["results"]["bindings"]:
            rows.append(
                tuple(sorted((v, from_sparql_json(term)) for v, term in b["binding"].items()))
            )
        out.append(frozenset(rows))
    return out


def numeric(rel: Relation) -> frozenset[tuple[tuple[str, Any], ...]]:
    """Bindings with numeric literals replaced by their value (xsd:decimal vs double)."""
    from rsp_sdk.model.terms import split_literal

    def value(term: str) -> Any:
        if term.startswith('"'):
            lex, dt, _ = split_literal(term)
            if (
                dt
                and dt.startswith(XSD)
                and dt[len(XSD) :] in ("double", "decimal", "integer", "float")
            ):
                return round(float(lex), 6)
        return term

    return frozenset(tuple((v, value(t)) for v, t in row) for row in rel)
