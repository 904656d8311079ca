"""The readable tables people get from the comparison commands."""

from __future__ import annotations

from rich.console import Console

from rsp_sdk.compare.csrbench import verdict
from rsp_sdk.compare.lsbench import Partition, comparability
from rsp_sdk.compare.relations import expected_relations, result_relations
from rsp_sdk.compare.render import mismatch_renderable, verdict_renderable, yabench_renderable
from rsp_sdk.compare.yabench import window_metrics
from tests.compare_tables import b, expected_table, num, result_table, s


def text(renderable: object) -> str:
    console = Console(width=160, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_verdict_table_spells_out_the_divergence() -> None:
    exp = expected_relations(
        expected_table({0: [(0, 1000, [b(x="a", v=num("5"))]), (1000, 2000, s("b"))]})
    )
    act = result_relations(result_table([[b(x="a", v=num("5.0", "double"))], s("c")]))
    out = text(verdict_renderable(verdict(exp, act, allow_split=False)))
    assert "INCORRECT" in out
    assert "seq 1, reported at 2000 ms, window [1000, 2000)" in out
    assert "missing (1)" in out and "?x=<http://example.org/b>" in out
    assert "extra (1)" in out and "?x=<http://example.org/c>" in out
    good = text(
        verdict_renderable(
            verdict(exp, act.__class__(act.query, act.relations[:1], act.labels), allow_split=False)
        )
    )
    assert "CORRECT" in good and "INCORRECT" not in good and "0 ms" in good


def test_yabench_table_and_mismatch_table() -> None:
    exp = expected_relations(expected_table({0: [(0, 1000, s("a", "b")), (1000, 2000, s("c"))]}))[0]
    act = result_relations(result_table([s("a"), s("zz"), s("c")]))
    out = text(
        yabench_renderable(window_metrics(exp, act, content_change=False, allow_groups=False))
    )
    assert "t0 = 0 ms" in out and "unexpected output" in out
    assert "[0, 1000)" in out and "0.500" in out
    assert "unexpected outputs" in out
    comp = comparability({"A": (act, Partition.RELATION), "B": (act, Partition.ELEMENT)}, 1.0)
    out = text(mismatch_renderable(comp.pairs, comp))
    assert "LSBench mismatch" in out and "comparable within ε = 1.0 %" in out
