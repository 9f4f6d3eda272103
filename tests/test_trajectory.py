"""Table-driven tests of the trajectory formulas, pattern and tier, on the document's trajectories."""

from __future__ import annotations

import msgspec
import pytest

from procjudge.policy import load_policy

from conftest import DEFAULT, SAMPLES, items_by_id, points, trajectory_run, verdict_of

# (trajectory, monotonic points, wasted count, convergence bonus?, pattern, tier)
CASES = {
    "healthy [45,72,88,91]": ([45, 72, 88, 91], 2, 0, False, "healthy_progression", "systematic_refinement"),
    "regression recovered [45,80,78,92]": ([45, 80, 78, 92], -1, 0, False, "regression_recovered", "thrashing_recovering"),
    "thrashing [45,44,46,48]": ([45, 44, 46, 48], -1, 1, False, "thrashing", "persistent_thrashing"),
    "strong start [88,90,91,91]": ([88, 90, 91, 91], 6, 2, False, "strong_start", "exploratory_converging"),
    "suspicious jump [20,20,85,85]": ([20, 20, 85, 85], 6, 2, False, "suspicious_jump", "exploratory_converging"),
    "early stop A [70,95]": ([70, 95], 2, 0, True, "healthy_progression", "systematic_refinement"),
    "early stop B [70,85,92,95]": ([70, 85, 92, 95], 1, 0, False, "healthy_progression", "systematic_refinement"),
    "example 1 [62,84,93]": ([62, 84, 93], 4, 0, False, "healthy_progression", "systematic_refinement"),
    "example 2 [38,51,48,71]": ([38, 51, 48, 71], -1, 0, False, "regression_recovered", "thrashing_recovering"),
    "one shot [91] (standard: 1 < 3/1.2)": ([91], 0, 0, True, "single_iteration", "get_it_right_first_time"),
    "spiral [80,70,60,50]": ([80, 70, 60, 50], -15, 0, False, "thrashing", "regression_spiral"),
    "stagnant low [30,31,30,31]": ([30, 31, 30, 31], -1, 3, False, "thrashing", "persistent_thrashing"),
    # a steady +4 a step is slow progress, not thrashing
    "steady +4 [60,64,68,72]": ([60, 64, 68, 72], 6, 0, False, "healthy_progression", "exploratory_converging"),
    # one submission below 85 has no iteration to judge: not persistent thrashing
    "one low shot [50]": ([50], 0, 0, False, "single_iteration", "exploratory_converging"),
    # one small regression from a perfect start is no spiral
    "[100,95]": ([100, 95], -5, 0, False, "thrashing", "thrashing_recovering"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_trajectory_rules(case: str) -> None:
    scores, monotonic, wasted, bonus, pattern, tier = CASES[case]
    verdict = verdict_of(trajectory_run(scores))
    found = items_by_id(verdict)
    assert verdict.trajectory == [float(s) for s in scores]
    assert points(verdict, "monotonic_improvement") == monotonic
    assert len(found.get("wasted_iteration", [])) == wasted
    assert points(verdict, "wasted_iteration") == -3 * wasted
    assert ("rapid_convergence" in found) is bonus
    assert verdict.pattern == pattern, verdict.pattern_rule
    assert verdict.tier == tier, verdict.tier_rule


def test_early_termination_pair_uses_convergence_efficiency() -> None:
    a = verdict_of(trajectory_run([70, 95]))
    b = verdict_of(trajectory_run([70, 85, 92, 95]))
    # the rulebook's flat +5: 95/2 = 47.5 > 95/3 x 1.2 = 38
    assert points(a, "rapid_convergence") == 5
    assert "47.50" in items_by_id(a)["rapid_convergence"][0].evidence
    assert "rapid_convergence" not in items_by_id(b)
    # the document: reaching 95 after one feedback round and stopping outranks reaching it in three;
    # B's climb is a progressive refinement (+5 at a final of 95), taken from the +2 a step (+6) the
    # monotonic bonus pays for the same steps: together the larger of the two, +6, below A's 7
    assert (a.process_score, b.process_score) == (7, 6)
    assert points(b, "progressive_refinement") == 5 and points(b, "monotonic_improvement") == 1


def test_the_textbook_progression_pays_progressive_refinement_under_the_default_policy() -> None:
    """Seed 000's textbook [60, 85, 95, 100]: every step gains less than the one before, nothing
    broken, final 100: the practice's full +6, taken from the monotonic bonus for the same three
    steps (+6), so the total is what it was and stopping early still ranks first."""
    textbook = verdict_of(trajectory_run([60, 85, 95, 100]))
    assert points(textbook, "progressive_refinement") == 6 and points(textbook, "monotonic_improvement") == 0
    assert "taken from monotonic_improvement" in items_by_id(textbook)["progressive_refinement"][0].evidence
    quick = verdict_of(trajectory_run([60, 100]))
    assert quick.process_score > textbook.process_score


def test_one_shot_runs_cannot_fill_the_clamp_with_an_unused_budget() -> None:
    # a budget of 10 used to pay +5 and +2.5 for each of the 9 unused submissions: +27.5, clamped at +20
    verdict = verdict_of(trajectory_run([100], max_iterations=10))
    assert points(verdict, "rapid_convergence") == 5 and verdict.process_score == 5


@pytest.mark.parametrize("slower", [[70, 85, 95], [70, 85, 92, 95], [60, 80, 90, 95]])
def test_stopping_early_at_the_same_final_outranks_a_slower_climb(slower: list[float]) -> None:
    assert verdict_of(trajectory_run([70, 95])).process_score > verdict_of(trajectory_run(slower)).process_score


@pytest.mark.parametrize("scores", [[50], [70, 50], [100, 95], [40, 60]])
def test_convergence_needs_a_good_final_that_is_not_below_the_best(scores: list[float]) -> None:
    assert "rapid_convergence" not in items_by_id(verdict_of(trajectory_run(scores)))


@pytest.mark.parametrize("fmt,used,bonus", [
    ("sprint", 1, False),      # 91/1 is never above 91/1 x 1.2
    ("standard", 2, True),     # 2 < 3 / 1.2
    ("standard", 3, False),
    ("marathon", 4, True),     # 4 < 6 / 1.2 = 5
    ("marathon", 5, False),
])
def test_convergence_baseline_per_format(fmt: str, used: int, bonus: bool) -> None:
    scores = [95 - 1 * (used - 1 - k) for k in range(used)]
    verdict = verdict_of(trajectory_run(scores, fmt=fmt))
    assert ("rapid_convergence" in items_by_id(verdict)) is bonus


def test_wasted_iteration_uses_absolute_delta_and_regressions_are_not_wasted() -> None:
    verdict = verdict_of(trajectory_run([50, 51.5, 40]))
    wasted = items_by_id(verdict)["wasted_iteration"]
    assert [w.iterations for w in wasted] == [[1]]


def test_clamp_and_composite_swing() -> None:
    verdict = verdict_of(trajectory_run([90, 80, 70, 60, 50, 40, 30, 20], fmt="marathon", process_weight=0.2))
    assert verdict.raw_process_score < -30
    # without cheating, penalties stop at -25: the last five points are kept for definite cheats
    assert verdict.process_score == -25
    assert verdict.composite_swing == pytest.approx(-5.0)


def test_default_process_weight_comes_from_policy() -> None:
    verdict = verdict_of(trajectory_run([62, 84, 93]))
    assert verdict.composite_swing == pytest.approx(verdict.process_score * 0.15)


def test_raw_score_is_the_sum_of_items() -> None:
    verdict = verdict_of(trajectory_run([38, 51, 48, 71]))
    assert verdict.raw_process_score == pytest.approx(sum(i.points for i in verdict.items))


def build(status: str) -> dict:
    return {"status": status, "errors": ["SyntaxError: invalid syntax"] if status == "failure" else []}


def test_build_failure_scores_zero_and_persistent_failure_costs_ten() -> None:
    doc = trajectory_run([40, 40, 40, 80])
    for k in (0, 1):
        doc["iterations"][k]["iteration_telemetry"]["build"] = build("failure")
    verdict = verdict_of(doc)
    found = items_by_id(verdict)
    assert verdict.trajectory[:2] == [0.0, 0.0]
    assert len(found["build_failure"]) == 2
    assert [i.iterations for i in found["persistent_build_failure"]] == [[0, 1]]
    assert points(verdict, "persistent_build_failure") == -10


def test_single_build_failure_is_not_persistent() -> None:
    doc = trajectory_run([40, 60, 80])
    doc["iterations"][0]["iteration_telemetry"]["build"] = build("failure")
    verdict = verdict_of(doc)
    assert verdict.trajectory[0] == 0.0
    assert "persistent_build_failure" not in items_by_id(verdict)


def test_build_failure_read_from_feedback_too() -> None:
    doc = trajectory_run([40, 60])
    doc["iterations"][0]["iteration_feedback"] = {"build": build("failure")}
    assert verdict_of(doc).trajectory[0] == 0.0


def test_timeout_counts_tests_not_run_as_failed() -> None:
    doc = {"iterations": [{"iteration_telemetry": {
        "timed_out": True, "tests_completed": 12,
        "test_results": {"post_iteration": {"passed": 10, "failed": 2, "total": 24}},
    }}]}
    verdict = verdict_of(doc)
    item = items_by_id(verdict)["timeout"][0]
    assert "12 not run" in item.evidence
    assert verdict.trajectory == [pytest.approx(100 * 10 / 24, abs=0.01)]
    assert verdict.iterations[0].passed == 10


@pytest.mark.parametrize("field,value,basis", [
    ("code_hash", "abc123", "code_hash"),
    ("diff", "", "diff"),
])
def test_identical_submission(field: str, value: str, basis: str) -> None:
    doc = trajectory_run([50, 50, 70])
    doc["iterations"][0]["iteration_telemetry"]["changes"] = {"code_hash": "abc123"} if field == "code_hash" else {}
    doc["iterations"][1]["iteration_telemetry"]["changes"] = {field: value}
    doc["iterations"][2]["iteration_telemetry"]["changes"] = {"code_hash": "def456", "diff": "+x\n"}
    found = items_by_id(verdict_of(doc))
    assert [i.iterations for i in found["identical_submission"]] == [[1]]
    assert found["identical_submission"][0].basis == basis
    assert found["identical_submission"][0].points == -5


def test_identical_submission_from_plain_counts() -> None:
    doc = trajectory_run([50, 50])
    doc["iterations"][1]["iteration_telemetry"]["changes"] = {
        "files_modified": 0, "files_created": 0, "files_deleted": 0, "lines_added": 0, "lines_removed": 0}
    assert "identical_submission" in items_by_id(verdict_of(doc))


def test_hashes_decide_over_an_empty_diff() -> None:
    doc = trajectory_run([50, 50])
    doc["iterations"][0]["iteration_telemetry"]["changes"] = {"code_hash": "a"}
    doc["iterations"][1]["iteration_telemetry"]["changes"] = {"code_hash": "b", "diff": ""}
    assert "identical_submission" not in items_by_id(verdict_of(doc))


def test_different_code_is_not_identical() -> None:
    doc = trajectory_run([50, 50])
    doc["iterations"][0]["iteration_telemetry"]["changes"] = {"code_hash": "a"}
    doc["iterations"][1]["iteration_telemetry"]["changes"] = {"code_hash": "b", "lines_added": 3, "files_modified": 1}
    assert "identical_submission" not in items_by_id(verdict_of(doc))


def test_score_falls_back_to_pass_rate() -> None:
    doc = {"iterations": [{"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 3, "total": 4}}}}]}
    verdict = verdict_of(doc)
    assert verdict.trajectory == [75.0]
    assert verdict.iterations[0].score_source == "100 x passed / total"


def test_a_repaired_build_is_not_a_suspicious_jump() -> None:
    doc = trajectory_run([0, 0, 60])
    for k in (0, 1):
        doc["iterations"][k]["iteration_telemetry"]["build"] = build("failure")
    verdict = verdict_of(doc)
    assert verdict.pattern != "suspicious_jump"
    assert verdict.pattern == "healthy_progression"


def test_one_failed_build_is_not_a_list_of_regressions() -> None:
    doc = {"iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 20, "total": 24}}}},
        {"iteration_telemetry": {"build": build("failure"), "test_results": {"post_iteration": {"passed": 0, "total": 24}}}},
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 22, "total": 24}}}},
    ]}
    verdict = verdict_of(doc)
    found = items_by_id(verdict)
    assert "regression_blindness" not in found
    assert "persistent_build_failure" not in found  # the document's -10 is for a failure that persists
    assert verdict.process_score > -10


