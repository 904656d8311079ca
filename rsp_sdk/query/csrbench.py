"""The CSRBench oracle's query form: plain SPARQL plus window size, slide and first t0.

Two spellings are read:

* the original ``.properties`` files (``srb.queryN.booleanquery``, ``.window.size``,
  ``.window.slide``, ``.window.firstt0``, ``.staticdata``), selected as ``FILE#srb.query1``. The
  oracle read them with Apache Commons Configuration, which trims every physical line before
  looking for the continuation backslash; CSRBench's queries rely on that (several lines end in
  a backslash followed by spaces, which ``java.util.Properties`` would *not* continue), so this
  reader trims the same way;
* a small TOML or JSON file::

      sparql = "SELECT ?s WHERE { ?s ?p ?o }"
      window_ms = 10000
      slide_ms = 10000        # default: window_ms
      first_t0_ms = 0         # optional
      r2s = "rstream"         # optional

  or a whole ``QuerySpec`` as JSON (``windows`` instead of ``window_ms``): what the matrix keeps
  under ``RESULTS/queries/`` for each cell, so the query a cell ran can be judged again by hand
  with ``rsp oracle check -q RESULTS/queries/<sha16>.json``.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsp_sdk.errors import InputError, validated
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import DEFAULT_BASE_IRI, QuerySpec, WindowSpec
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI
from rsp_sdk.query.sparql import PositionMap, identity_positions, parse_select

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


@dataclass(frozen=True)
class PropValue:
    """A property value and, per character, the (line, column) it came from in the file."""

    key: str
    value: str
    origin: list[tuple[int, int]]
    line: int


def read_properties(path: Path) -> dict[str, PropValue]:
    """Parse a .properties file as Commons Configuration 1.x does (trimmed continuation lines)."""
    if not path.exists():
        raise InputError("file not found", path=path)
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    out: dict[str, PropValue] = {}
    i = 0
    while i < len(lines):
        raw = lines[i]
        start_line = i + 1
        i += 1
        stripped = raw.strip()
        if not stripped or stripped[0] in "#!":
            continue
        # Gather one logical line with the origin of each character.
        chars: list[tuple[str, int, int]] = []
        current, lineno = raw, start_line
        while True:
            lead = len(current) - len(current.lstrip())
            text = current.strip()
            trailing = len(text) - len(text.rstrip("\\"))
            cont = trailing % 2 == 1
            if cont:
                text = text[:-1]
            chars.extend((c, lineno, lead + k + 1) for k, c in enumerate(text))
            if not cont or i >= len(lines):
                break
            current, lineno = lines[i], i + 1
            i += 1
        key, value = _split(chars)
        k = "".join(c for c, _, _ in key)
        v_chars, origin = _unescape(value)
        out[k] = PropValue(k, v_chars, origin, start_line)
    return out


def _split(
    chars: list[tuple[str, int, int]],
) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    j = 0
    while j < len(chars):
        c = chars[j][0]
        if c == "\\":
            j += 2
            continue
        if c in "=: \t":
            break
        j += 1
    key = chars[:j]
    rest = chars[j:]
    # separator: optional whitespace, at most one '=' or ':', optional whitespace
    k = 0
    while k < len(rest) and rest[k][0] in " \t":
        k += 1
    if k < len(rest) and rest[k][0] in "=:":
        k += 1
    while k < len(rest) and rest[k][0] in " \t":
        k += 1
    return key, rest[k:]


def _unescape(chars: list[tuple[str, int, int]]) -> tuple[str, list[tuple[int, int]]]:
    out: list[str] = []
    origin: list[tuple[int, int]] = []
    j = 0
    while j < len(chars):
        c, line, col = chars[j]
        if c == "\\" and j + 1 < len(chars):
            nxt = chars[j + 1][0]
            if nxt == "u" and j + 5 < len(chars):
                hexdigits = "".join(x for x, _, _ in chars[j + 2 : j + 6])
                try:
                    out.append(chr(int(hexdigits, 16)))
                    origin.append((line, col))
                    j += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, nxt))
            origin.append((line, col))
            j += 2
            continue
        out.append(c)
        origin.append((line, col))
        j += 1
    return "".join(out), origin


def _positions(prop: PropValue, lines: list[str]) -> PositionMap:
    def where(offset: int) -> tuple[int, int, str]:
        if not prop.origin:
            return prop.line, 1, lines[prop.line - 1]
        line, col = prop.origin[max(0, min(offset, len(prop.origin) - 1))]
        return line, col, lines[line - 1] if 0 < line <= len(lines) else ""

    return where


def _int(props: dict[str, PropValue], key: str, path: Path, default: int | None = None) -> int:
    prop = props.get(key)
    if prop is None:
        if default is not None:
            return default
        raise InputError(f"missing property {key}", path=path, expected=f"{key} = <integer ms>")
    try:
        return int(prop.value.strip())
    except ValueError:
        raise InputError(
            f"{key} is not an integer",
            path=path,
            line=prop.line,
            text=prop.value,
            expected="an integer number of milliseconds",
        ) from None


def load_csrbench_properties(path: Path, key: str | None) -> QuerySpec:
    """One query of a CSRBench properties file (``key`` like ``srb.query1``)."""
    props = read_properties(path)
    queries = sorted(k[: -len(".booleanquery")] for k in props if k.endswith(".booleanquery"))
    if key is None:
        if len(queries) != 1:
            raise InputError(
                "the file holds several queries; select one as FILE#KEY",
                path=path,
                expected=" or ".join(f"{path}#{q}" for q in queries) or "a .booleanquery key",
            )
        key = queries[0]
    if key not in queries:
        raise InputError(
            f"no query {key!r} in the file",
            path=path,
            expected="one of " + ", ".join(queries),
        )
    prop = props[f"{key}.booleanquery"]
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    parsed = parse_select(prop.value, path=path, positions=_positions(prop, lines))
    size = _int(props, f"{key}.window.size", path)
    slide = _int(props, f"{key}.window.slide", path, default=size)
    first = _int(props, f"{key}.window.firstt0", path, default=0)
    if size <= 0 or slide <= 0:
        raise InputError("window size and slide must be positive", path=path, text=str(size))
    window = WindowSpec(
        name=DEFAULT_STREAM_IRI, stream=DEFAULT_STREAM_IRI, range_ms=size, step_ms=slide
    )
    output = props.get(f"{key}.output")
    return QuerySpec(
        name=key,
        r2s=R2S(output.value.strip().lower()) if output else R2S.RSTREAM,
        text=prop.value,
        sparql=prop.value,
        variables=parsed.variables,
        windows=[window],
        window_graphs=False,
        first_t0_ms=first,
        source=f"{path}#{key}",
        base_iri=DEFAULT_BASE_IRI,
        warnings=[f"pyoxigraph rejects the query: {parsed.oxigraph_error}"]
        if parsed.oxigraph_error
        else [],
    )


def load_query_file(path: Path) -> QuerySpec:
    """The TOML/JSON spelling: ``sparql``, ``window_ms``, ``slide_ms``, ``first_t0_ms``, ``r2s``."""
    raw = path.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(raw) if path.suffix.lower() == ".json" else tomllib.loads(raw)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(
            f"cannot parse the query file: {exc}", path=path, line=getattr(exc, "lineno", None)
        ) from None
    if not isinstance(data, dict):
        raise InputError("the query file must hold one table/object", path=path)
    if "windows" in data and "window_ms" not in data:
        return _query_spec(data, path)
    sparql = data.get("sparql")
    if not isinstance(sparql, str):
        raise InputError("missing the 'sparql' string", path=path, expected='sparql = "SELECT …"')
    window = data.get("window_ms")
    if not isinstance(window, int) or window <= 0:
        raise InputError(
            "missing or bad 'window_ms'", path=path, text=str(window), expected="window_ms = 10000"
        )
    slide = data.get("slide_ms", window)
    if not isinstance(slide, int) or slide <= 0:
        raise InputError("bad 'slide_ms'", path=path, text=str(slide), expected="slide_ms = 5000")
    first = data.get("first_t0_ms")
    if first is not None and not isinstance(first, int):
        raise InputError("bad 'first_t0_ms'", path=path, text=str(first), expected="an integer")
    # Report SPARQL errors at the file line: find where the string starts in the file.
    first_line = sparql.split("\n", 1)[0].strip()
    at = raw.find(first_line) if first_line else -1
    line_shift = raw.count("\n", 0, at) if at >= 0 else 0
    inner = identity_positions(sparql)
    file_lines = raw.split("\n")

    def where(offset: int) -> tuple[int, int, str]:
        line, col, _ = inner(offset)
        fl = line + line_shift
        return fl, col, file_lines[fl - 1] if 0 < fl <= len(file_lines) else ""

    parsed = parse_select(sparql, path=path, positions=where)
    stream = str(data.get("stream", DEFAULT_STREAM_IRI))
    try:
        r2s = R2S(str(data.get("r2s", "rstream")).lower())
    except ValueError:
        raise InputError(
            "bad 'r2s'", path=path, text=str(data.get("r2s")), expected="rstream, istream, dstream"
        ) from None
    return QuerySpec(
        name=str(data.get("name", path.stem)),
        r2s=r2s,
        text=sparql,
        sparql=sparql,
        variables=parsed.variables,
        windows=[WindowSpec(name=stream, stream=stream, range_ms=window, step_ms=slide)],
        static_graphs=[str(g) for g in data.get("static_graphs", [])],
        window_graphs=False,
        first_t0_ms=first,
        source=str(path),
        warnings=[f"pyoxigraph rejects the query: {parsed.oxigraph_error}"]
        if parsed.oxigraph_error
        else [],
    )


def _query_spec(data: dict[str, Any], path: Path) -> QuerySpec:
    """A dumped ``QuerySpec`` (the matrix's ``queries/<sha16>.json``), read back as it was: its
    ``sparql`` is already the oracle's body (REGISTER and FROM clauses blanked), so re-parsing
    it as the small TOML form would lose the windows, prefixes and template parameters."""
    spec = validated(
        QuerySpec,
        data,
        path=path,
        what="query",
        expected="the fields of rsp_sdk.model.query.QuerySpec (a matrix queries/*.json)",
    )
    if not spec.windows:
        raise InputError("the query has no window", path=path, expected="a non-empty 'windows'")
    return spec
