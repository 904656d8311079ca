"""`rsp report` on a real results folder: the page in a real headless Chromium, the paper files,
a partial matrix, and every bad input path.

The results come from real engine runs judged by the oracle (the `report_results` fixture); the
page is opened from file:// in Debian's chromium driven by Playwright, with every request and
console message recorded, and a screenshot is kept (``$RSP_REPORT_SHOTS`` or the test's tmp).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from markupsafe import escape

from rsp_sdk.engine.provision import ProvisionCache
from rsp_sdk.matrix.engines import artifact_hashes
from tests.conftest import run_rsp
from tests.oracle_support import rsp_main, spark
from tests.real_engines import engine_missing

__all__ = ["spark"]

CHROMIUM = Path("/usr/bin/chromium")
SPEC = Path(__file__).parent / "fixtures" / "report_matrix.toml"
MATRIX_TIMEOUT_S = 1500  # 6 cells + the oracle: about 2 min on an idle 2-core machine
pytestmark = pytest.mark.timeout(MATRIX_TIMEOUT_S + 300)


@pytest.fixture(scope="session")
def report_results(spark: Any, shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RESULTS of a real matrix run (tests/fixtures/report_matrix.toml): rsp-js, and rsp-rs
    where provisioned, on CSRBench Q4, judged by the oracle. It runs in-process (``run_matrix``,
    what `rsp matrix run` calls) on the test session's SparkSession: the report is this file's
    subject, and a subprocess would start a Spark JVM of its own for the same cells.

    ``$RSP_REPORT_RESULTS`` names a folder that `rsp matrix run` already wrote from this spec
    (the matrix takes minutes on a loaded machine); it is resumed, so it is complete after."""
    from rsp_sdk.matrix.run import run_matrix
    from rsp_sdk.matrix.spec import load_spec

    reason = engine_missing("rspjs")
    if reason:
        pytest.skip(reason)
    given = os.environ.get("RSP_REPORT_RESULTS")
    results = Path(given) if given else tmp_path_factory.mktemp("report-results") / "RESULTS"
    # some cell judged incorrect or failed: data for the report, not a test failure
    run_matrix(load_spec(SPEC), SPEC, results)
    assert json.loads((results / "matrix.json").read_text())["spec"]["name"] == "report-test"
    return results


