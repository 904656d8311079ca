"""The comparison tables ``rsp matrix run`` / ``show`` print (rich), from cell rows."""

from __future__ import annotations

import io
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from rsp_sdk.matrix.axes import (
    HEADERS,
    axis_cell,
    axis_text,
    axis_value,
    varying_axes,
    who,
)
from rsp_sdk.matrix.notes import MARK_NOTE

COLOURS = {
    "correct": "green",
    "incorrect": "red",
    "no_output": "red",
    "refused": "yellow",
    "unavailable": "dim",
    "failed": "red",
    "timeout": "red",
    "interrupted": "red",
    "not_judged": "dim",
    "skipped": "dim",
}


def outcome(row: dict[str, Any]) -> str:
    """One word for a cell: its verdict when it ran, else its state."""
    if row["state"] == "ok":
        return str(row.get("verdict") or "not_judged")
    return str(row["state"])


def _med(rows: list[dict[str, Any]], col: str) -> float | None:
    vals = [float(r[col]) for r in rows if r.get(col) is not None]
    return statistics.median(vals) if vals else None


def _num(v: float | None, fmt: str = "{:.1f}") -> str:
    return "" if v is None else fmt.format(v)


def _verdict_text(members: list[dict[str, Any]]) -> str:
    """The outcomes of one engine × query (colour markup), with t0 when all are correct; when
    repetitions disagree, how many gave each ("2 correct/2 incorrect": a race shows its odds)."""
    counts = Counter(outcome(r) for r in members)
    words = sorted(counts)
    t0s = sorted({r["t0_ms"] for r in members if r.get("t0_ms") is not None})
    shown = [f"[{COLOURS.get(w, 'white')}]{w}[/]" for w in words]
    if len(words) > 1:
        shown = [f"{counts[w]} {text}" for w, text in zip(words, shown, strict=True)]
    text = "/".join(shown)
    if t0s and words == ["correct"]:
        text += f" {t0s[0]}"
    if any(r.get("t0_narrowed") for r in members):
        text += " *"
    return text


