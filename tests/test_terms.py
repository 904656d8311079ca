from __future__ import annotations

import pytest

from rsp_sdk.model import terms


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
