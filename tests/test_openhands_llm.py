"""OpenHands' completion logs (``llm_completions/<instance>/<model>-<time>.json``) as runs.

The fixture ``tests/fixtures/openhands_llm`` holds two instances in the shape OpenHands writes
(see its NOTICE): shop__shop-1 with an earlier and a later log of the same run, a reproduction
that fails, an edit the editor refused, the fix, the reproduction passing and a test run that
outlived OpenHands' soft timeout; shop__shop-2 that edits a test's expectation and whose last
call never ran.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers import openhands_llm
from procjudge.importers.registry import BUILTINS, recognise

from conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "openhands_llm"
RESULTS = FIXTURE / "results" / "results.json"
runner = CliRunner()


def _import(tmp_path: Path, *extra: str, source: Path = FIXTURE) -> tuple[int, str, dict[str, dict]]:  # type: ignore[type-arg]
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "openhands", str(source), "--out", str(out), *extra])
    runs = {path.stem: json.loads(path.read_text()) for path in out.rglob("*.json")}
    return result.exit_code, result.output, runs


def _telemetry(run: dict, k: int = 0) -> dict:  # type: ignore[type-arg]
    return run["iterations"][k]["iteration_telemetry"]  # type: ignore[no-any-return]


def test_each_instance_is_read_from_its_latest_log_and_the_results_file_is_not_a_log(tmp_path: Path) -> None:
    code, output, runs = _import(tmp_path, "--reports", str(RESULTS))
    assert code == 0, output
    assert sorted(runs) == ["shop__shop-1", "shop__shop-2"]
    assert "1 earlier completion log(s) of the same instances passed over" in output
    assert runs["shop__shop-1"]["run"]["agent"] == "Claude-3.5-Sonnet(Oct)"  # the model in the file name
    # the later log holds the test run the earlier one had not reached
    assert [c["command"] for c in _telemetry(runs["shop__shop-1"])["checks"]] == [
        "python reproduce_issue.py", "python -m pytest tests"]


def test_commands_read_with_the_exit_codes_openhands_appends_and_without_its_own_lines(tmp_path: Path) -> None:
    _, _, runs = _import(tmp_path, "--reports", str(RESULTS))
    telemetry = _telemetry(runs["shop__shop-1"])
    reproduction, tests = telemetry["checks"]
    assert reproduction["exit_code"] == 0 and reproduction["outcome"] == "passed" and reproduction["message"] == "ok (printed)"
    # the run that outlived the soft timeout (-1) and the empty command that read the rest are one test run
    assert tests["exit_code"] == 0 and (tests["passed"], tests["failed"]) == (4, 0)
    baseline = telemetry["test_results"]["baseline_tests"]
    assert baseline == [{"name": "python reproduce_issue.py", "outcome": "failed",
                         "message": "AssertionError: 30 (exit status 1)", "files": ["reproduce_issue.py"]}]
    files = {f["path"]: f for f in telemetry["changes"]["files"]}
    assert files["reproduce_issue.py"]["status"] == "created" and files["reproduce_issue.py"]["scratch"] is True
    # the editor refused the first replacement (its old text was not in the file): one edit, the fix
    assert [e["new"] for e in files["shop/cart.py"]["edits"]] == ["    return sum(prices) * (1 - discount)"]
    assert telemetry["test_results"]["hidden"] == {"passed": 1, "total": 1}


def test_a_call_never_answered_ran_nothing_and_a_test_edit_is_read(tmp_path: Path) -> None:
    _, _, runs = _import(tmp_path, "--reports", str(RESULTS))
    run = runs["shop__shop-2"]
    telemetry = _telemetry(run)
    assert not telemetry.get("checks") and telemetry["actions"]["test_runs"] == 0  # `pytest` was asked for, never run
    assert "the agent ran no check" in " ".join(run["run"]["notes"])
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    verdict = judge(load_run(path))
    (chasing,) = [i for i in verdict.items if i.id == "test_chasing"]
    assert "assert shipping(0) == 0 -> assert shipping(0) == 5" in chasing.evidence
    assert verdict.held_back is not None and verdict.held_back.resolved is False


def test_the_process_score_is_the_same_with_and_without_the_results_file(tmp_path: Path) -> None:
    _, _, told = _import(tmp_path / "told", "--reports", str(RESULTS))
    _, _, blind = _import(tmp_path / "blind")
    assert "hidden" not in (_telemetry(blind["shop__shop-1"])["test_results"] or {})
    for name in told:
        scores = []
        for runs in (told, blind):
            path = tmp_path / f"{name}.json"
            path.write_text(json.dumps(runs[name]))
            scores.append(judge(load_run(path)).process_score)
        assert scores[0] == scores[1], name


def test_an_instance_the_results_file_does_not_list_is_named_once(tmp_path: Path) -> None:
    partial = tmp_path / "results.json"
    partial.write_text(json.dumps({"resolved": ["shop__shop-1"]}))
    code, output, runs = _import(tmp_path, "--reports", str(partial))
    assert code == 0 and "1 instance(s) are in no list of this results file" in output and "shop__shop-2" in output
    assert "hidden" not in (_telemetry(runs["shop__shop-2"])["test_results"] or {})
    _, output, runs = _import(tmp_path / "complete", "--reports", str(partial), "--unlisted", "unresolved")
    assert "in no list" not in output and _telemetry(runs["shop__shop-2"])["test_results"]["hidden"]["passed"] == 0


def test_import_auto_recognises_completion_logs_and_a_broken_one_costs_only_itself(tmp_path: Path) -> None:
    logs = tmp_path / "llm_completions"
    shutil.copytree(FIXTURE / "llm_completions", logs)
    (openhands,) = [i for i in BUILTINS if i.name == "openhands"]
    first = next(logs.rglob("*1743405200.5.json"))
    assert recognise(str(first), list(BUILTINS)) is openhands
    assert recognise(str(RESULTS), list(BUILTINS)) is None
    broken = logs / "shop__shop-3" / "gpt-4o-1743405400.0.json"
    broken.parent.mkdir()
    broken.write_text('{"messages": [{"role": "system", "content": "You are OpenHands agent"}], "response": 3')
    result = runner.invoke(app, ["import", "auto", str(logs), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output  # an input that could not be read; the others are imported
    assert "gpt-4o-1743405400.0.json" in result.output and "an OpenHands completion log" in result.output
    assert {p.stem for p in (tmp_path / "out").rglob("*.json")} == {"shop__shop-1", "shop__shop-2"}


@pytest.mark.parametrize(("output", "printed", "code"), [
    (("ok\n[The command completed with exit code 0.]\n[Current working directory: /w]\n"
      "[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]"), "ok", 0),
    ("E\n[The command completed with exit code 130. CTRL+C was sent.]", "E", 130),
    ("[Below is the output of the previous command.]\nrest\n[Command finished with exit code 2]", "rest", 2),
    (("partial\n[The command has no new output after 30 seconds. You may wait longer to see additional output.]"),
     ("partial\n[The command has no new output after 30 seconds. You may wait longer to see additional output.]"), -1),
    ("[1] printed by the command itself\n", "[1] printed by the command itself", None),
])
def test_openhands_own_lines_are_not_the_commands_output(output: str, printed: str, code: int | None) -> None:
    assert openhands_llm.bash_output(output) == (printed, code)


def test_the_latest_log_of_a_folder_is_the_run() -> None:
    paths = ["a/x/m-10.5.json", "a/x/m-9.json", "a/y/m-3.json", "a/z/notes.json", "a/z/other.json"]
    kept, earlier = openhands_llm.latest(paths)
    assert kept == ["a/x/m-10.5.json", "a/y/m-3.json", "a/z/notes.json", "a/z/other.json"]
    assert earlier == ["a/x/m-9.json"]
    assert openhands_llm.model_of("t/i/openai__gpt-4o-2024-08-06-1743405761.3.json") == "gpt-4o-2024-08-06"


def test_a_command_refused_while_the_one_before_still_ran_ran_nothing() -> None:
    """OpenHands answers a command sent while the previous one still runs with "[Your command ...
    is NOT executed. ...]": it neither checked anything nor deleted the file it named."""
    refused = ('[Your command "rm /w/repo/reproduce.py" is NOT executed. The previous command is still running - '
               'You CANNOT send new commands until the previous command is completed.]')
    turns = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "python -m pytest"}'}},
        {"id": "b", "type": "function", "function": {"name": "execute_bash",
                                                      "arguments": '{"command": "rm /w/repo/reproduce.py"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": "[The command has no new output after 30 seconds.]"},
        {"role": "tool", "tool_call_id": "b", "content": refused}]
    steps = openhands_llm.completion_steps(turns)
    assert [(s.command, s.shell, s.writes) for s in steps] == [("python -m pytest", True, []),
                                                               ("rm /w/repo/reproduce.py", False, [])]
