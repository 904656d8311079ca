"""``${VAR}`` template parameters (YABench, CityBench-style query templates).

Substitution keeps a map from positions in the substituted text back to the original, so a
syntax error found later in the substituted query is reported at the line and column the user
wrote.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rsp_sdk.errors import InputError

_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.\-]*)\}")


@dataclass(frozen=True)
class Substituted:
    """The substituted text and the offsets needed to map positions back."""

    text: str
    original: str
    # (start in text, start in original, length in text, length in original) per replacement
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)
    used: dict[str, str] = field(default_factory=dict)

    def original_offset(self, offset: int) -> int:
        """Offset in the original text of a character offset in the substituted text."""
        starts = [s[0] for s in self.spans]
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0:
            return offset
        t_start, o_start, t_len, o_len = self.spans[i]
        if offset < t_start + t_len:
            return o_start  # inside a replacement: point at the ${VAR} that produced it
        return o_start + o_len + (offset - t_start - t_len)


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def offset_of(text: str, line: int, col: int) -> int:
    """Character offset of a 1-based (line, column)."""
    lines = text.split("\n")
    line = max(1, min(line, len(lines)))
    return sum(len(x) + 1 for x in lines[: line - 1]) + max(0, col - 1)


def substitute(
    text: str, params: Mapping[str, str], *, path: Path | str | None = None
) -> Substituted:
    """Replace every ``${NAME}``; a missing parameter is an error naming it and where it is."""
    out: list[str] = []
    spans: list[tuple[int, int, int, int]] = []
    used: dict[str, str] = {}
    pos = 0
    t_len = 0
    for m in _PARAM.finditer(text):
        name = m.group(1)
        if name not in params:
            line, col = line_col(text, m.start())
            known = ", ".join(sorted(params)) or "none given"
            raise InputError(
                f"template parameter {name!r} has no value",
                path=path,
                line=line,
                column=col,
                text=text.splitlines()[line - 1] if text else None,
                expected=f"a value for {name} (e.g. --param {name}=…; given: {known})",
            )
        value = str(params[name])
        out.append(text[pos : m.start()])
        t_len += m.start() - pos
        spans.append((t_len, m.start(), len(value), m.end() - m.start()))
        out.append(value)
        t_len += len(value)
        used[name] = value
        pos = m.end()
    out.append(text[pos:])
    return Substituted("".join(out), text, spans, used)
