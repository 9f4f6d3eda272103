"""The conventions users bring from ruff, pytest and coverage: configuration found upward, file
discovery, and the common options (--version, --exit-zero, --quiet, stdin, --output)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.config import find, load
from procjudge.discovery import discover

from conftest import ROOT, SAMPLES

runner = CliRunner()
GOOD = SAMPLES / "example1_good_standard.yaml"
BAD = SAMPLES / "example2_bad_standard.yaml"


def invoke(*args: str, cwd: Path | None = None, stdin: str | None = None) -> object:
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return runner.invoke(app, list(args), input=stdin)
    finally:
        os.chdir(old)


# --------------------------------------------------------------------------- configuration


def test_configuration_is_found_upward_and_a_pyproject_without_our_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "procjudge.toml").write_text('format = "csv"\n')
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert find(str(inner)) == str(tmp_path / "procjudge.toml")
    (tmp_path / "a" / "pyproject.toml").write_text("[tool.procjudge]\nformat = 'json'\n")
    assert find(str(inner)) == str(tmp_path / "a" / "pyproject.toml")
    assert load(str(tmp_path / "a" / "pyproject.toml")).format == "json"


def test_command_line_beats_configuration_beats_defaults(tmp_path: Path) -> None:
    shutil.copy(GOOD, tmp_path / "good.yaml")
    shutil.copy(BAD, tmp_path / "bad.yaml")
    (tmp_path / "pyproject.toml").write_text('[tool.procjudge]\nformat = "csv"\nfail_under = 0\n')
    configured = invoke("batch", ".", cwd=tmp_path)
    assert configured.stdout.startswith("id,agent,") and configured.exit_code == 1  # csv; bad is below 0
    flag = invoke("batch", ".", "--format", "json", "--fail-under", "-20", cwd=tmp_path)
    assert json.loads(flag.stdout)["schema"] == "procjudge.batch/1" and flag.exit_code == 0
    isolated = invoke("--isolated", "batch", ".", cwd=tmp_path)
    assert "runs scored" in isolated.stdout and isolated.exit_code == 0  # the table, no gate


def test_the_policy_table_sits_between_the_defaults_and_a_policy_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.procjudge.policy.clamp]\nmin = -40\n"
                                             "[tool.procjudge.policy.monotonic]\n")
    broken = invoke("policy", "show", cwd=tmp_path)
    assert broken.exit_code == 2 and "[tool.procjudge.policy]" in broken.stderr and "monotonic" in broken.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.procjudge.policy.clamp]\nmin = -40\nmax = 25\n")
    (tmp_path / "p.yaml").write_text("clamp:\n  max: 15\n")
    shown = invoke("policy", "show", "--sources", "--policy", "p.yaml", cwd=tmp_path)
    lines = dict(line.split(" = ", 1) for line in shown.stdout.splitlines() if " = " in line)
    assert lines["clamp.min"].startswith("-40.0") and "[tool.procjudge.policy]" in lines["clamp.min"]
    assert lines["clamp.max"] == "15.0  # --policy p.yaml"
    assert lines["clamp.min_without_cheating"] == "-25.0  # default"


def test_a_configuration_typo_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    (tmp_path / "procjudge.toml").write_text('formt = "csv"\n')
    result = invoke("score", str(GOOD), cwd=tmp_path)
    assert result.exit_code == 2 and "unknown key formt (did you mean format?)" in result.stderr
    (tmp_path / "procjudge.toml").write_text("fail_under = [\n")
    assert invoke("score", str(GOOD), cwd=tmp_path).exit_code == 2


# --------------------------------------------------------------------------- discovery


def tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_discovery_skips_what_ruff_skips_and_respects_gitignore(tmp_path: Path) -> None:
    run = GOOD.read_text()
    (tmp_path / ".git").mkdir()
    tree(tmp_path, {
        ".gitignore": "ignored/\n*.tmp.yaml\n",
        "runs/a.yaml": run, "runs/b.tmp.yaml": run, "runs/keep/.gitignore": "!b.tmp.yaml\n",
        "runs/keep/b.tmp.yaml": run, "ignored/c.yaml": run, ".hidden/d.yaml": run, "node_modules/e.json": "{}",
        "venv/pyvenv.cfg": "home = /usr\n", "venv/f.yaml": run, "package.json": "{}", "tsconfig.json": "{}",
        "report.json": '{"schema": "procjudge.batch/1"}', "runs/notes.txt": "x",
    })
    found = [os.path.relpath(p, tmp_path) for p in discover([str(tmp_path)])]
    assert found == ["runs/a.yaml", "runs/keep/b.tmp.yaml"]
    everything = [os.path.relpath(p, tmp_path) for p in discover([str(tmp_path)], respect_gitignore=False)]
    assert everything == ["ignored/c.yaml", "runs/a.yaml", "runs/b.tmp.yaml", "runs/keep/b.tmp.yaml"]
    assert [os.path.relpath(p, tmp_path) for p in discover([str(tmp_path)], exclude=["keep/"])] == ["runs/a.yaml"]
    assert [os.path.relpath(p, tmp_path) for p in discover([str(tmp_path)], include=["runs/keep/"])] == ["runs/keep/b.tmp.yaml"]
    assert discover([str(tmp_path / "ignored" / "c.yaml")]) == [str(tmp_path / "ignored" / "c.yaml")]  # named: read


def test_list_files_and_the_report_being_written_is_not_read(tmp_path: Path) -> None:
    shutil.copy(GOOD, tmp_path / "good.yaml")
    listed = invoke("batch", str(tmp_path), "--list-files", "--exclude", "nothing")
    assert listed.exit_code == 0 and listed.stdout == f"{tmp_path / 'good.yaml'}\n"
    out = tmp_path / "out.json"
    for _ in range(2):  # the second pass must not read the first report as a run
        result = invoke("batch", str(tmp_path), "--format", "json", "-o", str(out))
        assert result.exit_code == 0, result.stderr
    assert len(json.loads(out.read_text())["runs"]) == 1


def test_a_redirected_stdout_inside_the_folder_is_not_read(tmp_path: Path) -> None:
    shutil.copy(GOOD, tmp_path / "good.yaml")
    command = f'"{sys.executable}" -m procjudge batch . --format json > out.json'
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert len(json.loads((tmp_path / "out.json").read_text())["runs"]) == 1


def test_an_output_that_is_a_run_is_refused_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    shutil.copy(SAMPLES / "wrapped.json", target)
    before = target.read_bytes()
    result = invoke("batch", str(tmp_path), "--format", "json", "--output", str(target))
    assert result.exit_code == 2 and "refusing" in result.stderr and target.read_bytes() == before


# --------------------------------------------------------------------------- options


def test_version() -> None:
    from procjudge import __version__

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout == f"procjudge {__version__}\n"


def test_exit_zero_keeps_gate_failures_from_failing_but_not_unreadable_input(tmp_path: Path) -> None:
    assert invoke("score", str(BAD), "--fail-under", "0").exit_code == 1
    assert invoke("score", str(BAD), "--fail-under", "0", "--exit-zero").exit_code == 0
    assert invoke("batch", str(BAD), "--fail-on", "shotgun_debugging", "--exit-zero", "-f", "csv").exit_code == 0
    (tmp_path / "broken.yaml").write_text("iterations: nope\n")
    assert invoke("batch", str(tmp_path), "--exit-zero", "-f", "csv").exit_code == 2


def test_fail_under_mean_judges_the_batch_not_each_run() -> None:
    per_run = invoke("batch", str(GOOD), str(BAD), "--fail-under", "0", "-f", "json")
    assert per_run.exit_code == 1  # the bad run is below 0
    mean = invoke("batch", str(GOOD), str(BAD), "--fail-under-mean", "-2", "-f", "json")
    summary = json.loads(mean.stdout)["summary"]["gate"]
    assert summary["mean_process_score"] == pytest.approx(-1.0) and summary["mean_passed"] and mean.exit_code == 0
    failing = invoke("batch", str(GOOD), str(BAD), "--fail-under-mean", "0", "-f", "json")
    assert failing.exit_code == 1 and "below --fail-under-mean 0" in failing.stderr


def test_quiet_prints_the_summary_only(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("run: {id: w, agnet: x}\niterations:\n  - score: {post_iteration: 50}\n")
    loud = invoke("batch", str(tmp_path), str(GOOD))
    quiet = invoke("batch", str(tmp_path), str(GOOD), "--quiet")
    assert "warning" in loud.stderr and quiet.stderr == ""
    assert "user-registration/agent-a" in loud.stdout and "user-registration/agent-a" not in quiet.stdout
    assert "runs scored" in quiet.stdout
    short = invoke("score", str(GOOD), "-q")
    assert "process score" in short.stdout and "per-iteration signals" not in short.stdout


def test_standard_input_as_dash() -> None:
    result = invoke("score", "-", "--format", "json", stdin=GOOD.read_text())
    assert result.exit_code == 0 and json.loads(result.stdout)["run"]["path"] == "<stdin>"
    compared = invoke("compare", "-", str(BAD), "--format", "json", stdin=GOOD.read_text())
    assert compared.exit_code == 0 and json.loads(compared.stdout)["mode"] == "runs"
    assert invoke("compare", "-", "-").exit_code == 2


def test_output_on_score_and_compare_and_dash_is_stdout(tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    result = invoke("score", str(GOOD), "-f", "json", "-o", str(out))
    assert result.exit_code == 0 and result.stdout == "" and json.loads(out.read_text())["tier"]
    assert not (ROOT / "-").exists()
    dash = invoke("score", str(GOOD), "-f", "json", "-o", "-")
    assert json.loads(dash.stdout)["schema"] == "procjudge.score/1" and not Path("-").exists()
    compared = tmp_path / "compare.md"
    assert invoke("compare", str(GOOD), str(BAD), "-f", "markdown", "-o", str(compared)).exit_code == 0
    assert compared.read_text().startswith("### procjudge compare")
    refused = invoke("score", str(GOOD), "-o", str(GOOD))
    assert refused.exit_code == 2 and "refusing" in refused.stderr


def test_shell_completion_script_and_answers() -> None:
    script = invoke("completion", "bash")
    assert script.exit_code == 0 and "_PROCJUDGE_COMPLETE" in script.stdout
    assert invoke("completion", "tcsh").exit_code == 2
    env = {**os.environ, "_PROCJUDGE_COMPLETE": "complete_bash", "COMP_WORDS": "procjudge bat", "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-m", "procjudge"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.split() == ["batch"]


def test_the_import_graph_has_no_cycle_and_no_upward_import() -> None:
    """pyproject.toml's layers (`lint-imports`, which CI runs with the static checks): every
    module imports only the layers below its own."""
    command = Path(sys.executable).parent / "lint-imports"
    if not command.exists():
        pytest.skip("lint-imports (import-linter) is in the lint extra: pip install -e '.[lint]'")
    done = subprocess.run([str(command), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]


def test_every_command_function_is_short_and_the_cli_module_small() -> None:
    """A command parses its options and calls a library function: none is over 50 lines (its
    signature and help included), and cli.py stays under 600 lines."""
    import ast

    for module in ("procjudge/cli.py", "procjudge/corpus_commands.py", "procjudge/importers/commands.py"):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        commands = [node for node in tree.body if isinstance(node, ast.FunctionDef)
                    and any("command" in ast.unparse(d) for d in node.decorator_list)]
        commands += [node for node in tree.body
                     if isinstance(node, ast.FunctionDef) and node.name in ("drift", "gate", "validate")]
        assert commands, module
        for node in commands:
            assert node.end_lineno is not None and node.end_lineno - node.lineno + 1 <= 50, (module, node.name)
    assert len((ROOT / "procjudge" / "cli.py").read_text(encoding="utf-8").splitlines()) < 600