def test_a_timeout_is_not_a_list_of_regressions() -> None:
    doc = {"iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 20, "total": 24}}}},
        {"iteration_telemetry": {"timed_out": True, "tests_completed": 3,
                                 "test_results": {"post_iteration": {"passed": 3, "total": 24}}}},
    ]}
    assert "regression_blindness" not in items_by_id(verdict_of(doc))


def test_a_run_stuck_at_zero_earns_nothing_for_no_regressions() -> None:
    doc = {"iterations": [{"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 0, "total": 10}}}}
                          for _ in range(10)], "run": {"max_iterations": 10}}
    verdict = verdict_of(doc)
    assert "no_regressions" not in items_by_id(verdict)
    assert verdict.process_score < verdict_of(trajectory_run([100])).process_score
    assert verdict.process_score < 0


def test_a_net_gain_in_passes_does_not_rule_regressions_out() -> None:
    # the document's own case: 18/24 to 20/24 with two real regressions the counts cannot show
    doc = {"iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 18, "total": 24}}}},
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 20, "total": 24}}}},
    ]}
    assert "no_regressions" not in items_by_id(verdict_of(doc))
    doc["iterations"][1]["iteration_telemetry"]["test_results"]["regressions"] = 0
    assert "no_regressions" in items_by_id(verdict_of(doc))


