"""The base image's lock file: the exact Debian packages every engine image stands on.

No image registry is reachable, so the JRE base is assembled from Debian's own packages
(debootstrap, minbase) and imported into Docker. What makes it *pinned* is this lock file in the
repository (``containers/base/bookworm.lock``): the recipe (suite, variant, architecture, the
packages asked for) and every ``package = version`` the resulting root filesystem holds, read
with ``dpkg-query`` after the build. A build installs exactly those versions or stops and says
which differ; ``--update-lock`` accepts what the mirror serves now.

The lock's *digest* (recipe + packages + ``RECIPE_VERSION`` of the code that assembles the
rootfs; not the mirror URL, which does not change what is installed) names the base image,
``rsp-base:bookworm-<digest12>``, so an unchanged lock finds its image and a build is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w
from pydantic import BaseModel, ConfigDict, Field

from rsp_sdk.errors import InputError, RspError, validated

# Bump when the way the rootfs is assembled (user, folders, cleanup, image config) changes:
# images built by older code then no longer match the digest and are rebuilt.
RECIPE_VERSION = 3
FILE_MTIME = 1_686_355_200
"""The fixed mtime (2023-06-10, Debian 12's release) every file of our images gets instead of the
build time, so builds are reproducible. Not 0: SWI-Prolog (the jtalis image) takes a source file
with mtime 0 for one it has not loaded yet, and loading its library then recurses until the C
stack overflows (RECIPE_VERSION 2 used 0)."""
BASE_REPOSITORY = "rsp-base"
LOCK_HEADER = (
    "# The pinned Debian root filesystem under every rsp-sdk engine image (containers/base).\n"
    "# Written by `rsp images build --update-lock`; a build installs exactly these versions or\n"
    "# stops and lists the differences. Commit this file when it changes.\n"
)


def containers_dir() -> Path:
    """``containers/`` of this checkout (``$RSP_CONTAINERS`` overrides)."""
    env = os.environ.get("RSP_CONTAINERS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "containers"


def default_lock_path() -> Path:
    """``$RSP_BASE_LOCK`` or ``containers/base/bookworm.lock``."""
    env = os.environ.get("RSP_BASE_LOCK")
    return Path(env) if env else containers_dir() / "base" / "bookworm.lock"


class BaseRecipe(BaseModel):
    """How the root filesystem is made (the ``[base]`` table of the lock)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str = "bookworm"
    variant: str = "minbase"
    arch: str = "amd64"
    components: list[str] = Field(default_factory=lambda: ["main"])
    include: list[str] = Field(
        default_factory=lambda: ["openjdk-17-jre-headless"],
        description="packages asked for on top of minbase (dependencies follow)",
    )
    mirror: str = Field(
        default="http://deb.debian.org/debian",
        description="default mirror ($RSP_DEBIAN_MIRROR overrides; not part of the digest)",
    )
    uid: int = Field(default=10001, description="the non-root user engines run as")
    java_home: str = "/usr/lib/jvm/java-17-openjdk-amd64"


class BaseLock(BaseModel):
    """The recipe and every installed ``package → version``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: BaseRecipe = Field(default_factory=BaseRecipe)
    packages: dict[str, str] = Field(default_factory=dict)

    def digest(self) -> str:
        recipe = self.base.model_dump(mode="json", exclude={"mirror"})
        doc = {"recipe_version": RECIPE_VERSION, "base": recipe, "packages": self.packages}
        canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def tag(self) -> str:
        return f"{BASE_REPOSITORY}:{self.base.suite}-{self.digest()[:12]}"

    def with_packages(self, packages: dict[str, str]) -> BaseLock:
        return BaseLock(base=self.base, packages=dict(sorted(packages.items())))

    def package_list(self) -> str:
        """``pkg=version pkg=version …`` (image label, apt-get syntax)."""
        return " ".join(f"{p}={v}" for p, v in sorted(self.packages.items()))


def load_lock(path: Path | str | None = None) -> BaseLock:
    """Read a lock file; a missing file gives a lock with the default recipe and no packages
    (a build then needs ``--update-lock``); bad TOML or fields raise ``InputError``."""
    path = Path(path) if path is not None else default_lock_path()
    if not path.exists():
        return BaseLock()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", path=path, expected="a base lock file") from exc
    return validated(
        BaseLock,
        raw,
        path=path,
        what="lock",
        expected="[base] recipe and [packages] name = version (see rsp_sdk.images.lock)",
    )


def write_lock(lock: BaseLock, path: Path | str | None = None) -> Path:
    """Write the lock atomically (header comment, recipe, sorted packages)."""
    from rsp_sdk.util.atomic import atomic_path

    path = Path(path) if path is not None else default_lock_path()
    body = tomli_w.dumps(
        {"base": lock.base.model_dump(mode="json"), "packages": dict(sorted(lock.packages.items()))}
    )
    with atomic_path(path) as tmp:
        tmp.write_text(LOCK_HEADER + "\n" + body, encoding="utf-8")
    return path


@dataclass
class LockDiff:
    """What a freshly built rootfs holds compared with the lock."""

    changed: dict[str, tuple[str, str]] = field(default_factory=dict)  # pkg → (locked, got)
    added: dict[str, str] = field(default_factory=dict)  # in the rootfs, not in the lock
    removed: dict[str, str] = field(default_factory=dict)  # in the lock, not in the rootfs

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def report(self, limit: int = 40) -> str:
        lines: list[str] = []
        for p, (old, new) in sorted(self.changed.items()):
            lines.append(f"  {p}: locked {old}, the mirror now serves {new}")
        for p, v in sorted(self.added.items()):
            lines.append(f"  {p}: new package {v} (not in the lock)")
        for p, v in sorted(self.removed.items()):
            lines.append(f"  {p}: locked {v}, no longer installed")
        if len(lines) > limit:
            lines = [*lines[:limit], f"  … and {len(lines) - limit} more"]
        return "\n".join(lines)


def diff_lock(lock: BaseLock, installed: dict[str, str]) -> LockDiff:
    d = LockDiff()
    for p, v in installed.items():
        if p not in lock.packages:
            d.added[p] = v
        elif lock.packages[p] != v:
            d.changed[p] = (lock.packages[p], v)
    for p, v in lock.packages.items():
        if p not in installed:
            d.removed[p] = v
    return d


class LockDrift(RspError):
    """The mirror no longer serves the pinned versions: the build stopped, the lock is unchanged."""

    def __init__(self, lock_path: Path, diff: LockDiff, *, release: str = "") -> None:
        self.lock_path = lock_path
        self.diff = diff
        n = len(diff.changed) + len(diff.added) + len(diff.removed)
        served = f" (mirror release of {release})" if release else ""
        option = "" if lock_path == default_lock_path() else f" --lock {lock_path}"
        super().__init__(
            f"the base image cannot be built with the pinned packages of {lock_path}: "
            f"{n} package(s) differ from what the Debian mirror serves now{served}:\n"
            f"{diff.report()}\n"
            "Debian serves one version per package and suite, so pinned versions vanish with "
            f"point releases. To accept the new versions: rsp images build --update-lock{option} "
            "(then commit the lock file)."
        )


def parse_dpkg_query(text: str) -> dict[str, str]:
    """``dpkg-query -W -f '${db:Status-Abbrev}\\t${Package}\\t${Version}\\n'`` → installed
    packages (status ``ii``) by name."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise InputError(
                "unexpected dpkg-query output",
                path="<dpkg-query>",
                line=number,
                text=line,
                expected="status<TAB>package<TAB>version",
            )
        status, name, version = parts
        if status.strip() == "ii":
            out[name] = version
    return out
