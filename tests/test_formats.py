"""Format rules (sprint, standard, marathon) and how the edge-case rules interact with them."""

from __future__ import annotations

import pytest

from procjudge import judge, load_policy, load_run

from conftest import SAMPLES, items_by_id, run_from, verdict_of


def iterations_of(verdict, item_id: str) -> list[list[int]]:
    return [i.iterations for i in verdict.items if i.id == item_id]


# sample file -> {item id: iterations of each item}
SAMPLE_RULES = {
    "sprint_double_submit.yaml": {"double_submit": [[0]], "budget_exceeded": [[3]]},
    "standard_cooldown_early_stop.yaml": {"cooldown_violation": [[1]], "early_termination": [[1]]},
    "marathon_phases.yaml": {"build_failure": [[0]], "timeout": [[4]], "budget_exceeded": [[6], [8]], "phase_gate": [[8]]},
}


@pytest.mark.parametrize("sample", list(SAMPLE_RULES))
def test_format_samples_show_their_rules(sample: str) -> None:
    verdict = judge(load_run(SAMPLES / sample))
    for item_id, expected in SAMPLE_RULES[sample].items():
        assert iterations_of(verdict, item_id) == expected, item_id
        for item in verdict.items:
            if item.id == item_id:
                assert item.evidence


def test_sprint_double_submit_scores_only_the_second() -> None:
    verdict = judge(load_run(SAMPLES / "sprint_double_submit.yaml"))
    assert [row.iteration for row in verdict.iterations] == [1, 2]
    assert verdict.final_score == pytest.approx(95.83, abs=0.01)
    assert "the final submission is iteration 2" in items_by_id(verdict)["budget_exceeded"][0].evidence


def test_marathon_phases_summary() -> None:
    verdict = judge(load_run(SAMPLES / "marathon_phases.yaml"))
    phases = {p.name: p for p in verdict.phases}
    assert phases["foundation"].trajectory == [0.0, 55.0, 75.0]
    assert phases["extension"].used == 3 and phases["extension"].not_scored == 1
    assert phases["hardening"].unused_lost == 1
    assert "phase_gate" in phases["foundation"].items
    # The drop into `extension` (new tests) is not judged as a regression by default.
    assert iterations_of(verdict, "monotonic_improvement") == [[1, 2, 4, 5]]
    assert "phase split foundation 44%" in items_by_id(verdict)["time_allocation"][0].evidence


