"""The shipped specs (``matrix/*.toml``) stay valid and plannable, with the axes each is for.

Only ``csrbench.toml`` and the functional suite ran in CI, and YABench's through one test of
its groups: a change elsewhere (a renamed query file, a generator parameter, a key the model
no longer takes) would break ``ren16.toml``, ``lsbench.toml`` or ``citybench.toml`` unseen
until a run of hours. ``rsp matrix plan`` builds every stream and renders every query for every
engine, so planning each spec catches that in seconds; the axes checked are those the specs
promise (docs/matrix-spec.md). The JSON Schema of ``rsp matrix schema`` is checked against
them with jsonschema, a validator that shares no code with the pydantic model it comes from.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.conftest import REPO, run_rsp

SPECS = sorted(p.stem for p in (REPO / "matrix").glob("*.toml"))
ENGINES = {"cqels", "csparql", "csparql09", "etalis", "jtalis", "rspjs", "rsprs", "sparqlstream"}


@pytest.fixture(scope="module")
def plans(rsp_exe: list[str], shared_data: Path) -> dict[str, list[dict[str, Any]]]:
    """Each spec's ``rsp matrix plan --json`` cells, planned once for the module."""
    out = {}
    for name in SPECS:
        proc = run_rsp(rsp_exe, "matrix", "plan", REPO / "matrix" / f"{name}.toml", "--json")
        out[name] = json.loads(proc.stdout)["cells"]
    return out


def _axis(cells: list[dict[str, Any]], key: str) -> set[Any]:
    return {c[key] for c in cells}


def test_the_shipped_specs_are_all_here() -> None:
    assert SPECS == ["citybench", "csrbench", "functional", "lsbench", "ren16", "yabench"]


@pytest.mark.parametrize("name", SPECS)
def test_a_shipped_spec_plans_every_cell_with_a_key_and_a_reason(
    plans: dict[str, list[dict[str, Any]]], name: str
) -> None:
    """Every cell has its own key and label; one that will not run says why."""
    cells = plans[name]
    assert cells, name
    assert len(_axis(cells, "key")) == len(cells) == len(_axis(cells, "label"))
    assert all(len(c["key"]) == 64 for c in cells)
    silent = [c["label"] for c in cells if c["state"] != "planned" and not c["reason"]]
    assert not silent, silent[:5]
    assert _axis(cells, "state") <= {"planned", "refused", "unavailable"}
    assert _axis(cells, "engine") <= ENGINES


def test_the_shipped_specs_have_the_axes_they_are_for(
    plans: dict[str, list[dict[str, Any]]],
) -> None:
    """CSRBench Q1–Q7 on every engine; YABench's four experiments on their station counts,
    ten repetitions, E4 gracious; ren16's sweeps; LSBench's eight query kinds at two rates;
    CityBench at ×1 and ×10 and 1, 10, 20 instances."""
    csr = plans["csrbench"]
    assert _axis(csr, "query") == {f"q{i}" for i in range(1, 8)}
    assert _axis(csr, "engine") == ENGINES
    ya = plans["yabench"]
    streams: dict[str, set[str]] = defaultdict(set)
    for c in ya:
        streams[c["group"]].add(c["stream"])
    assert streams == {
        "E1": {"sg1-50", "sg1-1000", "sg1-10000"},
        "E2": {"sg1-1", "sg1-1000", "sg1-10000"},
        "E3": {"sg1-50", "sg1-200", "sg1-500"},
        "E4": {"sg1-1"},
    }
    assert _axis(ya, "repetition") == set(range(1, 11))
    assert {c["group"] for c in ya if c["gracious"]} == {"E4"}
    ren = plans["ren16"]
    assert _axis(ren, "group") == {"rate", "window", "streams", "static", "ratemax"}
    assert {"afap", "fixed"} <= _axis(ren, "feeding")
    assert {c["query"] for c in ren if c["group"] == "static"} == {"q6[RANGE=PT1S]"}
    ls = plans["lsbench"]
    kinds = {"aggregation", "filter", "join", "negation", "nested", "static", "top_k", "union"}
    assert _axis(ls, "query") == kinds
    assert {c["feeder"]["time_scale"] for c in ls} == {2.05, 20.5}  # ≈ 100 and 1,000 /s
    assert "lsbench" in ls[0]["metrics"]
    city = plans["citybench"]
    assert _axis(city, "instances") == {1, 10, 20}
    assert {c["feeder"]["time_scale"] for c in city} == {1.0, 10.0}


@pytest.mark.parametrize("name", SPECS)
def test_rsp_matrix_schema_accepts_every_shipped_spec(rsp_exe: list[str], name: str) -> None:
    """The schema editors get from ``rsp matrix schema`` takes what the project ships — and
    refuses a misspelt key, as ``load_spec`` does."""
    schema = json.loads(run_rsp(rsp_exe, "matrix", "schema").stdout)
    spec = tomllib.loads((REPO / "matrix" / f"{name}.toml").read_text(encoding="utf-8"))
    jsonschema.validate(spec, schema)
    with pytest.raises(jsonschema.ValidationError, match="feedin"):
        jsonschema.validate({**spec, "feedin": {}}, schema)


def test_without_engines_every_cell_says_how_to_provision_its_engine(
    rsp_exe: list[str], shared_data: Path, tmp_path: Path
) -> None:
    """A fresh machine (an empty provisioning cache): nothing runs, and each cell names the
    command that provisions its engine — listed as unavailable, not dropped."""
    proc = subprocess.run(
        [*rsp_exe, "matrix", "plan", str(REPO / "matrix" / "csrbench.toml"), "--json"],
        env={**os.environ, "RSP_CACHE": str(tmp_path / "empty")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    cells = json.loads(proc.stdout)["cells"]
    assert len(cells) == 147 and _axis(cells, "state") == {"unavailable"}
    for c in cells:
        assert c["reason"].startswith("not provisioned: "), c
        assert f"(run: rsp engines fetch {c['engine']}" in c["reason"] or (
            f"(run: rsp engines add {c['engine']} " in c["reason"]
        ), c
