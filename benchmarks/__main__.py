"""Run the registered benchmarks: ``python -m benchmarks [NAME …]`` (prefix match)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
import traceback

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import benchmarks
from benchmarks import REGISTRY, Result


def main(argv: list[str]) -> int:
    for mod in pkgutil.iter_modules(benchmarks.__path__):
        if mod.name.startswith("bench_"):
            importlib.import_module(f"benchmarks.{mod.name}")
    selected = [n for n in REGISTRY if not argv or any(n.startswith(a) for a in argv)]
    console = Console()
    rows: list[Result] = []
    failed = 0
    for name in selected:
        console.rule(name)
        started = time.perf_counter()
        try:
            out = REGISTRY[name]()
        except Exception:
            failed += 1
            console.print(traceback.format_exc())
            continue
        for r in out:
            console.print(
                escape(
                    f"  {r.name}: {r.value:,.3f} {r.unit}"
                    + (
                        f"  (target {r.target}, measured {r.value:,.3f} {r.unit}, "
                        f"{'met' if r.ratio >= 1 else 'NOT met'}, ratio {r.ratio:.2f})"
                        if r.ratio is not None and r.target
                        else (f"  (ratio {r.ratio:.2f})" if r.ratio is not None else "")
                    )
                    + (f"  {r.note}" if r.note else "")
                )
            )
        rows.extend(out)
        console.print(f"  [dim]{time.perf_counter() - started:.1f} s[/]")
    table = Table(title="benchmarks")
    for col in ("benchmark", "value", "unit", "target", "ratio", "met", "note"):
        table.add_column(col, justify="right" if col in ("value", "ratio") else "left")
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        style = "" if r.ratio is None else ("green" if r.ratio >= 1 else "red")
        met = "" if r.ratio is None or not r.target else ("met" if r.ratio >= 1 else "NOT met")
        cells = (r.name, f"{r.value:,.3f}", r.unit, r.target, ratio, met, r.note)
        table.add_row(*(escape(c) for c in cells), style=style)  # names hold "[sql]"
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
