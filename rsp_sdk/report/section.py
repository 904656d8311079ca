"""A report section: a small object with a name, an order and ``render(results, out)``.

As asv's publishers (``OutputPublisher``: ``name``, ``order``, ``publish()``), each part of the
report is one class in its own module under ``rsp_sdk.report.sections``; the page is the sections
sorted by ``order``. ``render`` reads the results, writes its figures and tables through
:class:`~rsp_sdk.report.artifacts.Artifacts`, and returns its HTML fragment, rendered from its
own Jinja template. A section without data renders a one-line note saying so, so a reader of a
partial matrix sees what is not there instead of a page that silently lacks it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jinja2
from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.results import Results

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("rsp_sdk.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def render(template: str, **context: Any) -> Markup:
    """Render one of ``rsp_sdk/report/templates`` (autoescaped) as a safe fragment."""
    return Markup(ENV.get_template(template).render(**context))


@runtime_checkable
class Section(Protocol):
    """One part of the page."""

    name: str  # the HTML id and the prefix of its files
    title: str
    order: int

    def render(self, results: Results, out: Artifacts) -> Markup:
        """The section's HTML fragment (figures and tables written through ``out``)."""
        ...
