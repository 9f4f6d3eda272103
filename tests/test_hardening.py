"""Hostile and unlucky input: every case here hung, crashed or cost without bound before.

Each test names the case; all must end quickly with exit 2 and a one-line message naming the file
(and the line where there is one), never a traceback or an "internal error"."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def deadline():
    """A case that hangs fails here after 60 s instead of stopping the suite."""
    def expire(signum, frame):  # noqa: ANN001
        raise TimeoutError("the case did not finish in 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


OK = "iterations:\n  - iteration_telemetry: {score: {post_iteration: 50}}\n  - iteration_telemetry: {score: {post_iteration: 60}}\n"


def score(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["score", *args])
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result.exit_code, result.output


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "run.yaml"
    os.mkfifo(path)
    return str(path)


def test_a_fifo_is_refused_not_opened(fifo: str, tmp_path: Path) -> None:
    started = time.monotonic()
    code, output = score(fifo)
    assert code == 2 and "is a FIFO, not a regular file" in output
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", fifo)
    assert code == 2 and "is a FIFO" in output
    batch = runner.invoke(app, ["batch", str(tmp_path), "--format", "json", "--jobs", "1"])
    assert batch.exit_code == 2 and "is a FIFO" in batch.output
    assert time.monotonic() - started < 10


def test_a_device_is_refused() -> None:
    code, output = score("/dev/zero")
    assert code == 2 and "is a device" in output


@pytest.mark.parametrize("literal", ["0x" + "f" * 5000, "0b" + "1" * 20000])
def test_huge_integers_are_errors_at_their_line(tmp_path: Path, literal: str) -> None:
    path = write(tmp_path, "r.yaml", f"iterations:\n  - iteration_telemetry: {{iteration_number: {literal}, score: {{post_iteration: 5}}}}\n")
    code, output = score(path)
    assert code == 2 and "r.yaml:2:" in output and "bits" in output


@pytest.mark.parametrize("value,expected", [("!!timestamp 2026-13-45", "as timestamp"), ("!!int ''", "as int")])
def test_malformed_tagged_values_are_errors_at_their_line(tmp_path: Path, value: str, expected: str) -> None:
    path = write(tmp_path, "r.yaml", f"iterations:\n  - iteration_telemetry: {{timestamp_start: {value}, score: {{post_iteration: 5}}}}\n")
    code, output = score(path)
    assert code == 2 and "r.yaml:2:" in output and expected in output


def test_feedback_with_more_passes_than_tests_is_a_validation_error(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", "iterations:\n  - iteration_telemetry: {score: {post_iteration: 5}}\n"
                                     "    iteration_feedback: {tests: {passed: 30, total: 10}}\n")
    code, output = score(path)
    assert code == 2 and "iteration_feedback.tests.passed" in output and "cannot exceed total" in output


def test_duplicate_keys_are_errors_naming_both_lines(tmp_path: Path) -> None:
    code, output = score(write(tmp_path, "r.yaml", OK + OK))
    assert code == 2 and "twice (first on line 1, again on line 4)" in output
    text = '{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 5},\n "score": {"post_iteration": 9}}}]}\n'
    code, output = score(write(tmp_path, "r.json", text))
    assert code == 2 and "given twice" in output and "lines 1 and 2" in output
    policy = write(tmp_path, "p.yaml", "clamp: {min: -30}\nclamp: {max: 5}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "p.yaml:2:1" in output and "twice" in output


def test_a_policy_that_validates_but_divides_by_zero_is_refused(tmp_path: Path) -> None:
    policy = write(tmp_path, "p.yaml", "formats: {standard: {time_profile: [0, 0, 0, 0]}}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "formats.standard.time_profile" in output and "positive sum" in output
    policy = write(tmp_path, "q.yaml", "clamp: {min: 40, max: -25}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "clamp.min" in output


def test_one_large_string_aliased_many_times_is_an_alias_bomb(tmp_path: Path) -> None:
    doc = "big: &b " + "x" * 1_300_000 + "\niterations:\n" + "".join(
        "  - iteration_telemetry: {score: {post_iteration: 5}, changes: {diff: *b}}\n" for _ in range(1000))
    started = time.monotonic()
    code, output = score(write(tmp_path, "r.yaml", doc))
    assert code == 2 and "alias bomb" in output
    assert time.monotonic() - started < 10


def test_pairs_are_counted_by_the_alias_check(tmp_path: Path) -> None:
    doc = "a: &a !!pairs [" + ", ".join(["{k: v}"] * 10) + "]\n"
    for k in range(1, 9):
        doc += f"n{k}: &n{k} !!pairs [" + ", ".join([f"{{k: *{'a' if k == 1 else f'n{k - 1}'}}}"] * 10) + "]\n"
    doc += "iterations: [{iteration_telemetry: {score: {post_iteration: 5}}}]\n"
    code, output = score(write(tmp_path, "r.yaml", doc))
    assert code == 2 and "alias bomb" in output


def test_a_huge_unknown_key_and_a_million_unknown_keys_cost_little(tmp_path: Path) -> None:
    started = time.monotonic()
    path = write(tmp_path, "k.json", json.dumps({"iterations": [{"iteration_telemetry": {
        "score": {"post_iteration": 5}, "k" * 5_000_000: 1}}]}))
    code, output = score(path)
    assert code == 0 and "(5,000,000 characters)" in output
    many = {f"k{i}": 1 for i in range(200_000)}
    path = write(tmp_path, "m.json", json.dumps({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 5}, **many}}]}))
    result = runner.invoke(app, ["score", path, "--format", "json"])
    assert result.exit_code == 0 and "199,980 more unknown keys" in result.stderr
    assert result.stderr.count("unknown key `") == 20
    assert time.monotonic() - started < 30


def test_control_characters_in_an_unknown_key_stay_on_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", json.dumps({"iterations": [{"iteration_telemetry": {
        "score": {"post_iteration": 5}, "x\n::error::pwned": 1}}]}))
    code, output = score(path)
    assert code == 0 and "\n::error::" not in output and "\\n::error::pwned" in output
