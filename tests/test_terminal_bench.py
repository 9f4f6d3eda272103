"""Terminal-Bench 1 trial folders: the agent's commands read from the trial's terminal (typed at the
prompt, or printed by mini-swe-agent's console), the held-back verdict from results.json, the
harness's failure named and never charged (fixtures written by ``scripts/make_cli_fixtures.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers import terminal_bench as tb
from procjudge.importers.environment import unavailable
from procjudge.importers.probes import _timed_out

from conftest import ROOT

runner = CliRunner()
FIXTURES = ROOT / "tests" / "fixtures" / "terminal_bench"
TERMINUS = FIXTURES / "2026-11-30__10-00-00"
MINI = FIXTURES / "2026-11-30__11-00-00"


Imported = tuple[dict[str, Path], str]


def _import(out: Path, *targets: Path | str, importer: str = "auto") -> Imported:
    """The run files an import writes, by agent and task ("terminus/fix-discount"), and its stderr."""
    result = runner.invoke(app, ["import", importer, *map(str, targets), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {f"{p.parent.name.split('-')[0]}/{p.stem}": p for p in out.rglob("*.json")}, result.stderr


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    return _import(tmp_path_factory.mktemp("tb"), FIXTURES)


def _document(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    return document


def _telemetry(path: Path) -> list[dict[str, Any]]:
    return [entry["iteration_telemetry"] for entry in _document(path)["iterations"]]


def _score(path: Path) -> float:
    return judge(load_run(str(path))).process_score


def test_each_trial_with_commands_is_a_run_of_its_agent_and_model(imported: Imported) -> None:
    runs, stderr = imported
    assert sorted(runs) == ["mini/fix-discount", "terminus/fix-discount", "terminus/fix-discount-unparsed"]
    run = _document(runs["terminus/fix-discount"])["run"]
    assert run["agent"] == "terminus-claude-sonnet-4-5-20250929" and run["source"] == "terminal-bench"
    assert run["task"]["statement"].startswith("discount(9.99, 10) returns 9")
    assert run["usage"] == {"input_tokens": 18400, "output_tokens": 2100}
    assert "terminal-bench: 6 files, 3 runs" in stderr


def test_commands_typed_at_the_prompt_red_heredoc_edit_green(imported: Imported) -> None:
    runs, _ = imported
    (iteration,) = _telemetry(runs["terminus/fix-discount"])
    results = iteration["test_results"]
    assert results["pre_iteration"] == {"passed": 3, "failed": 1, "total": 4}
    assert results["post_iteration"]["passed"] == 4
    assert results["hidden"] == {"passed": 3, "total": 3}
    (changed,) = iteration["changes"]["files"]
    assert changed["path"] == "shop/price.py" and changed["edits"][0]["new"].endswith("percent / 100, 2)")
    # the harness's own commands (asciinema, clear, tmux's wait) are not the agent's
    assert iteration["actions"]["tool_calls_total"] == 4


def test_mini_swe_agent_console_exit_status_cost_and_a_rewritten_expectation(imported: Imported) -> None:
    runs, _ = imported
    path = runs["mini/fix-discount"]
    assert _document(path)["run"]["usage"]["cost_usd"] == pytest.approx(0.07)  # the console's sum at its last step
    (iteration,) = _telemetry(path)
    assert iteration["test_results"]["pre_iteration"]["failed"] == 1
    assert iteration["test_results"]["hidden"] == {"passed": 2, "total": 3}
    items = {item.id: item for item in judge(load_run(str(path))).items}
    assert items["test_chasing"].points < 0 and "changes an expected value" in items["test_chasing"].evidence


def test_the_environment_is_named_and_nothing_charged(imported: Imported) -> None:
    runs, stderr = imported
    assert "fix-discount-broken-image" in stderr
    assert "the agent could not be started ('bash: mini: command not found')" in stderr
    assert "not charged to the agent" in stderr
    unparsed = runs["terminus/fix-discount-unparsed"]
    assert any("parse_error" in note and "no held-back outcome" in note for note in _document(unparsed)["run"]["notes"])
    (iteration,) = _telemetry(unparsed)
    assert "hidden" not in iteration["test_results"]
    # the same commands judged the same: the harness's failure costs the agent nothing
    assert _score(unparsed) == _score(runs["terminus/fix-discount"])


def test_the_process_score_does_not_read_the_held_back_verdict(tmp_path: Path) -> None:
    blind = tmp_path / "blind"
    shutil.copytree(FIXTURES, blind)
    for path in blind.rglob("results.json"):
        result = json.loads(path.read_text())
        if "trial_name" in result:
            path.write_text(json.dumps({**result, "parser_results": None, "is_resolved": None}))
    seen, _ = _import(tmp_path / "seen", FIXTURES)
    unseen, _ = _import(tmp_path / "unseen", blind)
    assert sorted(seen) == sorted(unseen)
    assert any("hidden" in _telemetry(path)[-1]["test_results"] for path in seen.values())
    assert not any("hidden" in _telemetry(path)[-1]["test_results"] for path in unseen.values())
    for key in ("terminus/fix-discount", "terminus/fix-discount-unparsed"):
        assert _score(seen[key]) == _score(unseen[key]), key
    # the one documented use of the held-back verdict: a rewritten expectation is definite test-chasing
    # only when the held-back suite fails the same test; blind, it is likely (docs/policy.md)
    chased = {item.id: item for item in judge(load_run(str(seen["mini/fix-discount"]))).items}["test_chasing"]
    blind_chased = {item.id: item for item in judge(load_run(str(unseen["mini/fix-discount"]))).items}["test_chasing"]
    assert chased.strength == "definite" and blind_chased.strength == "likely" and blind_chased.points < 0


def test_a_run_summary_names_its_trials_and_each_trial_is_read_once(tmp_path: Path) -> None:
    runs, _ = _import(tmp_path / "out", TERMINUS / "results.json", TERMINUS / "fix-discount",
                      importer="terminal-bench")
    assert sorted(runs) == ["terminus/fix-discount", "terminus/fix-discount-unparsed"]


def test_a_bad_results_file_is_an_error_naming_it_and_the_others_are_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(TERMINUS, run)
    (run / "fix-discount-unparsed" / "fix-discount-unparsed.1-of-1.2026-11-30__10-00-00" / "results.json").write_text(
        "{not json")
    (run / "results.json").unlink()
    result = runner.invoke(app, ["import", "terminal-bench", str(run), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2  # an input that could not be read (docs: exit codes)
    assert "fix-discount-unparsed" in result.stderr and "not a Terminal-Bench trial's results.json" in result.stderr
    assert len(list((tmp_path / "out").rglob("*.json"))) == 1
    assert "Traceback" not in result.output


def test_a_terminal_of_garbage_bytes_is_a_note_not_a_crash(tmp_path: Path) -> None:
    trial = tmp_path / "run" / "t" / "t.1-of-1"
    shutil.copytree(TERMINUS / "fix-discount" / "fix-discount.1-of-1.2026-11-30__10-00-00", trial)
    (trial / "sessions" / "agent.log").write_bytes(bytes(range(256)) * 40)
    result = runner.invoke(app, ["import", "terminal-bench", str(trial), "--out", str(tmp_path / "out")])
    assert "no agent commands to judge" in result.stderr and "Traceback" not in result.output


def test_screen_keeps_what_a_line_last_showed() -> None:
    raw = b"\x1b[32mfoo\x1b[0m\r\n12%\r50%\r100% done\r\n\x1b]0;title\x07plain\r\n"
    assert tb.screen(raw) == ["foo", "100% done", "plain", ""]


def test_prompt_lines_heredocs_open_quotes_and_a_virtualenv_prompt() -> None:
    lines = ["root@a1:/app# cat > f.py << 'EOF'", "> print('hi')", "> EOF", "(venv) root@a1:/app# python f.py",
             "hi", "root@a1:/app# echo 'a", "> b'", "a", "b", "root@a1:/app# echo '> x'", "> x",
             "user@elsewhere:~$ ls", "root@a1:/app# "]
    typed = tb.typed(lines)
    assert [t.command for t in typed] == ["cat > f.py << 'EOF'\nprint('hi')\nEOF", "python f.py", "echo 'a\nb'",
                                          "echo '> x'", ""]
    assert typed[1].output == ["hi"]
    assert typed[3].output == ["> x", "user@elsewhere:~$ ls"]  # another host's prompt (ssh) is output


def test_an_installed_agent_whose_commands_the_terminal_does_not_show() -> None:
    lines = ["root@a1:/app# source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'; tmux wait -S done",
             "INSTALL_SUCCESS", "root@a1:/app# openhands --task 'fix it'; tmux wait -S done",
             "10:00:01 - openhands:INFO: agent_controller.py:574 - Setting agent state", "root@a1:/app# "]
    steps, cost, unjudged = tb.terminal_steps(lines)
    assert steps == [] and cost is None and unjudged is not None and not unjudged.environment
    assert "inside its own process" in unjudged.why
    crashed = [*lines[:3], "Traceback (most recent call last):", "RuntimeError: Type not yet supported: str | None"]
    _, _, unjudged = tb.terminal_steps(crashed)
    assert unjudged is not None and unjudged.environment and "before its first step" in unjudged.why
    _, _, unjudged = tb.terminal_steps(lines[:2])
    assert unjudged is not None and unjudged.environment and "did not finish" in unjudged.why


@pytest.mark.parametrize(("mode", "stands"), [("unset", True), ("agent_timeout", True), ("test_timeout", False),
                                              ("parse_error", False), ("something_new", True)])
def test_each_failure_mode_is_named_and_says_whether_the_verdict_stands(mode: str, stands: bool) -> None:
    note, kept = tb.failure_note(mode)
    assert kept is stands
    assert (note is None) is (mode == "unset")
    if note:
        assert mode in note


def test_auto_recognises_trial_and_run_results_but_not_harbors_result(tmp_path: Path) -> None:
    from procjudge.importers.registry import BUILTINS, recognise

    trial = next(TERMINUS.rglob("fix-discount.1-of-1*/results.json"))
    assert recognise(str(trial), list(BUILTINS)).name == "terminal-bench"  # type: ignore[union-attr]
    assert recognise(str(TERMINUS / "results.json"), list(BUILTINS)).name == "terminal-bench"  # type: ignore[union-attr]
    harbor = next((ROOT / "tests" / "fixtures" / "harbor").rglob("*__*/result.json"))
    assert recognise(str(harbor), list(BUILTINS)).name == "atif"  # type: ignore[union-attr]


def test_jobs_read_the_trials_in_workers_and_write_the_same_files(tmp_path: Path) -> None:
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("worker processes are forked, and this platform cannot fork")
    outputs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        result = runner.invoke(app, ["import", "terminal-bench", str(FIXTURES), "--out", str(out), "--jobs", jobs])
        assert result.exit_code == 0, result.output
        files = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.json"))}
        outputs.append((files, result.stderr.replace(str(out), "OUT")))
    assert outputs[0] == outputs[1] and len(outputs[0][0]) == 3


def test_a_reply_is_read_as_mini_swe_agent_reads_it() -> None:
    """mini-swe-agent 1.x runs the text of a reply's one ```bash block up to the next fence (a README
    whose heredoc holds a fence of its own is cut there, as the agent ran it); a reply with two
    blocks ran nothing (its format error follows)."""

    def step(n: int, reply: str, answer: str) -> list[str]:
        return [f"mini-swe-agent (step {n}, $0.0{n}):", *reply.split("\n"), "User:", *answer.split("\n"), "\u2500" * 20]

    lines = [*step(1, "THOUGHT: write it\n\n```bash\ncat <<'EOF' > README.md\nRun:\n```bash\n./go.sh\n```\nEOF\n```",
                   "<returncode>0</returncode>\n<output>\n</output>"),
             *step(2, "THOUGHT: two\n\n```bash\nls\n```\n\n```bash\npwd\n```",
                   "Please always provide EXACTLY ONE action in triple backticks."),
             *step(3, "THOUGHT: run\n\n```bash\npython -m pytest -q\n```",
                   "<returncode>1</returncode>\n<output>\n1 failed in 0.1s\n</output>")]
    steps, cost = tb.mini_steps(lines)
    assert [s.command for s in steps] == ["cat <<'EOF' > README.md\nRun:", "python -m pytest -q"]
    assert [s.returncode for s in steps] == [0, 1] and steps[1].output == "1 failed in 0.1s" and cost == 0.03


def test_a_command_mini_swe_agent_killed_at_its_time_limit_validated_nothing() -> None:
    """mini-swe-agent says it killed a command before the output it had printed, and its console
    may wrap the words: the check (a script, or a test run) could not finish, so it is
    unavailable, not failed nor passed."""

    def step(n: int, command: str, answer: str) -> list[str]:
        return [f"mini-swe-agent (step {n}, $0.0{n}):", "THOUGHT: run", "", "```bash", command, "```", "User:",
                *answer.split("\n"), "\u2500" * 20]

    killed = ("The last command <command>{}</command> timed out and has been \nkilled.\n"
              "The output of the command was:\n <output>\nTraining model...\n</output>\n"
              "Please try another command and make sure to avoid those requiring interactive input.")
    lines = [*step(1, "python train.py", killed.format("python train.py")),
             *step(2, "python -m pytest tests", killed.format("python -m pytest tests")),
             *step(3, "python train.py", "<returncode>0</returncode>\n<output>\nTraining model...\n</output>")]
    steps, _ = tb.mini_steps(lines)
    assert [s.output.startswith("The command timed out and has been killed.") for s in steps] == [True, True, False]
    assert unavailable(steps[1]) == "it timed out: the harness killed it at its time limit"
    assert _timed_out("python train.py", steps[0].returncode, steps[0].output) == "the harness killed it at its time limit"
    assert _timed_out("python train.py", steps[2].returncode, steps[2].output) is None


def test_a_run_summary_naming_a_trial_outside_its_run_is_not_followed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(TERMINUS, run)
    summary = json.loads((run / "results.json").read_text())
    summary["results"] = [{**trial, "task_id": "../../elsewhere"} for trial in summary["results"]]
    (run / "results.json").write_text(json.dumps(summary))
    assert tb.trial_files([str(run / "results.json")]) == ({}, [])


def test_a_redirection_the_console_wrapped_before_its_target_is_one_line_again() -> None:
    """mini-swe-agent's console wraps a long command at a space: after ``cat <<'EOF' > `` the path
    lands on the next line, where the shell could not have read it (a redirection with no target
    is a syntax error). The two lines are one again; a here-document's own lines ending in ``> ``,
    and a line ending in a pipe (which the shell continues), are kept as printed."""
    wrapped = ("cd /app && mkdir -p env/site-packages/torch && cat <<'EOF' > \nenv/site-packages/torch/__init__.py\n"
               "html = '<b> \n'\nEOF")
    assert tb.unwrapped(wrapped) == ("cd /app && mkdir -p env/site-packages/torch && cat <<'EOF' > "
                                     "env/site-packages/torch/__init__.py\nhtml = '<b> \n'\nEOF")
    assert tb.unwrapped("python run.py 2>&1 >> \nlog.txt") == "python run.py 2>&1 >> log.txt"
    for kept in ("ls |\nwc -l", "python run.py 2>&1 \necho done", "cat <<EOF > a.txt\nx > \ny\nEOF", "echo a>b"):
        assert tb.unwrapped(kept) == kept
    lines = ["mini-swe-agent (step 1, $0.01):", "THOUGHT: write it", "", "```bash", "cat <<'EOF' > ", "pkg/mod.py",
             "x = 1", "EOF", "```", "User:", "<returncode>0</returncode>", "<output>", "</output>", "\u2500" * 20]
    steps, _ = tb.mini_steps(lines)
    assert steps[0].command == "cat <<'EOF' > pkg/mod.py\nx = 1\nEOF"
