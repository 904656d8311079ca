"""Helpers shared by the command modules: JSON output and consistent console printing."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from rich.console import Console

console = Console()


def emit_json(value: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Print machine-readable JSON on stdout (nothing else is printed in --json mode)."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    print(json.dumps(data, indent=2, sort_keys=False, default=str))
