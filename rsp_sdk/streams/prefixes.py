"""Short names for IRIs in tables meant for people (``rsp stream info``).

A predicate such as ``http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#procedure`` does
not fit a terminal column; cut at the column's end it loses exactly the part that tells
predicates apart. ``prefixed`` writes it ``om-owl:procedure`` instead, with rdflib's namespace
manager: the W3C and common vocabularies rdflib knows, plus those of the benchmarks this SDK
reads and generates (SRBench/CSRBench/YABench sensor data, LSBench's social network, the water
network of Ren et al.). An IRI outside all of them stays whole, in angle brackets.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

__all__ = ["BENCHMARK_PREFIXES", "prefixed"]

BENCHMARK_PREFIXES = {
    "om-owl": "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#",
    "weather": "http://knoesis.wright.edu/ssw/ont/weather.owl#",
    "ssw": "http://knoesis.wright.edu/ssw/",
    "sioc": "http://rdfs.org/sioc/ns#",
    "sioct": "http://rdfs.org/sioc/types#",
    "sib": "http://www.ins.cwi.nl/sib/",
    "sibv": "http://www.ins.cwi.nl/sib/vocabulary/",
    "dbp": "http://dbpedia.org/resource/",
    "dbpprop": "http://dbpedia.org/property/",
    "dbpo": "http://dbpedia.org/ontology/",
    "sr": "http://www.streamreasoning.org/schema/benchmark#",
    "water": "http://myexample.org/",
}


@cache
def _manager() -> Any:
    from rdflib import Graph

    graph = Graph(bind_namespaces="rdflib")
    for prefix, iri in BENCHMARK_PREFIXES.items():
        graph.bind(prefix, iri, override=True)
    return graph.namespace_manager


def prefixed(iris: Iterable[str]) -> tuple[list[str], dict[str, str]]:
    """Each IRI (bare or in N-Triples ``<…>``) as ``prefix:local`` where a known namespace covers
    it (else ``<iri>``), and the prefixes used (prefix → namespace), to print once under the
    table."""
    from rdflib import URIRef

    manager = _manager()
    known = {p: str(ns) for p, ns in manager.namespaces()}
    out: list[str] = []
    used: dict[str, str] = {}
    for iri in iris:
        bare = iri[1:-1] if iri.startswith("<") and iri.endswith(">") else iri
        text = str(manager.normalizeUri(URIRef(bare)))
        prefix = text.split(":", 1)[0]
        if not text.startswith("<") and prefix in known:
            used[prefix] = known[prefix]
        out.append(text)
    return out, used
