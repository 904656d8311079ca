"""Engine throughput through the rsp-js, rsp-rs, ETALIS and JTALIS adapters, against a reference.

Both push the CSRBench stream (15 188 triples, 34 timestamps) with CSRBench Q1 (10 s windows,
a 4-pattern join and a FILTER) as fast as possible, and compare with the same engine fed the
same triples without our protocol, measured in the same run:

* rsp-js: a Node loop calling ``RDFStream.add`` for the quads and waiting for the evaluations
  (the driver's work minus JSON lines and the per-element settling);
* rsp-rs (``engines.rsprs``, on YABench SG1 at 10 000 stations, 2.1 M triples, instead):
  ``rsprs-driver --bench`` reading the same packed lines from a file (the driver's parse +
  window path, without JSON lines or the Python side), interleaved ABAB, best of each;
  target adapter ≥ 0.8 × direct;
* ETALIS: ``driver.pl`` reading the same events as one ready-made ``push([...])`` term (the
  shim's Python side — JSON, N-Triples parsing, term conversion — left out).

* JTALIS (``engines.jtalis``): the jtalis adapter (JTALIS' Java API over InterProlog, jpype
  runtime) against the etalis adapter (the same ETALIS rules driven directly), both end to end.

Ratio = adapter rate / reference rate (1.0: the adapter costs nothing). Skipped (with the
provisioning message) when an engine is not provisioned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import Result, bench

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RSP_SHARED_DATA", REPO.parent / "shared" / "data"))
CSRBENCH = DATA / "dellaglio+csrbench-oracle" / "data"
STREAM = "http://ex.org/streams/test"
W = "http://rsp-sdk.org/csrbench/w"
OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
WEATHER = "http://knoesis.wright.edu/ssw/ont/weather.owl#"
Q1 = (
    f"SELECT ?sensor ?obs WHERE {{ GRAPH <{W}> {{ ?obs <{OM}observedProperty> "
    f"<{WEATHER}_AirTemperature> ; <{OM}procedure> ?sensor ; <{OM}result> ?res . "
    f"?res <{OM}floatValue> ?value . FILTER(?value > 80) }} }}"
)


def _inputs():  # type: ignore[no-untyped-def]
    from rsp_sdk.engine.batch import fixed_bounds, pack_lines, slice_batches
    from rsp_sdk.model.query import QuerySpec, WindowSpec
    from rsp_sdk.streams.importers.csrbench import read_csrbench_folder

    table = read_csrbench_folder(CSRBENCH, interval_ms=1000)
    batches = slice_batches(
        pack_lines(table), table["t_app_ms"], fixed_bounds(table.num_rows, 10_000)
    )
    spec = QuerySpec(
        name="q1",
        text=Q1,
        sparql=Q1,
        variables=["sensor", "obs"],
        windows=[WindowSpec(name=W, stream=STREAM, range_ms=10_000, step_ms=10_000)],
        window_graphs=True,
    )
    return table, batches, spec


def _through_adapter(
    adapter, spec, batches, workdir: Path, runtime: str = "subprocess"
) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    from rsp_sdk.runtime import get_runtime
    from rsp_sdk.testing import drain

    session = adapter.open(get_runtime(runtime), workdir)
    try:
        session.register_stream(STREAM)
        session.register_query(spec)
        started = time.perf_counter()
        for b in batches:
            session.push(STREAM, b)
        session.advance_time(batches[-1].t_max_ms + 20_000)
        elapsed = time.perf_counter() - started
        rows = sum(len(ev.rows) for ev in drain(session, quiet_s=0.5))
    finally:
        session.close()
    return elapsed, rows


NODE_ALONE = r"""
const fs = require('fs');
console.log = console.debug = console.info = () => {};
const N3 = require('n3'); const { RSPEngine } = require('rsp-js');
const [queryFile, dataFile] = process.argv.slice(2);
const lines = fs.readFileSync(dataFile, 'utf8').split('\n').filter(Boolean);
const times = lines.map((l) => Number(l.slice(0, l.indexOf(' '))));
const quads = new N3.Parser({ format: 'N-Triples' }).parse(
  lines.map((l) => l.slice(l.indexOf(' ') + 1) + ' .\n').join(''));
