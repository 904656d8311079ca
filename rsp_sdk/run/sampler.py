"""The sampler: every 500 ms, what the engine's process tree costs — RSS, CPU %, threads — and,
for JVM engines, heap used/committed and GC count/time from the ``stats`` verb.

It runs on its own thread and watches the channel's pid (the JPype worker, the bridge JVM, the
JSON-lines program) and its descendants with psutil. ``stats`` is served bridge-side on its own
thread, so samples keep coming while a long push holds the control lane. The sampler measures
its own CPU time (``cpu_seconds``) so benchmarks can show it stays under 2 % of one core.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

StatsFn = Callable[[], dict[str, Any]]
Sink = Callable[[dict[str, Any]], None]


class Sampler:
    def __init__(
        self, pid: int, sink: Sink, *, stats: StatsFn | None = None, interval_s: float = 0.5
    ) -> None:
        self.pid = pid
        self.sink = sink
        self.stats = stats
        self.interval_s = interval_s
        self.cpu_seconds = 0.0
        self.samples = 0
        self._procs: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rsp-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _tree(self) -> list[psutil.Process]:
        try:
            root = self._procs.get(self.pid) or psutil.Process(self.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        # keep Process objects across samples: cpu_percent() measures since the previous call
        current = {p.pid: self._procs.get(p.pid, p) for p in tree}
        self._procs = current
        return list(current.values())

    def sample(self) -> dict[str, Any] | None:
        """One sample now (None when the process tree is gone)."""
        tree = self._tree()
        if not tree:
            return None
        rss = cpu = 0.0
        threads = 0
        alive = 0
        for p in tree:
            with contextlib.suppress(psutil.Error):
                with p.oneshot():
                    rss += p.memory_info().rss
                    cpu += p.cpu_percent(None)
                    threads += p.num_threads()
                alive += 1
        row: dict[str, Any] = {
            "t_sys_ns": time.monotonic_ns(),
            "processes": alive,
            "rss_bytes": int(rss),
            "cpu_percent": float(cpu),
            "threads": threads,
            "heap_used": None,
            "heap_committed": None,
            "gc_count": None,
            "gc_time_ms": None,
        }
        if self.stats is not None:
            try:
                stats = self.stats()
            except Exception:
                stats = {}
            for key in ("heap_used", "heap_committed", "gc_count", "gc_time_ms"):
                if isinstance(stats.get(key), int):
                    row[key] = stats[key]
        return row

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            t0 = time.thread_time()
            row = self.sample()
            if row is not None:
                self.sink(row)
                self.samples += 1
            self.cpu_seconds += time.thread_time() - t0
            next_at += self.interval_s
            self._stop.wait(max(0.0, next_at - time.monotonic()))
