"""What an adapter's own code is, as a hash: part of every cell key.

A cell's key held the engine's version and its provisioned files' hashes, but not the adapter
that drives it: fixing a driver left every finished cell of that engine in place, so a rerun
kept the broken driver's numbers. C-SPARQL 0.9's driver read result tuples with
``RDFTuple.get(i)``, which that jar answers with null past index 2, and CSRBench Q6, CityBench
Q4/Q5 and YABench's join lost all but three variables in cells a rerun would have skipped. The
hash covers the adapter's package folder (Python, its Java/JavaScript/Rust driver sources, its
manifests) and the SDK glue folders its manifest compiles in; bytecode caches stay out.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Iterable
from pathlib import Path

from rsp_sdk.engine.adapter import Adapter

# build and cache output inside a package folder: not the adapter's code
SKIPPED = frozenset({"__pycache__", "node_modules", "target", ".mypy_cache", ".pytest_cache"})


def code_hash(folders: Iterable[Path]) -> str:
    """SHA-256 (16 hex digits) of every file under ``folders``: relative path and bytes."""
    h = hashlib.sha256()
    for index, folder in enumerate(folders):
        for f in sorted(folder.rglob("*")):
            rel = f.relative_to(folder)
            if not f.is_file() or SKIPPED.intersection(rel.parts) or f.suffix == ".pyc":
                continue
            h.update(f"{index}/{rel.as_posix()}".encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def adapter_code(adapter: Adapter) -> str:
    """The hash of ``adapter``'s package folder and its manifest's glue folders ("" when the
    adapter's class has no source file, e.g. one defined interactively)."""
    try:
        source = Path(inspect.getfile(type(adapter)))
    except (TypeError, OSError):
        return ""
    folders = [source.parent]
    manifest_of = getattr(adapter, "manifest", None)
    manifest = manifest_of() if callable(manifest_of) else None
    if manifest is not None:
        folders += [d for d in manifest.glue_dirs() if not d.is_relative_to(source.parent)]
    return code_hash(f for f in folders if f.is_dir())
