"""MkDocs hooks (mkdocs.yml ``hooks:``): the CLI reference is generated at build time."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- rsp-cli-reference -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from rsp_sdk.cli.reference import markdown as cli_markdown

    return markdown.replace(MARKER, cli_markdown(level=2))
