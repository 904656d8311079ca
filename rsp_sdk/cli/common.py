"""Helpers shared by the command modules: JSON output and consistent console printing."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
import typer.core
from pydantic import BaseModel
from rich.console import Console

from rsp_sdk.errors import InputError

# the provisioning cache, on every command that finds or provisions engines
CacheOpt = Annotated[
    Path | None,
    typer.Option("--cache", help="provisioning cache (default $RSP_CACHE or ~/.cache/rsp-sdk)"),
]

console = Console()
F = TypeVar("F", bound=Callable[..., Any])


def emit_json(value: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Print machine-readable JSON on stdout (nothing else is printed in --json mode)."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    print(json.dumps(data, indent=2, sort_keys=False, default=str))


def parse_engine_config(text: str | None) -> dict[str, Any]:
    """``--engine-config``: a JSON object, inline or ``@file.json`` (every command's one parser)."""
    if not text:
        return {}
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise InputError(
                "file not found", path=path, expected="a JSON object (--engine-config)"
            )
        raw = path.read_text()
    else:
        raw = text
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"--engine-config is not JSON: {exc}", text=raw, expected="a JSON object or @file.json"
        ) from None
    if not isinstance(value, dict):
        raise InputError("--engine-config must be a JSON object", text=raw)
    return value


def duration_ms(value: str | int) -> int:
    """A duration option (``--duration 5m``, ``--interval 500ms``, ``PT10S`` or plain ms) in
    milliseconds: the forms queries accept (``rsp_sdk.query.durations``), so a length is
    written the same way everywhere."""
    import typer

    from rsp_sdk.query.durations import DurationError, parse_duration

    if isinstance(value, int):
        return value
    try:
        return parse_duration(value)
    except DurationError as exc:
        raise typer.BadParameter(f"{exc} (e.g. 5m, 30s, 500ms, PT10S, or plain ms)") from None


class PlainUsageCommand(typer.core.TyperCommand):
    """Usage lines in the usual POSIX style, ``rsp stream import [OPTIONS] SRC...``: typer
    writes required arguments as ``{SRC}``, which reads like a shell brace expansion. The
    option tables name value types a user types (``<str>``), not Python's (``<list[str]>``),
    and a flag takes no value, so it shows none (typer writes ``<bool>``). Its help reflows
    (``reflowed``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflowed(self.help)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:  # typer's vendored click Context
        return [_plain(piece) for piece in super().collect_usage_pieces(ctx)]

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_types(super().get_params(ctx), ctx)


class PlainGroup(typer.core.TyperGroup):
    """A command group whose own options (``rsp --verbose``) are shown as its commands' are,
    and whose help reflows (``reflowed``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflowed(self.help)

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_types(super().get_params(ctx), ctx)


def reflowed(text: str | None) -> str | None:
    """Each paragraph of a docstring on one line. Typer's rich help keeps a docstring's line
    breaks, so a paragraph wrapped at 100 columns in the source came out ragged in an
    80-column terminal; one line per paragraph lets the terminal wrap it."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def _plain_types(params: list[Any], ctx: Any) -> list[Any]:
    """Show no type for a flag and the element type for a repeatable option or argument (the
    type column of typer's tables is ``display_type_rich``)."""
    for param in params:
        shown = _plain_type(param, ctx)
        if shown is not None:
            param.display_type_rich = lambda ctx, shown=shown: shown
    return params


def _plain_type(param: Any, ctx: Any) -> str | None:
    if not hasattr(param, "display_type"):
        return None  # click's own parameter
    if param.param_type_name == "option" and param.metavar is not None:
        return None  # an option whose metavar is shown as written
    if getattr(param, "is_flag", False):
        return ""
    shown = str(param.display_type(ctx))  # <list[str]>, <list[Path]>, <list[a|b]>
    if shown.startswith("<list[") and shown.endswith("]>"):
        return "<" + shown[6:-2].replace("Path", "path") + ">"
    return None


def _plain(piece: str) -> str:
    if piece.startswith("{") and "}" in piece:
        name, _, rest = piece[1:].partition("}")
        return name.upper() + rest
    return piece


class RspTyper(typer.Typer):
    """A ``typer.Typer`` whose commands and groups print plain usage lines and option types
    (``PlainUsageCommand``, ``PlainGroup``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls", PlainGroup)
        super().__init__(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        kwargs.setdefault("cls", PlainUsageCommand)
        decorate: Callable[[F], F] = super().command(*args, **kwargs)
        return decorate
