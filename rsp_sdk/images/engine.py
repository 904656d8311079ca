"""Engine images: the base + an engine's provisioned classpath + the bridge, tagged by content.

An engine image is built from exactly what a ``JvmDriver`` names — the jars and folders of its
classpath as the provisioning cache holds them (``rsp engines fetch`` / ``rsp engines add``) —
plus the bridge jars, with the one generic ``containers/engine/Dockerfile`` (``COPY`` only;
nothing fetches or compiles engine code). The build context is a tar we write ourselves with
sorted names, zero mtimes and root ownership, so the same inputs give the same layer.

The tag is ``rsp-engine-<name>:<hash16>`` where the hash covers the base lock digest, the
Dockerfile, the engine name/version and every file's container path and sha256. The Docker
runtime computes the same plan from the driver it is asked to launch, finds the image by tag and
builds it (a few seconds) when it is missing. Labels carry the engine name and version, the
sha256 of every classpath entry and the bridge version.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.errors import RspError
from rsp_sdk.images.base import find_image, images_home
from rsp_sdk.images.client import LABEL, docker_client
from rsp_sdk.images.lock import (
    FILE_MTIME,
    BaseLock,
    containers_dir,
    default_lock_path,
    load_lock,
)
from rsp_sdk.runtime.base import JvmDriver, ProcessDriver
from rsp_sdk.runtime.bridge import bridge_classpath, file_lock, py4j_version

ENGINE_REPOSITORY = "rsp-engine-"
BRIDGE_DIR = "/opt/rsp/bridge"
CP_DIR = "/opt/rsp/cp"
Step = Callable[[str], None]

_file_digests: dict[tuple[str, int, int], str] = {}


def dockerfile_template() -> bytes:
    path = containers_dir() / "engine" / "Dockerfile"
    if not path.exists():
        raise RspError(
            f"the engine Dockerfile template is not at {path} (expected containers/engine/"
            "Dockerfile of an rsp-sdk checkout); set RSP_CONTAINERS to that containers folder"
        )
    return path.read_bytes()


def digest(path: Path) -> str:
    """sha256 of a file (memoised by path, size and mtime) or a folder (always recomputed)."""
    if path.is_dir():
        return sha256_of(path)
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    found = _file_digests.get(key)
    if found is None:
        found = _file_digests[key] = sha256_of(path)
    return found


def bridge_version() -> str:
    """``<pom version>+<sources hash>/py4j-<version>`` (or the jars' hash when prebuilt)."""
    from rsp_sdk.runtime.bridge import bridge_sources, sources_hash

    try:
        src = bridge_sources()
    except RspError:
        jars = "".join(digest(p) for p in bridge_classpath())
        return f"prebuilt-{hashlib.sha256(jars.encode()).hexdigest()[:16]}/py4j-{py4j_version()}"
    m = re.search(
        r"<artifactId>rsp-bridge</artifactId>\s*<version>([^<]+)</version>",
        (src / "pom.xml").read_text(),
    )
    version = m.group(1) if m else "?"
    return f"{version}+{sources_hash(src)}/py4j-{py4j_version()}"


def _safe(name: str) -> str:
    out = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return out or "engine"


@dataclass(frozen=True)
class Entry:
    host: Path
    container: str
    sha256: str


@dataclass
class EnginePlan:
    """Everything that goes into one engine image, and the tag that names it."""

    engine: str
    version: str
    base_tag: str
    base_digest: str
    entries: list[Entry]
    bridge: list[Entry]
    bridge_version: str
    dockerfile: bytes
    content_hash: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return f"{ENGINE_REPOSITORY}{_safe(self.engine)}:{self.content_hash[:16]}"

    @property
    def classpath(self) -> list[str]:
        """The JVM classpath inside the container: bridge first, then the engine's entries."""
        return [e.container for e in (*self.bridge, *self.entries)]


def plan_engine_image(
    spec: JvmDriver, *, lock: BaseLock | None = None, bridge: Sequence[Path] | None = None
) -> EnginePlan:
    """Hash every input of the image of ``spec`` (no Docker needed)."""
    lock = lock or load_lock()
    if not lock.packages:
        raise RspError("the base lock has no packages: run rsp images build --update-lock")
    engine = spec.engine or spec.driver_class.rsplit(".", 1)[-1]
    bridge_paths = list(bridge) if bridge is not None else bridge_classpath()
    entries: list[Entry] = []
    for i, p in enumerate(spec.classpath):
        p = Path(p)
        if not p.exists():
            raise RspError(f"classpath entry {p} of {engine} does not exist")
        sha = digest(p)
        # folders (compiled glue) are named by their cache key, which depends on where the
        # cache is: name them by content so the same classes give the same image
        name = f"dir-{sha[:16]}" if p.is_dir() else p.name
        entries.append(Entry(p, f"{CP_DIR}/{i:02d}-{name}", sha))
    bridge_entries = [Entry(p, f"{BRIDGE_DIR}/{p.name}", digest(p)) for p in bridge_paths]
    plan = EnginePlan(
        engine=engine,
        version=spec.engine_version,
        base_tag=lock.tag,
        base_digest=lock.digest(),
        entries=entries,
        bridge=bridge_entries,
        bridge_version=bridge_version(),
        dockerfile=dockerfile_template(),
    )
    doc = {
        "dockerfile": hashlib.sha256(plan.dockerfile).hexdigest(),
        "base": plan.base_digest,
        "engine": plan.engine,
        "version": plan.version,
        "files": [[e.container, e.sha256] for e in (*bridge_entries, *entries)],
    }
    plan.content_hash = hashlib.sha256(
        json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    plan.labels = {
        f"{LABEL}.image": "engine",
        f"{LABEL}.content-hash": plan.content_hash,
        f"{LABEL}.engine.name": plan.engine,
        f"{LABEL}.engine.version": plan.version,
        f"{LABEL}.engine.classpath": json.dumps(
            [{"path": e.container, "sha256": e.sha256} for e in entries]
        ),
        f"{LABEL}.bridge.version": plan.bridge_version,
        f"{LABEL}.bridge.classpath": json.dumps(
            [{"path": e.container, "sha256": e.sha256} for e in bridge_entries]
        ),
        f"{LABEL}.base": plan.base_tag,
        f"{LABEL}.base.lock-sha256": plan.base_digest,
    }
    return plan


def plan_process_image(spec: ProcessDriver, *, lock: BaseLock | None = None) -> EnginePlan:
    """The image of a program (``ProcessDriver.image``): the base plus its files, no bridge.

    The packages the program runs on must be in the base lock (``include`` of
    containers/base/bookworm.lock), so its interpreter is pinned with the rest of the base."""
    lock = lock or load_lock()
    if not lock.packages:
        raise RspError("the base lock has no packages: run rsp images build --update-lock")
    image = spec.image
    if image is None:
        raise RspError(f"the program {spec.argv[:2]} declares no image: it runs on the host only")
    missing = [p for p in image.packages if p not in lock.packages]
    if missing:
        raise RspError(
            f"{image.engine} runs on Debian package(s) {', '.join(missing)}, which the base lock "
            f"has not pinned: add them to include = [...] of {default_lock_path()} and run "
            "rsp images build --update-lock (then commit the lock file)"
        )
    entries: list[Entry] = []
    for f in image.files:
        if not f.host.exists():
            raise RspError(f"file {f.host} of {image.engine}'s image does not exist")
        entries.append(Entry(f.host, f.container, f.sha256 or digest(f.host)))
    plan = EnginePlan(
        engine=image.engine,
        version=image.engine_version,
        base_tag=lock.tag,
        base_digest=lock.digest(),
        entries=entries,
        bridge=[],
        bridge_version="",
        dockerfile=dockerfile_template(),
    )
    packages = {p: lock.packages[p] for p in sorted(image.packages)}
    doc = {
        "dockerfile": hashlib.sha256(plan.dockerfile).hexdigest(),
        "base": plan.base_digest,
        "engine": plan.engine,
        "version": plan.version,
        "files": [[e.container, e.sha256] for e in entries],
    }
    plan.content_hash = hashlib.sha256(
        json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    plan.labels = {
        f"{LABEL}.image": "engine",
        f"{LABEL}.content-hash": plan.content_hash,
        f"{LABEL}.engine.name": plan.engine,
        f"{LABEL}.engine.version": plan.version,
        f"{LABEL}.engine.files": json.dumps(
            [{"path": e.container, "sha256": e.sha256} for e in entries]
        ),
        f"{LABEL}.engine.packages": " ".join(f"{p}={v}" for p, v in packages.items()),
        f"{LABEL}.base": plan.base_tag,
        f"{LABEL}.base.lock-sha256": plan.base_digest,
    }
    return plan


def plan_image(spec: JvmDriver | ProcessDriver, *, lock: BaseLock | None = None) -> EnginePlan:
    """The image plan of any driver that can run in a container."""
    if isinstance(spec, ProcessDriver):
        return plan_process_image(spec, lock=lock)
    return plan_engine_image(spec, lock=lock)


def _normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = FILE_MTIME  # not 0: see rsp_sdk.images.lock.FILE_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
    return info


def _add(tar: tarfile.TarFile, src: Path, arcname: str) -> None:
    """Add a file or a folder (recursively, sorted) with normalised metadata."""
    tar.add(str(src), arcname=arcname, recursive=False, filter=_normalise)
    if src.is_dir() and not src.is_symlink():
        for child in sorted(src.iterdir(), key=lambda c: c.name):
            _add(tar, child, f"{arcname}/{child.name}")


def write_context(plan: EnginePlan, out: io.BufferedIOBase) -> None:
    """The build context as an uncompressed, deterministic tar."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = _normalise(tarfile.TarInfo("Dockerfile"))
        info.size = len(plan.dockerfile)
        tar.addfile(info, io.BytesIO(plan.dockerfile))
        for e in (*plan.bridge, *plan.entries):
            _add(tar, e.host, "rsp" + e.container.removeprefix("/opt/rsp"))


@dataclass
class EngineImage:
    tag: str
    image_id: str
    content_hash: str
    classpath: list[str]
    built: bool
    seconds: float
    labels: dict[str, str]


def ensure_engine_image(
    spec: JvmDriver | ProcessDriver,
    *,
    client: Any = None,
    lock: BaseLock | None = None,
    rebuild: bool = False,
    step: Step | None = None,
) -> EngineImage:
    """The image of ``spec`` (found by its content tag, or built now on the existing base)."""
    started = time.monotonic()
    plan = plan_image(spec, lock=lock)
    client = client or docker_client()
    image = None if rebuild else find_image(client, plan.tag)
    if image is None:
        home = images_home()
        home.mkdir(parents=True, exist_ok=True)
        with file_lock(home / ".engine.lock"):
            image = None if rebuild else find_image(client, plan.tag)
            if image is None:
                _build(client, plan, step or (lambda _m: None))
                image = find_image(client, plan.tag)
                if image is None:  # pragma: no cover - the daemon said it built it
                    raise RspError(f"docker build reported success but {plan.tag} is missing")
                return EngineImage(
                    plan.tag,
                    image.id,
                    plan.content_hash,
                    plan.classpath,
                    True,
                    time.monotonic() - started,
                    dict(image.labels or {}),
                )
    return EngineImage(
        plan.tag,
        image.id,
        plan.content_hash,
        plan.classpath,
        False,
        time.monotonic() - started,
        dict(image.labels or {}),
    )


def _build(client: Any, plan: EnginePlan, say: Step) -> None:
    import docker.errors

    if find_image(client, plan.base_tag) is None:
        raise RspError(
            f"the base image {plan.base_tag} is not built: run `rsp images build` "
            "(as root; needs debootstrap and the Debian mirror)"
        )
    say(f"building {plan.tag} ({len(plan.entries)} files or classpath entries on {plan.base_tag})")
    with tempfile.TemporaryFile(dir=images_home()) as ctx:
        write_context(plan, ctx)
        ctx.seek(0)
        try:
            client.images.build(
                fileobj=ctx,
                custom_context=True,
                tag=plan.tag,
                buildargs={"BASE": plan.base_tag},
                labels=plan.labels,
                network_mode="host",
                pull=False,
                rm=True,
                forcerm=True,
            )
        except docker.errors.BuildError as exc:
            log = "".join(str(c.get("stream", c.get("error", ""))) for c in exc.build_log)
            raise RspError(f"building {plan.tag} failed: {exc.msg}\n{log[-3000:]}") from None
