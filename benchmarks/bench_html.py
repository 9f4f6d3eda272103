"""The HTML batch page at scale: writing it, and its table in a browser.

    python benchmarks/bench_html.py --runs 10000

Writes a synthetic corpus (bench_batch's standard runs), then in the same run:
- ``batch --format html`` against ``batch --format json`` on the same files (``--jobs 1``): the
  ratio is what the page costs over the machine-readable report; the page's size;
- the page in headless Chromium (the system's, through Playwright): load time, then the time to
  sort the table by a column and to filter it by agent, each measured inside the page from the
  click to the next frame (the script keeps 500 rows in the document at a time).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_batch import run_document


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "procjudge", *args], check=False, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10000)
    options = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="procjudge-bench-html-"))
    corpus = work / "runs"
    corpus.mkdir()
    rng = random.Random(7)
    for k in range(options.runs):
        (corpus / f"run-{k:06d}.json").write_text(json.dumps(run_document(k, rng)))
    json_s = timed(["batch", str(corpus), "--jobs", "1", "--format", "json", "-o", str(work / "b.json"), "--exit-zero"])
    html_s = timed(["batch", str(corpus), "--jobs", "1", "--format", "html", "-o", str(work / "b.html"), "--exit-zero"])
    size = (work / "b.html").stat().st_size
    print(f"{options.runs} runs: batch --format json {json_s:.1f} s, --format html {html_s:.1f} s "
          f"(ratio {html_s / json_s:.2f}); page {size / 2**20:.1f} MiB")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.perf_counter()
        page.goto((work / "b.html").as_uri(), wait_until="load")
        load = time.perf_counter() - start
        measure = """async (selector) => {
            const t0 = performance.now();
            document.querySelector(selector).click();
            await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
            return performance.now() - t0; }"""
        sort_ms = page.evaluate(measure, "th[data-key=process] button")
        filter_ms = page.evaluate("""async () => {
            const s = document.getElementById('filter-agent'); s.value = s.options[1].value;
            const t0 = performance.now(); s.dispatchEvent(new Event('change'));
            await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
            return performance.now() - t0; }""")
        shown = page.locator("#shown").inner_text()
        browser.close()
    print(f"browser: load {load:.2f} s; sort {sort_ms:.0f} ms; filter {filter_ms:.0f} ms ({shown})")


if __name__ == "__main__":
    main()
