"""Class data sharing (AppCDS) for the Spark driver JVM: a faster cold start.

A fresh Spark JVM loads, verifies and links some 10,000 classes from its jars before the first
job runs: seconds of CPU each time a process starts Spark (every ``rsp oracle``/``rsp csrbench``
call, every test process). Java 13+ can dump the classes a run loaded into an archive when the
JVM exits (``-XX:ArchiveClassesAtExit``) and map it at the next start (``-XX:SharedArchiveFile``),
with the classes already parsed and verified.

The archive lives in the rsp cache under a name that hashes what it depends on (the ``java``
binary, Spark's jars, the heap size); a JVM started without an archive for its key writes one
under a name of its own (``….<pid>.jsa``) at its exit (unless another live JVM dumps one for
the key already: the dump costs seconds at exit), and a later start adopts it (atomic
rename) once no process names it any more and its header is complete (HotSpot writes the
header last). The JVM checks an archive itself and, under the default ``-Xshare:auto``, runs
without one it cannot use (stale, foreign): nothing breaks, the start is only not faster.
CDS messages go to standard error (the Spark log), never to the CLI's standard output.

HotSpot does not survive every bad archive: a truncated one kills it (SIGBUS) even under
``-XX:+VerifySharedSpaces`` (a CRC of the 150 MiB at every start, left off). Hence a stamp of
the adopted file (size, time) that must still match, and ``spark.get_spark`` starting once more
without CDS, the archive removed, if a start with one fails (its crash report goes to the
temporary folder, not the working directory).
``RSP_SPARK_CDS=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import psutil

from rsp_sdk.runtime.bridge import cache_root

ENV = "RSP_SPARK_CDS"
# a dynamic archive's header starts with this magic (HotSpot CDS_DYNAMIC_ARCHIVE_MAGIC)
_MAGIC = (0xF00BABA8).to_bytes(4, "little")
# an archive of Spark's classes is tens of MiB; anything far smaller is a failed dump
_MIN_BYTES = 1 << 20
# JVM messages (CDS mismatches included) to standard error: standard output is the CLI's
_LOG = "-Xlog:disable -Xlog:all=warning:stderr"


_LAST: dict[str, Path] = {}


def enabled() -> bool:
    return os.environ.get(ENV, "1") not in ("0", "")


def java_options(driver_memory: str) -> str:
    """The driver's extra JVM options: map the archive for this setup, or dump one at exit."""
    if not enabled():
        return ""
    key = _key(driver_memory)
    if key is None:
        return ""
    folder = cache_root() / "spark-cds"
    if any(c.isspace() for c in str(folder)):  # Spark splits the options on blanks
        return ""
    archive = _LAST["archive"] = folder / f"spark-{key}.jsa"
    with contextlib.suppress(OSError):
        if not _intact(archive):
            _adopt(folder, archive)
        if _intact(archive):
            return f"{_LOG} -XX:ErrorFile={_crash_log()} -XX:SharedArchiveFile={archive}"
        if any(n.startswith(f"spark-{key}.") for n in _writers()):
            return ""  # one dump at a time: another JVM writes this archive already
        folder.mkdir(parents=True, exist_ok=True)
        return f"{_LOG} -XX:ArchiveClassesAtExit={folder}/spark-{key}.{os.getpid()}.jsa"
    return ""


def _crash_log() -> str:
    return str(Path(tempfile.gettempdir()) / "rsp-sdk-hs_err_pid%p.log")


def _key(driver_memory: str) -> str | None:
    """What a usable archive depends on: the JVM, Spark's jars (names, sizes, times), the heap
    size (compressed pointers); None when there is no java or pyspark to start."""
    java = _java()
    try:
        import pyspark
    except ImportError:
        return None
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    # the jars' folder too: the archive records the class path, another venv's is a mismatch
    h = hashlib.sha256(f"{java}\0{_stamp(java)}\0{driver_memory}\0{jars}".encode())
    with contextlib.suppress(OSError):
        for jar in sorted(jars.iterdir()):
            h.update(f"\0{jar.name}\0{_stamp(jar)}".encode())
    return h.hexdigest()[:16]


