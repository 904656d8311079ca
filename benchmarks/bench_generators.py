"""Generator speed: ``social`` and ``water`` at 1–2 M triples, against YABench SG1 as the peer.

Each benchmark times generation plus writing both Parquet files (stream and static data), the
work ``rsp generate …`` does, and reports triples/s. Absolute numbers on a shared 2-core machine
are noisy, so the ratio is taken to the YABench SG1 generator (a simple, fully vectorised
generator) timed in the same run on a similar number of triples: ratio ≥ 1 means at least as fast
per triple as SG1. Each figure is the best of three runs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import Result, bench
from rsp_sdk.streams.generators.assemble import Generated
from rsp_sdk.streams.generators.social import WEEK_MS, SocialParams, generate_social
from rsp_sdk.streams.generators.water import WaterParams, generate_water
from rsp_sdk.streams.generators.yabench import YabenchParams, generate_yabench
from rsp_sdk.streams.io import write_static, write_stream

RUNS = 3


def _best_rate(run: Callable[[Path], int]) -> tuple[float, int]:
    """(best triples/s over RUNS runs, triples per run)."""
    best, triples = 0.0, 0
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            triples = run(Path(tmp))
            best = max(best, triples / (time.perf_counter() - started))
    return best, triples


def _write(gen: Generated, tmp: Path) -> int:
    write_stream(gen.stream, tmp / "out.parquet", gen.meta)
    write_static(gen.static, tmp / "out.static.parquet", gen.meta)
    return gen.stream.num_rows + gen.static.num_rows


def _yabench_rate(stations: int) -> float:
    """Peer: SG1 with ``stations`` stations over 30 s at 1 s intervals (≈ 217 triples/station)."""

    def run(tmp: Path) -> int:
        table, meta = generate_yabench(
            YabenchParams(stations=stations, interval_ms=1000, duration_ms=30_000)
        )
        write_stream(table, tmp / "sg1.parquet", meta)
        return int(table.num_rows)

    return _best_rate(run)[0]


def _results(name: str, rate: float, triples: int, peer: float, note: str) -> list[Result]:
    return [
        Result(
            f"generate {name} ({triples / 1e6:.2f} M triples, incl. Parquet)",
            rate,
            "triples/s",
            "≥ YABench SG1 triples/s (same run)",
            rate / peer,
            note,
        ),
        Result("generate yabench SG1 (peer, same run)", peer, "triples/s"),
    ]


@bench("streams.generate_social")
def social() -> list[Result]:
    """`rsp generate social --users 10000 --period 3 weeks`: ≈ 1.5 M triples (streams + static)."""
    params = SocialParams(users=10_000, period_ms=3 * WEEK_MS)
    rate, triples = _best_rate(lambda tmp: _write(generate_social(params), tmp))
    peer = _yabench_rate(stations=triples // 217)
    return _results("social", rate, triples, peer, "10k users, 3 weeks, 5 streams + static")


@bench("streams.generate_water")
def water() -> list[Result]:
    """`rsp generate water --messages 400000`: 1.6 M stream + 0.4 M static triples."""
    params = WaterParams(messages=400_000)
    rate, triples = _best_rate(lambda tmp: _write(generate_water(params), tmp))
    peer = _yabench_rate(stations=triples // 217)
    return _results("water", rate, triples, peer, "400k messages, 3 tags, 50 sensors")
