"""The command line through typer's CliRunner: formats, goldens, policy, schema, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml
from typer.testing import CliRunner

from procjudge.cli import app, main

from conftest import ROOT, SAMPLES

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"
GOLDEN_SAMPLES = ["example1_good_standard.yaml", "example2_bad_standard.yaml", "example3_sprint_one_shot.yaml"]
FORMATS = {"json": "json", "markdown": "md", "table": "txt"}


def score_output(sample: str, fmt: str) -> str:
    # Run from the repository root with a relative path, so goldens do not hold machine paths.
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        result = runner.invoke(app, ["score", f"sample_telemetry/{sample}", "--format", fmt], env={"COLUMNS": "120"})
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("sample", GOLDEN_SAMPLES)
def test_golden_output(sample: str, fmt: str, update_goldens: bool) -> None:
    """Regenerate with `pytest --update-goldens` and review the diff."""
    output = score_output(sample, fmt)
    golden = GOLDEN / f"{Path(sample).stem}.{FORMATS[fmt]}"
    if update_goldens:
        golden.write_text(output, encoding="utf-8")
    assert golden.exists(), f"missing golden {golden.name}: run pytest --update-goldens"
    assert output == golden.read_text(encoding="utf-8")


def test_json_matches_the_contract_names() -> None:
    data = json.loads(score_output("example1_good_standard.yaml", "json"))
    for key in ("schema", "run", "trajectory", "iterations_used", "final_score", "process_score",
                "raw_process_score", "composite_swing", "tier", "pattern", "items", "warnings"):
        assert key in data
    assert data["schema"] == "procjudge.score/1"
    assert set(data["run"]) >= {"id", "agent", "challenge", "format", "path"}
    kinds = {"trajectory", "anti_pattern", "practice", "rule", "signal"}
    for item in data["items"]:
        assert item["kind"] in kinds
        assert {"id", "points", "iterations", "evidence", "basis"} <= set(item)
    assert data["process_score"] == max(-30, min(20, data["raw_process_score"]))


def test_json_is_deterministic_across_processes() -> None:
    """Two separate processes with different hash seeds print the same bytes (a dict- or
    set-order accident would differ between them; one process compared with itself could not)."""
    import os
    import subprocess
    import sys

    outputs = set()
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "procjudge", "score", "sample_telemetry/example2_bad_standard.yaml",
                               "--format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONHASHSEED": seed}, check=False)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert outputs.pop() == score_output("example2_bad_standard.yaml", "json")


def test_markup_and_escape_sequences_are_shown_literally(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text(
        'run: {id: "\\e[31mRED[bold]x[/bold]", agent: "[red]agent[/red]"}\n'
        "iterations:\n- iteration_telemetry:\n    score: {post_iteration: 50}\n"
        "  iteration_feedback:\n    tests: {failures: [{name: \"\\e]0;pwned\\a[link=x]t\", message: m}]}\n"
        "- iteration_telemetry: {score: {post_iteration: 60}}\n"
    )
    for fmt in ("table", "markdown"):
        result = runner.invoke(app, ["score", str(path), "--format", fmt])
        assert result.exit_code == 0
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        if fmt == "table":
            assert "[bold]x[/bold]" in result.stdout and "[red]agent[/red]" in result.stdout
        else:  # Markdown shows the brackets as text: escaped, so no link can form
            assert "\\[bold\\]x\\[/bold\\]" in result.stdout and "\\[red\\]agent\\[/red\\]" in result.stdout


def test_fail_under_gate() -> None:
    sample = str(SAMPLES / "example2_bad_standard.yaml")
    assert runner.invoke(app, ["score", sample, "--format", "json", "--fail-under", "0"]).exit_code == 1
    assert runner.invoke(app, ["score", sample, "--format", "json", "--fail-under", "-25"]).exit_code == 0


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["score"]).exit_code == 2
    assert runner.invoke(app, ["score", str(SAMPLES / "bare_list.yml"), "--format", "xml"]).exit_code == 2
    assert main(["no-such-command"]) == 2
    assert main(["score", str(SAMPLES / "bare_list.yml"), "--format", "json"]) == 0


def test_help_teaches() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for word in ("score", "policy", "schema", "Exit codes"):
        assert word in result.stdout
    # every command's description whole at 80 columns: none cut short with "..."
    narrow = runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).stdout
    listed = narrow[narrow.index("Commands:"):].splitlines()[1:]
    assert len(listed) >= 12 and not [line for line in listed if line.rstrip().endswith("...")], listed


def test_policy_show_round_trips_and_overrides(tmp_path: Path) -> None:
    shown = runner.invoke(app, ["policy", "show"])
    assert shown.exit_code == 0
    defaults = yaml.safe_load(shown.stdout)
    assert defaults["clamp"] == {"min": -30.0, "max": 20.0, "min_without_cheating": -25.0}
    assert defaults["trajectory"]["monotonic_improvement"] == {"per_step": 2.0, "per_regression": -5.0, "pay_flat_at_zero": False,
                                                                  "tests_only_falls_in_local_runs": "shown",
                                                                  "flat_in_local_runs": "unpaid"}
    policy = tmp_path / "p.yaml"
    policy.write_text("trajectory:\n  monotonic_improvement: {per_step: 3}\nclamp: {max: 5}\n")
    shown = yaml.safe_load(runner.invoke(app, ["policy", "show", "--policy", str(policy)]).stdout)
    assert shown["trajectory"]["monotonic_improvement"] == {"per_step": 3.0, "per_regression": -5.0, "pay_flat_at_zero": False,
                                                               "tests_only_falls_in_local_runs": "shown",
                                                               "flat_in_local_runs": "unpaid"}
    result = runner.invoke(app, ["score", str(SAMPLES / "example1_good_standard.yaml"), "--format", "json", "--policy",
                                 str(policy)])
    data = json.loads(result.stdout)
    assert [i["points"] for i in data["items"] if i["id"] == "monotonic_improvement"] == [6.0]
    assert data["process_score"] == 5.0


@pytest.mark.parametrize("text,fragment", [
    ("trajectory:\n  monotonic_improvment: {per_step: 3}\n", "monotonic_improvment"),
    ("clamp: {max: high}\n", "clamp.max"),
    ("signals:\n  points: {no_such_signal: 1}\n", "no_such_signal"),
    ("- 1\n", "mapping"),
    ("clamp: [\n", "YAML error"),
])
def test_bad_policy_is_an_error(tmp_path: Path, text: str, fragment: str) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(text)
    result = runner.invoke(app, ["score", str(SAMPLES / "bare_list.yml"), "--policy", str(policy)])
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output


def test_score_does_not_import_pandas() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from procjudge.cli import main; "
        f"rc = main(['score', {str(SAMPLES / 'example1_good_standard.yaml')!r}, '--format', 'json']); "
        "sys.stdout.flush(); sys.stderr.write(str('pandas' in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().endswith("False")


def test_library_api() -> None:
    from procjudge import judge, load_run

    verdict = judge(load_run(SAMPLES / "example1_good_standard.yaml"))
    assert verdict.tier == "systematic_refinement"
    assert msgspec.json.decode(msgspec.json.encode(verdict))["pattern"] == "healthy_progression"


def test_a_note_about_the_suites_is_shown_though_it_scores_nothing(tmp_path: Path) -> None:
    """0-point telemetry signals live in the per-iteration listing; a 0-point note about the suites
    (visible_suite_contradicted) names a test the reader must check, so it stays among the items."""
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 0, "failed": 1, "total": 1},
                                                  "tests": [{"name": "assert f(2) == 5", "outcome": "failed"}]}}},
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 0, "failed": 1, "total": 1},
                                                  "tests": [{"name": "assert f(2) == 5", "outcome": "failed"}],
                                                  "hidden": {"passed": 3, "total": 3}}}},
    ]}))
    for fmt in ("table", "markdown"):
        result = runner.invoke(app, ["score", str(path), "--format", fmt], env={"COLUMNS": "200"})
        items = result.output.split("per-iteration signals")[0] if fmt == "table" else result.output
        assert "visible_suite_contradicted" in items and '"assert f(2) == 5"' in result.output, fmt
        # the 0-point telemetry signal of the same run is not an item row
        assert "score.delta <= 0" not in result.output, fmt


def test_completion_help_keeps_each_example_on_its_line() -> None:
    shown = runner.invoke(app, ["completion", "--help"], env={"COLUMNS": "80"}).stdout
    for shell, target in (("bash", "~/.local/share/bash-completion/completions/procjudge"),
                          ("fish", "~/.config/fish/completions/procjudge.fish")):
        assert any(line.strip() == f"procjudge completion {shell} > {target}" for line in shown.splitlines()), shown
