"""N-Triples with a timestamp per line, as YABench writes them (``.n3t``).

Each line is ``<s> <p> <o> "ms" .`` — an N-Triples triple whose fourth element is the application
time in milliseconds. YABench's own files drop the final dot and write typed literals unquoted
(``92^^http://www.w3.org/2001/XMLSchema#float``); both quirks are accepted and the literal is
stored in proper N-Triples form. Blank lines and ``#`` comments are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI
from rsp_sdk.streams.io import sort_by_time, stream_table
from rsp_sdk.streams.ntsyntax import TermChecker

_EXPECTED = '<subject> <predicate> <object> "timestamp-ms" .'


def read_n3t(path: Path | str, *, stream: str = DEFAULT_STREAM_IRI, sort: bool = False) -> pa.Table:
    """Parse a timestamped N-Triples file into a stream table.

    Timestamps must not decrease unless ``sort`` is set, in which case rows are stably sorted.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError("file is not valid UTF-8", path=path, line=bad_line) from None

    check = TermChecker()
    subj: list[str] = []
    pred: list[str] = []
    obj: list[str] = []
    times: list[int] = []
    last = -(2**63)
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line[0] == "#":
            continue
        if line[-1] == ".":
            line = line[:-1].rstrip()
        head, _, ts = line.rpartition(" ")
        s_txt, _, rest = head.partition(" ")
        p_txt, _, o_txt = rest.lstrip().partition(" ")
        o_txt = o_txt.strip()
        t = _timestamp(ts)
        if t is None:
            if not o_txt or check.object(f"{o_txt} {ts}") is not None:
                _fail(path, lineno, raw, "missing timestamp after the triple")
            _fail(path, lineno, raw, f"timestamp {ts!r} is not a number of milliseconds")
        if t < 0:
            raise InputError(
                f"timestamp {t} is negative",
                path=path,
                line=lineno,
                text=raw,
                expected="milliseconds of application time, 0 or more",
            )
        s = check.subject(s_txt)
        if s is None:
            _fail(path, lineno, raw, f"subject {s_txt!r} is not an IRI or blank node")
        p = check.predicate(p_txt)
        if p is None:
            _fail(path, lineno, raw, f"predicate {p_txt!r} is not an IRI")
        o = check.object(o_txt)
        if o is None:
            _fail(path, lineno, raw, f"object {o_txt!r} is not an IRI, blank node or literal")
        if t < last and not sort:
            raise InputError(
                f"timestamp {t} is smaller than the previous one ({last})",
                path=path,
                line=lineno,
                text=raw,
                expected="non-decreasing timestamps (pass --sort to accept unsorted input)",
            )
        last = t
        subj.append(s)
        pred.append(p)
        obj.append(o)
        times.append(t)

    table = stream_table(stream, times, subj, pred, obj)
    return sort_by_time(table) if sort else table


def _timestamp(tok: str) -> int | None:
    if len(tok) >= 2 and tok[0] == '"':
        end = tok.find('"', 1)
        if end < 0 or (end != len(tok) - 1 and not tok[end + 1 :].startswith("^^")):
            return None
        tok = tok[1:end]
    if not tok or not (tok.isdigit() or (tok[0] == "-" and tok[1:].isdigit())):
        return None
    return int(tok)


def _fail(path: Path, lineno: int, raw: str, message: str) -> NoReturn:
    raise InputError(message, path=path, line=lineno, text=raw, expected=_EXPECTED)
