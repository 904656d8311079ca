"""Importing engine outputs: the recorded CSRBench answers, legacy JSON, run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rsp_sdk.compare.answers import (
    TimestampClock,
    load_answers,
    read_csrbench_answer,
    read_pushed,
)
from rsp_sdk.compare.clock import TimeMap
from rsp_sdk.compare.relations import binding_key, result_relations, term_key
from rsp_sdk.errors import InputError
from rsp_sdk.model.results import RESULT_SCHEMA
from tests.compare_tables import XSD, result_table, s

ANSWERS = "dellaglio+csrbench-oracle/src/main/resources/answers"

# (relations, bindings, empty relations) per recorded answer, counted from the raw JSON.
RECORDED = {
    "cqels-answer-1": (15, 15, 0),
    "cqels-answer-2": (15, 15, 0),
    "cqels-answer-3": (12, 12, 0),
    "cqels-answer-4": (15, 15, 0),
    "cqels-answer-5": (15, 15, 0),
    "cqels-answer-6": (92, 92, 0),
    "cqels-answer-7": (957, 957, 0),
    "csparql-answer-1": (4, 15, 1),
    "csparql-answer-2": (33, 15, 18),
    "csparql-answer-3": (9, 12, 5),
    "csparql-answer-4": (9, 9, 0),
    "csparql-answer-5": (38, 71, 12),
    "csparql-answer-6": (7, 6, 2),
    "csparql-answer-7": (7, 41, 2),
    "sparqlstream-answer-1": (3, 15, 0),
    "sparqlstream-answer-2": (15, 15, 0),
    "sparqlstream-answer-3": (5, 12, 0),
    "sparqlstream-answer-4": (9, 9, 0),
    "sparqlstream-answer-5": (26, 75, 0),
    "sparqlstream-answer-6": (3, 7, 0),
    "sparqlstream-answer-7": (4, 46, 0),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_csrbench_answers_import(shared_data: Path, name: str) -> None:
    path = shared_data / ANSWERS / f"{name}.json"
    table = read_csrbench_answer(path)
    assert table.schema == RESULT_SCHEMA
    n_rel, n_bind, n_empty = RECORDED[name]
    assert table.num_rows == n_bind + n_empty
    stream = result_relations(table)
    assert stream.query == name
    assert len(stream) == n_rel
    assert sum(r.size for r in stream.relations) == n_bind
    assert sum(1 for r in stream.relations if r.size == 0) == n_empty
    # every relation carries its recorded timestamp, on the application clock by default
    raw = json.loads(path.read_text())["relations"]
    assert [r.t_app_ms for r in stream.relations] == [rel["timestamp"] for rel in raw]
    assert all(r.t_sys_ns is None for r in stream.relations)


def test_engines_repository_copy_imports_too(shared_data: Path) -> None:
    root = shared_data / "dellaglio+csrbench-oracle-engines"
    files = sorted(root.glob("*/results/*.json"))
    assert len(files) == 21
    for f in files:
        stream = result_relations(read_csrbench_answer(f))
        assert len(stream) == RECORDED[f.stem][0], f


def test_numbers_by_value_across_engines(shared_data: Path) -> None:
    # Q4's AVG: C-SPARQL writes decimals, SPARQLstream doubles — the same values.
    csparql = result_relations(
        read_csrbench_answer(shared_data / ANSWERS / "csparql-answer-4.json")
    )
    sstream = result_relations(
        read_csrbench_answer(shared_data / ANSWERS / "sparqlstream-answer-4.json")
    )
    by_time_c = {r.t_app_ms: r.keys for r in csparql.relations}
    by_time_s = {r.t_app_ms: r.keys for r in sstream.relations}
    for t in (16000, 20000, 24000, 28000, 32000, 36000):
        assert by_time_c[t] == by_time_s[t], t
    # SPARQLstream's "null" for an empty AVG is a plain string, not C-SPARQL's integer 0
    assert next(iter(by_time_s[39000])) == (("avg", ("s", "null")),)
    assert next(iter(by_time_c[4000])) == (("avg", ("n", 0)),)


def test_top_level_member_name_is_free_and_xsd_string_normalised(shared_data: Path) -> None:
    # The published oracle's own test file calls the list "results"; its reader ignores the name.
    path = shared_data / "dellaglio+csrbench-oracle/src/test/resources/testresult.json"
    stream = result_relations(read_csrbench_answer(path))
    assert [r.t_app_ms for r in stream.relations] == [
        13500,
        15500,
        16500,
        18500,
        19500,
        21500,
        22500,
    ]
    first = json.loads(stream.labels[next(iter(stream.relations[0].keys))])
    assert first["value"] == {"type": "literal", "value": "83.0"}  # xsd:string dropped


def test_legacy_typed_literal_and_sys_clock(tmp_path: Path) -> None:
    doc = {
        "relations": [
            {
                "head": {"vars": ["v", "s"]},
                "timestamp": 1234,
                "results": {
                    "bindings": [
                        {
                            "timestamp": 1234,
                            "binding": {
                                "v": {
                                    "type": "typed-literal",
                                    "datatype": XSD + "integer",
                                    "value": "7",
                                },
                                "s": {"type": "uri", "value": "http://example.org/a"},
                            },
                        }
                    ]
                },
            },
            {"head": {"vars": ["v", "s"]}, "timestamp": 2000, "results": {"bindings": []}},
        ]
    }
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(doc))
    table = read_csrbench_answer(path, query="q7", clock=TimestampClock.SYS)
    assert table.column("query").to_pylist() == ["q7", "q7"]
    assert table.column("t_sys_ns").to_pylist() == [1_234_000_000, 2_000_000_000]
    assert table.column("t_app_ms").to_pylist() == [None, None]
    assert table.column("binding").to_pylist() == [
        '{"s":{"type":"uri","value":"http://example.org/a"},'
        '"v":{"datatype":"http://www.w3.org/2001/XMLSchema#integer","type":"literal","value":"7"}}',
        None,
    ]
    key = next(iter(result_relations(table).relations[0].keys))
    assert dict(key)["v"] == term_key(
        {"type": "literal", "datatype": XSD + "integer", "value": "7"}
    )


@pytest.mark.parametrize(
    ("text", "match", "line"),
    [
        ('{"relations": [\n  {"head": }\n]}', "not valid JSON", 2),
        (
            '{"relations": [{"timestamp": 1, "results": {"bindings": []}}]}',
            r"relations\[0\]\.head",
            None,
        ),
        (
            '{"relations": [{"head": {"vars": []}, "timestamp": "soon", "results": {"bindings": []}}]}',
            r"relations\[0\]\.timestamp",
            None,
        ),
        (
            '{"relations": [{"head": {"vars": ["x"]}, "timestamp": 1, "results": {"bindings": '
            '[{"binding": {"x": {"type": "graph", "value": "g"}}}]}}]}',
            r"relations\[0\]\.results\.bindings\[0\].*unknown SPARQL JSON term type",
            None,
        ),
        ('{"relations": [], "more": 1}', "unexpected top-level structure", None),
    ],
)
def test_bad_answer_files(tmp_path: Path, text: str, match: str, line: int | None) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=match) as err:
        read_csrbench_answer(path)
    assert err.value.path == path
    assert err.value.line == line


def test_run_directory_single_file_and_part_files(tmp_path: Path) -> None:
    table = result_table([s("a"), [], s("b", "c")], t_sys_ns=[5, 6, 7])
    single = tmp_path / "run1"
    single.mkdir()
    pq.write_table(table, single / "outputs.parquet")
    parts = tmp_path / "run2"
    (parts / "outputs.parquet").mkdir(parents=True)
    pq.write_table(table.slice(0, 2), parts / "outputs.parquet" / "part-00000.parquet")
    pq.write_table(table.slice(2), parts / "outputs.parquet" / "part-00001.parquet")
    for run in (single, parts):
        loaded = load_answers(run)
        assert loaded.schema == RESULT_SCHEMA
        stream = result_relations(loaded)
        assert [r.size for r in stream.relations] == [1, 0, 2]
        assert stream.relations[2].keys == {
            binding_key({"x": {"type": "uri", "value": "http://example.org/" + n}})
            for n in ("b", "c")
        }
    # the Parquet file itself works too
    assert load_answers(single / "outputs.parquet").num_rows == table.num_rows
    assert read_pushed(single) is None


def test_run_outputs_with_wrong_columns(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    pq.write_table(pa.table({"query": ["q"], "seq": [0]}), run / "outputs.parquet")
    with pytest.raises(InputError, match="lacks column"):
        load_answers(run)
    with pytest.raises(InputError, match="no such file"):
        load_answers(tmp_path / "nowhere")


def test_pushed_records_give_a_time_map(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    # the recorder's layout (rsp_sdk.run.recorder): a warm-up batch, then three measured ones
    pushed = pa.table(
        {
            "phase": ["warmup", "measure", "measure", "measure"],
            "stream": ["s"] * 4,
            "batch": [0, 0, 1, 2],
            "count": [10, 10, 10, 10],
            "t_app_min_ms": [0, 0, 1000, 2000],
            "t_app_max_ms": [500, 900, 1900, 2900],
            "t_due_ns": [None, None, None, None],
            "t_sys_start_ns": [1_000_000_000, 10_000_000_000, 10_500_000_000, 11_000_000_000],
            "t_sys_end_ns": [1_100_000_000, 10_010_000_000, 10_510_000_000, 11_020_000_000],
        }
    )
    pq.write_table(pushed, run / "pushed.parquet")
    table = read_pushed(run)
    assert table is not None
    tm = TimeMap.from_pushed(table)
    assert tm.start_sys_ns == 10_000_000_000  # the warm-up is not the stream
    # the batch [1000, 1900] was pushed from 10.5 s to 10.51 s; 1950 lies between its end and
    # the next batch's start (2000 at 11.0 s)
    assert tm.sys_ns_at(1000) == pytest.approx(10_500_000_000)
    assert tm.sys_ns_at(1900) == pytest.approx(10_510_000_000)
    assert tm.sys_ns_at(1950) == pytest.approx(10_755_000_000)
    # after the last point: the run's mean pace (1.02 s of system time for 2.9 s of app time)
    assert tm.sys_ns_at(3900) == pytest.approx(11_020_000_000 + 1000 * 1.02e9 / 2900)
    assert tm.relative_ms(11_000_000_000) == pytest.approx(1000.0)
    assert tm.end_sys_ns == 11_020_000_000
    # the simplest layout, one (t_app_ms, t_sys_ns) point per batch, works too
    simple = TimeMap.from_pushed(pa.table({"t_app_ms": [0, 1000], "t_sys_ns": [0, 500_000_000]}))
    assert simple.sys_ns_at(500) == pytest.approx(250_000_000)
    with pytest.raises(InputError, match="lack the time columns"):
        TimeMap.from_pushed(pa.table({"t_sys_ns": [1]}))
