"""The adapter protocol: everything the SDK needs to know about one engine.

An adapter *describes* an engine — its name and version, its SECRET ``profile``, its
``capabilities``, how to ``render`` a ``QuerySpec`` into the engine's dialect, and the
``driver`` (a ``JvmDriver`` class + classpath from the provisioning cache, or a JSON-lines
``ProcessDriver`` program) — and never drives it: ``EngineSession`` does that once for all
adapters, over whichever runtime the run picked. Third parties implement ``Adapter`` (usually by
subclassing ``BaseAdapter``) and register it under the ``rsp_sdk.adapters`` entry-point group;
the conformance kit (``rsp_sdk.testing``) proves it honours the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from rsp_sdk.engine.capabilities import Capabilities
from rsp_sdk.model.profile import Profile
from rsp_sdk.model.query import QuerySpec
from rsp_sdk.runtime.base import DriverSpec, Runtime

if TYPE_CHECKING:
    from rsp_sdk.engine.provision import Manifest, ProvisionCache
    from rsp_sdk.engine.session import EngineSession, Timeouts

DriverKind = Literal["jvm", "process"]


@runtime_checkable
class Adapter(Protocol):
    name: str
    version: str
    profile: Profile
    capabilities: Capabilities
    driver_kind: DriverKind

    def render(self, query: QuerySpec) -> str:
        """The query in the engine's own dialect (RSP-QL → C-SPARQL, CQELS-QL, …)."""
        ...

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        """The driver to launch, built from the provisioning cache (``MissingArtifact`` when
        the engine's files are not there yet)."""
        ...

    def missing_artifacts(self, cache: ProvisionCache | None = None) -> list[str]:
        """What still has to be provisioned (empty: ready to run)."""
        ...

    def open(
        self,
        runtime: Runtime,
        workdir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        timeouts: Timeouts | None = None,
        log_dir: Path | None = None,
        cache: ProvisionCache | None = None,
    ) -> EngineSession:
        """Start the engine on ``runtime``: an open ``EngineSession`` (a context manager)."""
        ...


class BaseAdapter:
    """Convenience base: set the class attributes, implement ``render`` and ``driver``.

    Class attributes: ``name`` (the engine's name on the command line and in the entry point),
    ``version``, ``profile`` (its SECRET semantics: the oracle judges its runs by it; check it
    with ``rsp engines probe``), ``capabilities`` (queries needing anything else are refused
    before the engine starts), ``driver_kind`` (``"process"`` for a JSON-lines program on the
    ``subprocess`` runtime, ``"jvm"`` for an ``EngineDriver`` class on jpype/py4j/docker) and,
    for engines with files to provision, ``manifest_path``.

    ``render`` turns a ``QuerySpec`` into the engine's dialect (``rsp_sdk.query.structure`` and
    ``rsp_sdk.query.sparqltext`` help); raise ``ValueError`` naming what it cannot express.
    ``driver`` returns a ``rsp_sdk.runtime.ProcessDriver`` for a program; with a manifest (TOML
    next to the adapter, see ``rsp_sdk.engine.provision``) a JVM adapter keeps the default,
    ``self.jvm_driver(cache)``: classpath, JVM flags, system properties and driver class all
    come from the manifest and the cache. docs/tutorial-adapter.md walks through one adapter.
    """

    name: str
    version: str
    profile: Profile
    capabilities: Capabilities
    driver_kind: DriverKind
    manifest_path: Path | None = None
    # a "process" driver whose ProcessDriver declares an image (ProcessImage): the docker
    # runtime can then carry it too (JVM drivers always can)
    process_image: bool = False
    # engine_config keys the engine cannot start without, each with what it is: a run or
    # matrix cell lacking one is refused before any engine starts (see ``config_problem``)
    required_config: ClassVar[Mapping[str, str]] = {}

    def check_config(self, config: Mapping[str, Any]) -> str | None:
        """Why the engine cannot run with ``config`` (None: it can), decided without starting
        it. The default checks ``required_config``; override to check more (and call super)."""
        missing = [k for k in self.required_config if config.get(k) in (None, "")]
        if not missing:
            return None
        wanted = "; ".join(f"{k}: {self.required_config[k]}" for k in missing)
        return f"{self.name} needs engine_config {', '.join(missing)} ({wanted})"

    def render(self, query: QuerySpec) -> str:
        raise NotImplementedError(f"{type(self).__name__} does not render QuerySpecs")

    def driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        return self.jvm_driver(cache)

    def manifest(self) -> Manifest | None:
        from rsp_sdk.engine.provision import load_manifest

        return load_manifest(self.manifest_path) if self.manifest_path else None

    def jvm_driver(self, cache: ProvisionCache | None = None) -> DriverSpec:
        from rsp_sdk.engine.provision import ProvisionCache
        from rsp_sdk.runtime.base import JvmDriver

        manifest = self.manifest()
        if manifest is None:
            raise NotImplementedError(f"{type(self).__name__} has no manifest: override driver()")
        cache = cache or ProvisionCache()
        return JvmDriver(
            driver_class=manifest.jvm.driver_class,
            classpath=cache.classpath(manifest),
            jvm_flags=list(manifest.jvm.flags),
            system_properties=dict(manifest.jvm.properties),
            engine=manifest.engine.name or self.name,
            engine_version=manifest.engine.version or self.version,
            read_only_root=manifest.jvm.read_only_root,
        )

    def missing_artifacts(self, cache: ProvisionCache | None = None) -> list[str]:
        from rsp_sdk.engine.provision import ProvisionCache

        manifest = self.manifest()
        if manifest is None:
            return []
        return (cache or ProvisionCache()).missing(manifest)

    def open(
        self,
        runtime: Runtime,
        workdir: Path,
        *,
        config: Mapping[str, Any] | None = None,
        timeouts: Timeouts | None = None,
        log_dir: Path | None = None,
        cache: ProvisionCache | None = None,
    ) -> EngineSession:
        from rsp_sdk.engine.session import EngineSession

        return EngineSession.start(
            self, runtime, workdir, config=config, timeouts=timeouts, log_dir=log_dir, cache=cache
        )


def config_problem(adapter: Adapter, config: Mapping[str, Any]) -> str | None:
    """Why ``adapter``'s engine cannot run with this engine config, or None. ``check_config`` is
    optional in the protocol (adapters written before it stay valid): without it, None."""
    check = getattr(adapter, "check_config", None)
    return check(config) if callable(check) else None