def verdict_table(rows: list[dict[str, Any]], title: str, width: int | None = None) -> Table:
    """engine@runtime × query: the verdict (t0), over all repetitions and feedings. An axis the
    spec varies besides the query (stream, instances, time scale: ``rsp_sdk.matrix.axes``) splits
    the query's column instead of being folded into it. When that grid is wider than ``width``
    (an 80-column terminal: rich would blank or cut the query headers), one row per engine ×
    query instead, each varying axis in a column of its own, which fits any query count."""
    axes = varying_axes(rows)
    cols = list(dict.fromkeys(_column(r, axes) for r in rows))
    by: dict[str, dict[tuple[Any, ...], list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in rows:
        by[who(r)][_column(r, axes)].append(r)
    t = Table(title=title, show_lines=False)
    t.add_column("engine@runtime", no_wrap=True)
    for col in cols:
        header = col[0] + "".join(
            f" · {axis_text(a, v)}" for a, v in zip(axes, col[1:], strict=True)
        )
        t.add_column(escape(header), justify="center", no_wrap=True)
    for name, per_col in by.items():
        t.add_row(escape(name), *(_verdict_text(per_col.get(c, [])) for c in cols))
    caption = MARK_NOTE if any(r.get("t0_narrowed") for r in rows) else None
    t.caption = caption
    if width is None or fits(t, width):
        return t
    long = Table(title=title, show_lines=False, caption=caption)
    long.add_column("engine@runtime", no_wrap=True)
    long.add_column("query", overflow="fold")
    for a in axes:
        long.add_column(HEADERS[a], overflow="fold")
    long.add_column("verdict t0", overflow="fold")
    for name, per_col in by.items():
        for n, col in enumerate(c for c in cols if c in per_col):
            values = [axis_cell(a, v) for a, v in zip(axes, col[1:], strict=True)]
            query = escape(_breakable(col[0]))
            shown = escape(name) if n == 0 else ""
            long.add_row(shown, query, *values, _verdict_text(per_col[col]))
    return long


def _breakable(query: str) -> str:
    """A templated query's name with a space after each parameter's comma, so a narrow column
    wraps between parameters (``join[DELTA=10,`` / ``RANGE=PT5S,``) and not inside one
    (``RANGE=P`` / ``T5S``)."""
    return query.replace(",", ", ") if "[" in query else query


def _column(row: dict[str, Any], axes: Sequence[str]) -> tuple[Any, ...]:
    """A grid column: the query and the row's value on each varying axis."""
    return (row["query"], *(axis_value(row, a) for a in axes))


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` prints within ``width`` columns without cutting a cell."""
    from rich.console import Console

    probe = Console(width=10_000, file=io.StringIO())
    return probe.measure(table).maximum <= width


PERF_COLUMNS = (
    # (wide header, narrow header, what the narrow one means)
    ("engine@runtime", "engine@runtime", ""),
    ("cells", "cells", ""),
    ("correct", "ok", "ok: correct cells"),
    ("triples/s", "tr/s", "tr/s: triples/s reached"),
    ("µs/triple", "µs/tr", "µs/tr: engine µs per triple"),
    ("lat p50 ms", "p50", "p50/p95: result latency ms"),
    ("lat p95 ms", "p95", ""),
    ("RSS MB", "RSS", "RSS MB"),
    ("wall s", "wall", "wall s"),
)


def perf_table(rows: list[dict[str, Any]], title: str, width: int | None = None) -> Table:
    """Per engine@runtime: cells that ran, how many were correct, medians over the queries,
    feedings and repetitions that ran to the end (a failed or timed-out run's numbers describe
    the part that ran), wall time of all.
    Narrower than its headers allow (``width``, an 80-column terminal): short headers, no
    vertical rules and a caption saying what each short header means, so none is cut."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["state"] in ("ok", "failed", "timeout"):
            by[who(r)].append(r)
    body = [_perf_row(name, members) for name, members in by.items()]
    t = _perf(title, [wide for wide, _, _ in PERF_COLUMNS], body)
    if width is None or fits(t, width):
        return t
    narrow = _perf(title, [short for _, short, _ in PERF_COLUMNS], body, box.SIMPLE_HEAD)
    narrow.caption = "; ".join(why for _, _, why in PERF_COLUMNS if why)
    return narrow


def _perf_row(name: str, members: list[dict[str, Any]]) -> tuple[str, ...]:
    done = [r for r in members if r["state"] == "ok"]
    return (
        escape(name),
        str(len(members)),
        str(sum(1 for r in members if r.get("verdict") == "correct")),
        _num(_med(done, "rate_achieved"), "{:.0f}"),
        _num(_med(done, "time_per_triple_us")),
        _num(_med(done, "latency_ms_p50"), "{:.0f}"),
        _num(_med(done, "latency_ms_p95"), "{:.0f}"),
        _num(_med(done, "peak_rss_mb"), "{:.0f}"),
        _num(sum(float(r.get("wall_s") or 0) for r in members), "{:.0f}"),
    )


def _perf(
    title: str, headers: list[str], body: Sequence[tuple[str, ...]], rule: Any = None
) -> Table:
    t = Table(title=title, **({"box": rule} if rule is not None else {}))
    for n, col in enumerate(headers):
        t.add_column(col, justify="left" if n == 0 else "right", no_wrap=True)
    for row in body:
        t.add_row(*row)
    return t


def mismatch_table(mm: list[dict[str, Any]], title: str) -> Table:
    """LSBench mm(E1, E2) per ordered pair, mean over queries (and max)."""
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in mm:
        by[(m["e1"], m["e2"])].append(float(m["mm_percent"]))
    t = Table(title=title)
    for col in ("E1", "E2", "queries", "mean mm %", "max mm %"):
        t.add_column(col)
    for (a, b), vals in sorted(by.items()):
        mean, top = f"{statistics.fmean(vals):.1f}", f"{max(vals):.1f}"
        t.add_row(escape(a), escape(b), str(len(vals)), mean, top)
    return t


def reasons_table(rows: list[dict[str, Any]], title: str) -> Table:
    """Cells that did not produce a verdict, with why (refused, unavailable, failed, judging
    failed)."""
    t = Table(title=title, show_lines=False)
    for col in ("cell", "state", "why"):
        t.add_column(col, overflow="fold")
    seen: set[tuple[str, str]] = set()
    # the repetitions of a cell that failed alike are one row (YABench: ten repetitions of a
    # deterministic engine's wrong answer would be ten rows saying the same)
    alike: dict[tuple[str, str, str], list[int | None]] = {}
    where: dict[str, tuple[int, ...]] = {}
    firsts = _first_seen(rows)
    for n, r in enumerate(rows):
        failed_judging = r.get("verdict") == "not_judged" and r.get("reason")
        unjudged = r.get("verdict") not in ("incorrect", "no_output") and not failed_judging
        if r["state"] == "ok" and unjudged:
            continue
        why = r.get("reason") or r.get("divergence") or ""
        if (r["state"], why) in seen and r["state"] == "unavailable":
            continue
        seen.add((r["state"], why))
        base, rep = _split_rep(r["label"])
        alike.setdefault((base, outcome(r), why), []).append(rep)
        where.setdefault(base, (*(firsts[a][_axis(r, a)] for a in _PLACE), n))
    for (base, word, why), reps in sorted(alike.items(), key=lambda kv: where[kv[0][0]]):
        word_text = f"[{COLOURS.get(word, 'white')}]{word}[/]"
        t.add_row(escape(base + _reps_text(reps)), word_text, escape(why[:300]))
    return t


#: a cell's rows go with its engine's, then by query and stream as first seen (a cell whose
#: first repetition was correct is not listed after every other engine)
_PLACE = ("engine", "query", "stream")


def _axis(row: dict[str, Any], axis: str) -> Any:
    return who(row) if axis == "engine" else row.get(axis)


def _first_seen(rows: list[dict[str, Any]]) -> dict[str, dict[Any, int]]:
    firsts: dict[str, dict[Any, int]] = {a: {} for a in _PLACE}
    for n, r in enumerate(rows):
        for a in _PLACE:
            firsts[a].setdefault(_axis(r, a), n)
    return firsts


def _split_rep(label: str) -> tuple[str, int | None]:
    """A cell label without its ``/rep=N`` tail, and N."""
    base, sep, rep = label.rpartition("/rep=")
    return (base, int(rep)) if sep and rep.isdigit() else (label, None)


def _reps_text(reps: list[int | None]) -> str:
    """``/rep=2``, ``/rep=1–4``, ``/rep=1,3,5–7``: the repetitions a row stands for."""
    ranges = _rep_ranges(reps)
    return f"/rep={ranges}" if ranges else ""


def _rep_ranges(reps: list[int | None]) -> str:
    """``2``, ``1–4``, ``1,3,5–7`` (empty when no repetition is known)."""
    numbers = sorted({n for n in reps if n is not None})
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ",".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def coverage_table(rows: list[dict[str, Any]], title: str, root: Any = None) -> Table:
    """LSBench Table 1 style: feature (query) × engine@runtime, the outcome and its reason."""
    from rsp_sdk.matrix.coverage import Outcome, coverage

    colours = {
        Outcome.CORRECT: "green",
        Outcome.REFUSED: "yellow",
        Outcome.UNAVAILABLE: "dim",
        Outcome.NOT_JUDGED: "dim",
    }
    table = coverage(rows, root)
    t = Table(title=title, show_lines=True)
    t.add_column("feature", no_wrap=True)
    for e in table:
        t.add_column(escape(e), overflow="fold")
    for q in dict.fromkeys(r["query"] for r in rows):
        cells = []
        for e in table:
            got = table[e].get(q)
            if got is None:
                cells.append("")
                continue
            word, why = got
            tail = escape(f": {why}") if why else ""
            cells.append(f"[{colours.get(word, 'red')}]{word.value}[/]{tail}")
        t.add_row(escape(q), *cells)
    return t


def comparability_table(comps: list[dict[str, Any]], title: str) -> Table:
    """LSBench comp(engines, Q, R, ε) per query, stream, feeding and rate; the repetitions
    that agree (same engines, same maximum, same answer) share a row."""
    t = Table(title=title)
    for col in ("query", "stream", "feeding", "rate/scale", "rep", "engines", "max mm %", "ok"):
        t.add_column(col, overflow="fold")
    rows: dict[tuple[str, ...], list[int | None]] = {}
    for c in sorted(comps, key=lambda c: (c["query"], c["stream"], c["rate"] or 0)):
        ok = "[green]yes[/]" if c["comparable"] else "[red]no[/]"
        rate = "" if c["rate"] is None else f"{c['rate']:g}"
        if c.get("time_scale") is not None:
            rate = f"×{c['time_scale']:g}"
        mm = f"{c['max_mm_percent']:.1f}"
        shown = (c["query"], c["stream"], c["feeding"], rate, c["engines"], mm)
        rows.setdefault((*shown, f"{ok} (ε {c['epsilon_percent']:g} %)"), []).append(
            c["repetition"]
        )
    for (query, stream, feeding, rate, engines, mm, ok), reps in rows.items():
        t.add_row(escape(query), stream, feeding, rate, _rep_ranges(reps), escape(engines), mm, ok)
    return t


def rate_max_table(searches: list[dict[str, Any]], title: str) -> Table:
    """Ren et al.'s Rate_max per engine, query and stream, with the probes that decided it."""
    t = Table(title=title)
    for col in ("engine", "query", "stream", "STEP ms", "Rate_max (triples/s)", "probes"):
        t.add_column(col, overflow="fold")
    for s in searches:
        if s["rate_max"] is None:
            value = f"[red]none[/] ({s.get('reason') or ''})"
        else:
            value = f"{s['rate_max']:g}" + (" (capped: max_rate sustained)" if s["capped"] else "")
        probes = " ".join(f"{p['rate']:g}{'✓' if p['sustained'] else '✗'}" for p in s["probes"])
        t.add_row(
            escape(who(s)),
            escape(s["query"]),
            s["stream"],
            str(s["step_ms"]),
            value,
            probes,
        )
    return t


def frame_table(caption: str, frame: Any, width: int | None = None) -> Table:
    """A report's headline table (a DataFrame of text cells) for the terminal. Wider than
    ``width`` (the functional suite's 19 queries in 80 columns would print as rows of "…"),
    it is folded into one row per (first column, other column) pair, so nothing is cut."""
    columns = [str(c) for c in frame.columns]
    rows = [[escape(str(v)) for v in row] for row in frame.itertuples(index=False)]
    wide = Table(title=caption, title_justify="left")
    for col in columns:
        wide.add_column(col)
    for row in rows:
        wide.add_row(*row)
    if width is None or len(columns) < 2 or fits(wide, width):
        return wide
    long = Table(title=caption, title_justify="left")
    long.add_column(columns[0], no_wrap=True)
    long.add_column("column", overflow="fold")
    long.add_column("value", overflow="fold")
    for row in rows:
        for n, (col, value) in enumerate(zip(columns[1:], row[1:], strict=True)):
            long.add_row(row[0] if n == 0 else "", col, value)
    return long
