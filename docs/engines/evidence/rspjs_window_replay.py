"""Witness for rsp-js's multi-stream verdicts: replays a matrix cell without rsp-js or the oracle.

    python docs/engines/evidence/rspjs_window_replay.py RESULTS/cells/<key> RESULTS [--oracle]

(CityBench cells with their static data, ren16's multi-stream cells without: the stream is
the cell's own ``inputs/<stream_sha256>.parquet``.)

It shares no code with the SDK's oracle, judge or adapter: the cell's stream slice, static data
and query (``config.json``'s SPARQL body, windows as ``GRAPH``) are evaluated by pyoxigraph.

* default: rsp-js 1.3.5's own algorithm re-written from its ``dist/rsp.js`` and
  ``dist/operators/s2r.js`` — one ``CSPARQLWindow`` per stream; a window ``[o, c)`` fires on the
  first later element *of its own stream*; ``register()`` then adds, for every other window, the
  content of its instance with the smallest close among those with ``open <= ts <= close``, ``ts``
  being the last timestamp added to the firing window; every binding moves the firing window's
  ``t0`` by STEP and ``scope()`` opens windows from that ``t0``. Each evaluation is compared with
  the engine's recorded relation (``outputs.parquet``) as a set of bindings.
* ``--oracle``: every window ``[c − RANGE, c)`` of every stream evaluated together, compared
  with the oracle's relation at t0 = −(RANGE − STEP) in ``RESULTS/expected/``.

Numbers compare by value: pyoxigraph prints ``4.8426150121065375E-4`` as ``0.000484…``.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyoxigraph as ox

Binding = frozenset[tuple[str, str]]
Triple = tuple[Any, Any, Any]


def norm(value: str) -> str:
    try:
        return repr(float(value))
    except ValueError:
        return value


class Cell:
    def __init__(self, cell: Path, results: Path) -> None:
        config = json.loads((cell / "config.json").read_text())
        self.cell = cell
        self.results = results
        self.spec = config["query"]["spec"]
        self.static: list[ox.Quad] = []
        if (cell / "static.nt").exists():  # ren16's streams cells have no static data
            static = ox.parse(path=str(cell / "static.nt"), format=ox.RdfFormat.N_TRIPLES)
            self.static = [
                ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph()) for t in static
            ]
        # the cell's own stream: RESULTS/inputs/ holds one file per stream of the spec
        self.sha = json.loads((cell / "cell.json").read_text())["stream_sha256"]
        inputs = results / "inputs" / f"{self.sha}.parquet"
        self.rows: dict[tuple[str, int], list[Triple]] = {}
        for r in pd.read_parquet(inputs).itertuples():
            s = ox.BlankNode(r.s[2:]) if r.s.startswith("_:") else ox.NamedNode(r.s[1:-1])
            line = f"<urn:s> <urn:p> {r.o} ."
            o = next(iter(ox.parse(line, format=ox.RdfFormat.N_TRIPLES))).object
            key = (str(r.stream), int(r.t_app_ms))
            self.rows.setdefault(key, []).append((s, ox.NamedNode(r.p[1:-1]), o))

    def evaluate(self, quads: list[ox.Quad]) -> collections.Counter[Binding]:
        store = ox.Store()
        store.bulk_extend(self.static)
        store.bulk_extend(quads)
        result = store.query(self.spec["sparql"])
        assert isinstance(result, ox.QuerySolutions)
        names = result.variables
        return collections.Counter(
            frozenset((v.value, norm(s[v].value)) for v in names if s[v] is not None)
            for s in result
        )

    def engine_relations(self) -> list[tuple[int, collections.Counter[Binding]]]:
        out = pd.read_parquet(self.cell / "outputs.parquet")
        return [
            (int(t), collections.Counter(_binding(b) for b in g.binding))
            for (_, t), g in out.groupby(["seq", "t_app_ms"])
        ]


def _binding(text: str) -> Binding:
    return frozenset((k, norm(v["value"])) for k, v in json.loads(text).items())


class Window:
    """rsp-js's CSPARQLWindow (start_time 0, report on window close, time-driven)."""

    def __init__(self, w: dict[str, Any]) -> None:
        self.name, self.stream = w["name"], w["stream"]
        self.width, self.slide = int(w["range_ms"]), int(w["step_ms"])
        self.t0 = 0
        self.time = 0
        self.active: dict[tuple[int, int], list[Any]] = {}  # (o, c) -> [set of triples, last ts]

    def content(self, ts: int) -> tuple[tuple[int, int], list[Any]] | None:
        found = [(oc, v) for oc, v in self.active.items() if oc[0] <= ts <= oc[1]]
        return min(found, key=lambda x: x[0][1]) if found else None

    def scope(self, t: int) -> None:
        o = math.ceil(abs(t - self.t0) / self.slide) * self.slide - self.width
        while True:
            self.active.setdefault((o, o + self.width), [set(), 0])
            o += self.slide
            if o > t:
                return

    def add(self, triple: Triple, t: int) -> tuple[tuple[int, int], list[Any]] | None:
        self.scope(t)
        evict = []
        for (o, c), v in self.active.items():
            if o <= t < c:
                v[0].add(triple)
                v[1] = t
            elif t > c:
                evict.append((o, c))
        closed = [(oc, v) for oc, v in self.active.items() if oc[1] < t]
        fired = max(closed, key=lambda x: x[0][1]) if closed and t > self.time else None
        if fired:
            self.time = t
        for k in evict:
            del self.active[k]
        return fired


