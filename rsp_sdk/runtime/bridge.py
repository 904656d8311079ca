"""The Java bridge (containers/bridge): located, built with Maven once, cached by content hash.

Every JVM runtime needs the bridge classes (``EngineDriver``, ``Bridge``, ``ResultBuffer``,
``BridgeServer`` …) on the engine's classpath. They are built from the sources in the repository
with Maven — dependencies only from Maven Central, py4j pinned to the version of the installed
PyPI ``py4j`` so both ends speak the same protocol — into
``$RSP_CACHE/bridge/<hash>/`` where the hash covers the sources, the POM and that py4j version.
Building takes ~15 s once; afterwards it is a directory lookup. A file lock makes concurrent
test processes build it once. ``$RSP_BRIDGE_CLASSPATH`` (paths joined by ``os.pathsep``) skips
all of this for installs without the sources.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rsp_sdk.errors import RspError
from rsp_sdk.runtime.base import JvmDriver

BRIDGE_JAR = "rsp-bridge.jar"


def cache_root() -> Path:
    """``$RSP_CACHE`` or ``~/.cache/rsp-sdk``: provisioned engines, built bridge, compiled glue."""
    env = os.environ.get("RSP_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rsp-sdk"


def bridge_sources() -> Path:
    """containers/bridge of this checkout (``$RSP_BRIDGE_SRC`` overrides)."""
    env = os.environ.get("RSP_BRIDGE_SRC")
    src = Path(env) if env else Path(__file__).resolve().parents[2] / "containers" / "bridge"
    if not (src / "pom.xml").exists():
        raise RspError(
            f"the bridge sources are not at {src} (expected containers/bridge/pom.xml of an "
            "rsp-sdk checkout); set RSP_BRIDGE_SRC to that folder or RSP_BRIDGE_CLASSPATH to "
            "prebuilt jars"
        )
    return src


def py4j_version() -> str:
    from py4j.version import __version__

    return str(__version__)


def sources_hash(src: Path) -> str:
    h = hashlib.sha256()
    files = sorted([src / "pom.xml", *(src / "src").rglob("*.java")])
    for f in files:
        h.update(str(f.relative_to(src)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    h.update(py4j_version().encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock (released when the block ends or the process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run_maven(project: Path, goals: list[str], *, props: dict[str, str] | None = None) -> None:
    """``mvn -q -B`` in ``project``: offline first (a warm ~/.m2 needs no network), then online."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RspError(
            "Maven (mvn) is needed to build the JVM bridge and resolve engine dependencies: "
            "install it (Debian: apt-get install maven) or set RSP_BRIDGE_CLASSPATH"
        )
    defs = [f"-D{k}={v}" for k, v in (props or {}).items()]
    base = [mvn, "-q", "-B", *defs, *goals]
    offline = subprocess.run([*base[:1], "-o", *base[1:]], cwd=project, capture_output=True)
    if offline.returncode == 0:
        return
    online = subprocess.run(base, cwd=project, capture_output=True)
    if online.returncode != 0:
        out = (online.stdout + online.stderr).decode(errors="replace")
        raise RspError(f"maven failed in {project} ({' '.join(goals)}):\n{out[-4000:]}")


def bridge_argv(java: str, spec: JvmDriver, classpath: str, *extra: str) -> list[str]:
    """The bridge server's command line for ``spec`` (both ports picked by the JVM, announced
    on its stdout): the py4j runtime's JVM subprocess and the docker runtime's container."""
    return [
        java,
        *spec.jvm_flags,
        *[f"-D{k}={v}" for k, v in spec.system_properties.items()],
        "-cp",
        classpath,
        "org.rspsdk.bridge.BridgeServer",
        "--driver",
        spec.driver_class,
        "--port",
        "0",
        "--data-port",
        "0",
        *extra,
    ]


def bridge_classpath() -> list[Path]:
    """The bridge jar and its py4j jar, building them first when the cache lacks this version."""
    env = os.environ.get("RSP_BRIDGE_CLASSPATH")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    src = bridge_sources()
    key = sources_hash(src)
    home = cache_root() / "bridge"
    out = home / key
    if not (out / BRIDGE_JAR).exists():
        with file_lock(home / ".lock"):
            if not (out / BRIDGE_JAR).exists():
                _build(src, out)
    return [out / BRIDGE_JAR, *sorted((out / "lib").glob("*.jar"))]


def _build(src: Path, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out.parent) as tmp:
        project = Path(tmp) / "bridge"
        shutil.copytree(src, project, ignore=shutil.ignore_patterns("target"))
        run_maven(project, ["package"], props={"py4j.version": py4j_version()})
        staged = Path(tmp) / "out"
        staged.mkdir()
        shutil.copy2(project / "target" / BRIDGE_JAR, staged / BRIDGE_JAR)
        shutil.copytree(project / "target" / "lib", staged / "lib")
        os.replace(staged, out)
