"""The C-SPARQL and CQELS adapters without their engines: dialect rendering (against the
hand-written CSRBench texts), refusals before the engine, profiles, manifests, missing-artifact
messages, the C-SPARQL jar version check, and C-SPARQL's term conversion (compiled Java)."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from rsp_adapter_cqels import CqelsAdapter, RenderError, render_cqels
from rsp_adapter_csparql import Csparql09Adapter, CsparqlAdapter, render_csparql
from rsp_adapter_csparql import RenderError as CsparqlRenderError
from rsp_adapter_csparql.adapter import check_module_versions
from rsp_adapter_csparql.render import query_name

from rsp_sdk.engine import Feature, MissingArtifact, ProvisionCache, required_features
from rsp_sdk.engine.registry import discover
from rsp_sdk.errors import RspError
from rsp_sdk.model.profile import R2S
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.testing import FEATURE_PROBES
from tests.csrbench_queries import EXTRACTED, plain, rspql

ADAPTERS = [CsparqlAdapter(), Csparql09Adapter(), CqelsAdapter()]
S = "http://ex.org/s"
W = WindowSpec(name="http://ex.org/w", stream=S, range_ms=10_000, step_ms=5_000)

_TOKEN = re.compile(r'<[^>\s]*>|"(?:[^"\\]|\\.)*"|[?$]\w+|[\w.:-]+|\S')


def normalise(text: str) -> list[str]:
    """Tokens of a query with PREFIX declarations dropped and prefixed names expanded (so texts
    compare modulo whitespace and prefixes), C-SPARQL's query name blanked."""
    toks = _TOKEN.findall(text)
    prefixes: dict[str, str] = {}
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.upper() == "PREFIX":
            prefixes[toks[i + 1].rstrip(":")] = toks[i + 2]
            i += 3
            continue
        if t.upper() == "REGISTER" and toks[i + 1].upper() == "QUERY":
            out += ["REGISTER", "QUERY", "NAME", "AS"]
            i += 4
            continue
        head, sep, tail = t.partition(":")
        if sep and head in prefixes and not t.startswith("<"):
            t = prefixes[head][:-1] + tail + ">"
        out.append(t)
        i += 1
    return [t for t in out if t != "."]  # "x . FILTER" and "x FILTER" are the same pattern


def spec(
    sparql: str, *windows: WindowSpec, static: tuple[str, ...] = (), **kw: object
) -> QuerySpec:
    return QuerySpec(
        name=str(kw.pop("name", "q")),
        text=sparql,
        sparql=sparql,
        windows=list(windows or [W]),
        static_graphs=list(static),
        **kw,  # type: ignore[arg-type]
    )


# ---- rendering the CSRBench queries --------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("form", ["rspql", "plain"])
@pytest.mark.parametrize("dialect", ["csparql", "cqels"])
def test_renders_the_csrbench_texts(n: int, form: str, dialect: str, shared_data: Path) -> None:
    """RSP-QL and plain CSRBench queries render to the hand-written dialect texts."""
    query = rspql(n) if form == "rspql" else plain(n, shared_data)
    want = (shared_data / EXTRACTED / dialect / f"q{n}.rq").read_text()
    got = (CsparqlAdapter() if dialect == "csparql" else CqelsAdapter()).render(query)
    assert normalise(got) == normalise(want), f"{got}\n!=\n{want}"
    if dialect == "csparql":
        assert "\n" not in got
        assert Csparql09Adapter().render(query) == got  # whole seconds: both grammars


def test_csrbench_queries_pass_the_capability_checks() -> None:
    """C-SPARQL takes Q1–Q7 as registered (Rstream); CQELS takes them with its own Istream."""
    for n in range(1, 8):
        q = rspql(n)
        assert not CsparqlAdapter.capabilities.missing(
            required_features(q) - {Feature.NAMED_GRAPHS}
        )
        istream = q.model_copy(update={"r2s": R2S.ISTREAM})
        assert not CqelsAdapter.capabilities.missing(required_features(istream))
        assert CqelsAdapter.capabilities.missing(required_features(q)) == {Feature.RSTREAM}