def test_counts_from_another_suite_are_not_compared() -> None:
    doc = {"iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 900, "total": 1000}}}},
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 70, "total": 70}}}},
    ]}
    assert "regression_blindness" not in items_by_id(verdict_of(doc))
    doc["iterations"][1]["iteration_telemetry"]["test_results"]["post_iteration"] = {"passed": 70, "total": 1000}
    assert points(verdict_of(doc), "regression_blindness") == -3 * 830


def test_a_step_from_zero_to_zero_holds_nothing_and_is_not_paid() -> None:
    flat = verdict_of(trajectory_run([0, 0, 0, 40]))
    assert points(flat, "monotonic_improvement") == 2  # only 0 -> 40 is paid
    assert "2 steps from 0 to 0 not paid" in items_by_id(flat)["monotonic_improvement"][0].evidence
    # a flat step above zero still holds ground, as the rulebook says
    assert points(verdict_of(trajectory_run([30, 30, 30, 40])), "monotonic_improvement") == 6
    paying = msgspec.structs.replace(DEFAULT.trajectory, monotonic_improvement=msgspec.structs.replace(
        DEFAULT.trajectory.monotonic_improvement, pay_flat_at_zero=True))
    policy = msgspec.structs.replace(DEFAULT, trajectory=paying)
    assert points(verdict_of(trajectory_run([0, 0, 0, 40]), policy), "monotonic_improvement") == 6