fs.mkdirSync('logs', { recursive: true });
const engine = new RSPEngine(fs.readFileSync(queryFile, 'utf8'));
const stream = engine.getStream('STREAM');
let rows = 0; engine.register().on('RStream', () => { rows += 1; });
(async () => {
// warm Comunica up as the driver's registration check does, outside the timing
const { QueryEngine } = require('@comunica/query-sparql');
await (await new QueryEngine().queryBindings(engine.r2r.query, { sources: [new N3.Store()] })).toArray();
const started = process.hrtime.bigint();
for (let i = 0; i < quads.length; i++) stream.add(quads[i], times[i]);
stream.add(new N3.DataFactory.quad(N3.DataFactory.namedNode('urn:tick'),
  N3.DataFactory.namedNode('urn:tick'), N3.DataFactory.namedNode('urn:tick')), times[times.length - 1] + 10001);
setTimeout(function wait() {
  // evaluations are asynchronous: wait until the last window has been evaluated
  if (rows < Number(process.argv[4])) return setTimeout(wait, 1);
  const s = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(JSON.stringify({ seconds: s, rows }) + '\n');
}, 0);
})();
"""


@bench("engines.rspjs")
def rspjs() -> list[Result]:
    from rsp_adapter_rspjs import RspJsAdapter
    from rsp_adapter_rspjs.adapter import node_executable

    from rsp_sdk.engine import ProvisionCache

    adapter = RspJsAdapter()
    missing = adapter.missing_artifacts()
    if missing:
        return [Result("engines.rspjs", 0, "skipped", note="; ".join(missing))]
    table, batches, spec = _inputs()
    n = table.num_rows
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        seconds, rows = _through_adapter(adapter, spec, batches, tmp / "adapter")
        (tmp / "q.rspql").write_text(adapter.render(spec))
        (tmp / "data.txt").write_bytes(b"".join(b.packed for b in batches))
        script = tmp / "alone.js"
        script.write_text(NODE_ALONE.replace("STREAM", STREAM))
        manifest = adapter.manifest()
        assert manifest is not None
        env = {**os.environ, "NODE_PATH": str(ProvisionCache().npm_modules(manifest))}
        cmd = [node_executable(), str(script), "q.rspql", "data.txt", str(rows)]
        alone = _direct_run(cmd, tmp, env, timeout=600)
    rate, peer = n / seconds, n / alone["seconds"]
    return [
        Result(
            "engines.rspjs.adapter",
            rate,
            "triples/s",
            target="rsp-js alone (Node loop)",
            ratio=rate / peer,
            note=f"{n} triples, {rows} result rows; alone: {peer:,.0f} triples/s",
        )
    ]


# rsp-rs on YABench SG1 at 10 000 stations (the size): one observation (7 triples) per
# station per second for 30 s, 2.1 M triples, YABench's filter (Q1 shape, 10 s tumbling).
SG1_STATIONS = 10_000
SG1_DURATION_MS = 30_000
RSPRS_ROUNDS = 2  # adapter, direct, adapter, direct (ABAB); best of each


def _sg1_inputs(stations: int = SG1_STATIONS):  # type: ignore[no-untyped-def]
    from benchmarks.bench_jvm_engines import _spec
    from rsp_sdk.engine.batch import fixed_bounds, pack_lines, slice_batches
    from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

    params = YabenchParams(stations=stations, interval_ms=1000, duration_ms=SG1_DURATION_MS, seed=1)
    table, _ = generate_yabench(params)
    batches = slice_batches(
        pack_lines(table), table["t_app_ms"], fixed_bounds(table.num_rows, 10_000)
    )
    return table.num_rows, batches, _spec(STREAM)


def _adapter_pushes(adapter, spec, batches, workdir: Path) -> tuple[float, dict]:  # type: ignore[no-untyped-def]
    """Seconds from the first push to the last push's poll, timed as ``rsprs-driver --bench``
    times its loop (push a batch, poll its results), and the driver's counters."""
    from rsp_sdk.runtime import get_runtime

    session = adapter.open(get_runtime("subprocess"), workdir)
    try:
        session.register_stream(STREAM)
        session.register_query(spec)
        started = time.perf_counter()
        for b in batches:
            session.push(STREAM, b)
            session.poll()
        elapsed = time.perf_counter() - started
        stats = session.stats()
    finally:
        session.close()
    return elapsed, stats


