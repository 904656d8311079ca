from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsp_sdk.model import terms
from rsp_sdk.model.results import binding_to_json, row_to_json


@pytest.mark.parametrize(
    "nt",
    [
        "<http://example.org/a>",
        "_:b0",
        '"plain"',
        '"tab\\there \\"quoted\\" back\\\\slash"',
        '"5"^^<http://www.w3.org/2001/XMLSchema#int>',
        '"chat"@fr',
        '"é ü 漢"',
    ],
)
def test_sparql_json_round_trip(nt: str) -> None:
    assert terms.from_sparql_json(terms.to_sparql_json(nt)) == nt


def test_sparql_json_forms() -> None:
    assert terms.to_sparql_json("<http://x/a>") == {"type": "uri", "value": "http://x/a"}
    assert terms.to_sparql_json('"1"^^<http://www.w3.org/2001/XMLSchema#integer>') == {
        "type": "literal",
        "value": "1",
        "datatype": "http://www.w3.org/2001/XMLSchema#integer",
    }
    assert terms.to_sparql_json('"a"@en') == {"type": "literal", "value": "a", "xml:lang": "en"}
    assert terms.to_sparql_json('"a\\nb"')["value"] == "a\nb"
    # CSRBench answers use the legacy "typed-literal" type
    legacy = {
        "type": "typed-literal",
        "value": "2",
        "datatype": "http://www.w3.org/2001/XMLSchema#integer",
    }
    assert terms.from_sparql_json(legacy) == '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'


def test_xsd_string_is_implicit() -> None:
    assert terms.literal("x", datatype=terms.XSD_STRING) == '"x"'


def test_bad_terms() -> None:
    with pytest.raises(ValueError):
        terms.term_kind("plain")
    with pytest.raises(ValueError):
        terms.from_sparql_json({"type": "nope", "value": "x"})
    with pytest.raises(ValueError):
        terms.split_literal('"unterminated')


_NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
_LEX = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
_TERMS = st.one_of(
    st.builds(lambda v: terms.iri("http://ex.org/" + v), st.text("abc/é", max_size=5)),
    st.builds(lambda v: "_:b" + v, st.text("xyz019", min_size=1, max_size=4)),
    st.builds(terms.literal, _LEX),
    st.builds(
        lambda v, dt: terms.literal(v, datatype=dt),
        _LEX,
        st.sampled_from(
            [terms.XSD + "integer", terms.XSD + "float", terms.XSD + "string", "http://ex.org/dt"]
        ),
    ),
    st.builds(
        lambda v, lang: terms.literal(v, language=lang), _LEX, st.sampled_from(["en", "fr-BE"])
    ),
)


@settings(max_examples=300, deadline=None, database=None)
@given(row=st.dictionaries(_NAMES, st.one_of(st.none(), _TERMS), max_size=5))
def test_row_to_json_is_binding_to_json_byte_for_byte(row: dict[str, str | None]) -> None:
    """The recorder's cached encoding of a result row against the reference path it replaced
    (a dict of ``to_sparql_json`` terms through ``binding_to_json``), twice so the second
    call answers from the cache."""
    names, values = list(row), list(row.values())
    want = binding_to_json({v: terms.to_sparql_json(t) for v, t in row.items() if t is not None})
    assert row_to_json(names, values) == want
    assert row_to_json(names, values) == want
