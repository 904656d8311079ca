"""Feature coverage: one word per cell saying *why* a query did or did not come out right.

The matrix records a cell's ``state`` (did it run), ``verdict`` (the oracle's judgement) and
``reason``; a feature table (LSBench's Table 1) needs one more distinction those leave implicit:
whether a query never reached the engine because *our* renderer or capability table refused it,
whether the *engine* rejected it when it was registered (its own message), or whether the engine
died on the way. ``classify`` derives that word from the three columns plus the run's
``status.json`` (the failing verb and error type), and ``coverage_markdown`` renders the
engines × features table with the reason in each cell, for ``docs/engines/``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from enum import StrEnum
from pathlib import Path
from typing import Any

from rsp_sdk.matrix.axes import who


class Outcome(StrEnum):
    CORRECT = "correct"  # the oracle agrees
    WRONG = "wrong"  # the oracle disagrees (the divergence is the reason)
    NO_OUTPUT = "no_output"  # ran to the end, reported nothing although the oracle expects rows
    REFUSED = "refused"  # our renderer / capability table cannot say the query (construct named)
    REJECTED = "rejected"  # the engine refused to register the query (its message)
    CRASHED = "crashed"  # the engine failed or died while running (its message)
    TIMEOUT = "timeout"  # an engine verb overran the spec's limit
    UNAVAILABLE = "unavailable"  # engine not provisioned, runtime cannot carry it
    INTERRUPTED = "interrupted"
    SKIPPED = "skipped"  # not run: an earlier repetition timed out (limits.skip_after_timeout)
    NOT_JUDGED = "not_judged"  # ran, but no oracle verdict (judging failed or not asked)


#: verbs whose failure means the engine would not take the query (or its inputs) at all
REGISTRATION_VERBS = frozenset({"register_query", "register_stream", "load_static"})


def classify(
    state: str, verdict: str | None, *, error_type: str | None = None, verb: str | None = None
) -> Outcome:
    """The outcome word of a cell from its state and verdict, and for a failed cell the error
    type and failing verb of its run (``status.json``): a failure registering the query is the
    engine rejecting it; any other failure (a crash, an error while pushing) is a crash."""
    if state == "ok":
        return {
            "correct": Outcome.CORRECT,
            "incorrect": Outcome.WRONG,
            "no_output": Outcome.NO_OUTPUT,
        }.get(verdict or "", Outcome.NOT_JUDGED)
    if state == "failed":
        if error_type == "UnsupportedQuery":  # the runner's own refusal (not planned as such)
            return Outcome.REFUSED
        if error_type == "EngineError" and verb in REGISTRATION_VERBS:
            return Outcome.REJECTED
        return Outcome.CRASHED
    try:
        return Outcome(state)
    except ValueError:
        return Outcome.CRASHED


def classify_run(state: str, verdict: str | None, run_dir: Path | None) -> Outcome:
    """``classify`` reading the error type and verb from the run directory's status.json."""
    status = run_dir / "status.json" if run_dir is not None else None
    doc: dict[str, Any] = {}
    if status is not None and status.exists():
        doc = json.loads(status.read_text(encoding="utf-8"))
    return classify(state, verdict, error_type=doc.get("error_type"), verb=doc.get("verb"))


def row_outcome(row: dict[str, Any], root: Path | None = None) -> Outcome:
    """A cell row's outcome: its ``outcome`` column, or derived (rows of older results)."""
    if row.get("outcome"):
        return Outcome(row["outcome"])
    run_dir = root / row["run_dir"] if root is not None and row.get("run_dir") else None
    return classify_run(row["state"], row.get("verdict"), run_dir)


def cell_reason(row: dict[str, Any], outcome: Outcome) -> str:
    """What the coverage cell says after the word: the construct, the engine's message, the
    divergence — first line only, engine traces are long."""
    if outcome is Outcome.CORRECT:
        return ""
    text = row.get("reason") or row.get("divergence") or ""
    if outcome is Outcome.NO_OUTPUT and not text:
        text = "no result although the oracle expects some"
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 160 else first[:159] + "…"


Coverage = dict[str, dict[str, tuple[Outcome, str]]]

#: which outcome a feature cell shows when several cells (repetitions, feedings) share it
SEVERITY = {
    Outcome.CORRECT: 0,
    Outcome.NOT_JUDGED: 1,
    Outcome.SKIPPED: 2,  # its series' timeout, shown with it, is the worse
    Outcome.UNAVAILABLE: 3,
    Outcome.REFUSED: 4,
    Outcome.INTERRUPTED: 5,
    Outcome.NO_OUTPUT: 6,
    Outcome.WRONG: 7,
    Outcome.REJECTED: 8,
    Outcome.TIMEOUT: 9,
    Outcome.CRASHED: 10,
}


def coverage(rows: list[dict[str, Any]], root: Path | None = None) -> Coverage:
    """engine@runtime → query → (outcome, reason); several cells of one pair (repetitions,
    feedings) show the worst outcome."""
    out: Coverage = defaultdict(dict)
    for r in rows:
        name = who(r)
        o = row_outcome(r, root)
        seen = out[name].get(r["query"])
        if seen is None or SEVERITY[o] > SEVERITY[seen[0]]:
            out[name][r["query"]] = (o, cell_reason(r, o))
    return dict(out)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def coverage_markdown(rows: list[dict[str, Any]], root: Path | None = None) -> str:
    """The LSBench Table 1 style table as Markdown: one row per feature (query), one column per
    engine@runtime, each cell the outcome word and its reason."""
    table = coverage(rows, root)
    engines = list(table)
    queries = list(dict.fromkeys(r["query"] for r in rows))
    lines = [
        "| feature | " + " | ".join(engines) + " |",
        "|---|" + "---|" * len(engines),
    ]
    for q in queries:
        cells = []
        for e in engines:
            got = table[e].get(q)
            if got is None:
                cells.append("")
                continue
            word, why = got
            cells.append(_md(f"**{word.value}**" + (f": {why}" if why else "")))
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
