"""Relations and binding equality: RDF terms, numbers by value, whole bindings."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from rsp_sdk.compare.relations import (
    bag_overlap,
    binding_key,
    expected_relations,
    result_relations,
    term_key,
)
from rsp_sdk.errors import InputError
from rsp_sdk.model.results import EXPECTED_SCHEMA, RESULT_SCHEMA, binding_to_json
from tests.compare_tables import XSD, b, expected_table, num, result_table, s, uri


def lit(value: str, **extra: str) -> dict[str, str]:
    return {"type": "literal", "value": value, **extra}


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (num("5"), num("5.0", "decimal")),
        (num("5"), num("5", "double")),
        (num("5"), num("5.0e0", "double")),
        (num("5.0", "decimal"), num("5E0", "float")),
        (num("5"), num("05", "long")),
        (num("0.1", "decimal"), num("0.1", "double")),
        # C-SPARQL's AVG (decimal, 26 digits) and CQELS's AVG (double) for the same window
        (num("87.666666666666666666666666", "decimal"), num("87.66666666666667e0", "double")),
        (num("90.", "decimal"), num("90.0e0", "double")),
        # one xsd:float value written with a double's digits (rsp-js / Comunica's AVG) and with
        # a float's (the oracle's): YABench E2 on SG1
        (num("77.33333333333333", "float"), num("77.333336", "float")),
        (num("NaN", "double"), num("NaN", "double")),
        (lit("a"), lit("a", datatype=XSD + "string")),
        (lit("chat", **{"xml:lang": "FR"}), lit("chat", **{"xml:lang": "fr"})),
        ({"type": "typed-literal", "datatype": XSD + "integer", "value": "7"}, num("7")),
        (num("1", "boolean"), num("true", "boolean")),
    ],
)
def test_equal_terms(left: dict[str, str], right: dict[str, str]) -> None:
    assert term_key(left) == term_key(right)
    assert hash(term_key(left)) == hash(term_key(right))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (num("5"), num("6")),
        (num("5"), lit("5")),  # a number is not a string
        (num("0.5", "decimal"), num("0.6", "double")),
        (num("77.333", "float"), num("77.333336", "float")),  # distinct single-precision values
        (num(str(2**60)), num(str(2**60 + 1))),  # integral values compare exactly
        (num("abc"), num("abd")),  # ill-typed literals compare as literals
        (uri("a"), lit("http://example.org/a")),
        (uri("a"), {"type": "bnode", "value": "a"}),
        (lit("chat", **{"xml:lang": "fr"}), lit("chat")),
        (lit("x", datatype=XSD + "date"), lit("x")),
    ],
)
def test_different_terms(left: dict[str, str], right: dict[str, str]) -> None:
    assert term_key(left) != term_key(right)


def test_whole_bindings_compared_not_only_numbers() -> None:
    # The published CSRBench oracle compares only the numeric variables once one is present,
    # so these two would be "equal" there. They are different answers.
    one = binding_key(b(sensor="s1", value=num("80")))
    other = binding_key(b(sensor="s2", value=num("80.0", "decimal")))
    assert one != other
    assert binding_key(b(sensor="s1", value=num("80"))) == binding_key(
        b(sensor="s1", value=num("80.0", "double"))
    )
    # unbound variables are absent, not null terms
    assert binding_key({"x": uri("a"), "y": None}) == binding_key({"x": uri("a")})


def test_unknown_term_type_rejected() -> None:
    with pytest.raises(ValueError, match="unknown SPARQL JSON term type"):
        term_key({"type": "triple", "value": "x"})


def test_result_relations_group_by_seq_keep_row_order_and_empties() -> None:
    table = result_table([s("a", "b"), [], s("c", "c")], t_sys_ns=[10, 20, 30])
    # shuffle the rows: relations are defined by seq, rows keep their order within a seq
    shuffled = table.take([3, 4, 2, 0, 1])
    stream = result_relations(shuffled)
    assert stream.query == "q"
    assert [r.seq for r in stream.relations] == [0, 1, 2]
    assert [r.size for r in stream.relations] == [2, 0, 2]
    assert stream.relations[1].rows == ()
    assert stream.relations[2].keys == frozenset({binding_key(b(x="c"))})
    assert stream.relations[2].bag[binding_key(b(x="c"))] == 2
    assert [r.t_sys_ns for r in stream.relations] == [10, 20, 30]
    assert stream.elements() == [binding_key(b(x=n)) for n in ("a", "b", "c", "c")]
    assert stream.show([binding_key(b(x="a"))]) == [b(x="a")]


def test_result_relations_query_selection() -> None:
    table = pa.concat_tables(
        [result_table([s("a")], query="q1"), result_table([s("b")], query="q2")]
    )
    with pytest.raises(InputError, match="several queries"):
        result_relations(table)
    assert result_relations(table, query="q2").relations[0].keys == {binding_key(b(x="b"))}
    with pytest.raises(InputError, match="not found"):
        result_relations(table, query="q3")


def test_bad_binding_text_is_an_input_error() -> None:
    table = pa.Table.from_pydict(
        {"query": ["q"], "seq": [0], "t_sys_ns": [None], "t_app_ms": [None], "binding": ["{oops"]},
        schema=RESULT_SCHEMA,
    )
    with pytest.raises(InputError, match="row 0: bad binding") as err:
        result_relations(table, source="run/outputs.parquet")
    assert "run/outputs.parquet" in str(err.value)
    assert err.value.text == "{oops"


def test_expected_relations_per_t0() -> None:
    table = expected_table(
        {
            1000: [(1000, 4000, s("a")), (4000, 7000, [])],
            0: [(0, 3000, s("a", "b"))],
        }
    )
    by_t0 = expected_relations(table)
    assert list(by_t0) == [0, 1000]
    first = by_t0[1000].relations
    assert [(r.window_open_ms, r.window_close_ms, r.size) for r in first] == [
        (1000, 4000, 1),
        (4000, 7000, 0),
    ]
    assert by_t0[0].t0_ms == 0
    assert by_t0[0].relations[0].triples_in_window == 7


def test_expected_table_missing_column() -> None:
    table = result_table([s("a")])
    with pytest.raises(InputError, match="missing column"):
        expected_relations(table)


def test_bag_overlap_counts_each_binding_once() -> None:
    a = result_relations(result_table([s("x", "x", "y")])).relations[0].bag
    bb = result_relations(result_table([s("x", "y", "y", "z")])).relations[0].bag
    assert bag_overlap(a, bb) == 2  # one x, one y
    assert bag_overlap(bb, a) == 2
    assert json.loads(json.dumps(b(x="a")))["x"]["value"] == "http://example.org/a"


def bn(label: str) -> dict[str, str]:
    return {"type": "bnode", "value": label}


def test_blank_nodes_compare_up_to_a_consistent_relabelling_per_relation() -> None:
    """Relation 0: ``_:a`` shared by two bindings, ``_:b`` alone, twice over (a bag); the engine
    writes the same relation with other labels, in another order. Relation 1 shares nothing
    with relation 0's labels. Relabelling must be one-to-one and consistent: two bindings that
    share a blank node are not the same answer as two that do not."""
    oracle = [
        [
            {"s": bn("a"), "r": uri("r1")},
            {"s": bn("a"), "r": uri("r2")},
            {"s": bn("b"), "r": uri("r1")},
        ],
        [{"s": bn("a"), "r": uri("r1")}],
    ]
    engine = [
        [
            {"s": bn("x9"), "r": uri("r1")},
            {"s": bn("y"), "r": uri("r1")},
            {"s": bn("y"), "r": uri("r2")},
        ],
        [{"s": bn("q"), "r": uri("r1")}],
    ]
    merged = [  # _:a and _:b written as one node: not isomorphic
        [
            {"s": bn("y"), "r": uri("r1")},
            {"s": bn("y"), "r": uri("r2")},
            {"s": bn("y"), "r": uri("r1")},
        ],
    ]
    split = [  # the shared _:a written as two nodes: not isomorphic
        [
            {"s": bn("u"), "r": uri("r1")},
            {"s": bn("v"), "r": uri("r2")},
            {"s": bn("w"), "r": uri("r1")},
        ],
    ]
    want = result_relations(result_table(oracle)).relations
    got = result_relations(result_table(engine)).relations
    assert [r.bag for r in got] == [r.bag for r in want]
    for wrong in (merged, split):
        assert result_relations(result_table(wrong)).relations[0].bag != want[0].bag
    # shown with the canonical labels, as SPARQL JSON
    shown = result_relations(result_table(engine)).show(want[1].keys)
    assert shown[0]["r"] == uri("r1") and shown[0]["s"]["type"] == "bnode"


def test_expected_relations_read_more_than_2_gib_of_binding_text() -> None:
    """An oracle table past 2 GiB of bindings comes in chunks (one string array cannot hold
    more): relations are built without putting them back into one array (YABench E3 at 200
    stations under rsp-rs' profile, 7.8 M rows, failed with "offset overflow")."""
    big = [
        json.dumps({"x": lit(letter * (1 << 20))}, sort_keys=True, separators=(",", ":"))
        for letter in "abc"
    ]
    rows = 1100  # per chunk: 1.1 GiB of text each, 2.2 GiB in all
    chunks = [pa.array([big[(k + i) % 3] for i in range(rows)]) for k in range(2)]
    n = 2 * rows
    table = pa.Table.from_arrays(
        [
            pa.array(["q"] * n),
            pa.array([0] * n, pa.int64()),
            pa.array([i // 10 for i in range(n)], pa.int64()),
            pa.array([1000] * n, pa.int64()),
            pa.array([0] * n, pa.int64()),
            pa.array([1000] * n, pa.int64()),
            pa.array([7] * n, pa.int64()),
            pa.chunked_array(chunks),
        ],
        schema=EXPECTED_SCHEMA,
    )
    assert table.column("binding").nbytes > 2**31
    relations = expected_relations(table)[0].relations
    assert [r.seq for r in relations] == list(range(n // 10))
    letters = ["abc"[(k + i) % 3] for k in range(2) for i in range(rows)]
    for r in (relations[0], relations[-1]):
        want = [
            binding_key({"x": lit(x * (1 << 20))}) for x in letters[r.seq * 10 : r.seq * 10 + 10]
        ]
        assert sorted(r.rows) == sorted(want)


def test_a_binding_column_whose_chunks_hold_dictionaries_of_their_own() -> None:
    """Read chunk by chunk, each chunk's codes mean its own dictionary's bindings."""
    texts = [binding_to_json({"x": uri(n)}) for n in ("a", "b", "c")]
    binding = pa.chunked_array(
        [pa.array(texts[:2]).dictionary_encode(), pa.array(texts[2:]).dictionary_encode()]
    )
    table = result_table([s("a"), s("b"), s("c")])
    assert table.num_rows == 3
    table = table.set_column(table.schema.get_field_index("binding"), "binding", binding)
    rows = [r.rows for r in result_relations(table).relations]
    assert rows == [(binding_key({"x": uri(n)}),) for n in ("a", "b", "c")]
