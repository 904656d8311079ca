"""RDF terms in N-Triples syntax, and their SPARQL 1.1 JSON form.

Streams store every term as its N-Triples text (``<iri>``, ``_:b0``, ``"v"^^<dt>``, ``"v"@en``):
the text is exact, sorts and hashes cheaply in Arrow and Spark, and round-trips through every RDF
toolkit. Results of queries use the SPARQL 1.1 JSON term encoding (``{"type": "uri", "value": …}``),
the form engines, CSRBench answers and SPARQL endpoints speak. This module converts between them.
"""

from __future__ import annotations

import re
from typing import Literal as TypingLiteral

import pyoxigraph as ox

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
# The datatypes SPARQL's numeric operators accept (XPath's numeric type hierarchy): every
# integer-derived type, then decimal, float and double. One list for the comparison, the oracle's
# SQL compiler and adapters that type their engine's numbers.
XSD_INTEGER_TYPES = frozenset(
    XSD + name
    for name in (
        "integer",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
XSD_DECIMAL = XSD + "decimal"
XSD_FLOAT_TYPES = frozenset((XSD + "float", XSD + "double"))
XSD_NUMERIC_TYPES = XSD_INTEGER_TYPES | {XSD_DECIMAL} | XSD_FLOAT_TYPES
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

TermKind = TypingLiteral["iri", "bnode", "literal"]

_LITERAL = re.compile(
    r'"(?P<lex>(?:[^"\\]|\\.)*)"(?:@(?P<lang>[a-zA-Z]+(?:-[a-zA-Z0-9]+)*)|\^\^<(?P<dt>[^>]*)>)?'
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")


def unescape(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        ch = m.group(3)
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        raise ValueError(f"invalid escape \\{ch}")

    return _ESCAPE_RE.sub(repl, text) if "\\" in text else text


def term_kind(term: str) -> TermKind:
    """Classify an N-Triples term by its first character."""
    if term.startswith("<"):
        return "iri"
    if term.startswith("_:"):
        return "bnode"
    if term.startswith('"'):
        return "literal"
    raise ValueError(f"not an N-Triples term: {term!r}")


def check_iri(value: str, *, option: str = "IRI") -> str:
    """``value`` if it is an absolute IRI (pyoxigraph's RFC 3987 parser decides), else
    ``InputError`` naming the option it came from: a stream named ``not an iri`` would be
    stored and then break every engine and the oracle far from its origin."""
    from rsp_sdk.errors import InputError

    try:
        ox.NamedNode(value)
    except ValueError as exc:
        raise InputError(
            f"{option} is not an absolute IRI ({exc})",
            text=value,
            expected="an IRI such as http://example.org/stream",
        ) from None
    return value


def iri(value: str) -> str:
    """N-Triples text of an IRI."""
    return str(ox.NamedNode(value))


def literal(value: str, *, datatype: str | None = None, language: str | None = None) -> str:
    """N-Triples text of a literal, escaped exactly as N-Triples requires."""
    if language:
        return str(ox.Literal(value, language=language))
    if datatype and datatype != XSD_STRING:
        return str(ox.Literal(value, datatype=ox.NamedNode(datatype)))
    return str(ox.Literal(value))


def split_literal(term: str) -> tuple[str, str | None, str | None]:
    """(lexical form, datatype IRI or None, language tag or None) of an N-Triples literal."""
    m = _LITERAL.fullmatch(term)
    if not m:
        raise ValueError(f"not an N-Triples literal: {term!r}")
    return unescape(m.group("lex")), m.group("dt"), m.group("lang")


def to_sparql_json(term: str) -> dict[str, str]:
    """SPARQL 1.1 JSON encoding of an N-Triples term."""
    kind = term_kind(term)
    if kind == "iri":
        return {"type": "uri", "value": term[1:-1]}
    if kind == "bnode":
        return {"type": "bnode", "value": term[2:]}
    lex, dt, lang = split_literal(term)
    out = {"type": "literal", "value": lex}
    if lang:
        out["xml:lang"] = lang
    elif dt and dt != XSD_STRING:
        out["datatype"] = dt
    return out


def from_sparql_json(obj: dict[str, str]) -> str:
    """N-Triples text of a SPARQL 1.1 JSON term (also accepts the legacy ``typed-literal``)."""
    kind = obj.get("type")
    value = obj.get("value")
    if value is None:
        raise ValueError(f"SPARQL JSON term without a value: {obj!r}")
    if kind == "uri":
        return iri(value)
    if kind == "bnode":
        return f"_:{value}"
    if kind in ("literal", "typed-literal"):
        return literal(value, datatype=obj.get("datatype"), language=obj.get("xml:lang"))
    raise ValueError(f"unknown SPARQL JSON term type {kind!r} in {obj!r}")


def to_oxigraph(term: str) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    """pyoxigraph term of an N-Triples term (for evaluating SPARQL on stream content)."""
    kind = term_kind(term)
    if kind == "iri":
        return ox.NamedNode(term[1:-1])
    if kind == "bnode":
        return ox.BlankNode(term[2:])
    lex, dt, lang = split_literal(term)
    if lang:
        return ox.Literal(lex, language=lang)
    if dt:
        return ox.Literal(lex, datatype=ox.NamedNode(dt))
    return ox.Literal(lex)
