"""Where sections put what they make: figures (PDF + SVG + CSV) and tables (Markdown + LaTeX).

Every figure of the page is also a file a paper can include: vector PDF and SVG sized for a
two-column layout (one column 3.5 in, both 7.16 in), fonts at 8 pt like the body of an ACM or
IEEE paper, plus the numbers it draws as ``data/<name>.csv`` so a reader can replot them. Every
table is written as Markdown (pandas + tabulate) and booktabs LaTeX (pandas' Styler), and kept
for the page and for the terminal's headline tables.

Figures are drawn by module-level ``draw(...) -> (Figure, data)`` functions, so a process pool
can draw them side by side; they are ``matplotlib.figure.Figure`` objects built without pyplot:
no global figure registry, no GUI backend, nothing to close. SVG ids are salted with the
figure's name so that many SVGs inlined in one page never share an id, and both formats are
written without a creation date, so the same results give byte-identical figures.
"""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd
from markupsafe import Markup
from matplotlib.figure import Figure

COLUMN_IN = 3.5
FULL_IN = 7.16

PAPER_RC: dict[Any, Any] = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.2,
    "lines.markersize": 3,
    "svg.fonttype": "path",  # glyphs as paths: the SVG needs no font on the reader's machine
    "pdf.fonttype": 42,
    "figure.dpi": 100,
    "savefig.dpi": 200,  # what a dense figure's rasterized points are drawn at (windows.DENSE)
}

_PROLOG = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_PLACEHOLDER = re.compile(r"<!--rsp-figure:([a-z0-9-]+)-->")


def paper_figure(width: float = COLUMN_IN, height: float = 2.2, **kw: Any) -> Figure:
    """A figure in the paper's style (drawn inside ``render_figure``'s rc context).

    Margins are fixed (:func:`margins`), not computed by constrained layout: with hundreds of
    per-cell figures, constrained layout would be two thirds of the report's time.
    """
    return Figure(figsize=(width, height), **kw)


def margins(
    fig: Figure,
    *,
    left: float = 0.6,
    right: float = 0.12,
    top: float = 0.12,
    bottom: float = 0.45,
    gap: float = 0.12,
    wgap: float = 0.5,
) -> None:
    """Fixed margins and gaps between subplots, in inches."""
    w, h = fig.get_size_inches()
    specs = [spec for ax in fig.axes if (spec := ax.get_subplotspec()) is not None]
    rows = max(1, len({spec.rowspan.start for spec in specs}))
    cols = max(1, len({spec.colspan.start for spec in specs}))
    inner_h = (h - top - bottom - gap * (rows - 1)) / rows
    inner_w = (w - left - right - wgap * (cols - 1)) / cols
    fig.subplots_adjust(
        left=left / w,
        right=1 - right / w,
        top=1 - top / h,
        bottom=bottom / h,
        hspace=gap / inner_h,
        wspace=wgap / inner_w,
    )


def slug(text: str) -> str:
    """A file-name and HTML-id safe form of ``text``."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


DrawFn = Callable[..., tuple[Figure, pd.DataFrame]]


def render_figure(root: Path, name: str, draw: DrawFn, args: tuple[Any, ...]) -> None:
    """Draw one figure and write its PDF, SVG and CSV (runs in a worker process)."""
    base = root / "figures" / name
    with matplotlib.rc_context({**PAPER_RC, "svg.hashsalt": name}):
        fig, data = draw(*args)
        fig.savefig(base.with_suffix(".pdf"), metadata={"CreationDate": None})
        fig.savefig(base.with_suffix(".svg"), metadata={"Date": None})
    data.to_csv(root / "data" / f"{name}.csv", index=False)


@dataclass(frozen=True)
class FigureRef:
    name: str
    caption: str

    @property
    def svg(self) -> Markup:
        """A placeholder the page build replaces with the figure's SVG (drawn in parallel)."""
        return Markup(f"<!--rsp-figure:{self.name}-->")


@dataclass(frozen=True)
class TableRef:
    name: str
    caption: str
    frame: pd.DataFrame
    headline: bool = False


@dataclass
class Artifacts:
    """The output folder being built (a temporary folder until the whole report is written).

    Figures are drawn by ``workers`` processes (matplotlib is single-threaded and a matrix has
    hundreds of figures); sections get a :class:`FigureRef` at once and the page build inlines
    the SVGs after :meth:`finish`.
    """

    root: Path
    workers: int = 1
    figures: list[FigureRef] = field(default_factory=list)
    tables: list[TableRef] = field(default_factory=list)
    _names: set[str] = field(default_factory=set)
    _pending: list[Future[None]] = field(default_factory=list)
    _pool: ProcessPoolExecutor | None = None

    def __post_init__(self) -> None:
        for sub in ("figures", "tables", "data"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)

    def _unique(self, name: str) -> str:
        base, n = slug(name), 1
        name = base
        while name in self._names:
            n += 1
            name = f"{base}-{n}"
        self._names.add(name)
        return name

    def figure(self, name: str, draw: DrawFn, args: tuple[Any, ...], caption: str) -> FigureRef:
        """Draw ``draw(*args)`` as PDF + SVG + CSV, in a worker when there are several."""
        name = self._unique(name)
        if self.workers <= 1:
            render_figure(self.root, name, draw, args)
        else:
            if self._pool is None:
                ctx = multiprocessing.get_context("forkserver" if os.name == "posix" else "spawn")
                self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx)
            self._pending.append(self._pool.submit(render_figure, self.root, name, draw, args))
        ref = FigureRef(name, caption)
        self.figures.append(ref)
        return ref

    def finish(self) -> None:
        """Wait for every figure; the first drawing error is raised here."""
        try:
            for future in self._pending:
                future.result()
        finally:
            if self._pool is not None:
                self._pool.shutdown(cancel_futures=True)
                self._pool = None
            self._pending.clear()

    def inline(self, page: str) -> str:
        """The page with every figure placeholder replaced by its SVG element."""

        def svg(match: re.Match[str]) -> str:
            text = (self.root / "figures" / f"{match.group(1)}.svg").read_text(encoding="utf-8")
            return _PROLOG.sub("", text, count=1)

        return _PLACEHOLDER.sub(svg, page)

    def table(
        self, name: str, frame: pd.DataFrame, caption: str, *, headline: bool = False
    ) -> TableRef:
        """Write ``frame`` (plain text cells) as Markdown and booktabs LaTeX."""
        name = self._unique(name)
        text = frame.astype(str).replace({"nan": "–", "None": "–", "<NA>": "–"})
        md = text.to_markdown(index=False)
        (self.root / "tables" / f"{name}.md").write_text(f"{md}\n", encoding="utf-8")
        tex = text.to_latex(index=False, escape=True, caption=caption, label=f"tab:{name}")
        (self.root / "tables" / f"{name}.tex").write_text(tex, encoding="utf-8")
        ref = TableRef(name, caption, text, headline)
        self.tables.append(ref)
        return ref
