"""The loop-level rules: best-so-far, the regression gate's replay and attempt risk."""

from __future__ import annotations

import pytest

from procjudge.loop import bucket_of
from procjudge.policy import load_policy

from conftest import items_by_id, verdict_of


def run_with_tests(*rounds: dict[str, str], budget: int = 6) -> dict:
    """Rounds of per-test outcomes ({name: passed|failed}); the score is the pass percentage."""
    return {"run": {"max_iterations": budget}, "iterations": [
        {"iteration_telemetry": {"test_results": {"tests": [{"name": n, "outcome": o} for n, o in r.items()]}}}
        for r in rounds]}


def test_best_so_far_and_the_final_by_policy() -> None:
    verdict = verdict_of({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}} for s in (90, 85, 80)]})
    assert (verdict.best_score, verdict.best_iteration, verdict.final_minus_best, verdict.last_score) == (90, 0, -10, 80)
    assert verdict.final_score == 80  # the submission the run returned, its last (best_so_far.final: last)
    best = verdict_of({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}} for s in (90, 85, 80)]},
                      load_policy(None, {"best_so_far": {"final": "best"}}))
    assert best.final_score == 90 and best.last_score == 80
    assert "returned_worse" in items_by_id(verdict)


def test_the_gate_rejects_a_revision_that_breaks_a_check_the_incumbent_passed() -> None:
    # round 1 right on a and b; round 2 repairs c but breaks b: the parental-leave case
    verdict = verdict_of(run_with_tests({"a": "passed", "b": "passed", "c": "failed"},
                                        {"a": "passed", "b": "failed", "c": "passed"},
                                        {"a": "passed", "b": "failed", "c": "failed"}))
    gate = verdict.gate
    assert gate.replayed and gate.returned_round == 1
    decisions = [(d.decision, d.clause[:1], d.check) for d in gate.iterations]
    assert decisions == [("incumbent", "t", None), ("rejected", "1", "b"), ("rejected", "1", "b")]
    assert gate.gated_final == pytest.approx(66.67) and gate.saved == pytest.approx(66.67 - 33.33)
    assert (gate.revisions_offered, gate.revisions_rejected) == (2, 2)


def test_the_gate_accepts_a_repair_compares_with_the_best_and_stops_after_two_rejections() -> None:
    verdict = verdict_of(run_with_tests({"a": "passed", "b": "failed", "c": "failed"},
                                        {"a": "passed", "b": "passed", "c": "failed"},   # clause 2: repairs b
                                        {"a": "failed", "b": "passed", "c": "failed"},   # clause 1: breaks a
                                        {"a": "passed", "b": "passed", "c": "failed"},   # clause 3: a tie keeps the incumbent
                                        {"a": "passed", "b": "passed", "c": "passed"}))  # not offered: two rejections
    decisions = [d.decision for d in verdict.gate.iterations]
    assert decisions == ["incumbent", "accepted", "rejected", "rejected", "not_offered"]
    assert verdict.gate.returned_round == 2
    assert verdict.gate.rejected_by_clause == {"clause 1": 1, "clause 3": 1}


def test_the_gate_exits_early_once_everything_passes() -> None:
    verdict = verdict_of(run_with_tests({"a": "passed"}, {"a": "passed"}, {"a": "failed"}))
    assert [d.decision for d in verdict.gate.iterations] == ["incumbent", "not_offered", "not_offered"]
    assert verdict.gate.returned_round == 1 and verdict.gate.saved == 100


def test_the_gate_says_when_it_cannot_be_replayed() -> None:
    verdict = verdict_of({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50}}}]})
    assert not verdict.gate.replayed
    assert verdict.gate.reason == "no per-test outcomes for every submission: the hard checks are unknown"


@pytest.mark.parametrize("count,bucket", [(1, "1"), (2, "2"), (3, "3"), (4, "4-6"), (6, "4-6"), (7, "7+"), (40, "7+")])
def test_attempt_buckets(count: int, bucket: str) -> None:
    assert bucket_of(count, (1, 2, 3, 4, 7)) == bucket


def test_outcomes_passed_exhausted_stopped() -> None:
    green = run_with_tests({"a": "failed"}, {"a": "passed"})
    assert verdict_of(green).attempts.outcome == "passed"
    never = run_with_tests({"a": "failed"}, {"a": "failed"}, budget=2)
    assert verdict_of(never).attempts.outcome == "exhausted"
    early = run_with_tests({"a": "failed"}, budget=4)
    assert verdict_of(early).attempts.outcome == "stopped"