# ---- rendering rules and refusals ----------------------------------------------------------


def test_csparql_window_units() -> None:
    q = spec("SELECT ?s WHERE { ?s ?p ?o }", W.model_copy(update={"range_ms": 60_000}))
    assert "[RANGE 60s STEP 5s]" in render_csparql(q)
    half = spec("SELECT ?s WHERE { ?s ?p ?o }", W.model_copy(update={"step_ms": 500}))
    with pytest.raises(CsparqlRenderError, match="500 ms"):
        CsparqlAdapter().render(half)  # 0.9.7's grammar: s, m, h, d
    assert "[RANGE 10s STEP 500ms]" in Csparql09Adapter().render(half)
    assert "[RANGE 10s SLIDE 500ms]" in render_cqels(half)


def test_csparql_one_window_only() -> None:
    w2 = WindowSpec(
        name="http://ex.org/w2", stream="http://ex.org/s2", range_ms=10_000, step_ms=5_000
    )
    q = spec(
        "SELECT ?s WHERE { GRAPH <http://ex.org/w> { ?s ?p ?o } GRAPH <http://ex.org/w2> { ?s ?p ?x } }",
        W,
        w2,
    )
    with pytest.raises(CsparqlRenderError, match="exactly one window"):
        render_csparql(q)
    assert {Feature.MULTI_STREAM, Feature.MULTI_WINDOW} <= CsparqlAdapter.capabilities.missing(
        required_features(q)
    )


def test_csparql_window_blocks_static_graphs_and_comments() -> None:
    text = """PREFIX ex: <http://ex.org/>
    SELECT ?s ?l   # the sensor and its label
    WHERE {
      GRAPH ex:w { ?s ex:p ?o OPTIONAL { ?s ex:q ?x } }   # a window with OPTIONAL
      ?s ex:label ?l .
      FILTER(?o > 3)
    } ORDER BY ?s"""
    q = spec(text, static=("urn:static",), prefixes={"ex": "http://ex.org/"})
    got = render_csparql(q)
    assert got == (
        "REGISTER QUERY q AS PREFIX ex: <http://ex.org/> SELECT ?s ?l "
        "FROM STREAM <http://ex.org/s> [RANGE 10s STEP 5s] FROM <urn:static> "
        "WHERE { { ?s ex:p ?o OPTIONAL { ?s ex:q ?x } } ?s ex:label ?l . FILTER(?o > 3) } "
        "ORDER BY ?s"
    )


def test_relative_window_names_resolve_against_the_base() -> None:
    w = WindowSpec(name="http://rsp-sdk.local/w", stream=S, range_ms=1000, step_ms=1000)
    q = spec("SELECT ?s WHERE { GRAPH <w> { ?s ?p ?o } }", w)
    assert render_csparql(q).endswith("WHERE { ?s ?p ?o }")
    assert render_cqels(q).endswith(f"WHERE {{ STREAM <{S}> [RANGE 1s SLIDE 1s] {{ ?s ?p ?o }} }}")


def test_query_names_are_identifiers_and_never_keywords() -> None:
    assert query_name(spec("SELECT * WHERE {}", name="http://ex.org/queries/q1")) == "q1"
    assert query_name(spec("SELECT * WHERE {}", name="filter")) == "filterq"
    assert query_name(spec("SELECT * WHERE {}", name="alias")) == "aliasq"  # "as " is a token
    assert query_name(spec("SELECT * WHERE {}", name="7-up")) == "q7up"
    assert query_name(spec("SELECT * WHERE {}", name="csrbench_q1")) == "csrbenchq1"


