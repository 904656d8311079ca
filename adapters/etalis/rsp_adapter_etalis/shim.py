"""The ETALIS-direct driver program: JSON lines on stdin/stdout (``rsp_sdk.runtime.subprocess``)
on one side, ``swipl --traditional`` running ``driver.pl`` on the other.

Why a shim: ETALIS only runs on SWI-Prolog in ``--traditional`` mode, where SWI's JSON library
does not load and JPL7 breaks, so the JSON protocol, N-Triples parsing and system-time stamps
live here, and Prolog sees plain Prolog terms:

* ``push``: each packed line becomes ``e(S,P,O,T)`` — IRIs as atoms, numeric literals as Prolog
  numbers (EP-SPARQL FILTERs do arithmetic with ``is``), other literals as ``literal(Lex)``,
  ``literal(lang(L,Lex))`` or ``literal(type(DT,Lex))`` (the terms ETALIS' own EP-SPARQL parser
  builds), blank nodes as ``bnode(Label)``; the whole batch is one ``push([...])`` term;
* results come back one line per derived complex event, tagged with the input event that
  completed it; all results completed by one input event form one result event (one relation:
  ETALIS is event-driven), stamped with CLOCK_MONOTONIC when its line arrived.

Run as ``python -m rsp_adapter_etalis.shim``; the ETALIS folder and swipl come from the
environment (``RSP_ETALIS_EP_SPARQL``, ``RSP_SWIPL``) set by the adapter. Exits at stdin EOF;
swipl, reading from our pipe, exits with it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

# The shim runs on the host (``-m rsp_adapter_etalis.shim``) and in the engine's pinned image
# (``python3 shim.py`` on Debian's python3, without rsp-sdk or its dependencies), so it imports
# only the standard library: the N-Triples literal syntax below is rsp_sdk.model.terms's, and
# tests/test_docker_process.py checks that both agree.
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER_TYPES = frozenset(
    XSD + name
    for name in [
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
    ]
)
XSD_NUMERIC_TYPES = XSD_INTEGER_TYPES | {XSD + "decimal", XSD + "float", XSD + "double"}
_LITERAL = re.compile(
    r'"(?P<lex>(?:[^"\\]|\\.)*)"(?:@(?P<lang>[a-zA-Z]+(?:-[a-zA-Z0-9]+)*)|\^\^<(?P<dt>[^>]*)>)?'
)
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")


def _unescape(m: re.Match[str]) -> str:
    if m.group(1) or m.group(2):
        return chr(int(m.group(1) or m.group(2), 16))
    if m.group(3) in _ESCAPES:
        return _ESCAPES[m.group(3)]
    raise ValueError(f"invalid escape \\{m.group(3)}")


def split_literal(term: str) -> tuple[str, str | None, str | None]:
    """(lexical form, datatype IRI or None, language tag or None) of an N-Triples literal."""
    m = _LITERAL.fullmatch(term)
    if not m:
        raise ValueError(f"not an N-Triples literal: {term!r}")
    lexical = (
        _ESCAPE_RE.sub(_unescape, m.group("lex")) if "\\" in m.group("lex") else m.group("lex")
    )
    return lexical, m.group("dt"), m.group("lang")


DRIVER_PL = Path(__file__).resolve().parent / "driver.pl"
POLICIES = ("recent", "chronological", "unrestricted", "recent_2", "chronological_2")


class DriverError(Exception):
    """An error to report to the caller as the engine's message."""


_NT_TERM = re.compile(r'\s*(<[^>]*>|_:[^\s.]+|"(?:[^"\\]|\\.)*"(?:@[a-zA-Z0-9-]+|\^\^<[^>]*>)?)')


def read_triples(path: str) -> list[tuple[str, str, str]]:
    """The triples of a static-data file as N-Triples terms: with pyoxigraph where it is
    installed (any RDF syntax), else — in the engine image, standard library only — an
    N-Triples reader (the matrix hands static data over as N-Triples; the jtalis driver reads
    it the same way)."""
    try:
        import pyoxigraph
    except ImportError:
        return _read_ntriples(path)
    return [(str(q.subject), str(q.predicate), str(q.object)) for q in pyoxigraph.parse(path=path)]


def _read_ntriples(path: str) -> list[tuple[str, str, str]]:
    out = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            terms, pos = [], 0
            for _ in range(3):
                m = _NT_TERM.match(line, pos)
                if m is None:
                    break
                terms.append(m.group(1))
                pos = m.end()
            if len(terms) != 3 or line[pos:].strip() != ".":
                raise DriverError(
                    f"{path}:{number}: expected an N-Triples line, got {line[:200]!r}"
                )
            out.append((terms[0], terms[1], _lower_lang(terms[2])))
    return out


def _lower_lang(term: str) -> str:
    """Language tags in lower case, as pyoxigraph normalises them (they compare caselessly)."""
    if term.startswith('"') and not term.endswith('"') and "^^<" not in term[term.rfind('"') :]:
        cut = term.rfind('"') + 1
        return term[:cut] + term[cut:].lower()
    return term


