"""Micro-streams for functional tests: individuals detected in rooms.

BeRSys-style functional tests (Dell'Aglio et al. 2013) need tiny streams whose expected output a
person can derive by hand. They are written compactly, one instant per line or ``;``-separated::

    # time_ms: individual@room …
    0:    m1@r1 m2@r1
    1000: m1@r2
    2500: m3@r1

Each ``mi@rj`` becomes ``<ex:mi> <ex:detectedAt> <ex:rj>`` at that time (``ex:`` is
``http://example.org/`` unless another namespace is given), in the order written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI, StreamMeta
from rsp_sdk.streams.io import stream_table

EX = "http://example.org/"
_ENTRY = re.compile(r"\s*(-?\d+)\s*:(.*)")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


class RoomsParams(BaseModel):
    model_config = ConfigDict(frozen=True)

    description: str = Field(description="the compact text (see module docstring)")
    namespace: str = EX
    predicate: str = "detectedAt"
    stream: str = DEFAULT_STREAM_IRI


def parse_rooms(text: str, *, source: Path | str = "<description>") -> list[tuple[int, str, str]]:
    """(time, individual, room) triples of a description, in the order written."""
    out: list[tuple[int, str, str]] = []
    last: int | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        for part in line.split("#", 1)[0].split(";"):
            if not part.strip():
                continue
            m = _ENTRY.fullmatch(part)
            if not m:
                raise InputError(
                    "cannot read this entry",
                    path=source,
                    line=lineno,
                    text=part,
                    expected="'TIME_MS: individual@room …'",
                )
            t = int(m.group(1))
            if last is not None and t < last:
                raise InputError(
                    f"time {t} comes after {last}",
                    path=source,
                    line=lineno,
                    text=part,
                    expected="non-decreasing times",
                )
            last = t
            for det in m.group(2).split():
                who, at, where = det.partition("@")
                if not at or not _NAME.fullmatch(who) or not _NAME.fullmatch(where):
                    raise InputError(
                        f"bad detection {det!r}",
                        path=source,
                        line=lineno,
                        text=part,
                        expected="individual@room, e.g. m1@r2",
                    )
                out.append((t, who, where))
    if not out:
        raise InputError(
            "the description has no detection",
            path=source,
            expected="at least one 'TIME_MS: individual@room'",
        )
    return out


def generate_rooms(
    p: RoomsParams, *, source: Path | str = "<description>"
) -> tuple[pa.Table, StreamMeta]:
    rows = parse_rooms(p.description, source=source)
    ns = p.namespace
    table = stream_table(
        p.stream,
        [t for t, _, _ in rows],
        [f"<{ns}{who}>" for _, who, _ in rows],
        [f"<{ns}{p.predicate}>"] * len(rows),
        [f"<{ns}{where}>" for _, _, where in rows],
    )
    return table, StreamMeta(
        producer="generate:rooms", parameters=p.model_dump(), streams=[p.stream]
    )
