"""``rsp report``: figures and tables for a paper, and one page to browse, from matrix results.

The report reads only a results folder written by ``rsp matrix run`` (:mod:`.results`) and never
starts an engine. The page is a list of sections (:mod:`.section`, one module each under
:mod:`.sections`, as asv's publishers); figures are matplotlib (vector PDF + SVG, plus their
numbers as CSV), tables are pandas frames written as Markdown and booktabs LaTeX
(:mod:`.artifacts`), and the page is one self-contained HTML file rendered with Jinja (inline
CSS and SVG, no script, no network). :func:`build_report` writes it all or nothing.
"""

from __future__ import annotations

from rsp_sdk.report.build import ReportSummary, build_report
from rsp_sdk.report.results import Results

__all__ = ["ReportSummary", "Results", "build_report"]
