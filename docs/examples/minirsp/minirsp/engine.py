#!/usr/bin/env python3
"""minirsp: a tiny RDF stream engine speaking rsp-sdk's JSON-lines protocol.

A standalone program — it imports nothing from rsp_sdk, as a third-party engine would not. It
reads one request per line on stdin, ``{"id": 1, "verb": "push", "args": [...]}``, and writes
one response per line on stdout, ``{"id": 1, "ok": true, "result": ...}`` or ``{"id": 1, "ok":
false, "error": "message", "trace": "..."}``. Anything else it wants to say goes to stderr. It
exits when stdin reaches end of file.

Its semantics (what the adapter declares as its SECRET profile): windows [k·STEP, k·STEP+RANGE)
from t0 = 0 in application time; a window is reported when application time reaches its close
(an element at the close time, or ``advance_time``), only if it holds elements (non-empty
content), as the whole result (Rstream), including an empty result when nothing matches.

Its query language is JSON: ``{"stream": IRI, "range_ms": int, "step_ms": int,
"select": [var, ...], "where": [[s, p, o], ...]}`` with N-Triples terms and ``?vars``; the
patterns are joined on shared variables (a basic graph pattern).
"""

from __future__ import annotations

import json
import sys
import time
import traceback


class Query:
    """One registered query: its window state and its basic graph pattern."""

    def __init__(self, name, spec):
        self.name = name
        self.stream = spec["stream"]
        self.range = int(spec["range_ms"])
        self.step = int(spec["step_ms"])
        self.select = [str(v) for v in spec["select"]]
        self.where = [tuple(p) for p in spec["where"]]
        if self.range <= 0 or self.step <= 0 or not self.where:
            raise ValueError("minirsp: range_ms and step_ms must be > 0, where non-empty")
        self.open = 0  # opening of the oldest window not yet reported
        self.elements = []  # (t, (s, p, o)) in arrival order

    def put(self, t, triple, out):
        self.advance(t, out)
        if t >= self.open:
            self.elements.append((t, triple))

    def advance(self, t, out):
        """Report every window that closes at or before t."""
        while self.open + self.range <= t:
            if not self.elements:  # nothing buffered: skip the empty windows at once
                self.open = max(self.open, ((t - self.range) // self.step + 1) * self.step)
                return
            close = self.open + self.range
            content = [tr for ts, tr in self.elements if self.open <= ts < close]
            if content:
                out.append(self.evaluate(content, close))
            self.open += self.step
            self.elements = [e for e in self.elements if e[0] >= self.open]

    def evaluate(self, content, close):
        solutions = [{}]
        for pattern in self.where:
            solutions = join(solutions, [b for tr in content if (b := match(pattern, tr))])
        rows = [[sol.get(v) for v in self.select] for sol in solutions]
        return {
            "query": self.name,
            "t_sys_ns": time.monotonic_ns(),  # CLOCK_MONOTONIC, as the protocol asks
            "t_app_ms": close,
            "vars": self.select,
            "rows": rows,
        }


def match(pattern, triple):
    """The bindings of one pattern against one triple, or None."""
    bound = {}
    for term, value in zip(pattern, triple, strict=True):
        if term.startswith("?"):
            if bound.setdefault(term[1:], value) != value:
                return None
        elif term != value:
            return None
    return bound


def join(left, right):
    """Hash join of two lists of bindings on their shared variables."""
    if not left or not right:
        return []
    shared = sorted(set(left[0]) & set(right[0]))
    index = {}
    for b in right:
        index.setdefault(tuple(b[v] for v in shared), []).append(b)
    return [{**a, **b} for a in left for b in index.get(tuple(a[v] for v in shared), [])]


class Engine:
    """The verbs of the protocol, one method each."""

    def __init__(self):
        self.streams = set()
        self.queries = []
        self.results = []
        self.pushes = 0
        self.triples = 0

    def open(self, config_json, workdir):
        self.config = json.loads(config_json) if config_json.strip() else {}

    def load_static(self, graph, path):
        raise ValueError("minirsp: no static data")

    def register_stream(self, iri):
        self.streams.add(iri)

    def register_query(self, name, text):
        try:
            spec = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"minirsp: a query is a JSON object ({exc})") from None
        query = Query(name, spec)
        if query.stream not in self.streams:
            raise ValueError(f"minirsp: stream <{query.stream}> is not registered")
        self.queries.append(query)

    def push(self, stream, packed):
        if stream not in self.streams:
            raise ValueError(f"minirsp: stream <{stream}> is not registered")
        self.pushes += 1
        queries = [q for q in self.queries if q.stream == stream]
        for line in packed.splitlines():
            t, s, p, o = line.split(" ", 3)  # "<t_app_ms> <s> <p> <o>", o is the rest
            self.triples += 1
            for q in queries:
                q.put(int(t), (s, p, o), self.results)

    def advance_time(self, t):
        for q in self.queries:
            q.advance(int(t), self.results)

    def poll(self):
        out, self.results = self.results, []
        return out

    def stats(self):
        return {"pushes": self.pushes, "triples": self.triples}

    def close(self):
        self.queries.clear()


def main():
    engine = Engine()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            result = getattr(engine, request["verb"])(*request.get("args", []))
            reply = {"id": request["id"], "ok": True, "result": result}
        except Exception as exc:
            reply = {
                "id": request["id"],
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(),
            }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