@bench("engines.rsprs")
def rsprs() -> list[Result]:
    """rsp-rs through the adapter (JSON lines, Python side included) against the same driver
    binary fed the same packed lines from a file (``--bench``: same parse + window path, no
    protocol), interleaved ABAB in one run; both must do the same evaluations and bindings."""
    from rsp_adapter_rsprs import RspRsAdapter

    from rsp_sdk.engine import ProvisionCache

    adapter = RspRsAdapter()
    missing = adapter.missing_artifacts()
    if missing:
        return [Result("engines.rsprs", 0, "skipped", note="; ".join(missing))]
    n, batches, spec = _sg1_inputs()
    manifest = adapter.manifest()
    assert manifest is not None
    binary = ProvisionCache().cargo_binary(manifest)
    rates: dict[str, list[float]] = {"adapter": [], "direct": []}
    work: dict[str, tuple[object, object]] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        (tmp / "q.rspql").write_text(adapter.render(spec))
        with open(tmp / "data.txt", "wb") as f:
            for b in batches:
                f.write(b.packed)
        for rnd in range(RSPRS_ROUNDS):
            seconds, stats = _adapter_pushes(adapter, spec, batches, tmp / f"adapter-{rnd}")
            rates["adapter"].append(n / seconds)
            work["adapter"] = (stats.get("evaluations"), stats.get("bindings_emitted"))
            loads.append(os.getloadavg()[0])
            # the same loop, batches of 10 000 lines, read from the file
            cmd = [str(binary), "--bench", "q.rspql", STREAM, "data.txt", "10000"]
            alone = _direct_run(cmd, tmp, None, timeout=900)
            rates["direct"].append(n / alone["seconds"])
            work["direct"] = (alone["evaluations"], alone["bindings"])
            loads.append(os.getloadavg()[0])
    if work["adapter"] != work["direct"]:
        raise RuntimeError(f"adapter and direct did different work (evaluations, bindings): {work}")
    rate, peer = max(rates["adapter"]), max(rates["direct"])
    evaluations, bindings = work["direct"]
    return [
        Result("engines.rsprs.direct (rsprs-driver --bench, best)", peer, "triples/s"),
        Result("engines.rsprs.adapter (best)", rate, "triples/s"),
        Result(
            "engines.rsprs: adapter / direct",
            rate / peer,
            "ratio",
            "≥ 0.8",
            (rate / peer) / 0.8,
            note=(
                f"SG1 {SG1_STATIONS} stations, {n} triples, {evaluations} evaluations, "
                f"{bindings} bindings; "
                + " ".join(f"{k}={[round(r) for r in v]}/s" for k, v in rates.items())
                + f"; load {min(loads):.1f}–{max(loads):.1f}"
            ),
        ),
    ]


