"""Where sections put what they make: figures (PDF + SVG + CSV) and tables (Markdown + LaTeX).

Every figure of the page is also a file a paper can include: vector PDF and SVG sized for a
two-column layout (one column 3.5 in, both 7.16 in), fonts at 8 pt like the body of an ACM or
IEEE paper, plus the numbers it draws as ``data/<name>.csv`` so a reader can replot them. Every
table is written as Markdown (pandas + tabulate) and booktabs LaTeX (pandas' Styler), and kept
for the page and for the terminal's headline tables.

Figures are ``matplotlib.figure.Figure`` objects built without pyplot: no global figure
registry, no GUI backend, nothing to close. SVG ids are salted with the figure's name so that
many SVGs inlined in one page never share an id, and both formats are written without a
creation date, so the same results give byte-identical figures.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
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
}

_PROLOG = re.compile(r"^.*?(?=<svg)", re.DOTALL)


def paper_figure(width: float = COLUMN_IN, height: float = 2.2, **kw: Any) -> Figure:
    """A figure in the paper's style (use inside ``paper_style()``)."""
    return Figure(figsize=(width, height), layout="constrained", **kw)


@contextlib.contextmanager
def paper_style() -> Iterator[None]:
    with matplotlib.rc_context(PAPER_RC):
        yield


def slug(text: str) -> str:
    """A file-name and HTML-id safe form of ``text``."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


@dataclass(frozen=True)
class FigureRef:
    name: str
    caption: str
    svg: Markup  # the SVG element, inlined in the page


@dataclass(frozen=True)
class TableRef:
    name: str
    caption: str
    frame: pd.DataFrame
    headline: bool = False


@dataclass
class Artifacts:
    """The output folder being built (a temporary folder until the whole report is written)."""

    root: Path
    figures: list[FigureRef] = field(default_factory=list)
    tables: list[TableRef] = field(default_factory=list)
    _names: set[str] = field(default_factory=set)

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

    def figure(self, name: str, fig: Figure, data: pd.DataFrame, caption: str) -> FigureRef:
        """Write ``fig`` as PDF and SVG and its numbers as CSV; return it for inlining."""
        name = self._unique(name)
        base = self.root / "figures" / name
        with matplotlib.rc_context({"svg.hashsalt": name}):
            fig.savefig(base.with_suffix(".pdf"), metadata={"CreationDate": None})
            fig.savefig(base.with_suffix(".svg"), metadata={"Date": None})
        data.to_csv(self.root / "data" / f"{name}.csv", index=False)
        svg = _PROLOG.sub("", base.with_suffix(".svg").read_text(encoding="utf-8"), count=1)
        ref = FigureRef(name, caption, Markup(svg))
        self.figures.append(ref)
        return ref

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
