"""Query input: RSP-QL, CSRBench properties and TOML/JSON, YABench folders, durations, params."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.model.profile import R2S
from rsp_sdk.query import load_query, parse_rspql
from rsp_sdk.query.csrbench import read_properties
from rsp_sdk.query.durations import DurationError, parse_duration

CITYBENCH = "streamreasoning+rsp4j/csparql2/src/test/resources/citybench"
CSRBENCH = "dellaglio+csrbench-oracle/src/main/resources/srbench-queries.properties"


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("PT10S", 10_000),
        ("PT0.5S", 500),
        ("PT1M", 60_000),
        ("PT1M30S", 90_000),
        ("P1DT1H", 90_000_000),
        ("pt2s", 2000),
        ("60s", 60_000),
        ("5m", 300_000),
        ("500ms", 500),
        ("1h", 3_600_000),
        ("250", 250),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["PT", "P", "PT0.0005S", "10 parsecs", "PT-1S", "P1M", "0s"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


def test_every_citybench_rspql_parses(shared_data: Path) -> None:
    files = sorted((shared_data / CITYBENCH).glob("*.rspql"))
    assert len(files) == 11
    for f in files:
        spec = load_query(f)
        assert spec.windows and spec.window_graphs
        assert all(w.range_ms == 3000 and w.step_ms == 1000 for w in spec.windows)
        assert "REGISTER" not in spec.sparql and "NAMED WINDOW" not in spec.sparql
        # blanking keeps every line where it was: same number of lines, same line lengths
        assert [len(x) for x in spec.sparql.split("\n")] == [len(x) for x in spec.text.split("\n")]


def test_citybench_q1_fields(shared_data: Path) -> None:
    spec = load_query(shared_data / CITYBENCH / "q1.rspql")
    ses = "http://www.insight-centre.org/dataset/SampleEventService#"
    assert spec.name == "q1"
    assert spec.r2s is R2S.RSTREAM
    assert spec.variables == ["obId1", "obId2", "v1", "v2"]
    assert [(w.name, w.stream) for w in spec.windows] == [
        ("http://rsp-sdk.local/w1", ses + "AarhusTrafficData182955"),
        ("http://rsp-sdk.local/w2", ses + "AarhusTrafficData158505"),
    ]
    assert spec.static_graphs == ["http://citybench/SensorRepository.rdf"]
    assert "GRAPH  <w1> {" in spec.sparql and "WINDOW" not in spec.sparql
    assert spec.prefixes["ssn"] == "http://purl.oclc.org/NET/ssnx/ssn#"


def test_citybench_q12_parses_with_a_warning(shared_data: Path) -> None:
    # ?p is projected but not grouped: rdflib reads it as SAMPLE, SPARQL 1.1 (pyoxigraph) refuses
    spec = load_query(shared_data / CITYBENCH / "q12.rspql")
    assert spec.variables == ["service", "p"]
    assert spec.warnings and "pyoxigraph rejects" in spec.warnings[0]


def test_register_forms_and_durations() -> None:
    spec = parse_rspql(
        "PREFIX ex: <http://example.org/>\n"
        "REGISTER ISTREAM ex:q AS\n"
        "SELECT ?s\n"
        "FROM NAMED WINDOW ex:w ON ex:stream [RANGE PT0.5S STEP PT0.25S]\n"
        "WHERE { WINDOW ex:w { ?s ex:p ?o } }"
    )
    assert spec.r2s is R2S.ISTREAM
    assert spec.name == "http://example.org/q"
    assert (spec.windows[0].range_ms, spec.windows[0].step_ms) == (500, 250)
    assert spec.windows[0].stream == "http://example.org/stream"
    dstream = parse_rspql(
        "REGISTER DSTREAM <d> AS SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT1M] "
        "WHERE { WINDOW <w> { ?a ?b ?c } }"
    )
    assert dstream.r2s is R2S.DSTREAM
    assert dstream.windows[0].step_ms == 60_000  # no STEP: tumbling
    assert dstream.variables == ["a", "b", "c"]


def test_template_parameters_and_missing_one() -> None:
    text = (
        "SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE ${SIZE} STEP ${SIZE}]\n"
        "WHERE { WINDOW <w> { ?s <p> ?v FILTER(?v > ${MIN}) } }"
    )
    spec = parse_rspql(text, params={"SIZE": "PT5S", "MIN": "3"})
    assert spec.windows[0].range_ms == 5000
    assert spec.parameters == {"SIZE": "PT5S", "MIN": "3"}
    with pytest.raises(InputError) as err:
        parse_rspql(text, params={"SIZE": "PT5S"})
    assert "'MIN'" in str(err.value)
    assert (err.value.line, err.value.column) == (2, 44)


def test_syntax_error_names_the_original_line_and_column() -> None:
    text = (
        "PREFIX ex: <http://example.org/>\n"
        "REGISTER RSTREAM <q> AS\n"
        "SELECT ?s FROM NAMED WINDOW <w> ON ex:s [RANGE PT${N}S STEP PT${N}S]\n"
        "WHERE {\n"
        "  WINDOW <w> { ?s ex:p ?o . }\n"
        "  FILTER(?o > ${N} && ) }\n"
    )
    with pytest.raises(InputError) as err:
        parse_rspql(text, params={"N": "10000"}, path="q.rspql")
    e = err.value
    assert e.line == 6
    assert e.text == "  FILTER(?o > ${N} && ) }"
    assert str(e).startswith("q.rspql:6:")


def test_undeclared_window_and_prefix_errors() -> None:
    with pytest.raises(InputError, match="not declared"):
        parse_rspql(
            "SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] WHERE { WINDOW <x> { ?s ?p ?o } }"
        )
    with pytest.raises(InputError, match="undeclared prefix") as err:
        parse_rspql("SELECT ?s\nFROM NAMED WINDOW ex:w ON <s> [RANGE PT1S] WHERE { ?s ?p ?o }")
    assert err.value.line == 2
    with pytest.raises(InputError, match="definition"):
        parse_rspql("SELECT ?s FROM NAMED WINDOW <w> ON <s> WHERE { ?s ?p ?o }")
    with pytest.raises(InputError, match="STEP"):
        parse_rspql(
            "SELECT ?s FROM NAMED WINDOW <a> ON <s> [RANGE PT2S STEP PT1S] "
            "FROM NAMED WINDOW <b> ON <s> [RANGE PT2S STEP PT2S] WHERE { ?s ?p ?o }"
        )


def test_csrbench_properties(shared_data: Path) -> None:
    path = shared_data / CSRBENCH
    sizes = {}
    for i in range(1, 8):
        spec = load_query(f"{path}#srb.query{i}")
        sizes[i] = (spec.windows[0].range_ms, spec.windows[0].step_ms, spec.first_t0_ms)
        assert not spec.window_graphs
    assert sizes == {
        1: (10000, 10000, 0),
        2: (1000, 1000, 0),
        3: (4000, 4000, 0),
        4: (4000, 4000, 0),
        5: (5000, 1000, 0),
        6: (50000, 50000, 0),
        7: (5000, 5000, 0),
    }
    q1 = load_query(f"{path}#srb.query1")
    assert q1.variables == ["sensor", "obs"]
    # lines ending in "\ " (backslash, spaces) continue, as Commons Configuration reads them
    assert "om-owl:procedure ?sensor" in q1.sparql and q1.sparql.endswith("FILTER(?value > 80)}")
    assert load_query(f"{path}#srb.query4").variables == ["avg"]


def test_csrbench_selection_errors(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / CSRBENCH
    with pytest.raises(InputError, match="several queries"):
        load_query(path)
    with pytest.raises(InputError, match=r"srb\.query9"):
        load_query(f"{path}#srb.query9")
    bad = tmp_path / "q.properties"
    bad.write_text(
        "# a query with a typo on its third physical line\n"
        "x.booleanquery = SELECT ?s WHERE { \\\n"
        "    ?s ?p ?o .\\\n"
        "    FILTER(?o > ) }\n"
        "x.window.size = 1000\n"
    )
    with pytest.raises(InputError) as err:
        load_query(bad)
    assert err.value.line in (3, 4)
    props = read_properties(bad)
    assert props["x.window.size"].value == "1000"


def test_toml_and_json_query_files(tmp_path: Path) -> None:
    toml = tmp_path / "q.toml"
    toml.write_text(
        'sparql = """\nSELECT ?s WHERE {\n  ?s ?p ?o .\n}"""\n'
        "window_ms = 4000\nslide_ms = 2000\nfirst_t0_ms = 1000\nr2s = 'istream'\n"
    )
    spec = load_query(toml)
    assert (spec.windows[0].range_ms, spec.windows[0].step_ms, spec.first_t0_ms) == (
        4000,
        2000,
        1000,
    )
    assert spec.r2s is R2S.ISTREAM and spec.variables == ["s"]
    js = tmp_path / "q.json"
    js.write_text(json.dumps({"sparql": "SELECT ?s WHERE { ?s ?p ?o }", "window_ms": 10}))
    assert load_query(js).windows[0].step_ms == 10
    bad = tmp_path / "bad.toml"
    bad.write_text('window_ms = 5\nsparql = """\nSELECT ?s WHERE {\n  ?s ?p \n}"""\n')
    with pytest.raises(InputError) as err:
        load_query(bad)
    assert err.value.line is not None and err.value.line >= 3
    with pytest.raises(InputError, match="window_ms"):
        (tmp_path / "nowin.toml").write_text('sparql = "SELECT * WHERE {?s ?p ?o}"\n')
        load_query(tmp_path / "nowin.toml")


def test_a_query_spec_dumped_as_json_reads_back_unchanged(tmp_path: Path) -> None:
    """The matrix keeps each cell's QuerySpec as queries/<sha16>.json (a template, two windows
    and prefixes here); `-q` on that file must give the very same spec, and a broken one names
    the field."""
    text = (
        "PREFIX ex: <http://ex.org/>\nREGISTER ISTREAM ex:q AS SELECT ?s ?o\n"
        "FROM NAMED WINDOW ex:w ON ex:s [RANGE ${R} STEP PT1S]\n"
        "FROM NAMED WINDOW ex:v ON ex:t [RANGE PT2S STEP PT1S]\n"
        "WHERE { WINDOW ex:w { ?s ex:p ?o } WINDOW ex:v { ?o ex:p ?s } }\n"
    )
    spec = parse_rspql(text, params={"R": "PT3S"})
    dumped = tmp_path / "0123456789abcdef.json"
    dumped.write_text(spec.model_dump_json(indent=2))
    assert load_query(dumped) == spec and load_query(dumped).windows[0].range_ms == 3000
    broken = json.loads(dumped.read_text())
    broken["windows"][1]["step_ms"] = "soon"
    dumped.write_text(json.dumps(broken))
    with pytest.raises(InputError, match=r"windows\.1\.step_ms") as err:
        load_query(dumped)
    assert err.value.path == dumped


def test_yabench_folders(shared_data: Path) -> None:
    folders = sorted((shared_data / "YABench+yabench" / "tests").iterdir())
    folders += sorted(
        p for p in (shared_data / "YABench+csrbench-validation").iterdir() if p.is_dir()
    )
    assert len(folders) == 23
    for folder in folders:
        spec = load_query(folder)
        w = spec.windows[0]
        assert spec.first_t0_ms == w.step_ms - w.range_ms  # windows end at multiples of β
        assert spec.report_hint in ("window_close", "content_change")
    avg = load_query(shared_data / "YABench+yabench" / "tests" / "cqels_Q2_1")
    assert avg.variables == ["avg"] and "AVG" in avg.sparql and "yabench/avg" not in avg.sparql
    q12 = load_query(shared_data / "YABench+yabench" / "tests" / "csparql_Q1_2")
    assert (q12.windows[0].range_ms, q12.windows[0].step_ms) == (120_000, 60_000)
    assert "FILTER(?value > 10.0)" in q12.sparql  # TEMP = 10.0 in its config.json
    overridden = load_query(
        shared_data / "YABench+yabench" / "tests" / "csparql_Q1_1", {"TEMP": "70"}
    )
    assert "FILTER(?value > 70)" in overridden.sparql