def test_phase_boundaries_judged_when_the_policy_says_so(tmp_path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("trajectory: {judge_phase_boundaries: true}\n")
    verdict = judge(load_run(SAMPLES / "marathon_phases.yaml"), load_policy(policy))
    monotonic = items_by_id(verdict)["monotonic_improvement"][0]
    assert monotonic.points == 5 * 2 - 5
    assert verdict.pattern == "regression_recovered"
    default = judge(load_run(SAMPLES / "marathon_phases.yaml"))
    assert (default.pattern, default.tier) == ("healthy_progression", "systematic_refinement")


def marathon(phases, iterations, **run):
    return {"run": {"format": "marathon", "phases": phases, **run},
            "iterations": [{"iteration_telemetry": it} for it in iterations]}


def test_global_marathon_budget() -> None:
    doc = marathon([{"name": "a"}, {"name": "b"}],
                   [{"phase": "a" if k < 5 else "b", "score": {"post_iteration": 40 + 5 * k}} for k in range(10)])
    verdict = verdict_of(doc)
    assert verdict.run.budget == 8
    assert iterations_of(verdict, "budget_exceeded") == [[8], [9]]
    assert verdict.final_score == 75.0


def test_per_phase_budget_loses_unused_iterations() -> None:
    doc = marathon([{"name": "a", "max_iterations": 3}, {"name": "b", "max_iterations": 3}],
                   [{"phase": "a", "score": {"post_iteration": 50}}, {"phase": "b", "score": {"post_iteration": 70}}])
    phases = {p.name: p for p in verdict_of(doc).phases}
    assert phases["a"].unused_lost == 2 and phases["b"].unused_lost == 2


def test_build_failure_at_the_start_of_a_phase_with_first_iteration_scope(tmp_path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("rules: {build_failure: {zero_score: first_iteration}}\n")
    doc = marathon([{"name": "a"}, {"name": "b"}], [
        {"phase": "a", "score": {"post_iteration": 50}},
        {"phase": "a", "build": {"status": "failure"}, "score": {"post_iteration": 45}},
        {"phase": "b", "build": {"status": "failure"}, "score": {"post_iteration": 40}},
        {"phase": "b", "score": {"post_iteration": 70}},
    ])
    verdict = judge(run_from(doc), load_policy(policy))
    assert verdict.trajectory == [50.0, 45.0, 0.0, 70.0]
    # Two consecutive failing builds across the boundary still persist.
    assert iterations_of(verdict, "persistent_build_failure") == [[1, 2]]


def test_timed_out_iteration_in_a_phase_counts_missing_tests_as_failed() -> None:
    doc = marathon([{"name": "a"}], [
        {"phase": "a", "test_results": {"post_iteration": {"passed": 10, "failed": 10, "total": 20}}},
        {"phase": "a", "timed_out": True, "tests_completed": 14,
         "test_results": {"post_iteration": {"passed": 12, "failed": 2, "total": 20}}},
    ])
    verdict = verdict_of(doc)
    assert verdict.trajectory == [50.0, 60.0]
    assert "6 not run counted as failed" in items_by_id(verdict)["timeout"][0].evidence
    assert "early_termination" in items_by_id(verdict)  # 8 failing, budget left, last step moved 10


def test_identical_submission_compares_with_the_previous_scored_one() -> None:
    doc = {"run": {"format": "sprint"}, "iterations": [
        {"iteration_telemetry": {"timestamp_submit": "2026-03-27T09:00:00Z", "changes": {"code_hash": "a"},
                                 "score": {"post_iteration": 40}}},
        {"iteration_telemetry": {"timestamp_submit": "2026-03-27T09:00:10Z", "changes": {"code_hash": "b"},
                                 "score": {"post_iteration": 60}}},
        {"iteration_telemetry": {"timestamp_submit": "2026-03-27T09:05:00Z", "changes": {"code_hash": "b"},
                                 "score": {"post_iteration": 60}}},
    ]}
    verdict = verdict_of(doc)
    assert iterations_of(verdict, "double_submit") == [[0]]
    assert iterations_of(verdict, "identical_submission") == [[2]]


def test_timed_out_identical_resubmission_gets_both_rules() -> None:
    doc = {"iterations": [
        {"iteration_telemetry": {"changes": {"code_hash": "x"}, "test_results": {"post_iteration": {"passed": 5, "failed": 5,
                                                                                                    "total": 10}}}},
        {"iteration_telemetry": {"changes": {"code_hash": "x"}, "timed_out": True, "tests_completed": 8,
                                 "test_results": {"post_iteration": {"passed": 5, "failed": 3, "total": 10}}}},
    ]}
    found = items_by_id(verdict_of(doc))
    assert "identical_submission" in found and "timeout" in found and "wasted_iteration" in found


def test_no_early_termination_when_the_budget_is_spent() -> None:
    doc = {"run": {"format": "sprint"}, "iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 5, "failed": 5, "total": 10}}}},
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 8, "failed": 2, "total": 10}}}},
    ]}
    assert "early_termination" not in items_by_id(verdict_of(doc))


def test_max_iterations_overrides_the_format_budget() -> None:
    doc = {"run": {"format": "standard", "max_iterations": 2},
           "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}} for s in (40, 60, 80)]}
    verdict = verdict_of(doc)
    assert verdict.trajectory == [40.0, 60.0]
    assert iterations_of(verdict, "budget_exceeded") == [[2]]


@pytest.mark.parametrize("fmt,profile", [("sprint", "80%/20%"), ("standard", "57%/43%")])
def test_time_profile_reported_against_the_format(fmt: str, profile: str) -> None:
    doc = {"run": {"format": fmt}, "iterations": [
        {"iteration_telemetry": {"duration_seconds": 600, "score": {"post_iteration": 60}}},
        {"iteration_telemetry": {"duration_seconds": 300, "score": {"post_iteration": 90}}},
    ]}
    item = items_by_id(verdict_of(doc))["time_allocation"][0]
    assert profile in item.evidence


def test_the_format_registry_is_the_one_list_of_formats() -> None:
    from procjudge.cli import BatchFormat, CompareFormat, ScoreFormat
    from procjudge.render import formats

    for command, choices in (("score", ScoreFormat), ("batch", BatchFormat), ("compare", CompareFormat)):
        assert [c.value for c in choices] == formats.names(command)
        for name in formats.names(command):
            assert callable(formats.renderer(command, name)), (command, name)
    assert formats.names("batch") == ["table", "json", "markdown", "html", "parquet", "csv", "junit", "github", "sarif", "gitlab"]
    assert formats.names("score") == formats.names("compare") == ["table", "json", "markdown", "html"]
    with pytest.raises(KeyError):
        formats.renderer("score", "csv")
