"""ETALIS through both of its adapters, for real: the user-supplied ETALIS sources on Debian's
SWI-Prolog (``swipl --traditional``), behind the JSON-lines shim (``etalis``, subprocess runtime)
and through JTALIS' Java API (``jtalis``, on the JVM runtimes). Every engine test runs on each,
so the two adapters are held to the same answers (docs/engines/jtalis.md).

The LSBench-style pattern table in docs/engines/etalis.md is this file's ``PATTERNS``: each one
is rendered, run on ETALIS, and its output compared with SPARQL's answer over the same data
(rdflib), or its refusal checked. Without the ETALIS sources (CI) every engine test skips with
the provisioning message; the rendering tests always run.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine import EngineSession, ProvisionCache, TripleBatch, UnsupportedQuery
from rsp_sdk.engine.provision import MissingArtifact
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.runtime import get_runtime
from rsp_sdk.runtime.base import EngineError, ProcessDriver
from rsp_sdk.testing import AdapterConformance, Scenario, TreeWatch, drain
from tests.fixtures.hostpath import hide_host_programs, runtime_without_host_programs
from tests.real_engines import engine_missing

etalis = pytest.importorskip(
    "rsp_adapter_etalis",
    reason="the ETALIS adapter is not installed (pip install -e adapters/etalis)",
)
jtalis = pytest.importorskip(
    "rsp_adapter_jtalis",
    reason="the JTALIS adapter is not installed (pip install -e adapters/jtalis)",
)
EtalisAdapter = etalis.EtalisAdapter
JtalisAdapter = jtalis.JtalisAdapter
render_ep_sparql = etalis.render_ep_sparql
ADAPTERS = {"etalis": EtalisAdapter, "jtalis": JtalisAdapter}
# (adapter, runtime) pairs every engine test runs on; docker is left to the conformance kit and
# CSRBench (one container per session would make this file slow)
ENGINES = [("etalis", "subprocess"), ("jtalis", "jpype"), ("jtalis", "py4j")]

EX = "http://ex.org/"
S, W, KB = f"{EX}stream", f"{EX}w", f"{EX}kb"
INT = "http://www.w3.org/2001/XMLSchema#integer"


@pytest.fixture(scope="module")
def etalis_ready() -> None:
    reason = engine_missing("etalis")
    if reason:
        pytest.skip(reason)


def iri(x: str) -> str:
    return f"<{EX}{x}>"


def n(v: int) -> str:
    return f'"{v}"^^<{INT}>'


# A small social stream (LSBench vocabulary reduced to its shape): posts, lengths, likes,
# comments; static data says who knows whom.
STREAM = [
    (100, iri("u1"), iri("posted"), iri("p1")),
    (110, iri("p1"), iri("length"), n(120)),
    (200, iri("u2"), iri("posted"), iri("p2")),
    (210, iri("p2"), iri("length"), n(40)),
    (300, iri("u3"), iri("likes"), iri("p1")),
    (400, iri("u1"), iri("comments"), iri("p2")),
    (500, iri("u2"), iri("likes"), iri("p1")),
    (600, iri("u1"), iri("posted"), iri("p3")),
    (610, iri("p3"), iri("length"), n(300)),
]
STATIC = f"<{EX}u1> <{EX}knows> <{EX}u3> .\n<{EX}u2> <{EX}knows> <{EX}u1> .\n"
# triples no pattern reads, making the static file (~140 kB) larger than one InterProlog goal
# string can be (64 kB): JTALIS must load it in parts (CityBench's static data never answered)
PADDING = "".join(f'<{EX}pad{i}> <{EX}padding> "{i:08d} {"x" * 40}" .\n' for i in range(1500))
PREFIX = f"PREFIX : <{EX}>\n"

# name → (body, how ETALIS does): "same" = the union of all reports equals SPARQL's answer over
# the whole stream (the window spans it); otherwise the text of the refusal.
PATTERNS: dict[str, tuple[str, str]] = {
    "filter": (
        f"SELECT ?p ?l WHERE {{ GRAPH <{W}> {{ ?p :length ?l FILTER(?l > 100) }} }}",
        "same",
    ),
    "join": (f"SELECT ?u ?l WHERE {{ GRAPH <{W}> {{ ?u :posted ?p . ?p :length ?l }} }}", "same"),
    "join + filter": (
        # != on IRIs, a variable and a constant: rsp_differ/2 (ETALIS' own != is is/2 arithmetic)
        f"SELECT ?u ?p WHERE {{ GRAPH <{W}> {{ ?u :posted ?p . ?p :length ?l "
        f"FILTER(?l >= 30 && ?l < 200 && ?u != :u1 && ?u != ?p) }} }}",
        "same",
    ),
    "filter with ||": (
        f"SELECT ?p WHERE {{ GRAPH <{W}> {{ ?p :length ?l FILTER(?l < 50 || ?l > 200) }} }}",
        "|| in a FILTER",
    ),
    "union": (
        f"SELECT ?u ?p WHERE {{ GRAPH <{W}> {{ {{ ?u :likes ?p }} UNION {{ ?u :comments ?p }} }} }}",
        "same",
    ),
    "optional": (
        f"SELECT ?u ?p ?l WHERE {{ GRAPH <{W}> {{ ?u :posted ?p OPTIONAL {{ ?p :length ?l }} }} }}",
        "OPTIONAL",
    ),
    "aggregation": (
        f"SELECT ?p (COUNT(?u) AS ?n) WHERE {{ GRAPH <{W}> {{ ?u :likes ?p }} }} GROUP BY ?p",
        "the SPARQL pattern Extend",
    ),
    "negation (MINUS)": (
        f"SELECT ?p WHERE {{ GRAPH <{W}> {{ ?u :posted ?p MINUS {{ ?x :likes ?p }} }} }}",
        "MINUS",
    ),
    "negation (NOT EXISTS)": (
        f"SELECT ?p WHERE {{ GRAPH <{W}> {{ ?u :posted ?p FILTER NOT EXISTS {{ ?x :likes ?p }} }} }}",
        "Builtin_NOTEXISTS",
    ),
    "top-k": (
        f"SELECT ?p ?l WHERE {{ GRAPH <{W}> {{ ?p :length ?l }} }} ORDER BY DESC(?l) LIMIT 2",
        "the solution modifier Slice",
    ),
    "nested": (
        f"SELECT ?u WHERE {{ {{ SELECT ?u WHERE {{ GRAPH <{W}> {{ ?u :posted ?p }} }} }} }}",
        "ToMultiSet",
    ),
    "static data": (
        f"SELECT ?u ?f ?p WHERE {{ GRAPH <{W}> {{ ?f :likes ?p }} ?u :knows ?f }}",
        "same",
    ),
    "static data + join": (
        f"SELECT ?u ?f ?p WHERE {{ GRAPH <{W}> {{ ?u :posted ?p . ?f :likes ?p }} ?u :knows ?f }}",
        "same",
    ),
    "numeric constant": (f"SELECT ?p WHERE {{ GRAPH <{W}> {{ ?p :length 120 }} }}", "same"),
}


def pattern_spec(name: str, body: str, range_ms: int = 10_000) -> QuerySpec:
    return QuerySpec(
        name=name.replace(" ", "_"),
        text=PREFIX + body,
        sparql=PREFIX + body,
        prefixes={"": EX},
        windows=[WindowSpec(name=W, stream=S, range_ms=range_ms, step_ms=range_ms)],
        static_graphs=[KB] if "static" in name else [],
        window_graphs=True,  # the bodies read the window as GRAPH <w>, as RSP-QL's WINDOW does
    )


def sparql_answer(spec: QuerySpec, static: bool) -> list[tuple[str | None, ...]]:
    """SPARQL's answer over the whole stream as the window graph, with rdflib."""
    import rdflib

    ds = rdflib.Dataset()
    g = ds.graph(rdflib.URIRef(W))
    g.parse(data="".join(f"{s} {p} {o} .\n" for _, s, p, o in STREAM), format="nt")
    if static:
        ds.default_graph.parse(data=STATIC, format="nt")
    return sorted(
        tuple(None if x is None else x.n3() for x in row)  # type: ignore[union-attr]
        for row in ds.query(spec.sparql)
    )


