"""The base image: a Debian root filesystem with the JRE, at the versions of the lock file.

No image registry is reachable, so ``FROM debian`` is not an option. Instead, with root:

1. ``debootstrap --variant=minbase --include=<the lock's packages>`` builds a bookworm rootfs
   from Debian's signed packages (deb.debian.org or ``$RSP_DEBIAN_MIRROR``);
2. ``dpkg-query`` lists what it holds, which must equal the lock exactly. Debian serves exactly
   one version of each package per suite, so the pinned versions are installed precisely when
   the mirror still serves them; when a point release replaced some, the build stops with
   ``LockDrift`` naming each package, the locked and the served version (``--update-lock``
   accepts them and rewrites the lock);
3. a non-root user (uid 10001), ``/work`` and ``/opt/rsp`` are added, caches and the host's
   ``resolv.conf``/``hostname`` removed;
4. the rootfs is tarred deterministically (sorted names, numeric owners, clamped mtimes) and
   ``docker import``-ed as ``rsp-base:bookworm-<lock digest>``, with the recipe, the Java
   version and every ``package=version`` in its labels.

The tag is the lock's digest, so a build with an unchanged lock finds the image and does
nothing (``rebuild=True`` forces it). Measured on the busy 2-core machine: 60–100 s for
debootstrap (122 packages, network and dpkg bound), ~6 s for tar + import; 344 MB. Two builds
from the same lock give the same 8455 files with the same bytes, except the JRE trust store
``/etc/ssl/certs/java/cacerts``, which ca-certificates-java writes with a fresh random salt.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsp_sdk.errors import RspError
from rsp_sdk.images.client import LABEL, docker_client
from rsp_sdk.images.lock import (
    BASE_REPOSITORY,
    FILE_MTIME,
    RECIPE_VERSION,
    BaseLock,
    LockDrift,
    diff_lock,
    load_lock,
    parse_dpkg_query,
    write_lock,
)
from rsp_sdk.runtime.bridge import cache_root, file_lock

Step = Callable[[str], None]
DPKG_FORMAT = "${db:Status-Abbrev}\t${Package}\t${Version}\n"


@dataclass
class BaseImage:
    tag: str
    image_id: str
    built: bool
    seconds: float
    lock_path: Path
    lock_updated: bool
    packages: int
    java: str
    release: str = ""


def images_home() -> Path:
    """``$RSP_CACHE/images``: build logs and scratch space for root filesystems."""
    return cache_root() / "images"


def find_image(client: Any, tag: str) -> Any | None:
    """The local image with this tag (``None`` when absent); never pulls."""
    import docker.errors

    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def base_image(client: Any, lock: BaseLock | None = None) -> Any | None:
    return find_image(client, (lock or load_lock()).tag)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _run(argv: list[str], log: Path, what: str) -> None:
    with open(log, "ab") as f:
        f.write(f"$ {' '.join(argv)}\n".encode())
        f.flush()
        proc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        from rsp_sdk.runtime._process import log_tail

        raise RspError(
            f"{what} failed (exit code {proc.returncode}); log {log} ends with:\n"
            f"{log_tail(log, lines=20)}"
        )


def _unmount_below(root: Path) -> None:
    """Undo mounts debootstrap left inside the rootfs (an interrupted run leaves /proc)."""
    prefix = str(root.resolve()) + "/"
    with open("/proc/mounts") as f:
        points = [line.split()[1] for line in f]
    for point in sorted((p for p in points if p.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _require_tools() -> None:
    if os.geteuid() != 0:
        raise RspError(
            "building the base image needs root (debootstrap and chroot); run "
            "`rsp images build` as root, e.g. in CI or with sudo"
        )
    missing = [t for t in ("debootstrap", "dpkg-query", "tar") if shutil.which(t) is None]
    if missing:
        raise RspError(
            f"building the base image needs {', '.join(missing)} "
            "(Debian: apt-get install debootstrap)"
        )


def _installed(rootfs: Path) -> dict[str, str]:
    out = subprocess.run(
        ["dpkg-query", f"--admindir={rootfs / 'var/lib/dpkg'}", "-W", f"-f={DPKG_FORMAT}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return parse_dpkg_query(out.stdout)


def _release_date(rootfs: Path) -> str:
    for f in sorted((rootfs / "var/lib/apt/lists").glob("*Release")):
        m = re.search(r"^Date: (.+)$", f.read_text(errors="replace"), re.MULTILINE)
        if m:
            return m.group(1).strip()
    return ""


def _customise(rootfs: Path, lock: BaseLock) -> None:
    """Non-root user, work folders, no caches and no host files."""
    uid = lock.base.uid
    with open(rootfs / "etc/passwd", "a") as f:
        f.write(f"rsp:x:{uid}:{uid}:rsp-sdk engine:/work:/usr/sbin/nologin\n")
    with open(rootfs / "etc/group", "a") as f:
        f.write(f"rsp:x:{uid}:\n")
    (rootfs / "work").mkdir(exist_ok=True)
    (rootfs / "work").chmod(0o1777)
    (rootfs / "opt/rsp").mkdir(parents=True, exist_ok=True)
    for pattern in (
        "var/lib/apt/lists/*_*",
        "var/cache/apt/*.bin",
        "var/cache/apt/archives/*.deb",
        "var/cache/debconf/*-old",
        "var/lib/dpkg/*-old",
        "var/log/*.log",
        "var/log/apt/*",
        "var/cache/ldconfig/aux-cache",  # inode/mtime cache: differs on every build
        "etc/resolv.conf",
        "etc/hostname",
    ):
        for p in rootfs.glob(pattern):
            if p.is_file() or p.is_symlink():
                p.unlink()


def _java_version(lock: BaseLock) -> str:
    for name, version in lock.packages.items():
        if name.startswith("openjdk-") and name.endswith("-jre-headless"):
            return version
    return ""


def build_base(
    *,
    lock_path: Path | None = None,
    update_lock: bool = False,
    rebuild: bool = False,
    mirror: str | None = None,
    client: Any = None,
    step: Step | None = None,
) -> BaseImage:
    """Make sure the base image of the lock exists, building it when needed (see module doc)."""
    from rsp_sdk.images.lock import default_lock_path

    say = step or (lambda _msg: None)
    lock_path = Path(lock_path) if lock_path is not None else default_lock_path()
    lock = load_lock(lock_path)
    client = client or docker_client()
    started = time.monotonic()
    if not lock.packages and not update_lock:
        raise RspError(
            f"no package lock at {lock_path}: create it with rsp images build --update-lock"
        )
    existing = base_image(client, lock) if lock.packages and not rebuild else None
    if existing is not None and not update_lock:
        return _result(existing, lock, lock_path, False, False, started)
    _require_tools()
    home = images_home()
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / ".base.lock"):
        existing = base_image(client, lock) if lock.packages and not rebuild else None
        if existing is not None and not update_lock:
            return _result(existing, lock, lock_path, False, False, started)
        log = home / "logs" / f"base-{time.strftime('%Y%m%d-%H%M%S')}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".rootfs-", dir=home) as tmp:
            rootfs = Path(tmp) / "rootfs"
            try:
                return _build(
                    client,
                    lock,
                    lock_path,
                    rootfs,
                    Path(tmp),
                    log,
                    update_lock=update_lock,
                    rebuild=rebuild,
                    mirror=mirror,
                    say=say,
                    started=started,
                )
            finally:
                _unmount_below(rootfs)


def _build(
    client: Any,
    lock: BaseLock,
    lock_path: Path,
    rootfs: Path,
    tmp: Path,
    log: Path,
    *,
    update_lock: bool,
    rebuild: bool,
    mirror: str | None,
    say: Step,
    started: float,
) -> BaseImage:
    r = lock.base
    mirror = mirror or os.environ.get("RSP_DEBIAN_MIRROR") or r.mirror
    # the pinned set itself unless the lock is being renewed (then only what the recipe asks)
    include = sorted(set(r.include) | (set() if update_lock else set(lock.packages)))
    _debootstrap(lock, lock_path, rootfs, log, include, mirror, update_lock=update_lock, say=say)
    release = _release_date(rootfs)
    lock, lock_updated = _reconcile(lock, lock_path, rootfs, release, update_lock, say)
    if not rebuild:
        existing = base_image(client, lock)
        if existing is not None:
            return _result(existing, lock, lock_path, False, lock_updated, started, release)
    _customise(rootfs, lock)
    image = _import(client, lock, rootfs, tmp / "rootfs.tar", log, release, say)
    return _result(image, lock, lock_path, True, lock_updated, started, release)


def _debootstrap(
    lock: BaseLock,
    lock_path: Path,
    rootfs: Path,
    log: Path,
    include: list[str],
    mirror: str,
    *,
    update_lock: bool,
    say: Step,
) -> None:
    """The root filesystem from the mirror; a pinned package the mirror dropped is named,
    with the command that accepts the current set."""
    r = lock.base
    say(f"debootstrap {r.suite} ({r.variant}, {len(include)} packages) from {mirror}")
    t0 = time.monotonic()
    argv = [
        "debootstrap",
        f"--variant={r.variant}",
        f"--arch={r.arch}",
        f"--components={','.join(r.components)}",
        f"--include={','.join(include)}",
        r.suite,
        str(rootfs),
        mirror,
    ]
    try:
        _run(argv, log, "debootstrap")
    except RspError as exc:
        gone = re.search(r"Couldn't find these debs: (.+)", log.read_text(errors="replace"))
        if gone and not update_lock:
            raise RspError(
                f"the Debian mirror no longer has these pinned packages of {lock_path}: "
                f"{gone.group(1).strip()}; accept the current package set with "
                "rsp images build --update-lock (then commit the lock file)"
            ) from exc
        raise
    say(f"debootstrap done in {time.monotonic() - t0:.0f} s")


def _reconcile(
    lock: BaseLock, lock_path: Path, rootfs: Path, release: str, update_lock: bool, say: Step
) -> tuple[BaseLock, bool]:
    """The lock the image is built from: the given one when the installed packages match it,
    else ``LockDrift`` — or, with ``update_lock``, the installed set written as the new lock."""
    installed = _installed(rootfs)
    diff = diff_lock(lock, installed)
    if not diff:
        return lock, False
    if not update_lock:
        raise LockDrift(lock_path, diff, release=release)
    lock = lock.with_packages(installed)
    write_lock(lock, lock_path)
    say(f"lock updated: {lock_path} ({len(installed)} packages)")
    return lock, True


def _import(
    client: Any, lock: BaseLock, rootfs: Path, tar: Path, log: Path, release: str, say: Step
) -> Any:
    """``docker import`` of the root filesystem as a reproducible tar (sorted, numeric owners,
    clamped mtimes), with the environment, user and labels the engine images rely on."""
    say("tar + docker import")
    _run(
        [
            "tar",
            "--sort=name",
            "--numeric-owner",
            f"--mtime=@{FILE_MTIME}",
            "--clamp-mtime",
            "--exclude=./dev/*",
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "-C",
            str(rootfs),
            "-cf",
            str(tar),
            ".",
        ],
        log,
        "tar of the root filesystem",
    )
    repository, tag = lock.tag.split(":", 1)
    assert repository == BASE_REPOSITORY
    changes = _changes(lock, release)
    client.api.import_image_from_file(str(tar), repository=repository, tag=tag, changes=changes)
    image = base_image(client, lock)
    if image is None:
        raise RspError(f"docker import reported success but {lock.tag} is not there; log {log}")
    with contextlib.suppress(OSError):
        tar.unlink()
    say(f"imported {lock.tag}")
    return image


def _changes(lock: BaseLock, release: str) -> list[str]:
    """The Dockerfile instructions ``docker import`` applies: environment, user, labels."""
    r = lock.base
    labels = {
        f"{LABEL}.image": "base",
        f"{LABEL}.recipe-version": str(RECIPE_VERSION),
        f"{LABEL}.base.lock-sha256": lock.digest(),
        f"{LABEL}.base.suite": r.suite,
        f"{LABEL}.base.variant": r.variant,
        f"{LABEL}.base.arch": r.arch,
        f"{LABEL}.base.include": ",".join(r.include),
        f"{LABEL}.base.java": _java_version(lock),
        f"{LABEL}.base.mirror-release": release,
        f"{LABEL}.base.packages": lock.package_list(),
    }
    path_env = f"{r.java_home}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return [
        f"ENV JAVA_HOME={r.java_home}",
        f"ENV PATH={path_env}",
        "ENV LANG=C.UTF-8",
        f"USER {r.uid}:{r.uid}",
        "WORKDIR /work",
        'CMD ["java", "-version"]',
        "LABEL " + " ".join(f"{k}={_quote(v)}" for k, v in labels.items()),
    ]


def _result(
    image: Any,
    lock: BaseLock,
    lock_path: Path,
    built: bool,
    lock_updated: bool,
    started: float,
    release: str = "",
) -> BaseImage:
    labels = image.labels or {}
    return BaseImage(
        tag=lock.tag,
        image_id=image.id,
        built=built,
        seconds=time.monotonic() - started,
        lock_path=lock_path,
        lock_updated=lock_updated,
        packages=len(lock.packages),
        java=_java_version(lock),
        release=release or labels.get(f"{LABEL}.base.mirror-release", ""),
    )
