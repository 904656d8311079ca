"""YABench test definitions: a folder with ``oracle.query`` (a SPARQL template) and
``config.json`` (``vars``: the template values, with WSIZE, WSLIDE, WPOLICY for the window).

YABench's oracle ends its window-close windows at multiples of the slide (``WindowFactory``:
end = k·β, start = max(0, end − ω)), i.e. windows open at t0 = β − ω; that is the first t0 the
spec carries. Its custom aggregate ``<http://yabench/avg>`` becomes SPARQL's ``AVG`` (padded to
the same width so error positions stay right); the two differ only on an empty window, where
YABench returns "" and SPARQL returns 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from rsp_sdk.errors import InputError
from rsp_sdk.model.query import QuerySpec, WindowSpec
from rsp_sdk.model.stream import DEFAULT_STREAM_IRI
from rsp_sdk.query.durations import DurationError, parse_duration
from rsp_sdk.query.sparql import parse_select
from rsp_sdk.query.template import line_col, substitute

_YABENCH_AVG = re.compile(r"<http://yabench/avg>")
_POLICIES = {"onwindowclose": "window_close", "oncontentchange": "content_change"}


def load_yabench_folder(folder: Path, params: Mapping[str, str] | None = None) -> QuerySpec:
    query_path = folder / "oracle.query"
    config_path = folder / "config.json"
    for f in (query_path, config_path):
        if not f.exists():
            raise InputError(
                "not a YABench test folder", path=f, expected="oracle.query and config.json"
            )
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"bad JSON: {exc.msg}", path=config_path, line=exc.lineno) from None
    variables = {str(k): str(v) for k, v in dict(config.get("vars", {})).items()}
    variables.update(params or {})
    if "WSIZE" not in variables:
        raise InputError("no window size", path=config_path, expected='"vars": {"WSIZE": "10s", …}')
    try:
        size = parse_duration(variables["WSIZE"])
        slide = parse_duration(variables.get("WSLIDE", variables["WSIZE"]))
    except DurationError as exc:
        raise InputError(str(exc), path=config_path, expected="WSIZE/WSLIDE like 60s") from None
    template = query_path.read_text(encoding="utf-8")
    sub = substitute(template, variables, path=query_path)
    sparql = _YABENCH_AVG.sub(lambda m: "AVG".ljust(len(m.group())), sub.text)

    def where(offset: int) -> tuple[int, int, str]:
        orig = sub.original_offset(offset)
        line, col = line_col(template, orig)
        lines = template.splitlines()
        return line, col, lines[line - 1] if 0 < line <= len(lines) else ""

    parsed = parse_select(sparql, path=query_path, positions=where)
    policy = variables.get("WPOLICY", "").lower()
    return QuerySpec(
        name=folder.name,
        text=sub.text,
        sparql=sparql,
        variables=parsed.variables,
        windows=[
            WindowSpec(
                name=DEFAULT_STREAM_IRI, stream=DEFAULT_STREAM_IRI, range_ms=size, step_ms=slide
            )
        ],
        parameters=sub.used,
        window_graphs=False,
        first_t0_ms=slide - size,
        report_hint=_POLICIES.get(policy, policy or None),
        source=str(folder),
        warnings=[f"pyoxigraph rejects the query: {parsed.oxigraph_error}"]
        if parsed.oxigraph_error
        else [],
    )
