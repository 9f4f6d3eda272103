"""`--format html` for score, batch and compare: one self-contained, escaped page.

The pages are checked here as text (nothing external, the policy, the escaping of hostile run
text, the batch cap); `test_html_browser.py` opens them in a real browser."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app

from conftest import ROOT

runner = CliRunner()
SAMPLES = ROOT / "sample_telemetry"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class Tags(HTMLParser):
    """Every tag with its attributes, and the text of <style> and <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"style": [], "script": []}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in self.raw else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in].append(data)


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def hostile_run(tmp_path: Path) -> Path:
    """A run whose every free text is markup, with a diff and per-test outcomes."""
    doc = {
        "run": {"id": f"evil{HOSTILE}", "agent": f"agent{HOSTILE}", "challenge": "c", "format": "standard"},
        "iterations": [
            {"iteration_telemetry": {
                "changes": {"diff": f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new {HOSTILE}\n",
                            "summary": [f"summary {HOSTILE}"]},
                "test_results": {"tests": [{"name": f"test_a{HOSTILE}", "outcome": "failed"}, {"name": "test_b",
                                                                                               "outcome": "passed"}]}}},
            {"iteration_telemetry": {
                "changes": {"diff": "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n-    assert f(2) == 4\n+    "
                                    "assert f(2) == 5\n"},
                "test_results": {"tests": [{"name": f"test_a{HOSTILE}", "outcome": "passed"}, {"name": "test_b",
                                                                                               "outcome": "failed"}]}}},
        ],
    }
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc))
    return path


