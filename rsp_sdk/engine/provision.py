"""Provisioning: from an adapter's manifest to a classpath, with every file's sha256 checked.

No registry serves the seed engines (see ENGINES.md), so an engine is assembled from two kinds of
files, described by a TOML *manifest* next to its adapter:

* pinned **Maven Central dependencies** (``group:artifact:version[:classifier]`` + sha256), which
  ``rsp engines fetch NAME`` resolves with Maven — exactly those jars, no transitive surprises —
  and copies into the cache after checking each sha256;
* the engine's own **artifacts** (its jar(s), or a folder of Prolog sources) that the user
  supplies with ``rsp engines add NAME PATH…``; their sha256 is recorded and compared with the
  builds the manifest knows;

plus the adapter's **glue** (Java driver sources that must compile against the engine's jars:
one or more folders of the adapter, plus any of the SDK's own glue folders in
``rsp_sdk/engine/glue/`` such as ``log4j``, a log4j 1.x appender every Esper/Jena-era engine
driver needs), compiled together with ``javac`` into the cache once everything is there, and —
for engines published on npm (rsp-js) — the **npm packages** pinned by a ``package-lock.json``
the adapter ships, which ``rsp engines fetch NAME`` installs with ``npm ci`` (npm checks every
package's integrity hash from the lock file). Cache layout::

    $RSP_CACHE/engines/NAME/deps/*.jar          verified Maven Central jars
    $RSP_CACHE/engines/NAME/artifacts/FILE      user-supplied engine files (jar or folder)
    $RSP_CACHE/engines/NAME/glue/HASH/          compiled glue (HASH: sources + classpath)
    $RSP_CACHE/engines/NAME/npm/HASH/node_modules  `npm ci` of the adapter's lock (HASH: lock)
    $RSP_CACHE/engines/NAME/lock.json           what is there, with sha256 and provenance

Manifest (TOML)::

    [engine]
    name = "csparql"
    version = "0.9.7"
    upstream = "https://github.com/streamreasoning/CSPARQL-engine"   # where the source lives
    source = "f1866cb9"                                               # commit / release

    [[artifact]]
    file = "csparql-engine-0.9.7.jar"        # name in the cache
    match = ["csparql*engine*.jar"]          # names accepted by `rsp engines add` (globs)
    sha256 = ["…"]                           # known builds (others are recorded as unverified)
    where = "build of streamreasoning/CSPARQL-engine, or CityBench/Benchmark lib/"
    folder = false                           # a file; true: a folder (unset: a file if *.jar)

    [[dependency]]
    coords = "com.espertech:esper:4.9.0"
    sha256 = "…"

    [jvm]
    driver_class = "org.rspsdk.adapters.csparql.CsparqlDriver"
    flags = ["--add-opens", "java.base/java.lang=ALL-UNNAMED"]
    properties = {}
    read_only_root = true                     # docker: false if it writes outside its work dir

    [glue]
    sources = ["java/common", "java/engine"]  # folder(s) of .java files, relative to the manifest
    sdk = ["log4j"]                           # glue folders shipped in rsp_sdk/engine/glue/

    [npm]
    package_dir = "node"                      # package.json + package-lock.json, relative

    [cargo]                                   # a Rust driver crate (rsp_sdk.engine.cargo)
    crate_dir = "driver"                      # Cargo.toml + Cargo.lock, relative
    binary = "rsprs-driver"
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from pathlib import Path
from xml.sax.saxutils import escape

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rsp_sdk.engine.cargo import CargoSettings, binary_path, build_crate
from rsp_sdk.errors import InputError, RspError, validated
from rsp_sdk.runtime.bridge import bridge_classpath, cache_root, file_lock, run_maven


class MissingArtifact(RspError):
    """An engine file is not in the cache: says which, where upstream keeps it, and the command
    that adds it."""


class EngineInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str = ""
    upstream: str = ""
    source: str = ""
    notes: str = ""


class ArtifactSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(description="file or folder name in the cache")
    match: list[str] = Field(default_factory=list, description="globs accepted by `engines add`")
    sha256: list[str] = Field(default_factory=list, description="known builds")
    where: str = Field(default="", description="where upstream keeps it")
    required: bool = True
    folder: bool | None = Field(
        default=None,
        description="a folder (sources) or a file; unset: a file if `file` ends in .jar",
    )

    def is_folder(self) -> bool | None:
        """Whether ``add`` must be given a folder (True), a file (False), or either (None)."""
        return False if self.folder is None and self.file.endswith(".jar") else self.folder

    @field_validator("sha256", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    def accepts(self, filename: str) -> bool:
        return any(fnmatch.fnmatch(filename, pat) for pat in (self.match or [self.file]))


class Dependency(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    coords: str = Field(pattern=r"^[^:\s]+:[^:\s]+:[^:\s]+(:[^:\s]+)?$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @property
    def parts(self) -> tuple[str, str, str, str | None]:
        bits = self.coords.split(":")
        return bits[0], bits[1], bits[2], (bits[3] if len(bits) > 3 else None)

    @property
    def jar_name(self) -> str:
        _, artifact, version, classifier = self.parts
        return f"{artifact}-{version}" + (f"-{classifier}" if classifier else "") + ".jar"


class JvmSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    driver_class: str = ""
    flags: list[str] = Field(default_factory=list)
    properties: dict[str, str] = Field(default_factory=dict)
    read_only_root: bool = Field(
        default=True,
        description="the engine writes only to its work dir and /tmp, so its container's root "
        "filesystem can be read-only (docker runtime); false for engines that write elsewhere",
    )


SDK_GLUE = Path(__file__).resolve().parent / "glue"
"""Java glue shipped with the SDK, one folder per concern, for any adapter's ``[glue] sdk``."""


class GlueSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: list[str] = Field(
        min_length=1,
        description="folder(s) of Java sources, relative to the manifest (a string: one folder)",
    )
    sdk: list[str] = Field(
        default_factory=list,
        description="SDK glue folders to compile with them (names in rsp_sdk/engine/glue/)",
    )

    @field_validator("sources", "sdk", mode="before")
    @classmethod
    def _one_or_many(cls, v: object) -> object:
        return [v] if isinstance(v, str) else v

    @field_validator("sdk")
    @classmethod
    def _known_sdk_glue(cls, v: list[str]) -> list[str]:
        known = sorted(p.name for p in SDK_GLUE.iterdir() if p.is_dir())
        for name in v:
            if name not in known:
                raise ValueError(f"unknown SDK glue {name!r}; the SDK ships {', '.join(known)}")
        return v


class NpmSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    package_dir: str = Field(
        description="folder holding package.json and package-lock.json, relative to the manifest"
    )


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    engine: EngineInfo
    artifacts: list[ArtifactSpec] = Field(default_factory=list, alias="artifact")
    dependencies: list[Dependency] = Field(default_factory=list, alias="dependency")
    jvm: JvmSettings = Field(default_factory=JvmSettings)
    glue: GlueSettings | None = None
    npm: NpmSettings | None = None
    cargo: CargoSettings | None = None
    path: Path | None = Field(default=None, exclude=True, description="where it was read from")

    @property
    def name(self) -> str:
        return self.engine.name

    def glue_dirs(self) -> list[Path]:
        """The folders javac compiles together: the adapter's, then the SDK glue it names."""
        if self.glue is None:
            return []
        base = self.path.parent if self.path else Path.cwd()
        return [(base / s).resolve() for s in self.glue.sources] + [
            SDK_GLUE / name for name in self.glue.sdk
        ]

    def npm_dir(self) -> Path | None:
        if self.npm is None:
            return None
        base = self.path.parent if self.path else Path.cwd()
        return (base / self.npm.package_dir).resolve()

    def crate_dir(self) -> Path | None:
        if self.cargo is None:
            return None
        base = self.path.parent if self.path else Path.cwd()
        return (base / self.cargo.crate_dir).resolve()


