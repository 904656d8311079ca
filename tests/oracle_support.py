"""Shared helpers for the oracle tests: one SparkSession, micro streams, readable relations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from rsp_sdk.model.profile import Profile, ReportPolicy, Tick
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms

EX = "http://example.org/"
PREFIX = f"PREFIX ex: <{EX}>\n"


def rsp_in_process(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`rsp ARGS` run by the typer app in this process: the exit code and standard output.
    A command that judges uses the process's SparkSession (the ``spark`` fixture, which the
    caller should request) instead of starting a Spark JVM of its own, 20-60 s on 2 cores; for
    where the point is the process (exit 2 from ``main``, Spark's log lines), use ``run_rsp``.
    ``env``: variables set for the call (and the engine processes it starts)."""
    from typer.testing import CliRunner

    from rsp_sdk.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args], env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout


def rsp_main(
    capsys: pytest.CaptureFixture[str], *args: str | Path, cwd: Path | None = None
) -> tuple[int, str]:
    """`rsp ARGS` through the console script's ``main`` in this process — its error handling
    (exit 2 and one message, or exit 3) included — without a Python start and the imports per
    call: (exit code, standard error). For where the point is the separate process (Spark's
    log lines, a Spark JVM that must not start), use ``run_rsp``."""
    from rsp_sdk.cli import main

    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.argv", ["rsp", *map(str, args)])
        mp.setenv("COLUMNS", "200")
        if cwd is not None:
            mp.chdir(cwd)
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, capsys.readouterr().err


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession (2 cores, 2 shuffle partitions) for the whole test session."""
    from pyspark.sql import SparkSession

    from rsp_sdk.oracle.spark import get_spark, stop_spark

    # a test that ran the matrix or a CLI in-process first may have started the session
    session = SparkSession.getActiveSession() or get_spark("local[2]", partitions=2)
    yield session
    stop_spark()


def rooms(description: str, unit_ms: int = 1000) -> pa.Table:
    table, meta = generate_rooms(RoomsParams(description=description))
    meta = StreamMeta(producer=meta.producer, parameters=meta.parameters, time_unit_ms=unit_ms)
    return table.replace_schema_metadata({b"rsp_sdk.stream": meta.to_bytes()})


def query(select: str, where: str, range_s: str, step_s: str, r2s: str = "RSTREAM") -> str:
    """An RSP-QL query over one window on the rooms stream (ex: prefix declared)."""
    return (
        PREFIX
        + f"REGISTER {r2s} <q> AS\n"
        + f"SELECT {select}\n"
        + f"FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE {range_s} STEP {step_s}]\n"
        + f"WHERE {{ WINDOW ex:w {{ {where} }} }}"
    )


def profile(
    *report: ReportPolicy,
    tick: Tick = Tick.TIME_DRIVEN,
    r2s: str | None = None,
    empty: bool = True,
    **kw: Any,
) -> Profile:
    return Profile.model_validate(
        {
            "name": "test",
            "report": frozenset(report),
            "tick": tick,
            "r2s": r2s,
            "emits_empty_relations": empty,
            "time_unit_ms": 1000,
            **kw,
        }
    )


def short(value: dict[str, str]) -> str:
    v = value["value"]
    return v[len(EX) :] if v.startswith(EX) else v


def relations(out: pa.Table, t0: int) -> list[tuple[int, int, int, int, set[tuple[str, ...]]]]:
    """[(t_app, open, close, n, {binding as sorted (var=value) tuples})] of one t0, by seq."""
    rows = [r for r in out.to_pylist() if r["t0_ms"] == t0]
    by_seq: dict[int, tuple[int, int, int, int, set[tuple[str, ...]]]] = {}
    for r in sorted(rows, key=lambda r: r["seq"]):
        entry = by_seq.setdefault(
            r["seq"],
            (
                r["t_app_ms"],
                r["window_open_ms"],
                r["window_close_ms"],
                r["triples_in_window"],
                set(),
            ),
        )
        if r["binding"] is not None:
            b = json.loads(r["binding"])
            entry[4].add(tuple(f"{k}={short(v)}" for k, v in sorted(b.items())))
    assert sorted(by_seq) == list(range(len(by_seq))), "seq must number relations 0, 1, 2, …"
    return [by_seq[k] for k in sorted(by_seq)]


def bag(out: pa.Table, t0: int) -> list[tuple[int, list[tuple[str, ...]]]]:
    """[(seq, sorted list of bindings)] keeping duplicates (Rstream is a bag)."""
    rows = [r for r in out.to_pylist() if r["t0_ms"] == t0]
    by: dict[int, list[tuple[str, ...]]] = {}
    for r in rows:
        lst = by.setdefault(r["seq"], [])
        if r["binding"] is not None:
            b = json.loads(r["binding"])
            lst.append(tuple(f"{k}={short(v)}" for k, v in sorted(b.items())))
    return [(k, sorted(v)) for k, v in sorted(by.items())]


def spark_lines(stderr: str) -> list[str]:
    """The lines of Spark's (and its JVM's) own logging in a command's standard error."""
    marks = ("WARN", "NativeCodeLoader", "log4j", "SparkContext", "jdk.incubator", "setLogLevel")
    return [line for line in stderr.splitlines() if any(mark in line for mark in marks)]


def readings_trig(times: list[int], more: str = "") -> str:
    """TriG of one reading per time (``ex:s<i> ex:value <i>`` plus ``more`` of the same
    subject, e.g. ``" ; ex:unit ex:celsius"``) on ``<http://ex.org/streams/test>``: the
    stream the wall-clock engine tests replay."""
    lines = [
        "@prefix ex: <http://example.org/> .",
        "@prefix sr: <http://www.streamreasoning.org/schema/benchmark#> .",
        "@prefix rsp: <https://w3id.org/rsp-sdk#> .",
    ]
    for i, t in enumerate(times):
        lines.append(f"ex:g{i} {{ ex:s{i} ex:value {i}{more} . }}")
        lines.append(f'ex:g{i} sr:hasTimestamp "{t}" ; rsp:inStream <http://ex.org/streams/test> .')
    return "\n".join(lines) + "\n"
