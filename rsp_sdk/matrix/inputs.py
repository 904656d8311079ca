"""The streams of a spec, prepared once as ``RESULTS/inputs/<sha256>.parquet``.

A cell's key holds the sha256 of its stream file, not the spec's description of it, so an
imported folder that changes, or a generator whose output changes, gives new cells instead of
silently mixing results of two different inputs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict

from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.spec import MatrixSpec, StreamAxis
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.streams.generators.assemble import Generated
from rsp_sdk.streams.io import (
    read_meta,
    read_stream,
    sort_by_time,
    write_static,
    write_stream,
)
from rsp_sdk.util.atomic import atomic_path


class PreparedStream(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    sha256: str
    static: list[Path] = []
    static_sha256: list[str] = []  # what a cell's key holds: the content, not where it lives
    # the spec's warm-up, pushed first (``rsp_sdk.matrix.warmup``)
    warmup: Path | None = None
    warmup_sha256: str | None = None


def _keep(built: Path, inputs: Path) -> str:
    """Move a built file to ``inputs/<sha256>.parquet`` (kept if already there); its sha."""
    sha = sha256_of(built)
    final = inputs / f"{sha}.parquet"
    if not final.exists():
        with atomic_path(final) as dst:
            shutil.move(built, dst)
    return sha


def expand(value: str, base: Path) -> Path:
    """A path of the spec: ``${RSP_SHARED_DATA}`` (default ../shared/data) and ``~`` expanded,
    relative paths taken from the spec's folder."""
    shared = os.environ.get("RSP_SHARED_DATA") or str(
        Path(__file__).resolve().parents[3] / "shared" / "data"
    )
    text = os.path.expanduser(value.replace("${RSP_SHARED_DATA}", shared))
    path = Path(os.path.expandvars(text))
    return path if path.is_absolute() else (base / path)


def _build(axis: StreamAxis, base: Path, target: Path) -> pa.Table | None:
    """Write the axis's stream to ``target``; returns the static data a generator made with
    it (water: sensors; social: profiles and friendships), None for imported streams."""
    if axis.source is not None:
        table, meta = _imported(axis, base)
        if axis.source.replay_interval_ms is not None:
            table = _replay(table, axis.source.replay_interval_ms)
            extra = {"replay_interval_ms": axis.source.replay_interval_ms}
            meta = meta.model_copy(update={"parameters": {**meta.parameters, **extra}})
        if axis.source.slice_ms is not None:
            table = _slice(table, axis.source.slice_ms)
            meta = meta.model_copy(
                update={"parameters": {**meta.parameters, "slice_ms": axis.source.slice_ms}}
            )
        write_stream(table, target, meta)
        return None
    assert axis.generator is not None
    name, params = axis.generator.name, axis.generator.params
    if name == "yabench":
        from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

        table, meta = generate_yabench(YabenchParams.model_validate(params))
        write_stream(table, target, meta)
        return None
    if name not in GENERATORS_WITH_STATIC:
        raise InputError(
            f"stream {axis.name}: generator {name!r} is not wired into the matrix",
            expected=", ".join(["yabench", *GENERATORS_WITH_STATIC]),
        )
    gen = GENERATORS_WITH_STATIC[name](params)
    write_stream(gen.stream, target, gen.meta)
    return gen.static


def _water(params: dict[str, Any]) -> Generated:
    from rsp_sdk.streams.generators.water import generate_water
    from rsp_sdk.streams.generators.water_params import WaterParams

    return generate_water(WaterParams.model_validate(params))


def _social(params: dict[str, Any]) -> Generated:
    from rsp_sdk.streams.generators.social import generate_social
    from rsp_sdk.streams.generators.social_params import SocialParams

    return generate_social(SocialParams.model_validate(params))


GENERATORS_WITH_STATIC: dict[str, Callable[[dict[str, Any]], Generated]] = {
    "water": _water,
    "social": _social,
}


def _imported(axis: StreamAxis, base: Path) -> tuple[pa.Table, StreamMeta]:
    assert axis.source is not None
    src = expand(axis.source.path, base)
    fmt = axis.source.format
    if fmt == "parquet":
        if not src.is_file():
            raise InputError(f"stream {axis.name}: file not found", path=src)
        return read_stream(src), read_meta(src) or StreamMeta(producer="import:parquet")
    if fmt == "trig":  # timestamped graphs, rsp:inStream per graph
        from rsp_sdk.streams.importers import StreamFormat, import_any

        return import_any(src, StreamFormat.TRIG, stream=axis.source.stream)
    if fmt == "citybench":
        return _citybench(axis, src, base)
    if fmt != "csrbench":
        raise InputError(
            f"stream {axis.name}: unknown import format {fmt!r}",
            expected="csrbench, citybench, trig or parquet",
        )
    if not src.is_dir():
        raise InputError(f"stream {axis.name}: the CSRBench data folder is missing", path=src)
    from rsp_sdk.streams.importers.csrbench import read_csrbench_folder

    interval = axis.source.interval_ms
    table = read_csrbench_folder(src, interval_ms=interval, stream=axis.source.stream)
    meta = StreamMeta(
        producer="import:csrbench-ttl",
        time_unit_ms=interval,
        parameters={"source": src.name, "interval_ms": str(interval)},
    )
    return table, meta