def html_of(args: list[str], tmp_path: Path, name: str = "out.html") -> str:
    out = tmp_path / name
    result = runner.invoke(app, [*args, "--format", "html", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return out.read_text(encoding="utf-8")


def assert_self_contained(html: str) -> None:
    tags = parse(html)
    for tag, attrs in tags.tags:
        for name in ("src", "href", "action", "data", "xlink:href"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("#"), f"<{tag} {name}={value!r}> leaves the page"
    assert not re.search(r"url\(|@import", "".join(tags.raw["style"])), "the style loads something"
    policy = next(a["content"] for t, a in tags.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert policy is not None and "default-src 'none'" in policy
    for kind, directive in (("style", "style-src"), ("script", "script-src")):
        (text,) = tags.raw[kind]
        digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in policy, f"the {kind} is not the one the policy allows"
    assert "unsafe-inline" not in policy and "http" not in policy


def test_a_run_page_is_self_contained_and_escapes_every_text_of_the_run(tmp_path: Path) -> None:
    html = html_of(["score", str(hostile_run(tmp_path))], tmp_path)
    assert_self_contained(html)
    tags = parse(html)
    assert [t for t, _ in tags.tags].count("script") == 1  # ours, and none from the run
    assert not any(name.startswith("on") for _, attrs in tags.tags for name in attrs)
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    # the diff is there, coloured by line; the test the second iteration broke is named
    assert '<span class="l add">+new &lt;script&gt;' in html and '<span class="l del">-    assert f(2) == 4</span>' in html
    assert re.search(r"<b class=\"loss\">Broken</b>: <code>test_b</code>", html)
    assert re.search(r"<b class=\"gain\">Fixed</b>: <code>test_a&lt;script&gt;", html)
    # every finding is a <details> the chart's markers point at
    markers = re.findall(r'<a href="#(r0-item-\d+)"><rect', html)
    assert markers and all(f'id="{m}"' in html for m in markers)


def test_the_sample_pages_for_score_batch_and_compare_are_self_contained(tmp_path: Path) -> None:
    pages = [
        html_of(["score", str(SAMPLES / "example2_bad_standard.yaml")], tmp_path, "score.html"),
        html_of(["batch", str(SAMPLES), "--exit-zero"], tmp_path, "batch.html"),
        html_of(["compare", str(SAMPLES / "example1_good_standard.yaml"), str(SAMPLES / "example2_bad_standard.yaml")],
                tmp_path, "runs.html"),
        html_of(["compare", str(ROOT / "tests" / "fixtures" / "compare" / "a"),
                 str(ROOT / "tests" / "fixtures" / "compare" / "b")],
                tmp_path, "folders.html"),
    ]
    for html in pages:
        assert_self_contained(html)
    assert 'id="runs"' in pages[1] and "regression_blindness" in pages[0]
    assert "95% bootstrap interval" in pages[3] and "The pairs that differ most" in pages[3]


def test_a_large_batch_lists_every_run_worst_first_and_details_the_worst(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from procjudge.render import html as page

    monkeypatch.setattr(page, "DETAIL_CAP", 3)
    (tmp_path / "runs").mkdir(exist_ok=True)
    # r0..r5 climb (positive scores); r6 regresses twice (the lowest score); r3 fails the --fail-on gate
    for k in range(6):
        scores = [40 + k, 60 + k] if k != 3 else [60, 50]
        run_id = f"HumanEval/{[2, 10, 1, 3, 20, 100][k]}"
        (tmp_path / "runs" / f"r{k}.json").write_text(json.dumps({"run": {"id": run_id}, "iterations": [
            {"iteration_telemetry": {"score": {"post_iteration": s}}} for s in scores]}))
    (tmp_path / "runs" / "r6.json").write_text(json.dumps({"run": {"id": "HumanEval/6"}, "iterations": [
        {"iteration_telemetry": {"score": {"post_iteration": s}}} for s in (80, 60, 40)]}))
    html = html_of(["batch", str(tmp_path / "runs"), "--exit-zero", "--fail-on", "returned_worse"], tmp_path)
    assert html.count("<tr data-k=") == 7 and html.count('<section class="run">') == 3
    assert "4 of the 7 runs in the table have no section of their own: the page details the 3 worst" in html
    order = re.findall(r'<tr data-k="\d+" data-id="([^"]+)"', html)
    assert order[:2] == ["HumanEval/6", "HumanEval/3"]  # the two gate failures first (returned_worse), lowest first
    linked = re.findall(r'data-id="([^"]+)"[^>]*>\s*<td><a href="#run-', html)
    assert linked == order[:3]  # the detailed runs are the three worst
    # the runs that cost the most say what cost them: items with their points, not anti-patterns alone
    row = html[html.index('data-id="HumanEval/6"'):html.index("</tr>", html.index('data-id="HumanEval/6"'))]
    assert "gate failed" in row and "monotonic_improvement -10" in row


def test_the_page_and_the_markdown_report_list_runs_in_one_worst_first_order(tmp_path: Path) -> None:
    from procjudge.results import Row, worst_first

    labelled = str(ROOT / "tests" / "labelled" / "runs")
    html = html_of(["batch", labelled, "--exit-zero"], tmp_path)
    page = re.findall(r'<tr data-k="\d+" data-id="([^"]+)"', html)
    done = runner.invoke(app, ["batch", labelled, "--exit-zero", "-f", "markdown"])
    table = done.output[done.output.index("| run | agent |"):]
    report = [line.split(" | ")[0].lstrip("| ").replace("\\_", "_") for line in table.splitlines()[2:] if line.startswith("| ")]
    assert len(report) == 50 and report == page[:50]
    # an accusation ranks before a lower score that accuses nobody; a failed gate before both
    import msgspec

    honest = Row(id="h", path="h", process_score=-25.0, agent="a", challenge="c", format="standard", iterations_used=2,
                 final_score=50.0, raw_process_score=0.0, tier="t", pattern="p", anti_patterns=(), items=(), warnings=0,
                 final_minus_best=0.0, bucket="2", outcome="passed", gate_rounds=None, returned_round=None, source="",
                 started_at="", first_failing_test="")
    accused = msgspec.structs.replace(honest, id="x", path="x", process_score=5.0, accused=True)
    failed = msgspec.structs.replace(honest, id="f", path="f", process_score=10.0, gate_failures=("fail-under",))
    assert sorted([honest, accused, failed], key=worst_first) == [failed, accused, honest]
    assert worst_first(failed, failed=False) > worst_first(accused)


def test_html_is_not_imported_by_other_formats() -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "procjudge", "score",
                           "sample_telemetry/example1_good_standard.yaml"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "procjudge.cli" in done.stderr
    assert "jinja2" not in done.stderr and "procjudge.render.html" not in done.stderr


def test_every_text_of_a_chart_lies_inside_its_drawing(tmp_path: Path) -> None:
    """A chart's labels are drawn within its SVG's height, including the line an empty chart shows
    (a batch where no run has an anti-pattern)."""
    clean = tmp_path / "runs"
    clean.mkdir()
    (clean / "good.yaml").write_text((ROOT / "sample_telemetry" / "example1_good_standard.yaml").read_text())
    for args in (["batch", str(clean)], ["batch", str(ROOT / "sample_telemetry")],
                 ["score", str(ROOT / "sample_telemetry" / "example2_bad_standard.yaml")]):
        html = html_of(args, tmp_path)
        for svg in re.findall(r"<svg\b.*?</svg>", html, re.DOTALL):
            height = float(re.search(r'height="([\d.]+)"', svg).group(1))
            for y in re.findall(r'<text[^>]*\by="([\d.]+)"', svg):
                assert float(y) <= height, (y, height, svg[:200])
    assert "no anti-pattern found" in html_of(["batch", str(clean)], tmp_path)


def test_a_batch_page_shows_runs_as_scored_not_as_the_files_are_later(tmp_path: Path) -> None:
    """The detail comes from the worker that judged the run: a file rewritten (or gone) after
    scoring does not change the page, and a run of a JSON-lines file gets its diffs too."""
    from procjudge.batch import score_paths
    from procjudge.render.html import HtmlReporter
    from procjudge.tally import Collector, Gates

    path = hostile_run(tmp_path)
    lines = tmp_path / "runs.jsonl"
    lines.write_text(path.read_text() + "\n", encoding="utf-8")
    results = list(score_paths([str(path), str(lines)], want_detail=True))
    path.write_text(json.dumps({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 1}}}]}))
    lines.unlink()
    reporter, collector = HtmlReporter(), Collector(Gates())
    for result, reasons in collector.feed(results):
        reporter.each(result, reasons)
    html = reporter.finish(collector.finish())
    assert html.count('<span class="l del">-    assert f(2) == 4</span>') == 2  # the file's run and the record's
    assert "could not be read again" not in html
    assert html.count('<b class="loss">Broken</b>: <code>test_b</code>') == 2


def test_the_html_page_reads_no_run_file_and_judges_nothing() -> None:
    """A reporter receives typed results: render/ imports the result types and the policy, never
    the loader, the facts or the judge."""
    import ast

    for module in (ROOT / "procjudge" / "render").glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level >= 1}
        forbidden = {"loading", "facts", "judge", "batch", "compare", "tally", "detectors", "catalogue", "detail"}
        assert not {name.split(".")[0] for name in imported} & forbidden, (module.name, imported)


