"""The plan's wall time from a results folder (``rsp matrix plan SPEC --results DIR``): finished
cells are counted as done, the rest priced by the measured cells most like them, scaled by
the concurrency axis' instances; cells nothing measured resembles fall back on the spec."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rsp_sdk.engine import registry
from rsp_sdk.matrix.estimate import estimate
from rsp_sdk.matrix.inputs import prepare
from rsp_sdk.matrix.plan import plan
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import load_spec
from tests.fixtures.adapters import ToyPyAdapter
from tests.test_matrix import env, write_inputs, write_spec

BODY = '[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'


@pytest.fixture
def toy() -> Iterator[None]:
    registry.register(ToyPyAdapter())
    yield
    registry.unregister("toy-py")


def _plan_json(rsp_exe: list[str], spec: Path, *extra: str) -> dict[str, object]:
    proc = subprocess.run(
        [*rsp_exe, "matrix", "plan", str(spec), "--json", *extra],
        env=env(),
        capture_output=True,
        text=True,
        check=True,
    )
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_a_results_folder_marks_finished_cells_and_prices_the_rest(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    one = write_spec(tmp_path, BODY)
    result = run_matrix(load_spec(one), one, tmp_path / "out")
    (measured,) = [float(r["wall_s"]) for r in result.rows]
    assert measured > 0
    three = write_spec(tmp_path, "repetitions = 3\n" + BODY, "three.toml")
    blind = _plan_json(rsp_exe, three)
    assert (blind["finished"], blind["priced_from_measured"]) == (0, 0)
    assert blind["expected_wall_s"] == 3 * load_spec(three).expected_cell_s
    seen = _plan_json(rsp_exe, three, "--results", str(tmp_path / "out"))
    # repetition 1 is the cell that ran (same key); 2 and 3 cost what it measured
    assert (seen["finished"], seen["priced_from_measured"]) == (1, 2)
    assert seen["expected_wall_s"] == pytest.approx(2 * measured)


def test_a_stream_s_own_cell_time_prices_its_cells_where_nothing_was_measured(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    three = write_spec(tmp_path, "repetitions = 3\n" + BODY, "three.toml")
    assert _plan_json(rsp_exe, three)["expected_wall_s"] == 3 * load_spec(three).expected_cell_s
    three.write_text(three.read_text() + "expected_cell_s = 2.5\n")  # in the stream's table
    assert load_spec(three).streams[0].expected_cell_s == 2.5
    assert _plan_json(rsp_exe, three)["expected_wall_s"] == pytest.approx(3 * 2.5)
    spec = load_spec(three)
    cell = plan(spec, three, prepare(spec, three, tmp_path / "inputs"))[0]
    tens = cell.model_copy(update={"key": "k10", "instances": 10})
    assert estimate([tens], 10.0, [], {cell.stream: 2.5}).wall_s == pytest.approx(25.0)
    assert estimate([tens], 10.0, [], {"other": 2.5}).wall_s == pytest.approx(100.0)


def test_instances_scale_a_measurement_and_unlike_engines_fall_back_on_the_spec(
    toy: None, tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, BODY)
    spec = load_spec(spec_path)
    (cell,) = plan(spec, spec_path, prepare(spec, spec_path, tmp_path / "inputs"))
    twenty = cell.model_copy(update={"key": "k20", "instances": 20, "label": "other/x20"})
    alone = {"key": "k1", "label": "x/rep=1", "engine": "toy-py", "runtime": cell.runtime}
    rows = [{**alone, "wall_s": 30.0, "instances": 1}, {**alone, "key": "k2", "wall_s": 50.0}]
    priced = estimate([twenty], 10.0, rows)
    assert (priced.to_run, priced.measured) == (1, 1)
    assert priced.wall_s == pytest.approx(20 * 40.0)  # the median per instance, 20 instances
    tens = [{**alone, "key": "k10", "instances": 10, "wall_s": 130.0}]
    assert estimate([twenty], 10.0, rows + tens).wall_s == pytest.approx(260.0)  # nearer count
    stranger = cell.model_copy(update={"key": "k9", "engine": "csparql", "instances": 10})
    unknown = estimate([stranger], 10.0, rows)
    assert (unknown.measured, unknown.wall_s) == (0, 100.0)


def test_a_results_option_that_is_not_a_results_folder_is_refused(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, BODY)
    proc = subprocess.run(
        [*rsp_exe, "matrix", "plan", str(spec), "--results", str(tmp_path)],
        env=env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert str(tmp_path) in proc.stderr and "matrix.json" in proc.stderr
