"""What a cell's engine was given, as one stream file: what its output is judged against.

The oracle must see exactly the triples the engine saw, or a correct engine is called wrong:

* a spec's warm-up (``[feeding] warmup``) is pushed before the stream, so the engine's first
  windows hold warm-up data — the oracle gets the warm-up then the stream;
* the fixed-N mode (``[feeding] modes = ["fixed"]``, ``limit = N``) pushes the stream's first N
  triples only (``run.feeder.pushed_part``, which the feeder itself calls) — the oracle gets
  those N, not the windows of triples the engine never received.

Each such file is content-addressed by its inputs (built once, atomically) and lives beside the
stream in ``inputs/``; a cell given the plain stream is judged against the stream file itself.
"""

from __future__ import annotations

import pyarrow as pa

from rsp_sdk.engine.provision import sha256_of
from rsp_sdk.matrix.inputs import PreparedStream
from rsp_sdk.model.stream import StreamMeta
from rsp_sdk.run.feeder import FeederConfig, pushed_part
from rsp_sdk.streams.io import read_stream, write_stream


def judged_stream(stream: PreparedStream, feeder: FeederConfig | None) -> PreparedStream:
    """What the engine was given — the warm-up, then the part of the stream ``feeder`` pushes
    (``run.feeder.pushed_part``) — as a stream the oracle judges the output against."""
    limit = feeder.pushed_limit() if feeder is not None else None
    if stream.warmup is None and limit is None:
        return stream
    parts = [stream.warmup_sha256] if stream.warmup_sha256 is not None else []
    parts.append(stream.sha256 if limit is None else f"{stream.sha256}[:{limit}]")
    given = stream.path.parent / f"{'+'.join(parts)}.parquet"
    if not given.exists():
        measured = read_stream(stream.path)
        if feeder is not None:
            measured = pushed_part(measured, feeder)
        warm = [read_stream(stream.warmup)] if stream.warmup is not None else []
        meta = StreamMeta(
            producer="rsp matrix: what the engine was given",
            parameters={
                "warmup_sha256": stream.warmup_sha256,
                "stream_sha256": stream.sha256,
                "limit": limit,
            },
        )
        write_stream(pa.concat_tables([*warm, measured]), given, meta)  # atomic
    return stream.model_copy(update={"path": given, "sha256": sha256_of(given), "warmup": None})
