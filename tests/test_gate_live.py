"""Seed 003's regression gate while the loop runs (``procjudge gate``, ``procjudge.Gate``): the
decisions are the replay's, round by round, since both apply ``procjudge.loop.decide``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procjudge import DEFAULT_POLICY, Gate, judge, load_run
from procjudge.cli import app

from conftest import ROOT

runner = CliRunner()
CHECKS = ("t1", "t2", "t3", "t4")


def _run_file(rounds: list[tuple[dict[str, bool], float]], path: Path) -> Path:
    iterations = [{"iteration_telemetry": {
        "test_results": {"tests": [{"name": n, "outcome": "passed" if ok else "failed"} for n, ok in tests.items()]},
        "score": {"post_iteration": round(score * 100, 4)}}} for tests, score in rounds]
    path.write_text(json.dumps({"run": {"id": "r", "max_iterations": len(rounds)}, "iterations": iterations}))
    return path


def _soft(value: int) -> float:  # a named function: older hypothesis reads a lambda's source on every draw
    return value / 100


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.fixed_dictionaries({n: st.booleans() for n in CHECKS}),
                          st.integers(0, 100).map(_soft)), min_size=1, max_size=8))
def test_the_live_gate_decides_as_the_replay_of_the_finished_run(rounds: list[tuple[dict[str, bool], float]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        replay = judge(load_run(str(_run_file(rounds, Path(folder) / "run.json")))).gate
    gate = Gate(DEFAULT_POLICY)
    live = [gate.offer(tests, score) for tests, score in rounds]
    assert replay.replayed
    for decision, answer in zip(replay.iterations[1:], live[1:], strict=True):
        if decision.decision == "not_offered":  # the replay stopped: the live gate had said stop
            assert live[live.index(answer) - 1].stop
            break
        assert (decision.decision, decision.clause, decision.check) == (answer.decision, answer.clause, answer.check)
    offered = [d for d in replay.iterations if d.decision != "not_offered"]
    assert live[len(offered) - 1].returned_round == replay.returned_round


def test_the_seeds_rules_round_by_round() -> None:
    gate = Gate(DEFAULT_POLICY)
    first = gate.offer({"a": True, "b": False, "c": False}, 0.33)
    assert (first.decision, first.returned_round, first.stop) == ("accepted", 1, False)
    repair = gate.offer({"a": True, "b": True, "c": False}, 0.66)
    assert (repair.decision, repair.clause[0], repair.returned_round) == ("accepted", "2", 2)
    breaks = gate.offer({"a": False, "b": True, "c": True}, 0.66)  # repairs c but breaks a: never accepted
    assert (breaks.decision, breaks.check, breaks.returned_round, breaks.stop) == ("rejected", "a", 2, False)
    flat = gate.offer({"a": True, "b": True, "c": False}, 0.68)  # breaks nothing, soft +0.02 < the 0.05 margin
    assert flat.decision == "rejected" and flat.stop and "2 rejections in a row" in (flat.stop_reason or "")


def test_an_incumbent_that_already_passes_everything_answers_stop_not_silence() -> None:
    answer = Gate(DEFAULT_POLICY).offer({"a": True, "b": True}, 0.96)
    assert answer.decision == "accepted" and answer.stop and "early exit" in (answer.stop_reason or "")
    assert not Gate(DEFAULT_POLICY).offer({"a": True, "b": True}, 0.90).stop  # soft score below gate.done_soft


def test_repeated_scores_raise_the_margin_above_their_noise() -> None:
    gate = Gate(DEFAULT_POLICY)
    gate.offer({"a": True, "b": False}, 0.50, samples=[0.45, 0.55])
    answer = gate.offer({"a": True, "b": False}, 0.58)  # +0.08 beats 0.05, not the noise 0.10 + 0.02
    assert answer.decision == "rejected" and answer.margin == pytest.approx(0.12)


def test_the_command_answers_each_line_at_once_and_names_a_bad_line() -> None:
    lines = [json.dumps({"tests": {"a": True, "b": False}, "score": 0.5}), "not json",
             json.dumps({"tests": {"a": True, "b": True}, "score": 0.97}),
             json.dumps({"tests": {"a": True}, "score": 1.7}), json.dumps({"tests": {"a": "yes"}, "score": 0.5})]
    result = runner.invoke(app, ["gate", "--format", "json"], input="\n".join(lines) + "\n")
    assert result.exit_code == 2
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == 5  # one line of answer per line of input
    assert answers[0]["decision"] == "accepted" and answers[1] == {"line": 2, "error": answers[1]["error"]}
    assert answers[2]["decision"] == "accepted" and answers[2]["stop"] and answers[2]["returned_round"] == 2
    assert "score" in answers[3]["error"] and "from 0 to 1" in answers[3]["error"]
    assert "tests" in answers[4]["error"]
    text = runner.invoke(app, ["gate"], input=lines[0] + "\n" + json.dumps({"tests": {"a": False, "b": True},
                                                                            "score": 0.5, "build": "failure"}) + "\n")
    assert text.exit_code == 0
    assert text.stdout.splitlines()[1].startswith("round 2: rejected (1: the build failed")


def test_the_gate_reads_the_policy_it_is_given(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("gate: {done_soft: 0.5}\n")
    result = runner.invoke(app, ["gate", "--policy", str(policy), "-f", "json"],
                           input=json.dumps({"tests": {"a": True}, "score": 0.6}) + "\n")
    assert json.loads(result.stdout)["stop"] is True


def test_the_sample_replay_and_the_live_gate_agree_on_the_bundled_run() -> None:
    verdict = judge(load_run(str(ROOT / "sample_telemetry" / "gate_replay.yaml")))
    assert verdict.gate.replayed and verdict.gate.returned_round is not None


def test_each_answer_arrives_while_the_harness_still_holds_standard_input_open() -> None:
    import subprocess
    import sys

    gate = subprocess.Popen([sys.executable, "-m", "procjudge", "gate", "--format", "json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert gate.stdin is not None and gate.stdout is not None
        for tests, score, decision in (({"a": True, "b": False}, 0.5, "accepted"), ({"a": False, "b": True}, 0.5, "rejected")):
            gate.stdin.write(json.dumps({"tests": tests, "score": score}) + "\n")
            gate.stdin.flush()
            answer = json.loads(gate.stdout.readline())  # blocks for ever if the gate waited for the end of input
            assert answer["decision"] == decision
        gate.stdin.close()
        assert gate.wait(timeout=60) == 0
    finally:
        gate.kill()
