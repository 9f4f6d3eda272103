"""Implausible runs: an error for a score off the 0..100 scale; warnings (naming the file and the
iteration) for a 0..1 scale, a score that contradicts its counts, and iteration numbers that repeat
or go backwards, shown by score, batch and compare alike."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from procjudge.cli import app

from conftest import verdict_of

runner = CliRunner()


def entries(*scores, counts=None, numbers=None) -> dict:
    out = []
    for k, score in enumerate(scores):
        telemetry = {"score": {"post_iteration": score}}
        if counts:
            telemetry["test_results"] = {"post_iteration": {"passed": counts[k][0], "total": counts[k][1]}}
        if numbers:
            telemetry["iteration_number"] = numbers[k]
        out.append({"iteration_telemetry": telemetry})
    return {"iterations": out}


def test_a_0_to_1_scale_is_a_warning() -> None:
    verdict = verdict_of(entries(0.4, 0.7, 1.0, counts=[(4, 10), (7, 10), (10, 10)]))
    assert any("0..1 scale" in w and "0.4, 0.7, 1" in w for w in verdict.warnings)


def test_plain_percentages_raise_no_warning() -> None:
    assert verdict_of(entries(40, 70, 100, counts=[(4, 10), (7, 10), (10, 10)])).warnings == []


def test_a_score_far_from_its_own_counts_is_a_warning_but_a_blend_is_not() -> None:
    verdict = verdict_of(entries(95, counts=[(2, 24)]))
    assert any("iteration 0: score 95 contradicts its test counts (2/24" in w for w in verdict.warnings)
    # the document's own record: 84.7 with 22/24 passing (a score may blend other judges)
    assert verdict_of(entries(84.7, counts=[(22, 24)])).warnings == []


def test_repeated_and_decreasing_iteration_numbers_are_warnings() -> None:
    verdict = verdict_of(entries(40, 50, 60, numbers=[0, 2, 1]))
    assert any("iterations[2]: iteration number 1 comes after 2" in w for w in verdict.warnings)
    verdict = verdict_of(entries(40, 50, numbers=[1, 1]))
    assert any("iterations[1]: iteration number 1 repeats" in w for w in verdict.warnings)


def write(tmp_path: Path, name: str, doc: dict) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_score_over_100_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", str(write(tmp_path, "r.yaml", entries(170)))])
    assert result.exit_code == 2
    assert "score.post_iteration" in result.output and "100" in result.output


def test_warnings_reach_stderr_in_score_batch_and_compare(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write(tmp_path / "a", "run.yaml", entries(0.4, 1.0, counts=[(4, 10), (10, 10)]))
    b = write(tmp_path / "b", "run.yaml", entries(40, 100, counts=[(4, 10), (10, 10)]))
    score = runner.invoke(app, ["score", str(a), "--format", "json"])
    assert "0..1 scale" in score.stdout  # in the JSON warnings
    batch = runner.invoke(app, ["batch", str(tmp_path / "a"), "--format", "csv", "--jobs", "1"])
    assert batch.exit_code == 0 and "warning:" in batch.stderr and "0..1 scale" in batch.stderr
    compare = runner.invoke(app, ["compare", str(a), str(b), "--format", "json"])
    assert "0..1 scale" in compare.stderr
    folders = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json", "--jobs", "1"])
    assert "0..1 scale" in folders.stderr


def test_the_same_code_hash_scored_differently_is_warned_about() -> None:
    """Equal hashes with different scores: flaky tests or a hash not of the code (issue: a reader
    would doubt it); equal hashes with equal scores, and a changed suite, say nothing."""
    from procjudge import judge

    from conftest import run_from

    def warnings(scores: list[float], hashes: list[str], suites: list[str] | None = None) -> list[str]:
        its = [{"iteration_telemetry": {"score": {"post_iteration": s}, "changes": {"code_hash": h},
                                        **({"test_results": {"suite": suites[k]}} if suites else {})}}
               for k, (s, h) in enumerate(zip(scores, hashes, strict=True))]
        return [w for w in judge(run_from({"iterations": its})).warnings if "same code_hash" in w]

    expected = ("iteration 1: the same code_hash as iteration 0 scored 70 against 50 (flaky tests, or a hash that is "
                "not of the code?)")
    assert warnings([50, 70], ["a", "a"]) == [expected]
    assert warnings([50, 50], ["a", "a"]) == [] and warnings([50, 70], ["a", "b"]) == []
    assert warnings([50, 70], ["a", "a"], ["unit", "integration"]) == []