def _java() -> Path | None:
    """The ``java`` spark-submit runs: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        return None
    return Path(found).resolve()


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _adopt(folder: Path, archive: Path) -> None:
    """Rename a finished dump (its JVM gone, its header written) to ``archive``; remove dumps
    that cannot be finished (their JVM gone, no header)."""
    if not folder.is_dir():
        return
    stem = archive.name.removesuffix(".jsa")
    dumps = sorted(folder.glob(f"{stem}.*.jsa"))
    if not dumps:
        return
    busy = _writers()
    for dump in dumps:
        if dump.name in busy:
            continue
        if _complete(dump):
            # the stamp first (a rename keeps size and time): a concurrent start never sees
            # the archive without it
            Path(f"{archive}.stamp").write_text(_stamp(dump))
            os.replace(dump, archive)
            return
        dump.unlink(missing_ok=True)


def _intact(archive: Path) -> bool:
    """Whether ``archive`` is the file adopted (same size and time, noted in ``….stamp``): one
    changed since (truncated, rewritten) is removed, never mapped — HotSpot dies of SIGBUS on
    a truncated archive, CRC check or not."""
    stamp = Path(f"{archive}.stamp")
    if not archive.exists():
        return False
    try:
        if stamp.read_text() == _stamp(archive):
            return True
    except OSError:
        pass
    discard(archive)
    return False


def discard(archive: Path | None = None) -> None:
    """Remove the archive (the default: the one ``java_options`` last named), e.g. after a
    start that failed with it; the next start dumps a new one."""
    target = archive if archive is not None else _LAST.get("archive")
    if target is None:
        return
    for path in (target, Path(f"{target}.stamp")):
        with contextlib.suppress(OSError):
            path.unlink()


def _writers() -> set[str]:
    """Names of the dumps some live JVM will still write (its command line names them): the
    JVM outlives the Python process that started it, and dumps after it is gone."""
    names: set[str] = set()
    for proc in psutil.process_iter(["cmdline"]):
        for arg in proc.info.get("cmdline") or ():
            if arg.startswith("-XX:ArchiveClassesAtExit="):
                names.add(Path(arg.split("=", 1)[1]).name)
    return names


def _complete(dump: Path) -> bool:
    try:
        if dump.stat().st_size < _MIN_BYTES:
            return False
        with dump.open("rb") as f:
            return f.read(4) == _MAGIC
    except OSError:
        return False


def build(timeout_s: float = 600) -> Path | None:
    """Dump the archive now, in a process of its own, and adopt it; None if there is none.

    The process that dumps is the one that exits: a long run (a test session, the matrix) that
    starts Spark first would only leave the archive at its very end. ``python -m
    rsp_sdk.oracle.cds`` runs a small oracle job (both evaluators, Arrow, Parquet) so the
    archive holds the classes every oracle run loads, then waits for its JVM's dump.
    """
    import subprocess
    import sys
    import time

    if not enabled():
        return None
    memory = os.environ.get("RSP_SPARK_DRIVER_MEMORY", "4g")
    key = _key(memory)
    if key is None:
        return None
    archive = cache_root() / "spark-cds" / f"spark-{key}.jsa"
    java_options(memory)  # adopts a finished dump
    if _intact(archive):
        return archive
    code = "from rsp_sdk.oracle.cds import _workload; _workload()"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=timeout_s)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        java_options(memory)
        if _intact(archive):
            return archive
        time.sleep(1)
    return None


def workload_queries() -> tuple[str, ...]:
    """The dumping run's queries: a plain BGP (SQL), an aggregate (SQL), an OPTIONAL
    (pyoxigraph). A query that does not parse would leave CI without an archive, silently."""
    head = "PREFIX ex: <http://example.org/>\nREGISTER RSTREAM <q> AS SELECT "
    window = "FROM NAMED WINDOW ex:w ON <http://ex.org/streams/test> [RANGE PT2S STEP PT1S]\n"
    pattern = "WINDOW ex:w { ?m ex:detectedAt ?r"
    return (
        f"{head}?m ?r\n{window}WHERE {{ {pattern} }} }}",
        f"{head}?r (COUNT(?m) AS ?n)\n{window}WHERE {{ {pattern} }} }} GROUP BY ?r",
        f"{head}?m\n{window}WHERE {{ {pattern} OPTIONAL {{ ?m ex:x ?y }} }} }}",
    )


def _workload() -> None:
    """A six-triple stream through the SQL and the pyoxigraph evaluators (the JVM dumps at the
    process's exit)."""
    from rsp_sdk.model.profile import Profile, ReportPolicy, T0Policy, Tick
    from rsp_sdk.oracle.api import plan_job
    from rsp_sdk.oracle.spark import get_spark
    from rsp_sdk.query import parse_rspql
    from rsp_sdk.streams.generators.rooms import RoomsParams, generate_rooms

    spark = get_spark()
    rooms, _ = generate_rooms(
        RoomsParams(description="0: m1@r1; 300: m2@r2; 700: m3@r1; 1200: m4@r2")
    )
    profile = Profile(
        name="window-close",
        report=frozenset({ReportPolicy.WINDOW_CLOSE}),
        tick=Tick.TIME_DRIVEN,
        emits_empty_relations=False,
        t0=T0Policy(step_ms=1, span="window"),
    )
    for query in workload_queries():
        plan_job(rooms, parse_rspql(query), profile, spark=spark, time_unit_ms=1).run()


if __name__ == "__main__":
    import subprocess
    import sys

    # never fatal (nox runs it before the tests): without an archive Spark only starts slower
    try:
        built = build()
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"no class data sharing archive: the dumping run failed ({exc})")
    else:
        print(built if built is not None else "no class data sharing archive (off, or no java)")
    sys.exit(0)
