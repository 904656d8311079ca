"""Engine fingerprinting (``rsp engines probe``): the probe recovers the profiles the fixture
engines and rsp-js declare, tells the Python fixture's alternative SECRET choices apart, and
leaves undecided what its outputs cannot show.

Every run is a real engine (the fixture programs, rsp-js on Node) fed the probe streams; the
expected values are the fixture knobs' documented semantics (tests/fixtures/py_engine.py), an
independent statement of what the engine does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.model.profile import Profile, load_profile
from rsp_sdk.probe import FieldName, Fingerprint, ProbeSettings, inferred_profile, probe_engine
from tests.conftest import run_rsp
from tests.fixtures.adapters import ToyJavaAdapter, ToyPyAdapter

F = FieldName

# what both fixture engines do by default (ToyEngine.java and py_engine.py): windows at
# multiples of STEP from 0, [o, c), reported at close if non-empty, empty relations, Rstream
TOY_OBSERVED = {
    F.CLOCK: "application",
    F.T0_PHASE: "zero",
    F.T0: "before-data",
    F.WINDOW_BOUNDS: "left-closed",
    F.REPORT: "window_close",
    F.NON_EMPTY_CONTENT: "true",
    F.R2S: "rstream",
    F.EMPTY_RELATIONS: "true",
}


def probe_py(config: dict[str, Any] | None = None) -> Fingerprint:
    # the Python fixture answers synchronously: a short quiet period is enough
    settings = ProbeSettings(runtime="subprocess", config=config or {}, quiet_s=0.3)
    return probe_engine(ToyPyAdapter(), settings)


def values(fp: Fingerprint) -> dict[FieldName, str | None]:
    return {name: f.value for name, f in fp.findings.items()}


def assert_toy_default(fp: Fingerprint) -> None:
    found = values(fp)
    for name, value in TOY_OBSERVED.items():
        assert found[name] == value, (name, fp.findings[name])
    # window-close content does not depend on the tick or a time unit: never guessed
    for name in (F.TICK, F.TIME_UNIT):
        assert found[name] is None
        assert "whatever drives the engine" in fp.findings[name].reason
    # TOY_PROFILE declares t0 = STEP multiples from 0 (windows open before the data), which the
    # probe first found missing from the declaration: no difference left
    assert fp.differences == []


def test_probe_recovers_the_python_fixture_profile() -> None:
    fp = probe_py()
    assert_toy_default(fp)
    profile = inferred_profile(fp)
    declared = ToyPyAdapter.profile
    assert (profile.report, profile.r2s, profile.emits_empty_relations) == (
        declared.report,
        declared.r2s,
        declared.emits_empty_relations,
    )
    assert [e.probe for e in fp.findings[F.WINDOW_BOUNDS].evidence] == ["bounds"]


def test_probe_recovers_the_java_fixture_profile(toy_cache: Any) -> None:
    settings = ProbeSettings(runtime="jpype", quiet_s=0.5, cache=toy_cache)
    assert_toy_default(probe_engine(ToyJavaAdapter(), settings))


# (engine_config, the findings that must change, and to what)
ALTERNATIVES: dict[str, tuple[dict[str, Any], dict[FieldName, str | None]]] = {
    "right-closed": ({"bounds": "right"}, {F.WINDOW_BOUNDS: "right-closed"}),
    "content-change": (
        {"report": "content_change"},
        {F.REPORT: "content_change", F.TICK: "tuple_driven", F.NON_EMPTY_CONTENT: None},
    ),
    "content-change-batch": (
        {"report": "content_change", "tick": "batch"},
        {F.REPORT: "content_change", F.TICK: "batch_driven", F.NON_EMPTY_CONTENT: None},
    ),
    "istream": ({"r2s": "istream"}, {F.R2S: "istream"}),
    "dstream": (
        {"r2s": "dstream"},
        {F.R2S: "dstream", F.T0: None, F.EMPTY_RELATIONS: None, F.NON_EMPTY_CONTENT: None},
    ),
    "t0-first-element": ({"t0": "first"}, {F.T0_PHASE: "first-element", F.T0: "at-data"}),
    "empty-windows-reported": ({"non_empty": False}, {F.NON_EMPTY_CONTENT: "false"}),
    "no-empty-relations": ({"empty_relations": False}, {F.EMPTY_RELATIONS: "false"}),
    # CQELS-like: every relation holds only the new element; the COUNT(?s) grid shows the edges
    "content-change-istream": (
        {"report": "content_change", "r2s": "istream"},
        {
            F.REPORT: "content_change",
            F.TICK: "tuple_driven",
            F.R2S: "istream",
            F.NON_EMPTY_CONTENT: None,
        },
    ),
}


@pytest.fixture(scope="module")
def alternative_prints() -> dict[str, Fingerprint]:
    return {name: probe_py(config) for name, (config, _) in ALTERNATIVES.items()}


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_probe_tells_each_alternative_choice_apart(
    name: str, alternative_prints: dict[str, Fingerprint]
) -> None:
    _, changed = ALTERNATIVES[name]
    found = values(alternative_prints[name])
    for field, value in changed.items():
        assert found[field] == value, (field, alternative_prints[name].findings[field])
    # every field the alternative leaves alone keeps the default's decided value
    for field, value in TOY_OBSERVED.items():
        if field not in changed and field is not F.T0:
            assert found[field] == value, (name, field, alternative_prints[name].findings[field])


def test_no_two_alternatives_share_a_fingerprint(
    alternative_prints: dict[str, Fingerprint],
) -> None:
    seen = {
        name: tuple(sorted((k.value, str(v)) for k, v in values(fp).items()))
        for name, fp in alternative_prints.items()
    }
    assert len(set(seen.values())) == len(seen), seen


def test_undecided_fields_say_why_and_show_the_output(
    alternative_prints: dict[str, Fingerprint],
) -> None:
    fp = alternative_prints["dstream"]
    t0 = fp.findings[F.T0]
    assert t0.value is None
    assert "the R2S operator is dstream" in t0.reason
    assert [e.probe for e in t0.evidence] == ["sliding_rstream"]
    assert "{e1, e2}" in t0.evidence[0].observed
    # per-element Istream relations hide windows; the COUNT(?s) grid is the evidence used
    phase = alternative_prints["content-change-istream"].findings[F.T0_PHASE]
    assert [e.probe for e in phase.evidence] == ["grid_count"]
    assert "count 1; 11500: count 2; 11750: count 3; 12000: count 1" in phase.evidence[0].observed


def test_cli_prints_the_fingerprint_and_writes_a_profile_the_oracle_loads(
    rsp_exe: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RSP_ADAPTERS", "tests.fixtures.adapters:ToyPyAdapter")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    out = tmp_path / "toy.toml"
    proc = run_rsp(
        rsp_exe,
        "engines", "probe", "toy-py", "--engine-config", '{"bounds": "right"}',
        "-o", out, "--json",
    )  # fmt: skip
    data = json.loads(proc.stdout)
    assert data["findings"]["window_bounds"]["value"] == "right-closed"
    assert {"field": "window_bounds", "declared": "left-closed", "inferred": "right-closed"} in (
        data["differences"]
    )
    profile = load_profile(out)
    assert profile == Profile.model_validate(data["profile"])
    text = out.read_text()
    assert "# window_bounds: observed: right-closed" in text
    assert "# tick: undecided, declared value kept" in text
    human = run_rsp(rsp_exe, "engines", "probe", "toy-py", "--engine-config", '{"bounds": "right"}')
    assert "differs: window_bounds declared left-closed, inferred right-closed" in human.stdout
    agreeing = run_rsp(rsp_exe, "engines", "probe", "toy-py")
    assert "no difference from the declared profile" in agreeing.stdout


def test_a_bad_engine_config_is_one_clean_error(
    rsp_exe: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RSP_ADAPTERS", "tests.fixtures.adapters:ToyPyAdapter")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    proc = run_rsp(rsp_exe, "engines", "probe", "toy-py", "--engine-config", "{", check=False)
    assert proc.returncode == 2
    assert "--engine-config is not JSON" in proc.stderr
    proc = run_rsp(
        rsp_exe, "engines", "probe", "toy-py", "--engine-config", '{"bounds": "up"}', check=False
    )
    assert proc.returncode == 2
    assert "bounds must be one of left, right" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_probe_recovers_the_rspjs_profile() -> None:
    from rsp_adapter_rspjs import RspJsAdapter

    from tests.real_engines import engine_missing

    reason = engine_missing("rspjs")
    if reason:
        pytest.skip(reason)
    adapter = RspJsAdapter()
    fp = probe_engine(adapter, ProbeSettings(runtime="subprocess"))
    found = values(fp)
    assert found == {
        F.CLOCK: "application",
        F.T0: "before-data",
        F.T0_PHASE: "zero",
        F.WINDOW_BOUNDS: "left-closed",
        F.REPORT: "window_close",
        # COUNT(?s) over a window with data but no binding gives no row in rsp-js either
        F.NON_EMPTY_CONTENT: None,
        F.TICK: None,
        F.TIME_UNIT: None,
        F.R2S: "rstream",
        F.EMPTY_RELATIONS: "false",
    }
    # windows closing at multiples of STEP from 0, the first ones partial (docs/engines/rspjs.md),
    # declared as first_ms = 0 with the ω − β lead
    assert fp.differences == []
    assert inferred_profile(fp).t0 == adapter.profile.t0


def test_a_crashing_engine_leaves_every_field_undecided_and_nothing_running() -> None:
    import psutil

    fp = probe_py({"crash_on_push": 3})  # dies on the third batch of every probe
    assert all(f.value is None for f in fp.findings.values()), values(fp)
    assert "the grid probe failed" in fp.findings[F.CLOCK].reason
    assert [p.name for p in fp.probes] == ["grid", "report", "empty_select", "empty_count"]
    assert all("simulated crash in push 3" in p.output for p in fp.probes)
    assert _running_py_engines(psutil.Process()) == []


def _running_py_engines(me: Any) -> list[int]:
    """PIDs of fixture engines still running under this process. A zombie (an exited child
    some earlier test's Popen has not reaped yet) runs nothing and has no command line."""
    import psutil

    left = []
    for p in me.children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and "py_engine" in " ".join(p.cmdline()):
                left.append(p.pid)
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return left


def test_a_wall_clock_engine_is_recognised_and_nothing_else_is_guessed() -> None:
    fp = probe_py({"clock": "wall"})
    clock = fp.findings[F.CLOCK]
    assert clock.value == "wall"
    # all 21 elements (5 s of timestamps) arrived within one 2 s wall-clock window
    assert "they were windowed by arrival" in clock.reason
    assert all(f.value is None for name, f in fp.findings.items() if name is not F.CLOCK)
    assert [d.field for d in fp.differences] == [F.CLOCK]  # the fixture declares app time


def test_probe_reads_sparqlstream_through_its_mapping() -> None:
    """SPARQLstream reads tuples: the probe vocabulary's R2RML mapping
    (adapters/sparqlstream/mappings/probe-r2rml.ttl) makes each probe element one row. Its
    windows follow Esper's output timer, which starts at the first matching tuple: edges at
    the first element, not at multiples of STEP (docs/engines/sparqlstream.md)."""
    from rsp_adapter_sparqlstream import SparqlStreamAdapter

    from tests.conftest import REPO
    from tests.real_engines import engine_missing

    reason = engine_missing("sparqlstream")
    if reason:
        pytest.skip(reason)
    mapping = REPO / "adapters" / "sparqlstream" / "mappings" / "probe-r2rml.ttl"
    adapter = SparqlStreamAdapter()
    fp = probe_engine(adapter, ProbeSettings(runtime="jpype", config={"mapping": str(mapping)}))
    found = values(fp)
    assert found == {
        F.CLOCK: "application",
        F.T0: "before-data",
        F.T0_PHASE: "first-element",
        # windows anchored at the bounds probe's own first element: no edge where the grid put it
        F.WINDOW_BOUNDS: None,
        F.REPORT: "window_close",
        F.NON_EMPTY_CONTENT: None,  # the adapter declares no aggregates: no COUNT(?s) probe
        F.TICK: None,
        F.TIME_UNIT: None,
        F.R2S: "rstream",
        F.EMPTY_RELATIONS: "false",
    }
    assert fp.differences == []
