"""A spec's warm-up stream (``[feeding] warmup``): pushed before each cell's stream.

A warm-up lets a JVM compile its hot paths and an engine fill its caches before the part that
is measured, so that rate, time per triple and latency describe the steady state. What it
changes, and why:

* the run pushes it first, at ``warmup_rate`` (or its own pace), recorded as the ``warmup``
  phase of ``pushed.parquet``; the feeding numbers count the measured phase only;
* the engine saw the warm-up *and* the stream, so that is what its output is judged against:
  the oracle gets their concatenation (``rsp_sdk.matrix.given``). Judging against the stream
  alone would call every answer over warm-up data wrong;
* the window latencies and a Rate_max probe's STEP rule leave out the warm-up's windows, those
  closing at or before the stream's first triple (``rsp_sdk.matrix.metrics.without_warmup``);
* a cell's key holds the warm-up's sha256: another warm-up is another measurement.

The warm-up must end, in application time, before the stream starts (the feeder's rule); the
spec is refused with the line of its ``warmup`` key otherwise.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.errors import InputError
from rsp_sdk.matrix.inputs import PreparedStream, expand
from rsp_sdk.matrix.spec import MatrixSpec, key_line
from rsp_sdk.streams.io import read_stream
from rsp_sdk.util.atomic import atomic_path


def with_warmup(
    spec: MatrixSpec, spec_path: Path, inputs: Path, streams: dict[str, PreparedStream]
) -> dict[str, PreparedStream]:
    """``streams``, each with the spec's warm-up (kept as ``inputs/<sha256>.parquet``)."""
    if spec.feeding.warmup is None:
        return streams
    where = _where(spec_path)
    source = expand(spec.feeding.warmup, spec_path.resolve().parent)
    if not source.is_file():
        raise InputError(
            f"feeding.warmup: no such file {source}",
            path=where[0],
            line=where[1],
            expected="a stream Parquet file (rsp stream import, rsp generate)",
        )
    warm = read_stream(source, columns=["t_app_ms"])  # names the file if it is not a stream
    sha = sha256_of(source)
    kept = inputs / f"{sha}.parquet"
    if not kept.exists():
        with atomic_path(kept) as tmp:
            shutil.copyfile(source, tmp)
    warm_end = pc.max(warm.column("t_app_ms")).as_py()
    for stream in streams.values():
        _check_before(warm_end, stream, source, where)
    update = {"warmup": kept, "warmup_sha256": sha}
    return {name: s.model_copy(update=update) for name, s in streams.items()}


def _where(spec_path: Path) -> tuple[Path, int | None]:
    """The spec and the line of its ``warmup`` key, for the error."""
    if not spec_path.is_file():
        return spec_path, None
    return spec_path, key_line(spec_path.read_text(encoding="utf-8"), ("feeding", "warmup"))


def _check_before(
    warm_end: int | None, stream: PreparedStream, source: Path, where: tuple[Path, int | None]
) -> None:
    """The feeder's rule, checked before any cell runs (a plan may not have the file yet)."""
    if warm_end is None or not stream.path.exists():
        return
    start = pc.min(pq.read_table(stream.path, columns=["t_app_ms"]).column("t_app_ms")).as_py()
    if start is not None and warm_end >= start:
        raise InputError(
            f"feeding.warmup {source.name} ends at {warm_end} ms, stream {stream.name} starts "
            f"at {start} ms",
            path=where[0],
            line=where[1],
            expected="a warm-up that ends, in application time, before every stream starts",
        )
