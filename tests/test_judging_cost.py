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
    assert split["judge"] > 0 and split["derive"] > 0 and split["detectors"] > 0 and split["frame"] > 0


def test_the_frame_figure_empties_the_checks_and_puts_them_back() -> None:
    import sys

    import bench_judge

    from procjudge import judge

    engine = sys.modules["procjudge.judge"]
    run = bench_judge.synthetic_runs(1)[0]
    before = judge(run, explain=False)
    seen: list[int] = []

    def measure() -> float:  # what the measurement sees of the run: how many items it finds
        seen.append(len(judge(run, explain=False).items))
        return 0.0

    bench_judge._without_findings(measure)
    assert before.items and seen == [0]  # while measured, no detector finds anything
    assert judge(run, explain=False) == before  # and afterwards every rule is back
    assert [step[2] for step in engine._STEPS] == [det.func for det in ALL]


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


def _corpus() -> list[object]:
    """Runs of every shape the suite carries: the samples, the labelled set (real logs and written
    cheats), the imported real-data fixtures and synthetic runs."""
    import bench_judge

    from procjudge.catalogue import cases
    from procjudge.loading import LoadError
    from procjudge.records import load_record

    runs: list[object] = list(bench_judge.synthetic_runs(300))
    for folder in (SAMPLES, ROOT / "tests" / "labelled" / "runs", ROOT / "tests" / "fixtures"):
        runs += bench_judge.folder_runs(str(folder))
    for det in ALL:  # every rule's named cases: each fires, or must not, at least once
        for case in cases(det.id):
            try:
                runs.append(load_record(case["run"], f"{det.id}: {case['name']}"))
            except LoadError:
                continue
    return runs


def test_a_verdict_judged_without_its_texts_gives_the_same_row() -> None:
    """judge(explain=False), which a batch uses when its reports read only rows, must give every
    figure a row carries (scores, tier, pattern, finding ids, gate, attempts, warnings) exactly as
    the explained verdict does, on every run of every shape the suite holds."""
    from procjudge.results import Row

    runs = _corpus()
    assert len(runs) > 400
    wrote_less = 0
    for run in runs:
        full, brief = judge(run), judge(run, explain=False)  # type: ignore[arg-type]
        assert Row.of(brief, "x") == Row.of(full, "x"), getattr(run, "path", "")
        assert brief.warnings == full.warnings
        assert all(item.evidence == "" for item in brief.items)
        # nor the per-iteration table, the phases, or the rules that placed the run, in words
        assert brief.iterations == [] and brief.phases == [] and brief.tier_rule == brief.pattern_rule == ""
        assert full.iterations and full.tier_rule and full.pattern_rule
        wrote_less += sum(len(item.evidence) for item in full.items) > 0
    assert wrote_less > len(runs) // 2  # the explained verdicts did carry texts that were left out


def test_a_note_keeps_its_detail_without_the_texts_so_it_stays_a_note() -> None:
    """A 0-point anti-pattern marked shown_only is a note, not a finding: its detail is what says
    so, and a verdict without texts keeps it."""
    notes = []
    for run in _corpus():
        full = judge(run)  # type: ignore[arg-type]
        if any(i.kind == "anti_pattern" and i.points == 0 and (i.detail or {}).get("shown_only") for i in full.items):
            notes.append((full, judge(run, explain=False)))  # type: ignore[arg-type]
    assert notes, "the corpus must hold a shown_only note for this test to mean anything"
    for full, brief in notes:
        assert brief.anti_patterns == full.anti_patterns and brief.findings == full.findings
        kept = [i.detail for i in brief.items if i.kind == "anti_pattern" and i.points == 0]
        assert kept == [i.detail for i in full.items if i.kind == "anti_pattern" and i.points == 0]