def replay(cell: Cell) -> list[tuple[int, str, Any, collections.Counter[Binding]]]:
    windows = [Window(w) for w in cell.spec["windows"]]
    out = []

    def fire(win: Window, fired: tuple[tuple[int, int], list[Any]]) -> None:
        (o, c), (triples, last) = fired
        if not triples:
            return
        quads = [ox.Quad(*t, ox.NamedNode(win.name)) for t in triples]
        others = []
        for x in windows:
            got = x.content(last) if x is not win else None
            if got:
                others.append(f"{x.name.rsplit('/', 1)[-1]}{list(got[0])}")
                quads += [ox.Quad(*t, ox.NamedNode(x.name)) for t in got[1][0]]
        res = cell.evaluate(quads)
        win.t0 += win.slide * sum(res.values())
        if res:
            out.append((c, f"{win.name.rsplit('/', 1)[-1]}[{o}, {c}) + {others}", win.t0, res))

    pushed = pd.read_parquet(cell.cell / "pushed.parquet")
    last = 0
    for p in pushed[pushed.phase == "measure"].itertuples():
        for triple in cell.rows.get((str(p.stream), int(p.t_app_min_ms)), []):
            for win in windows:
                fired = win.add(triple, int(p.t_app_min_ms)) if win.stream == p.stream else None
                if fired:
                    fire(win, fired)
        last = max(last, int(p.t_app_max_ms))
    # driver.js's advance_time: a tick just past each pending close, removed right after
    tick = (ox.NamedNode("urn:rsp-sdk:tick"),) * 3
    target = last + max(w.width for w in windows) + 1
    while True:
        pending = [c for w in windows for (_, c) in w.active if c >= last and c + 1 <= target]
        if not pending:
            break
        last = min(pending) + 1
        for win in windows:
            fired = win.add(tick, last)
            for v in win.active.values():
                v[0].discard(tick)
            if fired:
                fire(win, fired)
    return out


def oracle(cell: Cell) -> None:
    wins = cell.spec["windows"]
    lead = wins[0]["range_ms"] - wins[0]["step_ms"]
    for d in glob.glob(str(cell.results / "expected" / "*")):
        inputs = json.loads(Path(d, "inputs.json").read_text())
        same_stream = inputs["stream_sha256"] == cell.sha
        if inputs["query"] == cell.spec["name"] and inputs["profile"] == "rspjs" and same_stream:
            expected = pd.read_parquet(Path(d, "expected.parquet"))
    expected = expected[expected.t0_ms == -lead]
    rng, step = wins[0]["range_ms"], wins[0]["step_ms"]
    last = max(t for _, t in cell.rows)
    for close in range(step, last + rng + step, step):
        quads = [
            ox.Quad(*t, ox.NamedNode(w["name"]))
            for w in wins
            for (s, ts), triples in cell.rows.items()
            if s == w["stream"] and close - rng <= ts < close
            for t in triples
        ]
        got = cell.evaluate(quads) if quads else collections.Counter()
        e = collections.Counter(_binding(b) for b in expected[expected.t_app_ms == close].binding)
        same = "SAME" if set(got) == set(e) else "DIFF"
        print(f"[{close - rng}, {close}) pyoxigraph {got.total()} oracle {e.total()} {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cell", type=Path)
    ap.add_argument("results", type=Path)
    ap.add_argument("--oracle", action="store_true")
    args = ap.parse_args()
    cell = Cell(args.cell, args.results)
    if args.oracle:
        oracle(cell)
        return
    mine, engine = replay(cell), cell.engine_relations()
    print(f"replayed {len(mine)} relations, engine {len(engine)}")
    for i in range(max(len(mine), len(engine))):
        m = mine[i] if i < len(mine) else None
        e = engine[i] if i < len(engine) else None
        same = m and e and m[0] == e[0] and set(m[3]) == set(e[1])
        left = f"{m[1]} -> {m[3].total()} rows, t0 {m[2]}" if m else "-"
        right = f"{e[0]}: {e[1].total()} rows" if e else "-"
        print(f"{i:2} replay {left} | engine {right} {'SAME' if same else 'DIFF'}")


if __name__ == "__main__":
    main()
