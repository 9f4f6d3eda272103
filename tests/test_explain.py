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
    assert "-> -12.5 at iteration 1 [definite; diff (python ast)]" in out


def test_points_follow_the_policy_in_force(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("anti_patterns:\n  regression_blindness: {per_test: -7}\n")
    default = runner.invoke(app, ["explain", "regression_blindness"]).stdout
    custom = runner.invoke(app, ["explain", "regression_blindness", "--policy", str(policy)]).stdout
    assert "points   -3 per test broken" in default and "points   -7 per test broken" in custom
    assert "-> -7 at iteration 1" in custom  # the example is scored with the same policy


def test_list_and_json() -> None:
    from procjudge.catalogue import names

    listed = runner.invoke(app, ["explain", "--list"])
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == len(names())
    entries = json.loads(runner.invoke(app, ["explain", "--list", "--json"]).stdout)
    assert {e["id"] for e in entries} == set(names())
    assert {e["kind"] for e in entries if e["id"] not in {det.id for det in ALL}} == {"tier", "pattern"}
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
    from procjudge.catalogue import names

    starts = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert starts == names()


def test_explain_knows_every_tier_and_pattern_a_verdict_names_and_completes_names() -> None:
    from procjudge.classify import PLACEMENTS
    from procjudge.cli import _explain_names
    from procjudge.policy import load_policy

    from conftest import trajectory_run, verdict_of

    tiers = {i for i, k, _ in PLACEMENTS if k == "tier"}
    assert tiers == {"get_it_right_first_time", "systematic_refinement", "exploratory_converging",
                     "thrashing_recovering", "persistent_thrashing", "regression_spiral"}
    named = {(v.tier, v.pattern) for v in (verdict_of(trajectory_run(s)) for s in (
        [91], [50], [20, 20, 85, 85], [88, 90, 91, 91], [45, 80, 78, 92], [45, 44, 46, 48], [45, 72, 88, 91],
        [80, 70, 60, 50], [60, 64, 68, 72], [38, 51, 48, 71]))}
    assert {name for pair in named for name in pair} <= {i for i, _, _ in PLACEMENTS}
    result = runner.invoke(app, ["explain", "persistent_thrashing"], env={"COLUMNS": "100"})
    assert result.exit_code == 0 and result.stdout.startswith("persistent_thrashing  (tier)")
    assert "Summary: The Iteration Hierarchy" in result.stdout
    custom = load_policy(None, {"tier": {"acceptable_final": 60}})
    from procjudge.catalogue import explain

    assert "of 60 or more" in explain("thrashing_recovering", custom).rule.rule
    assert "did you mean thrashing" in runner.invoke(app, ["explain", "thrashng"]).stderr
    assert _explain_names("persis") == ["persistent_build_failure", "persistent_thrashing"]


def _perturbed(value: object) -> object:
    """Every number of a policy moved (fractions stay fractions, signs stay), to tell a number a
    rule's text reads from the policy from one it copies."""
    if isinstance(value, dict):
        return {k: _perturbed(v) for k, v in value.items()}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, int):
        return value + 10 if value >= 0 else value * 3 - 1
    if 0 < value < 1:
        return round(value * 0.9 + 0.03, 4)
    if value in (0.0, 1.0):
        return value + 0.5
    return round(value * 1.5 + (0.5 if value > 0 else -0.5), 4)


def _numbers(value: object) -> set[float]:
    import msgspec

    if isinstance(value, msgspec.Struct):
        return set().union(*(_numbers(getattr(value, f.name)) for f in msgspec.structs.fields(value)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {abs(float(value))}
    return set()


def _example_name(rule_id: str, policy: object) -> str:
    found = example(rule_id, policy)  # type: ignore[arg-type]
    return found.name if found is not None else ""


def test_no_rule_text_copies_a_number_of_its_own_policy_section() -> None:
    """Under a policy with every number moved, a number of a rule's own section that still shows
    in its texts is a copy of the default, and would contradict the policy in force."""
    import re

    import msgspec

    from procjudge.policy import DEFAULT, Policy

    custom = msgspec.convert(_perturbed(msgspec.to_builtins(DEFAULT)), Policy)
    number = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w-])")
    quoted = {"late_pass": {"4"}}  # "56% of those at 4-6 attempts": the rulebook's own figures
    for det, before, after in zip(ALL, catalogue(DEFAULT), catalogue(custom), strict=True):
        if det.section is None:
            continue
        section: object = DEFAULT
        for part in det.section.split("."):
            section = getattr(section, part)
        own = _numbers(section) - {0.0}
        texts = {field: (getattr(before, field), getattr(after, field)) for field in ("summary", "points", "rule")}
        texts["example"] = (_example_name(det.id, DEFAULT), _example_name(det.id, custom))
        for field, (text_before, text_after) in texts.items():
            kept = set(number.findall(text_before)) & set(number.findall(text_after))
            stale = {n for n in kept if abs(float(n)) in own} - quoted.get(det.id, set())
            assert not stale, f"{det.id}.{field} copies {sorted(stale)} from the default policy"


def test_explain_under_a_custom_policy_prints_the_custom_numbers(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("trajectory:\n  wasted_iteration: {min_delta: 7, points: -4}\n"
                      "anti_patterns:\n  shotgun_debugging: {range: {mild: -1, severe: -9}, max_files_per_test_fixed: 6}\n"
                      "signals: {reads_before_writing_seconds: 45}\n")
    wasted = runner.invoke(app, ["explain", "wasted_iteration", "--policy", str(policy)], env={"COLUMNS": "200"}).stdout
    assert "points   -4 each" in wasted and "less than 7 points" in wasted and "less than 2 points" not in wasted
    shotgun = runner.invoke(app, ["explain", "shotgun_debugging", "--policy", str(policy), "--json"]).stdout
    entry = json.loads(shotgun)["rule"]
    assert entry["points"] == "-1 to -9" and entry["summary"].startswith("-1 to -9:")
    assert "above 6:1 (s from 6:1 to 12:1; with no test fixed" in entry["rule"] and "more than 6 files" in entry["rule"]
    signal = json.loads(runner.invoke(app, ["explain", "reads_before_writing", "--policy", str(policy), "--json"]).stdout)
    assert "> 45" in signal["rule"]["rule"] and "More than 45 s" in signal["rule"]["summary"]
