"""RDF documents (N-Triples, Turtle, TriG, N-Quads, RDF/XML) through pyoxigraph.

pyoxigraph is a complete, fast RDF parser; this module turns its quads into N-Triples term text
and its syntax errors into ``InputError`` with file, line and column. Blank nodes are relabelled
``_:{prefix}b{n}`` in order of first appearance: pyoxigraph names anonymous nodes (``[ … ]``) at
random, and an import must give the same bytes every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyoxigraph as ox

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import STATIC_SCHEMA

FORMATS = {
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "nt": ox.RdfFormat.N_TRIPLES,
    "turtle": ox.RdfFormat.TURTLE,
    "ttl": ox.RdfFormat.TURTLE,
    "trig": ox.RdfFormat.TRIG,
    "nquads": ox.RdfFormat.N_QUADS,
    "nq": ox.RdfFormat.N_QUADS,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "rdf": ox.RdfFormat.RDF_XML,
    "owl": ox.RdfFormat.RDF_XML,
    "n3": ox.RdfFormat.N3,
}


class BlankNodeLabels:
    """Deterministic blank node labels for one document."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.labels: dict[str, str] = {}

    def __call__(self, term: ox.BlankNode) -> str:
        key = term.value
        label = self.labels.get(key)
        if label is None:
            label = self.labels[key] = f"_:{self.prefix}b{len(self.labels)}"
        return label


def term_text(term: object, bnodes: BlankNodeLabels) -> str:
    if isinstance(term, ox.BlankNode):
        return bnodes(term)
    return str(term)


def graph_text(graph: object, bnodes: BlankNodeLabels) -> str | None:
    if isinstance(graph, ox.DefaultGraph):
        return None
    return term_text(graph, bnodes)


def parse_quads(path: Path, fmt: str | ox.RdfFormat | None = None) -> Iterator[ox.Quad]:
    """Iterate the quads of an RDF file, mapping syntax errors to ``InputError``."""
    if fmt is None:
        fmt = FORMATS.get(path.suffix.lower().lstrip("."))
        if fmt is None:
            raise InputError(
                f"cannot tell the RDF format from the extension {path.suffix!r}",
                path=path,
                expected="one of " + ", ".join(sorted(FORMATS)),
            )
    elif isinstance(fmt, str):
        fmt = FORMATS[fmt]
    if not path.exists():
        raise InputError("file not found", path=path)
    try:
        with path.open("rb") as fh:
            yield from ox.parse(fh, fmt, base_iri=path.resolve().as_uri())
    except SyntaxError as exc:
        raise syntax_error(path, exc) from None


def syntax_error(path: Path, exc: SyntaxError) -> InputError:
    """``InputError`` for a pyoxigraph syntax error, quoting the offending line."""
    line = exc.lineno
    text = None
    if line:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            text = lines[line - 1] if 0 < line <= len(lines) else None
        except OSError:
            pass
    message = str(exc.args[0]) if exc.args else str(exc)
    return InputError(
        f"RDF syntax error: {message}", path=path, line=line, column=exc.offset, text=text
    )


def read_rdf(path: Path | str, *, fmt: str | None = None) -> pa.Table:
    """Static data: every quad of an RDF file as (s, p, o, g) N-Triples text."""
    path = Path(path)
    bnodes = BlankNodeLabels()
    s: list[str] = []
    p: list[str] = []
    o: list[str] = []
    g: list[str | None] = []
    for q in parse_quads(path, fmt):
        s.append(term_text(q.subject, bnodes))
        p.append(str(q.predicate))
        o.append(term_text(q.object, bnodes))
        g.append(graph_text(q.graph_name, bnodes))
    return pa.Table.from_arrays(
        [pa.array(col, pa.string()) for col in (s, p, o, g)], schema=STATIC_SCHEMA
    )