def test_a_fall_from_changing_only_tests_in_the_agent_s_own_runs_is_no_regression_of_the_code() -> None:
    """pytest-7432 appended a test that failed before its fix; django-13033 broke its new test on
    purpose to see it run: in a shell agent's own runs such a step changed no code, so its fall is
    named, not charged; a step that changed the code and fell is; graded submissions are charged
    as the rulebook says; and ``charged`` charges every fall."""
    from procjudge import judge

    from conftest import run_from

    def run(local: bool, second: str) -> dict[str, object]:
        def step(path: str, passed: int) -> dict[str, object]:
            diff = f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n"
            return {"iteration_telemetry": {"changes": {"diff": diff}, "test_results": {
                "suite": "pytest tests", "post_iteration": {"passed": passed, "failed": 10 - passed, "total": 10}}}}
        steps = [step("src/m.py", 9), step(second, 8), step("src/m.py", 10)]
        return {"run": {"iterations_are": "local_runs"}, "iterations": steps} if local else {"iterations": steps}

    (spared,) = items_by_id(judge(run_from(run(True, "tests/test_m.py"))))["monotonic_improvement"]
    assert spared.points == 2 and "1 fall from changing only tests not charged (iter 1: -10)" in spared.evidence, spared
    assert points(judge(run_from(run(True, "src/m.py"))), "monotonic_improvement") == 2 - 5
    assert points(judge(run_from(run(False, "tests/test_m.py"))), "monotonic_improvement") == 2 - 5
    charging = msgspec.structs.replace(DEFAULT.trajectory, monotonic_improvement=msgspec.structs.replace(
        DEFAULT.trajectory.monotonic_improvement, tests_only_falls_in_local_runs="charged"))
    charged = judge(run_from(run(True, "tests/test_m.py")), msgspec.structs.replace(DEFAULT, trajectory=charging))
    assert points(charged, "monotonic_improvement") == 2 - 5


