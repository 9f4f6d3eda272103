"""`procjudge explain`: the catalogue entry of every rule, its points read from the policy in
force, and an example scored live from the rule's own cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.catalogue import catalogue, example
from procjudge.cli import app
from procjudge.detectors import ALL

runner = CliRunner()


def test_the_catalogue_covers_every_detector_once() -> None:
    assert [rule.id for rule in catalogue()] == [det.id for det in ALL]
    for rule in catalogue():
        assert rule.points and rule.rule and rule.reads and rule.source, rule.id


@pytest.mark.parametrize("rule_id", [det.id for det in ALL])
def test_every_rule_has_an_example_that_fires(rule_id: str) -> None:
    shown = example(rule_id)
    assert shown is not None and shown.findings, f"{rule_id}: its first firing case does not fire"


def test_explain_shows_points_rule_evidence_source_and_example() -> None:
    result = runner.invoke(app, ["explain", "test_chasing"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("test_chasing  (anti_pattern; accuses")
    for label in ("points ", "rule ", "reads ", "source ", "example "):
        assert f"\n{label}" in out
    assert "-> -12.5 at iteration 1 [definite; code (python ast)]" in out


def test_points_follow_the_policy_in_force(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("anti_patterns:\n  regression_blindness: {per_test: -7}\n")
    default = runner.invoke(app, ["explain", "regression_blindness"]).stdout
    custom = runner.invoke(app, ["explain", "regression_blindness", "--policy", str(policy)]).stdout
    assert "points   -3 per test broken" in default and "points   -7 per test broken" in custom
    assert "-> -7 at iteration 1" in custom  # the example is scored with the same policy


def test_list_and_json() -> None:
    listed = runner.invoke(app, ["explain", "--list"])
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == len(ALL)
    entries = json.loads(runner.invoke(app, ["explain", "--list", "--json"]).stdout)
    assert {e["id"] for e in entries} == {det.id for det in ALL}
    one = json.loads(runner.invoke(app, ["explain", "late_pass", "--json"]).stdout)
    assert one["rule"]["id"] == "late_pass" and one["example"]["findings"]


def test_an_unknown_rule_gets_suggestions() -> None:
    result = runner.invoke(app, ["explain", "shotgun"])
    assert result.exit_code == 2 and "did you mean shotgun_debugging or shotgun_edits?" in result.stderr
    assert runner.invoke(app, ["explain"]).exit_code == 2


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_explain_fits_the_terminal_except_the_example_run_shown_as_written(columns: int) -> None:
    for det in ALL:
        result = runner.invoke(app, ["explain", det.id], env={"COLUMNS": str(columns)})
        assert result.exit_code == 0
        prose = [line for line in result.output.splitlines() if not line.startswith("  | ")]
        # words longer than the line (a long test name) are never split: allow those lines alone
        too_long = [line for line in prose if len(line) > min(columns, 96) and " " in line.strip()[:min(columns, 96)]]
        assert not too_long, (det.id, columns, too_long[:2])


def test_the_rule_list_fits_80_columns_and_keeps_one_rule_a_line_start() -> None:
    result = runner.invoke(app, ["explain", "--list"], env={"COLUMNS": "80"})
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    starts = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert starts == [det.id for det in ALL]
