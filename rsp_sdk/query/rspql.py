"""RSP-QL (and C-SPARQL / CQELS window syntax) → ``QuerySpec``.

Accepted::

    PREFIX ex: <http://example.org/>              # PREFIX/BASE before REGISTER (or after it)
    REGISTER RSTREAM|ISTREAM|DSTREAM <name> AS    # optional; C-SPARQL's REGISTER QUERY name AS
    SELECT …
    FROM <static graph>                           # static data (default graph)
    FROM NAMED WINDOW <w> ON ex:stream [RANGE PT10S STEP PT5S]
    FROM STREAM <s> [RANGE 10s STEP 5s]           # C-SPARQL
    WHERE { … WINDOW <w> { … } … }                # CQELS: STREAM <s> [RANGE 5s SLIDE 5s] { … }

The SPARQL the oracle evaluates is the text with the RSP-QL clauses *blanked* (replaced by spaces,
newlines kept) and each ``WINDOW <w> {`` turned into ``GRAPH  <w> {`` (same width), so positions
in it are positions in what the user wrote; rdflib and pyoxigraph then parse it for real.
Durations are ISO-8601 (PT10S, PT0.5S, PT1M) or the C-SPARQL/YABench shorthand (10s, 1m, 500ms).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urljoin

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import DEFAULT_BASE_IRI, QuerySpec, WindowSpec
from rsp_sdk.query.durations import DurationError, parse_duration
from rsp_sdk.query.lexer import Token, tokens
from rsp_sdk.query.sparql import PositionMap, parse_select
from rsp_sdk.query.template import Substituted, line_col, substitute

_WINDOW_DEF = re.compile(
    r"\[\s*RANGE\s+(?P<range>[^\s\]]+)(?:\s+(?:STEP|SLIDE)\s+(?P<step>[^\s\]]+))?\s*\]",
    re.IGNORECASE,
)
_R2S = {"RSTREAM": R2S.RSTREAM, "ISTREAM": R2S.ISTREAM, "DSTREAM": R2S.DSTREAM, "QUERY": None}


class _Parser:
    def __init__(self, sub: Substituted, path: Path | str | None) -> None:
        self.sub = sub
        self.text = sub.text
        self.path = path
        self.toks = list(tokens(self.text))
        self.i = 0
        self.prefixes: dict[str, str] = {}
        self.base: str | None = None
        self.blank: list[tuple[int, int]] = []
        self.graph_at: list[int] = []  # offsets of WINDOW/STREAM keywords to turn into GRAPH
        self.windows: list[WindowSpec] = []
        self.static: list[str] = []
        self.name: str | None = None
        self.r2s = R2S.RSTREAM
        self.blank_to = -1

    # -- positions and errors ---------------------------------------------------------------
    def where(self, offset: int) -> tuple[int, int, str]:
        orig = self.sub.original_offset(offset)
        line, col = line_col(self.sub.original, orig)
        lines = self.sub.original.splitlines()
        return line, col, lines[line - 1] if 0 < line <= len(lines) else ""

    def error(self, message: str, tok: Token | int | None, expected: str) -> InputError:
        offset = len(self.text) if tok is None else tok if isinstance(tok, int) else tok.start
        line, col, text = self.where(offset)
        return InputError(
            message, path=self.path, line=line, column=col, text=text, expected=expected
        )

    # -- token helpers ------------------------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self, expected: str) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error("the query ends too early", None, expected)
        self.i += 1
        return tok

    def expect_word(self, *words: str) -> Token:
        tok = self.next(" or ".join(words))
        if not tok.is_word(*words):
            raise self.error(f"unexpected {tok.text!r}", tok, " or ".join(words))
        return tok

    def iri_of(self, tok: Token, what: str) -> str:
        if tok.kind == "iri":
            value = tok.text[1:-1]
            if not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", value):
                value = urljoin(self.base or DEFAULT_BASE_IRI, value)
            return value
        if tok.kind == "pname":
            prefix, _, local = tok.text.partition(":")
            if prefix not in self.prefixes:
                raise self.error(
                    f"undeclared prefix {prefix + ':'!r}", tok, "a PREFIX declaration for it"
                )
            return self.prefixes[prefix] + local
        raise self.error(f"unexpected {tok.text!r}", tok, f"an IRI or prefixed name ({what})")

    def window_def(self, tok: Token, name: str, stream: str) -> WindowSpec:
        """Parse ``[RANGE d STEP d]`` starting at token ``tok`` (the '[')."""
        m = _WINDOW_DEF.match(self.text, tok.start)
        if not m:
            raise self.error(
                "cannot read the window definition",
                tok,
                "[RANGE <duration> STEP <duration>], e.g. [RANGE PT10S STEP PT5S]",
            )
        try:
            range_ms = parse_duration(m.group("range"))
            step_ms = parse_duration(m.group("step")) if m.group("step") else range_ms
        except DurationError as exc:
            raise self.error(
                str(exc), m.start("range"), "a time-based window duration: PT10S, PT0.5S, 10s"
            ) from None
        while (t := self.peek()) is not None and t.start < m.end():
            self.i += 1
        self.blank_to = m.end()
        return WindowSpec(name=name, stream=stream, range_ms=range_ms, step_ms=step_ms)

    # -- the grammar --------------------------------------------------------------------------
    def parse(self) -> None:
        while (tok := self.peek()) is not None and not tok.is_word("SELECT"):
            if tok.is_word("PREFIX"):
                self.i += 1
                pname = self.next("a prefix name such as ex:")
                if pname.kind != "pname" or not pname.text.endswith(":"):
                    raise self.error(f"unexpected {pname.text!r}", pname, "a prefix name (ex:)")
                iri_tok = self.next("<IRI>")
                self.prefixes[pname.text[:-1]] = self.iri_of(iri_tok, "prefix IRI")
            elif tok.is_word("BASE"):
                self.i += 1
                self.base = self.iri_of(self.next("<IRI>"), "base IRI")
            elif tok.is_word("REGISTER"):
                self.register()
            else:
                raise self.error(
                    f"unexpected {tok.text!r}", tok, "PREFIX, BASE, REGISTER … AS or SELECT"
                )
        if self.peek() is None:
            raise self.error("no SELECT in the query", None, "SELECT")
        self.i += 1  # SELECT
        self.dataset_clauses()
        self.body()

    def register(self) -> None:
        start = self.next("REGISTER")
        kind = self.next("RSTREAM, ISTREAM, DSTREAM or QUERY")
        if kind.kind != "word" or kind.text.upper() not in _R2S:
            raise self.error(f"unexpected {kind.text!r}", kind, "RSTREAM, ISTREAM or DSTREAM")
        r2s = _R2S[kind.text.upper()]
        if r2s is not None:
            self.r2s = r2s
        name = self.next("the query name")
        if name.kind == "iri":
            self.name = name.text[1:-1]  # as written: names the query in result tables
        elif name.kind == "pname":
            self.name = self.iri_of(name, "query name")
        elif name.kind == "word":
            self.name = name.text
        else:
            raise self.error(f"unexpected {name.text!r}", name, "the query name")
        end = self.expect_word("AS")
        self.blank.append((start.start, end.end))

    def dataset_clauses(self) -> None:
        """Scan the SELECT clause up to the WHERE group, consuming FROM clauses."""
        depth = 0
        while (tok := self.peek()) is not None:
            if tok.text == "(":
                depth += 1
            elif tok.text == ")":
                depth -= 1
            elif tok.text == "{" and depth == 0:
                return
            elif tok.is_word("FROM") and depth == 0:
                self.from_clause()
                continue
            self.i += 1
        raise self.error("the query has no WHERE { … } group", None, "WHERE { … }")

    def from_clause(self) -> None:
        start = self.next("FROM")
        nxt = self.next("NAMED, STREAM or an IRI")
        self.blank_to = -1
        if nxt.is_word("NAMED"):
            after = self.next("WINDOW or an IRI")
            if after.is_word("WINDOW"):
                name = self.iri_of(self.next("the window name"), "window name")
                self.expect_word("ON")
                stream = self.iri_of(self.next("the stream IRI"), "stream")
                bracket = self.peek()
                if bracket is None or bracket.text != "[":
                    raise self.error(
                        "a time-based window needs a definition",
                        bracket,
                        "[RANGE <duration> STEP <duration>] after the stream",
                    )
                self.windows.append(self.window_def(bracket, name, stream))
            else:
                self.static.append(self.iri_of(after, "named graph"))
                self.blank_to = after.end
        elif nxt.is_word("STREAM"):
            stream = self.iri_of(self.next("the stream IRI"), "stream")
            bracket = self.peek()
            if bracket is None or bracket.text != "[":
                raise self.error("a stream needs a window", bracket, "[RANGE 10s STEP 10s]")
            self.windows.append(self.window_def(bracket, stream, stream))
        else:
            self.static.append(self.iri_of(nxt, "static graph"))
            self.blank_to = nxt.end
        self.blank.append((start.start, self.blank_to))

    def body(self) -> None:
        """Rewrite WINDOW <w> { and CQELS's STREAM <s> [RANGE …] { blocks into GRAPH blocks."""
        names = {w.name for w in self.windows}
        while (tok := self.peek()) is not None:
            if tok.is_word("WINDOW"):
                name_tok = self.peek(1)
                if name_tok is None or name_tok.kind not in ("iri", "pname"):
                    raise self.error("WINDOW needs a window name", name_tok, "WINDOW <w> { … }")
                name = self.iri_of(name_tok, "window name")
                if name not in names:
                    raise self.error(
                        f"window <{name}> is not declared",
                        name_tok,
                        "a FROM NAMED WINDOW <w> ON <stream> [RANGE … STEP …] clause for it",
                    )
                self.graph_at.append(tok.start)
                self.i += 2
            elif tok.is_word("STREAM") and (b := self.peek(2)) is not None and b.text == "[":
                stream_tok = self.toks[self.i + 1]
                stream = self.iri_of(stream_tok, "stream")
                self.graph_at.append(tok.start)
                self.i += 2
                self.blank_to = -1
                self.windows.append(self.window_def(b, stream, stream))
                names.add(stream)
                self.blank.append((b.start, self.blank_to))
            else:
                self.i += 1

    def sparql(self) -> str:
        chars = list(self.text)
        for start, end in self.blank:
            for k in range(start, end):
                if chars[k] != "\n":
                    chars[k] = " "
        for at in self.graph_at:  # WINDOW and STREAM are both six characters wide
            chars[at : at + 6] = list("GRAPH ")
        return "".join(chars)


def parse_rspql(
    text: str,
    *,
    params: Mapping[str, str] | None = None,
    path: Path | str | None = None,
    name: str | None = None,
) -> QuerySpec:
    """Parse an RSP-QL query (``${VAR}`` parameters substituted first) into a QuerySpec."""
    sub = substitute(text, params or {}, path=path)
    p = _Parser(sub, path)
    p.parse()
    if not p.windows:
        raise p.error(
            "the query declares no window",
            None,
            "FROM NAMED WINDOW <w> ON <stream> [RANGE … STEP …]",
        )
    steps = {w.step_ms for w in p.windows}
    if len(steps) > 1:
        raise InputError(
            "all windows of one query must share the STEP",
            path=path,
            text=", ".join(f"<{w.name}> STEP {w.step_ms} ms" for w in p.windows),
            expected="one STEP (reports of several windows happen at common instants)",
        )
    sparql = p.sparql()
    positions: PositionMap = p.where
    base = p.base or DEFAULT_BASE_IRI
    parsed = parse_select(sparql, path=path, positions=positions, base_iri=base)
    qname = name or p.name or (Path(path).stem if path else "query")
    return QuerySpec(
        name=qname,
        r2s=p.r2s,
        text=sub.text,
        sparql=sparql,
        prefixes=p.prefixes,
        variables=parsed.variables,
        windows=p.windows,
        static_graphs=p.static,
        parameters=sub.used,
        window_graphs=bool(p.graph_at),
        source=str(path) if path else None,
        base_iri=base,
        warnings=[f"pyoxigraph rejects the query: {parsed.oxigraph_error}"]
        if parsed.oxigraph_error
        else [],
    )
