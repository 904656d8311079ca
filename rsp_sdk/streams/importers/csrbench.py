"""CSRBench input: a folder of Turtle files, one graph per timestamp.

File ``data_XX.ttl`` holds the graph of application time XX × interval ms (CSRBench: 34 files,
interval 1000 ms). Files are read in numeric order of XX; a folder with no such file, or a file
name that does not follow the pattern, is an error naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from rsp_sdk.errors import InputError
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI
from rsp_sdk.streams.importers.rdf import BlankNodeLabels, parse_quads, term_text
from rsp_sdk.streams.io import stream_table

_NAME = re.compile(r"data_(\d+)\.ttl")


def csrbench_files(folder: Path) -> list[tuple[int, Path]]:
    """(index, path) of the ``data_XX.ttl`` files of a folder, in numeric order."""
    if not folder.is_dir():
        raise InputError(
            "not a folder", path=folder, expected="a folder of data_XX.ttl files (CSRBench layout)"
        )
    found = []
    for f in folder.iterdir():
        m = _NAME.fullmatch(f.name)
        if m:
            found.append((int(m.group(1)), f))
        elif f.suffix == ".ttl":
            raise InputError(
                f"unexpected Turtle file name {f.name!r}",
                path=f,
                expected="data_XX.ttl with XX the timestamp index",
            )
    if not found:
        raise InputError("no data_XX.ttl file in the folder", path=folder)
    return sorted(found)


def read_csrbench_folder(
    folder: Path | str, *, interval_ms: int, stream: str = DEFAULT_STREAM_IRI
) -> pa.Table:
    folder = Path(folder)
    times: list[int] = []
    s: list[str] = []
    p: list[str] = []
    o: list[str] = []
    for index, path in csrbench_files(folder):
        bnodes = BlankNodeLabels(prefix=f"t{index}")
        t = index * interval_ms
        for q in parse_quads(path, "turtle"):
            s.append(term_text(q.subject, bnodes))
            p.append(str(q.predicate))
            o.append(term_text(q.object, bnodes))
            times.append(t)
    return stream_table(stream, times, s, p, o)
