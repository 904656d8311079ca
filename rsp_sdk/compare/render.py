"""Readable rich tables for comparison results (the CLI prints them; notebooks can too)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from rsp_sdk.compare.csrbench import CsrbenchVerdict, t0_ranges_text
from rsp_sdk.compare.lsbench import Comparability, MismatchResult
from rsp_sdk.compare.yabench import YabenchReport


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _binding_text(binding: dict[str, Any]) -> str:
    parts = []
    for var, term in sorted(binding.items()):
        if isinstance(term, dict):
            value = term.get("value", "")
            if term.get("type") == "uri":
                shown = f"<{value}>"
            elif "datatype" in term:
                shown = f'"{value}"^^<{term["datatype"]}>'
            elif "xml:lang" in term:
                shown = f'"{value}"@{term["xml:lang"]}'
            else:
                shown = f'"{value}"'
        else:
            shown = json.dumps(term)
        parts.append(f"?{var}={shown}")
    return " ".join(parts)


def _bindings_table(title: str, bindings: Sequence[dict[str, Any]], limit: int) -> Table:
    t = Table(title=title, show_header=False, title_justify="left")
    for b in bindings[:limit]:
        t.add_row(_binding_text(b))
    if len(bindings) > limit:
        t.add_row(f"… {len(bindings) - limit} more")
    return t


def candidates_text(candidates: Sequence[int], *, listed: int = 5) -> str:
    """The candidate t0 in a line: a few are listed, many are a count and a range (a whole
    window of 1 ms candidates is 60,001 numbers nobody reads)."""
    values = sorted(candidates)
    if len(values) <= listed:
        return ", ".join(f"{c} ms" for c in values) or "none"
    steps = {b - a for a, b in itertools.pairwise(values)}
    every = f", every {steps.pop()} ms" if len(steps) == 1 else ""
    return f"{len(values):,} from {values[0]} to {values[-1]} ms{every}"


def verdict_renderable(v: CsrbenchVerdict, *, limit: int = 10) -> RenderableType:
    """The CSRBench verdict, with the divergence spelled out when there is one."""
    t = Table(title=f"CSRBench verdict — {v.query}", show_header=False, title_justify="left")
    label = "CORRECT" if v.correct else ("NO OUTPUT" if v.actual_relations == 0 else "INCORRECT")
    t.add_row("verdict", Text(label, style="bold green" if v.correct else "bold red"))
    t.add_row("matching t0", f"{v.t0} ms" if v.t0 is not None else "none")
    if v.t0_ranges:
        t.add_row("correct for", t0_ranges_text(v.t0_ranges))
    t.add_row("candidates", candidates_text(v.candidates))
    t.add_row("actual relations", str(v.actual_relations))
    t.add_row("matched relations", str(v.matched_relations))
    if v.splits_allowed:
        t.add_row("tuple-driven splits", str(v.split_relations))
    parts: list[RenderableType] = [t]
    d = v.divergence
    if d is not None:
        dt = Table(title="first divergence", show_header=False, title_justify="left")
        dt.add_row("best t0", f"{d.t0_ms} ms")
        dt.add_row("reason", d.reason)
        dt.add_row("matched before", f"{d.matched_relations} relation(s)")
        dt.add_row(
            "actual relation",
            f"#{d.actual_index} (seq {d.actual_seq}, t_app {d.actual_t_app_ms}, "
            f"t_sys {d.actual_t_sys_ns})",
        )
        if d.expected_seq is not None:
            dt.add_row(
                "expected relation",
                f"seq {d.expected_seq}, reported at {d.expected_t_app_ms} ms, window "
                f"[{d.expected_window_open_ms}, {d.expected_window_close_ms})",
            )
        parts.append(dt)
        if d.missing:
            parts.append(_bindings_table(f"missing ({len(d.missing)})", d.missing, limit))
        if d.extra:
            parts.append(_bindings_table(f"extra ({len(d.extra)})", d.extra, limit))
    for note in v.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    return Group(*parts)


def yabench_renderable(r: YabenchReport, *, limit: int = 40) -> RenderableType:
    """The per-window table (first ``limit`` rows) and its means."""
    gracious = r.mean_gracious_precision is not None
    t = Table(title=f"YABench per-window metrics — {r.query}, t0 = {r.t0_ms} ms")
    for col in ("seq", "window", "triples", "exp", "act", "P", "R", "delay ms"):
        t.add_column(col, justify="right")
    if gracious:
        for col in ("gracious window", "gP", "gR"):
            t.add_column(col, justify="right")
    for w in r.windows[:limit]:
        window = (
            f"[{w.window_open_ms}, {w.window_close_ms})"
            if w.window_open_ms is not None
            else "unexpected output"
        )
        row = [
            "–" if w.expected_seq is None else str(w.expected_seq),
            window,
            "–" if w.triples_in_window is None else str(w.triples_in_window),
            str(w.expected_size),
            str(w.actual_size),
            _fmt(w.precision),
            _fmt(w.recall),
            _fmt(w.delay_ms, 1),
        ]
        if gracious:
            row += [
                (
                    f"[{w.gracious_open_ms}, {w.gracious_close_ms})"
                    if w.gracious_open_ms is not None
                    else "–"
                ),
                _fmt(w.gracious_precision),
                _fmt(w.gracious_recall),
            ]
        t.add_row(*row)
    if len(r.windows) > limit:
        t.caption = f"… {len(r.windows) - limit} more rows (use --json or --output for all)"
    s = Table(show_header=False, title="summary", title_justify="left")
    s.add_row("windows", str(sum(1 for w in r.windows if w.expected_seq is not None)))
    s.add_row("unexpected outputs", str(r.unexpected_relations))
    s.add_row("mean precision / recall", f"{_fmt(r.mean_precision)} / {_fmt(r.mean_recall)}")
    if gracious:
        s.add_row(
            "mean gracious P / R",
            f"{_fmt(r.mean_gracious_precision)} / {_fmt(r.mean_gracious_recall)}",
        )
    s.add_row("mean delay", f"{_fmt(r.mean_delay_ms, 1)} ms")
    s.add_row("final result arrival", f"{_fmt(r.final_result_arrival_ms, 1)} ms after input end")
    parts: list[RenderableType] = [t, s]
    parts += [Text(f"note: {n}", style="yellow") for n in r.notes]
    return Group(*parts)


def mismatch_renderable(
    results: Iterable[MismatchResult], comp: Comparability | None = None
) -> RenderableType:
    """LSBench mismatch in both directions (and the comparability verdict when asked)."""
    t = Table(title="LSBench mismatch")
    for col in ("E1", "E2", "partition", "blocks", "elements", "unmatched", "mm %"):
        t.add_column(col, justify="right")
    for m in results:
        t.add_row(
            m.e1,
            m.e2,
            m.partition.value,
            str(m.blocks),
            str(m.elements),
            str(m.unmatched),
            f"{m.mm_percent:.2f}",
        )
    if comp is None:
        return t
    verdict = (
        Text(f"comparable within ε = {comp.epsilon_percent} %", style="bold green")
        if comp.comparable
        else Text(f"NOT comparable within ε = {comp.epsilon_percent} %", style="bold red")
    )
    return Group(t, verdict)
