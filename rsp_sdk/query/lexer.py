"""A small SPARQL-aware scanner: finds RSP-QL clauses without being fooled by strings or comments.

RSP-QL adds a few clauses around a SPARQL query (REGISTER, FROM NAMED WINDOW … ON … [RANGE …],
WINDOW blocks). The scanner yields tokens with their offsets, skipping comments and treating
IRIs and string literals as single tokens, so a ``WINDOW`` inside a string or an IRI never
counts. Everything else about SPARQL is left to a real SPARQL parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<string>\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''
                |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<var>[?$][A-Za-z0-9_\u00B7-\uFFFF]+)
  | (?P<param>\$\{[^}]*\})
  | (?P<pname>(?:[A-Za-z\u00C0-\uFFFF][\w.\-\u00B7-\uFFFF]*)?:
               (?:[\w\-:%.\u00B7-\uFFFF]*[\w\-:%\u00B7-\uFFFF])?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_\-]*)
  | (?P<number>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<punct>\^\^|&&|\|\||!=|<=|>=|[{}()\[\];,.*/+\-=<>!|^@a-z])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words


def tokens(text: str) -> Iterator[Token]:
    """Significant tokens (no whitespace, no comments) with their character offsets."""
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the 'other' alternative matches any character
            break
        kind = m.lastgroup or "other"
        if kind not in ("ws", "comment"):
            yield Token(kind, m.group(), pos)
        pos = m.end()