def test_cqels_moves_filters_out_of_the_stream_block() -> None:
    q = spec(
        "SELECT ?s WHERE { GRAPH <http://ex.org/w> { ?s <http://ex.org/p> ?o FILTER(?o > 3) } }"
    )
    assert render_cqels(q) == (
        "SELECT ?s WHERE { STREAM <http://ex.org/s> [RANGE 10s SLIDE 5s] "
        "{ ?s <http://ex.org/p> ?o } FILTER(?o > 3) }"
    )


def test_cqels_refuses_a_filter_over_variables_bound_outside_the_window() -> None:
    q = spec(
        "SELECT ?s WHERE { GRAPH <http://ex.org/w> { ?s <http://ex.org/p> ?o FILTER(?o > ?l) } "
        "?s <http://ex.org/label> ?l }",
        static=("urn:g",),
    )
    with pytest.raises(RenderError, match=r"uses \?l, bound outside the window"):
        render_cqels(q)


def test_cqels_static_patterns_read_the_static_graph() -> None:
    q = spec(
        "SELECT ?s ?l WHERE { GRAPH <http://ex.org/w> { ?s <http://ex.org/p> ?o } "
        "?s <http://ex.org/label> ?l }",
        static=("urn:g",),
    )
    assert render_cqels(q).endswith(
        "{ ?s <http://ex.org/p> ?o } GRAPH <urn:g> { ?s <http://ex.org/label> ?l } }"
    )
    two = q.model_copy(update={"static_graphs": ["urn:g", "urn:h"]})
    with pytest.raises(RenderError, match="2 static graphs"):
        render_cqels(two)
    flat = spec("SELECT ?s WHERE { ?s <http://ex.org/p> ?o }", static=("urn:g",))
    with pytest.raises(RenderError, match="write WINDOW blocks"):
        render_cqels(flat)


def test_cqels_refuses_what_a_stream_block_cannot_hold() -> None:
    q = spec("SELECT ?s WHERE { GRAPH <http://ex.org/w> { ?s ?p ?o OPTIONAL { ?s ?q ?x } } }")
    with pytest.raises(RenderError, match="triple patterns only"):
        render_cqels(q)
    assert Feature.OPTIONAL in CqelsAdapter.capabilities.missing(required_features(q))
    aggs = spec("SELECT (AVG(?o) AS ?a) (COUNT(?o) AS ?n) WHERE { ?s ?p ?o }")
    with pytest.raises(RenderError, match="several aggregates"):
        render_cqels(aggs)
    assert render_cqels(spec("SELECT (AVG(?o) AS ?a) WHERE { ?s ?p ?o }"))


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_every_lacking_feature_is_refused(adapter: CsparqlAdapter) -> None:
    lacking = [f for f in FEATURE_PROBES if f not in adapter.capabilities]
    for feature in lacking:
        q = spec(FEATURE_PROBES[feature], r2s=adapter.profile.r2s or R2S.RSTREAM)
        assert feature in adapter.capabilities.missing(required_features(q)), feature


def test_declared_profiles_and_capabilities() -> None:
    csparql, csparql09, cqels = ADAPTERS
    assert csparql.profile.r2s is R2S.RSTREAM and csparql.profile.emits_empty_relations
    assert Feature.APP_TIME_INPUT in csparql.capabilities
    assert Feature.TIMESTAMP_FUNCTION in csparql.capabilities
    assert Feature.APP_TIME_INPUT not in csparql09.capabilities  # wall clock: paced feeding
    assert Feature.BIND not in csparql09.capabilities
    assert cqels.profile.r2s is R2S.ISTREAM and not cqels.profile.emits_empty_relations
    assert Feature.APP_TIME_INPUT not in cqels.capabilities
    assert Feature.RSTREAM not in cqels.capabilities and Feature.ISTREAM in cqels.capabilities


# ---- packaging, manifests, provisioning ----------------------------------------------------


