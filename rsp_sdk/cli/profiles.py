"""``rsp profiles …``: the SECRET profiles the oracle knows."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table

from rsp_sdk.cli.common import RspTyper, console, emit_json
from rsp_sdk.model.profile import BUILTIN_PROFILES, Profile, T0Lead, load_profile

app = RspTyper(
    help="SECRET profiles: report strategies, tick, R2S, empty relations, t0 policy.",
    no_args_is_help=True,
)


def _report(p: Profile) -> str:
    return " + ".join(sorted(r.value for r in p.report))


@app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """The built-in profiles and the profile every installed adapter declares."""
    from rsp_sdk.engine.registry import adapter_profiles

    declared = adapter_profiles()
    rows: list[tuple[Profile, str]] = [
        (p, declared[n][0] if n in declared else "") for n, p in BUILTIN_PROFILES.items()
    ] + [(prof, adapter) for n, (adapter, prof) in declared.items() if n not in BUILTIN_PROFILES]
    if as_json:
        emit_json([{**p.model_dump(mode="json"), "adapter": a or None} for p, a in rows])
        return
    # fits 80 columns without cutting a value: one report strategy a line, no box, one-space
    # gaps (the widest row is 78 columns)
    t = Table(
        title="profiles: built-in, and declared by installed adapters\n"
        "(empty: emits empty relations)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=0,
    )
    for col in ("name", "adapter", "report", "tick", "r2s", "empty", "t0\nspan"):
        t.add_column(col, no_wrap=True)
    for p, adapter in rows:
        t.add_row(
            p.name,
            adapter or "-",
            "\n".join(sorted(r.value for r in p.report))
            + ("\n(event-driven)" if p.event_driven else ""),
            p.tick.value,
            p.r2s.value if p.r2s else "query's",
            "yes" if p.emits_empty_relations else "no",
            p.t0.span,
        )
    console.print(t)


@app.command("show")
def show(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="a built-in name or a .toml/.json profile file")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """One profile, every field (a file is validated the same way the oracle loads it)."""
    p = load_profile(name)
    if as_json:
        emit_json(p)
        return
    t = Table(title=p.name, show_header=False)
    t.add_row("description", p.description or "")
    t.add_row("report", _report(p))
    t.add_row("tick", p.tick.value)
    t.add_row("r2s", p.r2s.value if p.r2s else "the query's")
    t.add_row("emits empty relations", str(p.emits_empty_relations))
    t.add_row("event-driven", str(p.event_driven))
    t.add_row("time unit", f"{p.time_unit_ms} ms")
    t.add_row("period", f"{p.period_ms} ms" if p.period_ms else "-")
    lead = " − (ω − β)" if p.t0.lead is T0Lead.RANGE_MINUS_STEP else ""
    first = f"{p.t0.first_ms}{lead}" if p.t0.first_ms is not None else f"query / stream{lead}"
    step = f"{p.t0.step_ms} ms" if p.t0.step_ms else "stream time unit"
    t.add_row("t0 candidates", f"from {first}, step {step}, across one {p.t0.span}")
    console.print(t)
