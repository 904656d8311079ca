"""A Spark standalone cluster on 127.0.0.1 for the oracle benchmarks: one master and N workers
started with pyspark's own ``spark-class``, each worker a process of its own (its executors are
separate JVMs, as on a real cluster), all torn down on exit — never left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive_workers(ui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as r:
            state = json.loads(r.read())
    except OSError:
        return 0
    return sum(w.get("state") == "ALIVE" for w in state.get("workers", []))


@contextmanager
def standalone_cluster(workers: int = 2, cores: int = 1, memory: str = "3g") -> Iterator[str]:
    """The master's URL while a master and ``workers`` workers run (``cores`` and ``memory``
    each); a cluster that is not up within 180 s raises with the logs' tails."""
    spark_class = shutil.which("spark-class", path=str(Path(sys.executable).parent))
    if spark_class is None:
        raise RuntimeError("pyspark's spark-class script is missing next to the interpreter")
    with tempfile.TemporaryDirectory(prefix="rsp-bench-cluster-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_WORKER_DIR": str(work / "worker"),
            "SPARK_LOG_DIR": str(work / "logs"),
            "PYSPARK_PYTHON": sys.executable,
        }
        port, ui = _free_port(), _free_port()
        url = f"spark://127.0.0.1:{port}"
        master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port"]
        worker = ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1"]
        commands = [[*master, str(port), "--webui-port", str(ui)]] + [
            [*worker, "--cores", str(cores), "--memory", memory, "--webui-port", str(_free_port())]
            for _ in range(workers)
        ]
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for i, args in enumerate(commands):
                procs.append(
                    subprocess.Popen(
                        [spark_class, *args],
                        env=env,
                        stdout=(work / f"{i}.log").open("w"),
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
            deadline = time.monotonic() + 180
            while _alive_workers(ui) < workers:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    logs = "".join(
                        (work / f"{i}.log").read_text()[-1500:] for i in range(len(procs))
                    )
                    raise RuntimeError(f"the standalone cluster did not come up:\n{logs}")
                time.sleep(1)
            yield url
        finally:
            _stop(procs)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Workers first, then the master: SIGTERM to each process group, SIGKILL after 30 s."""
    for proc in reversed(procs):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in reversed(procs):
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
