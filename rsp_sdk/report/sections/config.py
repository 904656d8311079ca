"""The exact configuration of every cell, so a reader can rerun it.

From the run directory's ``config.json`` (what ``rsp run`` recorded) and ``cell.json``: engine
and adapter versions, artifact hashes when the matrix recorded them, runtime, JVM flags or
program, stream sha256, the query text as rendered for the engine, feeding, host and date; the
whole ``config.json`` is one click away.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from rsp_sdk.report.artifacts import Artifacts
from rsp_sdk.report.results import CellRecord, Results, series_id
from rsp_sdk.report.section import render


@dataclass(frozen=True)
class CellConfig:
    id: str
    series: str
    label: str
    facts: list[tuple[str, str]]
    query: str | None
    config_json: str | None


def _date(config: dict[str, Any], cell: CellRecord) -> str | None:
    anchor = (config.get("clock") or {}).get("wall_anchor_ns")
    if isinstance(anchor, int):
        return dt.datetime.fromtimestamp(anchor / 1e9, dt.UTC).isoformat(timespec="seconds")
    return cell.started_at


def _driver(config: dict[str, Any]) -> list[tuple[str, str]]:
    driver = config.get("driver") or {}
    out = []
    if driver.get("kind") == "jvm":
        out.append(("JVM flags", " ".join(driver.get("jvm_flags") or []) or "(none)"))
        out.append(("driver class", str(driver.get("driver_class", ""))))
        out.append(("classpath entries", str(len(driver.get("classpath") or []))))
    elif driver.get("kind") == "process":
        out.append(("program", " ".join(driver.get("argv") or [])))
    return out


def _artifacts(recorded: str | None) -> str | None:
    """``file sha256`` per provisioned file of the engine (cell.json's ``artifacts``)."""
    try:
        hashes = json.loads(recorded) if recorded else {}
    except ValueError:
        return recorded
    if not isinstance(hashes, dict):
        return recorded
    return "; ".join(f"{name} {sha}" for name, sha in sorted(hashes.items())) or None


def facts(cell: CellRecord, config: dict[str, Any]) -> list[tuple[str, str]]:
    engine = config.get("engine") or {}
    stream = config.get("stream") or {}
    versions = config.get("versions") or {}
    host = config.get("host") or {}
    rows: list[tuple[str, Any]] = [
        ("key", cell.key),
        ("engine", f"{cell.engine} {engine.get('version', '')}".strip()),
        ("variant", cell.variant),
        ("adapter version", cell.adapter_version),
        ("artifact sha256", _artifacts(cell.artifacts)),
        ("runtime", cell.runtime),
        *_driver(config),
        (
            "engine config",
            json.dumps(engine.get("engine_config")) if engine.get("engine_config") else None,
        ),
        ("query", cell.query),
        ("parameters", cell.params if cell.params not in (None, "{}", "null") else None),
        ("profile", cell.profile),
        ("stream", cell.stream),
        ("stream sha256", cell.stream_sha256 or stream.get("sha256")),
        ("triples", stream.get("triples")),
        ("feeding", cell.feeding),
        ("rate (triples/s)", cell.rate),
        ("feeder", json.dumps(config["feeder"], sort_keys=True) if config.get("feeder") else None),
        ("repetition", cell.repetition),
        ("host", host.get("name")),
        ("versions", ", ".join(f"{k} {v}" for k, v in versions.items()) or None),
        ("date", _date(config, cell)),
        ("run directory", cell.run_dir),
    ]
    rows += [
        (k, json.dumps(v) if not isinstance(v, str) else v)
        for k, v in (cell.model_extra or {}).items()
    ]
    return [(k, str(v)) for k, v in rows if v not in (None, "")]


class Configuration:
    name = "config"
    title = "Configuration"
    order = 90

    def render(self, results: Results, out: Artifacts) -> Markup:
        cells = []
        for c in results.cells:
            config = results.config(c)
            query = (config.get("query") or {}).get("rendered")
            cells.append(
                CellConfig(
                    f"config-{c.key[:16]}",
                    series_id(c.series),
                    c.label or c.key,
                    facts(c, config),
                    query,
                    json.dumps(config, indent=2, sort_keys=True) if config else None,
                )
            )
        return render("config.html.j2", cells=cells)
