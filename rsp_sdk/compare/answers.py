"""Engine outputs into RESULT_SCHEMA tables: CSRBench answer JSON and our run directories.

Two sources of engine output exist. The CSRBench answer files (2013: C-SPARQL, CQELS,
SPARQLstream on Q1–Q7) are JSON — ``{"relations": [{"head": {"vars": […]}, "timestamp": t,
"results": {"bindings": [{"timestamp": t, "binding": {var: term}}]}}]}`` with SPARQL JSON terms,
some written with the legacy ``typed-literal`` type; the published oracle reads the first
top-level member whatever its name (its own test file calls it ``results``), so do we. Our own
runs write a run directory whose ``outputs.parquet`` is already in RESULT_SCHEMA — either one
Parquet file or a directory of part files flushed while the run went on; ``pyarrow.dataset``
reads both as one table.

Every binding is normalised on the way in (terms through their N-Triples form back to SPARQL
JSON, sorted keys), so equal terms written differently by different tools become equal strings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rsp_sdk.compare.vocab import TimestampClock as TimestampClock
from rsp_sdk.errors import InputError
from rsp_sdk.model.results import RESULT_SCHEMA, binding_to_json
from rsp_sdk.model.terms import from_sparql_json, to_sparql_json

OUTPUTS_FILE = "outputs.parquet"
PUSHED_FILE = "pushed.parquet"


class _Head(BaseModel):
    model_config = ConfigDict(extra="allow")
    vars: list[str]


class _Element(BaseModel):
    model_config = ConfigDict(extra="allow")
    timestamp: int | None = None
    binding: dict[str, dict[str, str] | None]


class _Results(BaseModel):
    model_config = ConfigDict(extra="allow")
    bindings: list[_Element]


class _Relation(BaseModel):
    model_config = ConfigDict(extra="allow")
    head: _Head
    timestamp: int
    results: _Results


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    relations: list[_Relation] = Field(min_length=0)


def _json_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _normalise_term(term: dict[str, str]) -> dict[str, str]:
    return to_sparql_json(from_sparql_json(term))


def read_csrbench_answer(
    path: Path | str,
    *,
    query: str | None = None,
    clock: TimestampClock = TimestampClock.APP,
) -> pa.Table:
    """Read a CSRBench answer JSON file into a RESULT_SCHEMA table.

    One relation per JSON relation, in file order (``seq`` = position); an empty relation is one
    row with a null binding. All rows of a relation carry the relation's ``timestamp`` on the
    chosen clock (ms; ``sys`` stores it as ns in ``t_sys_ns``). ``query`` defaults to the file
    name without extension.
    """
    path = Path(path)
    name = query if query is not None else path.stem
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        lines = exc.doc.splitlines()
        # a file cut after a newline fails past its last line: there is no line to quote
        at_end = exc.pos >= len(exc.doc.rstrip())
        raise InputError(
            f"not valid JSON: {exc.msg}" + (" (the file ends early: truncated?)" if at_end else ""),
            path=path,
            line=exc.lineno,
            column=exc.colno,
            text=lines[exc.lineno - 1] if exc.lineno <= len(lines) else None,
            expected="a CSRBench answer JSON document",
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read answer file: {exc}", path=path) from exc
    if not isinstance(raw, dict) or len(raw) != 1:
        raise InputError(
            "unexpected top-level structure",
            path=path,
            text=json.dumps(raw)[:200],
            expected='one member holding the list of relations, e.g. {"relations": [...]}',
        )
    # The published reader takes the first member whatever its name ("relations"/"results").
    (member,) = raw.values()
    try:
        answer = _Answer.model_validate({"relations": member})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _json_path(tuple(err["loc"]))
        raise InputError(
            f"at {where}: {err['msg']}",
            path=path,
            text=json.dumps(err.get("input"))[:200],
            expected="CSRBench answer relations: head.vars, timestamp, results.bindings[].binding",
        ) from exc

    cols: dict[str, list[Any]] = {c: [] for c in RESULT_SCHEMA.names}
    for seq, rel in enumerate(answer.relations):
        stamp_app = rel.timestamp if clock is TimestampClock.APP else None
        stamp_sys = rel.timestamp * 1_000_000 if clock is TimestampClock.SYS else None
        texts: list[str | None] = []
        for b_i, element in enumerate(rel.results.bindings):
            try:
                binding = {
                    var: _normalise_term(term)
                    for var, term in element.binding.items()
                    if term is not None
                }
            except ValueError as exc:
                raise InputError(
                    f"at relations[{seq}].results.bindings[{b_i}]: {exc}",
                    path=path,
                    text=json.dumps(element.binding)[:200],
                    expected="SPARQL 1.1 JSON terms (uri, bnode, literal, typed-literal)",
                ) from exc
            texts.append(binding_to_json(binding))
        for text in texts or [None]:
            cols["query"].append(name)
            cols["seq"].append(seq)
            cols["t_sys_ns"].append(stamp_sys)
            cols["t_app_ms"].append(stamp_app)
            cols["binding"].append(text)
    return pa.Table.from_pydict(cols, schema=RESULT_SCHEMA)


def _read_parquet_any(path: Path, schema_names: list[str], what: str) -> pa.Table:
    try:
        table = ds.dataset(path, format="parquet").to_table()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot read {what}: {exc}", path=path) from exc
    missing = [c for c in schema_names if c not in table.column_names]
    if missing:
        raise InputError(
            f"{what} lacks column(s) {missing}",
            path=path,
            text=", ".join(table.column_names),
            expected=f"columns {schema_names}",
        )
    return table


def read_result_table(path: Path | str) -> pa.Table:
    """Read a RESULT_SCHEMA Parquet file or directory of part files (a run's outputs)."""
    path = Path(path)
    table = _read_parquet_any(path, RESULT_SCHEMA.names, "engine outputs")
    try:
        return table.select(RESULT_SCHEMA.names).cast(RESULT_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(
            f"engine outputs do not fit RESULT_SCHEMA: {exc}",
            path=path,
            expected=str(RESULT_SCHEMA),
        ) from exc


def read_pushed(run_dir: Path | str) -> pa.Table | None:
    """The run's pushed-batch records (``pushed.parquet``), or None when the run has none."""
    path = Path(run_dir) / PUSHED_FILE
    if not path.exists():
        return None
    try:
        return ds.dataset(path, format="parquet").to_table()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"cannot read pushed records: {exc}", path=path) from exc


def load_answers(
    path: Path | str,
    *,
    query: str | None = None,
    clock: TimestampClock = TimestampClock.APP,
) -> pa.Table:
    """Engine output from any supported source, as a RESULT_SCHEMA table.

    ``path`` is a CSRBench answer ``.json``, a run directory (holding ``outputs.parquet``), or
    a RESULT_SCHEMA Parquet file/directory itself. ``query`` names the query of a JSON answer;
    to pick one query out of a run, pass it to ``relations.result_relations``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or directory", path=path)
    if path.is_file() and path.suffix.lower() == ".json":
        return read_csrbench_answer(path, query=query, clock=clock)
    if path.is_dir() and (path / OUTPUTS_FILE).exists():
        return read_result_table(path / OUTPUTS_FILE)
    if path.is_dir() and not _parquet_parts(path):
        # neither a run directory nor a Parquet dataset's folder: reading it as a dataset
        # would complain about whatever file it meets first
        raise InputError(
            f"not a run directory (no {OUTPUTS_FILE})",
            path=path,
            expected="a run directory written by rsp run, an outputs Parquet, or a CSRBench "
            "answer .json",
        )
    return read_result_table(path)


def relation_times(run_dir: Path, queries: list[str]) -> list[int]:
    """The distinct application times the engine stamped on the relations of ``queries`` in
    a run directory (none when it stamps none: a wall-clock engine)."""
    import pyarrow.compute as pc

    table = read_result_table(Path(run_dir) / OUTPUTS_FILE).select(["query", "t_app_ms"])
    times = table.filter(pc.is_in(table.column("query"), pa.array(queries))).column("t_app_ms")
    return sorted({int(t) for t in pc.unique(times.drop_null()).to_pylist()})


def _parquet_parts(folder: Path) -> bool:
    """Whether ``folder`` is a Parquet dataset: Parquet files only (hidden files aside)."""
    files = [f for f in folder.iterdir() if not f.name.startswith((".", "_"))]
    return bool(files) and all(f.suffix == ".parquet" for f in files)
