"""``--only``: picking cells of a plan by their axes (``engine=cqels,query=q4``).

One grammar for ``rsp matrix plan`` and ``rsp matrix run`` (and a rate search's probes): keys AND
together, a repeated key ORs its values, commas inside brackets belong to a templated query's
name, and ``key=`` matches a cell key by prefix, as git matches a commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rsp_sdk.errors import InputError

if TYPE_CHECKING:
    from rsp_sdk.matrix.plan import Cell


def parse_only(only: list[str]) -> dict[str, set[str]]:
    """``--only`` items as ``{axis: values}``: within an item, ``AXIS=V`` parts are separated by
    commas outside brackets, so a templated query name keeps its own commas
    (``query=qt[R=PT2S,S=PT1S]``); a part without ``=`` continues the previous value
    (``query=a,b`` is not two axes)."""
    wanted: dict[str, set[str]] = {}
    for item in only:
        parts: list[str] = []
        depth = 0
        start = 0
        for i, ch in enumerate(item):
            depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(ch, 0)
            if ch == "," and depth <= 0:
                parts.append(item[start:i])
                start = i + 1
        parts.append(item[start:])
        pairs: list[list[str]] = []
        for part in parts:
            k, sep, v = part.partition("=")
            if sep and k.strip().isidentifier():
                pairs.append([k.strip(), v])
            elif pairs:  # a comma inside a value: "query=a,b" keeps "a,b"
                pairs[-1][1] += "," + part
            elif part.strip():
                raise InputError(f"bad --only {part!r}", expected="AXIS=VALUE, e.g. engine=cqels")
        for k, v in pairs:
            wanted.setdefault(k, set()).add(v.strip())
    return wanted


def select(cells: list[Cell], only: list[str]) -> list[Cell]:
    """``--only engine=cqels,query=q4``: keys AND together, repeated keys OR together."""
    wanted = parse_only(only)
    known = set(cells[0].axes()) if cells else set()
    for k in wanted:
        if cells and k not in known:
            raise InputError(f"unknown axis {k!r} in --only", expected=", ".join(sorted(known)))

    def keep(c: Cell) -> bool:
        axes = c.axes()
        return all(_matches(k, axes[k], vs) for k, vs in wanted.items())

    return [c for c in cells if keep(c)]


def _matches(axis: str, value: Any, wanted: set[str]) -> bool:
    """``value`` is one of ``wanted``; a key is matched by any prefix of it."""
    if axis == "key":
        return any(str(value).startswith(w) for w in wanted if w)
    return _fmt(value) in wanted


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