@pytest.fixture(params=ENGINES, ids=[f"{a}@{r}" for a, r in ENGINES])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    name, runtime = request.param
    reason = engine_missing(name)
    if reason:
        pytest.skip(reason)
    opened: list[tuple[EngineSession, TreeWatch]] = []

    def open_(config: dict[str, Any] | None = None) -> Any:
        session = ADAPTERS[name]().open(
            get_runtime(runtime), tmp_path / f"e{len(opened)}", config=config or {}
        )
        watch = TreeWatch(session.pid)
        watch.observe()
        opened.append((session, watch))
        session.register_stream(S)
        return session

    yield open_
    for session, watch in opened:
        watch.observe()
        session.close()
        watch.assert_clean()


# ---- rendering (no engine needed) ------------------------------------------------------------------


@pytest.mark.parametrize("name", [k for k, (_, how) in PATTERNS.items() if how != "same"])
def test_patterns_ep_sparql_cannot_express_are_refused(name: str) -> None:
    body, why = PATTERNS[name]
    with pytest.raises(UnsupportedQuery, match="EP-SPARQL cannot express") as info:
        render_ep_sparql(pattern_spec(name, body))
    assert why in str(info.value)


def test_rendering_joins_with_and_filters_last_window_in_ms() -> None:
    import json

    body, _ = PATTERNS["static data + join"]
    out = json.loads(render_ep_sparql(pattern_spec("static data + join", body, 5_000)))
    assert out["variables"] == ["u", "f", "p"] and out["within_ms"] == 5_000
    head, _, rest = out["ep_sparql"].partition(" WHERE ")
    groups, _, condition = rest.partition(" FILTER ")
    assert head == "SELECT ?u ?f ?p"
    assert sorted(groups.split(" AND ")) == [  # rdflib's algebra orders the BGP its own way
        f"{{ ?f <{EX}likes> ?p }}",
        f"{{ ?u <{EX}posted> ?p }}",
    ]
    assert condition == f"( rsp_static(?u, <{EX}knows>, ?f) )"
    assert out["stream"] == S  # the drivers feed ETALIS this stream's triples only
    numeric = json.loads(render_ep_sparql(pattern_spec("c", PATTERNS["numeric constant"][0])))
    assert numeric["ep_sparql"].endswith("FILTER ( ?_c1 >= 120 && ?_c1 <= 120 )")
    iris = json.loads(render_ep_sparql(pattern_spec("jf", PATTERNS["join + filter"][0])))
    assert iris["ep_sparql"].endswith(
        f"FILTER ( ?l >= 30 && ?l < 200 && rsp_differ(?u, <{EX}u1>) && rsp_differ(?u, ?p) )"
    )