def test_passes_that_vanish_with_no_failure_are_removed_tests_not_regressions() -> None:
    from procjudge import judge

    from conftest import run_from

    def run(after: dict) -> object:
        return judge(run_from({"iterations": [
            {"iteration_telemetry": {"test_results": {"suite": "runtests.py app", "post_iteration": {"passed": 39, "failed": 0,
                                                                                                     "total": 39}}}},
            {"iteration_telemetry": {"test_results": {"suite": "runtests.py app", "post_iteration": after}}}]}))

    removed = items_by_id(run({"passed": 37, "failed": 0, "total": 37}))
    assert "regression_blindness" not in removed
    broken = items_by_id(run({"passed": 37, "failed": 1, "total": 38}))
    assert broken["regression_blindness"][0].points == -3  # at most the one failing test was broken


def test_a_step_to_another_suite_is_not_judged_as_a_regression_or_a_stall() -> None:
    def step(suite: str, passed: int, total: int) -> dict:
        return {"iteration_telemetry": {"test_results": {"suite": suite, "post_iteration": {"passed": passed,
                                                                                            "failed": total - passed,
                                                                                            "total": total}}}}

    # the module (65/69), then one failing test on its own (0/1), then the module again (69/69)
    verdict = verdict_of({"iterations": [step("runtests.py files", 65, 69), step("runtests.py files.T.test_x", 0, 1),
                                         step("runtests.py files", 69, 69)]})
    assert points(verdict, "monotonic_improvement") == 0 and "wasted_iteration" not in items_by_id(verdict)
    assert verdict.tier != "thrashing_recovering"
    judging = msgspec.structs.replace(DEFAULT, trajectory=msgspec.structs.replace(DEFAULT.trajectory, judge_suite_changes=True))
    assert points(verdict_of({"iterations": [step("a", 65, 69), step("b", 0, 1), step("a", 69, 69)]}, judging),
                  "monotonic_improvement") == -3


def _held_back_run(visible: list[int], held_back: list[tuple[int, int] | None]) -> dict:
    """Runs whose visible suite scores ``visible`` (passes of 10), each submission with a held-back
    suite of (passed, total), or none."""
    iterations = []
    for k, (passed, hidden) in enumerate(zip(visible, held_back, strict=True)):
        results: dict = {"post_iteration": {"passed": passed, "failed": 10 - passed, "total": 10}}
        if hidden is not None:
            results["hidden"] = {"passed": hidden[0], "total": hidden[1]}
        iterations.append({"iteration_telemetry": {"iteration_number": k, "test_results": results}})
    return {"run": {"format": "standard"}, "iterations": iterations}


