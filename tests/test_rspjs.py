"""rsp-js through its adapter, for real: Node, the npm packages from the pinned lock file, our
JSON-lines driver on the subprocess runtime.

What is pinned here is what the engine was *observed* to do (docs/engines/rspjs.md): window-close
reports triggered by the next element, no empty relations, Rstream, and its t0 that moves one
STEP per emitted binding — which loses whole windows once windows yield more than a couple of
bindings. If an rsp-js upgrade changes any of it, these tests say so.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine import EngineSession, ProvisionCache, TripleBatch, UnsupportedQuery
from rsp_sdk.engine.provision import MissingArtifact
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.runtime import get_runtime
from rsp_sdk.runtime.base import EngineError, ProcessDriver
from rsp_sdk.testing import AdapterConformance, Scenario, TreeWatch, drain
from tests.fixtures.hostpath import hide_host_programs, runtime_without_host_programs
from tests.real_engines import engine_missing

rspjs = pytest.importorskip(
    "rsp_adapter_rspjs",
    reason="the rsp-js adapter is not installed (pip install -e adapters/rspjs)",
)
RspJsAdapter = rspjs.RspJsAdapter
render_rspjs = rspjs.render_rspjs
RenderError = rspjs.RenderError

EX = "http://ex.org/"
S1, S2 = f"{EX}stream1", f"{EX}stream2"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


@pytest.fixture(scope="module")
def rspjs_ready() -> None:
    reason = engine_missing("rspjs")
    if reason:
        pytest.skip(reason)


def spec(
    sparql: str,
    windows: list[tuple[str, str, int, int]],
    *,
    name: str = "q",
    static: list[str] | None = None,
    variables: list[str] | None = None,
) -> QuerySpec:
    return QuerySpec(
        name=name,
        text=sparql,
        sparql=sparql,
        variables=variables or [],
        windows=[WindowSpec(name=w, stream=s, range_ms=r, step_ms=st) for w, s, r, st in windows],
        static_graphs=static or [],
        window_graphs="GRAPH <" in sparql,  # as the RSP-QL parser marks WINDOW blocks
    )


@pytest.fixture
def engine(rspjs_ready: None, tmp_path: Path) -> Iterator[Any]:
    """Open rsp-js sessions; every one is closed and checked for leftovers afterwards."""
    opened: list[tuple[EngineSession, TreeWatch]] = []

    def open_(config: dict[str, Any] | None = None, streams: tuple[str, ...] = (S1,)) -> Any:
        session = RspJsAdapter().open(
            get_runtime("subprocess"), tmp_path / f"e{len(opened)}", config=config or {}
        )
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

# One matching triple per 1 s window: the engine is exact there (see test_t0_drift_* for why the
# kit's default of 2 500 bindings per window loses windows), so the kit can demand that every
# pushed triple comes out. 600 triples over 300 s in 200-triple batches: 300 evaluations.
RSPJS_SCENARIO = Scenario(triples=600, span_ms=300_000, batch_size=200)


class TestRspJsConformance(AdapterConformance):
    adapter = RspJsAdapter()
    scenario = RSPJS_SCENARIO

    @pytest.fixture
    def rsp_cache(self, rsp_runtime_name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
        """On docker the kit runs with no ``node`` on PATH: the image brings its own Node."""
        runtime_without_host_programs(
            "rspjs", rsp_runtime_name, monkeypatch, "node", "npm", env_vars=("RSP_NODE",)
        )
        return None


def test_without_node_the_host_runtime_refuses_and_points_to_docker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reason = engine_missing("rspjs", host=False)
    if reason:
        pytest.skip(reason)
    hide_host_programs(monkeypatch, "node", env_vars=("RSP_NODE",))
    driver = RspJsAdapter().driver()
    assert isinstance(driver, ProcessDriver) and driver.image is not None
    with pytest.raises(EngineError, match=r"`node` is not on PATH.*-r docker"):
        get_runtime("subprocess").launch(driver, tmp_path / "w", log_dir=tmp_path)
    assert not (tmp_path / "w").exists()


# ---- rendering ------------------------------------------------------------------------------------


def test_render_is_line_based_as_rsp_js_parses_it() -> None:
    q = spec(
        f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s ex:p ?o }} }}",
        [(f"{EX}w", S1, 10_000, 2_000)],
        name="my query",
    )
    text = render_rspjs(q)
    lines = text.splitlines()
    assert lines[0] == "REGISTER RStream <urn:rsp-sdk:query:my_query> AS"
    assert lines[1] == f"FROM NAMED WINDOW <{EX}w> ON STREAM <{S1}> [RANGE 10000 STEP 2000]"
    assert lines[2] == f"PREFIX ex: <{EX}>"
    assert "FROM <" not in text  # window graphs, no static data: no dataset clause needed


def test_render_plain_sparql_reads_the_windows_as_default_graph() -> None:
    q = spec(
        'SELECT ?s WHERE { ?s ?p "a{b}" . FILTER(?s != <urn:x#{>) }  # { comment',
        [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S2, 1000, 1000)],
        static=[f"{EX}static"],
    )
    body = render_rspjs(q).split("\n", 3)[3]
    assert body.startswith(
        f"SELECT ?s \nFROM <{EX}w1>\nFROM <{EX}w2>\nFROM <{EX}static>\nWHERE {{"
    ), body


def test_render_static_data_with_window_graphs_keeps_windows_named() -> None:
    q = spec(
        f"SELECT * {{ GRAPH <{EX}w> {{ ?s ?p ?o }} ?o ?q ?x }}",
        [(f"{EX}w", S1, 1000, 1000)],
        static=[f"{EX}kb"],
    )
    text = render_rspjs(q)
    assert f"SELECT * \nFROM <{EX}kb>\nFROM NAMED <{EX}w>\n{{ GRAPH" in text


def test_render_refuses_what_rsp_js_cannot_express() -> None:
    with pytest.raises(RenderError, match="one window per stream"):
        render_rspjs(
            spec(
                "SELECT * WHERE { ?s ?p ?o }",
                [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S1, 5000, 1000)],
            )
        )
    with pytest.raises(RenderError, match="absolute IRI"):
        render_rspjs(spec("SELECT * WHERE { ?s ?p ?o }", [("w", S1, 1000, 1000)]))
    with pytest.raises(RenderError, match="line-based parser"):
        render_rspjs(
            spec("SELECT * WHERE {\nWINDOW <x> { ?s ?p ?o }\n}", [(f"{EX}w", S1, 1000, 1000)])
        )


# ---- the engine's observed semantics -----------------------------------------------------------------


def test_window_close_is_reported_by_the_next_later_element(engine: Any) -> None:
    s = engine()
    s.register_query(
        spec(
            f"SELECT ?s ?v WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}",
            [(f"{EX}w", S1, 1000, 1000)],
        )
    )
    s.push(S1, ints([(0, "a", "p", 1), (999, "b", "p", 2), (1000, "c", "p", 3)]))
    assert drain(s, quiet_s=0.5) == [], "an element at t = close must not close [0, 1000)"
    s.push(S1, ints([(1001, "d", "p", 4)]))
    (ev,) = drain(s, quiet_s=0.5)
    assert ev.t_app_ms == 1000 and ev.vars == ("s", "v")
    assert sorted(r[0] for r in ev.rows) == [f"<{EX}a>", f"<{EX}b>"]
    s.advance_time(5000)
    (last,) = drain(s, quiet_s=0.5)
    assert last.t_app_ms == 2000
    assert sorted(r[0] for r in last.rows) == [f"<{EX}c>", f"<{EX}d>"]


def test_no_empty_relations_and_empty_windows_are_skipped(engine: Any) -> None:
    s = engine()
    s.register_query(
        spec(
            f"SELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v FILTER(?v > 10) }} }}",
            [(f"{EX}w", S1, 1000, 1000)],
        )
    )
    # [0,1000) has no match, [1000,2000) is empty, [2000,3000) matches once
    s.push(S1, ints([(10, "a", "p", 1), (2500, "b", "p", 11), (3500, "c", "p", 0)]))
    s.advance_time(10_000)
    events = drain(s, quiet_s=0.5)
    assert [(e.t_app_ms, len(e.rows)) for e in events] == [(3000, 1)]
    assert s.stats()["evaluations"] == 3  # [0,1000), [2000,3000), [3000,4000) were evaluated


def test_t0_drift_loses_windows_with_many_bindings(engine: Any) -> None:
    """rsp-js adds STEP to its window t0 for every binding it emits; windows are then computed
    from |t - t0|, so once t0 runs ahead of the data, elements fall into no window at all."""
    rows = [(sec * 1000 + k * 100, f"s{sec}_{k}", "p", k) for sec in range(6) for k in range(10)]
    q = spec(
        f"SELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}", [(f"{EX}w", S1, 1000, 1000)]
    )
    ten = engine()
    ten.register_query(q)
    ten.push(S1, ints(rows))
    ten.advance_time(10_000)
    got = [(e.t_app_ms, len(e.rows)) for e in drain(ten, quiet_s=0.5)]
    assert got == [(1000, 10), (2000, 10)], got  # 4 of 6 windows never reported
    assert ten.stats()["window_t0"] == {f"q {EX}w": 20 * 1000}
    one = engine()  # one binding per window: t0 keeps pace and every window comes out
    one.register_query(q)
    one.push(S1, ints([r for r in rows if r[3] == 0]))
    one.advance_time(10_000)
    assert [(e.t_app_ms, len(e.rows)) for e in drain(one, quiet_s=0.5)] == [
        (c, 1) for c in range(1000, 7000, 1000)
    ]


def test_settle_batch_defers_evaluations_to_the_end_of_the_batch(engine: Any) -> None:
    rows = [(sec * 1000 + k * 100, f"s{sec}_{k}", "p", k) for sec in range(6) for k in range(10)]
    s = engine({"settle": "batch"})
    s.register_query(
        spec(
            f"SELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s <{EX}p> ?v }} }}", [(f"{EX}w", S1, 1000, 1000)]
        )
    )
    s.push(S1, ints(rows))  # one batch: t0 only drifts after it, so no window is lost
    got = sorted((e.t_app_ms, len(e.rows)) for e in drain(s, quiet_s=0.5))
    assert got == [(c, 10) for c in range(1000, 6000, 1000)]


def test_static_data_joins_and_two_streams(engine: Any) -> None:
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
    (ev,) = drain(s, quiet_s=0.5)
    assert ev.vars == ("s", "l", "v")
    # a joins both windows and the static label; b's values differ; c has no label
    assert [list(r) for r in ev.rows] == [[f"<{EX}a>", '"A"', f'"1"^^<{XSD_INT}>']]


def test_queries_rsp_js_cannot_evaluate_are_refused_at_registration(engine: Any) -> None:
    s = engine()
    with pytest.raises(EngineError, match="not assigned"):  # Comunica's own message
        s.register_query(
            "REGISTER RStream <q> AS\n"
            f"FROM NAMED WINDOW <{EX}w> ON STREAM <{S1}> [RANGE 1000 STEP 1000]\n"
            f"SELECT ?nowhere WHERE {{ GRAPH <{EX}w> {{ ?s ?p ?o }} }}\n",
            name="bad",
        )
    with pytest.raises(EngineError, match="not registered"):
        s.register_query(
            render_rspjs(spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S2, 1000, 1000)])),
            name="other-stream",
        )
    with pytest.raises(UnsupportedQuery, match="istream"):
        s.register_query(
            spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S1, 1000, 1000)]).model_copy(
                update={"r2s": R2S.ISTREAM}
            )
        )
    with pytest.raises(EngineError, match="packed batch line 2"):
        s.register_query(spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S1, 1000, 1000)]))
        s.push(S1, TripleBatch(b"0 <urn:a> <urn:b> <urn:c>\nnot a triple\n", 2, 0, 0))
    s.push(S1, ints([(5, "a", "p", 1)]))  # the session is still usable


def test_missing_npm_packages_message(tmp_path: Path) -> None:
    adapter = RspJsAdapter()
    empty = ProvisionCache(tmp_path / "cache")
    assert adapter.missing_artifacts(empty) == ["npm packages (run: rsp engines fetch rspjs)"]
    with pytest.raises(MissingArtifact, match="run: rsp engines fetch rspjs"):
        adapter.driver(empty)


def test_stats_report_node_heap_and_gc(engine: Any) -> None:
    s = engine()
    s.register_query(spec("SELECT * WHERE { ?s ?p ?o }", [(f"{EX}w", S1, 1000, 1000)]))
    stats = s.stats()
    assert stats["heap_used"] > 1_000_000 and stats["heap_committed"] >= stats["heap_used"]
    assert isinstance(stats["gc_count"], int) and json.dumps(stats)


# ---- rsp run and provisioning, through the CLI ----------------------------------------------------


def test_rsp_run_records_a_query_rsp_js_cannot_express(
    rspjs_ready: None, tmp_path: Path, rsp_exe: list[str]
) -> None:
    from rsp_sdk.model.stream import StreamMeta
    from rsp_sdk.streams.io import write_stream
    from tests.conftest import run_rsp

    scenario = Scenario(stream=S1, triples=10, span_ms=1000)
    stream = tmp_path / "s.parquet"
    write_stream(scenario.table(), stream, StreamMeta(producer="test", streams=[S1]))
    two = spec(
        f"SELECT * WHERE {{ GRAPH <{EX}w1> {{ ?s ?p ?o }} GRAPH <{EX}w2> {{ ?s ?p ?x }} }}",
        [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S1, 5000, 1000)],
    )
    query = tmp_path / "q.json"
    query.write_text(two.model_dump_json())
    proc = run_rsp(
        rsp_exe, "run", "-e", "rspjs", "-r", "subprocess", "-q", query, "-s", stream,
        "-o", tmp_path / "run", "--json", check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    status = json.loads((tmp_path / "run" / "status.json").read_text())
    assert status["state"] == "failed" and status["error_type"] == "RenderError"
    assert "one window per stream" in status["error"]
    assert not (tmp_path / "run" / "engine").exists(), "the engine must not be started"


@pytest.mark.slow
def test_rsp_engines_fetch_installs_the_pinned_lock(tmp_path: Path, rsp_exe: list[str]) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: rsp engines fetch rspjs needs Node.js 18+ with npm")
    from tests.conftest import run_rsp

    cache = tmp_path / "cache"
    proc = run_rsp(rsp_exe, "engines", "fetch", "rspjs", "--cache", cache, "--json")
    out = json.loads(proc.stdout)
    modules = Path(out["npm"])
    assert out["missing"] == [] and modules.is_dir()
    installed = json.loads((modules / "rsp-js" / "package.json").read_text())
    assert installed["version"] == "1.3.5"
    lock = json.loads((cache / "engines" / "rspjs" / "lock.json").read_text())
    assert len(lock["npm"]["package-lock.json"]["sha256"]) == 64
    again = run_rsp(rsp_exe, "engines", "fetch", "rspjs", "--cache", cache, "--json")
    assert json.loads(again.stdout)["npm"] == out["npm"]  # once per lock content
