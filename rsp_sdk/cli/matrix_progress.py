"""How ``rsp matrix run`` shows its progress: a live bar on a terminal, a line per cell in a log.

A live bar redraws one line in place; written to a file, a pipe or a CI log it prints nothing
until the matrix ends — an hour of YABench under ``nohup`` showed an empty log, and a cell
that hung could not be told from one that was slow. Where the output is not a terminal each
finished cell prints one line instead: how many are done, the cell, its outcome and time, the
time elapsed and an estimate of what is left; and a line when a cell starts, so that the
log names the cell under way. Rate_max probes come after the planned cells and their number
is not known beforehand (the search stops when it has its answer): they are numbered on their
own, not counted against the plan's total (which read ``[95/88]``).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from rsp_sdk.cli.matrix_tables import COLOURS, outcome

if TYPE_CHECKING:
    from rsp_sdk.matrix.run import Progress as CellProgress

ProgressFn = Callable[["CellProgress"], None]


@contextmanager
def matrix_progress(
    name: str, console: Console, *, quiet: bool
) -> Iterator[tuple[Callable[[], None], ProgressFn]]:
    """``(stop, progress)``: ``progress`` is what ``run_matrix`` reports to, ``stop`` ends the
    display before something else is printed (the tables after a Ctrl-C)."""
    if quiet or console.is_terminal:
        with _bar(name, console, quiet=quiet) as shown:
            yield shown
    else:
        lines = CellLines(name, console)
        yield lines.stop, lines


@contextmanager
def _bar(
    name: str, console: Console, *, quiet: bool
) -> Iterator[tuple[Callable[[], None], ProgressFn]]:
    """One bar for the matrix (cells done / total, elapsed, ETA) and the current cell's name
    and state beside it."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[current]}"),
        console=console,
        disable=quiet,
        transient=False,
    ) as bar:
        task = bar.add_task(name, total=None, current="preparing inputs")

        def progress(p: CellProgress) -> None:
            if bar.tasks[task].total is None:
                bar.update(task, total=p.total)
            if p.probe and p.event == "start":  # the bar grows by each probe as it starts
                bar.update(task, total=(bar.tasks[task].total or 0) + 1)
            if p.event in ("start", "judge"):
                doing = "running" if p.event == "start" else "judging its recorded run"
                bar.update(task, current=f"{escape(p.cell.label)}: {doing}")
            else:
                word = _word(p)
                colour = COLOURS.get(word, "white")
                bar.update(task, advance=1, current=f"{escape(p.cell.label)}: [{colour}]{word}[/]")

        yield bar.stop, progress


class CellLines:
    """A line per cell started and per cell finished, for a log. Cells a rerun skips are
    counted in one line, not listed (a resumed matrix may have hundreds); what is left is
    estimated from the cells run in this invocation only, as a skipped cell costs nothing."""

    def __init__(self, name: str, console: Console) -> None:
        self.name = name
        self.console = console
        self.done = 0  # skipped or finished, in this invocation
        self.skipped = 0
        self.worked = 0  # cells run or judged now
        self.probes = 0
        self.first_start: float | None = None

    def __call__(self, p: CellProgress) -> None:
        if p.event == "skip":
            self.done += 1
            self.skipped += 1
            return
        if p.event in ("start", "judge"):
            if self.first_start is None:
                self.first_start = time.monotonic()
                self._skips()
            doing = "running" if p.event == "start" else "judging its recorded run"
            probe = "Rate_max probe, " if p.probe else ""
            label = escape(p.cell.label)  # rich markup would eat `[slow]` of toy-py[slow]
            self.console.print(f"{self.name} → {label}: {probe}{doing}", soft_wrap=True)
            return
        if p.probe:
            self._probe(p)
            return
        self.done += 1
        self.worked += 1
        elapsed = time.monotonic() - (self.first_start or time.monotonic())
        left = max(0, p.total - self.done) * elapsed / self.worked
        word = _word(p)
        colour, label = COLOURS.get(word, "white"), escape(p.cell.label)
        self.console.print(
            f"{self.name} [{self.done}/{p.total}] {label}: [{colour}]{word}[/]{_took(p)}; "
            f"{_clock(elapsed)} elapsed, ~{_clock(left)} left",
            soft_wrap=True,
            highlight=False,
        )

    def _probe(self, p: CellProgress) -> None:
        self.probes += 1
        label = escape(p.cell.label)
        self.console.print(
            f"{self.name} [Rate_max probe {self.probes}] {label}: {_word(p)}{_took(p)}",
            soft_wrap=True,
            highlight=False,
        )

    def stop(self) -> None:
        """Nothing is live; a run that only skipped still says so."""
        if self.first_start is None:
            self._skips()

    def _skips(self) -> None:
        if self.skipped:
            self.console.print(f"{self.name}: {self.skipped} cell(s) already done, skipped")
            self.skipped = 0


def _word(p: CellProgress) -> str:
    """The cell's outcome in one word; "ok" for one that ran fine and was not to be judged (a
    performance-only spec), where the tables' "not_judged" would read as a failure."""
    from rsp_sdk.matrix.judge import needs_judging

    row = p.row or {"state": "ok"}
    if row["state"] == "ok" and not needs_judging(p.cell):
        return "ok"
    return outcome(row)


def _took(p: CellProgress) -> str:
    wall = (p.row or {}).get("wall_s")
    return f" ({float(wall):.0f} s)" if wall is not None else ""


def _clock(seconds: float) -> str:
    return str(dt.timedelta(seconds=round(seconds)))
