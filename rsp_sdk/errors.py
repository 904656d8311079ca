"""Error types shared by every part of the SDK.

Users feed the SDK files written by other tools (benchmarks from 2013, engine logs, hand-written
queries). When one is wrong, the only useful message names the file, the line and the offending text
together with what was expected there, so ``InputError`` carries exactly those fields and the CLI
prints them without a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


class RspError(Exception):
    """Base class of errors the CLI reports as a clean message with a non-zero exit code."""


class InputError(RspError):
    """Bad input data: says where (file, line, column) and what was expected."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
        text: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.path = Path(path) if path is not None else None
        self.line = line
        self.column = column
        self.text = text
        self.expected = expected
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        out = f"{where}{self.message}"
        if self.expected:
            out += f"; expected {self.expected}"
        if self.text is not None:
            shown = self.text if len(self.text) <= 200 else self.text[:197] + "..."
            out += f"\n    offending text: {shown!r}"
        return out


def validated(model: type[M], data: Any, *, path: Path, what: str, expected: str) -> M:
    """``model.model_validate(data)``, its first error raised as an :class:`InputError` that
    names the field (``invalid <what> field a.b: …``): every file the SDK reads into a pydantic
    model (manifest, image lock, profile, query) reports a bad field the same way."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or f"({what})"
        raise InputError(
            f"invalid {what} field {where}: {first['msg']}",
            path=path,
            text=str(first.get("input"))[:200],
            expected=expected,
        ) from None
