"""A matrix results folder from real `rsp csrbench` runs, arranged in the layout of
docs/matrix-results.md (the matrix's own `rsp matrix run` is not on this branch yet).

Every run is a real engine run judged by the oracle: the verdicts come from csrbench.json, the
run directories are moved under cells/<key>/ unchanged, and each cell.json is filled from
them (state, verdict, divergence, sizes, peak RSS, CPU, wall time) — what the matrix computes
per cell, restricted to what a CSRBench run has. The plan lists every run, so deleting one
cell.json afterwards is exactly a killed matrix.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import socket
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from rsp_sdk.run.recorder import read_table

VERDICTS = {"correct": "correct", "incorrect": "incorrect", "no output": "no_output"}
STATES = {"unsupported": "refused", "failed": "failed"}


def _cell(verdict: dict[str, Any], stream_sha: str, key: str) -> dict[str, Any]:
    run_dir = f"cells/{key}"
    label = f"{verdict['engine']}@{verdict['runtime']}/{verdict['query']}/rep=1"
    state = STATES.get(verdict["state"], "ok")
    divergence = (verdict.get("detail") or {}).get("divergence")
    return {
        "key": key,
        "label": label,
        "spec": "csrbench",
        "group": None,
        "engine": verdict["engine"],
        "adapter_version": None,
        "runtime": verdict["runtime"],
        "query": verdict["query"],
        "params": "{}",
        "stream": "csrbench",
        "stream_sha256": stream_sha,
        "rate": None,
        "feeding": "afap",
        "repetition": 1,
        "profile": None,
        "state": state,
        "reason": verdict.get("error") if state != "ok" else None,
        "verdict": VERDICTS.get(verdict["state"], "not_judged"),
        "t0_ms": verdict.get("t0"),
        "divergence": verdict.get("divergence"),
        "divergence_detail": json.dumps(divergence) if divergence else None,
        "relations": verdict.get("relations"),
        "rows": verdict.get("rows"),
        "wall_s": verdict.get("duration_s"),
        "run_dir": run_dir,
    }


def _perf(cell: dict[str, Any], run: Path) -> None:
    if not (run / "perf.parquet").exists():
        return
    perf = read_table(run, "perf")
    if perf.num_rows:
        cell["peak_rss_mb"] = pc.max(perf.column("rss_bytes")).as_py() / 2**20
        cell["cpu_mean_pct"] = pc.mean(perf.column("cpu_percent")).as_py()
        cell["threads_max"] = float(pc.max(perf.column("threads")).as_py())
    status = json.loads((run / "status.json").read_text())
    cell["triples_pushed"] = status.get("triples_pushed")


def arrange(csrbench_outs: list[Path], results: Path) -> Path:
    """RESULTS/ (matrix.json, machine.json, cells/<key>/ with cell.json) from csrbench outputs."""
    plan: list[dict[str, Any]] = []
    (results / "inputs").mkdir(parents=True)
    for out in csrbench_outs:
        _arrange_one(out, results, plan)
    matrix = {
        "format": 1,
        "spec": {"name": "csrbench"},
        "spec_path": "matrix/csrbench.toml",
        "plan": plan,
        "created": "from rsp csrbench runs",
    }
    (results / "matrix.json").write_text(json.dumps(matrix, indent=2))
    machine = {
        "host": socket.gethostname(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }
    (results / "machine.json").write_text(json.dumps(machine, indent=2))
    return results


def _arrange_one(csrbench_out: Path, results: Path, plan: list[dict[str, Any]]) -> None:
    verdicts = json.loads((csrbench_out / "csrbench.json").read_text())
    stream = csrbench_out / "csrbench.parquet"
    stream_sha = hashlib.sha256(stream.read_bytes()).hexdigest()
    shutil.copy(stream, results / "inputs" / f"{stream_sha}.parquet")
    for v in verdicts:
        ident = json.dumps([v["engine"], v["runtime"], v["query"], stream_sha, 1]).encode()
        key = hashlib.sha256(ident).hexdigest()
        cell = _cell(v, stream_sha, key)
        target = results / "cells" / key
        target.parent.mkdir(parents=True, exist_ok=True)
        if v.get("run_dir") and Path(v["run_dir"]).is_dir():
            shutil.move(v["run_dir"], target)
        else:
            target.mkdir()
        _perf(cell, target)
        (target / "cell.json").write_text(json.dumps(cell, indent=2))
        plan.append({k: val for k, val in cell.items() if k in PLAN_KEYS})


PLAN_KEYS = (
    "key label spec group engine adapter_version runtime query params stream stream_sha256 rate "
    "feeding repetition profile run_dir"
).split()
