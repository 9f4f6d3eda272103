"""Make the screenshots of the HTML report in docs/img/ (run from the repository root):

    python scripts/screenshots.py

Each page is made by the command printed beside it, opened offline in the system's headless
Chromium (Playwright), a finding or a pair opened, and captured at 1280 pixels wide.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
IMG = ROOT / "docs" / "img"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def procjudge(*args: str) -> None:
    print("$ procjudge " + " ".join(args))
    subprocess.run([sys.executable, "-m", "procjudge", *args], cwd=ROOT, check=False, capture_output=True)


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="procjudge-shots-"))
    procjudge("import", "swe-agent", "tests/fixtures/swe_agent/trajs/django__django-11141/django__django-11141.traj.json",
              "--reports", "tests/fixtures/swe_agent/logs", "--out", str(work / "imported"))
    run = next((work / "imported").rglob("*.json"))
    procjudge("score", str(run), "--format", "html", "-o", str(work / "run.html"))
    procjudge("batch", "sample_telemetry", "--format", "html", "-o", str(work / "batch.html"), "--exit-zero")
    procjudge("compare", "tests/fixtures/compare/a", "tests/fixtures/compare/b", "--format", "html", "-o",
              str(work / "compare.html"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto((work / "run.html").as_uri())
        page.locator("details.item", has=page.locator(".id", has_text="test_chasing")).locator("summary").click()
        page.screenshot(path=str(IMG / "html-run.png"))
        page.goto((work / "batch.html").as_uri())
        page.locator("th[data-key=process] button").click()
        page.set_viewport_size({"width": 1280, "height": 1400})
        page.screenshot(path=str(IMG / "html-batch.png"))
        page.set_viewport_size({"width": 1280, "height": 1000})
        page.goto((work / "compare.html").as_uri())
        page.locator("details#pair-0 > summary").click()
        page.screenshot(path=str(IMG / "html-compare.png"))
        browser.close()
    print(f"wrote {', '.join(p.name for p in sorted(IMG.glob('html-*.png')))} in {IMG}")


if __name__ == "__main__":
    main()
