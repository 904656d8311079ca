"""The query options every command that takes a query shares: ``-q``, ``--param``, ``--static``.

``rsp run``, ``rsp oracle expected`` and ``rsp oracle check`` read a query the same way (one
loader: RSP-QL, ``FILE.properties#srb.queryN``, TOML/JSON, a YABench folder), fill its template
parameters from the same ``--param NAME=VALUE`` and take the same ``--static`` files, so a query
that the oracle judges is exactly the query the engine ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rsp_sdk.errors import InputError

QUERY_HELP = "RSP-QL file, CSRBench FILE.properties#srb.queryN, TOML/JSON, YABench folder"

QueryOpt = Annotated[str, typer.Option("--query", "-q", help=QUERY_HELP)]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", help="query template parameter NAME=VALUE (repeatable)"),
]
StaticOpt = Annotated[
    list[Path] | None,
    typer.Option("--static", help="static data: RDF file or static Parquet (repeatable)"),
]


def parse_params(items: list[str] | None) -> dict[str, str]:
    """``--param NAME=VALUE`` items → a mapping (a bad item is exit 2, naming it)."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("bad --param", text=item, expected="NAME=VALUE")
        out[key.strip()] = value
    return out


def check_static(paths: list[Path] | None) -> list[Path]:
    """Every ``--static`` file exists and parses, checked before Spark or an engine starts."""
    from rsp_sdk.streams.io import read_static

    found = list(paths or [])
    for path in found:
        if not path.is_file():
            raise InputError(
                "static data file not found",
                path=path,
                expected="an RDF file or a static Parquet file (--static)",
            )
        read_static(path)
    return found