@pytest.mark.parametrize(("visible", "held_back", "tier", "rule_says"), [
    # one green submission that the held-back suite shows wrong: not right the first time
    ([10], [(0, 1)], "exploratory_converging", "held-back suite passes 0/1 at iteration 0"),
    ([10], [(5, 5)], "get_it_right_first_time", "first score 100 >= 85"),
    ([10], [None], "get_it_right_first_time", "first score 100 >= 85"),
    ([10], [(0, 0)], "get_it_right_first_time", "first score 100 >= 85"),  # a suite of no tests never ran
    # two submissions: the final one's held-back suite decides, and the rule says why
    ([9, 10], [(1, 2), (1, 2)], "systematic_refinement",
     "(not get_it_right_first_time: the held-back suite passes 1/2 at iteration 1)"),
    ([9, 10], [(1, 2), (2, 2)], "get_it_right_first_time", "first score 90 >= 85 in 2 submissions"),
    # below the first tier anyway: no note
    ([5, 10], [(1, 2), (1, 2)], "systematic_refinement", "mean gain 50 a step"),
])
def test_the_first_tier_needs_the_held_back_suite_to_pass(visible: list[int], held_back: list, tier: str,
                                                          rule_says: str) -> None:
    verdict = verdict_of(_held_back_run(visible, held_back))
    assert verdict.tier == tier, verdict.tier_rule
    assert rule_says in verdict.tier_rule
    assert ("not get_it_right_first_time" in verdict.tier_rule) == (tier != "get_it_right_first_time"
                                                                   and len(visible) > 1 and visible[0] >= 9)


def test_the_held_back_suite_can_be_left_out_of_the_first_tier(tmp_path) -> None:
    from procjudge import load_policy

    policy = tmp_path / "p.yaml"
    policy.write_text("tier: {first_time_held_back: ignore}\n")
    verdict = verdict_of(_held_back_run([10], [(0, 1)]), load_policy(policy))
    assert verdict.tier == "get_it_right_first_time", verdict.tier_rule
    # the held-back failure is still shown, as a signal
    assert points(verdict, "hidden_suite_gap") == -1
    policy.write_text("tier: {first_time_held_back: sometimes}\n")
    with pytest.raises(Exception, match="first_time_held_back"):
        load_policy(policy)


def _categorised(outcomes: dict[str, tuple[str, str]]) -> dict:
    return {"iteration_telemetry": {"test_results": {"tests": [
        {"name": name, "outcome": outcome, "category": category} for name, (outcome, category) in outcomes.items()]}}}


def test_tests_of_a_held_back_category_are_the_held_back_suite_not_the_visible_one() -> None:
    # the rulebook's detection of test-chasing: the static tests pass, the adversarial ones fail
    run = {"iterations": [
        _categorised({"test_basic_tax": ("failed", "static"), "test_high": ("passed", "static"),
                      "adv_random_income": ("passed", "adversarial")}),
        _categorised({"test_basic_tax": ("passed", "static"), "test_high": ("passed", "static"),
                      "adv_random_income": ("failed", "adversarial"), "adv_negative": ("failed", "adversarial")}),
    ]}
    verdict = verdict_of(run)
    assert verdict.trajectory == [50.0, 100.0]  # the visible suite alone
    assert verdict.held_back is not None and (verdict.held_back.passed, verdict.held_back.total) == (0, 2)
    assert set(verdict.held_back.failing) == {"adv_random_income", "adv_negative"}
    assert "hidden_suite_gap" in items_by_id(verdict) and "rapid_convergence" not in items_by_id(verdict)
    # with no held-back category the same tests are all visible, and nothing is held back
    plain = verdict_of(run, load_policy(None, {"anti_patterns": {"test_chasing": {"hidden_categories": []}}}))
    assert plain.trajectory == [66.67, 50.0] and plain.held_back is None


def test_a_record_whose_tests_are_all_held_back_keeps_them_visible() -> None:
    run = {"iterations": [_categorised({"a": ("passed", "hidden")}), _categorised({"a": ("passed", "hidden")})]}
    assert verdict_of(run).trajectory == [100.0, 100.0]


