"""Blank nodes in a relation, compared up to a consistent relabelling.

A blank node label is local to the document that writes it: an engine may print the stream's
``_:b0`` as ``_:bc_0_b2_b0`` (rsp-js) or ``_:bb0`` (CQELS) and still give the right answer. Two
relations are the same answer when one becomes the other by renaming blank nodes one-to-one,
consistently across all of the relation's bindings (a blank node shared by two bindings stays
shared). Deciding that is graph isomorphism, so the relation is written as an RDF graph — one
fresh blank node per binding, linked to each bound term by a predicate naming the variable — and
rdflib's canonical labelling (``rdflib.compare``, Jeffrey Dean's and Jeremy Carroll's hashing
with individualisation–refinement for symmetric cases) renames every blank node after the
structure around it. Isomorphic relations get identical canonical bindings, so the comparators
keep comparing bags of keys.

Only relations that hold a blank node pay for this; their bindings come out in a canonical
order (a relation is a bag: the order of its bindings carries no meaning).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import to_canonical_graph

from rsp_sdk.model.terms import XSD

if TYPE_CHECKING:
    from rsp_sdk.compare.relations import BindingKey, TermKey

_VAR = "urn:x-rsp-sdk:var:"


def has_bnode(key: BindingKey) -> bool:
    """Whether a binding binds some variable to a blank node."""
    return any(term[0] == "b" for _, term in key)


def canonical_rows(rows: Sequence[BindingKey]) -> tuple[BindingKey, ...]:
    """The relation's bindings with blank nodes relabelled canonically (see module docstring).

    Labels depend only on the relation's structure: two relations get the same rows exactly
    when one is the other up to renaming blank nodes.
    """
    if not any(has_bnode(row) for row in rows):
        return tuple(rows)
    graph = Graph()
    values: dict[str, TermKey] = {}
    empty = 0
    for row in rows:
        if not row:
            empty += 1  # a binding that binds nothing has no triple to carry it
            continue
        node = BNode()
        for var, term in row:
            if term[0] == "b":
                obj: BNode | Literal = BNode(term[1])
            else:
                text = repr(term)
                values[text] = term
                obj = Literal(text)
            graph.add((node, URIRef(_VAR + quote(var, safe="")), obj))
    bindings: dict[BNode, list[tuple[str, TermKey]]] = {}
    for s, p, o in to_canonical_graph(graph):
        name = unquote(str(p).removeprefix(_VAR))
        value: TermKey = ("b", str(o)) if isinstance(o, BNode) else values[str(o)]
        bindings.setdefault(s, []).append((name, value))  # type: ignore[arg-type]
    out = sorted((tuple(sorted(items)) for items in bindings.values()), key=repr)
    return tuple(() for _ in range(empty)) + tuple(out)


def _term_json(term: TermKey) -> dict[str, str]:
    kind, value = term[0], str(term[1])
    if kind == "i":
        return {"type": "uri", "value": value}
    if kind == "b":
        return {"type": "bnode", "value": value}
    if kind == "L":
        return {"type": "literal", "value": value, "xml:lang": term[2]}
    if kind == "n":
        datatype = "integer" if isinstance(term[1], int) else "double"
        return {"type": "literal", "value": value, "datatype": XSD + datatype}
    if kind == "l":
        return {"type": "literal", "value": value, "datatype": term[2]}
    return {"type": "literal", "value": value}


def key_json(key: BindingKey) -> str:
    """A binding key as SPARQL JSON text (how a canonically relabelled binding is shown)."""
    out: dict[str, Any] = {var: _term_json(term) for var, term in key}
    return json.dumps(out, sort_keys=True)