def quote_atom(text: str) -> str:
    """``text`` as a quoted Prolog atom (ISO escapes), readable by read_term/2."""
    out = (
        text.replace("\\", "\\\\")
        .replace("'", "\\'")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f"'{out}'"


def prolog_number(lexical: str, datatype: str) -> str | None:
    """Prolog syntax for a numeric literal, or None when the lexical form is not a number."""
    try:
        if datatype in XSD_INTEGER_TYPES:
            return str(int(lexical.strip()))
        value = float(lexical.strip())
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exp = text.split("e")
        text = f"{mantissa}.0e{exp}"
    return text


def prolog_term(term: str) -> str:
    """An N-Triples term as the Prolog term ETALIS' EP-SPARQL queries match against."""
    if term.startswith("<"):
        return quote_atom(term[1:-1])
    if term.startswith("_:"):
        return f"bnode({quote_atom(term[2:])})"
    lexical, datatype, lang = split_literal(term)
    if lang:
        return f"literal(lang({quote_atom(lang)},{quote_atom(lexical)}))"
    if datatype in XSD_NUMERIC_TYPES:
        number = prolog_number(lexical, datatype)
        if number is not None:
            return number
    if datatype and datatype != XSD + "string":
        return f"literal(type({quote_atom(datatype)},{quote_atom(lexical)}))"
    return f"literal({quote_atom(lexical)})"


@dataclass
class Query:
    name: str
    index: int
    variables: list[str]


@dataclass
class Shim:
    swipl: str
    ep_sparql: Path
    proc: subprocess.Popen[bytes] | None = None
    queries: dict[int, Query] = field(default_factory=dict)
    streams: set[str] = field(default_factory=set)
    read: set[str] | None = None  # the streams registered queries read; None: every stream
    results: list[dict[str, Any]] = field(default_factory=list)
    terms: dict[str, str] = field(default_factory=dict)
    stamp: int = 0  # CLOCK_MONOTONIC ns at which the current result group's first line arrived

    # ---- talking to swipl ---------------------------------------------------------------------

    def start(self, workdir: Path, console: bool) -> None:
        self.proc = subprocess.Popen(
            [self.swipl, "--traditional", "-q", str(DRIVER_PL)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # inherited: the engine log
            cwd=workdir,
        )

    def request(self, term: str) -> str:
        """Send one Prolog term, collect result lines, return the OK payload."""
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise DriverError("the engine is not open")
        try:
            proc.stdin.write(term.encode() + b".\n")
            proc.stdin.flush()
        except BrokenPipeError:
            raise DriverError(self._died()) from None
        group: tuple[int, int] | None = None
        rows: dict[int, list[list[str | None]]] = {}
        while True:
            raw = proc.stdout.readline()
            if not raw:
                self._flush(group, rows)
                raise DriverError(self._died())
            line = raw.decode("utf-8").rstrip("\n")
            kind, _, rest = line.partition("\t")
            if kind == "R":
                now = time.monotonic_ns()
                seq, t_app, q, _t1, _t2, *terms = rest.split("\t")
                key = (int(seq), int(float(t_app)))
                if key != group:
                    self._flush(group, rows)
                    group, rows = key, {}
                    self.stamp = now
                rows.setdefault(int(q), []).append([t or None for t in terms])
            elif kind in ("OK", "ERR"):
                self._flush(group, rows)
                if kind == "ERR":
                    raise DriverError(f"ETALIS: {rest}")
                return rest
            else:
                sys.stderr.write(f"[swipl stdout] {line}\n")

    def _flush(
        self, group: tuple[int, int] | None, rows: dict[int, list[list[str | None]]]
    ) -> None:
        if group is None:
            return
        for index, rs in rows.items():
            q = self.queries[index]
            self.results.append(
                {
                    "query": q.name,
                    "t_sys_ns": self.stamp,
                    "t_app_ms": group[1],
                    "vars": q.variables,
                    "rows": rs,
                }
            )

    def _died(self) -> str:
        code = self.proc.wait(timeout=5) if self.proc else None
        return f"swipl exited (code {code}); see the engine log for its messages"

    # ---- verbs ----------------------------------------------------------------------------------

    def open(self, config_json: str, workdir: str) -> None:
        config = json.loads(config_json) if config_json.strip() else {}
        policy = config.get("consumption_policy", "recent")
        if policy not in POLICIES:
            raise DriverError(f"consumption_policy must be one of {', '.join(POLICIES)}")
        self.start(Path(workdir), bool(config.get("engine_console")))
        options = [f"consumption_policy({policy})"]
        if config.get("engine_console"):
            options.append("console(true)")
        self.request(f"open({quote_atom(str(self.ep_sparql))}, [{', '.join(options)}])")

    def load_static(self, graph_iri: str, path: str) -> int:
        triples = []
        for terms in read_triples(path):
            s, p, o = (self._term(x) for x in terms)
            triples.append(f"s({s},{p},{o})")
        return int(self.request(f"static([{','.join(triples)}])"))

    def register_stream(self, iri: str) -> None:
        self.streams.add(iri)

    def register_query(self, name: str, text: str) -> None:
        """``text``: the adapter's rendering — a JSON object with the EP-SPARQL, the projected
        variables and the WITHIN window in ms — or bare EP-SPARQL (variables read from it)."""
        try:
            spec = json.loads(text)
        except ValueError:
            spec = None
        if not isinstance(spec, dict):
            spec = {"ep_sparql": text, "within_ms": 0, "variables": _select_vars(text)}
        ep, within = str(spec["ep_sparql"]), int(spec.get("within_ms") or 0)
        if any(q.name == name for q in self.queries.values()):
            raise DriverError(f"a query named {name} is already registered")
        read = self._reads(name, spec.get("stream"))
        index = len(self.queries) + 1
        self.request(f"register_query({index}, {quote_atom(ep)}, {within})")
        self.queries[index] = Query(name, index, [str(v) for v in spec["variables"]])
        self.read = read

    def _reads(self, name: str, stream: object) -> set[str] | None:
        """The streams fed to ETALIS once query ``name`` (reading ``stream``) is registered.

        ETALIS has one event stream: every query sees every event pushed. A query's window
        reads one stream, so triples of other streams are kept out (they made a UNION branch
        fire on another stream's triples); queries on two different streams cannot share it.
        A bare EP-SPARQL query (no stream named) reads every stream."""
        if not isinstance(stream, str) or not self.queries:
            return {stream} if isinstance(stream, str) else None
        if self.read is None or stream in self.read:
            return self.read
        raise DriverError(
            f"query {name} reads <{stream}>, another query reads <{min(self.read)}>: ETALIS "
            "has one event stream, so queries on different streams cannot run in one engine"
        )

    def push(self, stream: str, packed: str) -> None:
        if stream not in self.streams:
            raise DriverError(f"stream <{stream}> is not registered")
        if self.read is not None and stream not in self.read:
            return  # no query reads it (see _reads)
        events = []
        for number, line in enumerate(packed.splitlines(), 1):
            if not line:
                continue
            parts = line.split(" ", 3)
            try:
                t = int(parts[0])
                s, p, o = (self._term(x) for x in parts[1:])
            except (ValueError, IndexError) as exc:
                raise DriverError(
                    f"packed batch line {number}: expected '<t_app_ms> <s> <p> <o>' ({exc}), "
                    f"got {line[:200]!r}"
                ) from None
            events.append(f"e({s},{p},{o},{t})")
        self.request(f"push([{','.join(events)}])")

    def _term(self, term: str) -> str:
        got = self.terms.get(term)
        if got is None:
            got = prolog_term(term.strip())
            if len(self.terms) < 1_000_000:
                self.terms[term] = got
        return got

    def advance_time(self, t_app_ms: int) -> None:
        """ETALIS derives events as inputs arrive; there is no window to close."""

    def poll(self) -> list[dict[str, Any]]:
        out, self.results = self.results, []
        return out

    def stats(self) -> dict[str, int]:
        payload = self.request("stats")
        return {k: int(v) for k, v in (kv.split("=") for kv in payload.split())}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(DriverError):
                self.request("close")
            self.proc.wait(timeout=10)


def _select_vars(ep_sparql: str) -> list[str]:
    head = ep_sparql.split("{", 1)[0]
    return [w[1:] for w in head.replace("\n", " ").split() if w.startswith(("?", "$"))]


def serve(shim: Shim, stdin: IO[str], stdout: IO[str]) -> None:
    verbs: dict[str, Callable[..., Any]] = {
        "open": shim.open,
        "load_static": shim.load_static,
        "register_stream": shim.register_stream,
        "register_query": shim.register_query,
        "push": shim.push,
        "advance_time": shim.advance_time,
        "poll": shim.poll,
        "stats": shim.stats,
        "close": shim.close,
    }
    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            verb = verbs.get(request["verb"])
            if verb is None:
                raise DriverError(f"unknown verb {request['verb']}")
            result = verb(*request.get("args", []))
            reply: dict[str, Any] = {"id": request["id"], "ok": True, "result": result}
        except DriverError as exc:
            reply = {"id": request["id"], "ok": False, "error": str(exc)}
        except Exception as exc:
            reply = {
                "id": request["id"],
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(),
            }
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()


def main() -> int:
    shim = Shim(
        swipl=os.environ.get("RSP_SWIPL", "swipl"),
        ep_sparql=Path(os.environ["RSP_ETALIS_EP_SPARQL"]),
    )
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    try:
        serve(shim, sys.stdin, sys.stdout)
    finally:
        if shim.proc is not None and shim.proc.poll() is None:
            shim.proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