def test_a_drop_left_unjudged_is_named_where_the_text_says_no_regression() -> None:
    """marathon_phases drops from 75 to 60 where extension's suite begins: not a regression by
    policy (judge_phase_boundaries off), yet the aggregate counts the drop; the pattern and tier
    say which drop they leave out rather than 'no regression' beside 'regressions 1'."""
    from procjudge import judge, load_run

    verdict = judge(load_run(SAMPLES / "marathon_phases.yaml"))
    assert verdict.aggregate.regression_count == 1
    for rule in (verdict.pattern_rule, verdict.tier_rule):
        assert "no counted regression (the drop at iteration 3 crosses a phase or suite boundary" in rule, rule
    clean = judge(load_run(SAMPLES / "example1_good_standard.yaml"))
    assert clean.tier_rule.startswith("no regression,")


def test_a_stall_or_a_fall_in_the_agent_s_own_runs_quotes_the_check_that_showed_it() -> None:
    """A shell agent's wasted step and its fall are read from its checks: the evidence names the
    command and the line it printed, as a reviewer finds them in the log; graded submissions have
    no such check and say the scores alone."""
    from procjudge import judge

    from conftest import run_from

    def step(n: int, passed: int, message: str) -> dict[str, object]:
        diff = f"--- a/src/m.py\n+++ b/src/m.py\n@@ -1,1 +1,2 @@\n x = 1\n+y = {n}\n"
        return {"iteration_telemetry": {"changes": {"diff": diff}, "checks": [
            {"command": "pytest tests -x", "outcome": "passed"},  # an earlier check of the same code is not the score
            {"command": "python reproduce.py", "outcome": "passed" if passed else "error", "message": message}],
            "test_results": {"suite": "python reproduce.py",
                             "post_iteration": {"passed": passed, "failed": 1 - passed, "total": 1}}}}

    steps = [step(0, 0, "NameError: name 'y' is not defined"), step(1, 0, "TypeError: " + "x" * 200),
             step(2, 1, "OK"), step(3, 0, "KeyError: 'z'")]
    items = items_by_id(judge(run_from({"run": {"iterations_are": "local_runs"}, "iterations": steps})))
    (wasted,) = items["wasted_iteration"]
    assert wasted.points < 0 and wasted.evidence.startswith(
        "score 0 -> 0 (moved 0 < 2); after the change `python reproduce.py` crashed: TypeError: xxx"), wasted.evidence
    assert wasted.evidence.endswith("x...") and len(wasted.evidence.split("crashed: ")[1]) == 90  # a long line is cut
    (monotonic,) = items["monotonic_improvement"]
    assert "(iter 3: -100 (`python reproduce.py` crashed: KeyError: 'z'))" in monotonic.evidence, monotonic.evidence
    graded = items_by_id(judge(run_from({"iterations": steps})))
    assert graded["wasted_iteration"][0].evidence == "score 0 -> 0 (moved 0 < 2)"
    assert "(iter 3: -100)" in graded["monotonic_improvement"][0].evidence


def test_a_check_of_the_agent_s_own_that_breaks_is_quoted_as_it_failed() -> None:
    """regression_blindness in a shell agent's run names the broken check by its command and
    quotes the line it printed when it broke; a graded run's broken test is named alone."""
    from procjudge import judge

    from conftest import run_from

    def step(n: int, outcome: str, message: str) -> dict[str, object]:
        diff = f"--- a/src/m.py\n+++ b/src/m.py\n@@ -1,1 +1,2 @@\n x = 1\n+y = {n}\n"
        return {"iteration_telemetry": {"changes": {"diff": diff}, "checks": [
            {"command": "python reproduce.py", "outcome": "passed" if outcome == "passed" else "error",
             "message": message}],
            "test_results": {"suite": "python reproduce.py", "tests": [{"name": "python reproduce.py", "outcome": outcome}]}}}

    steps = [step(0, "passed", "OK"), step(1, "failed", "TypeError: 'classmethod' object is not callable")]
    local = items_by_id(judge(run_from({"run": {"iterations_are": "local_runs"}, "iterations": steps})))
    (blind,) = local["regression_blindness"]
    assert "1 previously passing test broken: `python reproduce.py` crashed: TypeError: 'classmethod' " \
        "object is not callable;" in blind.evidence, blind.evidence
    (graded,) = items_by_id(judge(run_from({"iterations": steps})))["regression_blindness"]
    assert "crashed" not in graded.evidence, graded.evidence
