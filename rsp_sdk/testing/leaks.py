"""Proof that an engine left nothing behind: processes and listening ports of its tree.

A ``TreeWatch`` is pointed at the host pid and ``observe()``d while the engine runs (it records
every descendant and every port they listen on, since engines fork helpers and open ports late);
``assert_clean()`` then waits until all of them are gone and says exactly what survived.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import psutil


@dataclass
class TreeWatch:
    root: int
    pids: dict[int, str] = field(default_factory=dict)
    ports: dict[int, int] = field(default_factory=dict)  # port → pid seen listening

    def observe(self) -> None:
        try:
            root = psutil.Process(self.root)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in procs:
            with contextlib.suppress(psutil.Error):
                self.pids[p.pid] = " ".join(p.cmdline()[:4])[:200]
                for c in p.net_connections(kind="inet"):
                    if c.status == psutil.CONN_LISTEN and c.laddr:
                        self.ports[c.laddr.port] = p.pid

    def survivors(self) -> list[str]:
        out: list[str] = []
        for pid, cmd in self.pids.items():
            with contextlib.suppress(psutil.NoSuchProcess):
                p = psutil.Process(pid)
                if p.status() != psutil.STATUS_ZOMBIE and " ".join(p.cmdline()[:4])[:200] == cmd:
                    out.append(f"process {pid} ({cmd}) still running")
        if self.ports:
            for c in psutil.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port in self.ports:
                    out.append(f"port {c.laddr.port} still listening (pid {c.pid})")
        return out

    def assert_clean(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        left = self.survivors()
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = self.survivors()
        if left:
            raise AssertionError("engine left resources behind: " + "; ".join(left))
