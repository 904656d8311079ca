"""Strict N-Triples term syntax, checked once per distinct term.

Importing timestamped N-Triples must reach hundreds of thousands of triples per second in pure
Python. Splitting a line is cheap; validating a term with the grammar's regular expressions is not,
but terms repeat (predicates, subjects, sensor IRIs), so each distinct term is checked once and
remembered. The patterns are the N-Triples 1.1 grammar (IRIREF, BLANK_NODE_LABEL,
STRING_LITERAL_QUOTE, LANGTAG), with possessive quantifiers so a bad term fails fast.
"""

from __future__ import annotations

import re

from rsp_sdk.model.terms import iri, literal, split_literal, unescape

_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
IRIREF = rf"<(?:[^\x00-\x20<>\"{{}}|^`\\]++|{_UCHAR})*+>"
_PN = r"A-Za-z0-9_\u00C0-\uFFFF"
BNODE = rf"_:[{_PN}](?:[{_PN}.\-\u00B7]*[{_PN}\-\u00B7])?"
LITERAL = (
    rf"\"(?:[^\"\\\n\r]++|\\[tbnrf\"'\\]|{_UCHAR})*+\""
    rf"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^{IRIREF})?"
)
SUBJECT_RE = re.compile(f"{IRIREF}|{BNODE}")
PREDICATE_RE = re.compile(IRIREF)
OBJECT_RE = re.compile(f"{IRIREF}|{BNODE}|{LITERAL}")
# YABench writes typed literals unquoted, with or without angle brackets: 92^^http://…#float
_YABENCH_LITERAL = re.compile(r"([^\s\"<>]+)\^\^<?([^\s<>]+?)>?")


class TermChecker:
    """Validates and canonicalises terms, caching the answer for every distinct term text."""

    def __init__(self) -> None:
        self.subjects: dict[str, str] = {}
        self.predicates: dict[str, str] = {}
        self.objects: dict[str, str | None] = {}

    def subject(self, text: str) -> str | None:
        hit = self.subjects.get(text)
        if hit is None:
            if not SUBJECT_RE.fullmatch(text):
                return None
            hit = self.subjects[text] = _canonical(text)
        return hit

    def predicate(self, text: str) -> str | None:
        hit = self.predicates.get(text)
        if hit is None:
            if not PREDICATE_RE.fullmatch(text):
                return None
            hit = self.predicates[text] = _canonical(text)
        return hit

    def object(self, text: str) -> str | None:
        if text in self.objects:
            return self.objects[text]
        out: str | None
        if OBJECT_RE.fullmatch(text):
            out = _canonical(text)
        else:
            m = _YABENCH_LITERAL.fullmatch(text)
            out = literal(m.group(1), datatype=m.group(2)) if m else None
        self.objects[text] = out
        return out


def _canonical(term: str) -> str:
    """Canonical N-Triples text: escapes resolved, xsd:string implicit, language tag lower-case.

    Only literals and escaped IRIs can have more than one spelling; the rest pass through.
    """
    if term[0] == '"':
        lex, dt, lang = split_literal(term)
        return literal(lex, datatype=dt, language=lang)
    if term[0] == "<" and "\\" in term:
        return iri(unescape(term[1:-1]))
    return term