def test_entry_points_register_the_three_adapters() -> None:
    found, broken = discover()
    assert {"csparql", "csparql09", "cqels"} <= set(found), broken
    assert not {k: v for k, v in broken.items() if k in ("csparql", "csparql09", "cqels")}


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_manifests(adapter: CsparqlAdapter) -> None:
    m = adapter.manifest()
    assert m is not None and m.name == adapter.name and m.engine.upstream.startswith("https://")
    assert m.dependencies and all(len(d.sha256) == 64 for d in m.dependencies)
    assert m.artifacts and all(a.where and a.match for a in m.artifacts)
    # JPype passes each flag as one JVM option: "--add-opens X" must be written "--add-opens=X"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in m.jvm.flags
    assert m.jvm.properties.get("log4j.defaultInitOverride") == "true"
    folders = m.glue_dirs()
    assert folders and all(f.is_dir() for f in folders)
    assert m.glue is not None and m.glue.sdk == ["log4j"]  # the drivers' EngineLog
    driver = m.jvm.driver_class.replace(".", "/") + ".java"
    assert sum((f / driver).is_file() for f in folders) == 1, driver


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_missing_artifacts_say_where_and_how(adapter: CsparqlAdapter, tmp_path: Path) -> None:
    cache = ProvisionCache(tmp_path)
    with pytest.raises(MissingArtifact, match=f"rsp engines fetch {adapter.name}"):
        adapter.driver(cache)
    manifest = adapter.manifest()
    assert manifest is not None
    deps = cache.engine_dir(adapter.name) / "deps"
    deps.mkdir(parents=True)
    for d in manifest.dependencies:
        (deps / d.jar_name).write_bytes(b"")
    with pytest.raises(MissingArtifact) as info:
        adapter.driver(cache)
    first = manifest.artifacts[0]
    message = str(info.value)
    assert first.file in message and first.where in message and manifest.engine.upstream in message
    assert f"rsp engines add {adapter.name} /path/to/{first.file}" in message


def _jar(path: Path, module: str, version: str) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            f"META-INF/maven/eu.larkc.csparql/{module}/pom.properties",
            f"#Generated by Maven\nversion={version}\ngroupId=eu.larkc.csparql\nartifactId={module}\n",
        )
    return path


def test_csparql_jars_are_identified_by_their_maven_version(tmp_path: Path) -> None:
    good = _jar(tmp_path / "csparql-core-0.9.7.jar", "csparql-core", "0.9.7")
    check_module_versions([good, tmp_path / "esper-3.5.0.jar"], "0.9.7")
    bad = _jar(tmp_path / "csparql-common-0.9.7.jar", "csparql-common", "0.9.8-SNAPSHOT")
    with pytest.raises(RspError, match=r"version 0\.9\.8-SNAPSHOT, this adapter drives 0\.9\.7"):
        check_module_versions([good, bad], "0.9.7")
    other = tmp_path / "csparql-cep-api-0.9.7.jar"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("x.txt", "not a Maven build")
    with pytest.raises(RspError, match="not a Maven build"):
        check_module_versions([other], "0.9.7")


# ---- C-SPARQL's term strings (the Java conversion, compiled and run) ----------------------

XSD = "http://www.w3.org/2001/XMLSchema#"
TERM_CASES = [
    ("in", "<http://ex.org/a>", "http://ex.org/a"),
    ("in", f'"5"^^<{XSD}integer>', f'"5"^^{XSD}integer'),
    ("in", '"plain"', f'"plain"^^{XSD}string'),
    ("in", r'"two\nlines"', rf'"two\nlines"^^{XSD}string'),
    ("in", "_:b1", "_:b1"),
    ("in", '"hola"@es', "ERROR\tpacked batch line 6: C-SPARQL cannot take the term"),
    ("in", r'"say \"hi\""', "ERROR\tpacked batch line 7: C-SPARQL cannot take the term"),
    ("in", '"a^^b"', "ERROR\tpacked batch line 8: C-SPARQL cannot take the term"),
    ("out", "http://ex.org/a", "<http://ex.org/a>"),
    ("out", f'"83.0e0"^^{XSD}double', f'"83.0e0"^^<{XSD}double>'),
    ("out", '"sensor one"^^null', '"sensor one"'),
    ("out", f'"x"^^{XSD}string', '"x"'),
    ("out", f'"a\\nb "q""^^{XSD}string', r'"a\nb \"q\""'),  # the raw lexical form
    ("out", "", "NULL"),
    ("out", "8ab68a929c0d91abfa62016673fadae0", "_:b8ab68a929c0d91abfa62016673fadae0"),
    ("out", "-3b5f2a:1a2035c83cf:-7fff", "_:bn3b5f2ax1a2035c83cfxn7fff"),
    ("out", "_:b1", "_:b1"),
]