def test_the_margin_rises_above_a_noise_floor_the_run_measured() -> None:
    doc = {"iterations": [
        {"iteration_telemetry": {"score": {"post_iteration": 80, "samples": [78, 80, 84]},
                                 "test_results": {"tests": [{"name": "a", "outcome": "passed"}, {"name": "b",
                                                                                                 "outcome": "failed"}]}}},
        {"iteration_telemetry": {"score": {"post_iteration": 86},
                                 "test_results": {"tests": [{"name": "a", "outcome": "passed"}, {"name": "b",
                                                                                                 "outcome": "failed"}]}}},
    ]}
    gate = verdict_of(doc).gate
    assert gate.noise_floor == pytest.approx(0.06) and gate.margin == pytest.approx(0.08)
    assert [d.decision for d in gate.iterations] == ["incumbent", "rejected"]  # +0.06 is within the noise
    del doc["iterations"][0]["iteration_telemetry"]["score"]["samples"]
    assert [d.decision for d in verdict_of(doc).gate.iterations] == ["incumbent", "accepted"]  # +0.06 > 0.05


def test_attempts_count_sequential_rounds_plus_failing_siblings() -> None:
    """A hybrid loop (several rounds, each a best-of-N) searched its rounds and its failed
    siblings: 5 rounds with no sibling failing is bucket 4-6, as 5 plain rounds are; one round with
    7 siblings failing is 8 attempts (7+); 3 rounds with 2 siblings failing is 5."""
    from procjudge import judge

    from conftest import run_from

    def bucket(rounds: int, siblings: int | None) -> str:
        info = {"max_iterations": 8} | ({"siblings_failed": siblings} if siblings is not None else {})
        scores = [{"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 10 if k == rounds - 1 else k,
                                                                               "total": 10}}}} for k in range(rounds)]
        return judge(run_from({"run": info, "iterations": scores})).attempts.bucket

    assert bucket(5, 0) == bucket(5, None) == "4-6"
    assert bucket(1, 7) == "7+" and bucket(3, 2) == "4-6" and bucket(1, 0) == "1"


def test_a_hybrids_siblings_round_by_round_make_the_product() -> None:
    """Seed 004: three sequential rounds of four parallel draws, "the search pressure is the
    product of the two". Each round submits one candidate and records the siblings the check
    rejected beside it (three in each round here: the first two rounds' submissions fail too, the
    last one passes): the attempts are the twelve draws. The run's one count is read where no
    round gives its own."""
    from procjudge import judge

    from conftest import run_from

    rounds = [{"iteration_telemetry": {"siblings_failed": 3, "test_results": {"post_iteration": {
        "passed": passed, "total": 10}}}} for passed in (3, 6, 10)]
    attempts = judge(run_from({"run": {"max_iterations": 8}, "iterations": rounds})).attempts
    assert (attempts.count, attempts.siblings_failed, attempts.basis) == (3, 9, "siblings_failed")
    assert attempts.bucket == "7+"  # 3 rounds x 4 draws = 12
    plain = judge(run_from({"run": {"max_iterations": 8, "siblings_failed": 2}, "iterations": [
        {"iteration_telemetry": {"test_results": r["iteration_telemetry"]["test_results"]}} for r in rounds]})).attempts
    assert (plain.siblings_failed, plain.bucket) == (2, "4-6")


def test_a_failed_build_is_a_rejected_round_not_the_end_of_the_replay() -> None:
    # round 2 does not build (no per-test outcomes); rounds 1 and 3 have them: the replay goes on
    document = run_with_tests({"a": "passed", "b": "failed"}, {}, {"a": "passed", "b": "passed"})
    document["iterations"][1] = {"iteration_telemetry": {"build": {"status": "failure"},
                                                         "test_results": {"post_iteration": {"passed": 0, "total": 2}}}}
    gate = verdict_of(document).gate
    assert gate.replayed, gate.reason
    decisions = [(d.decision, d.clause, d.check) for d in gate.iterations]
    assert decisions[1] == ("rejected", "1: the build failed: breaks every check the incumbent passed", "a")
    assert decisions[2][:1] == ("accepted",) and gate.returned_round == 3
    # a run with no per-test outcome anywhere is still not replayed
    bare = verdict_of({"iterations": [{"iteration_telemetry": {"build": {"status": "failure"}}},
                                      {"iteration_telemetry": {"score": {"post_iteration": 50}}}]})
    assert not bare.gate.replayed
