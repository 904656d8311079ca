"""rdflib's ``prepareQuery``, run where its garbage cannot hold the caller's data.

pyparsing raises and catches exceptions while it parses, and leaves about a thousand objects in
reference cycles (exception → traceback → frame) per query. A frame keeps its caller's frame
alive, so those cycles reached the oracle's planning frames up the stack: the stream table, the
term dictionary and the whole ``OracleJob`` stayed allocated after the call until Python's
cycle collector next ran — 3.3 GB at 21 M triples, which the next call's peak then stood on
(12.7 GB instead of 8.9 GB). Parsed on a thread of its own, the cycles hold only that thread's
frames; a ``gc.collect()`` after each parse would also do, at ~50 ms a parse.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["prepare_query"]


def prepare_query(sparql: str, **kwargs: Any) -> Any:
    """``rdflib.plugins.sparql.prepareQuery(sparql, **kwargs)``, its errors raised as they are."""
    from rdflib.plugins.sparql import prepareQuery

    with ThreadPoolExecutor(1, thread_name_prefix="rsp-sparql-parse") as pool:
        return pool.submit(prepareQuery, sparql, **kwargs).result()
