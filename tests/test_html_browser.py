"""The HTML pages in a real browser: headless Chromium from the system packages, driven by
Playwright for Python. Each page is loaded from its file with every network request refused;
no console error may appear; a finding opens to its evidence, the batch table sorts and filters,
and a pair of a comparison opens both runs. Screenshots go to tests/artifacts/.

Needs Chromium (Debian: `apt-get install chromium`; `.ci/run` installs it) and the `playwright`
package (the `test` extra). Where either is missing the tests are skipped with the reason, except
under CI, where they fail; PROCJUDGE_BROWSER_TESTS=skip skips them on purpose (CI's second pass
on the lowest versions)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procjudge.cli import app

from conftest import ROOT

runner = CliRunner()
SAMPLES = ROOT / "sample_telemetry"
ARTIFACTS = ROOT / "tests" / "artifacts"
SHOT_HEIGHT = 12_000  # pixels of a page kept in its screenshot
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--disable-quic"]


def _chromium() -> str | None:
    for candidate in (os.environ.get("PROCJUDGE_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def _missing(why: str) -> None:
    message = f"{why}: the browser tests of the HTML report cannot run"
    if os.environ.get("CI") and os.environ.get("PROCJUDGE_BROWSER_TESTS") != "skip":
        pytest.fail(message + " (CI must have it: .ci/run installs it)")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if os.environ.get("PROCJUDGE_BROWSER_TESTS") == "skip":
        pytest.skip("PROCJUDGE_BROWSER_TESTS=skip (CI's second pass, on the lowest versions: they ran in the first)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    executable = _chromium()
    if executable is None:
        _missing("no Chromium found (apt-get install chromium, or set PROCJUDGE_CHROMIUM)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        yield launched
        launched.close()


class Opened:
    """A page loaded offline, with what its console said and every request it tried."""

    def __init__(self, browser: Any, path: Path, width: int = 1280, **options: Any) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900}, **options)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        page_url = path.resolve().as_uri()

        def guard(route: Any) -> None:
            if route.request.url.split("#")[0] == page_url:
                route.continue_()
            else:
                self.requests.append(route.request.url)
                route.abort()

        self.context.route("**/*", guard)
        self.page.goto(page_url)

    def shot(self, name: str) -> None:
        """Saves the page for a reviewer to look at: all of it, or its first SHOT_HEIGHT pixels when
        it is longer (a batch page with every run's section is ~170,000 px tall; capturing it whole
        took tens of seconds and timed out on a loaded machine)."""
        ARTIFACTS.mkdir(exist_ok=True)
        height = self.page.evaluate("document.documentElement.scrollHeight")
        width = self.page.evaluate("document.documentElement.scrollWidth")
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True,
                             clip={"x": 0, "y": 0, "width": width, "height": min(height, SHOT_HEIGHT)})

    def close(self) -> None:
        assert not self.requests, f"the page asked for {self.requests}"
        assert not self.console, self.console
        self.context.close()


def render(args: list[str], out: Path) -> Path:
    result = runner.invoke(app, [*args, "--format", "html", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return out


def hostile(tmp_path: Path) -> Path:
    doc = {"run": {"id": "<img src=x onerror=alert(1)>", "agent": "<script>alert(2)</script>"},
           "iterations": [
               {"iteration_telemetry": {"score": {"post_iteration": 40},
                                        "test_results": {"tests": [{"name": "t<b>1</b>", "outcome": "failed"}]}}},
               {"iteration_telemetry": {"score": {"post_iteration": 30},
                                        "changes": {"diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<script>a()</script>\n+<svg "
                                                            "onload=alert(3)>\n"},
                                        "test_results": {"tests": [{"name": "t<b>1</b>", "outcome": "failed"}]}}}]}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_run_page_opens_offline_and_a_finding_shows_its_evidence(browser: Any, tmp_path: Path) -> None:
    page_file = render(["score", str(SAMPLES / "example2_bad_standard.yaml")], tmp_path / "run.html")
    opened = Opened(browser, page_file)
    page = opened.page
    finding = page.locator("details.item", has=page.locator(".id", has_text="regression_blindness")).first
    evidence = finding.locator(".evidence")
    assert not evidence.is_visible()
    finding.locator("summary").click()
    assert evidence.is_visible() and "broken" in evidence.inner_text()
    # a marker on the chart opens its finding too
    marker = page.locator("svg a").first
    target = marker.get_attribute("href")
    page.locator("details.item[open]").evaluate_all("els => els.forEach(e => e.open = false)")
    marker.click()
    assert page.locator(f"details{target}").get_attribute("open") is not None
    assert page.locator(f"details{target} .evidence").is_visible()
    opened.shot("run")
    opened.close()


def test_hostile_run_text_stays_text(browser: Any, tmp_path: Path) -> None:
    page_file = render(["score", str(hostile(tmp_path))], tmp_path / "hostile.html")
    opened = Opened(browser, page_file)
    page = opened.page
    assert page.locator("h1").first.inner_text() == "<img src=x onerror=alert(1)>"
    assert page.locator("img").count() == 0 and page.locator("script").count() == 1
    assert "<svg onload=alert(3)>" in page.locator(".diff").inner_text()
    opened.shot("hostile")
    opened.close()


def test_the_batch_table_sorts_and_filters(browser: Any, tmp_path: Path) -> None:
    page_file = render(["batch", str(SAMPLES), "--exit-zero"], tmp_path / "batch.html")
    opened = Opened(browser, page_file)
    page = opened.page
    rows = page.locator("#runs tbody tr")
    total = rows.count()
    assert total >= 10
    assert page.locator("#shown").inner_text() == f"{total} of {total} runs match"

    def column(key: str) -> list[str]:
        return page.eval_on_selector_all("#runs tbody tr", f"rows => rows.map(r => r.dataset.{key})")

    page.locator("th[data-key=process] button").click()
    scores = [float(v) for v in column("process")]
    assert scores == sorted(scores,
                            reverse=True) and page.locator("th[data-key=process]").get_attribute("aria-sort") == "descending"
    page.locator("th[data-key=process] button").click()
    assert [float(v) for v in column("process")] == sorted(scores)
    page.locator("th[data-key=id] button").click()
    ids = column("id")
    assert ids == sorted(ids, reverse=True)

    tier = page.eval_on_selector("#filter-tier", "s => s.options[1].value")
    page.select_option("#filter-tier", tier)
    shown = column("tier")
    assert shown and set(shown) == {tier} and len(shown) < total
    assert page.locator("#shown").inner_text() == f"{len(shown)} of {total} runs match"
    page.select_option("#filter-tier", "")
    finding = page.eval_on_selector("#filter-finding", "s => s.options.length > 1 ? s.options[1].value : ''")
    if finding:
        page.select_option("#filter-finding", finding)
        assert all(finding in f.split() for f in column("findings"))
        page.select_option("#filter-finding", "")
    page.fill("#filter-text", "sprint")
    assert column("id") and all("sprint" in i for i in column("id"))
    page.fill("#filter-text", "")
    # a run's link leads to its section on the page
    link = page.locator("#runs tbody tr a").first
    anchor = link.get_attribute("href")
    link.click()
    assert page.locator(anchor).is_visible()
    opened.shot("batch")
    opened.close()


def test_the_batch_page_reads_without_javascript(browser: Any, tmp_path: Path) -> None:
    page_file = render(["batch", str(SAMPLES), "--exit-zero"], tmp_path / "batch.html")
    opened = Opened(browser, page_file, java_script_enabled=False)
    page = opened.page
    assert page.locator("#runs tbody tr:visible").count() == page.locator("#runs tbody tr").count()
    assert not page.locator("div.controls").is_visible()  # the controls need the script: hidden without it
    first = page.locator("details.item").first
    first.locator("summary").click()
    assert first.locator(".evidence").is_visible()
    opened.close()


def test_dark_and_print(browser: Any, tmp_path: Path) -> None:
    page_file = render(["score", str(SAMPLES / "example1_good_standard.yaml")], tmp_path / "run.html")
    opened = Opened(browser, page_file, color_scheme="dark")
    background = opened.page.evaluate("getComputedStyle(document.body).backgroundColor")
    channels = [int(c) for c in background[background.index("(") + 1:-1].split(",")[:3]]
    assert max(channels) < 60, background
    opened.shot("run-dark")
    opened.page.emulate_media(media="print")
    opened.page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert opened.page.locator("details.item:not([open])").count() == 0
    opened.close()


def test_compare_pages_open_both_runs(browser: Any, tmp_path: Path) -> None:
    folders = render(["compare", str(ROOT / "tests" / "fixtures" / "compare" / "a"),
                      str(ROOT / "tests" / "fixtures" / "compare" / "b")],
                     tmp_path / "folders.html")
    opened = Opened(browser, folders)
    page = opened.page
    pair = page.locator("details#pair-0")
    pair.locator(":scope > summary").click()
    sides = pair.locator(":scope > .evidence > div")
    assert sides.count() == 2 and sides.nth(0).is_visible() and sides.nth(1).is_visible()
    assert sides.nth(0).locator(":scope > h3").inner_text().startswith("A: ")
    assert sides.nth(1).locator(":scope > h3").inner_text().startswith("B: ")
    whole = sides.nth(1).locator(":scope > details")
    whole.locator(":scope > summary").click()
    assert whole.locator("details.item .id", has_text="regression_blindness").first.is_visible()
    opened.shot("compare-folders")
    opened.close()
    runs = render(["compare", str(SAMPLES / "example1_good_standard.yaml"), str(SAMPLES / "example2_bad_standard.yaml")],
                  tmp_path / "runs.html")
    opened = Opened(browser, runs)
    columns = opened.page.locator(".side > div")
    assert columns.count() == 2
    left, right = (columns.nth(k).bounding_box() for k in range(2))
    assert left and right and left["x"] < right["x"] and abs(left["y"] - right["y"]) < 2
    opened.shot("compare-runs")
    opened.close()


def test_a_table_of_thousands_of_runs_sorts(browser: Any, tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for k in range(2000):
        (folder / f"r{k:04d}.json").write_text(json.dumps({"run": {"agent": f"agent-{k % 3}"}, "iterations": [
            {"iteration_telemetry": {"score": {"post_iteration": (k * 37) % 100}}},
            {"iteration_telemetry": {"score": {"post_iteration": (k * 53) % 100}}}]}))
    page_file = render(["batch", str(folder), "--exit-zero", "--jobs", "2"], tmp_path / "many.html")
    opened = Opened(browser, page_file)
    page = opened.page
    # every run is in the file; the script keeps one page of 500 rows in the document
    assert page.locator("#runs tbody tr").count() == 500
    assert page.locator("#shown").inner_text() == "2000 of 2000 runs match; the first 500 are shown"
    assert "runs in the table have no section of their own" in page.locator(".banner").inner_text()
    page.locator("#more").click()
    assert page.locator("#runs tbody tr").count() == 1000
    page.locator("th[data-key=final] button").click()
    finals = page.eval_on_selector_all("#runs tbody tr", "rows => rows.map(r => parseFloat(r.dataset.final))")
    assert len(finals) == 500 and finals == sorted(finals, reverse=True) and finals[0] == 99
    page.select_option("#filter-agent", "agent-1")
    assert page.locator("#shown").inner_text() == "667 of 2000 runs match; the first 500 are shown"
    agents = page.eval_on_selector_all("#runs tbody tr", "rows => rows.map(r => r.dataset.agent)")
    assert set(agents) == {"agent-1"} and len(agents) == 500
    page.locator("#more").click()
    assert page.locator("#runs tbody tr").count() == 667 and not page.locator("#more").is_visible()
    opened.close()


def test_the_batch_page_reads_on_a_phone_and_sorts_ids_naturally(browser: Any, tmp_path: Path) -> None:
    """At 390 px the runs table scrolls sideways rather than squeezing: no two header cells overlap
    and no tier name breaks mid-word. Sorting by run orders ids naturally (HumanEval/2 before /10)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for number in (0, 1, 10, 100, 2, 20):
        (runs / f"r{number}.json").write_text(json.dumps({"run": {"id": f"HumanEval/{number}", "agent": "model-a"},
                                                          "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}}
                                                                         for s in (40, 40 + number % 50)]}))
    page_file = render(["batch", str(runs), str(SAMPLES / "example2_bad_standard.yaml"), "--exit-zero"],
                       tmp_path / "batch.html")
    opened = Opened(browser, page_file, width=390)
    page = opened.page
    boxes = page.eval_on_selector_all("#runs thead th", "cells => cells.map(c => { const r = c.getBoundingClientRect(); "
                                      "return [r.left, r.right, r.top, r.bottom]; })")
    for (_, right, _, _), (next_left, _, _, _) in itertools.pairwise(boxes):
        assert right <= next_left + 0.5, boxes  # side by side, none over another
    tier_heights = page.eval_on_selector_all("#runs tbody td:nth-child(6)",
                                             "cells => cells.map(c => c.getBoundingClientRect().height)")
    first_cell = page.eval_on_selector("#runs tbody td:nth-child(2)", "c => c.getBoundingClientRect().height")
    assert max(tier_heights) <= first_cell + 1  # one line each: no tier name broken over two
    overflow = page.eval_on_selector("div.scroll", "d => d.scrollWidth > d.clientWidth")
    assert overflow  # the table is wider than the phone, and scrolls
    opened.shot("batch-phone")
    page.locator("th[data-key=id] button").click()  # descending first
    page.locator("th[data-key=id] button").click()
    ids = page.eval_on_selector_all("#runs tbody tr", "rows => rows.map(r => r.dataset.id)")
    numbered = [i for i in ids if i.startswith("HumanEval/")]
    assert numbered == [f"HumanEval/{n}" for n in (0, 1, 2, 10, 20, 100)], ids
    opened.close()