@pytest.fixture(scope="session")
def report(
    rsp_exe: list[str], report_results: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report") / "REPORT"
    proc = run_rsp(rsp_exe, "report", report_results, "-o", out)
    assert "Warning" not in proc.stderr, proc.stderr  # a reader sees the report, not numpy
    return out, proc.stdout


def _cells(results: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(results.glob("cells/*/cell.json"))]


def _chromium_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (Debian: apt-get install chromium)"
    return None


def test_report_files(report: tuple[Path, str], report_results: Path) -> None:
    out, stdout = report
    marker = json.loads((out / "report.json").read_text())
    assert marker["cells"] == len(_cells(report_results)) > 0
    assert marker["figures"], "real runs have resource samples: at least one figure"
    for name in marker["figures"]:
        pdf = (out / "figures" / f"{name}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF-")
        svg = ElementTree.parse(out / "figures" / f"{name}.svg").getroot()
        assert svg.tag.endswith("svg")
        assert (out / "data" / f"{name}.csv").read_text().count("\n") >= 2
    for name in marker["tables"]:
        assert "|" in (out / "tables" / f"{name}.md").read_text()
        tex = (out / "tables" / f"{name}.tex").read_text()
        assert "\\toprule" in tex and "\\bottomrule" in tex
    assert f"report: {out / 'index.html'}" in stdout.replace("\n", "")
    for cell in _cells(report_results):  # the headline verdict table on the terminal
        assert cell["query"] in stdout
    # reproducibility: every ran cell names its engine's provisioned files by sha256, as the
    # engine's lock.json records them, and the page shows them
    page = (out / "index.html").read_text()
    ran = [c for c in _cells(report_results) if c["state"] == "ok"]
    assert ran
    for cell in ran:
        lock = ProvisionCache().lock(cell["engine"])
        assert json.loads(cell["artifacts"]) == artifact_hashes(lock) != {}, cell["engine"]
        assert all(sha in page for sha in json.loads(cell["artifacts"]).values())


def test_report_page_in_chromium(
    report: tuple[Path, str], report_results: Path, tmp_path: Path
) -> None:
    reason = _chromium_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    out, _ = report
    shots = Path(os.environ.get("RSP_REPORT_SHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    requests: list[str] = []
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto((out / "index.html").as_uri(), wait_until="load")
            page.screenshot(path=str(shots / "report-top.png"))
            page.screenshot(path=str(shots / "report-full.png"), full_page=True)
            grid = page.eval_on_selector_all(
                "#table-verdicts tbody tr",
                "rows => rows.map(r => [...r.children].map(c => c.innerText.trim()))",
            )
            links = page.eval_on_selector_all(
                "#table-verdicts td a", "as => as.map(a => a.getAttribute('href'))"
            )
            targets = [page.locator(h).count() for h in links]
            svgs = page.locator("figure svg").count()
            page.locator("figure").first.screenshot(path=str(shots / "report-figure.png"))
            rate_max = page.eval_on_selector_all(
                "#table-rate-max tbody tr", "rows => rows.map(r => r.innerText)"
            )
            # a table wider than the window scrolls inside its section, never the whole page
            unwrapped = page.locator("table.data:not(div.wide > table)").count()
            page_width = page.evaluate("() => document.documentElement.scrollWidth")
            page.locator(f"#{links[0][1:]}").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "report-detail.png"))
        finally:
            browser.close()
    assert problems == []
    assert (unwrapped, page_width) == (0, 1280)
    assert requests and all(u.startswith("file://") for u in requests), requests
    assert len(requests) == 1  # the page itself: every style and figure is inline
    expected = _expected_grid(_cells(report_results))
    shown = {
        (row[0], q): text
        for row in grid
        for q, text in zip(_grid_columns(out), row[1:], strict=True)
    }
    assert {pos: shown[pos] for pos in expected} == expected
    assert targets == [1] * len(links)
    assert svgs >= 1
    assert any(row.startswith("rspjs@subprocess") for row in rate_max), rate_max


def _expected_grid(cells: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """What each verdict grid cell must say, from the cell.json files: the outcome (the state
    when the run did not finish, else the verdict) and, over repetitions, ×n when they agree."""
    groups: dict[tuple[str, str], list[str]] = {}
    for c in cells:
        column = c["query"] + (f" @{c['rate']:g}/s" if c["rate"] is not None else "")
        outcome = c["state"] if c["state"] != "ok" else c["verdict"]
        groups.setdefault((f"{c['engine']}@{c['runtime']}", column), []).append(outcome)
    out = {}
    for pos, outcomes in groups.items():
        if len(set(outcomes)) == 1:
            word = outcomes[0].replace("_", " ")
            out[pos] = word if len(outcomes) == 1 else f"{word} ×{len(outcomes)}"
    return out  # mixed repetitions: order of severity is the report's, not checked here


def _grid_columns(out: Path) -> list[str]:
    header = (out / "tables" / "verdicts.md").read_text().splitlines()[0]
    return [c.strip() for c in header.strip("|").split("|")][1:]


def test_incorrect_cell_shows_first_divergence(
    report: tuple[Path, str], report_results: Path
) -> None:
    wrong = sorted(
        (c for c in _cells(report_results) if c["verdict"] == "incorrect"),
        key=lambda c: (c["label"].rsplit("/rep=", 1)[0], c["repetition"]),
    )
    if not wrong:
        rsprs = {c["state"]: c["reason"] for c in _cells(report_results) if c["engine"] == "rsprs"}
        pytest.skip(f"no cell judged incorrect to show (rsp-rs cells: {rsprs})")
    page = (report[0] / "index.html").read_text()
    detail = json.loads(wrong[0]["divergence_detail"])
    assert f"First diverging relation of {wrong[0]['label']}<" in page
    # repetitions that diverged alike are shown once, by the first of them
    series = wrong[0]["label"].rsplit("/rep=", 1)[0]
    alike = {c["divergence"] for c in wrong if c["label"].startswith(series + "/rep=")}
    assert page.count(f"First diverging relation of {series}/rep=") == len(alike)
    for binding, side in [(b, "minus") for b in detail["missing"]] + [
        (b, "plus") for b in detail["extra"]
    ]:
        text = str(escape(json.dumps(binding, sort_keys=True, ensure_ascii=False)))
        assert f'<span class="{side}">{text}</span>' in page


def test_partial_matrix_lists_missing_cells(
    rsp_exe: list[str], report_results: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "RESULTS"
    shutil.copytree(report_results, partial)
    killed = sorted(partial.glob("cells/*/cell.json"))[0]
    label = json.loads(killed.read_text())["label"]
    engine = json.loads(killed.read_text())["engine"]
    killed.unlink()  # what a matrix killed during this cell leaves
    # and a spec that does not ask for LSBench: its section says so (not "no two engines")
    matrix = json.loads((partial / "matrix.json").read_text())
    matrix["spec"]["metrics"] = ["csrbench", "perf"]
    (partial / "matrix.json").write_text(json.dumps(matrix))
    (partial / "mismatch.parquet").unlink(missing_ok=True)
    proc = run_rsp(rsp_exe, "report", partial, "-o", tmp_path / "REPORT")
    assert "1 planned cell(s) missing" in proc.stdout
    page = (tmp_path / "REPORT" / "index.html").read_text()
    assert "This matrix is partial" in page and label in page
    assert label in (tmp_path / "REPORT" / "tables" / "missing.md").read_text()
    assert "does not ask for LSBench" in page
    planned = [c for c in matrix["plan"] if c["engine"] == engine]
    runtime = planned[0]["runtime"]
    progress = (tmp_path / "REPORT" / "tables" / "engines-progress.md").read_text()
    row = f"{engine}@{runtime} | {len(planned) - 1} of {len(planned)} | 1"
    assert row in " ".join(progress.split()), progress


def test_a_cell_directory_renamed_to_a_new_key_keeps_its_run(
    report_results: Path, tmp_path: Path
) -> None:
    """ren16 was re-keyed by hand: 43 cell directories renamed to their new key, cell.json's
    key rewritten, its run_dir still naming the old directory. The report and the matrix's
    tables find the run in the cell's own directory instead of losing its per-cell tables."""
    from rsp_sdk.matrix.store import Store
    from rsp_sdk.report.results import Results

    moved = tmp_path / "RESULTS"
    shutil.copytree(report_results, moved)
    path = next(p for p in sorted(moved.glob("cells/*/cell.json")) if _ok_run(p))
    row = json.loads(path.read_text())
    new_key = "0" * 64
    path.parent.rename(moved / "cells" / new_key)
    (moved / "cells" / new_key / "cell.json").write_text(json.dumps({**row, "key": new_key}))
    cell = next(c for c in Results(moved).cells if c.key == new_key)
    assert not (moved / str(cell.run_dir)).exists()  # the recorded run_dir is gone
    results = Results(moved)
    assert results.run_dir(cell) == moved / "cells" / new_key
    assert results.table(cell, "perf") is not None
    rows = {r["key"]: r for r in Store(moved).rows()}
    assert rows[new_key]["run_dir"] == f"cells/{new_key}"


def _ok_run(path: Path) -> bool:
    row = json.loads(path.read_text())
    return bool(row["state"] == "ok" and row.get("run_dir"))


def test_column_headers_do_not_repeat_template_parameters_the_query_name_spells() -> None:
    from rsp_sdk.report.results import column_label

    assert column_label("q1[RANGE=PT1S]", '{"RANGE": "PT1S"}', 1000.0) == "q1[RANGE=PT1S] @1000/s"
    assert column_label("q1", '{"RANGE": "PT1S"}', None) == "q1 RANGE=PT1S"


def test_bad_inputs_exit_2_and_write_nothing(
    report_results: Path,
    report: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, stderr = rsp_main(capsys, "report", empty, "-o", tmp_path / "r1")
    assert code == 2 and "empty folder" in stderr
    assert not (tmp_path / "r1").exists()

    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("hello")
    code, stderr = rsp_main(capsys, "report", other, "-o", tmp_path / "r2")
    assert code == 2 and "not a matrix results folder" in stderr

    # a corrupt cell.json: named with its line, and no report (nor temp folder) left behind
    broken = tmp_path / "broken"
    shutil.copytree(report_results, broken)
    cell = sorted(broken.glob("cells/*/cell.json"))[-1]
    cell.write_text(cell.read_text()[:-40])
    code, stderr = rsp_main(capsys, "report", broken, "-o", tmp_path / "r3")
    assert code == 2 and f"{cell}:" in stderr.replace("\n", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken", "empty", "other"]

    # a table that breaks half-way through rendering: still nothing written, no temp folder
    torn = tmp_path / "torn"
    shutil.copytree(report_results, torn)
    for part in torn.glob("cells/*/perf.parquet/*.parquet"):  # whichever the report reads
        part.write_bytes(part.read_bytes()[:100])
    code, stderr = rsp_main(capsys, "report", torn, "-o", tmp_path / "r4")
    assert code == 2 and "unreadable Parquet table" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken", "empty", "other", "torn"]

    # an existing folder that is not a report is never replaced; a report is
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "thesis.tex").write_text("precious")
    code, stderr = rsp_main(capsys, "report", report_results, "-o", keep)
    assert code == 2 and "refusing to overwrite" in stderr
    assert [p.name for p in keep.iterdir()] == ["thesis.tex"]
    # (the report fixture's folder, as `rsp report` wrote it: one render here, not two)
    shutil.copytree(report[0], tmp_path / "again")
    (tmp_path / "again" / "stale.txt").write_text("old")
    assert rsp_main(capsys, "report", report_results, "-o", tmp_path / "again")[0] == 0
    assert not (tmp_path / "again" / "stale.txt").exists()
    # and the same results give the same figure files, byte for byte
    figures = json.loads((report[0] / "report.json").read_text())["figures"]
    for name in figures:
        for ext in (".pdf", ".svg"):
            first = (report[0] / "figures" / name).with_suffix(ext).read_bytes()
            assert (tmp_path / "again" / "figures" / name).with_suffix(ext).read_bytes() == first
