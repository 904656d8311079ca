"""The Spark driver's class-data-sharing archive: adopted only when finished, never mapped when
changed since (HotSpot dies of SIGBUS on a truncated archive), off with ``RSP_SPARK_CDS=0``.

Pure Python (no JVM): what HotSpot does with the options was checked by hand (a truncated
archive with a matching stamp: the first start crashes, ``get_spark`` starts again without it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rsp_sdk.oracle import cds


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RSP_CACHE", str(tmp_path))
    monkeypatch.delenv(cds.ENV, raising=False)
    return tmp_path / "spark-cds"


# a heap size no live JVM of the test session uses: its archive key is this test's alone (a live
# JVM dumping the archive of a key makes other starts run without CDS)
MEM = "1234m"


def _archive(options: str) -> Path:
    return Path(options.rsplit("=", 1)[1])


def test_first_start_dumps_then_the_finished_dump_is_mapped(cache: Path) -> None:
    first = cds.java_options(MEM)
    assert "-XX:ArchiveClassesAtExit=" in first and "-Xlog:all=warning:stderr" in first
    dump = _archive(first)
    dump.write_bytes(b"\xa8\xab\x0b\xf0" + bytes(2 << 20))  # header magic, 2 MiB
    second = cds.java_options(MEM)
    assert "-XX:SharedArchiveFile=" in second
    assert _archive(second).exists() and not dump.exists()
    assert cds.java_options(MEM) == second
    assert cds.java_options("1235m") != second  # another heap size, another archive


def test_an_unfinished_dump_is_dropped_and_a_changed_archive_never_mapped(cache: Path) -> None:
    dump = _archive(cds.java_options(MEM))
    dump.write_bytes(bytes(2 << 20))  # killed while dumping: no header yet
    assert "-XX:ArchiveClassesAtExit=" in cds.java_options(MEM)
    assert not dump.exists()
    dump = _archive(cds.java_options(MEM))
    dump.write_bytes(b"\xa8\xab\x0b\xf0" + bytes(2 << 20))
    archive = _archive(cds.java_options(MEM))
    with archive.open("r+b") as f:
        f.truncate(1 << 20)
    again = cds.java_options(MEM)
    assert "-XX:ArchiveClassesAtExit=" in again and not archive.exists()


def test_off_by_environment(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cds.ENV, "0")
    assert cds.java_options(MEM) == ""
    assert not cache.exists()


def test_the_dumping_run_queries_parse() -> None:
    """`nox -s tests` builds the archive with these queries; the build never fails the session
    (no archive only means a slower start), so a query that stopped parsing went unnoticed."""
    from rsp_sdk.query import parse_rspql

    parsed = [parse_rspql(q) for q in cds.workload_queries()]
    assert [len(p.windows) for p in parsed] == [1, 1, 1]


def test_small_input_sessions_compile_with_c1_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JIT options besides CDS: C1 only for a session started for small inputs, none for
    others (large inputs want C2's code), and ``RSP_SPARK_JAVA_OPTIONS`` replaces both."""
    from rsp_sdk.oracle import spark

    monkeypatch.delenv(spark.JAVA_OPTIONS_ENV, raising=False)
    assert spark.java_options(small=True) == "-XX:TieredStopAtLevel=1"
    assert spark.java_options(small=False) == ""
    monkeypatch.setenv(spark.JAVA_OPTIONS_ENV, "")
    assert spark.java_options(small=True) == ""
    monkeypatch.setenv(spark.JAVA_OPTIONS_ENV, " -XX:+UseSerialGC ")
    assert spark.java_options(small=False) == "-XX:+UseSerialGC"
