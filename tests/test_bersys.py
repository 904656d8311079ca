"""BeRSys 2013's R2S/S2R tests on the rooms micro-stream (``rsp_sdk.probe.bersys``): the rules
that derive the expected relations, checked by hand, and verdicts on real engines — one that
passes (rsp-js), one that applies Istream to an Rstream query (the Python fixture with
``r2s = istream``), and a query an engine cannot run."""

from __future__ import annotations

import pytest

from rsp_sdk.model.profile import R2S
from rsp_sdk.probe import ProbeSettings
from rsp_sdk.probe.bersys import Case, Rel, cases, detections, expected, run_bersys
from tests.fixtures.adapters import ToyPyAdapter

M = "http://example.org/"


def iri(name: str) -> str:
    return f"<{M}{name}>"


def windows(case: str) -> dict[int, Rel]:
    """Phase 0 (windows at multiples of 1 s from 0): opening → expected relation."""
    named: dict[str, Case] = {c.name: c for c in cases([R2S.RSTREAM, R2S.ISTREAM, R2S.DSTREAM])}
    return {o: rel for o, rel, _ in expected(detections(), 0, named[case])}


def test_expected_relations_follow_the_window_rules_worked_by_hand() -> None:
    # ω = 3 s, β = 1 s: the window [2 s, 5 s) holds m2@r1 (2.5 s), m3@r2 (3.5), m1@r2 (4.5)
    assert windows("r2s_rstream")[2000] == {
        (iri("m2"), iri("r1")),
        (iri("m3"), iri("r2")),
        (iri("m1"), iri("r2")),
    }
    assert windows("r2s_istream")[2000] == {(iri("m1"), iri("r2"))}  # entered: 4.5 s
    assert windows("r2s_dstream")[2000] == {(iri("m1"), iri("r1"))}  # left: 1.5 s
    join = windows("s2r_join")
    assert join[2000] == {(iri("m3"), iri("m1"), iri("r2")), (iri("m1"), iri("m3"), iri("r2"))}
    # [1 s, 4 s) pairs m1 and m2 in r1; once m1@r1 (1.5 s) has left, never again
    assert (iri("m1"), iri("m2"), iri("r1")) in join[1000]
    assert all((iri("m1"), iri("m2"), iri("r1")) not in r for o, r in join.items() if o >= 2000)
    # [4 s, 7 s): m1@r2 4.5, m2@r3 5.5, m4@r2 6.5
    assert windows("s2r_count")[4000] == {(iri("r2"), "2"), (iri("r3"), "1")}


def test_an_engine_applying_istream_to_an_rstream_query_fails_r2s_where_it_diverged() -> None:
    settings = ProbeSettings(runtime="subprocess", config={"r2s": "istream"}, quiet_s=0.3)
    verdicts = {v.case: v for v in run_bersys(ToyPyAdapter(), settings)}
    r2s = verdicts["r2s_rstream"]
    assert r2s.passed is False
    assert r2s.diverged_at == 1  # the first window is the same under both; the second is not
    assert r2s.got == [f"{iri('m3')} {iri('r2')}"]
    assert f"{iri('m1')} {iri('r1')}" in r2s.expected
    # the fixture cannot join: refused before the engine, with the features named
    join = verdicts["s2r_join"]
    assert join.passed is None
    assert "needs filter, join" in join.reason


def test_the_python_fixture_passes_r2s_rstream() -> None:
    settings = ProbeSettings(runtime="subprocess", quiet_s=0.3)
    verdicts = {v.case: v for v in run_bersys(ToyPyAdapter(), settings)}
    assert verdicts["r2s_rstream"].passed is True
    assert verdicts["r2s_rstream"].phase_ms == 0


def test_rspjs_passes_every_bersys_test() -> None:
    from rsp_adapter_rspjs import RspJsAdapter

    from tests.real_engines import engine_missing

    reason = engine_missing("rspjs")
    if reason:
        pytest.skip(reason)
    adapter = RspJsAdapter()
    verdicts = run_bersys(adapter, ProbeSettings(runtime="subprocess"))
    assert {v.case: v.passed for v in verdicts} == {
        "r2s_rstream": True,
        "s2r_join": True,
        "s2r_count": True,
    }, verdicts
