"""The shape of a SPARQL SELECT text, for dialect renderers that must keep the user's text.

Dialects such as C-SPARQL and CQELS-QL are SPARQL with extra clauses in fixed places (FROM
STREAM before WHERE, STREAM blocks inside it). Regenerating the query from rdflib's algebra
would lose the text as written (``[ … ]`` blank nodes, prefixed names, FILTER placement), so
renderers cut the text instead: prologue, SELECT clause, the top-level items of the WHERE group
(triples, FILTERs, GRAPH blocks, other groups) and the solution modifiers. The cutting is done
by a small scanner that knows strings, IRIs and comments, so braces inside them never count;
whether the SPARQL itself is valid is checked by real parsers elsewhere. The tokens are those of
``rsp_sdk.query.lexer`` (the RSP-QL scanner), so both agree on what a string, IRI or comment is.

Public for adapters: the C-SPARQL and CQELS renderers use it, and any dialect that wraps SPARQL
text can.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.query import lexer
from rsp_sdk.query.lexer import Token

__all__ = [
    "DEFAULT_BASE_IRI",
    "Item",
    "SelectShape",
    "SparqlShapeError",
    "Token",
    "duration",
    "expand",
    "is_absolute_iri",
    "matching_brace",
    "only_triples",
    "parse_select",
    "split_group",
    "squash",
    "tokens",
    "variables",
    "where_group_offset",
    "window_named",
    "without_comments",
]

# Relative IRIs in RSP-QL (``WINDOW <w>``) resolve against this base unless the QuerySpec says
# otherwise (the RSP-QL parser resolves window names so, and keeps ``<w>`` in the SPARQL text).
DEFAULT_BASE_IRI = "http://rsp-sdk.local/"

_COMMENT = re.compile(r"#[^\n]*")


class SparqlShapeError(ValueError):
    """The text does not have the shape of a SELECT query with a WHERE group."""


def tokens(text: str) -> list[Token]:
    """Significant tokens (no whitespace or comments) with their offsets, as a list (the cutting
    below indexes into it)."""
    return list(lexer.tokens(text))


@dataclass(frozen=True, slots=True)
class Item:
    """One top-level element of a group: ``kind`` is triples, filter, graph, bind or group.

    ``graph`` items carry the graph name (``name``, expanded IRI or variable) and their inner
    text (``inner``); every item carries its exact source text.
    """

    kind: str
    text: str
    name: str | None = None
    inner: str | None = None


@dataclass(frozen=True, slots=True)
class SelectShape:
    prologue: str  # PREFIX/BASE declarations, as written
    select: str  # "SELECT … " up to (not including) FROM clauses and WHERE
    items: tuple[Item, ...]  # top-level elements of the WHERE group
    modifiers: str  # GROUP BY / ORDER BY / LIMIT … after the group


def without_comments(text: str) -> str:
    """The text with every comment blanked out (offsets unchanged), so slices of it can be
    joined on one line without a ``#`` swallowing the rest of the query.

    Between two significant tokens of the lexer there is only whitespace and comments, so the
    comments are exactly the ``#…`` runs of those gaps.
    """
    out: list[str] = []
    pos = 0
    for tok in [*lexer.tokens(text), None]:
        stop = len(text) if tok is None else tok.start
        out.append(_COMMENT.sub(lambda m: " " * len(m.group()), text[pos:stop]))
        if tok is not None:
            out.append(tok.text)
            pos = tok.end
    return "".join(out)


_IRIREF = re.compile(r'<[^<>"{}|^`\\\x00-\x20]*>')


def is_absolute_iri(iri: str) -> bool:
    """Whether ``iri`` can stand as ``<iri>`` in any dialect: IRIREF characters, a scheme."""
    return ":" in iri and _IRIREF.fullmatch(f"<{iri}>") is not None


def where_group_offset(text: str) -> int:
    """Offset of the top-level WHERE group's ``{``: the first ``{`` outside parentheses (so not
    one of a sub-select in the SELECT clause), skipping IRIs, strings and comments; -1 if none."""
    depth = 0
    for tok in lexer.tokens(text):
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        elif tok.text == "{" and depth == 0:
            return tok.start
    return -1


def matching_brace(text: str, open_at: int) -> int:
    """Offset of the ``}`` closing the ``{`` at ``open_at`` (strings/IRIs/comments skipped), or
    -1 when it is never closed."""
    depth = 0
    for tok in lexer.tokens(text):
        if tok.start < open_at:
            continue
        if tok.text == "{":
            depth += 1
        elif tok.text == "}":
            depth -= 1
            if depth == 0:
                return tok.start
    return -1


def squash(text: str) -> str:
    """Collapse whitespace runs (renderers emit one-line queries)."""
    return " ".join(text.split())


def _match(toks: list[Token], i: int, open_: str, close: str) -> int:
    """Index of the token closing the bracket opened at ``toks[i]``."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == open_:
            depth += 1
        elif toks[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    raise SparqlShapeError(f"unbalanced {open_!r} at offset {toks[i].start}")


def expand(token: Token, prefixes: Mapping[str, str]) -> str:
    """The IRI of an IRI or prefixed-name token (variables and the rest come back as is)."""
    if token.kind == "iri":
        return token.text[1:-1]
    if token.kind == "pname":
        prefix, _, local = token.text.partition(":")
        if prefix in prefixes:
            return prefixes[prefix] + local
    return token.text


def parse_select(text: str, prefixes: Mapping[str, str] | None = None) -> SelectShape:
    """Cut a SELECT query's text into prologue, SELECT clause, WHERE items and modifiers."""
    text = without_comments(text)
    toks = tokens(text)
    known = dict(prefixes or {})
    i = 0
    while i < len(toks) and not toks[i].is_word("SELECT"):
        if toks[i].is_word("PREFIX") and i + 2 < len(toks) and toks[i + 2].kind == "iri":
            known.setdefault(toks[i + 1].text[:-1], toks[i + 2].text[1:-1])
        i += 1
    if i == len(toks):
        raise SparqlShapeError("no SELECT in the query")
    prologue = text[: toks[i].start]
    select_parts: list[str] = []
    seg_start = toks[i].start
    depth = 0
    j = i
    while j < len(toks):
        t = toks[j]
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth == 0 and t.text == "{":
            break
        elif depth == 0 and (t.is_word("FROM") or t.is_word("WHERE")):
            select_parts.append(text[seg_start : t.start])
            if t.is_word("FROM"):  # FROM [NAMED] <g>: dropped, the renderer writes its own
                j += 2 if j + 1 < len(toks) and toks[j + 1].is_word("NAMED") else 1
            seg_start = toks[j + 1].start if j + 1 < len(toks) else len(text)
        j += 1
    if j == len(toks):
        raise SparqlShapeError("the query has no WHERE { … } group")
    select_parts.append(text[seg_start : toks[j].start])
    close = _match(toks, j, "{", "}")
    items = tuple(_items(text, toks, j + 1, close, known))
    modifiers = text[toks[close].end :]
    return SelectShape(
        prologue=squash(prologue),
        select=squash(" ".join(select_parts)),
        items=items,
        modifiers=squash(modifiers),
    )


def _items(
    text: str, toks: list[Token], start: int, stop: int, prefixes: Mapping[str, str]
) -> Iterator[Item]:
    """Top-level items of the group whose content is ``toks[start:stop]``."""
    i = start
    triples_from: int | None = None

    def flush(upto: int) -> Iterator[Item]:
        nonlocal triples_from
        if triples_from is not None:
            chunk = text[toks[triples_from].start : toks[upto - 1].end]
            triples_from = None
            if chunk.strip(" .\n\t"):
                yield Item("triples", chunk)

    while i < stop:
        t = toks[i]
        if t.is_word("FILTER"):
            yield from flush(i)
            j = i + 1
            while j < stop and toks[j].text not in ("(", "{"):
                j += 1
            if j >= stop:
                raise SparqlShapeError(f"FILTER without a condition at offset {t.start}")
            end = _match(toks, j, toks[j].text, ")" if toks[j].text == "(" else "}")
            yield Item("filter", text[t.start : toks[end].end])
            i = end + 1
        elif t.is_word("GRAPH") and i + 2 < stop and toks[i + 2].text == "{":
            yield from flush(i)
            end = _match(toks, i + 2, "{", "}")
            inner = text[toks[i + 2].end : toks[end].start]
            yield Item(
                "graph",
                text[t.start : toks[end].end],
                name=expand(toks[i + 1], prefixes),
                inner=inner,
            )
            i = end + 1
        elif t.is_word("BIND") and i + 1 < stop and toks[i + 1].text == "(":
            yield from flush(i)
            end = _match(toks, i + 1, "(", ")")
            yield Item("bind", text[t.start : toks[end].end])
            i = end + 1
        elif t.is_word("OPTIONAL", "MINUS", "SERVICE", "VALUES") or t.text == "{":
            yield from flush(i)
            j = i
            while j < stop and toks[j].text != "{":
                j += 1
            end = _match(toks, j, "{", "}")
            while end + 1 < stop and toks[end + 1].is_word("UNION"):
                end = _match(toks, end + 2, "{", "}")
            yield Item("group", text[t.start : toks[end].end])
            i = end + 1
        else:
            if triples_from is None and t.text != ".":
                triples_from = i
            i += 1
    yield from flush(stop)


def window_named(spec: QuerySpec, name: str | None) -> WindowSpec | None:
    """The window a ``GRAPH <name>`` block of the spec's SPARQL reads, if it is one."""
    if name is None:
        return None
    base = getattr(spec, "base_iri", None) or DEFAULT_BASE_IRI
    for candidate in (name, urljoin(base, name)):
        for window in spec.windows:
            if candidate in (window.name, window.stream):
                return window
    return None


def variables(text: str) -> set[str]:
    """Names of the variables that occur in a piece of SPARQL."""
    return {t.text[1:] for t in tokens(text) if t.kind == "var"}


def only_triples(inner: str, prefixes: Mapping[str, str] | None = None) -> bool:
    """True when a group's content is nothing but triple patterns."""
    return all(item.kind == "triples" for item in split_group(inner, prefixes))


def split_group(inner: str, prefixes: Mapping[str, str] | None = None) -> list[Item]:
    """The top-level items of a group's content (e.g. a window block's)."""
    inner = without_comments(inner)
    toks = tokens(inner)
    return list(_items(inner, toks, 0, len(toks), dict(prefixes or {})))


def duration(ms: int, *, units: tuple[str, ...] = ("s", "ms")) -> str:
    """A window duration in the largest of ``units`` that divides it (``10s``, ``500ms``)."""
    factors = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}
    for unit in units:
        if ms % factors[unit] == 0:
            return f"{ms // factors[unit]}{unit}"
    raise ValueError(f"{ms} ms cannot be written in {', '.join(units)}")