def test_the_pairs_of_a_comparison_sort_by_any_column(browser: Any, tmp_path: Path) -> None:
    """compare's table of every pair comes in natural order of challenge and sorts by a header:
    numbers as numbers, names naturally."""
    for side, lift in (("a", 0), ("b", 7)):
        (tmp_path / side).mkdir()
        for number in (0, 1, 10, 100, 2, 20):
            (tmp_path / side / f"r{number}.json").write_text(json.dumps({
                "run": {"agent": f"agent-{side}", "challenge": f"HumanEval/{number}"},
                "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}}
                               for s in (40, 40 + (number * 3 + lift) % 50)]}))
    page_file = render(["compare", str(tmp_path / "a"), str(tmp_path / "b")], tmp_path / "pairs.html")
    opened = Opened(browser, page_file, width=390)
    page = opened.page

    def column(key: str) -> list[str]:
        return page.eval_on_selector_all("table.sortable tbody tr", f"rows => rows.map(r => r.dataset.{key})")

    natural = [f"HumanEval/{n}" for n in (0, 1, 2, 10, 20, 100)]
    assert column("challenge") == natural
    page.locator("table.sortable th[data-key=difference] button").click()
    differences = [float(d) for d in column("difference")]
    assert differences == sorted(differences, reverse=True)
    page.locator("table.sortable th[data-key=challenge] button").click()  # descending first
    assert column("challenge") == natural[::-1]
    page.locator("table.sortable th[data-key=challenge] button").click()
    assert column("challenge") == natural
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the wide table scrolls in its box
    opened.shot("compare-pairs-phone")
    opened.close()


@pytest.mark.parametrize("args", [
    ["batch", str(SAMPLES), "--exit-zero"],
    ["score", str(SAMPLES / "example2_bad_standard.yaml")],
    ["compare", str(SAMPLES / "example1_good_standard.yaml"), str(SAMPLES / "example2_bad_standard.yaml")],
    ["compare", str(ROOT / "tests" / "fixtures" / "compare" / "a"), str(ROOT / "tests" / "fixtures" / "compare" / "b")],
], ids=["batch", "score", "compare-runs", "compare-folders"])
def test_every_page_fits_a_phone(browser: Any, tmp_path: Path, args: list[str]) -> None:
    """At 390 px no page is wider than the screen, every section open: wide tables scroll in their
    own box and long paths break; a table's rows are no taller than three lines of text."""
    opened = Opened(browser, render(args, tmp_path / "page.html"), width=390)
    page = opened.page
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    heights = page.eval_on_selector_all(".scroll > table.wide tbody tr",
                                        "rows => rows.map(r => r.getBoundingClientRect().height)")
    line = page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    assert all(h <= 3 * line + 12 for h in heights), (heights, line)
    opened.shot(f"phone-{args[0]}-{len(args)}")
    opened.close()