def _citybench(axis: StreamAxis, src: Path, base: Path) -> tuple[pa.Table, StreamMeta]:
    """CityBench sensor CSVs (``rsp stream import -f citybench``), the spec's files only."""
    from rsp_sdk.streams.importers import StreamFormat, import_any

    assert axis.source is not None
    files: list[Path] = []
    for pattern in axis.source.files:
        hits = sorted(src.glob(pattern))
        if not hits:
            raise InputError(f"stream {axis.name}: no CityBench file matches {pattern!r}", path=src)
        files += hits
    dataset = expand(axis.source.dataset, base) if axis.source.dataset else None
    return import_any(
        files or [src], StreamFormat.CITYBENCH, interval_ms=axis.source.interval_ms, dataset=dataset
    )


def _replay(table: pa.Table, interval_ms: int) -> pa.Table:
    """Every stream re-timed as CityBench replays it: its i-th distinct timestamp (from 0)
    becomes i × interval_ms, so each stream yields one row per interval from time 0."""
    parts = []
    for name in pc.unique(table.column("stream")).to_pylist():
        part = table.filter(pc.equal(table.column("stream"), name))
        t = part.column("t_app_ms").to_numpy()
        _, rank = np.unique(t, return_inverse=True)
        retimed = pa.array(rank.astype(np.int64) * interval_ms, pa.int64())
        parts.append(part.set_column(part.schema.get_field_index("t_app_ms"), "t_app_ms", retimed))
    return sort_by_time(pa.concat_tables(parts))


def _slice(table: pa.Table, slice_ms: int) -> pa.Table:
    """The rows within ``slice_ms`` of the latest stream's first timestamp (streams recorded
    side by side start at different times; before the last start some have no data yet)."""
    first = table.group_by("stream").aggregate([("t_app_ms", "min")])
    start = int(pc.max(first.column("t_app_ms_min")).as_py())
    t = table.column("t_app_ms")
    keep = pc.and_(pc.greater_equal(t, start), pc.less(t, start + slice_ms))
    return table.filter(keep)


def prepare(
    spec: MatrixSpec, spec_path: Path, inputs: Path, *, plan_only: bool = False
) -> dict[str, PreparedStream]:
    """Every stream of the spec under ``inputs/`` (content-addressed; reused when present).

    A generated stream whose recipe (generator, parameters, generator code) was built before
    is not generated again when its file is already in ``inputs/``; with ``plan_only`` (``rsp
    matrix plan``: only the keys matter) the recorded sha256 is enough, file or not."""
    base = spec_path.resolve().parent
    out: dict[str, PreparedStream] = {}
    inputs.mkdir(parents=True, exist_ok=True)
    for axis in spec.streams:
        recipe = recipe_key(axis)
        known = _known(recipe, inputs, plan_only) if recipe else None
        if known is not None:
            sha, made = known
        else:
            sha, made = _prepare_one(axis, base, inputs)
            if recipe:
                _remember(recipe, sha, made)
        static = [expand(s, base) for s in axis.static]
        for s in static:
            if not s.exists():
                raise InputError(f"stream {axis.name}: static data not found", path=s)
        static_sha = [sha256_of(s) if s.is_file() else str(s) for s in static]
        if made is not None:
            static.append(inputs / f"{made}.parquet")
            static_sha.append(made)
        out[axis.name] = PreparedStream(
            name=axis.name,
            path=inputs / f"{sha}.parquet",
            sha256=sha,
            static=static,
            static_sha256=static_sha,
        )
    return out


def _prepare_one(axis: StreamAxis, base: Path, inputs: Path) -> tuple[str, str | None]:
    """Build one stream into ``inputs/``: (its sha256, the sha256 of the static data its
    generator made, if any)."""
    with tempfile.TemporaryDirectory(dir=inputs, prefix=".prepare-") as tmp:
        built = Path(tmp) / "stream.parquet"
        generated = _build(axis, base, built)
        sha = _keep(built, inputs)
        if generated is None or not generated.num_rows:
            return sha, None
        made = Path(tmp) / "static.parquet"
        write_static(generated, made)
        return sha, _keep(made, inputs)


def recipe_key(axis: StreamAxis) -> str | None:
    """What a generated stream is made of — generator, parameters, the code of
    ``rsp_sdk.streams`` (generators and the Parquet writer), numpy and pyarrow — hashed; None
    for an import, whose content only hashing its files can tell."""
    if axis.generator is None:
        return None
    doc = {
        "generator": axis.generator.name,
        "params": axis.generator.params,
        "code": _code(),
        "libs": [np.__version__, pa.__version__],  # random draws and the Parquet writer
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def _code() -> str:
    root = Path(__file__).resolve().parents[1] / "streams"
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _recipe_file(recipe: str) -> Path:
    from rsp_sdk.runtime.bridge import cache_root

    return cache_root() / "matrix" / "streams" / f"{recipe}.json"


def _known(recipe: str, inputs: Path, plan_only: bool) -> tuple[str, str | None] | None:
    """(stream sha256, generated static sha256) recorded for this recipe, when usable: the
    files are in ``inputs/`` (or only keys are needed)."""
    try:
        doc = json.loads(_recipe_file(recipe).read_text(encoding="utf-8"))
        sha, made = str(doc["sha256"]), doc.get("static_sha256")
    except (OSError, ValueError, KeyError, TypeError):
        return None  # never recorded, or unreadable: build it
    wanted = [sha] + ([made] if made else [])
    if not plan_only and not all((inputs / f"{w}.parquet").is_file() for w in wanted):
        return None
    return sha, made


def _remember(recipe: str, sha: str, made: str | None) -> None:
    path = _recipe_file(recipe)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps({"sha256": sha, "static_sha256": made}) + "\n")
    except OSError:
        pass  # a read-only cache only costs the next plan a generation