def test_csparql_term_conversion(tmp_path: Path) -> None:
    from tests.conftest import _java_tools_missing

    reason = _java_tools_missing()
    if reason:
        pytest.skip(reason)
    from rsp_sdk.runtime.bridge import bridge_classpath

    cp = ":".join(str(p) for p in bridge_classpath())
    common = Path(CsparqlAdapter.manifest_path).parent / "java" / "common"  # type: ignore[arg-type]
    sources = [
        common / "org/rspsdk/adapters/csparql/CsparqlTerms.java",
        Path(__file__).parent / "java" / "CsparqlTermsCheck.java",
    ]
    subprocess.run(
        [shutil.which("javac") or "javac", "-d", str(tmp_path), "-cp", cp, *map(str, sources)],
        check=True,
        capture_output=True,
    )
    stdin = "".join(f"{d}\t{v}\n" for d, v, _ in TERM_CASES)
    out = subprocess.run(
        ["java", "-cp", f"{tmp_path}:{cp}", "org.rspsdk.adapters.csparql.CsparqlTermsCheck"],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert len(out) == len(TERM_CASES)
    for (direction, value, want), got in zip(TERM_CASES, out, strict=True):
        if want.startswith("ERROR"):
            assert got.startswith(want), (direction, value, got)
        else:
            assert got == want, (direction, value, got)


def test_csparql_inlined_window_triples_are_separated_from_static_triples() -> None:
    """Found by the functional suite (static_join): an inlined window BGP followed by a static
    triple pattern needs a `.` between them, or C-SPARQL's Jena parser rejects the query."""
    text = """PREFIX ex: <http://ex.org/>
    SELECT ?m ?f WHERE { GRAPH ex:w { ?m ex:at ?r } ?r ex:onFloor ?f }"""
    q = spec(text, static=("urn:static",), prefixes={"ex": "http://ex.org/"})
    assert "WHERE { ?m ex:at ?r . ?r ex:onFloor ?f }" in render_csparql(q)


def test_csparql_window_blocks_inside_a_subquery_become_groups() -> None:
    """Found by LSBench's nested query (empty relations on C-SPARQL): a window block inside a
    sub-SELECT was kept as ``GRAPH ex:w { … }``, a named graph C-SPARQL never has."""
    text = """PREFIX ex: <http://ex.org/>
    SELECT ?r ?n WHERE {
      { SELECT ?r (COUNT(?m) AS ?n) WHERE { GRAPH ex:w { ?m ex:at ?r } } GROUP BY ?r }
      FILTER(?n >= 1)
    }"""
    got = render_csparql(spec(text, prefixes={"ex": "http://ex.org/"}))
    assert got.endswith(
        "WHERE { { SELECT ?r (COUNT(?m) AS ?n) WHERE { { ?m ex:at ?r } } GROUP BY ?r } "
        "FILTER(?n >= 1) }"
    )
    other = "SELECT ?s WHERE { ?s ?p ?o OPTIONAL { GRAPH <urn:g> { ?s ?q ?x } } }"
    assert "GRAPH <urn:g> { ?s ?q ?x }" in render_csparql(spec(other))  # not the window: kept
