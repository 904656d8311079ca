"""One word per cell for the verdict grid: the run's state when it did not run to the end, else
the oracle's verdict; and one summary (text + colour class) for the repetitions of a series."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from enum import StrEnum

from rsp_sdk.report.results import CellRecord


class Outcome(StrEnum):
    """Grid vocabulary, most severe first (a series shows its worst repetition's colour)."""

    FAILED = "failed"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    INCORRECT = "incorrect"
    NO_OUTPUT = "no_output"
    REFUSED = "refused"
    UNAVAILABLE = "unavailable"
    NOT_JUDGED = "not_judged"
    SKIPPED = "skipped"  # an earlier repetition timed out (limits.skip_after_timeout)
    CORRECT = "correct"
    MISSING = "missing"


SEVERITY = {o: i for i, o in enumerate(Outcome)}


def outcome(cell: CellRecord) -> Outcome:
    if cell.state != "ok":
        try:
            return Outcome(cell.state)
        except ValueError:
            return Outcome.FAILED
    try:
        return Outcome(cell.verdict)
    except ValueError:
        return Outcome.NOT_JUDGED


def short_reason(reason: str, limit: int = 160) -> str:
    """The first line of a reason, cut at ``limit`` characters (engine traces are long)."""
    first = reason.strip().splitlines()[0] if reason.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def summarize(cells: Sequence[CellRecord]) -> tuple[str, Outcome]:
    """``("correct ×3", CORRECT)``, or ``("incorrect 1/3", INCORRECT)`` when repetitions differ."""
    counts = Counter(outcome(c) for c in cells)
    worst = min(counts, key=lambda o: SEVERITY[o])
    label = worst.value.replace("_", " ")
    if len(counts) == 1:
        return (label if len(cells) == 1 else f"{label} ×{len(cells)}"), worst
    return f"{label} {counts[worst]}/{len(cells)}", worst
