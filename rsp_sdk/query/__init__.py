"""Continuous queries in: RSP-QL, the CSRBench oracle's form, YABench test folders.

``load_query`` picks the reader from the argument:

* ``FILE.properties#srb.query1`` (or a properties file holding one query): CSRBench;
* ``FILE.toml`` / ``FILE.json``: plain SPARQL with ``window_ms``, ``slide_ms``, ``first_t0_ms``;
  or a whole ``QuerySpec`` as JSON (the matrix's ``RESULTS/queries/<sha16>.json``);
* a folder with ``oracle.query`` and ``config.json``: a YABench test;
* anything else: an RSP-QL text file (``${VAR}`` parameters from ``params``);
* a string holding the RSP-QL query itself (it has a newline or a brace).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rsp_sdk.errors import InputError
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.query.csrbench import load_csrbench_properties, load_query_file
from rsp_sdk.query.rspql import parse_rspql
from rsp_sdk.query.yabench import load_yabench_folder

__all__ = ["load_query", "parse_rspql"]


def load_query(
    source: str | Path | QuerySpec, params: Mapping[str, str] | None = None
) -> QuerySpec:
    """Read a continuous query from any of the supported forms (see the module docstring)."""
    if isinstance(source, QuerySpec):
        return source
    text = str(source)
    if isinstance(source, str) and ("\n" in text or "{" in text) and not _is_file(text):
        return parse_rspql(text, params=params)  # the query itself, not a file name
    key: str | None = None
    path = Path(text)
    if not path.exists() and "#" in text:
        head, _, key = text.rpartition("#")
        path = Path(head)
    if not path.exists():
        raise InputError("query file not found", path=path, expected="an RSP-QL/SPARQL query file")
    if path.is_dir():
        return load_yabench_folder(path, params)
    suffix = path.suffix.lower()
    if suffix == ".properties":
        return load_csrbench_properties(path, key)
    if key is not None:
        raise InputError(
            f"a '#{key}' selector only applies to .properties files", path=path, text=text
        )
    if suffix in (".toml", ".json"):
        return load_query_file(path)
    try:
        body = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=path) from None
    return parse_rspql(body, params=params, path=path)


def _is_file(text: str) -> bool:
    try:
        return Path(text).exists()
    except OSError:  # e.g. a name too long to be a path
        return False