@pytest.mark.parametrize("command", [["score"], ["batch"], ["compare", "SAME"]])
def test_control_characters_from_input_never_reach_the_page_raw(command: list[str], tmp_path: Path) -> None:
    """An ESC, a carriage return or a line starting with '::' in a run's text is shown escaped:
    the page sent to stdout in CI carries no terminal escape and no runner command."""
    evil = {"run": {"id": "evil\n::error::owned\x1b[31m\r", "agent": "a\n::set-output name=x::y"},
            "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}, "test_results": {"tests": [
                {"name": "t\n::warning::x", "outcome": "failed", "message": "one\n::error::boom\x1b[0m"}]}}}
                for s in (40, 30)]}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(evil))
    args = [command[0], str(path)] + ([str(path)] if command[1:] else [])
    page = CliRunner().invoke(app, [*args, "--format", "html"]).stdout
    assert "<html" in page
    assert not [line for line in page.splitlines() if line.startswith("::")]
    assert "\x1b" not in page and "\r" not in page
    assert "\\x1b[31m" in page  # shown, as the terminal and the other formats show it


def test_quiet_is_for_the_terminal_the_page_keeps_its_run_sections(tmp_path: Path) -> None:
    loud, quiet = tmp_path / "loud.html", tmp_path / "quiet.html"
    runner = CliRunner()
    for target, extra in ((loud, []), (quiet, ["-q"])):
        result = runner.invoke(app, ["batch", str(SAMPLES), "--exit-zero", "-f", "html", "-o", str(target), *extra])
        assert result.exit_code == 0, result.output
    sections = [len(re.findall(r"<h[23] id=\"run-\d+\">", p.read_text())) for p in (loud, quiet)]
    assert sections[0] > 0 and sections[0] == sections[1]


def test_a_large_batch_page_links_only_to_sections_it_has(tmp_path: Path) -> None:
    """Past the 200 runs detailed, the table still lists every run, but a row links to a section
    only where the page has one."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for k in range(260):
        (folder / f"r{k:03d}.json").write_text(json.dumps({"run": {"id": f"HumanEval/{k}"}, "iterations": [
            {"iteration_telemetry": {"score": {"post_iteration": (k * 37 + n * 11) % 100}}} for n in range(1 + k % 4)]}))
    page = CliRunner().invoke(app, ["batch", str(folder), "--exit-zero", "-f", "html", "--jobs", "1"]).stdout
    ids = set(re.findall(r'id="([^"]+)"', page))
    links = re.findall(r'href="#([^"]+)"', page)
    assert len(re.findall(r'<tr data-k="', page)) == 260
    assert links and not [link for link in links if link not in ids]
    assert len({link for link in links if link.startswith("run-") and "-" not in link[4:]}) == 200
