"""The oracle's row-wise driver steps split over cores (``rsp_sdk.oracle.slices``) give what
one thread gives: the binding JSON against ``binding_to_json`` row by row, the texts of the
emitted rows against a plain ``take``. Arrow's pool is set to three cores and the split
threshold to a few rows, so every step really runs in several slices on any machine."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

from rsp_sdk.model.results import binding_to_json
from rsp_sdk.model.terms import to_sparql_json
from rsp_sdk.oracle import bindings, slices
from rsp_sdk.oracle.encoding import TermDictionary


@pytest.fixture
def three_cores(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = pa.cpu_count()
    pa.set_cpu_count(3)
    monkeypatch.setattr(slices, "PARALLEL_FROM", 10)
    yield
    pa.set_cpu_count(before)


def _terms(k: int) -> list[str]:
    """Terms of every kind the rewrites handle, and some only Python's conversion does."""
    return [
        f"<http://example.org/obs/{k}>",
        f'"{k}.5"^^<http://www.w3.org/2001/XMLSchema#double>',
        f'"word {k}"@en',
        f'"plain {k}"',
        f"_:b{k}",
        f'"quote \\" and tab\\t {k}"',
        f'"ünïcode {k}"^^<http://www.w3.org/2001/XMLSchema#string>',
    ]


def test_ranges_cover_the_rows_in_order_one_per_core(three_cores: None) -> None:
    assert slices.bounds(100) == [(0, 34), (34, 68), (68, 100)]
    assert slices.bounds(9) == [(0, 9)]  # below the threshold: one thread
    got = slices.map_rows(lambda lo, hi: pa.array(range(lo, hi)), 100)
    assert got.to_pylist() == list(range(100))


def test_binding_json_built_in_slices_is_each_rows_own(three_cores: None) -> None:
    pool = [t for k in range(40) for t in _terms(k)]
    n = 3000
    columns = {
        "a": [pool[(7 * i) % len(pool)] for i in range(n)],
        "z": [pool[(11 * i + 3) % len(pool)] for i in range(n)],
        "m": [pool[(i * i) % len(pool)] for i in range(n)],
    }
    variables = ["z", "a", "m"]
    got = bindings.bindings_from_columns(
        [pa.array(columns[v], pa.string()) for v in variables], variables
    )
    want = [
        binding_to_json({v: to_sparql_json(columns[v][i]) for v in variables}) for i in range(n)
    ]
    assert got.to_pylist() == want


def test_emitted_texts_taken_in_slices_are_a_plain_take(three_cores: None) -> None:
    terms = TermDictionary(pa.array([t for k in range(30) for t in _terms(k)], pa.string()))
    with_nulls = pa.array([None if i % 9 == 0 else (3 * i) % 210 for i in range(1000)], pa.int64())
    out = bindings.texts_of(with_nulls, terms.terms)
    assert out.num_chunks == 3
    assert out.to_pylist() == terms.terms.take(with_nulls).to_pylist()