def load_manifest(path: Path | str) -> Manifest:
    """Read and validate a manifest; bad TOML or fields raise InputError naming the file."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("manifest not found", path=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", path=path, expected="a TOML manifest") from exc
    return validated(
        Manifest,
        {**raw, "path": path.resolve()},
        path=path,
        what="manifest",
        expected="see rsp_sdk.engine.provision for the manifest format",
    )


def sha256_of(path: Path) -> str:
    """sha256 of a file, or of a folder (sorted relative paths and file contents)."""
    h = hashlib.sha256()
    if path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(str(f.relative_to(path)).encode() + b"\0")
            h.update(sha256_of(f).encode() + b"\0")
        return h.hexdigest()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class ProvisionCache:
    """The engines part of ``$RSP_CACHE``."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()

    def engine_dir(self, name: str) -> Path:
        return self.root / "engines" / name

    # ---- lock file -----------------------------------------------------------------------

    def lock(self, name: str) -> dict[str, dict[str, dict[str, object]]]:
        path = self.engine_dir(name) / "lock.json"
        if not path.exists():
            return {"artifacts": {}, "dependencies": {}}
        data: dict[str, dict[str, dict[str, object]]] = json.loads(path.read_text())
        return data

    def _write_lock(self, name: str, lock: dict[str, dict[str, dict[str, object]]]) -> None:
        from rsp_sdk.util.atomic import atomic_path

        with atomic_path(self.engine_dir(name) / "lock.json") as tmp:
            tmp.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")

    # ---- status ----------------------------------------------------------------------------

    def missing(self, manifest: Manifest) -> list[str]:
        """Human-readable list of what is not provisioned yet (empty: ready)."""
        out: list[str] = []
        deps = self.engine_dir(manifest.name) / "deps"
        gone = [d.coords for d in manifest.dependencies if not (deps / d.jar_name).exists()]
        if gone:
            out.append(
                f"{len(gone)} Maven Central dependencies (run: rsp engines fetch {manifest.name})"
            )
        arts = self.engine_dir(manifest.name) / "artifacts"
        for a in manifest.artifacts:
            if a.required and not (arts / a.file).exists():
                out.append(f"{a.file} (run: rsp engines add {manifest.name} PATH/{a.file})")
        if manifest.npm and not self.npm_modules(manifest).is_dir():
            out.append(f"npm packages (run: rsp engines fetch {manifest.name})")
        if manifest.cargo and not self.cargo_binary(manifest).is_file():
            out.append(f"the cargo-built driver (run: rsp engines fetch {manifest.name})")
        return out

    def require(self, manifest: Manifest) -> None:
        """Raise ``MissingArtifact`` for the first missing file, with how to get it."""
        deps = self.engine_dir(manifest.name) / "deps"
        gone = [d.coords for d in manifest.dependencies if not (deps / d.jar_name).exists()]
        if gone:
            raise MissingArtifact(
                f"engine {manifest.name}: {len(gone)} pinned Maven Central dependencies are not "
                f"in the cache {deps} (first: {gone[0]}); run: rsp engines fetch {manifest.name}"
            )
        arts = self.engine_dir(manifest.name) / "artifacts"
        for a in manifest.artifacts:
            if a.required and not (arts / a.file).exists():
                where = f" Upstream keeps it at: {a.where}." if a.where else ""
                up = (
                    f" Engine source: {manifest.engine.upstream}."
                    if manifest.engine.upstream
                    else ""
                )
                raise MissingArtifact(
                    f"engine {manifest.name}: artifact {a.file} is missing from {arts}.{where}{up}"
                    f" Add it with: rsp engines add {manifest.name} /path/to/{a.file}"
                )
        if manifest.npm and not self.npm_modules(manifest).is_dir():
            raise MissingArtifact(
                f"engine {manifest.name}: the npm packages pinned by "
                f"{manifest.npm_dir()}/package-lock.json are not installed in "
                f"{self.npm_modules(manifest)}; run: rsp engines fetch {manifest.name}"
            )
        if manifest.cargo and not self.cargo_binary(manifest).is_file():
            raise MissingArtifact(
                f"engine {manifest.name}: the driver built from {manifest.crate_dir()} is not in "
                f"{self.cargo_binary(manifest).parent}; run: rsp engines fetch {manifest.name} "
                "(cargo build --release --locked: minutes, once)"
            )

    # ---- fetch (Maven Central) -------------------------------------------------------------

    def fetch(self, manifest: Manifest) -> list[Path]:
        """Resolve the pinned dependencies with Maven, verify each sha256, store them."""
        name = manifest.name
        deps_dir = self.engine_dir(name) / "deps"
        with file_lock(self.engine_dir(name) / ".lock"):
            todo = [d for d in manifest.dependencies if not (deps_dir / d.jar_name).exists()]
            if todo:
                self._resolve(name, todo, deps_dir)
            lock = self.lock(name)
            for d in manifest.dependencies:
                lock["dependencies"][d.coords] = {"file": d.jar_name, "sha256": d.sha256}
            self._write_lock(name, lock)
        paths = [deps_dir / d.jar_name for d in manifest.dependencies]
        if manifest.npm:
            paths.append(self._npm_ci(manifest))
        if manifest.cargo:
            paths.append(self._cargo_build(manifest))
        if manifest.glue and not self.missing(manifest):
            self.compile_glue(manifest)
        return paths

    # ---- fetch (npm registry) --------------------------------------------------------------

    def npm_modules(self, manifest: Manifest) -> Path:
        """The ``node_modules`` folder installed from the manifest's lock file (may not exist)."""
        src = manifest.npm_dir()
        if src is None:
            raise RspError(f"engine {manifest.name} has no [npm] section in its manifest")
        digest = sha256_of(src / "package-lock.json")[:16]
        return self.engine_dir(manifest.name) / "npm" / digest / "node_modules"

    def _npm_ci(self, manifest: Manifest) -> Path:
        """``npm ci`` the adapter's lock file into the cache (once per lock content).

        ``npm ci`` installs exactly the lock's versions and checks each package's integrity
        hash; ``--ignore-scripts`` keeps install scripts of the engine's dependencies from
        running on the user's machine.
        """
        src = manifest.npm_dir()
        assert src is not None
        target = self.npm_modules(manifest)
        if target.is_dir():
            return target
        for needed in ("package.json", "package-lock.json"):
            if not (src / needed).is_file():
                raise RspError(f"engine {manifest.name}: {src / needed} is missing")
        npm = shutil.which("npm")
        if npm is None:
            raise RspError(
                f"npm is needed to provision {manifest.name}: install Node.js 18+ with npm "
                "(Debian: apt-get install nodejs npm)"
            )
        home = target.parent
        home.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(self.engine_dir(manifest.name) / ".lock"):
            if target.is_dir():
                return target
            with tempfile.TemporaryDirectory(prefix=".npm-", dir=home.parent) as tmp:
                work = Path(tmp) / "pkg"
                work.mkdir()
                for name in ("package.json", "package-lock.json"):
                    shutil.copy2(src / name, work / name)
                proc = subprocess.run(
                    [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                    cwd=work,
                    capture_output=True,
                    text=True,
                )
                if proc.returncode != 0:
                    raise RspError(
                        f"engine {manifest.name}: npm ci failed in {work}:\n"
                        f"{(proc.stderr or proc.stdout)[-4000:]}"
                    )
                if home.exists():
                    shutil.rmtree(home)
                os.replace(work, home)
            lock = self.lock(manifest.name)
            lock.setdefault("npm", {})["package-lock.json"] = {
                "sha256": sha256_of(src / "package-lock.json"),
                "node_modules": str(target),
                "installed": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            self._write_lock(manifest.name, lock)
        return target

    # ---- fetch (crates.io, built by cargo) --------------------------------------------------

    def cargo_binary(self, manifest: Manifest) -> Path:
        """The driver binary built from the manifest's crate (may not exist)."""
        crate = manifest.crate_dir()
        if crate is None or manifest.cargo is None:
            raise RspError(f"engine {manifest.name} has no [cargo] section in its manifest")
        return binary_path(self.engine_dir(manifest.name), crate, manifest.cargo)

    def _cargo_build(self, manifest: Manifest) -> Path:
        """``cargo build --release --locked`` of the adapter's crate, once per source digest."""
        crate = manifest.crate_dir()
        assert crate is not None and manifest.cargo is not None
        binary = self.cargo_binary(manifest)
        if binary.is_file():
            return binary
        with file_lock(self.engine_dir(manifest.name) / ".lock"):
            built = build_crate(
                manifest.name, self.engine_dir(manifest.name), crate, manifest.cargo
            )
            lock = self.lock(manifest.name)
            lock.setdefault("cargo", {})["Cargo.lock"] = {
                "sha256": sha256_of(crate / "Cargo.lock"),
                "binary": str(built),
                "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            self._write_lock(manifest.name, lock)
        return built

    def _resolve(self, name: str, deps: list[Dependency], deps_dir: Path) -> None:
        items = []
        for d in deps:
            group, artifact, version, classifier = d.parts
            items.append(
                "<dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}"
                "</version>{}<exclusions><exclusion><groupId>*</groupId><artifactId>*"
                "</artifactId></exclusion></exclusions></dependency>".format(
                    escape(group),
                    escape(artifact),
                    escape(version),
                    f"<classifier>{escape(classifier)}</classifier>" if classifier else "",
                )
            )
        pom = (
            '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            f"<groupId>org.rspsdk.provision</groupId><artifactId>{escape(name)}</artifactId>"
            "<version>0</version><packaging>pom</packaging>"
            f"<dependencies>{''.join(items)}</dependencies></project>"
        )
        deps_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=deps_dir.parent) as tmp:
            project = Path(tmp)
            (project / "pom.xml").write_text(pom)
            out = project / "out"
            run_maven(
                project,
                ["org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"],
                props={"outputDirectory": str(out), "excludeTransitive": "true"},
            )
            for d in deps:
                got_path = out / d.jar_name
                if not got_path.exists():
                    raise RspError(f"maven did not deliver {d.coords} (expected {d.jar_name})")
                got = sha256_of(got_path)
                if got != d.sha256:
                    raise RspError(
                        f"sha256 mismatch for {d.coords}: the manifest pins {d.sha256}, Maven "
                        f"delivered {got}; nothing was stored"
                    )
            for d in deps:
                os.replace(out / d.jar_name, deps_dir / d.jar_name)

    # ---- add (user-supplied engine artifacts) -------------------------------------------------

    def add(self, manifest: Manifest, paths: list[Path]) -> list[dict[str, object]]:
        """Copy user-supplied engine files into the cache, recording their sha256.

        Each path goes to the first manifest artifact whose name patterns match it. A sha256
        the manifest does not know is accepted but recorded as unverified (the result says so).
        When the adapter's glue then does not compile against the files — a jar of another
        engine or of another version — the cache is put back as it was (a working engine stays
        working) and the files are refused.
        """
        plan = self._plan_add(manifest, paths)
        name = manifest.name
        arts = self.engine_dir(name) / "artifacts"
        arts.mkdir(parents=True, exist_ok=True)
        with file_lock(self.engine_dir(name) / ".lock"):
            before = self.lock(name)
            lock = json.loads(json.dumps(before))
            replaced: list[tuple[Path, Path | None]] = []
            records: list[dict[str, object]] = []
            try:
                for src, spec in plan:
                    records.append(self._install_artifact(src, spec, arts, replaced))
                    lock["artifacts"][spec.file] = records[-1]
                self._write_lock(name, lock)
                if manifest.glue and not self.missing(manifest):
                    self.compile_glue(manifest)
            except BaseException as exc:
                _restore(replaced)
                self._write_lock(name, before)
                if isinstance(exc, RspError) and not all(r["verified"] for r in records):
                    raise _glue_refusal(manifest, plan, exc) from exc
                raise
            for _, old in replaced:
                if old is not None:
                    _remove(old)
        return records

    def _plan_add(self, manifest: Manifest, paths: list[Path]) -> list[tuple[Path, ArtifactSpec]]:
        """Which artifact each path is, or an InputError naming the path and what is accepted."""
        plan: list[tuple[Path, ArtifactSpec]] = []
        for p in map(Path, paths):
            if not p.exists():
                raise InputError("no such file or folder", path=p)
            spec = next((a for a in manifest.artifacts if a.accepts(p.name)), None)
            if spec is None and len(paths) == 1 and len(manifest.artifacts) == 1:
                spec = manifest.artifacts[0]
            if spec is None:
                expected = (
                    ", ".join(
                        f"{a.file} (matching {' or '.join(a.match or [a.file])})"
                        for a in manifest.artifacts
                    )
                    or "nothing: this engine needs no user-supplied files"
                )
                raise InputError(
                    f"engine {manifest.name} has no artifact matching {p.name!r}",
                    path=p,
                    expected=expected,
                )
            folder = spec.is_folder()
            if folder is not None and p.is_dir() != folder:
                kinds = ("file", "folder")
                raise InputError(
                    f"engine {manifest.name}: {spec.file} is a {kinds[folder]}, this is a "
                    f"{kinds[p.is_dir()]}",
                    path=p,
                    expected=spec.where or spec.file,
                )
            plan.append((p, spec))
        return plan

    @staticmethod
    def _install_artifact(
        src: Path, spec: ArtifactSpec, arts: Path, replaced: list[tuple[Path, Path | None]]
    ) -> dict[str, object]:
        """Copy one file or folder in; a previous one is kept aside in ``replaced``."""
        digest = sha256_of(src)
        dest = arts / spec.file
        tmp = arts / f".{spec.file}.{os.getpid()}.tmp"
        _remove(tmp)  # left by a run that was killed while copying
        try:
            if src.is_dir():
                shutil.copytree(src, tmp)
            else:
                shutil.copy2(src, tmp)
        except BaseException:
            _remove(tmp)
            raise
        old = None
        if dest.exists():
            old = arts / f".{spec.file}.{os.getpid()}.old"
            os.replace(dest, old)
        replaced.append((dest, old))
        os.replace(tmp, dest)
        return {
            "file": spec.file,
            "sha256": digest,
            "verified": digest in spec.sha256,
            "known_sha256": list(spec.sha256),
            "source_path": str(src.resolve()),
            "added": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }

    # ---- classpath and glue ----------------------------------------------------------------

    def engine_classpath(self, manifest: Manifest) -> list[Path]:
        """Dependencies and engine artifacts (jars; a folder contributes its jars and itself)."""
        self.require(manifest)
        base = self.engine_dir(manifest.name)
        cp = [base / "deps" / d.jar_name for d in manifest.dependencies]
        for a in manifest.artifacts:
            p = base / "artifacts" / a.file
            if not p.exists():
                continue
            if p.is_dir():
                cp.append(p)
                cp.extend(sorted(p.rglob("*.jar")))
            else:
                cp.append(p)
        return cp

    def classpath(self, manifest: Manifest) -> list[Path]:
        """Everything the driver needs except the bridge (the runtime adds it): engine files and
        the compiled glue. Raises ``MissingArtifact`` when something is not provisioned."""
        cp = self.engine_classpath(manifest)
        if manifest.glue:
            cp.append(self.compile_glue(manifest))
        return cp

    def compile_glue(self, manifest: Manifest) -> Path:
        """javac the adapter's glue against bridge + engine jars into the cache (once per hash)."""
        folders = manifest.glue_dirs()
        h = hashlib.sha256()
        sources: list[Path] = []
        for index, folder in enumerate(folders):
            found = sorted(folder.rglob("*.java"))
            if not found:
                raise RspError(f"engine {manifest.name}: no Java sources in glue folder {folder}")
            for f in found:
                rel = f"{index}/{f.relative_to(folder)}"
                h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
            sources.extend(found)
        src = ", ".join(str(f) for f in folders)
        cp = [*bridge_classpath(), *self.engine_classpath(manifest)]
        for p in cp:
            h.update(str(p).encode() + b"\0")
            if p.is_file():
                h.update(str(p.stat().st_size).encode() + str(p.stat().st_mtime_ns).encode())
        out = self.engine_dir(manifest.name) / "glue" / h.hexdigest()[:16]
        if out.exists():
            return out
        javac = shutil.which("javac")
        if javac is None:
            raise RspError("javac is needed to compile engine glue: install a JDK (17+)")
        out.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(out.parent / ".lock"):
            if out.exists():
                return out
            with tempfile.TemporaryDirectory(prefix=".glue-", dir=out.parent) as tmp:
                classes = Path(tmp) / "classes"
                proc = subprocess.run(
                    [
                        javac,
                        "-nowarn",
                        "-encoding",
                        "UTF-8",
                        "-d",
                        str(classes),
                        "-cp",
                        os.pathsep.join(str(p) for p in cp),
                        *[str(s) for s in sources],
                    ],
                    capture_output=True,
                    text=True,
                )
                if proc.returncode != 0:
                    raise RspError(
                        f"engine {manifest.name}: compiling the glue in {src} failed:\n"
                        f"{proc.stderr[-4000:]}"
                    )
                os.replace(classes, out)
        return out


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _restore(replaced: list[tuple[Path, Path | None]]) -> None:
    """Undo ``add``: drop the new files, put the ones they replaced back."""
    for dest, old in reversed(replaced):
        _remove(dest)
        if old is not None:
            os.replace(old, dest)


def _glue_refusal(
    manifest: Manifest, plan: list[tuple[Path, ArtifactSpec]], exc: RspError
) -> InputError:
    """The user's files are not what the adapter drives: one message, javac's first error."""
    errors = [ln.strip() for ln in str(exc).splitlines() if ": error: " in ln]
    first = re.sub(r"^.*?([^/\s]+\.java:\d+: error: )", r"\1", errors[0]) if errors else str(exc)
    what = f"{manifest.name} {manifest.engine.version}".strip()
    return InputError(
        f"not a build of {what} the adapter can drive: its Java glue does not compile against "
        f"it ({first}); the cache is unchanged",
        path=", ".join(str(p) for p, _ in plan),
        expected="; ".join(dict.fromkeys(spec.where or spec.file for _, spec in plan)),
    )
