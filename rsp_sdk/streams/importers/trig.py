"""TriG streams: one named graph per event, each graph with a timestamp.

The timestamp of graph ``g`` is given by a triple ``g sr:hasTimestamp "ms"`` (CSRBench/YABench
layout, usually in a ``graphsList`` graph) or ``g prov:generatedAtTime "…"^^xsd:dateTime``.
Those metadata triples (and ``g rsp:inStream <stream>``, which our exporter writes so that a
multi-stream table round-trips) are not part of the stream. Graphs keep their document order;
triples inside a graph keep theirs.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyarrow as pa
import pyoxigraph as ox

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI
from rsp_sdk.streams.importers.rdf import BlankNodeLabels, graph_text, parse_quads, term_text
from rsp_sdk.streams.io import sort_by_time, stream_table
from rsp_sdk.streams.vocab import PROV_GENERATED_AT, RSP_IN_STREAM, SR_HAS_TIMESTAMP

_META = {SR_HAS_TIMESTAMP, PROV_GENERATED_AT, RSP_IN_STREAM}


def read_trig(
    path: Path | str, *, stream: str = DEFAULT_STREAM_IRI, sort: bool = False
) -> pa.Table:
    path = Path(path)
    bnodes = BlankNodeLabels()
    graphs: dict[str, list[tuple[str, str, str]]] = {}
    stamps: dict[str, int] = {}
    streams: dict[str, str] = {}
    for q in parse_quads(path, "trig"):
        pred = q.predicate.value
        if pred in _META:
            g = term_text(q.subject, bnodes)
            if pred == RSP_IN_STREAM:
                if not isinstance(q.object, ox.NamedNode):
                    raise InputError(
                        f"stream of graph {g} is {q.object}", path=path, expected="a stream IRI"
                    )
                streams[g] = q.object.value
            else:
                stamps[g] = _timestamp_of(path, g, q.object)
            continue
        g_txt = graph_text(q.graph_name, bnodes)
        if g_txt is None:
            raise InputError(
                f"triple {q.subject} {q.predicate} {q.object} is in the default graph",
                path=path,
                expected="every stream triple inside a timestamped named graph",
            )
        graphs.setdefault(g_txt, []).append(
            (term_text(q.subject, bnodes), str(q.predicate), term_text(q.object, bnodes))
        )

    times: list[int] = []
    names: list[str] = []
    gs: list[str | None] = []
    s: list[str] = []
    p: list[str] = []
    o: list[str] = []
    last: tuple[int, str] | None = None
    for g, triples in graphs.items():
        if g not in stamps:
            raise InputError(
                f"named graph {g} has no timestamp",
                path=path,
                line=_line_of(path, g),
                expected=f'a triple {g} <{SR_HAS_TIMESTAMP}> "ms" somewhere in the file',
            )
        t = stamps[g]
        if last is not None and t < last[0] and not sort:
            raise InputError(
                f"graph {g} has timestamp {t}, smaller than {last[0]} of the previous graph "
                f"{last[1]}",
                path=path,
                line=_line_of(path, g),
                expected="graphs in non-decreasing timestamp order (pass --sort to accept this)",
            )
        last = (t, g)
        for s_, p_, o_ in triples:
            times.append(t)
            names.append(streams.get(g, stream))
            gs.append(g)
            s.append(s_)
            p.append(p_)
            o.append(o_)
    table = stream_table(names, times, s, p, o, gs)
    return sort_by_time(table) if sort else table


def _timestamp_of(path: Path, graph: str, value: object) -> int:
    if isinstance(value, ox.Literal):
        lex = value.value.strip()
        if re.fullmatch(r"-?\d+", lex):
            if int(lex) < 0:
                raise InputError(
                    f"timestamp of graph {graph} is negative ({lex})",
                    path=path,
                    line=_line_of(path, graph),
                    expected="milliseconds of application time, 0 or more",
                )
            return int(lex)
        try:
            when = dt.datetime.fromisoformat(lex.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
            return int(when.timestamp() * 1000)
    raise InputError(
        f"timestamp of graph {graph} is {value}",
        path=path,
        line=_line_of(path, graph),
        expected="an integer number of milliseconds or an xsd:dateTime",
    )


def _line_of(path: Path, graph: str) -> int | None:
    """Line where a graph's IRI first appears (by full IRI or local name), for error messages."""
    needles = [graph]
    if graph.startswith("<"):
        local = re.split(r"[#/]", graph[1:-1])[-1]
        if local:
            needles.append(local)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for needle in needles:
        for i, line in enumerate(lines, start=1):
            if needle in line:
                return i
    return None