def test_a_text_that_fails_to_write_loses_only_its_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector's evidence given as a function is written inside the detector's guard: if it
    raises, that rule is listed as not checked with the error, and every other rule stands (a
    verdict without texts never writes it: the one way its row can differ, and only by a bug)."""
    from procjudge.detectors.base import Hit

    judging = sys.modules["procjudge.judge"]  # the package's ``judge`` is the function
    run = load_run(SAMPLES / "example1_good_standard.yaml")
    target = judging._STEPS[0]

    def broken(facts: object, policy: object) -> list[Hit]:
        return [Hit(points=1.0, evidence=lambda: str(1 / 0))]

    monkeypatch.setattr(judging, "_STEPS", [(*target[:2], broken, *target[3:]), *judging._STEPS[1:]])
    verdict = judge(run)
    assert target[0] not in {i.id for i in verdict.items}
    assert any(n.detector == target[0] and "ZeroDivisionError" in n.reason for n in verdict.not_checked)
    assert len(verdict.items) > 3
    brief = judge(run, explain=False)  # the text is never written, so the rule stands
    assert target[0] in {i.id for i in brief.items}


def test_the_verdicts_dump_writes_every_result_and_names_the_checkout_it_scored(tmp_path: Path) -> None:
    """benchmarks/verdicts.py is the byte-for-byte proof a speed change cites: one decodable result
    per run found and per synthetic run, and the same bytes when run twice."""
    import subprocess

    from procjudge.results import Result

    script = ROOT / "benchmarks" / "verdicts.py"
    outs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for out in outs:
        done = subprocess.run([sys.executable, str(script), str(out), str(SAMPLES), "--synthetic", "7"],
                              check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        assert str(ROOT) in done.stdout
    lines = outs[0].read_bytes().splitlines()
    samples = len([p for p in SAMPLES.iterdir() if p.suffix in (".yaml", ".yml", ".json", ".jsonl")])
    assert len(lines) >= samples + 7
    results = [msgspec.json.decode(line, type=Result) for line in lines]
    assert sum(r.verdict_msgpack is not None for r in results) >= 7 and all(r.row or r.error for r in results)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    elsewhere = subprocess.run([sys.executable, str(script), str(tmp_path / "c.jsonl"), "--root", str(tmp_path)],
                               check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert elsewhere.returncode != 0  # no procjudge under that root: it must not score with another one


def test_every_family_of_facts_is_a_typed_tuple_in_the_structs_order() -> None:
    """IterationFacts is built positionally from its families' typed tuples: the struct's fields
    are the families' fields, in order, and each family function is annotated to return its tuple
    and builds it from variables named as its fields, in order (a swap would put one fact in
    another's place; positional, since a keyword call costs twice as much on every iteration)."""
    import ast
    import inspect
    import typing

    from procjudge import facts as facts_module
    from procjudge.facts import FAMILIES, IterationFacts

    assert tuple(name for names in FAMILIES.values() for name in names) == IterationFacts.__struct_fields__
    families = {"_outcome_facts": facts_module.OutcomeFacts, "_test_facts": facts_module.TestFacts,
                "_change_facts": facts_module.ChangeFacts, "_action_facts": facts_module.ActionFacts}
    for name, family in families.items():
        function = getattr(facts_module, name)
        assert typing.get_type_hints(function, vars(facts_module))["return"] is family, name
        assert FAMILIES[name] == family._fields
        returns = [node.value for node in ast.walk(ast.parse(inspect.getsource(function))) if isinstance(node, ast.Return)]
        assert len(returns) == 1 and isinstance(returns[0], ast.Call) and not returns[0].keywords, name
        assert [arg.id for arg in returns[0].args if isinstance(arg, ast.Name)] == list(family._fields), name
    for field in IterationFacts.__struct_fields__[5:]:  # every family's field is typed as the struct types it
        family = next(f for f in families.values() if field in f._fields)
        assert typing.get_type_hints(family)[field] == typing.get_type_hints(IterationFacts)[field], field


def test_the_instruction_count_is_read_and_every_step_runs() -> None:
    import bench_instructions

    assert bench_instructions.instructions("==29696== \n==29696== I   refs:      1,946,451,376\n") == 1_946_451_376
    with pytest.raises(ValueError, match="no 'I refs'"):
        bench_instructions.instructions("valgrind: command not found")
    for step in bench_instructions.STEPS:  # what a counted child does, here without valgrind
        bench_instructions.child(step, 2, 3)


def test_the_performance_page_states_judging_in_instructions_beside_time() -> None:
    import bench_scale

    counted = {"judge": 800_000.0, "explain": 1_200_000.0, "load": 300_000.0, "libyaml": 10_000_000.0}
    text = bench_scale.instructions_paragraph(counted, 0.121)
    assert "judging a small run without the texts 800,000 instructions, explained 1,200,000" in text
    assert "loading one JSON line 300,000; the libyaml floor 10,000,000" in text
    assert "0.080 of the floor in instructions and 0.121 of it in time" in text
    assert "(explained: 0.120 in instructions)" in text
    assert "the small-run target is 0.080 of the floor (90 us against 1,128 us)" in text
    absent = bench_scale.instructions_paragraph(None, 0.121)
    assert absent.startswith("Not counted in instructions") and "valgrind is not on the PATH" in absent
