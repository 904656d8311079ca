"""The matrix's own cost: ``matrix/csrbench.toml`` with rsp-js, 7 queries × 3 repetitions, from
start to tables, split into engine time and harness + oracle time.

Engine time is the sum of the cells' run durations (``status.json``: engine start, feeding,
draining, stop — what the runner measures); everything else of the wall time (planning, stream
import, the oracle's Spark job per distinct query, judging, metrics, cells.parquet, summary,
mismatch, the tables) is harness + oracle. Target (issue 11): harness + oracle ≤ 25 % of the wall time.
Skipped with the provisioning message when rsp-js is not provisioned.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from benchmarks import Result, bench

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "matrix" / "csrbench.toml"


@bench("matrix.csrbench-rspjs")
def csrbench_rspjs() -> list[Result]:
    from rsp_sdk.cli.common import console
    from rsp_sdk.cli.matrix import print_tables
    from rsp_sdk.engine.registry import get_adapter
    from rsp_sdk.matrix.run import run_matrix
    from rsp_sdk.matrix.spec import EngineAxis, load_spec

    missing = get_adapter("rspjs").missing_artifacts(None)
    if missing:
        return [Result("matrix csrbench rspjs", 0.0, "skipped", note="; ".join(missing))]
    spec = load_spec(SPEC).model_copy(
        update={"engines": [EngineAxis(name="rspjs")], "repetitions": 3}
    )
    with tempfile.TemporaryDirectory(prefix="bench-matrix-") as tmp:
        out = Path(tmp) / "results"
        started = time.perf_counter()
        result = run_matrix(spec, SPEC, out)
        with console.capture():  # the tables `rsp matrix run` ends with, built and rendered
            print_tables(out, result.rows)
        wall = time.perf_counter() - started
        engine = 0.0
        for row in result.rows:
            status = out / (row["run_dir"] or "-") / "status.json"
            if status.exists():
                engine += json.loads(status.read_text()).get("duration_s") or 0.0
    share = (wall - engine) / wall if wall > 0 else 0.0
    return [
        Result("matrix csrbench rspjs wall (21 cells)", wall, "s"),
        Result("matrix csrbench rspjs engine time", engine, "s"),
        Result(
            "matrix csrbench rspjs harness + oracle share",
            100 * share,
            "%",
            target="≤ 25 %",
            ratio=0.25 / share if share > 0 else None,
            note=f"oracle computed {result.oracle_computed}, reused {result.oracle_reused}",
        ),
    ]
