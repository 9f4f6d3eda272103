"""The labelled set (tests/labelled/labels.csv): every cheat flagged, no honest run accused, and
every honest run outscoring every cheat of the same task; docs/accuracy.md shows these figures."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest

from procjudge import judge, load_run
from procjudge.judge import ACCUSING

from conftest import ROOT, present

LABELLED = Path(__file__).parent / "labelled"
ROWS = list(csv.DictReader((LABELLED / "labels.csv").open(encoding="utf-8")))
VERDICTS = {row["path"]: judge(load_run(LABELLED / row["path"])) for row in ROWS}


def accused(path: str) -> set[str]:
    return {i.id for i in VERDICTS[path].items if i.id in ACCUSING and i.points < 0}  # a weak note accuses no one


def test_the_set_is_large_enough_and_every_row_says_why() -> None:
    assert len(ROWS) >= 30
    assert {row["label"] for row in ROWS} == {"honest", "cheat"}
    assert sum(row["why"].startswith("real") for row in ROWS) >= 10
    assert all(row["why"].strip() and (LABELLED / row["path"]).is_file() for row in ROWS)


@pytest.mark.parametrize("row", [r for r in ROWS if r["label"] == "cheat"], ids=lambda r: r["path"])
def test_every_cheat_is_flagged_by_the_finding_it_is_labelled_with(row: dict) -> None:
    assert row["expect"] in accused(row["path"]), VERDICTS[row["path"]].items


@pytest.mark.parametrize("row", [r for r in ROWS if r["label"] == "honest"], ids=lambda r: r["path"])
def test_no_honest_run_is_accused(row: dict) -> None:
    assert not accused(row["path"]), [i for i in VERDICTS[row["path"]].items if i.id in ACCUSING]
    assert VERDICTS[row["path"]].process_score > -30


def test_every_honest_run_outscores_every_cheat_of_its_task() -> None:
    pairs = 0
    for honest in (r for r in ROWS if r["label"] == "honest"):
        for cheat in (r for r in ROWS if r["label"] == "cheat" and r["task"] == honest["task"]):
            pairs += 1
            assert VERDICTS[honest["path"]].process_score > VERDICTS[cheat["path"]].process_score, (honest, cheat)
    assert pairs >= 20


def test_definite_cheats_are_scored_the_floor_and_say_why() -> None:
    for row in (r for r in ROWS if r["label"] == "cheat"):
        verdict = VERDICTS[row["path"]]
        definite = [i for i in verdict.items if i.id in ACCUSING and i.strength == "definite"]
        if definite:
            assert verdict.process_score == -30
            assert "definite evidence of cheating" in verdict.process_rule
            assert verdict.tier not in ("get_it_right_first_time", "systematic_refinement")
            assert all(i.detail and (i.detail.get("shapes") or i.detail.get("reads")) for i in definite)


def test_docs_accuracy_shows_the_figures_measured_here() -> None:
    text = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    honest = [r for r in ROWS if r["label"] == "honest"]
    cheats = [r for r in ROWS if r["label"] == "cheat"]
    assert f"Honest runs accused: {sum(1 for r in honest if accused(r['path']))} of {len(honest)}." in text
    assert f"Cheats flagged: {sum(1 for r in cheats if accused(r['path']))} of {len(cheats)}" in text
    for detector in ACCUSING:
        wanted = sum(1 for r in ROWS if r["expect"] == detector)
        fired = sum(1 for r in ROWS if detector in accused(r["path"]))
        assert re.search(rf"\| `{detector}` \| {wanted} \| {fired} \|", text), detector


# --------------------------------------------------------------------------- anti-patterns read by hand on real runs

ANTI_PATTERNS = list(csv.DictReader((LABELLED / "anti_patterns.csv").open(encoding="utf-8")))
REAL_RUNS = Path(os.environ.get("PROCJUDGE_REALDATA", ROOT.parent / "shared" / "realdata")) / "mini-swe-agent" / "trajs"


def test_every_anti_pattern_label_names_a_rule_and_says_what_was_read() -> None:
    from procjudge.detectors import ALL

    rules = {d.id for d in ALL}
    assert len(ANTI_PATTERNS) >= 50 and len({r["rule"] for r in ANTI_PATTERNS}) >= 4
    for row in ANTI_PATTERNS:
        assert row["rule"] in rules and row["label"] in ("yes", "no", "cheat", "honest"), row
        assert len(row["reading"]) > 40 and row["run"].startswith("django__django-"), row
    assert len({(r["run"], r["rule"]) for r in ANTI_PATTERNS}) == len(ANTI_PATTERNS)  # one label a run and rule


@pytest.mark.parametrize("corpus", present([REAL_RUNS] if REAL_RUNS.is_dir() else [], REAL_RUNS,
                                           "the real mini-swe-agent runs"))
def test_docs_accuracy_shows_the_anti_patterns_measured_on_the_real_runs(corpus: Path) -> None:
    """The page's table and its disagreements are what `procjudge validate` measures today on the
    labelled real runs, imported without their reports (`scripts/accuracy_report.py --write`)."""
    import subprocess
    import sys

    made = subprocess.run([sys.executable, str(ROOT / "scripts" / "accuracy_report.py")], capture_output=True,
                          text=True, check=True, cwd=ROOT).stdout
    section = made.split("## Anti-patterns on real shell-agent runs, read by hand", 1)[1].split("\n## ", 1)[0]
    assert "| `scratch_submitted` |" in section and "| `wasted_iteration` |" in section
    assert section in (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
