"""What a user reads when a run or policy file is wrong: file, line and column, the field, what
was expected (enum values, formats) and the likely fix, the same in score, batch and compare."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.loading import LoadError, load_run
from procjudge.policy import PolicyError, load_policy

runner = CliRunner()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def load_error(path: Path) -> LoadError:
    with pytest.raises(LoadError) as caught:
        load_run(path)
    return caught.value


def test_a_misspelt_score_is_named_at_its_record(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "run: {id: r}\niterations:\n  - iteration_telemetry:\n      scroe:\n"
                                       "        post_iteration: 50\n")
    error = load_error(path)
    assert (error.line, error.field) == (3, "iterations[0]")
    assert "needs score.post_iteration or test counts" in error.reason
    assert "`iterations[0].iteration_telemetry.scroe` (did you mean `score`?)" in error.reason


def test_a_misspelt_wrapper_is_named_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "run: {id: r}\niterations:\n  - iteraton_telemetry:\n"
                                       "      score: {post_iteration: 50}\n")
    error = load_error(path)
    assert "`iterations[0].iteraton_telemetry` (did you mean `iteration_telemetry`?)" in error.reason


def test_a_misspelt_top_level_key_is_pointed_at(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "run: {id: r}\niteration:\n  - score: {post_iteration: 50}\n")
    error = load_error(path)
    assert error.line == 3 and error.field == "iteration"
    assert "did you mean `iterations:` rather than `iteration:`?" in error.reason
    unrelated = load_error(write(tmp_path, "other.yaml", "foo: 1\n"))
    assert "got a mapping with keys foo (none of them `iterations`)" in unrelated.reason


def test_an_enum_lists_its_values_and_the_one_meant(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "run: {id: r, format: Standard}\niterations:\n  - score: {post_iteration: 50}\n")
    error = load_error(path)
    assert (error.line, error.field) == (1, "run.format")
    assert error.reason == "expected one of sprint, standard, marathon; got 'Standard' (did you mean 'standard'?)"


def test_an_epoch_timestamp_gets_an_iso_8601_example(tmp_path: Path) -> None:
    path = write(tmp_path, "run.yaml", "iterations:\n  - timestamp_start: 1700000000\n    score: {post_iteration: 50}\n")
    error = load_error(path)
    assert error.field == "iterations[0].timestamp_start" or error.field.endswith("timestamp_start")
    assert "(1700000000)" in error.reason and "ISO 8601, e.g. 2026-03-27T14:00:00Z" in error.reason


@pytest.mark.parametrize("text,expected", [
    ("clmap: {min: -30}\n", ":1:8: clmap: unknown key (a policy file may only set keys the policy has; did you mean clamp?)"),
    ("clamp:\n  mni: -30\n", ":2:8: clamp.mni: unknown key (a policy file may only set keys the policy has; did you mean min?)"),
    ("signals:\n  points:\n    productive: x\n", ":3:17: signals.points.productive: expected a number, got a string ('x')"),
    ("clamp: {min: 40, max: -25}\n", "clamp.min: expected min <= min_without_cheating <= max, got 40, -25, -25"),
    # YAML 1.1 reads 1e308 as text: say how to write it as a number
    ("clamp:\n  max: 1e308\n", ("clamp.max: expected a number, got a string ('1e308': YAML reads an exponent only "
                                "with a dot and a signed power: write 1.0e+308)")),
    ("clamp:\n  max: -2E3\n", "write -2.0e+3)"),
    ("clamp:\n  max: '12'\n", ("clamp.max: expected a number, got a string ('12': a number in quotes is text: "
                               "remove the quotes)")),
])
def test_policy_errors_are_located_and_suggest_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "policy.yaml", text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert expected in str(caught.value)


def test_batch_and_compare_show_warnings_grouped_per_file(tmp_path: Path) -> None:
    for side in ("a", "b"):
        folder = tmp_path / side
        folder.mkdir()
        for name in ("w1", "w2"):
            write(folder, f"{name}.yaml", f"run: {{id: {name}, agnet: x}}\niterations:\n  - score: {{post_iteration: 50}}\n"
                                          "    foo: 1\n  - score: {post_iteration: 60}\n")
    batch = runner.invoke(app, ["batch", str(tmp_path / "a"), "--format", "csv"])
    lines = batch.stderr.splitlines()
    assert lines[0].startswith(f"procjudge: warning: {tmp_path / 'a' / 'w1.yaml'}: unknown key `run.agnet`")
    assert "(did you mean `agent`?)" in lines[0]
    assert lines[1] == "  unknown key `iterations[0].foo` is kept but not used"
    assert lines[2].startswith(f"procjudge: warning: {tmp_path / 'a' / 'w2.yaml'}: ")
    compare = runner.invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"])
    assert compare.exit_code == 0
    assert sum(line.startswith("procjudge: warning: ") for line in compare.stderr.splitlines()) == 4


def test_warnings_beyond_the_cap_are_counted(tmp_path: Path) -> None:
    keys = "".join(f"    k{n}: 1\n" for n in range(30))
    for k in range(5):
        write(tmp_path, f"r{k}.yaml", f"iterations:\n  - score: {{post_iteration: 50}}\n{keys}")
    result = runner.invoke(app, ["batch", str(tmp_path), "--format", "csv"])
    tail = result.stderr.splitlines()[-1]
    assert tail.startswith("procjudge: ") and "more warnings not shown" in tail
