"""The streams of a spec, prepared once as ``RESULTS/inputs/<sha256>.parquet``.

A cell's key holds the sha256 of its stream file, not the spec's description of it, so an
imported folder that changes, or a generator whose output changes, gives new cells instead of
silently mixing results of two different inputs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.spec import MatrixSpec, StreamAxis
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.streams.io import write_stream
from rsp_sdk.util.atomic import atomic_path


class PreparedStream(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    sha256: str
    static: list[Path] = []


def expand(value: str, base: Path) -> Path:
    """A path of the spec: ``${RSP_SHARED_DATA}`` (default ../shared/data) and ``~`` expanded,
    relative paths taken from the spec's folder."""
    shared = os.environ.get("RSP_SHARED_DATA") or str(
        Path(__file__).resolve().parents[3] / "shared" / "data"
    )
    text = os.path.expanduser(value.replace("${RSP_SHARED_DATA}", shared))
    path = Path(os.path.expandvars(text))
    return path if path.is_absolute() else (base / path)


def _build(axis: StreamAxis, base: Path, target: Path) -> None:
    if axis.source is not None:
        src = expand(axis.source.path, base)
        if axis.source.format == "parquet":
            if not src.is_file():
                raise InputError(f"stream {axis.name}: file not found", path=src)
            shutil.copyfile(src, target)
            return
        if axis.source.format == "trig":  # timestamped graphs, rsp:inStream per graph
            from rsp_sdk.streams.importers import StreamFormat, import_any

            table, meta = import_any(src, StreamFormat.TRIG, stream=axis.source.stream)
            write_stream(table, target, meta)
            return
        if axis.source.format != "csrbench":
            raise InputError(
                f"stream {axis.name}: unknown import format {axis.source.format!r}",
                expected="csrbench, trig or parquet",
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
        write_stream(table, target, meta)
        return
    assert axis.generator is not None
    if axis.generator.name != "yabench":
        raise InputError(
            f"stream {axis.name}: generator {axis.generator.name!r} is not wired into the "
            "matrix yet",
            expected="yabench",
        )
    from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench

    table, meta = generate_yabench(YabenchParams.model_validate(axis.generator.params))
    write_stream(table, target, meta)


def prepare(spec: MatrixSpec, spec_path: Path, inputs: Path) -> dict[str, PreparedStream]:
    """Every stream of the spec under ``inputs/`` (content-addressed; reused when present)."""
    base = spec_path.resolve().parent
    out: dict[str, PreparedStream] = {}
    inputs.mkdir(parents=True, exist_ok=True)
    for axis in spec.streams:
        with tempfile.TemporaryDirectory(dir=inputs, prefix=".prepare-") as tmp:
            built = Path(tmp) / "stream.parquet"
            _build(axis, base, built)
            sha = sha256_of(built)
            final = inputs / f"{sha}.parquet"
            if not final.exists():
                with atomic_path(final) as dst:
                    shutil.move(built, dst)
        static = [expand(s, base) for s in axis.static]
        for s in static:
            if not s.exists():
                raise InputError(f"stream {axis.name}: static data not found", path=s)
        out[axis.name] = PreparedStream(name=axis.name, path=final, sha256=sha, static=static)
    return out
