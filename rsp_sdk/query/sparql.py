"""The SPARQL body of a continuous query, checked by real SPARQL parsers.

rdflib parses the query into SPARQL algebra (used to decide which evaluator can run it) and
gives the position of a syntax error; pyoxigraph, which evaluates window contents, must accept
it too. Both parsers' errors become ``InputError`` at a line and column of the text the user
wrote (through the template position map when ``${VAR}`` parameters were substituted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pyoxigraph as ox
from pyparsing import ParseBaseException

from rsp_sdk.errors import InputError
from rsp_sdk.model.query import DEFAULT_BASE_IRI
from rsp_sdk.query.prepare import prepare_query
from rsp_sdk.query.template import line_col, offset_of

_STAR = re.compile(r"\bSELECT\s+(?:DISTINCT\s+|REDUCED\s+)?\*", re.IGNORECASE)
PositionMap = Callable[[int], tuple[int, int, str]]


@dataclass(frozen=True)
class ParsedSparql:
    """rdflib's algebra of a SELECT query and its projected variable names."""

    algebra: Any
    variables: list[str]
    oxigraph_error: str | None = None


def identity_positions(text: str) -> PositionMap:
    """Positions in ``text`` are the user's positions."""

    def where(offset: int) -> tuple[int, int, str]:
        line, col = line_col(text, offset)
        lines = text.splitlines()
        return line, col, lines[line - 1] if 0 < line <= len(lines) else ""

    return where


def parse_select(
    sparql: str,
    *,
    path: Path | str | None = None,
    positions: PositionMap | None = None,
    base_iri: str = DEFAULT_BASE_IRI,
) -> ParsedSparql:
    """Parse and validate a SELECT query; errors name the user's line and column."""
    where = positions or identity_positions(sparql)
    try:
        prepared = prepare_query(sparql, base=base_iri)
    except ParseBaseException as exc:
        line, col, text = where(offset_of(sparql, exc.lineno, exc.col))
        raise InputError(
            f"SPARQL syntax error: {exc.msg}",
            path=path,
            line=line,
            column=col,
            text=text,
            expected="a SPARQL 1.1 SELECT query",
        ) from None
    except Exception as exc:  # rdflib raises plain Exception for unknown prefixes
        message = str(exc)
        m = re.search(r"Unknown namespace prefix : (\S+)", message)
        offset = sparql.find(f"{m.group(1)}:") if m else -1
        at = where(offset) if offset >= 0 else None
        raise InputError(
            f"SPARQL error: {message}",
            path=path,
            line=at[0] if at else None,
            column=at[1] if at else None,
            text=at[2] if at else None,
            expected="declared prefixes" if m else "a valid SPARQL 1.1 SELECT query",
        ) from None
    algebra = prepared.algebra
    if algebra.name != "SelectQuery":
        raise InputError(
            f"only SELECT queries are continuous queries here, got {algebra.name}",
            path=path,
            expected="SELECT",
        )
    variables = [str(v) for v in algebra["PV"]]
    if _STAR.search(sparql):
        # rdflib lists the variables of SELECT * in set order; use order of first appearance.
        def first_seen(name: str) -> int:
            m = re.search(rf"[?$]{re.escape(name)}(?![\w])", sparql)
            return m.start() if m else len(sparql)

        variables.sort(key=first_seen)
    return ParsedSparql(algebra, variables, oxigraph_rejection(sparql, base_iri))


def oxigraph_rejection(sparql: str, base_iri: str = DEFAULT_BASE_IRI) -> str | None:
    """pyoxigraph's objection to a query, or None when it accepts it.

    rdflib is lenient where SPARQL 1.1 is strict (e.g. a projected variable that is not grouped,
    as in CityBench Q12, which rdflib reads as SAMPLE): such a query still parses, and this
    message travels with it so that only evaluating it with pyoxigraph fails, naming the reason.
    """
    try:
        # Evaluating on an empty store parses the query and costs nothing else.
        list(cast(ox.QuerySolutions, ox.Store().query(sparql, base_iri=base_iri)))
    except (SyntaxError, RuntimeError) as exc:  # RuntimeError: a custom function (f:timestamp)
        message = " ".join(str(exc).split())
        return message if len(message) <= 300 else message[:297] + "..."
    return None