def reply(proc: subprocess.Popen[bytes]) -> bytes:
    """The driver's next ``OK``/``ERR`` line, skipping other output; raises when the child's
    stdout ends (it died) instead of reading empty lines forever."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            code = proc.wait(timeout=30)
            raise RuntimeError(f"the driver exited (code {code}) before answering OK or ERR")
        if line.startswith((b"OK", b"ERR")):
            return line


@bench("engines.etalis")
def etalis() -> list[Result]:
    from rsp_adapter_etalis import EtalisAdapter
    from rsp_adapter_etalis.adapter import NO_SWIPL, ep_sparql_file, find_swipl, swipl_executable
    from rsp_adapter_etalis.shim import DRIVER_PL, prolog_term, quote_atom

    from rsp_sdk.engine import ProvisionCache

    adapter = EtalisAdapter()
    missing = adapter.missing_artifacts() + ([] if find_swipl() else [NO_SWIPL])
    if missing:
        return [Result("engines.etalis", 0, "skipped", note="; ".join(missing))]
    table, batches, spec = _inputs()
    n = table.num_rows
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        seconds, rows = _through_adapter(adapter, spec, batches, tmp / "adapter")
        import json

        rendered = json.loads(adapter.render(spec))
        manifest = adapter.manifest()
        assert manifest is not None
        root = ProvisionCache().engine_dir("etalis") / "artifacts" / manifest.artifacts[0].file
        events = ",".join(
            f"e({prolog_term(s)},{prolog_term(p)},{prolog_term(o)},{t})"
            for t, s, p, o in zip(
                table["t_app_ms"].to_pylist(),
                table["s"].to_pylist(),
                table["p"].to_pylist(),
                table["o"].to_pylist(),
                strict=True,
            )
        )
        setup = (
            f"open({quote_atom(str(ep_sparql_file(root)))}, []).\n"
            f"register_query(1, {quote_atom(rendered['ep_sparql'])}, {rendered['within_ms']}).\n"
        )
        proc = subprocess.Popen(
            [swipl_executable(), "--traditional", "-q", str(DRIVER_PL)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=tmp,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(setup.encode())
        proc.stdin.flush()
        try:
            for _ in range(2):  # open and register answer OK
                assert reply(proc).startswith(b"OK")
            started = time.perf_counter()
            proc.stdin.write(f"push([{events}]).\n".encode())
            proc.stdin.flush()
            reply(proc)
            alone = time.perf_counter() - started
            proc.stdin.close()
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    rate, peer = n / seconds, n / alone
    return [
        Result(
            "engines.etalis.adapter",
            rate,
            "triples/s",
            target="ETALIS alone (driver.pl fed the same push term)",
            ratio=rate / peer,
            note=f"{n} triples, {rows} result rows; alone: {peer:,.0f} triples/s",
        )
    ]


@bench("engines.jtalis")
def jtalis() -> list[Result]:
    """JTALIS through Java vs ETALIS direct: same rules, same stream, both adapters end to end."""
    from rsp_adapter_etalis import EtalisAdapter
    from rsp_adapter_jtalis import JtalisAdapter

    missing = JtalisAdapter().missing_artifacts() + EtalisAdapter().missing_artifacts()
    if missing:
        return [Result("engines.jtalis", 0, "skipped", note="; ".join(missing))]
    table, batches, spec = _inputs()
    n = table.num_rows
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        j_seconds, j_rows = _through_adapter(
            JtalisAdapter(), spec, batches, tmp / "jtalis", runtime="jpype"
        )
        e_seconds, e_rows = _through_adapter(EtalisAdapter(), spec, batches, tmp / "etalis")
    rate, peer = n / j_seconds, n / e_seconds
    return [
        Result(
            "engines.jtalis.vs_etalis",
            rate,
            "triples/s",
            target="the etalis adapter (ETALIS direct, subprocess) on the same stream and query",
            ratio=rate / peer,
            note=(
                f"{n} triples; jtalis (jpype) {j_rows} rows, etalis {e_rows} rows; "
                f"ETALIS direct: {peer:,.0f} triples/s; ratio = JTALIS / ETALIS direct"
            ),
        )
    ]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)


def _direct_run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None, *, timeout: int
) -> dict[str, Any]:
    """Run an engine fed directly (no adapter) and read the JSON figures of its last line."""
    out = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=True
    )
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures
