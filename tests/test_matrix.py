"""The matrix (``rsp_sdk.matrix``, ``rsp matrix``) on real engines: the Python fixture engine
(a JSON-lines program on the subprocess runtime) and, where provisioned, rsp-js.

Spec errors name file, line and key; the plan is the product of the axes with exclude/include
rules and keeps refused and unavailable cells with their reason; cell keys are stable and
change with any input; a matrix killed with SIGKILL and rerun finishes without touching the
cells that were done; cells.parquet reads in pandas; the oracle runs once per distinct input.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rsp_sdk.compare.parts import ExpectedTable
from rsp_sdk.engine import Capabilities, Feature, Timeouts, registry
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.adapter_code import code_hash
from rsp_sdk.matrix.aggregate import aggregate
from rsp_sdk.matrix.engines import engine_info
from rsp_sdk.matrix.inputs import prepare
from rsp_sdk.matrix.metrics import window_latencies
from rsp_sdk.matrix.plan import CellState, plan
from rsp_sdk.matrix.ratesearch import probe_windows
from rsp_sdk.matrix.run import planned, run_matrix
from rsp_sdk.matrix.select import parse_only, select
from rsp_sdk.matrix.spec import load_spec
from rsp_sdk.matrix.store import Store
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.oracle import job as oracle_job
from rsp_sdk.report.results import Results
from rsp_sdk.run import deadline
from rsp_sdk.run.feeder import FeederConfig, PacingMode
from rsp_sdk.run.runner import RunRequest, run
from rsp_sdk.streams.io import write_stream
from rsp_sdk.testing import Scenario, default_query
from tests.conftest import REPO, run_rsp
from tests.fixtures.adapters import ToyPyAdapter

SC = Scenario(triples=400, span_ms=4_000)
FILTERED = (
    "REGISTER RSTREAM <http://ex.org/q> AS SELECT ?s ?o "
    "FROM NAMED WINDOW <http://ex.org/w> ON <{stream}> [RANGE PT1S STEP PT1S] "
    "WHERE {{ WINDOW <http://ex.org/w> {{ ?s <http://rsp-sdk.org/conformance/p0> ?o "
    "FILTER(?o > 3) }} }}"
)


@pytest.fixture
def toy() -> Iterator[None]:
    registry.register(ToyPyAdapter())
    yield
    registry.unregister("toy-py")


def env() -> dict[str, str]:
    return {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": str(REPO),
        "RSP_ADAPTERS": "tests.fixtures.adapters:ToyPyAdapter",
    }


def write_inputs(tmp: Path, sc: Scenario = SC) -> None:
    write_stream(sc.table(), tmp / "stream.parquet", StreamMeta(producer="test"))
    (tmp / "q1.rspql").write_text(default_query(sc.stream).text)
    (tmp / "qf.rspql").write_text(FILTERED.format(stream=sc.stream))
    (tmp / "qt.rspql").write_text(
        default_query(sc.stream).text.replace("RANGE PT1S STEP PT1S", "RANGE ${R} STEP PT1S")
    )


def write_spec(tmp: Path, body: str, name: str = "spec.toml") -> Path:
    path = tmp / name
    path.write_text(
        'name = "t"\n' + body.lstrip("\n") + '[[streams]]\nname = "s"\n'
        'import = { format = "parquet", path = "stream.parquet" }\n'
    )
    return path


def test_spec_errors_name_file_line_and_key(rsp_exe: list[str], tmp_path: Path) -> None:
    write_inputs(tmp_path)
    bad_key = write_spec(
        tmp_path,
        '[[engines]]\nname = "toy-py"\n[[engines]]\nname = "x"\nruntimez = ["a"]\n'
        '[[queries]]\nfiles = ["q1.rspql"]\n',
    )
    proc = run_rsp(rsp_exe, "matrix", "plan", bad_key, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"{bad_key}:6:" in proc.stderr and "engines.1.runtimez" in proc.stderr, proc.stderr
    bad_value = write_spec(
        tmp_path,
        '[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'
        "[feeding]\nrates = [1000]\nbatch_size = 0\n",
        "v.toml",
    )
    with pytest.raises(InputError) as err:
        load_spec(bad_value)
    assert err.value.line == 8 and "feeding.batch_size" in str(err.value)
    syntax = tmp_path / "s.toml"
    syntax.write_text('name = "t"\nrepetitions = = 2\n')
    proc = run_rsp(rsp_exe, "matrix", "run", syntax, "-o", tmp_path / "out", check=False)
    assert proc.returncode == 2 and f"{syntax}:2" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()  # nothing half-written


PLAN_SPEC = """
repetitions = 2
[[engines]]
name = "toy-py"
runtimes = ["subprocess", "py4j"]
[[engines]]
name = "no-such-engine"
[[queries]]
files = ["q1.rspql", "qf.rspql"]
[[queries]]
files = ["qt.rspql"]
params = { R = ["PT1S", "PT2S"] }
[feeding]
modes = ["afap", "rate"]
rates = [1000, 5000]
[[exclude]]
feeding = "rate"
[[include]]
feeding = "rate"
rate = 5000
query = "q1"
"""


def test_plan_is_the_product_with_rules_and_keeps_cells_that_cannot_run(
    toy: None, tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, PLAN_SPEC)
    spec = load_spec(spec_path)
    streams = prepare(spec, spec_path, tmp_path / "inputs")
    cells = plan(spec, spec_path, streams)
    # toy-py: 2 runtimes × 4 queries × (afap + the one re-included rate cell for q1) × 2 reps;
    # no-such-engine: 1 runtime (unknown: subprocess) × 4 queries × 1 feeding (afap) × 2 reps
    toy_cells = [c for c in cells if c.engine == "toy-py"]
    assert len(toy_cells) == 2 * (4 + 1) * 2
    assert len(cells) == len(toy_cells) + 4 * 2
    assert {c.rate for c in toy_cells if c.feeding == "rate"} == {5000.0}
    assert {c.query for c in toy_cells} == {"q1", "qf", "qt[R=PT1S]", "qt[R=PT2S]"}
    states = {(c.engine, c.runtime, c.query): (c.state, c.reason) for c in cells}
    assert states[("toy-py", "subprocess", "q1")] == (CellState.PLANNED, None)
    state, reason = states[("toy-py", "subprocess", "qf")]
    assert state is CellState.REFUSED and "needs" in (reason or "") and "filter" in (reason or "")
    state, reason = states[("toy-py", "py4j", "q1")]
    assert state is CellState.UNAVAILABLE and "cannot carry toy-py" in (reason or "")
    state, reason = states[("no-such-engine", "subprocess", "q1")]
    assert state is CellState.UNAVAILABLE and "unknown engine" in (reason or "")
    # repetitions interleave: every rep-1 cell comes before any rep-2 cell
    reps = [c.repetition for c in cells]
    assert reps == sorted(reps)
    assert len({c.key for c in cells}) == len(cells)
    picked = select(cells, ["engine=toy-py,runtime=subprocess", "query=q1", "query=qf"])
    assert {(c.query, c.runtime) for c in picked} == {("q1", "subprocess"), ("qf", "subprocess")}


SERIAL_BASE = """
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap", "real-time"]
"""


def test_cells_that_measure_time_run_alone_and_a_profile_override_reaches_every_cell(
    toy: None, tmp_path: Path
) -> None:
    """``--jobs`` puts side by side only cells whose numbers do not depend on the wall clock:
    an application-time engine fed as fast as possible, in a spec that measures no time
    (``perf`` is a default metric). ``profile`` judges every engine under one SECRET profile:
    each cell carries it, and its key changes with it."""
    write_inputs(tmp_path)

    def cells(body: str, name: str) -> dict[str, Any]:
        path = write_spec(tmp_path, body, name)
        spec = load_spec(path)
        return {c.feeding: c for c in plan(spec, path, prepare(spec, path, tmp_path / "in"))}

    timed = cells(SERIAL_BASE, "timed.toml")
    assert not timed["afap"].parallel_ok and not timed["real-time"].parallel_ok
    untimed = cells('metrics = ["csrbench"]\n' + SERIAL_BASE, "untimed.toml")
    assert untimed["afap"].parallel_ok and not untimed["real-time"].parallel_ok
    judged = cells('metrics = ["csrbench"]\nprofile = "cqels"\n' + SERIAL_BASE, "cqels.toml")
    assert {c.profile for c in untimed.values()} == {"toy"}  # toy-py's own
    assert {c.profile for c in judged.values()} == {"cqels"}
    cqels = judged["afap"].profile_json or {}
    assert (cqels["tick"], cqels["r2s"]) == ("tuple_driven", "istream")  # `rsp profiles show`
    assert untimed["afap"].profile_json != cqels
    assert judged["afap"].key != untimed["afap"].key


def test_plan_lists_each_exclude_rule_with_the_cells_it_cuts_and_its_reason(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """A rule cuts cells silently from every table; the plan says how many each cut and why,
    and shows a rule that cuts nothing (here a mistyped query name) with 0."""
    write_inputs(tmp_path)
    rules = (
        '[[exclude]]\nquery = "qt[R=PT2S]"\nreason = "two-second windows come later"\n'
        '[[exclude]]\nquery = "qt[R=PT3S]"\nreason = "a typo"\n'
    )
    spec = write_spec(tmp_path, PLAN_SPEC + rules)
    cmd = [*rsp_exe, "matrix", "plan", str(spec)]
    run = {"env": env(), "capture_output": True, "text": True, "timeout": 120}
    shown = subprocess.run([*cmd, "--json"], **run)
    assert shown.returncode == 0, shown.stderr
    excluded = json.loads(shown.stdout)["excluded"]
    # rate cells of toy-py (2 runtimes x 4 queries x 2 rates x 2 reps) but q1 at 5000 (4),
    # re-included; then the afap cells of qt[R=PT2S] (toy-py 2 x 2, no-such-engine 1 x 2)
    assert [(e["rule"], e["cells"], e["reason"]) for e in excluded] == [
        ({"feeding": "rate"}, 28, None),
        ({"query": "qt[R=PT2S]"}, 6, "two-second windows come later"),
        ({"query": "qt[R=PT3S]"}, 0, "a typo"),
    ]
    text = subprocess.run(cmd, **run)
    assert "excluded: 6 cell(s) by rule query=qt[R=PT2S]: two-second windows come later" in (
        text.stdout
    )
    assert "excluded: 0 cell(s) by rule query=qt[R=PT3S]: a typo" in text.stdout
    picked = subprocess.run([*cmd, "--json", "--only", "runtime=py4j"], **run)
    assert [e["cells"] for e in json.loads(picked.stdout)["excluded"]] == [14, 2, 0]


def test_a_plan_resolves_each_engine_once(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resolving an engine checks its provisioning (lock file, artifact hashes); the plan and
    the count of its exclusions resolved every engine twice. The real lookups run, counted."""
    from rsp_sdk.cli.matrix import plan_command

    write_inputs(tmp_path)
    spec = write_spec(tmp_path, PLAN_SPEC + '[[exclude]]\nquery = "qt[R=PT2S]"\n')
    looked_up: list[str] = []
    real = registry.get_adapter

    def counted(name: str) -> Any:
        looked_up.append(name)
        return real(name)

    monkeypatch.setattr(registry, "get_adapter", counted)
    plan_command(spec, as_json=True)
    shown = json.loads(capsys.readouterr().out)
    assert [e["cells"] for e in shown["excluded"]] == [28, 6]
    assert sorted(looked_up) == ["no-such-engine", "toy-py"]


