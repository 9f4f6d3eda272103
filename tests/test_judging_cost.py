"""What the judge shares between rules must never go stale, a report that waits for its totals
must not hold every run in memory, and the per-detector profile in benchmarks/ must cover every
rule. (Speed itself is measured in benchmarks/, never asserted here: the machines are noisy.)"""

from __future__ import annotations

import sys
from pathlib import Path
from xml.etree import ElementTree

import msgspec
import pytest
from typer.testing import CliRunner

from procjudge import judge
from procjudge.cli import app
from procjudge.detectors import ALL
from procjudge.detectors.trajectory import judged_steps
from procjudge.facts import derive
from procjudge.loading import load_run
from procjudge.policy import DEFAULT, load_policy
from procjudge.render.batch import JunitReporter

from conftest import ROOT, SAMPLES

runner = CliRunner()
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_per_run_memos_answer_for_the_run_and_policy_asked_not_the_last_one(tmp_path: Path) -> None:
    """judged_steps and the signals keep their last answer: a different policy or run must not get it."""
    marathon = next(p for p in sorted(SAMPLES.glob("*.yaml")) if "marathon" in p.name)
    run = load_run(marathon)
    facts = derive(run, DEFAULT)
    assert facts.phases, "the sample must cross a phase boundary for this test to mean anything"
    (tmp_path / "p.yaml").write_text("trajectory:\n  judge_phase_boundaries: true\n")
    crossing = load_policy(str(tmp_path / "p.yaml"))
    default_steps = judged_steps(facts, DEFAULT)
    crossing_steps = judged_steps(facts, crossing)
    assert len(crossing_steps) == len(facts.iterations) - 1 > len(default_steps)
    assert judged_steps(facts, DEFAULT) == default_steps  # asked again: the first answer, not the last
    default_steps.clear()  # a caller's copy: clearing it leaves the kept answer whole
    assert judged_steps(facts, DEFAULT)

    # Alternating runs and policies gives what each gives alone.
    others = [load_run(p) for p in sorted(SAMPLES.glob("*.yaml"))[:4]]
    alone = {(k, name): msgspec.json.encode(judge(r, pol)) for k, r in enumerate(others)
             for name, pol in (("default", DEFAULT), ("crossing", crossing))}
    for (k, name), expected in reversed(list(alone.items())):
        assert msgspec.json.encode(judge(others[k], DEFAULT if name == "default" else crossing)) == expected


def test_the_signals_conditions_follow_the_policy_in_force(tmp_path: Path) -> None:
    run = load_run(SAMPLES / "example1_good_standard.yaml")
    (tmp_path / "p.yaml").write_text("signals:\n  reads_before_writing_seconds: 1\n")
    strict = load_policy(str(tmp_path / "p.yaml"))
    texts = {name: [i.evidence for i in judge(run, pol).items if i.id == "reads_before_writing"]
             for name, pol in (("default", DEFAULT), ("strict", strict), ("again", DEFAULT))}
    assert texts["strict"] and all("> 1 in" in t for t in texts["strict"])
    assert texts["default"] == texts["again"] and all("> 1 in" not in t for t in texts["default"])


def test_junit_spools_its_cases_and_writes_the_same_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its spool size the test cases wait in a temporary file; the document is the same."""
    whole = runner.invoke(app, ["batch", str(SAMPLES), "-f", "junit", "--jobs", "1"])
    assert whole.exit_code in (0, 1), whole.output
    monkeypatch.setattr(JunitReporter, "SPOOL_BYTES", 64)
    rolled: list[bool] = []
    original = JunitReporter.each

    def each(self: JunitReporter, result: object, reasons: list[str] | None) -> str:
        out = original(self, result, reasons)  # type: ignore[arg-type]
        rolled.append(bool(getattr(self.cases, "_rolled", False)))
        return out

    monkeypatch.setattr(JunitReporter, "each", each)
    spooled = runner.invoke(app, ["batch", str(SAMPLES), "-f", "junit", "--jobs", "1"])
    assert rolled and rolled[-1], "the cases should have moved to a temporary file"
    assert spooled.stdout == whole.stdout
    out = tmp_path / "r.xml"
    to_file = runner.invoke(app, ["batch", str(SAMPLES), "-f", "junit", "--jobs", "1", "-o", str(out)])
    assert to_file.exit_code == whole.exit_code and out.read_text() == whole.stdout
    cases = list(ElementTree.fromstring(out.read_text()).iter("testcase"))
    assert len(cases) == int(ElementTree.fromstring(out.read_text()).get("tests", "0")) > 1


def test_the_per_detector_profile_covers_every_rule_and_adds_up() -> None:
    import bench_judge

    runs = bench_judge.synthetic_runs(40)
    rows = bench_judge.detector_profile(runs, passes=1)
    assert sorted(r[0] for r in rows) == sorted(det.id for det in ALL)
    assert all(needs >= 0 and check >= 0 for _, needs, check, _, _ in rows)
    assert all(0 <= fired <= checked <= len(runs) for _, _, _, checked, fired in rows)
    assert any(fired for *_, fired in rows)
    table = bench_judge.profile_table(rows, len(runs))
    assert len(table) == len(ALL) + 3 and table[-1].startswith("| all |")
    split = bench_judge.parts(runs[:10])
    assert split["judge"] > 0 and split["derive"] > 0 and split["detectors"] > 0


def test_a_labelled_folder_loads_for_the_profile() -> None:
    import bench_judge

    runs = bench_judge.folder_runs(str(ROOT / "tests" / "labelled" / "runs"))
    assert len(runs) > 50 and all(isinstance(r.path, str) for r in runs)


def test_the_html_page_lists_the_worst_runs_up_to_the_limit_and_counts_the_rest(tmp_path: Path) -> None:
    """The page keeps limits.rows_listed rows (worst first, as the full table orders them) and
    charts every run: the same page as an unlimited one, less the rows past the limit."""
    from procjudge.batch import score_paths
    from procjudge.policy import Limits
    from procjudge.render.html import HtmlReporter
    from procjudge.tally import Collector, Gates

    results = list(score_paths([str(p) for p in sorted(SAMPLES.glob("*.yaml"))]))
    scored = [r for r in results if r.row is not None]
    assert len(scored) > 4

    def page(limit: int) -> str:
        reporter, collector = HtmlReporter(quiet=True, limits=Limits(rows_listed=limit)), Collector(Gates())
        for result, reasons in collector.feed(results):
            reporter.each(result, reasons)
        return reporter.finish(collector.finish())

    def listed(html: str) -> list[str]:
        return [line.split('data-id="')[1].split('"')[0] for line in html.splitlines() if "<tr data-k=" in line]

    everything, three = page(10_000), page(3)
    assert len(listed(everything)) == len(scored) and listed(three) == listed(everything)[:3]
    assert f"{len(scored) - 3} more runs not listed" in three and "more runs not listed" not in everything
    chart = everything.split('<div class="charts">')[1].split("</div>")[0]
    assert chart == three.split('<div class="charts">')[1].split("</div>")[0]  # the charts count every run
    from procjudge.render.html import worst_first

    order = sorted(range(len(scored)), key=lambda k: (*worst_first(scored[k].row, False), k))
    assert listed(everything) == [scored[k].row.id for k in order]  # type: ignore[union-attr]
