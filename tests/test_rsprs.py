"""rsp-rs through its adapter, for real: the driver crate built by cargo from the pinned
Cargo.lock (rsp-rs 0.3.5 from crates.io), on the subprocess runtime.

What is pinned here is what the engine was *observed* to do (docs/engines/rsprs.md). If an
rsp-rs upgrade changes any of it, these tests say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine import EngineSession, ProvisionCache, TripleBatch
from rsp_sdk.engine.provision import MissingArtifact
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.runtime import get_runtime
from rsp_sdk.runtime.base import EngineError
from rsp_sdk.testing import AdapterConformance, Scenario, TreeWatch, drain
from tests.real_engines import engine_missing

rsprs = pytest.importorskip(
    "rsp_adapter_rsprs",
    reason="the rsp-rs adapter is not installed (pip install -e adapters/rsprs)",
)
RspRsAdapter = rsprs.RspRsAdapter
render_rsprs = rsprs.render_rsprs
RenderError = rsprs.RenderError

EX = "http://ex.org/"
S1, S2 = f"{EX}stream1", f"{EX}stream2"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


@pytest.fixture(scope="module")
def rsprs_ready() -> None:
    reason = engine_missing("rsprs")
    if reason:
        pytest.skip(reason)


def spec(
    sparql: str,
    windows: list[tuple[str, str, int, int]],
    *,
    name: str = "q",
    static: list[str] | None = None,
) -> QuerySpec:
    return QuerySpec(
        name=name,
        text=sparql,
        sparql=sparql,
        variables=[],
        windows=[WindowSpec(name=w, stream=s, range_ms=r, step_ms=st) for w, s, r, st in windows],
        static_graphs=static or [],
        window_graphs="GRAPH <" in sparql,
    )


@pytest.fixture
def engine(rsprs_ready: None, tmp_path: Path) -> Iterator[Any]:
    """Open rsp-rs sessions; every one is closed and checked for leftovers afterwards."""
    opened: list[tuple[EngineSession, TreeWatch]] = []

    def open_(streams: tuple[str, ...] = (S1,)) -> EngineSession:
        session = RspRsAdapter().open(get_runtime("subprocess"), tmp_path / f"e{len(opened)}")
        watch = TreeWatch(session.pid)
        watch.observe()
        opened.append((session, watch))
        for s in streams:
            session.register_stream(s)
        return session

    yield open_
    for session, watch in opened:
        session.close()
        watch.assert_clean()


def ints(rows: list[tuple[int, str, str, int]]) -> TripleBatch:
    return TripleBatch.from_triples(
        (t, f"<{EX}{s}>", f"<{EX}{p}>", f'"{v}"^^<{XSD_INT}>') for t, s, p, v in rows
    )


# ---- the conformance kit -------------------------------------------------------------------------


class TestRspRsConformance(AdapterConformance):
    adapter = RspRsAdapter()
    scenario = Scenario(triples=2_000, span_ms=20_000, batch_size=500)

    @pytest.fixture
    def rsp_cache(self, rsprs_ready: None) -> Any:
        return None


# ---- rendering ------------------------------------------------------------------------------------


def test_render_is_line_based_as_rsp_rs_parses_it() -> None:
    q = spec(
        f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s ex:p ?o }} }}",
        [(f"{EX}w", S1, 10_000, 2_000)],
        name="my query",
    )
    lines = render_rsprs(q).splitlines()
    assert lines[0] == "REGISTER RStream <urn:rsp-sdk:query:my_query> AS"
    assert lines[1] == f"FROM NAMED WINDOW <{EX}w> ON STREAM <{S1}> [RANGE 10000 STEP 2000]"
    assert lines[2] == f"PREFIX ex: <{EX}>"
    assert "FROM <" not in "\n".join(lines)


def test_render_plain_sparql_reads_the_windows_as_default_graph() -> None:
    q = spec(
        "SELECT ?s WHERE { ?s ?p ?o }",
        [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S2, 1000, 1000)],
        static=[f"{EX}static"],
    )
    body = render_rsprs(q).split("\n", 3)[3]
    assert body.startswith(f"SELECT ?s \nFROM <{EX}w1>\nFROM <{EX}w2>\nFROM <{EX}static>\nWHERE")


def test_render_refuses_what_rsp_rs_cannot_express() -> None:
    with pytest.raises(RenderError, match="one window per stream"):
        render_rsprs(
            spec(
                "SELECT * WHERE { ?s ?p ?o }",
                [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S1, 5000, 1000)],
            )
        )
    with pytest.raises(RenderError, match="absolute IRI"):
        render_rsprs(spec("SELECT * WHERE { ?s ?p ?o }", [("w", S1, 1000, 1000)]))
    with pytest.raises(RenderError, match="line-based parser"):
        render_rsprs(
            spec("SELECT * WHERE {\nWINDOW <x> { ?s ?p ?o }\n}", [(f"{EX}w", S1, 1000, 1000)])
        )


def test_missing_driver_message(tmp_path: Path) -> None:
    adapter = RspRsAdapter()
    empty = ProvisionCache(tmp_path / "cache")
    assert adapter.missing_artifacts(empty) == [
        "the cargo-built driver (run: rsp engines fetch rsprs)"
    ]
    with pytest.raises(MissingArtifact, match="run: rsp engines fetch rsprs"):
        adapter.driver(empty)


def test_fetch_without_cargo_names_what_to_install(tmp_path: Path, rsp_exe: list[str]) -> None:
    """No cargo on PATH, no $CARGO, no ~/.cargo/bin: one message and exit 2, nothing built."""
    import os
    import subprocess
    import sys

    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CARGO", "RUSTUP_HOME")},
        "HOME": str(tmp_path / "home"),
        "PATH": str(Path(sys.executable).parent),  # the venv: rsp and python, no cargo
    }
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [*rsp_exe, "engines", "fetch", "rsprs", "--cache", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc
    assert "cargo is needed" in proc.stderr and "Rust toolchain" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(cache.rglob("rsprs-driver"))


# ---- the engine's observed semantics -----------------------------------------------------------------


def test_probe_recovers_the_declared_profile(rsprs_ready: None) -> None:
    from rsp_sdk.probe import FieldName as F
    from rsp_sdk.probe import ProbeSettings, inferred_profile, probe_engine

    adapter = RspRsAdapter()
    fp = probe_engine(adapter, ProbeSettings(runtime="subprocess"))
    found = {name: f.value for name, f in fp.findings.items()}
    assert found == {
        F.CLOCK: "application",
        # windows anchored at the first element, the first ones opening RANGE - STEP before it
        F.T0: "before-data",
        F.T0_PHASE: "first-element",
        F.WINDOW_BOUNDS: "left-closed",
        F.REPORT: "window_close",
        F.NON_EMPTY_CONTENT: None,
        F.TICK: None,
        F.TIME_UNIT: None,
        F.R2S: "rstream",
        F.EMPTY_RELATIONS: None,
    }
    assert fp.differences == []
    assert inferred_profile(fp).t0 == adapter.profile.t0


def test_windows_are_anchored_at_the_first_element_and_closed_by_a_later_one(engine: Any) -> None:
    s = engine()
    s.register_query(
        spec(
            f"SELECT ?s ?v WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}",
            [(f"{EX}w", S1, 1000, 1000)],
        )
    )
    # t0 = 500 (the first element): windows [-500, 500), [500, 1500), [1500, 2500), …
    s.push(S1, ints([(500, "a", "p", 1), (999, "b", "p", 2), (1500, "c", "p", 3)]))
    assert drain(s, quiet_s=0.3) == [], "an element at t = close must not close [500, 1500)"
    s.push(S1, ints([(1501, "d", "p", 4)]))
    (ev,) = drain(s, quiet_s=0.3)
    assert ev.t_app_ms == 1500 and ev.vars == ("s", "v")
    assert sorted(r[0] for r in ev.rows) == [f"<{EX}a>", f"<{EX}b>"]
    s.advance_time(10_000)
    (last,) = drain(s, quiet_s=0.3)
    assert last.t_app_ms == 2500
    assert sorted(r[0] for r in last.rows) == [f"<{EX}c>", f"<{EX}d>"]
    stats = s.stats()
    assert stats["window_t0"] == {f"q {EX}w": 500}
    # [-500, 500) (empty, before the data), [500, 1500), [1500, 2500); the ticks of
    # advance_time open no window of their own
    assert stats["evaluations"] == 3


def test_the_empty_window_before_the_data_is_evaluated(engine: Any) -> None:
    """The first window [t0 - RANGE, t0) holds nothing but is evaluated when it closes: an
    aggregate without GROUP BY answers it (COUNT = 0), so a relation precedes the data."""
    s = engine()
    s.register_query(
        spec(
            f"SELECT (COUNT(?s) AS ?n) WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}",
            [(f"{EX}w", S1, 1000, 1000)],
        )
    )
    s.push(S1, ints([(500, "a", "p", 1), (999, "b", "p", 2), (1501, "c", "p", 3)]))
    got = [(e.t_app_ms, [list(r) for r in e.rows]) for e in drain(s, quiet_s=0.3)]
    assert got == [
        (500, [[f'"0"^^<{XSD_INT}>']]),
        (1500, [[f'"2"^^<{XSD_INT}>']]),
    ]


def test_static_data_joins_and_two_streams(engine: Any) -> None:
    """Each window has its own t0 (its stream's first element); when one fires, rsp-rs merges
    the other window's instance holding the firing content's last timestamp."""
    s = engine(streams=(S1, S2))
    static = Path(s.workdir) / "kb.ttl"
    static.write_text(f'<{EX}a> <{EX}label> "A" .\n<{EX}b> <{EX}label> "B" .\n')
    s.load_static(f"{EX}kb", static)
    s.register_query(
        spec(
            f"SELECT ?s ?l ?v WHERE {{ GRAPH <{EX}w1> {{ ?s <{EX}p> ?v }} "
            f"GRAPH <{EX}w2> {{ ?s <{EX}q> ?v }} ?s <{EX}label> ?l }}",
            [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S2, 1000, 1000)],
            static=[f"{EX}kb"],
        )
    )
    s.push(S2, ints([(100, "a", "q", 1), (200, "b", "q", 9), (300, "c", "q", 3)]))
    s.push(
        S1, ints([(150, "a", "p", 1), (250, "b", "p", 2), (350, "c", "p", 3), (1500, "z", "p", 0)])
    )
    (ev,) = drain(s, quiet_s=0.3)
    assert ev.vars == ("s", "l", "v") and ev.t_app_ms == 1150  # w1's t0 is 150
    # a joins both windows and the static label; b's values differ; c has no label
    assert [list(r) for r in ev.rows] == [[f"<{EX}a>", '"A"', f'"1"^^<{XSD_INT}>']]


def test_queries_rsp_rs_cannot_evaluate_are_refused_at_registration(engine: Any) -> None:
    s = engine()
    window = f"FROM NAMED WINDOW <{EX}w> ON STREAM <{S1}> [RANGE 1000 STEP 1000]\n"
    with pytest.raises(EngineError, match="Oxigraph"):
        s.register_query(
            f"REGISTER RStream <q> AS\n{window}SELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s ?p }} }}\n",
            name="bad",
        )
    with pytest.raises(EngineError, match="not a SELECT"):
        s.register_query(
            f"REGISTER RStream <q> AS\n{window}ASK {{ GRAPH <{EX}w> {{ ?s ?p ?o }} }}\n",
            name="ask",
        )
    with pytest.raises(EngineError, match="not registered"):
        s.register_query(
            render_rsprs(spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S2, 1000, 1000)])),
            name="other-stream",
        )
    with pytest.raises(EngineError, match="packed batch line 2"):
        s.register_query(spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S1, 1000, 1000)]))
        s.push(S1, TripleBatch(b"0 <urn:a> <urn:b> <urn:c>\nnot a triple\n", 2, 0, 0))
    s.push(S1, ints([(5, "a", "p", 1)]))  # the session is still usable


def test_a_stream_starting_at_zero_is_anchored_twice(engine: Any) -> None:
    """``CSPARQLWindow::scope`` takes ``t0 == 0`` for "not anchored yet": a first element at
    t = 0 anchors windows at 0, the next one re-anchors them at its own time, and the windows
    of both grids are reported (CSRBench's data starts at 0: docs/engines/rsprs.md)."""
    s = engine()
    s.register_query(
        spec(
            f"SELECT (COUNT(?s) AS ?n) WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}",
            [(f"{EX}w", S1, 4000, 4000)],
        )
    )
    s.push(S1, ints([(t, f"e{t // 1000}", "p", 1) for t in range(0, 12_000, 1000)]))
    s.advance_time(20_000)
    got = [(e.t_app_ms, e.rows[0][0]) for e in drain(s, quiet_s=0.3)]
    count = f"^^<{XSD_INT}>"
    assert got == [
        (1000, f'"0"{count}'),  # [-3000, 1000): empty, second grid
        (4000, f'"4"{count}'),  # [0, 4000): first grid, e0…e3
        (5000, f'"4"{count}'),  # [1000, 5000): second grid, e1…e4 (overlaps the previous)
        (9000, f'"4"{count}'),
        (13000, f'"3"{count}'),
    ]
    assert s.stats()["window_t0"] == {f"q {EX}w": 1000}