TWO_PARAMS_SPEC = """
[[engines]]
name = "toy-py"
[[queries]]
files = ["q2.rspql"]
params = { R = ["PT1S", "PT2S"], S = ["PT1S"] }
[feeding]
modes = ["afap"]
"""


def test_only_picks_a_query_named_with_two_template_parameters(toy: None, tmp_path: Path) -> None:
    """The name of a query with two parameters holds a comma (``q2[R=PT2S,S=PT1S]``): --only
    splits its AXIS=VALUE parts on commas outside brackets only."""
    write_inputs(tmp_path)
    (tmp_path / "q2.rspql").write_text(
        default_query(SC.stream).text.replace("RANGE PT1S STEP PT1S", "RANGE ${R} STEP ${S}")
    )
    spec_path = write_spec(tmp_path, TWO_PARAMS_SPEC)
    spec = load_spec(spec_path)
    cells = plan(spec, spec_path, prepare(spec, spec_path, tmp_path / "inputs"))
    assert {c.query for c in cells} == {"q2[R=PT1S,S=PT1S]", "q2[R=PT2S,S=PT1S]"}
    picked = select(cells, ["engine=toy-py,query=q2[R=PT2S,S=PT1S],repetition=1"])
    assert [c.query for c in picked] == ["q2[R=PT2S,S=PT1S]"]
    assert parse_only(["query=q2[R=PT2S,S=PT1S]", "engine=a,b", "engine=c"]) == {
        "query": {"q2[R=PT2S,S=PT1S]"},
        "engine": {"a,b", "c"},
    }
    assert select(cells, ["query=q2[R=PT2S"]) == []  # the old split: no such query


