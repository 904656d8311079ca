"""rsp-rs through its adapter, for real: the driver crate built by cargo from the pinned
Cargo.lock (rsp-rs 0.3.5 from crates.io), on the subprocess runtime.

What is pinned here is what the engine was *observed* to do (docs/engines/rsprs.md). If an
rsp-rs upgrade changes any of it, these tests say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rsp_sdk.engine import EngineSession, ProvisionCache, TripleBatch
from rsp_sdk.engine.provision import MissingArtifact
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.runtime import get_runtime
from rsp_sdk.testing import AdapterConformance, Scenario, TreeWatch

rsprs = pytest.importorskip(
    "rsp_adapter_rsprs",
    reason="the rsp-rs adapter is not installed (pip install -e adapters/rsprs)",
)
RspRsAdapter = rsprs.RspRsAdapter
render_rsprs = rsprs.render_rsprs
RenderError = rsprs.RenderError

EX = "http://ex.org/"
S1, S2 = f"{EX}stream1", f"{EX}stream2"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


def rsprs_missing() -> str | None:
    """Why rsp-rs cannot run here (None: it can), in the words the user needs."""
    try:
        ProvisionCache().require(RspRsAdapter().manifest())
    except MissingArtifact as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def rsprs_ready() -> None:
    reason = rsprs_missing()
    if reason:
        pytest.skip(reason)


def spec(
    sparql: str,
    windows: list[tuple[str, str, int, int]],
    *,
    name: str = "q",
    static: list[str] | None = None,
) -> QuerySpec:
    return QuerySpec(
        name=name,
        text=sparql,
        sparql=sparql,
        variables=[],
        windows=[WindowSpec(name=w, stream=s, range_ms=r, step_ms=st) for w, s, r, st in windows],
        static_graphs=static or [],
        window_graphs="GRAPH <" in sparql,
    )


@pytest.fixture
def engine(rsprs_ready: None, tmp_path: Path) -> Iterator[Any]:
    """Open rsp-rs sessions; every one is closed and checked for leftovers afterwards."""
    opened: list[tuple[EngineSession, TreeWatch]] = []

    def open_(streams: tuple[str, ...] = (S1,)) -> EngineSession:
        session = RspRsAdapter().open(get_runtime("subprocess"), tmp_path / f"e{len(opened)}")
        watch = TreeWatch(session.pid)
        watch.observe()
        opened.append((session, watch))
        for s in streams:
            session.register_stream(s)
        return session

    yield open_
    for session, watch in opened:
        session.close()
        watch.assert_clean()


def ints(rows: list[tuple[int, str, str, int]]) -> TripleBatch:
    return TripleBatch.from_triples(
        (t, f"<{EX}{s}>", f"<{EX}{p}>", f'"{v}"^^<{XSD_INT}>') for t, s, p, v in rows
    )


# ---- the conformance kit -------------------------------------------------------------------------


class TestRspRsConformance(AdapterConformance):
    adapter = RspRsAdapter()
    scenario = Scenario(triples=2_000, span_ms=20_000, batch_size=500)

    @pytest.fixture
    def rsp_cache(self, rsprs_ready: None) -> Any:
        return None


# ---- rendering ------------------------------------------------------------------------------------


def test_render_is_line_based_as_rsp_rs_parses_it() -> None:
    q = spec(
        f"PREFIX ex: <{EX}>\nSELECT ?s WHERE {{ GRAPH <{EX}w> {{ ?s ex:p ?o }} }}",
        [(f"{EX}w", S1, 10_000, 2_000)],
        name="my query",
    )
    lines = render_rsprs(q).splitlines()
    assert lines[0] == "REGISTER RStream <urn:rsp-sdk:query:my_query> AS"
    assert lines[1] == f"FROM NAMED WINDOW <{EX}w> ON STREAM <{S1}> [RANGE 10000 STEP 2000]"
    assert lines[2] == f"PREFIX ex: <{EX}>"
    assert "FROM <" not in "\n".join(lines)


def test_render_plain_sparql_reads_the_windows_as_default_graph() -> None:
    q = spec(
        "SELECT ?s WHERE { ?s ?p ?o }",
        [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S2, 1000, 1000)],
        static=[f"{EX}static"],
    )
    body = render_rsprs(q).split("\n", 3)[3]
    assert body.startswith(f"SELECT ?s \nFROM <{EX}w1>\nFROM <{EX}w2>\nFROM <{EX}static>\nWHERE")


def test_render_refuses_what_rsp_rs_cannot_express() -> None:
    with pytest.raises(RenderError, match="one window per stream"):
        render_rsprs(
            spec(
                "SELECT * WHERE { ?s ?p ?o }",
                [(f"{EX}w1", S1, 1000, 1000), (f"{EX}w2", S1, 5000, 1000)],
            )
        )
    with pytest.raises(RenderError, match="absolute IRI"):
        render_rsprs(spec("SELECT * WHERE { ?s ?p ?o }", [("w", S1, 1000, 1000)]))
    with pytest.raises(RenderError, match="line-based parser"):
        render_rsprs(
            spec("SELECT * WHERE {\nWINDOW <x> { ?s ?p ?o }\n}", [(f"{EX}w", S1, 1000, 1000)])
        )


def test_missing_driver_message(tmp_path: Path) -> None:
    adapter = RspRsAdapter()
    empty = ProvisionCache(tmp_path / "cache")
    assert adapter.missing_artifacts(empty) == [
        "the cargo-built driver (run: rsp engines fetch rsprs)"
    ]
    with pytest.raises(MissingArtifact, match="run: rsp engines fetch rsprs"):
        adapter.driver(empty)


def test_fetch_without_cargo_names_what_to_install(tmp_path: Path, rsp_exe: list[str]) -> None:
    """No cargo on PATH, no $CARGO, no ~/.cargo/bin: one message and exit 2, nothing built."""
    import os
    import subprocess
    import sys

    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CARGO", "RUSTUP_HOME")},
        "HOME": str(tmp_path / "home"),
        "PATH": str(Path(sys.executable).parent),  # the venv: rsp and python, no cargo
    }
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [*rsp_exe, "engines", "fetch", "rsprs", "--cache", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc
    assert "cargo is needed" in proc.stderr and "Rust toolchain" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(cache.rglob("rsprs-driver"))


# ---- the engine's observed semantics -----------------------------------------------------------------


def test_probe_recovers_the_declared_profile(rsprs_ready: None) -> None:
    from rsp_sdk.probe import FieldName as F
    from rsp_sdk.probe import ProbeSettings, inferred_profile, probe_engine

    adapter = RspRsAdapter()
    fp = probe_engine(adapter, ProbeSettings(runtime="subprocess"))
    found = {name: f.value for name, f in fp.findings.items()}
    assert found == {
        F.CLOCK: "application",
        # windows anchored at the first element, the first ones opening RANGE - STEP before it
        F.T0: "before-data",
        F.T0_PHASE: "first-element",
        F.WINDOW_BOUNDS: "left-closed",
        F.REPORT: "window_close",
        F.NON_EMPTY_CONTENT: None,
        F.TICK: None,
        F.TIME_UNIT: None,
        F.R2S: "rstream",
        F.EMPTY_RELATIONS: None,
    }
    assert fp.differences == []
    assert inferred_profile(fp).t0 == adapter.profile.t0
