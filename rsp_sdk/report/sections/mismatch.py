"""The LSBench mismatch matrix: mm(E1, E2) per query (and rate), from ``mismatch.parquet``.

mm(E1, E2) is the share of E1's output that E2 does not produce in order (Le-Phuoc et al.,
ISWC 2012; :mod:`rsp_sdk.compare.lsbench`). Rows are E1, columns E2, one table per query and
rate, medians over repetitions.
"""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts, TableRef
from rsp_sdk.report.results import Results
from rsp_sdk.report.section import render

NEEDED = ("e1", "e2", "mm_percent")
GROUPS = ("query", "rate")


class Mismatch:
    name = "mismatch"
    title = "LSBench mismatch"
    order = 30

    def render(self, results: Results, out: Artifacts) -> Markup:
        frame = results.optional_table("mismatch")
        asked = results.metrics
        if frame is None and asked is not None and "lsbench" not in asked:
            return render(
                "note.html.j2",
                text="The spec does not ask for LSBench's mismatch "
                f'(metrics = {", ".join(asked) or "none"}; add "lsbench" to compare engines).',
            )
        if frame is None:
            return render(
                "note.html.j2",
                text="No mismatch.parquet: no two engines ran the same "
                "query on the same stream and rate.",
            )
        missing = [c for c in NEEDED if c not in frame.columns]
        if missing:
            return render(
                "note.html.j2",
                text=f"mismatch.parquet lacks {', '.join(missing)} "
                f"(has {', '.join(map(str, frame.columns))}): not shown.",
            )
        tables: list[TableRef] = []
        keys = [g for g in GROUPS if g in frame.columns]
        groups = frame.groupby(keys, dropna=False) if keys else [((), frame)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            where = ", ".join(f"{k}={v}" for k, v in zip(keys, key, strict=True) if not _blank(v))
            table = g.pivot_table(index="e1", columns="e2", values="mm_percent", aggfunc="median")
            text = table.map(lambda v: "–" if pd.isna(v) else f"{v:.1f} %")
            text = text.reset_index().rename(columns={"e1": "E1 \\ E2"})
            tables.append(
                out.table(
                    f"mismatch-{where or 'all'}",
                    text,
                    f"mm(E1, E2) in % {('(' + where + ')') if where else ''}",
                )
            )
        return render("tables.html.j2", tables=tables)


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)
