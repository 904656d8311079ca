"""Importers on the public CSRBench/YABench data and on deliberately broken input."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from rsp_sdk.errors import InputError
from rsp_sdk.model.terms import split_literal
from rsp_sdk.streams.importers.csrbench import read_csrbench_folder
from rsp_sdk.streams.importers.n3t import read_n3t
from rsp_sdk.streams.importers.rdf import read_rdf
from rsp_sdk.streams.importers.trig import read_trig

CSR_TRIPLES = 15188
CSR_TIMES = 34


def _n3t(shared: Path) -> Path:
    return shared / "YABench+csrbench-validation" / "csrbench-inputstream.n3t"


def _rows(table: pa.Table, lexical: bool = False) -> Counter[tuple[int, str, str, str]]:
    """Multiset of (t, s, p, o).

    With ``lexical``, literals compare by lexical value (numbers by numeric value), ignoring the
    datatype: YABench's CSRBench converter typed every literal xsd:float, dates included.
    """
    out: Counter[tuple[int, str, str, str]] = Counter()
    cols = [table.column(c).to_pylist() for c in ("t_app_ms", "s", "p", "o")]
    for t, s, p, o in zip(*cols, strict=True):
        if lexical and o.startswith('"'):
            lex = split_literal(o)[0]
            try:
                o = repr(float(lex))
            except ValueError:
                o = lex
        out[(t, s, p, o)] += 1
    return out


def test_n3t_csrbench_inputstream(shared_data: Path) -> None:
    table = read_n3t(_n3t(shared_data))
    assert table.num_rows == CSR_TRIPLES
    assert len(set(table.column("t_app_ms").to_pylist())) == CSR_TIMES
    # YABench's unquoted "92^^http://…#float" becomes a proper N-Triples literal
    values = [
        o
        for p, o in zip(table.column("p").to_pylist(), table.column("o").to_pylist(), strict=True)
        if p.endswith("#floatValue>")
    ]
    assert len(values) == 1890
    assert all(v.endswith('"^^<http://www.w3.org/2001/XMLSchema#float>') for v in values)


def test_csrbench_folder_and_n3t_describe_the_same_triples(shared_data: Path) -> None:
    folder = read_csrbench_folder(
        shared_data / "dellaglio+csrbench-oracle" / "data", interval_ms=1000
    )
    n3t = read_n3t(_n3t(shared_data))
    assert folder.num_rows == n3t.num_rows == CSR_TRIPLES
    # YABench re-typed CSRBench's literals as xsd:float: same values, other datatypes
    assert _rows(folder, lexical=True) == _rows(n3t, lexical=True)
    assert _rows(folder) != _rows(n3t)


def test_trig_dataset_equals_the_ttl_folder(shared_data: Path) -> None:
    trig = read_trig(shared_data / "YABench+csrbench-validation" / "csrbench-dataset.trig")
    folder = read_csrbench_folder(
        shared_data / "dellaglio+csrbench-oracle" / "data", interval_ms=1000
    )
    assert trig.num_rows == CSR_TRIPLES  # the 34 hasTimestamp metadata triples are not data
    assert _rows(trig) == _rows(folder)
    assert trig.column("g").null_count == 0
    assert len(set(trig.column("g").to_pylist())) == CSR_TIMES


def test_static_turtle(shared_data: Path) -> None:
    table = read_rdf(
        shared_data / "CityBench+Benchmark" / "dataset" / "SensorRepository.n3", fmt="turtle"
    )
    assert table.num_rows > 1000
    assert table.column("g").null_count == table.num_rows
    # blank nodes get deterministic labels
    again = read_rdf(
        shared_data / "CityBench+Benchmark" / "dataset" / "SensorRepository.n3", fmt="turtle"
    )
    assert table.equals(again)


BAD_N3T = {
    "malformed IRI": ('<http://a> <http://b> <http://c d> "0" .\n', 1, "object"),
    "missing timestamp": (
        '<http://a> <http://b> <http://c> "0" .\n<http://a> <http://b> <http://c> .\n',
        2,
        "missing timestamp",
    ),
    "non-numeric timestamp": ('<http://a> <http://b> <http://c> "soon" .\n', 1, "not a number"),
    "decreasing timestamps": (
        '<http://a> <http://b> <http://c> "10" .\n<http://a> <http://b> <http://d> "5" .\n',
        2,
        "smaller",
    ),
    "bad literal": ('<http://a> <http://b> "open .\n', 1, ""),
    "literal subject": ('"x" <http://b> <http://c> "1" .\n', 1, "subject"),
}


@pytest.mark.parametrize("case", sorted(BAD_N3T))
def test_n3t_errors_name_file_line_and_text(tmp_path: Path, case: str) -> None:
    text, line, fragment = BAD_N3T[case]
    src = tmp_path / "bad.n3t"
    src.write_text(text)
    with pytest.raises(InputError) as info:
        read_n3t(src)
    err = info.value
    assert err.path == src and err.line == line
    assert err.text == text.splitlines()[line - 1]
    assert fragment in str(err)
    assert f"bad.n3t:{line}" in str(err)


def test_n3t_sort_accepts_unsorted(tmp_path: Path) -> None:
    src = tmp_path / "unsorted.n3t"
    src.write_text(
        '<http://a> <http://b> <http://c> "10" .\n<http://a> <http://b> <http://d> "5" .\n'
        '<http://a> <http://b> <http://e> "5" .\n'
    )
    table = read_n3t(src, sort=True)
    assert table.column("t_app_ms").to_pylist() == [5, 5, 10]
    assert table.column("o").to_pylist() == ["<http://d>", "<http://e>", "<http://c>"]  # stable


def test_n3t_literal_forms(tmp_path: Path) -> None:
    src = tmp_path / "lit.n3t"
    src.write_text(
        '<http://a> <http://b> "with space and \\"quote\\"" "1" .\n'
        '<http://a> <http://b> "x"^^<http://www.w3.org/2001/XMLSchema#string> "2"\n'
        '<http://a> <http://b> "caf\\u00E9"@FR "3" .\n'
        "# a comment\n\n"
        '_:n1 <http://b> _:n2 "4" .\n'
    )
    table = read_n3t(src)
    assert table.column("o").to_pylist() == [
        '"with space and \\"quote\\""',
        '"x"',
        '"café"@fr',
        "_:n2",
    ]
    assert table.column("t_app_ms").to_pylist() == [1, 2, 3, 4]


def test_turtle_syntax_error_position(tmp_path: Path) -> None:
    src = tmp_path / "bad.ttl"
    src.write_text("@prefix ex: <http://ex/> .\nex:a ex:b ex:c .\nex:a ex:b .\n")
    with pytest.raises(InputError) as info:
        read_rdf(src, fmt="turtle")
    assert info.value.line == 3
    assert info.value.text == "ex:a ex:b ."


def test_csrbench_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no data_XX\.ttl"):
        read_csrbench_folder(tmp_path, interval_ms=1000)
    (tmp_path / "data_00.ttl").write_text("<http://a> <http://b> <http://c> .\n")
    (tmp_path / "data_01.ttl").write_text("<http://a> <http://b> .\n")
    with pytest.raises(InputError) as info:
        read_csrbench_folder(tmp_path, interval_ms=1000)
    assert info.value.path == tmp_path / "data_01.ttl" and info.value.line == 1


def test_trig_errors(tmp_path: Path) -> None:
    src = tmp_path / "s.trig"
    src.write_text("<http://g1> { <http://a> <http://b> <http://c> . }\n")
    with pytest.raises(InputError, match="has no timestamp") as info:
        read_trig(src)
    assert info.value.line == 1
    src.write_text(
        '<http://meta> { <http://g1> <http://www.streamreasoning.org/schema/benchmark#hasTimestamp> "5" .\n'
        '  <http://g2> <http://www.streamreasoning.org/schema/benchmark#hasTimestamp> "1" . }\n'
        "<http://g1> { <http://a> <http://b> <http://c> . }\n"
        "<http://g2> { <http://a> <http://b> <http://d> . }\n"
    )
    with pytest.raises(InputError, match="smaller"):
        read_trig(src)
    assert read_trig(src, sort=True).column("o").to_pylist() == ["<http://d>", "<http://c>"]