def test_static_goals_come_in_join_order_bound_variables_first() -> None:
    """ETALIS runs the FILTER's static goals left to right: their order is the join plan.
    Sorted by text (as ``_stable`` lists a BGP), CityBench Q5 enumerated every cultural event
    times every sensor before the goal tying the sensor to the stream's ?p2, and JTALIS' Q5
    cells timed out with swipl busy (docs/engines/jtalis.md). Each goal now binds at most one
    new variable, reachable from the stream pattern, and the congestion-level test comes
    first."""
    import json

    from rsp_sdk.query import load_query

    q5 = Path(__file__).parent.parent / "matrix" / "queries" / "citybench" / "q5.rspql"
    text = json.loads(render_ep_sparql(load_query(q5)))["ep_sparql"]
    pattern, _, condition = text.partition(" FILTER ")
    goals = re.findall(r"rsp_static\((\S+), <([^>]*)>, (\S+?)\)", condition)
    bound = set(re.findall(r"\?\w+", pattern.partition(" WHERE ")[2]))
    ct, ssn = "http://www.insight-centre.org/citytraffic#", "http://purl.oclc.org/NET/ssnx/ssn#"
    assert [(s, p) for s, p, _ in goals[:4]] == [
        ("?p2", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"),
        ("?p2", ssn + "isPropertyOf"),
        ("?foi2", ct + "hasStartLatitude"),
        ("?foi2", ct + "hasStartLongitude"),
    ]
    assert len(goals) == 10
    for s, _, o in goals:
        assert s in bound or o in bound, f"{s} {o}: a goal joined to nothing bound yet"
        bound |= {s, o}


def test_shim_reads_static_ntriples_without_pyoxigraph(tmp_path: Path) -> None:
    """In the engine image the shim has the standard library only: its N-Triples reader gives
    the terms pyoxigraph gives (the functional static_join cell was rejected on docker with
    "No module named 'pyoxigraph'"), and names the file and line it cannot read."""
    import pyoxigraph
    from rsp_adapter_etalis import shim

    nt = tmp_path / "static.nt"
    nt.write_text(
        f"<{EX}r1> <{EX}onFloor> <{EX}f1> .\n# a comment\n\n"
        f'_:b0 <{EX}name> "salle \\"deux\\""@fr-CA .\n'
        f'<{EX}r2> <{EX}size> "12.5"^^<http://www.w3.org/2001/XMLSchema#double> .\n'
    )
    want = [(str(q.subject), str(q.predicate), str(q.object)) for q in pyoxigraph.parse(path=nt)]
    assert shim._read_ntriples(str(nt)) == want
    nt.write_text(f"<{EX}r1> <{EX}onFloor> .\n")
    with pytest.raises(shim.DriverError, match=r"static.nt:1: expected an N-Triples line"):
        shim._read_ntriples(str(nt))


# ---- the engine --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [k for k, (_, how) in PATTERNS.items() if how == "same"])
def test_patterns_etalis_answers_like_sparql(engine: Any, tmp_path: Path, name: str) -> None:
    body, _ = PATTERNS[name]
    spec = pattern_spec(name, body)
    s = engine()
    if spec.static_graphs:
        kb = tmp_path / "kb.nt"
        kb.write_text(STATIC + PADDING)
        s.load_static(KB, kb)
    s.register_query(spec)
    s.push(S, TripleBatch.from_triples(STREAM))
    events = drain(s, quiet_s=0.3)
    got = sorted(tuple(r) for ev in events for r in ev.rows)
    assert got == sparql_answer(spec, bool(spec.static_graphs))
    # event-driven: each result comes with the input event that completed it
    stamps = {t for t, *_ in STREAM}
    assert all(ev.t_app_ms in stamps for ev in events)


def test_only_the_stream_a_query_reads_reaches_etalis(engine: Any) -> None:
    """ETALIS has one event stream: the drivers keep the triples of other streams out (a UNION
    branch fired on another stream's badge reads in the functional suite), and refuse a second
    query on another stream instead of mixing the two."""
    body, _ = PATTERNS["union"]
    spec = pattern_spec("union", body)
    s = engine()
    other = f"{EX}other"
    s.register_stream(other)
    s.register_query(spec)
    s.push(other, TripleBatch.from_triples([(50, iri("u9"), iri("likes"), iri("p9"))]))
    s.push(S, TripleBatch.from_triples(STREAM))
    got = sorted(tuple(r) for ev in drain(s, quiet_s=0.3) for r in ev.rows)
    assert got == sparql_answer(spec, False)  # without u9's like on the other stream
    on_other = spec.model_copy(
        update={
            "name": "u2",
            "windows": [WindowSpec(name=W, stream=other, range_ms=10, step_ms=10)],
        }
    )
    with pytest.raises(EngineError, match="one event stream"):
        s.register_query(on_other)


def test_within_window_drops_matches_spread_wider(engine: Any) -> None:
    body, _ = PATTERNS["join"]
    s = engine()
    s.register_query(pattern_spec("join", body, range_ms=50))  # p3's pair is 10 ms apart
    s.push(S, TripleBatch.from_triples(STREAM))
    got = [(ev.t_app_ms, [r[0] for r in ev.rows]) for ev in drain(s, quiet_s=0.3)]
    assert got == [(110, [iri("u1")]), (210, [iri("u2")]), (610, [iri("u1")])]
    s2 = engine()
    s2.register_query(pattern_spec("join", body, range_ms=5))  # no pair is that close
    s2.push(S, TripleBatch.from_triples(STREAM))
    assert drain(s2, quiet_s=0.3) == []


def test_and_pairs_events_instead_of_joining_all(engine: Any) -> None:
    """ETALIS' AND consumes the events it pairs (policy "recent": the latest waiting one), so a
    key seen twice joins once — SPARQL would give every combination."""
    q = pattern_spec("j", f"SELECT ?s ?x WHERE {{ GRAPH <{W}> {{ ?s :p ?o . ?o :q ?x }} }}")
    rows = [
        (10, iri("a"), iri("p"), iri("b")),
        (20, iri("x"), iri("p"), iri("b")),
        (30, iri("b"), iri("q"), iri("c")),
        (40, iri("b"), iri("q"), iri("d")),
    ]
    recent = engine()
    recent.register_query(q)
    recent.push(S, TripleBatch.from_triples(rows))
    got = [(ev.t_app_ms, [list(r) for r in ev.rows]) for ev in drain(recent, quiet_s=0.3)]
    assert got == [(30, [[iri("x"), iri("c")]]), (40, [[iri("a"), iri("d")]])]
    chrono = engine({"consumption_policy": "chronological"})
    chrono.register_query(q)
    chrono.push(S, TripleBatch.from_triples(rows))
    got = [(ev.t_app_ms, [list(r) for r in ev.rows]) for ev in drain(chrono, quiet_s=0.3)]
    assert got == [(30, [[iri("a"), iri("c")]]), (40, [[iri("x"), iri("d")]])]


def test_four_pattern_join_is_ordered_connected_and_pairs_once(engine: Any) -> None:
    """rdflib lists this BGP so that the innermost AND would pair unrelated events (no result
    at all); the renderer orders it so every right-nested AND shares a variable. ETALIS then
    finds the first of SPARQL's two answers: u1's post event is consumed by it."""
    import json

    body = (
        f"SELECT ?u ?p ?l ?f ?c WHERE {{ GRAPH <{W}> {{ ?u :posted ?p . ?p :length ?l . "
        f"?f :likes ?p . ?u :comments ?c }} }}"
    )
    spec = pattern_spec("join4", body)
    groups = json.loads(render_ep_sparql(spec))["ep_sparql"].split(" WHERE ")[1].split(" AND ")
    for k in range(len(groups) - 1):
        inner = set(re.findall(r"\?\w+", " ".join(groups[k + 1 :])))
        assert set(re.findall(r"\?\w+", groups[k])) & inner, groups
    s = engine()
    s.register_query(spec)
    s.push(S, TripleBatch.from_triples(STREAM))
    got = sorted(tuple(r) for ev in drain(s, quiet_s=0.3) for r in ev.rows)
    sparql = sparql_answer(spec, False)
    assert len(sparql) == 2 and got == [sparql[1]]  # the u3 like (t=300), not u2's (t=500)


def test_engine_errors_come_back_with_etalis_messages(engine: Any) -> None:
    s = engine()
    with pytest.raises(EngineError, match="cannot parse the EP-SPARQL"):
        s.register_query(f"SELECT ?u WHERE {{ ?u <{EX}p> ?o }} UNION {{ ?u <{EX}q> ?o }}")
    s.register_query(f"SELECT ?p WHERE {{ ?u <{EX}posted> ?p }} FILTER(?u > 3)", name="iri")
    with pytest.raises(EngineError, match="Arithmetic"):  # FILTERs are is/2 arithmetic
        s.push(S, TripleBatch.from_triples(STREAM[:1]))
    s.push(S, TripleBatch.from_triples(STREAM[1:2]))  # still usable


def test_missing_etalis_message(tmp_path: Path) -> None:
    adapter = EtalisAdapter()
    empty = ProvisionCache(tmp_path / "cache")
    with pytest.raises(MissingArtifact) as info:
        adapter.driver(empty)
    msg = str(info.value)
    assert "https://github.com/sspider/etalis" in msg
    assert "rsp engines add etalis /path/to/etalis" in msg


# ---- the conformance kit ---------------------------------------------------------------------------


class TestEtalisConformance(AdapterConformance):
    adapter = EtalisAdapter()
    # ETALIS processes ~7 000 events/s: a smaller stream keeps the suite quick
    scenario = Scenario(triples=6_000, span_ms=3_000, batch_size=2_000)

    @pytest.fixture
    def rsp_cache(self, rsp_runtime_name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
        """On docker the kit runs with no ``swipl`` on PATH: the image brings its own."""
        runtime_without_host_programs(
            "etalis", rsp_runtime_name, monkeypatch, "swipl", env_vars=("RSP_SWIPL",)
        )
        return None


def test_without_swipl_the_host_runtime_refuses_and_points_to_docker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reason = engine_missing("etalis", host=False)
    if reason:
        pytest.skip(reason)
    hide_host_programs(monkeypatch, "swipl", env_vars=("RSP_SWIPL",))
    adapter = EtalisAdapter()
    assert adapter.missing_artifacts() == []  # provisioned: docker can run it
    driver = adapter.driver()
    assert isinstance(driver, ProcessDriver) and driver.image is not None
    with pytest.raises(EngineError, match=r"`swipl` is not on PATH.*-r docker"):
        get_runtime("subprocess").launch(driver, tmp_path / "w", log_dir=tmp_path)
    assert not (tmp_path / "w").exists()


def test_engines_add_records_the_folder_and_names_what_is_wrong(
    tmp_path: Path, rsp_exe: list[str]
) -> None:
    import json

    from tests.conftest import run_rsp

    folder = tmp_path / "etalis"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "etalis.P").write_text("% not the real thing\n")
    cache = tmp_path / "cache"
    proc = run_rsp(rsp_exe, "engines", "add", "etalis", folder, "--cache", cache, "--json")
    (record,) = json.loads(proc.stdout)["artifacts"]
    assert record["file"] == "etalis" and record["verified"] is False
    assert len(record["sha256"]) == 64
    if shutil.which("swipl") is None:
        return
    with pytest.raises(Exception, match=r"has no src/ep_sparql/ep_sparql\.P"):
        EtalisAdapter().driver(ProvisionCache(cache))


class TestJtalisConformance(AdapterConformance):
    """The same kit on JTALIS, on every JVM runtime (jpype, py4j, docker)."""

    adapter = JtalisAdapter()
    # JTALIS runs one InterProlog round trip per event (~200 events/s): a small stream
    scenario = Scenario(triples=1_500, span_ms=3_000, batch_size=500)

    @pytest.fixture
    def rsp_cache(self) -> Any:
        reason = engine_missing("jtalis")
        if reason:
            pytest.skip(reason)
        return None


def test_jtalis_classpath_takes_the_shared_prolog_not_the_etalis_demo_jars() -> None:
    reason = engine_missing("jtalis")
    if reason:
        pytest.skip(reason)
    from rsp_adapter_etalis.common import PROLOG_DIR

    driver = JtalisAdapter().driver()
    names = [p.name for p in driver.classpath]
    assert PROLOG_DIR in driver.classpath
    assert "interprolog-swi9.jar" in names and "interprolog.jar" not in names
    assert "jpl.jar" not in names


@pytest.mark.parametrize("runtime", ["jpype", "py4j"])
def test_jtalis_reports_a_dead_swipl_at_once_and_leaves_nothing(
    runtime: str, tmp_path: Path
) -> None:
    """swipl is the JVM's child: when it dies, the next push fails within seconds with its exit
    (not after the end-of-batch marker's timeout), and close leaves no process behind."""
    import time

    import psutil

    reason = engine_missing("jtalis")
    if reason:
        pytest.skip(reason)
    session = JtalisAdapter().open(get_runtime(runtime), tmp_path / "e")
    watch = TreeWatch(session.pid)
    watch.observe()
    try:
        session.register_stream(S)
        body, _ = PATTERNS["join"]
        session.register_query(pattern_spec("join", body))
        session.push(S, TripleBatch.from_triples(STREAM[:2]))
        (swipl,) = [
            p for p in psutil.Process(session.pid).children(recursive=True) if p.name() == "swipl"
        ]
        swipl.kill()
        started = time.monotonic()
        with pytest.raises(EngineError, match="swipl exited"):
            session.push(S, TripleBatch.from_triples(STREAM[2:]))
        assert time.monotonic() - started < 30
    finally:
        watch.observe()
        session.close()
    watch.assert_clean()
