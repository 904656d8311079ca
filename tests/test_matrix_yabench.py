"""A YABench test folder as a matrix spec (``rsp matrix plan|run FOLDER``): YABench's own
tests from ../shared/data plan unchanged; gracious tests are judged both ways; a bad folder is
exit 2 naming config.json, the line and the key, and nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.matrix.spec import Rule, load_spec
from tests.conftest import run_rsp

TESTS = Path("YABench+yabench") / "tests"


def test_yabench_folders_plan_unchanged(
    rsp_exe: list[str], shared_data: Path, tmp_path: Path
) -> None:
    folder = shared_data / TESTS / "csparql_Q1_1"
    proc = run_rsp(rsp_exe, "matrix", "plan", folder, "--json", "--only", "runtime=py4j")
    cells = json.loads(proc.stdout)["cells"]
    # two tests (stations 10, interval 1m, 5m, seed 123123123), C-SPARQL from exec.engine
    assert [(c["engine"], c["stream"], c["group"]) for c in cells] == [
        ("csparql", "test-1", "test 1"),
        ("csparql", "test-2", "test 2"),
    ]
    assert {c["query"] for c in cells} == {"csparql_Q1_1"}
    assert not any(c["gracious"] for c in cells)
    spec = load_spec(folder)
    assert spec.streams[0].generator is not None
    assert spec.streams[0].generator.params == {
        "stations": 10,
        "interval_ms": 60_000,
        "duration_ms": 300_000,
        "seed": 123123123,
    }
    assert [m.value for m in spec.metrics] == ["csrbench", "yabench", "perf"]
    # the query is oracle.query with config.json's vars: 60 s tumbling window, TEMP 50.0
    q = cells[0]
    assert "csparql_Q1_1" in q["label"] and q["state"] in ("planned", "unavailable")
    # stations per test, graceful at the top level, CQELS by the folder's name
    mine = tmp_path / "cqels_mine"
    shutil.copytree(shared_data / TESTS / "cqels_Q3_1", mine)
    config = json.loads((mine / "config.json").read_text())
    config.pop("exec.engine")
    config["graceful"] = "true"
    (mine / "config.json").write_text(json.dumps(config, indent=4))
    spec = load_spec(mine)
    assert [e.name for e in spec.engines] == ["cqels"]
    assert [q.gracious for q in spec.queries] == [True, True]
    assert [s.generator.params["stations"] for s in spec.streams if s.generator] == [1, 10]


def test_an_experiment_of_the_shipped_spec_is_picked_by_its_group(rsp_exe: list[str]) -> None:
    """`--only group=E3`: YABench's E3 cells (join, 50/200/500 stations) and no E4 cell, though
    E4 runs the same query; an exclude rule on a group cuts the same cells."""
    spec = Path(__file__).resolve().parent.parent / "matrix" / "yabench.toml"
    only = ["--only", "group=E3", "--only", "engine=rspjs", "--only", "repetition=1"]
    proc = run_rsp(rsp_exe, "matrix", "plan", spec, "--json", *only)
    cells = json.loads(proc.stdout)["cells"]
    assert {(c["group"], c["query"]) for c in cells} == {
        ("E3", "join[DELTA=10,RANGE=PT5S,STEP=PT5S]")
    }
    assert sorted({c["stream"] for c in cells}) == ["sg1-200", "sg1-50", "sg1-500"]
    rule = Rule(group="E3")
    assert rule.matches({"group": "E3", "query": "join"})
    assert not rule.matches({"group": "E4", "query": "join"})


@pytest.mark.parametrize(
    ("change", "key", "at"),
    [
        (lambda c: c["tests"][0].pop("interval"), "interval", '"name": "1"'),
        (lambda c: c.update(generator="SG2"), "generator", '"generator"'),
        (lambda c: c.update(duration="soon"), "duration", '"duration"'),
        (lambda c: c.update(tests=[]), "tests", '"tests"'),
    ],
)
def test_bad_yabench_folders_name_file_line_and_key(
    shared_data: Path, tmp_path: Path, change: object, key: str, at: str
) -> None:
    folder = tmp_path / "csparql_bad"
    shutil.copytree(shared_data / TESTS / "csparql_Q1_1", folder)
    config = json.loads((folder / "config.json").read_text())
    change(config)  # type: ignore[operator]
    text = json.dumps(config, indent=4)
    (folder / "config.json").write_text(text)
    with pytest.raises(InputError) as err:
        load_spec(folder)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if at in t)
    assert f"'{key}'" in str(err.value) and err.value.line == line, str(err.value)
    assert err.value.path == folder / "config.json"


def test_bad_yabench_folders_exit_2_and_write_nothing(
    rsp_exe: list[str], shared_data: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "csparql_bad"
    shutil.copytree(shared_data / TESTS / "csparql_Q1_1", folder)
    config = (folder / "config.json").read_text().replace('"duration": "5m"', '"duration": "x"')
    (folder / "config.json").write_text(config)
    out = tmp_path / "out"
    proc = run_rsp(rsp_exe, "matrix", "run", folder, "-o", out, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"{folder / 'config.json'}:" in proc.stderr and "duration" in proc.stderr, proc.stderr
    assert not out.exists()  # nothing half-written
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a YABench test folder") as err:
        load_spec(tmp_path / "empty")
    assert err.value.path == tmp_path / "empty" / "oracle.query"
