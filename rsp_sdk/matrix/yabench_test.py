"""A YABench test folder (``config.json`` + ``engine.query`` + ``oracle.query``) as a matrix spec.

YABench users keep their tests as they are: ``rsp matrix plan|run FOLDER`` reads YABench's own
``config.json`` and turns it into a ``MatrixSpec``: each entry of ``tests`` is one SG1 stream
(``generator``, ``duration``, ``seed``, ``stations`` and ``interval``, each on the test or
inherited from the top level, as YABench's runner reads them) and the folder's query (the
template ``oracle.query`` filled with ``vars``, read by ``rsp_sdk.query``) on it, judged by the
oracle and YABench's per-window metrics, in gracious mode too when ``graceful`` is "true". The
engine is the one ``exec.engine`` names (its jar: yabench-csparql or yabench-cqels), else the
folder's name prefix (``csparql_Q1_1``), else both of YABench's engines. ``engine.query`` is
YABench's hand-written engine dialect: the matrix renders ``oracle.query`` for each engine
instead, so both sides read the same query.

Every problem is an ``InputError`` (exit 2) naming ``config.json``, the line and the key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rsp_sdk.errors import InputError
from rsp_sdk.matrix.spec import MatrixSpec
from rsp_sdk.query.durations import DurationError, parse_duration

ENGINES = {"csparql": "csparql", "cqels": "cqels"}  # YABench's engine jars → our adapters
EXPECTED_S = 30.0  # per cell: an SG1 test of minutes at YABench's sizes


def is_yabench_test(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


def _line(text: str, key: str) -> int | None:
    """The first line of ``text`` where the JSON key ``key`` appears."""
    pattern = re.compile(r'"' + re.escape(key) + r'"\s*:')
    for n, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return n
    return None


class _Config:
    """config.json with the error reporting every reader of it needs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "config.json"
        self.text = self.path.read_text(encoding="utf-8")
        try:
            data = json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"bad JSON: {exc.msg}", path=self.path, line=exc.lineno, expected="YABench config"
            ) from None
        if not isinstance(data, dict):
            raise InputError("not a JSON object", path=self.path, expected="YABench config")
        self.data: dict[str, Any] = data

    def error(self, key: str, message: str, expected: str, line: int | None = None) -> InputError:
        return InputError(
            f"YABench config key {key!r}: {message}",
            path=self.path,
            line=line or _line(self.text, key),
            expected=expected,
        )

    def value(self, test: dict[str, Any], key: str, expected: str) -> str:
        """A test's ``key``, or the top level's (YABench's runner reads both)."""
        value = test.get(key, self.data.get(key))
        if value is None:  # shown at the test that lacks it (its "name")
            name = re.compile(r'"name"\s*:\s*"?' + re.escape(str(test.get("name", ""))) + r"\b")
            at = next((n for n, t in enumerate(self.text.splitlines(), 1) if name.search(t)), None)
            raise self.error(key, "missing (on the test and at the top level)", expected, at)
        return str(value)

    def duration(self, test: dict[str, Any], key: str) -> int:
        raw = self.value(test, key, "a duration like 30s or 5m")
        try:
            return parse_duration(raw)
        except DurationError as exc:
            raise self.error(key, str(exc), "a duration like 30s or 5m") from None

    def integer(self, test: dict[str, Any], key: str) -> int:
        raw = self.value(test, key, "an integer")
        try:
            return int(raw)
        except ValueError:
            raise self.error(key, f"{raw!r} is not an integer", "an integer") from None


def _engines(folder: Path, config: _Config) -> list[str]:
    engine = str(config.data.get("exec.engine", ""))
    for token, name in ENGINES.items():
        if token in Path(engine).name or token in engine.split("/")[0]:
            return [name]
    prefix = folder.name.split("_")[0].lower()
    return [ENGINES[prefix]] if prefix in ENGINES else list(ENGINES.values())


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def load_yabench_test(folder: Path) -> MatrixSpec:
    """The matrix spec of a YABench test folder."""
    folder = folder.resolve()
    for name in ("oracle.query", "config.json"):
        if not (folder / name).is_file():
            raise InputError(
                "not a YABench test folder (and a spec folder must be one)",
                path=folder / name,
                expected="a YABench test: oracle.query and config.json",
            )
    config = _Config(folder)
    tests = config.data.get("tests")
    if not isinstance(tests, list) or not tests or not all(isinstance(t, dict) for t in tests):
        raise config.error("tests", "missing or empty", 'a list like [{"name": "1", …}]')
    streams: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for i, test in enumerate(tests):
        name = str(test.get("name", i + 1))
        generator = config.value(test, "generator", '"SG1"')
        if generator.upper() != "SG1":
            raise config.error(
                "generator", f"{generator!r}: only YABench's SG1 generator is reimplemented", "SG1"
            )
        params = {
            "stations": config.integer(test, "stations"),
            "interval_ms": config.duration(test, "interval"),
            "duration_ms": config.duration(test, "duration"),
            "seed": config.integer(test, "seed"),
        }
        stream = f"test-{name}"
        streams.append({"name": stream, "generator": {"name": "yabench", "params": params}})
        graceful = test.get("graceful", config.data.get("graceful", "false"))
        queries.append(
            {
                "files": [str(folder)],
                "streams": [stream],
                "group": f"test {name}",
                "gracious": _truthy(graceful),
            }
        )
    return MatrixSpec.model_validate(
        {
            "name": folder.name,
            "description": f"YABench test {folder.name} ({config.path})",
            "engines": [{"name": e} for e in _engines(folder, config)],
            "streams": streams,
            "queries": queries,
            "metrics": ["csrbench", "yabench", "perf"],
            "expected_cell_s": EXPECTED_S,
        }
    )
