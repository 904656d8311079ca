"""The CSRBench answer format, for one t0 candidate of an expected output.

``{"relations": [{"head": {"vars": […]}, "timestamp": T, "results": {"bindings": [{"timestamp":
T, "binding": {var: SPARQL JSON term}}]}}]}`` — one relation per report, stamped with its report
time; an empty relation has no bindings (as in CSRBench's recorded ``answers/*-answer-N.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rsp_sdk.errors import InputError
from rsp_sdk.model.results import binding_from_json
from rsp_sdk.util.atomic import atomic_path


def to_csrbench(expected: pa.Table, variables: list[str], t0: int | None = None) -> dict[str, Any]:
    """The CSRBench answer object of one candidate (``t0`` may be omitted if there is one)."""
    candidates = sorted(set(expected.column("t0_ms").to_pylist()))
    if t0 is None:
        if len(candidates) > 1:
            raise InputError(
                f"the expected output holds {len(candidates)} t0 candidates",
                expected="one of them selected with --t0 for csrbench-json",
            )
        t0 = candidates[0] if candidates else 0
    rows = expected.filter(pc.equal(expected.column("t0_ms"), t0)).to_pylist()
    relations: list[dict[str, Any]] = []
    current: int | None = None
    for row in sorted(rows, key=lambda r: (r["seq"], r["binding"] or "")):
        if row["seq"] != current:
            current = row["seq"]
            relations.append(
                {
                    "head": {"vars": list(variables)},
                    "timestamp": row["t_app_ms"],
                    "results": {"bindings": []},
                }
            )
        if row["binding"] is not None:
            relations[-1]["results"]["bindings"].append(
                {"timestamp": row["t_app_ms"], "binding": binding_from_json(row["binding"])}
            )
    return {"relations": relations}


def write_csrbench(
    path: Path, expected: pa.Table, variables: list[str], t0: int | None = None
) -> Path:
    data = to_csrbench(expected, variables, t0)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path