def test_cell_keys_are_stable_and_change_with_their_inputs(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    base = '[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'
    spec_path = write_spec(tmp_path, base)

    def keys(path: Path, inputs: str = "inputs") -> list[str]:
        spec = load_spec(path)
        return [c.key for c in plan(spec, path, prepare(spec, path, tmp_path / inputs))]

    first = keys(spec_path)
    assert keys(spec_path, "inputs2") == first  # same inputs, fresh preparation: same key
    cli = subprocess.run(
        [*rsp_exe, "matrix", "plan", str(spec_path), "--json"],
        env={**env(), "PYTHONHASHSEED": "7"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert [c["key"] for c in json.loads(cli.stdout)["cells"]] == first  # another process
    assert keys(write_spec(tmp_path, "repetitions = 2\n" + base, "r.toml"))[0] == first[0]
    config = base.replace('"toy-py"\n', '"toy-py"\nengine_config = { x = 1 }\n')
    assert keys(write_spec(tmp_path, config, "c.toml")) != first
    assert keys(write_spec(tmp_path, base + "[feeding]\nbatch_size = 7\n", "f.toml")) != first
    write_stream(
        Scenario(triples=401, span_ms=4_000).table(),
        tmp_path / "stream.parquet",
        StreamMeta(producer="test"),
    )
    assert keys(spec_path, "inputs3") != first  # the stream's content, not its name


def test_the_keys_of_cells_that_cannot_run_do_not_depend_on_the_specs_folder(
    toy: None, tmp_path: Path
) -> None:
    """A refused or unavailable cell has no rendered query: its key hashed the parsed query,
    whose source is a path, so the same spec in another checkout gave it another key."""

    def cells(folder: str) -> list[tuple[str, str]]:
        here = tmp_path / folder
        here.mkdir()
        write_inputs(here)
        path = write_spec(here, PLAN_SPEC)
        spec = load_spec(path)
        return [(c.state.value, c.key) for c in plan(spec, path, prepare(spec, path, here / "in"))]

    one, other = cells("a"), cells("b")
    assert one == other
    assert {state for state, _ in one} == {"planned", "refused", "unavailable"}


def test_an_adapters_own_code_is_in_its_cells_keys(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A driver fix re-keys the engine's cells, so a rerun runs them again: C-SPARQL 0.9's
    driver lost every variable past the third, and a rerun kept those cells. Bytecode and
    build caches in the package folder do not count."""
    pkg = tmp_path / "pkg"
    (pkg / "java").mkdir(parents=True)
    (pkg / "adapter.py").write_text("x = 1\n")
    (pkg / "java" / "Driver.java").write_text("class Driver {}\n")
    before = code_hash([pkg])
    for cache, name in (("__pycache__", "adapter.cpython-311.pyc"), ("node_modules", "x.js")):
        (pkg / cache).mkdir()
        (pkg / cache / name).write_text("built")
    assert code_hash([pkg]) == before
    (pkg / "java" / "Driver.java").write_text("class Driver { int fixed; }\n")
    assert code_hash([pkg]) != before
    # the toy adapter's own folder (tests/fixtures) is hashed into its keys
    assert engine_info("toy-py").code == code_hash([REPO / "tests" / "fixtures"])
    write_inputs(tmp_path)
    spec_path = write_spec(
        tmp_path, '[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'
    )
    spec = load_spec(spec_path)
    prepared = prepare(spec, spec_path, tmp_path / "inputs")
    first = [c.key for c in plan(spec, spec_path, prepared)]
    monkeypatch.setattr("rsp_sdk.matrix.engines.adapter_code", lambda adapter: "0123456789abcdef")
    assert [c.key for c in plan(spec, spec_path, prepared)] != first


def test_an_engine_provisioned_again_from_the_same_files_keeps_its_cell_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell's key holds each provisioned file's sha256, not lock.json's times and paths: CI
    re-provisioned the shared cache from the same jars and no finished cell resumed."""
    from rsp_sdk.engine.provision import ProvisionCache
    from rsp_sdk.matrix.engines import engine_info

    monkeypatch.setenv("RSP_CACHE", str(tmp_path / "cache"))
    adapter = registry.get_adapter("csparql")
    manifest = adapter.manifest()
    assert manifest is not None

    def provisioned(added: str, where: str, jar_sha: str) -> dict[str, str]:
        jar = {"file": "e.jar", "sha256": jar_sha, "added": added, "source_path": where}
        lock = {
            "artifacts": {"e.jar": {**jar, "known_sha256": [jar_sha], "verified": True}},
            "dependencies": {"g:a:1": {"file": "a-1.jar", "sha256": "d" * 64}},
            "npm": {"package-lock.json": {"sha256": "n" * 64, "installed": added}},
            "cargo": {"Cargo.lock": {"sha256": "c" * 64, "built": added, "binary": where}},
        }
        lock_file = ProvisionCache().engine_dir(manifest.name) / "lock.json"
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        lock_file.write_text(json.dumps(lock))
        return engine_info("csparql").artifacts

    first = provisioned("2026-11-24T02:32:15+0000", "/work/shared", "a" * 64)
    assert first == {
        "Cargo.lock": "c" * 64,
        "e.jar": "a" * 64,
        "g:a:1": "d" * 64,
        "package-lock.json": "n" * 64,
    }
    assert provisioned("2026-11-24T15:24:56+0000", "/check/shared", "a" * 64) == first
    assert provisioned("2026-11-24T02:32:15+0000", "/work/shared", "b" * 64) != first


def test_a_generated_stream_is_planned_from_its_recipe_without_generating_it_again(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`rsp matrix plan` keys cells by the stream's sha256; a recipe seen before (generator,
    parameters, generator code) gives it without generating (yabench.toml's 2.1 M-triple
    streams), and a run regenerates only when the file is missing from inputs/."""
    monkeypatch.setenv("RSP_CACHE", str(tmp_path / "cache"))
    params = "{ stations = 2, interval_ms = 1000, duration_ms = 3000, seed = 1 }"
    spec_path = tmp_path / "g.toml"
    spec_path.write_text(
        'name = "g"\n[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'
        f'[[streams]]\nname = "sg"\ngenerator = {{ name = "yabench", params = {params} }}\n'
    )
    write_inputs(tmp_path)
    spec = load_spec(spec_path)

    def keys(inputs: str, plan_only: bool) -> list[str]:
        streams = prepare(spec, spec_path, tmp_path / inputs, plan_only=plan_only)
        return [c.key for c in plan(spec, spec_path, streams)]

    first = keys("run1", plan_only=False)
    assert len(list((tmp_path / "run1").glob("*.parquet"))) == 1
    assert keys("plan", plan_only=True) == first  # from the recipe: nothing generated
    assert list((tmp_path / "plan").glob("*.parquet")) == []
    assert keys("run2", plan_only=False) == first  # a run needs the file: generated again
    assert len(list((tmp_path / "run2").glob("*.parquet"))) == 1
    other = params.replace("stations = 2", "stations = 3")
    spec_path.write_text(spec_path.read_text().replace(params, other))
    spec = load_spec(spec_path)
    assert keys("plan2", plan_only=True) != first  # another recipe: generated to be hashed
    assert len(list((tmp_path / "plan2").glob("*.parquet"))) == 1


def test_only_one_stream_plans_the_same_cells_and_prepares_that_stream_alone(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--only stream=…`` prepares that stream alone but keeps the cells as the whole spec
    names them: a YABench rerun with one stream labelled its cells without the stream."""
    monkeypatch.setenv("RSP_CACHE", str(tmp_path / "cache"))
    spec_path = tmp_path / "two.toml"
    gen = 'generator = {{ name = "yabench", params = {{ stations = {n}, interval_ms = 1000, duration_ms = 3000, seed = 1 }} }}'
    spec_path.write_text(
        'name = "two"\n[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'
        + "".join(f'[[streams]]\nname = "sg{n}"\n{gen.format(n=n)}\n' for n in (1, 2))
    )
    write_inputs(tmp_path)
    spec = load_spec(spec_path)
    _, every = planned(spec, spec_path, tmp_path / "all")
    _, one = planned(spec, spec_path, tmp_path / "one", ["stream=sg2"])
    assert [(c.key, c.label) for c in one] == [(c.key, c.label) for c in every if c.stream == "sg2"]
    assert all("/sg2/" in c.label for c in one) and one
    assert len(list((tmp_path / "one").glob("*.parquet"))) == 1


def test_a_rendering_with_blank_nodes_is_the_same_on_every_parse() -> None:
    """The engine's text of a query is part of a cell's key. rdflib labels `[ … ]` blank nodes
    at random on each parse; the ETALIS renderer used those labels (and their order), so every
    `rsp matrix plan` or rerun gave CSRBench Q6 on ETALIS/JTALIS new keys (cells rerun). JTALIS
    renders through the same code."""
    from rsp_sdk.csrbench import engine_query
    from rsp_sdk.query import load_query

    adapter = registry.get_adapter("etalis")
    q6 = REPO / "matrix" / "queries" / "csrbench" / "q6.rspql"
    texts = {adapter.render(engine_query(load_query(q6), adapter)) for _ in range(4)}
    assert len(texts) == 1 and "?_b0" in texts.pop()


KILL_SPEC = """
metrics = ["perf"]
repetitions = 3
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["rate"]
rates = [100]
"""


def _cell_jsons(out: Path) -> dict[Path, float]:
    return {p: p.stat().st_mtime_ns for p in (out / "cells").glob("*/cell.json")}


def _proc(pid: int) -> psutil.Process | None:
    """The live (non-zombie) process ``pid``, or None."""
    try:
        p = psutil.Process(pid)
        return None if p.status() == psutil.STATUS_ZOMBIE else p
    except psutil.NoSuchProcess:
        return None


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:  # gone meanwhile
        return []


def _name(p: psutil.Process) -> str:
    try:
        return p.name()
    except psutil.Error:  # gone meanwhile
        return ""


def _running(out: Path) -> list[Path]:
    return [d for d in (out / "cells").iterdir() if not (d / "cell.json").exists()]


def test_a_killed_matrix_reruns_without_redoing_finished_cells(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """Each cell feeds 400 triples at 100 triples/s (~4 s); the matrix is SIGKILLed as soon as
    the first cell.json appears, then rerun to the end."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, KILL_SPEC)
    out = tmp_path / "results"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out)]
    proc = subprocess.Popen(
        cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if _cell_jsons(out) and _running(out):
                break  # one cell done, the next one under way
            time.sleep(0.05)
    finally:
        tree = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    done_before = _cell_jsons(out)
    assert len(done_before) == 1, proc.stderr.read() if proc.stderr else ""
    killed = _running(out)
    assert len(killed) == 1  # the second cell was running when the matrix died
    # the engine runs in its own session; it notices its host is gone (closed pipes) and exits
    _, alive = psutil.wait_procs([p for p in map(_proc, tree) if p is not None], timeout=30)
    alive = [p for p in alive if _proc(p.pid) is not None]
    assert not alive, [" ".join(p.cmdline()) for p in alive]
    rerun = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    after = _cell_jsons(out)
    assert len(after) == 3
    for path, mtime in done_before.items():
        assert after[path] == mtime  # the finished cell was not rerun
    assert [p.name.split("-")[0] for p in (out / "killed").iterdir()] == [killed[0].name]
    assert (out / "killed" / next((out / "killed").iterdir()).name / "config.json").exists()
    assert "ran 2 cell(s), 1 already done" in rerun.stdout
    frame = pd.read_parquet(out / "cells.parquet")
    assert list(frame["state"]) == ["ok"] * 3 and list(frame["repetition"]) == [1, 2, 3]
    assert (frame["triples_pushed"] == SC.triples).all()
    assert frame["rate_achieved"].between(50, 200).all()  # 100 triples/s asked
    assert frame["peak_rss_mb"].gt(0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary[0]["repetitions"] == 3 and summary[0]["rate_achieved"]["n"] == 3


def test_a_matrix_logging_to_a_file_prints_a_line_per_cell_and_what_a_rerun_skipped(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """Not a terminal (a log, a pipe, CI): no live bar, which would print nothing until the
    end, but a line when each cell starts and one when it ends, in order, with its outcome and
    the time left."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, KILL_SPEC.replace("repetitions = 3", "repetitions = 2"))
    out = tmp_path / "results"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out)]
    first = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    labels = list(pd.read_parquet(out / "cells.parquet").sort_values("repetition")["label"])
    lines = [line for line in first.stdout.splitlines() if line.startswith("t [")]
    assert len(lines) == 2, first.stdout
    for n, (line, label) in enumerate(zip(lines, labels, strict=True), 1):
        assert line.startswith(f"t [{n}/2] {label}: ok ("), line
        assert " elapsed, ~" in line and line.endswith(" left"), line
    assert lines[-1].endswith("~0:00:00 left")
    started = [line for line in first.stdout.splitlines() if line.startswith("t → ")]
    assert started == [f"t → {label}: running" for label in labels]
    again = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "t [" not in again.stdout
    assert "ran 0 cell(s), 2 already done" in again.stdout


def test_a_terminal_shows_one_bar_with_cells_done_of_total_and_the_current_cell(
    toy: None, tmp_path: Path
) -> None:
    """On a terminal, the matrix is one live bar: its name, cells done of the total, elapsed
    and left, and the current cell with its state (the log form is the test above)."""
    from rich.console import Console

    from rsp_sdk.cli.matrix_progress import matrix_progress

    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, KILL_SPEC.replace("repetitions = 3", "repetitions = 2"))
    console = Console(force_terminal=True, width=200, record=True, color_system=None)
    with matrix_progress("t", console, quiet=False) as (_, progress):
        result = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out", progress=progress)
    last = console.export_text().splitlines()[-1]
    label = result.rows[-1]["label"]
    assert last.startswith("t ") and " 2/2 " in last and last.endswith(f"{label}: ok"), last
    assert "0:00:00" in last  # elapsed and left columns


ORACLE_SPEC = """
metrics = ["csrbench", "yabench"]
repetitions = 2
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql", "qf.rspql"]
gracious = true
"""


def test_the_oracle_runs_once_per_input_and_judges_every_cell(toy: None, tmp_path: Path) -> None:
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, ORACLE_SPEC)
    result = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    by = {(r["query"], r["repetition"]): r for r in result.rows}
    assert [by[("q1", n)]["verdict"] for n in (1, 2)] == ["correct", "correct"]
    assert by[("qf", 1)]["state"] == "refused" and by[("qf", 1)]["verdict"] == "not_judged"
    assert (result.oracle_computed, result.oracle_reused) == (1, 1)
    assert len(list((tmp_path / "out" / "expected").iterdir())) == 1
    assert by[("q1", 1)]["precision"] == 1.0 and by[("q1", 1)]["recall"] == 1.0
    run_dir = tmp_path / "out" / by[("q1", 1)]["run_dir"]
    windows = pd.read_parquet(run_dir / "windows.parquet")
    assert len(windows) >= 4 and windows["recall"].eq(1.0).all()
    # gracious mode judged beside the plain one: a correct engine keeps its window borders
    assert (by[("q1", 1)]["gracious_precision"], by[("q1", 1)]["gracious_recall"]) == (1.0, 1.0)
    assert windows["gracious_open_ms"].eq(windows["window_open_ms"]).all()
    assert windows["delay_ms"].notna().all() and by[("q1", 1)]["delay_ms_p50"] is not None
    # final result arrival: the last result's arrival minus the end of the last push
    pushed = pd.read_parquet(run_dir / "pushed.parquet")
    last = pd.read_parquet(run_dir / "outputs.parquet")["t_sys_ns"].max()
    end = pushed.loc[pushed["phase"] == "measure", "t_sys_end_ns"].max()
    assert by[("q1", 1)]["final_result_ms"] == pytest.approx((last - end) / 1e6)
    assert by[("q1", 1)]["artifacts"] == "{}"  # the fixture engine has no provisioned files
    again = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    assert (again.ran, again.skipped, again.oracle_computed) == (0, 4, 0)
    _rejudge_by_hand(tmp_path / "out", by[("q1", 1)])


def test_an_expected_output_in_parts_judges_cells_as_the_whole_table(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large expected output is computed, kept and judged in parts of whole t0 classes
    (YABench E3 at 500 stations: 41 M bindings). Forced here on a small one: the cells'
    verdicts, t0 and YABench metrics are those judged against the whole table."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, ORACLE_SPEC)
    whole = run_matrix(load_spec(spec_path), spec_path, tmp_path / "whole")
    monkeypatch.setattr(oracle_job, "SPLIT_REPORTS", 0)
    monkeypatch.setattr(oracle_job, "FIRST_PART_REPORTS", 1)
    monkeypatch.setenv("RSP_ORACLE_PART_ROWS", "50")
    parted = run_matrix(load_spec(spec_path), spec_path, tmp_path / "parts")
    (folder,) = (tmp_path / "parts" / "expected").iterdir()
    table = ExpectedTable(folder / "expected.parquet")
    assert table.in_parts and pq.ParquetFile(table.path).num_row_groups > 3
    (unsplit,) = (tmp_path / "whole" / "expected").iterdir()
    assert not ExpectedTable(unsplit / "expected.parquet").in_parts
    keys = ("label", "verdict", "t0_ms", "divergence", "precision", "recall", "gracious_recall")
    rows = [sorted([{k: r.get(k) for k in keys} for r in m.rows], key=str) for m in (whole, parted)]
    assert rows[0] == rows[1]
    assert [r["verdict"] for r in rows[1]].count("correct") == 2


def test_an_oracle_failure_is_computed_once_and_a_rerun_tries_again(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both repetitions share one oracle key: the second is told why the first failed instead
    of computing it again (an out-of-heap job costs minutes each time). The failure is the
    oracle's size limit, which the same inputs meet again: a rerun leaves both cells as they
    are, without planning the job again; with the limit raised, --retry-failed judges both."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, ORACLE_SPEC.replace('"q1.rspql", "qf.rspql"', '"q1.rspql"'))
    monkeypatch.setenv("RSP_ORACLE_MAX_REPORTS", "1")  # a real refusal of the oracle's
    result = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    first, second = sorted(result.rows, key=lambda r: r["repetition"])
    assert (first["verdict"], second["verdict"]) == ("not_judged", "not_judged")
    assert "TooManyReports" in first["reason"] and "earlier" not in first["reason"]
    assert "failed on the same inputs earlier in this run (TooManyReports" in second["reason"]
    assert result.oracle_computed == 0
    monkeypatch.delenv("RSP_ORACLE_MAX_REPORTS")
    rerun = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out")
    assert (rerun.ran, rerun.judged, rerun.skipped, rerun.oracle_computed) == (0, 0, 2, 0)
    assert rerun.rows == result.rows
    again = run_matrix(load_spec(spec_path), spec_path, tmp_path / "out", retry_failed=True)
    assert [r["verdict"] for r in again.rows] == ["correct", "correct"]
    assert (again.ran, again.judged, again.oracle_computed, again.oracle_reused) == (0, 2, 1, 1)


def _rejudge_by_hand(out: Path, row: dict[str, Any]) -> None:
    """docs/matrix-results.md's command: `rsp oracle check` on a cell's run directory with the
    QuerySpec the cell ran (queries/<sha16>.json, named in its config.json) and its input
    gives the matrix's verdict and t0."""
    from typer.testing import CliRunner

    from rsp_sdk.cli import app

    run_dir = out / row["run_dir"]
    config = json.loads((run_dir / "config.json").read_text())
    query = Path(config["query"]["source"])
    assert query.parent == out / "queries" and query.suffix == ".json"
    stream = out / "inputs" / f"{row['stream_sha256']}.parquet"
    args = ["oracle", "check", "-s", str(stream), "-q", str(query), "--answers", str(run_dir)]
    # --t0: the cell's own t0 only (the oracle's other candidates cost 2 s and prove nothing more)
    result = CliRunner().invoke(app, [*args, f"--t0={row['t0_ms']}", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout[result.stdout.index("{") :])
    assert (cli["state"], cli["t0"]) == (row["verdict"], row["t0_ms"])


def test_results_directory_not_written_by_the_matrix_is_refused(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, KILL_SPEC)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    proc = run_rsp(rsp_exe, "matrix", "run", spec, "-o", mine, check=False)
    assert proc.returncode == 2 and "not written by rsp matrix" in proc.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_a_second_run_on_the_same_results_is_refused_while_the_first_holds_them(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """Two runs on one RESULTS would both run the cells not yet done and race on their files:
    the second is refused (exit 2, naming the first's pid) and writes nothing; once the
    first ends, its lock is gone with it and a rerun finds every cell done."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, KILL_SPEC)
    out = tmp_path / "out"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out)]
    first = subprocess.Popen(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        owner = out / ".lock.owner"
        deadline = time.monotonic() + 120
        while not owner.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert owner.exists(), "the first run never took the lock"
        second = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"pid {first.pid}" in second.stderr and "another rsp matrix run" in second.stderr
        assert first.poll() is None  # refused while the first was still running
        assert "ran " not in second.stdout and "results:" not in second.stdout
    finally:
        stdout, stderr = first.communicate(timeout=600)
    assert first.returncode == 0, stdout + stderr
    assert not (out / ".lock.owner").exists()
    again = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "ran 0 cell(s), 3 already done" in again.stdout


JOBS_SPEC = """
metrics = ["lsbench"]
repetitions = 2
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql", "qt.rspql"]
params = { R = ["PT2S"] }
[feeding]
modes = ["afap"]
"""


def test_jobs_run_clock_free_cells_side_by_side(rsp_exe: list[str], tmp_path: Path) -> None:
    """toy-py runs on application time and the spec measures no time: with --jobs 2 two
    cells' runs overlap, and every cell still finishes ok with the same output."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, JOBS_SPEC)
    out = tmp_path / "results"
    proc = subprocess.run(
        [*rsp_exe, "matrix", "run", str(spec), "-o", str(out), "--jobs", "2"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_parquet(out / "cells.parquet")
    assert list(frame["state"]) == ["ok"] * 4
    assert frame.groupby("query")["rows"].nunique().eq(1).all()  # same output every time
    spans = []
    for run_dir in frame["run_dir"]:
        status = json.loads((out / run_dir / "status.json").read_text())
        spans.append((status["started_wall"], status["ended_wall"]))
    spans.sort()
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans))  # overlap
    mm = pd.read_parquet(out / "mismatch.parquet")
    assert mm.empty  # one engine and runtime: no pair to compare


SLOW_JOBS_SPEC = """
metrics = ["lsbench"]
repetitions = 2
[limits]
timeout_s = 90
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 1500 }
[[engines]]
name = "toy-java"
runtimes = ["py4j"]
engine_config = { hang_on = "open" }
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
batch_size = 10
"""


def test_one_ctrl_c_stops_cells_running_side_by_side(
    rsp_exe: list[str], toy_cache: Any, tmp_path: Path
) -> None:
    """With --jobs 2 the cells run in worker threads, which Python's KeyboardInterrupt never
    reaches. Two cells run: toy-py feeding (40 pushes of 1.5 s: it must not end, freeing its
    worker for a queued cell, before a loaded machine has started the JVM) and toy-java on py4j
    stuck in its ``open`` verb (a Py4J call that never returns; the session does not exist yet, so
    Ctrl-C used to wait for its 90 s timeout). One SIGINT ends the matrix at once (the pool
    used to wait for every queued cell), both runs are recorded as interrupted without
    cell.json (a rerun runs them again), the queued cells never start, and no engine process
    or JVM is left."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, SLOW_JOBS_SPEC)
    out = tmp_path / "results"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out), "--jobs", "2"]
    run_env = {
        **env(),
        "RSP_ADAPTERS": ",".join(
            f"tests.fixtures.adapters:{a}" for a in ("ToyPyAdapter", "ToyJavaAdapter")
        ),
        "RSP_CACHE": str(toy_cache.root),
    }
    proc = subprocess.Popen(
        cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 120
    engines: list[psutil.Process] = []
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            tree = psutil.Process(proc.pid).children(recursive=True)
            engines = [
                p for p in tree if any(k in " ".join(_cmdline(p)) for k in ("py_engine", "Bridge"))
            ]
            jvm = [p for p in engines if "BridgeServer" in " ".join(_cmdline(p))]
            feeding = list(out.glob("cells/*/pushed.parquet"))
            if len(engines) == 2 and len(jvm) == 1 and _listening(jvm[0]) and feeding:
                break  # toy-py is feeding, the bridge is up: its `open` call is on its way
            time.sleep(0.1)
        assert len(engines) == 2, "two cells never ran side by side"
        time.sleep(1.0)  # the `open` call is made and hangs
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == 130, err.decode()
    assert stopped_in < 6.0, stopped_in  # toy-py had a minute to go, the open call 90 s
    _, alive = psutil.wait_procs(engines, timeout=10)
    assert not [p for p in alive if _proc(p.pid) is not None]
    dirs = list((out / "cells").iterdir())
    assert len(dirs) == 2  # the queued cells never started
    for d in dirs:
        assert not (d / "cell.json").exists()
        assert json.loads((d / "status.json").read_text())["state"] == "interrupted"


TERM_SPEC = """
metrics = ["lsbench"]
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 1500 }
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
batch_size = 10
"""


def test_sigterm_stops_a_background_matrix_as_ctrl_c_does(
    rsp_exe: list[str], tmp_path: Path
) -> None:
    """``kill`` (SIGTERM) on a matrix started in the background, where the shell makes it
    ignore SIGINT: Python's default for SIGTERM skipped every ``finally`` and left the engine
    running (rsp-js's driver, in a session of its own). It now stops as Ctrl-C does: exit 130,
    the run recorded as interrupted without cell.json, no engine process left."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, TERM_SPEC)
    out = tmp_path / "results"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out)]

    def background() -> None:  # what `cmd &` in a non-interactive shell does
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=background
    )
    engines: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            tree = psutil.Process(proc.pid).children(recursive=True)
            engines = [p for p in tree if "py_engine" in " ".join(_cmdline(p))]
            if engines and list(out.glob("cells/*/pushed.parquet")):
                break  # feeding: 40 pushes of 1.5 s to go
            time.sleep(0.1)
        assert engines, "the engine never started"
        proc.send_signal(signal.SIGTERM)  # the matrix process only, as `kill PID` does
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == 130, err.decode()
    _, alive = psutil.wait_procs(engines, timeout=10)
    assert not [p for p in alive if _proc(p.pid) is not None]
    (cell,) = (out / "cells").iterdir()
    assert not (cell / "cell.json").exists()
    assert json.loads((cell / "status.json").read_text())["state"] == "interrupted"


VARIANT_SPEC = """
metrics = ["csrbench", "lsbench"]
[[engines]]
name = "toy-py"
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 1 }
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 2 }
variant = "slow"
[[queries]]
files = ["q1.rspql"]
"""


def test_two_entries_of_one_adapter_are_two_engines_in_every_table(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    """Entries of one adapter with different engine_config (two heaps, two settings) shared a
    label and an identity: the results folder counted one cell as superseding the others and
    LSBench saw one engine. Each now goes by a variant — its config, or the one it names."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, VARIANT_SPEC)
    out = tmp_path / "out"
    result = run_matrix(load_spec(spec_path), spec_path, out)
    who = {r["label"].split("/")[0]: r for r in result.rows}
    assert set(who) == {
        "toy-py@subprocess",
        "toy-py[push_delay_ms=1]@subprocess",
        "toy-py[slow]@subprocess",
    }
    assert {r["verdict"] for r in result.rows} == {"correct"}
    assert len(Store(out).current_rows()) == 3  # none superseded by another entry's cell
    assert sorted(c.row for c in Results(out).cells) == sorted(who)
    cells = pd.read_parquet(out / "cells.parquet")
    assert sorted(cells["variant"].fillna("-")) == ["-", "push_delay_ms=1", "slow"]
    pairs = pd.read_parquet(out / "mismatch.parquet")
    assert len(pairs) == 6 and set(pairs["e1"]) == {f"{w}" for w in who}
    shown = run_rsp(rsp_exe, "matrix", "show", out, check=False)
    assert "toy-py[slow]@subprocess" in shown.stdout.replace("\n", ""), shown.stdout
    # the plain entry keeps the key it has in a spec that lists the adapter once
    alone = write_spec(tmp_path, VARIANT_SPEC.split("[[engines]]")[0] + PLAIN_ENTRY, "a.toml")
    spec = load_spec(alone)
    (cell,) = plan(spec, alone, prepare(spec, alone, tmp_path / "in"))
    assert cell.key == who["toy-py@subprocess"]["key"]
    same = VARIANT_SPEC.replace("= 2", "= 1").replace('variant = "slow"\n', "")
    with pytest.raises(InputError, match="give one of them a `variant`"):
        load_spec(write_spec(tmp_path, same, "same.toml"))


PLAIN_ENTRY = '[[engines]]\nname = "toy-py"\n[[queries]]\nfiles = ["q1.rspql"]\n'


WARMUP_SPEC = """
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
warmup = "warm.parquet"
warmup_rate = 1000
"""


def test_a_warm_up_is_pushed_first_measured_apart_and_judged_with_the_stream(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    """``[feeding] warmup`` was accepted and ignored. The warm-up is now pushed first (its own
    phase), left out of the feeding numbers and of the window latencies, part of the key, and
    the output is judged against what the engine saw: the warm-up then the stream — against
    the stream alone, the warm-up's windows are wrong (``rsp oracle check``)."""
    write_inputs(tmp_path)
    table = SC.table()
    later = table.set_column(1, "t_app_ms", pc.add(table.column("t_app_ms"), 10_000))
    write_stream(later, tmp_path / "stream.parquet", StreamMeta(producer="test"))
    warm = Scenario(triples=100, span_ms=2_000).table()
    write_stream(warm, tmp_path / "warm.parquet", StreamMeta(producer="test"))
    spec_path = write_spec(tmp_path, WARMUP_SPEC)
    out = tmp_path / "out"
    (row,) = run_matrix(load_spec(spec_path), spec_path, out).rows
    assert (row["state"], row["verdict"], row["triples_pushed"]) == ("ok", "correct", 400), row
    run_dir = out / row["run_dir"]
    pushed = pq.read_table(run_dir / "pushed.parquet").to_pandas()
    assert pushed.groupby("phase")["count"].sum().to_dict() == {"warmup": 100, "measure": 400}
    assert json.loads((run_dir / "config.json").read_text())["warmup"]["triples"] == 100
    windows = window_latencies(run_dir)
    # the warm-up's windows were answered too, the last one closed by the stream's first push
    measured = [w[3] for w in windows if w[2] > 10_000]
    assert len(measured) < len(windows)
    assert row["latency_ms_max"] == pytest.approx(max(measured))
    assert row["latency_ms_p50"] == pytest.approx(float(np.percentile(measured, 50)))
    # a Rate_max probe's STEP rule reads the measured windows too, not the warm-up's
    probed, _ = probe_windows(Store(out), row)
    assert probed is not None and [w[3] for w in probed] == measured
    alone = run_rsp(
        rsp_exe, "oracle", "check", "-s", tmp_path / "stream.parquet", "-q", tmp_path / "q1.rspql",
        "--answers", run_dir, check=False,
    )  # fmt: skip
    assert alone.returncode == 1, alone.stdout + alone.stderr
    # the key: none without a warm-up (older results keep theirs), another with another one
    keys = {}
    for name, body in (("none", WARMUP_SPEC.split("[feeding]")[0]), ("other", WARMUP_SPEC)):
        if name == "other":
            write_stream(warm.slice(0, 50), tmp_path / "warm.parquet", StreamMeta(producer="t"))
        path = write_spec(tmp_path, body, f"{name}.toml")
        (keys[name],) = [c.key for c in planned(load_spec(path), path, tmp_path / name)[1]]
    assert len({row["key"], *keys.values()}) == 3
    # a warm-up that does not end before the stream starts: the spec's line, exit 2
    write_stream(table, tmp_path / "warm.parquet", StreamMeta(producer="test"))
    write_stream(table, tmp_path / "stream.parquet", StreamMeta(producer="test"))
    proc = run_rsp(rsp_exe, "matrix", "plan", spec_path, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"{spec_path}:7" in proc.stderr and "feeding.warmup" in proc.stderr, proc.stderr


FIXED_SPEC = """
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["fixed"]
limit = 150
"""


def test_a_fixed_n_cell_is_judged_against_the_triples_it_was_given(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    """The fixed-N mode pushes the stream's first N triples (Ren et al.'s t = T/N for eager
    engines). Its output was judged against the whole stream: every window after the N-th
    triple was expected and missing, so a correct engine was called wrong. It is judged
    against those N triples now; the whole stream still says incorrect (``rsp oracle check``:
    the witness that the two differ)."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, FIXED_SPEC)
    out = tmp_path / "out"
    (row,) = run_matrix(load_spec(spec_path), spec_path, out).rows
    assert (row["feeding"], row["triples_pushed"]) == ("fixed", 150), row
    assert (row["state"], row["verdict"]) == ("ok", "correct"), row
    run_dir = out / row["run_dir"]
    whole = run_rsp(
        rsp_exe, "oracle", "check", "-s", tmp_path / "stream.parquet", "-q", tmp_path / "q1.rspql",
        "--answers", run_dir, check=False,
    )  # fmt: skip
    assert whole.returncode == 1, whole.stdout + whole.stderr
    given = pq.read_table(next((out / "inputs").glob("*[[]:150[]].parquet")))
    assert given.num_rows == 150


MISMATCH_SPEC = """
metrics = ["lsbench"]
[[engines]]
name = "toy-py"
[[engines]]
name = "toy-py"
engine_config = { drop_push = 2 }
variant = "drop"
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 1 }
variant = "slow"
[[queries]]
files = ["q1.rspql"]
[feeding]
batch_size = 2
"""


def test_a_rerun_computes_again_only_the_lsbench_pairs_of_the_cells_it_ran(
    toy: None, tmp_path: Path
) -> None:
    """Every ``rsp matrix run`` rebuilds mismatch.parquet; reading every cell's output again
    took YABench's 1,000-cell folder over nine minutes after a run of one cell. A pair whose two
    cells are unchanged keeps its row: a value planted in the file survives for those, and the
    pairs of the rerun cell get theirs from its output again; comparability follows the pairs."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, MISMATCH_SPEC)
    out = tmp_path / "out"
    run_matrix(load_spec(spec_path), spec_path, out)
    path = out / "mismatch.parquet"
    first = pd.read_parquet(path).set_index(["e1", "e2"])["mm_percent"]
    drop = "toy-py[drop]@subprocess"
    assert len(first) == 6 and first[(drop, "toy-py@subprocess")] == 0.0
    assert first[("toy-py@subprocess", drop)] > 0  # the dropped push's results are missing
    table = pq.read_table(path)
    planted = table.set_column(
        table.schema.get_field_index("mm_percent"), "mm_percent", pa.array([42.0] * 6)
    )
    pq.write_table(planted, path)
    run_matrix(load_spec(spec_path), spec_path, out, only=["variant=drop"], rerun=True)
    after = pd.read_parquet(path).set_index(["e1", "e2"])["mm_percent"]
    assert sorted(after.index) == sorted(first.index)
    for pair, mm in after.items():
        assert mm == (first[pair] if drop in pair else 42.0), pair
    (comp,) = pd.read_parquet(out / "comparability.parquet").to_dict("records")
    assert comp["max_mm_percent"] == 42.0 and not comp["comparable"]
    # a mismatch.parquet written before the stamps: every pair is computed again
    pq.write_table(planted.drop_columns(["e1_stamp", "e2_stamp"]), path)
    aggregate(Store(out))
    assert pd.read_parquet(path).set_index(["e1", "e2"])["mm_percent"].equals(first)


# A stop whose KeyboardInterrupt Python loses: SIGTERM sent while the main thread runs a weakref
# callback ("between"; where `kill` landed between two YABench cells, as C-SPARQL's driver
# started) or a garbage-collection callback ("during" a run: the feed loop allocates); the
# handler's exception is printed as "Exception ignored" and the command went on.
LOST_STOP = """
import gc, os, signal, sys, threading, weakref
from pathlib import Path
from rsp_sdk.cli import install_signal_handlers
from rsp_sdk.matrix.run import run_matrix
from rsp_sdk.matrix.spec import load_spec

class Garbage:
    pass

def between(p):
    if p.event == "done" and not os.environ.get("SENT"):
        os.environ["SENT"] = "1"
        g = Garbage()
        ref = weakref.ref(g, lambda _: os.kill(os.getpid(), signal.SIGTERM))
        del g

armed = threading.Event()

def on_gc(phase, info):
    if phase == "start" and armed.is_set() and threading.current_thread() is threading.main_thread():
        armed.clear()
        os.kill(os.getpid(), signal.SIGTERM)

if sys.argv[3] == "during":
    gc.callbacks.append(on_gc)
    gc.set_threshold(10)
    threading.Timer(3.0, armed.set).start()  # the engine is fed by then
install_signal_handlers()
spec = Path(sys.argv[1])
try:
    run_matrix(load_spec(spec), spec, Path(sys.argv[2]),
               progress=between if sys.argv[3] == "between" else None)
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.parametrize("when", ["between", "during"])
def test_a_stop_whose_keyboardinterrupt_is_lost_still_stops_the_matrix(
    tmp_path: Path, when: str
) -> None:
    """A signal handler's KeyboardInterrupt is lost when it lands in a finalizer or a weakref
    callback: a YABench matrix stopped with ``kill`` ran its next cell to the end. The handler
    also requests the stop process-wide: between cells, no further cell starts; during a run,
    its engine is killed and the run recorded as interrupted (on the old code: every cell
    ran, exit 0)."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, KILL_SPEC if when == "between" else TERM_SPEC)
    out = tmp_path / "results"
    script = tmp_path / "stop.py"
    script.write_text(LOST_STOP)
    proc = subprocess.run(
        [sys.executable, str(script), str(spec), str(out), when],
        env=env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert "Exception ignored" in proc.stderr, proc.stderr  # the interrupt was lost
    assert proc.returncode == 130, proc.stderr
    finished = list(out.glob("cells/*/cell.json"))
    assert len(finished) == (1 if when == "between" else 0)
    if when == "during":
        (cell,) = (out / "cells").iterdir()
        assert json.loads((cell / "status.json").read_text())["state"] == "interrupted"
        assert not [p for p in psutil.process_iter() if _engine_of(p, out)]


def _engine_of(p: psutil.Process, out: Path) -> bool:
    """Whether ``p`` is a fixture engine started for the results folder ``out``."""
    try:
        return "py_engine" in " ".join(p.cmdline()) and p.cwd().startswith(str(out))
    except psutil.Error:  # gone meanwhile
        return False


def test_an_engine_error_after_a_stop_request_ends_the_run_as_interrupted(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library may turn the KeyboardInterrupt into an error of its own: py4j 0.10.9.9's
    handler calls a method its GatewayConnection lacks (AttributeError), our bridge launch then
    reported "cannot connect to the bridge server" and the matrix recorded the cell as failed —
    a finished cell a resumed matrix would not run again (once in 23 SIGTERMs at a CSRBench
    cell boundary). Once a stop is requested, a verb that fails is the stop's doing: the run
    is recorded as interrupted and raises KeyboardInterrupt. Here the request comes while push 2
    hangs, before the stop's own thread kills the engine (held back), and the verb times out."""
    write_inputs(tmp_path)
    monkeypatch.setattr(deadline, "interrupt_runs", lambda: 0)  # the stop's thread: not yet
    fired: list[threading.Timer] = []

    def progress(done: int, total: int) -> None:  # after push 1: request the stop during push 2
        if not fired:
            fired.append(threading.Timer(0.5, deadline.request_stop))
            fired[0].start()

    request = RunRequest(
        engine="toy-py",
        runtime="subprocess",
        query=tmp_path / "q1.rspql",
        stream=tmp_path / "stream.parquet",
        output=tmp_path / "run",
        feeder=FeederConfig(mode=PacingMode.AFAP, batch_size=50),
        engine_config={"hang_on_push": 2},
        timeouts=Timeouts(push=3),
    )
    try:
        with pytest.raises(KeyboardInterrupt):
            run(request, progress=progress)
    finally:
        deadline.clear_stop()
    assert fired and deadline.stop_requested() is False
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert (status["state"], status["batches_pushed"]) == ("interrupted", 1), status


FAULT_SPEC = """
metrics = ["perf"]
[limits]
timeout_s = 3
[[engines]]
name = "toy-py"
engine_config = { hang_on_push = 1 }
[[engines]]
name = "toy-py"
engine_config = { crash_on_push = 1 }
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
"""


def test_hung_and_crashing_engines_are_recorded_and_the_matrix_goes_on(
    toy: None, tmp_path: Path
) -> None:
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, FAULT_SPEC)
    out = tmp_path / "out"
    result = run_matrix(load_spec(spec_path), spec_path, out)
    states = [r["state"] for r in result.rows]
    assert states == ["timeout", "failed", "ok"], [r.get("reason") for r in result.rows]
    assert "simulated crash" in (result.rows[1]["reason"] or "")
    assert [r["outcome"] for r in result.rows] == ["timeout", "crashed", "not_judged"]
    ok_json = out / "cells" / result.rows[2]["key"] / "cell.json"
    before = ok_json.stat().st_mtime_ns
    again = run_matrix(load_spec(spec_path), spec_path, out, retry_failed=True)
    assert (again.ran, again.skipped) == (2, 1)
    assert [r["state"] for r in again.rows] == ["timeout", "failed", "ok"]
    assert ok_json.stat().st_mtime_ns == before
    assert len(list((out / "retried").iterdir())) == 2  # the first attempts are kept


# FAULT_SPEC's hanging and healthy engines over three repetitions, skipping after a timeout
SKIP_SPEC = "repetitions = 3\n" + FAULT_SPEC.replace(
    '[[engines]]\nname = "toy-py"\nengine_config = { crash_on_push = 1 }\n', ""
).replace("timeout_s = 3\n", "timeout_s = 3\nskip_after_timeout = true\n")


def test_after_a_timeout_the_later_repetitions_are_skipped_with_the_reason(
    toy: None, tmp_path: Path
) -> None:
    """An engine that overran once overruns again: with limits.skip_after_timeout its later
    repetitions are recorded as skipped, naming the one that timed out, and --retry-failed
    runs them again (here to the same end). The setting is not part of the cell keys."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, SKIP_SPEC)
    out = tmp_path / "out"
    result = run_matrix(load_spec(spec_path), spec_path, out)
    states = [(r["repetition"], r["state"]) for r in result.rows]
    assert sorted(states) == [
        (1, "ok"),
        (1, "timeout"),
        (2, "ok"),
        (2, "skipped"),
        (3, "ok"),
        (3, "skipped"),
    ]
    skipped = [r for r in result.rows if r["state"] == "skipped"]
    assert all(r["reason"].startswith("not run: repetition 1 timed out: ") for r in skipped)
    assert all(r["outcome"] == "skipped" and r["run_dir"] is None for r in skipped)
    assert (result.ran, result.after_timeout) == (4, 2)
    unskipped = write_spec(tmp_path, SKIP_SPEC.replace("skip_after_timeout = true", ""), "b.toml")
    keys = {c.key for c in planned(load_spec(unskipped), unskipped, tmp_path / "b")[1]}
    assert keys == {r["key"] for r in result.rows}
    again = run_matrix(load_spec(spec_path), spec_path, out, retry_failed=True)
    assert (again.ran, again.skipped, again.after_timeout) == (1, 3, 2)
    assert sorted(r["state"] for r in again.rows if r["state"] != "ok") == [
        "skipped",
        "skipped",
        "timeout",
    ]
    assert len(list((out / "retried").iterdir())) == 3


def test_rerun_measures_the_selected_finished_cells_again(toy: None, tmp_path: Path) -> None:
    """A cell measured beside another load is re-measured with --rerun --only: its old run
    is kept under retried/, the cells not selected are skipped untouched."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, FAULT_SPEC)
    out = tmp_path / "out"
    first = run_matrix(load_spec(spec_path), spec_path, out)
    ok = next(r for r in first.rows if r["state"] == "ok")
    kept = {
        r["key"]: (out / "cells" / r["key"] / "cell.json").stat().st_mtime_ns for r in first.rows
    }
    again = run_matrix(
        load_spec(spec_path), spec_path, out, only=[f"key={ok['key'][:12]}"], rerun=True
    )
    assert (again.ran, again.skipped) == (1, 0)
    [old] = list((out / "retried").iterdir())
    assert old.name.startswith(ok["key"]) and (old / "cell.json").exists()
    new = json.loads((out / "cells" / ok["key"] / "cell.json").read_text())
    assert new["state"] == "ok" and new["started_at"] != ok["started_at"]
    for key, mtime in kept.items():  # the others: untouched
        if key != ok["key"]:
            assert (out / "cells" / key / "cell.json").stat().st_mtime_ns == mtime
    assert run_matrix(load_spec(spec_path), spec_path, out).ran == 0  # and done again


DOCKER_SPEC = """
metrics = ["perf"]
[[engines]]
name = "rspjs"
runtimes = ["docker"]
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
"""


def test_a_runtime_without_its_daemon_is_unavailable_until_it_is_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no Docker daemon reachable the docker cells are planned unavailable, the reason
    saying how to start one (they used to run and fail one by one); once a daemon answers, the
    next run runs them — an unavailable record does not count as done."""
    from rsp_sdk.images.client import docker_unavailable
    from tests.real_engines import engine_missing

    missing = engine_missing("rspjs", host=False) or docker_unavailable()
    if missing:
        pytest.skip(missing)
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, DOCKER_SPEC)
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        m.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-daemon.sock")
        [row] = run_matrix(load_spec(spec_path), spec_path, out).rows
    assert row["state"] == "unavailable", row
    assert "no Docker daemon is reachable" in row["reason"] and "dockerd" in row["reason"]
    again = run_matrix(load_spec(spec_path), spec_path, out)
    [row] = again.rows
    assert again.ran == 1 and row["state"] == "ok", row.get("reason")
    [old] = list((out / "retried").iterdir())
    assert json.loads((old / "cell.json").read_text())["state"] == "unavailable"


JUDGE_SPEC = """
metrics = ["csrbench"]
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
"""


def test_a_matrix_interrupted_while_judging_judges_on_rerun_without_rerunning_the_engine(
    toy: None, rsp_exe: list[str], tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) as soon as the engine's run
    is recorded ok and the oracle is judging it; the rerun (in this process: its Spark session
    is shared with the other tests) judges the recorded run and does not start the engine
    again: its run directory is untouched and nothing is set aside."""
    write_inputs(tmp_path)
    spec = write_spec(tmp_path, JUDGE_SPEC)
    out = tmp_path / "results"
    cmd = [*rsp_exe, "matrix", "run", str(spec), "-o", str(out)]
    proc = subprocess.Popen(
        cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    status: Path | None = None
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            hits = list(out.glob("cells/*/status.json"))
            if hits and json.loads(hits[0].read_text() or "{}").get("state") == "ok":
                status = hits[0]
                break
            time.sleep(0.05)
        assert status is not None, "the engine's run never finished"
        tree: list[psutil.Process] = []
        while time.monotonic() < deadline and not any("java" in _name(p) for p in tree):
            tree = psutil.Process(proc.pid).children(recursive=True)  # the oracle's JVM
            time.sleep(0.05)
        assert not (status.parent / "cell.json").exists()  # judging is under way
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert proc.returncode == 130, err.decode()
    # the JVM PySpark was launching is gone with the matrix (it used to wait forever)
    _, alive = psutil.wait_procs([p for p in tree if _proc(p.pid) is not None], timeout=30)
    assert not [p for p in alive if _proc(p.pid) is not None], [_name(p) for p in alive]
    cell_json = status.parent / "cell.json"
    # an interrupted judgement is no finding: no cell.json (it used to be recorded not_judged
    # when the cancelled Spark action failed with a Py4J error instead of KeyboardInterrupt)
    assert not cell_json.exists(), cell_json.read_text()
    recorded = {p: p.stat().st_mtime_ns for p in status.parent.glob("*.parquet/*")}
    status_mtime = status.stat().st_mtime_ns
    rerun = run_matrix(load_spec(spec), spec, out)
    assert (rerun.ran, rerun.judged, rerun.skipped) == (0, 1, 0)
    row = json.loads(cell_json.read_text())
    assert (row["state"], row["verdict"], row["outcome"]) == ("ok", "correct", "correct")
    assert row["reason"] is None and row["relations"] > 0 and row["triples_pushed"] == SC.triples
    assert status.stat().st_mtime_ns == status_mtime  # the engine was not run again
    assert {p: p.stat().st_mtime_ns for p in status.parent.glob("*.parquet/*")} == recorded
    assert not (out / "killed").exists()
    assert (status.parent / "verdict.json").exists()
    assert list(pd.read_parquet(out / "cells.parquet")["verdict"]) == ["correct"]
    again = run_matrix(load_spec(spec), spec, out)
    assert (again.ran, again.judged, again.skipped) == (0, 0, 1)  # judged once, then done


DEADLINE_SPEC = """
metrics = ["perf"]
[limits]
cell_timeout_s = 4
drain_quiet_s = 0.5
[[engines]]
name = "toy-py"
engine_config = { push_delay_ms = 300 }
[[engines]]
name = "toy-py"
engine_config = { hang_on_push = 2 }
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
batch_size = 10
"""


def test_a_cell_overrunning_its_whole_run_deadline_is_killed_and_the_matrix_goes_on(
    toy: None, tmp_path: Path
) -> None:
    """40 pushes of 10 triples: the first engine answers every push, each in 0.3 s (12 s in
    all, no verb ever times out), the second hangs on its second push; a 4 s cell deadline
    kills both, leaves no process behind, and the third cell runs as usual."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, DEADLINE_SPEC)
    out = tmp_path / "out"
    started = time.monotonic()
    result = run_matrix(load_spec(spec_path), spec_path, out)
    assert time.monotonic() - started < 40
    slow, hung, fine = result.rows
    assert [r["state"] for r in result.rows] == ["timeout", "timeout", "ok"], result.rows
    assert "cell_timeout_s" in slow["reason"] and slow["wall_s"] < 10
    assert 0 < slow["triples_pushed"] < SC.triples  # cut short, what was pushed is recorded
    assert hung["wall_s"] < 10 and fine["triples_pushed"] == SC.triples
    assert [r["outcome"] for r in result.rows] == ["timeout", "timeout", "not_judged"]
    for row in (slow, hung):
        status = json.loads((out / row["run_dir"] / "status.json").read_text())
        assert status["error_type"] in ("RunTimeout", "EngineTimeout")
        assert _proc(status["engine_pid"]) is None  # the engine is gone
    status = json.loads((out / slow["run_dir"] / "status.json").read_text())
    assert status["error_type"] == "RunTimeout"


def test_a_cell_whose_judging_failed_is_listed_with_why() -> None:
    """verdict not_judged with a reason (the oracle or the judge raised) is a cell without a
    correct verdict: the table names it, as it names incorrect ones; a cell that was simply
    not asked for a verdict is not listed."""
    from rich.console import Console

    from rsp_sdk.cli.matrix_tables import reasons_table

    rows = [
        {"label": "a", "state": "ok", "verdict": "not_judged", "reason": "judging failed: X"},
        {"label": "b", "state": "ok", "verdict": "not_judged", "reason": None},
        {"label": "c", "state": "ok", "verdict": "correct", "reason": None},
    ]
    console = Console(record=True, width=200)
    console.print(reasons_table(rows, "t"))
    text = console.export_text()
    assert "judging failed: X" in text
    assert " b " not in text and " c " not in text


def test_repetitions_that_failed_alike_are_one_row_and_a_race_shows_its_odds() -> None:
    """Ten repetitions of a deterministic wrong answer are one row naming them (rep=1–3), a
    repetition that failed otherwise keeps its own row beside it, and the verdict grid counts
    each outcome when repetitions disagree."""
    from rich.console import Console

    from rsp_sdk.cli.matrix_tables import reasons_table, verdict_table

    def row(engine: str, stream: str, rep: int, verdict: str, why: str | None) -> dict[str, Any]:
        label = f"{engine}@py4j/q/{stream}/afap/rep={rep}"
        return {
            "label": label,
            "engine": engine,
            "runtime": "py4j",
            "query": "q",
            "stream": stream,
            "repetition": rep,
            "state": "ok",
            "verdict": verdict,
            "t0_ms": 0 if verdict == "correct" else None,
            "divergence": why,
        }

    rows = [row("e", "s1", rep, "incorrect", "relation 2 differs") for rep in (1, 2, 3)]
    rows += [row("e", "s1", 5, "incorrect", "relation 7 differs")]
    rows += [row("f", "s1", 1, "correct", None), row("e", "s2", 1, "correct", None)]
    rows += [row("e", "s2", rep, "incorrect", "no relation matches") for rep in (2, 4)]
    console = Console(record=True, width=200)
    console.print(reasons_table(rows, "t"))
    listed = [line for line in console.export_text().splitlines() if "@py4j/" in line]
    cells = [line.split("│")[1].strip() for line in listed]
    assert cells == [
        "e@py4j/q/s1/afap/rep=1–3",
        "e@py4j/q/s1/afap/rep=5",
        "e@py4j/q/s2/afap/rep=2,4",
    ], listed
    console = Console(record=True, width=200)
    console.print(verdict_table(rows, "v", console.width))
    grid = console.export_text()
    # e on s1: four incorrect, no count; on s2: rep 1 correct, reps 2 and 4 not
    assert re.search(r"e@py4j\s+│ incorrect\s+│ 1 correct/2 incorrect", grid), grid


def test_comparability_of_agreeing_repetitions_is_one_row() -> None:
    """LSBench comparability: repetitions with the same engines, maximum and answer share a
    row naming them; one whose maximum differs keeps its own."""
    from rich.console import Console

    from rsp_sdk.cli.matrix_tables import comparability_table

    def comp(rep: int, mm: float) -> dict[str, Any]:
        return {
            "query": "q",
            "stream": "s",
            "feeding": "afap",
            "rate": None,
            "time_scale": None,
            "repetition": rep,
            "engines": "a@py4j, b@py4j",
            "max_mm_percent": mm,
            "comparable": mm <= 5,
            "epsilon_percent": 5.0,
        }

    comps = [comp(1, 2.0), comp(2, 2.0), comp(3, 40.0), comp(4, 2.0)]
    console = Console(record=True, width=200)
    console.print(comparability_table(comps, "c"))
    lines = [line for line in console.export_text().splitlines() if "a@py4j" in line]
    cells = [[part.strip() for part in line.split("│")[1:-1]] for line in lines]
    assert [(c[4], c[6], c[7]) for c in cells] == [
        ("1–2,4", "2.0", "yes (ε 5 %)"),
        ("3", "40.0", "no (ε 5 %)"),
    ], cells


class _ToyNeedsToken(ToyPyAdapter):
    name = "toy-needs"
    required_config: ClassVar[Mapping[str, str]] = {
        "token": "what the toy engine signs its answers with"
    }


NEEDS_SPEC = """
[[engines]]
name = "toy-needs"
[[engines]]
name = "toy-py"
engine_config = { token = "x" }
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["afap"]
"""


def test_a_cell_whose_engine_config_lacks_a_required_key_is_refused_up_front(
    tmp_path: Path,
) -> None:
    """An adapter's ``required_config`` (SPARQLstream's R2RML mapping) refuses the cell in the
    plan with the reason, runs nothing for it, and ``rsp run`` stops with one usage error."""
    from rsp_adapter_sparqlstream.adapter import SparqlStreamAdapter

    registry.register(_ToyNeedsToken())
    registry.register(ToyPyAdapter())
    try:
        write_inputs(tmp_path)
        spec_path = write_spec(tmp_path, NEEDS_SPEC)
        spec = load_spec(spec_path)
        streams = prepare(spec, spec_path, tmp_path / "inputs")
        by = {c.engine: c for c in plan(spec, spec_path, streams)}
        assert by["toy-needs"].state is CellState.REFUSED
        assert by["toy-needs"].reason == (
            "toy-needs needs engine_config token (token: what the toy engine signs its answers "
            "with)"
        )
        assert by["toy-py"].state is CellState.PLANNED  # declares nothing: any config runs
        with pytest.raises(InputError, match="toy-needs needs engine_config token"):
            run(
                RunRequest(
                    engine="toy-needs",
                    runtime="subprocess",
                    query=tmp_path / "q1.rspql",
                    stream=tmp_path / "stream.parquet",
                    output=tmp_path / "run",
                    feeder=FeederConfig(mode=PacingMode.AFAP),
                ),
                adapter=_ToyNeedsToken(),
            )
        assert not (tmp_path / "run").exists()  # nothing half-written
    finally:
        registry.unregister("toy-needs")
        registry.unregister("toy-py")
    ss = SparqlStreamAdapter()
    assert "sparqlstream needs engine_config mapping" in (ss.check_config({}) or "")
    assert ss.check_config({"mapping": "m.ttl"}) is None


def test_the_tables_fit_an_80_column_terminal_without_cutting_a_header_or_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CSRBench's seven queries × seven engines: at COLUMNS=80 the verdict grid would blank
    the query headers, so it prints one row per engine × query; the performance table takes
    short headers with a legend. Nothing is cut (no "…"), no line is wider than 80."""
    from rich.console import Console

    from rsp_sdk.cli.matrix_tables import perf_table, verdict_table

    engines = ["csparql", "csparql09", "cqels", "sparqlstream", "rspjs", "etalis", "jtalis"]
    queries = [f"q{i}" for i in range(1, 8)]
    rows = [
        {
            "engine": e,
            "runtime": "py4j",
            "query": q,
            "state": "ok",
            "verdict": "incorrect" if q == "q3" else "correct",
            "t0_ms": None if q == "q3" else 1000 + i,
            "rate_achieved": 123456.0,
            "time_per_triple_us": 12.3,
            "latency_ms_p50": 12.0,
            "latency_ms_p95": 4567.0,
            "peak_rss_mb": 1234.0,
            "wall_s": 3.0,
        }
        for i, e in enumerate(engines)
        for q in queries
    ]
    monkeypatch.setenv("COLUMNS", "80")
    for wide in (False, True):
        console = Console(record=True, width=None if not wide else 250)
        console.print(verdict_table(rows, "verdicts (t0 ms)", console.width))
        console.print(perf_table(rows, "performance (medians)", console.width))
        text = console.export_text()
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= console.width and "…" not in text
        grid = [line for line in lines if "engine@runtime" in line]
        assert all(f" {q} " in grid[0] for q in queries) == wide, grid[0]
        for i, e in enumerate(engines):
            row = next(line for line in lines if f"{e}@py4j " in line)
            assert ("correct " + str(1000 + i)) in (row if wide else text)
            assert "123456" in text and "4567" in text and "1234" in text
        if not wide:  # one row per engine × query: each query on a line of its own
            assert console.width == 80
            assert sum(1 for line in lines if " q3 " in line and "incorrect" in line) == 7
            assert "tr/s: triples/s reached" in text


def test_a_report_headline_table_wider_than_the_terminal_is_folded_not_cut() -> None:
    """`rsp report`'s headline tables (the functional suite: 19 queries) at 80 columns: one
    row per engine × query instead of a grid of "…"; a narrow table prints as a grid."""
    import pandas as pd
    from rich.console import Console

    from rsp_sdk.cli.matrix_tables import frame_table

    queries = [f"query_number_{i}" for i in range(19)]
    frame = pd.DataFrame(
        [[e, *(f"correct {i}" for i in range(19))] for e in ("rspjs@subprocess", "cqels@py4j")],
        columns=["engine@runtime", *queries],
    )
    console = Console(record=True, width=80)
    console.print(frame_table("Verdict per engine@runtime and query", frame, console.width))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    assert all(q in text for q in queries) and "correct 18" in text
    assert sum(1 for line in text.splitlines() if "cqels@py4j" in line) == 1
    narrow = Console(record=True, width=80)
    narrow.print(frame_table("cells", frame.iloc[:, :3], narrow.width))
    grid = next(line for line in narrow.export_text().splitlines() if "engine@runtime" in line)
    assert "query_number_0" in grid and "query_number_1" in grid


def _listening(p: psutil.Process) -> bool:
    try:
        return any(c.status == psutil.CONN_LISTEN for c in p.net_connections())
    except psutil.Error:
        return False


class _ToyWallClock(ToyPyAdapter):
    """The toy engine declared a wall-clock engine (no APP_TIME_INPUT), as CQELS is."""

    name = "toy-wall"
    capabilities = Capabilities.of(Feature.AGGREGATES, Feature.RSTREAM)


WALL_SPEC = """
metrics = ["csrbench", "perf"]
[[engines]]
name = "toy-wall"
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["time-scale", "rate"]
time_scales = [1, 2]
rates = [400]
"""


def test_a_wall_clock_engine_is_judged_on_windows_scaled_by_its_feeding_speed(
    tmp_path: Path,
) -> None:
    """A wall-clock engine's windows are wall seconds: fed s application ms per wall ms (a time
    scale, or a rate as the scale giving the stream that mean rate) they hold ω·s of
    application time, so the oracle judges it on windows s times as long and verdict.json
    says by how much (a real engine in tests/test_wallclock.py). At speed 1 and on
    application-time engines at any pace the windows are judged as written."""
    registry.register(_ToyWallClock())
    registry.register(ToyPyAdapter())
    try:
        write_inputs(tmp_path)
        spec_path = write_spec(tmp_path, WALL_SPEC)
        spec = load_spec(spec_path)
        # its last 1 s window closes 1 s of wall time after the last push at any pace: the
        # drain waits ω + β + 2 s (C-SPARQL 0.9 at LSBench's time scale 20.5 was cut off)
        cells = plan(spec, spec_path, prepare(spec, spec_path, tmp_path / "inputs"))
        quiet = {(c.engine, c.label.split("/")[2]): c.drain_quiet_s for c in cells}
        assert {q for (e, _), q in quiet.items() if e == "toy-wall"} == {4.0}
        assert {q for (e, _), q in quiet.items() if e == "toy-py"} == {2.0}
        result = run_matrix(spec, spec_path, tmp_path / "out")
        scales = {}
        for row in result.rows:
            assert row["state"] == "ok" and row["verdict"] != "not_judged", row
            judged = json.loads((tmp_path / "out" / row["run_dir"] / "verdict.json").read_text())
            scales[(row["engine"], row["label"].split("/")[2])] = judged.get("window_scale")
        # 400 triples/s replays the stream's mean rate (triples per application second)
        # 400 / rate times faster
        t = SC.table().column("t_app_ms").to_pylist()
        mean_rate = len(t) / ((max(t) - min(t)) / 1000)
        assert scales == {
            ("toy-wall", "time-scale=1"): None,
            ("toy-wall", "time-scale=2"): 2.0,
            ("toy-wall", "rate=400"): pytest.approx(400 / mean_rate),
            ("toy-py", "time-scale=1"): None,
            ("toy-py", "time-scale=2"): None,
            ("toy-py", "rate=400"): None,
        }
    finally:
        registry.unregister("toy-wall")
        registry.unregister("toy-py")


SPLIT_SPEC = """
metrics = ["csrbench"]
instances = [1, 3]
[[engines]]
name = "toy-py"
[[queries]]
files = ["q1.rspql"]
[feeding]
modes = ["time-scale", "afap"]
time_scales = [1, 2]
[[exclude]]
time_scale = 2
instances = 3
"""


def test_time_scale_and_instances_are_axes_of_only_and_of_the_rules(
    toy: None, tmp_path: Path
) -> None:
    """CityBench's ×1/×10 and its 1/10/20 instances are axes like any other: ``--only
    time_scale=1`` picks the real-time replays (their feeding is ``time-scale`` either way), and
    an exclude rule can drop one corner of the grid (here 3 instances at time scale 2)."""
    write_inputs(tmp_path)
    spec_path = write_spec(tmp_path, SPLIT_SPEC)
    spec = load_spec(spec_path)
    cells = plan(spec, spec_path, prepare(spec, spec_path, tmp_path / "inputs"))
    grid = {(c.instances, c.axes()["time_scale"]) for c in cells}
    assert grid == {(1, 1.0), (1, 2.0), (1, None), (3, 1.0), (3, None)}
    picked = select(cells, ["time_scale=1"])
    assert {c.label.split("/")[-2] for c in picked} == {"time-scale=1"}
    assert {c.instances for c in picked} == {1, 3}
    assert {c.instances for c in select(cells, ["instances=3,feeding=afap"])} == {3}
