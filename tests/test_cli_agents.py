"""The logs most users have: Claude Code sessions, read as a shell agent's loop (fixtures written by
``scripts/make_cli_fixtures.py`` from the documented shapes, and Inspect Scout's MIT fixtures for
the session structure: compaction, ``/clear``, sub-agents)."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers import claude_code

from conftest import ROOT

runner = CliRunner()
CLAUDE = ROOT / "tests" / "fixtures" / "claude_code"
CLAUDE_STREAM = ROOT / "tests" / "fixtures" / "streams" / "claude-stream-red-green.jsonl"  # sess-red-green, printed
CODEX_STREAM = ROOT / "tests" / "fixtures" / "streams" / "codex-exec-red-green.jsonl"  # the red-green rollout, printed


def _imported(importer: str, folder: Path, out: Path) -> dict[str, Path]:
    """The run files ``procjudge import IMPORTER FOLDER`` writes, by name."""
    result = runner.invoke(app, ["import", importer, str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {path.stem.removeprefix("rollout-"): path for path in out.rglob("*.json")}


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _imported("claude-code", CLAUDE, tmp_path_factory.mktemp("claude"))


def items(path: Path) -> dict[str, Any]:
    return {item.id: item for item in judge(load_run(str(path))).items}


def test_each_session_is_a_run_of_its_model_with_its_tokens(sessions: dict[str, Path]) -> None:
    assert sorted(sessions) == ["sess-environment", "sess-red-green", "sess-rewritten"]
    document = json.loads(sessions["sess-red-green"].read_text())
    run = document["run"]
    assert run["agent"] == "claude-sonnet-4-5-20250929" and run["source"] == "claude-code"
    assert run["task"]["statement"].startswith("discount(9.99, 10) returns 9")
    # each assistant message counted once, though Claude Code writes its blocks on two lines
    lines = [json.loads(line) for line in (CLAUDE / "sess-red-green.jsonl").read_text().splitlines()]
    messages = {line["message"]["id"]: line["message"]["usage"] for line in lines if line["type"] == "assistant"}
    assert run["usage"]["output_tokens"] == sum(u["output_tokens"] for u in messages.values())


def test_a_red_test_an_edit_and_a_green_run(sessions: dict[str, Path]) -> None:
    document = json.loads(sessions["sess-red-green"].read_text())
    (iteration,) = [entry["iteration_telemetry"] for entry in document["iterations"]]
    results = iteration["test_results"]
    assert results["pre_iteration"] == {"passed": 3, "failed": 1, "total": 4}
    assert results["post_iteration"]["passed"] == 4
    (edit,) = iteration["changes"]["files"][0]["edits"]
    assert edit["new"].endswith("percent / 100, 2)") and iteration["changes"]["files"][0]["path"] == "shop/price.py"
    found = items(sessions["sess-red-green"])
    assert found["test_driven_iteration"].points > 0 and "test_chasing" not in found


def test_an_expected_value_rewritten_after_it_failed_is_test_chasing(sessions: dict[str, Path]) -> None:
    found = items(sessions["sess-rewritten"])
    assert found["test_chasing"].strength == "likely" and found["test_chasing"].points < 0
    assert "8.99 -> assert discount(9.99, 10) == 9" in found["test_chasing"].evidence
    assert "rapid_convergence" not in found  # the score was reached by changing the test alone


def test_the_environment_is_named_and_the_reproduction_is_the_loop(sessions: dict[str, Path]) -> None:
    verdict = judge(load_run(str(sessions["sess-environment"])))
    assert any("not installed" in w and "numpy" in w for w in verdict.warnings)
    assert not any(item.id.endswith("build_failure") for item in verdict.items)
    assert "python reproduce.py failed in the agent's run before the change" in \
        {i.id: i for i in verdict.items}["test_driven_iteration"].evidence


def test_compaction_clear_and_sub_agents_join_their_session(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "claude-code", str(CLAUDE / "scout"), "--out", str(tmp_path)])
    # five files, four sessions (the sub-agent's file joins its session); none edits a file: notes
    assert result.exit_code == 0, result.output
    assert result.stderr.count("changed no file: nothing to judge") == 4
    events = [json.loads(line) for name in ("agent_session.jsonl", "agent-atest01.jsonl")
              for line in (CLAUDE / "scout" / name).read_text().splitlines()]
    conversation = claude_code._conversation(events)
    assert sum(1 for e in conversation if e.get("isSidechain")) == 4 and len(conversation) == 8
    compacted = [json.loads(line) for line in (CLAUDE / "scout" / "compaction_session.jsonl").read_text().splitlines()]
    assert len(claude_code._conversation(compacted)) == len(compacted)


def _event(uuid: str, parent: str | None, kind: str, content: Any) -> dict[str, Any]:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": "s", "cwd": "/home/dev/shop", "type": kind,
            "timestamp": "2026-11-20T10:00:00.000Z", "message": {"role": kind, "content": content, "model": "m"}}


def _edit(uuid: str, parent: str, new: str) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"t{uuid}", "name": "Edit",
            "input": {"file_path": "/home/dev/shop/a.py", "old_string": "x = 1", "new_string": new}}
    return [_event(uuid, parent, "assistant", [call]),
            _event(f"{uuid}r", uuid, "user", [{"type": "tool_result", "tool_use_id": f"t{uuid}", "content": "ok"}])]


def test_a_rewound_turn_is_left_out() -> None:
    events = [_event("a", None, "user", "fix a.py"), *_edit("b", "a", "x = 2"),  # abandoned by a rewind
              *_edit("d", "a", "x = 3")]
    steps = claude_code.steps(claude_code._conversation(events))
    assert [step.editor["new_str"] for step in steps if step.editor] == ["x = 3"]


def test_a_line_that_is_not_json_costs_that_line(tmp_path: Path) -> None:
    lines = (CLAUDE / "sess-red-green.jsonl").read_text().splitlines()
    lines.insert(3, "{not json")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "session.jsonl").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["import", "auto", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "claude-code: 1 file, 1 run" in result.stderr
    (document,) = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("*.json")]
    assert any("session.jsonl:4" in note and "skipped" in note for note in document["run"]["notes"])
    assert document["iterations"][0]["iteration_telemetry"]["test_results"]["post_iteration"]["passed"] == 4


def test_a_refused_edit_changes_nothing(tmp_path: Path) -> None:
    events = [_event("a", None, "user", "fix a.py"), *_edit("b", "a", "x = 2")]
    events[-1]["message"]["content"][0].update(is_error=True, content="String to replace not found in file.")
    steps = claude_code.steps(claude_code._conversation(events))
    assert not steps[0].writes


def _as_inspect_sample(session: Path) -> dict[str, Any]:
    """A Claude Code session as Inspect logs it when ``inspect_swe`` runs the CLI in a sandbox whose
    repository is ``/testbed`` (the session's ``/home/dev/shop``): the assistant's tool_use blocks
    as tool calls, each tool_result as a tool message (an error where it was one)."""
    messages: list[dict[str, Any]] = []
    for line in session.read_text().replace("/home/dev/shop", "/testbed").splitlines():
        event = json.loads(line)
        content = (event.get("message") or {}).get("content")
        if event.get("type") == "user" and isinstance(content, str):
            messages.append({"role": "user", "content": content})
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "tool_use":
                messages.append({"role": "assistant", "content": "", "tool_calls": [
                    {"id": part["id"], "function": part["name"], "arguments": part["input"]}]})
            elif part.get("type") == "tool_result":
                text = part["content"] if isinstance(part["content"], str) else "".join(
                    p.get("text", "") for p in part["content"])
                messages.append({"role": "tool", "tool_call_id": part["tool_use_id"], "content": text,
                                 **({"error": {"type": "unknown", "message": ""}} if part.get("is_error") else {})})
    return {"id": session.stem, "epoch": 1, "input": messages[0]["content"], "messages": messages,
            "events": [{"event": "score", "score": {"value": 1.0}, "intermediate": False, "scorer": "tests"}]}


def _via_inspect(sample: dict[str, Any], model: str, tmp_path: Path) -> Path:
    """The run file ``import inspect`` writes for an Inspect log of one sample."""
    log = {"version": 2, "status": "success", "eval": {"task": "shop", "model": model}, "plan": {"steps": []},
           "samples": [sample]}
    (tmp_path / "log.json").write_text(json.dumps(log))
    done = runner.invoke(app, ["import", "inspect", str(tmp_path / "log.json"), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    (inspected,) = (tmp_path / "out").rglob("*.json")
    return inspected


def _loop(path: Path) -> list[Any]:
    """A run file's loop: each iteration's diff, counts, suite and checks."""
    iterations = json.loads(path.read_text())["iterations"]
    return [(t["changes"].get("diff"), t["test_results"].get("post_iteration"), t["test_results"].get("suite"),
             [(c["command"], c["outcome"]) for c in t.get("checks", [])])
            for t in (i["iteration_telemetry"] for i in iterations)]


@pytest.mark.parametrize("name", ["sess-red-green", "sess-rewritten", "sess-environment"])
def test_claude_code_run_inside_inspect_is_read_as_its_own_session(name: str, sessions: dict[str, Path],
                                                                    tmp_path: Path) -> None:
    """inspect_swe runs Claude Code inside Inspect: the Inspect log of a session is read the way the
    session's own file is, the same iterations, edits, checks and verdict."""
    inspected = _via_inspect(_as_inspect_sample(CLAUDE / f"{name}.jsonl"), "anthropic/claude-sonnet-4-5", tmp_path)
    assert _loop(inspected) == _loop(sessions[name])
    assert judge(load_run(str(inspected))).process_score == judge(load_run(str(sessions[name]))).process_score


def test_the_fixtures_are_what_their_script_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    (copy / "tests" / "fixtures").mkdir(parents=True)
    (copy / "tests" / "fixtures" / "swe_agent").mkdir()
    shutil.copytree(ROOT / "tests" / "fixtures" / "swe_agent" / "trajs", copy / "tests" / "fixtures" / "swe_agent" / "trajs")
    done = subprocess.run([sys.executable, str(copy / "scripts" / "make_cli_fixtures.py")], capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    for tool in ("claude_code", "codex", "harbor", "terminal_bench", "streams"):
        made = sorted(p for p in (copy / "tests" / "fixtures" / tool).rglob("*") if p.is_file())
        kept = ROOT / "tests" / "fixtures" / tool
        assert made and all(m.read_text() == (kept / m.relative_to(copy / "tests" / "fixtures" / tool)).read_text()
                            for m in made), tool


# --------------------------------------------------------------------------- Codex CLI

CODEX = ROOT / "tests" / "fixtures" / "codex"


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _imported("codex", CODEX, tmp_path_factory.mktemp("codex"))


def test_each_rollout_is_a_run_of_its_model_with_its_tokens(rollouts: dict[str, Path]) -> None:
    assert sorted(rollouts) == ["environment", "red-green", "rewritten"]
    run = json.loads(rollouts["red-green"].read_text())["run"]
    assert run["agent"] == "gpt-5-codex" and run["source"] == "codex"
    assert run["task"]["statement"].startswith("discount(9.99, 10) returns 9")  # not the environment context
    lines = [json.loads(line) for line in next(CODEX.glob("*red-green.jsonl")).read_text().splitlines()]
    last = [line["payload"]["info"]["total_token_usage"] for line in lines if line["payload"].get("type") == "token_count"][-1]
    assert run["usage"] == {"input_tokens": last["input_tokens"], "output_tokens": last["output_tokens"],
                            "cache_read_input_tokens": last["cached_input_tokens"]}


@pytest.mark.parametrize("name", ["red-green", "rewritten"])  # the older and the newer persistence of a shell call
def test_a_shell_calls_exit_status_is_read_in_either_persistence(name: str, rollouts: dict[str, Path]) -> None:
    document = json.loads(rollouts[name].read_text())
    (iteration,) = [entry["iteration_telemetry"] for entry in document["iterations"]]
    assert iteration["test_results"]["pre_iteration"] == {"passed": 3, "failed": 1, "total": 4}
    assert iteration["test_results"]["post_iteration"]["passed"] == 4


def test_an_apply_patch_is_the_edit_and_the_red_test_turns_green(rollouts: dict[str, Path]) -> None:
    document = json.loads(rollouts["red-green"].read_text())
    files = document["iterations"][0]["iteration_telemetry"]["changes"]["files"]
    (price,) = [f for f in files if f["path"] == "shop/price.py"]
    assert price["edits"][0]["new"].endswith("percent / 100, 2)")
    assert items(rollouts["red-green"])["test_driven_iteration"].points > 0


def test_a_patched_expectation_is_test_chasing_and_a_failed_patch_changes_nothing(rollouts: dict[str, Path]) -> None:
    found = items(rollouts["rewritten"])
    assert found["test_chasing"].strength == "likely" and "rapid_convergence" not in found
    environment = json.loads(rollouts["environment"].read_text())
    edits = [e for f in environment["iterations"][0]["iteration_telemetry"]["changes"]["files"] for e in f.get("edits", [])]
    assert len(edits) == 1  # the rejected patch is not an edit
    verdict = judge(load_run(str(rollouts["environment"])))
    assert any("not installed" in w for w in verdict.warnings)
    assert not any(item.id.endswith("build_failure") for item in verdict.items)


def test_auto_recognises_both_tools_and_one_bad_line_costs_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    lines = next(CODEX.glob("*red-green.jsonl")).read_text().splitlines()
    lines.insert(2, "garbage")
    (folder / "rollout-x.jsonl").write_text("\n".join(lines) + "\n")
    shutil.copy(CLAUDE / "sess-red-green.jsonl", folder / "session.jsonl")
    result = runner.invoke(app, ["import", "auto", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "codex: 1 file, 1 run" in result.stderr and "claude-code: 1 file, 1 run" in result.stderr
    runs = {p.parent.name: json.loads(p.read_text()) for p in (tmp_path / "out").rglob("*.json")}
    assert any("rollout-x.jsonl:3" in note for note in runs["gpt-5-codex"]["run"]["notes"])


# --------------------------------------------------------------------------- Harbor trial folders


def _trial(job: Path, name: str, trajectory: dict[str, Any] | None, result: dict[str, Any]) -> None:
    trial = job / name
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    if trajectory is not None:
        (trial / "agent" / "trajectory.json").write_text(json.dumps(trajectory))
    (trial / "result.json").write_text(json.dumps(result))


def test_a_harbor_job_is_one_run_per_trial_with_the_harness_verdict_named(tmp_path: Path) -> None:
    from test_trajectory_importers import TRAJECTORY, to_atif

    job = tmp_path / "job"
    atif = to_atif(json.loads(TRAJECTORY.read_text()))
    timeout = {"exception_type": "AgentTimeoutError", "exception_message": "Agent execution timed out after 900 s"}
    _trial(job, "django__django-11141__AbC123", atif, {
        "task_name": "django__django-11141", "trial_name": "django__django-11141__AbC123",
        "agent_info": {"name": "mini-swe-agent", "version": "1.9"},
        "agent_result": {"n_input_tokens": 120000, "n_output_tokens": 9000, "n_cache_tokens": 80000, "cost_usd": 0.42},
        "verifier_result": {"rewards": {"reward": 0.0}}, "exception_info": timeout})
    broken = {"exception_type": "RewardFileNotFoundError", "exception_message": "reward.txt not found"}
    _trial(job, "django__django-11141__ZzZ999", atif, {"task_name": "django__django-11141",
                                                     "trial_name": "django__django-11141__ZzZ999",
                                                     "verifier_result": None, "exception_info": broken})
    crashed = {"exception_type": "DockerComposeError", "exception_message": "image pull failed"}
    _trial(job, "django__django-11999__QqQ111", None, {"task_name": "django__django-11999",
                                                     "trial_name": "django__django-11999__QqQ111",
                                                     "exception_info": crashed})
    (job / "result.json").write_text(json.dumps({"stats": {"n_trials": 3}, "trial_results": []}))  # the job's summary
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "auto", str(job), "--out", str(out)])
    assert result.exit_code == 0, result.output
    runs = sorted((json.loads(p.read_text()) for p in out.rglob("*.json")), key=lambda d: d["run"]["id"])
    assert len(runs) == 2  # the two trials with a trajectory, each once
    timed_out, no_verifier = runs if runs[0]["run"]["usage"].get("cost_usd") else runs[::-1]
    assert timed_out["run"]["usage"] == {"input_tokens": 120000, "output_tokens": 9000,
                                         "cache_read_input_tokens": 80000, "cost_usd": 0.42}
    assert any("AgentTimeoutError" in note and "agent ran out of its time" in note for note in timed_out["run"]["notes"])
    assert timed_out["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 0, "total": 1}
    # the verifier failed: no held-back outcome, named, nothing charged
    assert "hidden" not in no_verifier["iterations"][-1]["iteration_telemetry"]["test_results"]
    assert any("verifier failed" in note and "RewardFileNotFoundError" in note for note in no_verifier["run"]["notes"])
    # the trial whose agent left no trajectory is a note with the harness's exception
    assert "django__django-11999__QqQ111: no agent trajectory to judge" in result.stderr
    assert "DockerComposeError: image pull failed" in result.stderr


def test_batch_shows_what_the_runs_cost_and_the_cost_of_a_resolved_run(tmp_path: Path) -> None:
    from test_trajectory_importers import TRAJECTORY, to_atif

    job = tmp_path / "job"
    atif = to_atif(json.loads(TRAJECTORY.read_text()))
    for name, reward, cost in (("t1__a", 1.0, 0.30), ("t2__b", 0.0, 0.50), ("t3__c", 1.0, 0.40)):
        _trial(job, name, atif, {"task_name": name.split("__")[0], "trial_name": name,
                                 "agent_result": {"n_input_tokens": 1000, "n_output_tokens": 100, "cost_usd": cost},
                                 "verifier_result": {"rewards": {"reward": reward}}, "exception_info": None})
    out = tmp_path / "out"
    assert runner.invoke(app, ["import", "atif", str(job), "--out", str(out)]).exit_code == 0
    table = runner.invoke(app, ["batch", str(out)], env={"COLUMNS": "100"})
    assert "cost $1.20 over 3 runs, $0.60 a resolved run" in table.stdout  # 1.20 over the 2 runs resolved
    summary = json.loads(runner.invoke(app, ["batch", str(out), "--format", "json"]).stdout)["summary"]
    (agent,) = summary["agents"]
    assert (agent["cost_usd"], agent["runs_with_cost"], agent["cost_per_resolved_run"]) == (1.2, 3, 0.6)
    rows = runner.invoke(app, ["batch", str(out), "--format", "csv"]).stdout.splitlines()
    header = rows[0].split(",")
    assert header[-2:] == ["cost_usd", "tokens"]
    assert sorted(line.split(",")[-2] for line in rows[1:]) == ["0.3", "0.4", "0.5"]


def _codex_as_inspect_sample(rollout: Path) -> dict[str, Any]:
    """A Codex rollout as Inspect logs it when ``inspect_swe`` runs the CLI in a sandbox whose
    repository is ``/testbed``: each call with its arguments, each output as a tool message, an
    error where the command exited non-zero (as Inspect's tools answer one)."""
    from procjudge.importers.codex import _arguments, _output

    records = [json.loads(line) for line in rollout.read_text().replace("/home/dev/shop", "/testbed").splitlines()]
    payloads = [r.get("payload") or {} for r in records]
    ends = {p["call_id"]: p for p in payloads if p.get("type") == "exec_command_end"}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the rounding"}]
    for payload in payloads:
        if payload.get("type") == "function_call":
            arguments = _arguments(payload.get("arguments"))
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": payload["call_id"], "function": payload["name"], "arguments": arguments}]})
        elif payload.get("type") == "custom_tool_call":
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": payload["call_id"], "function": payload["name"], "arguments": {"input": payload["input"]}}]})
        elif payload.get("type") in ("function_call_output", "custom_tool_call_output"):
            text, code = _output(payload.get("output"))
            end = ends.get(payload["call_id"])
            if end is not None:
                text, code = end.get("aggregated_output") or text, end.get("exit_code", code)
            messages.append({"role": "tool", "tool_call_id": payload["call_id"], "content": text,
                             **({"error": {"type": "unknown", "message": ""}} if code not in (None, 0) else {})})
    return {"id": rollout.stem, "epoch": 1, "input": "fix the rounding", "messages": messages,
            "events": [{"event": "score", "score": {"value": 1.0}, "intermediate": False, "scorer": "tests"}]}


@pytest.mark.parametrize("name", ["red-green", "rewritten", "environment"])
def test_codex_run_inside_inspect_is_read_as_its_own_rollout(name: str, rollouts: dict[str, Path],
                                                             tmp_path: Path) -> None:
    sample = _codex_as_inspect_sample(CODEX / f"rollout-2026-11-21T09-00-00-{name}.jsonl")
    inspected = _via_inspect(sample, "openai/gpt-5-codex", tmp_path)
    assert _loop(inspected) == _loop(rollouts[name])
    assert judge(load_run(str(inspected))).process_score == judge(load_run(str(rollouts[name]))).process_score


def _read_loop(document: dict[str, Any]) -> list[Any]:
    """What the judging reads of a run's iterations, less the times (a stream carries none)."""
    kept = []
    for iteration in document["iterations"]:
        telemetry = iteration["iteration_telemetry"]
        kept.append((telemetry.get("checks"), telemetry.get("changes", {}).get("files"),
                     {k: v for k, v in telemetry.get("test_results", {}).items() if k not in ("hidden", "hidden_suites")}))
    return kept


def _job_runs(job: Path, out: Path, apart: str) -> dict[str, dict[str, Any]]:
    """The runs `import auto JOB` writes, by task, after checking that the importer named
    ``apart`` read nothing on its own (the files under each trial's agent/ folder are the trial's)."""
    imported = runner.invoke(app, ["import", "auto", str(job), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert f"{apart}:" not in imported.stderr, imported.stderr
    return {json.loads(p.read_text())["run"]["challenge"]: json.loads(p.read_text()) for p in out.rglob("*.json")}


def test_a_harbor_trial_without_a_trajectory_is_read_from_the_claude_code_session_once(tmp_path: Path) -> None:
    """Where Harbor left no ATIF trajectory (an older Harbor, a failed conversion), the trial is
    read from the session Claude Code wrote under agent/sessions/projects/, with the trial's task,
    verdict and usage; `import auto` reads that session once, as the trial, not again on its own.
    A trial with both a trajectory and a session is read from its trajectory, once."""
    from test_trajectory_importers import TRAJECTORY, to_atif

    job = tmp_path / "job"
    result = {"task_name": "shop-rounding", "trial_name": "shop-rounding__Ab12", "verifier_result": {"rewards": {"reward": 0.0}},
              "agent_result": {"n_input_tokens": 5000, "n_output_tokens": 700, "cost_usd": 0.12}, "exception_info": None}
    _trial(job, "shop-rounding__Ab12", None, result)
    sessions = job / "shop-rounding__Ab12" / "agent" / "sessions" / "projects" / "-home-dev-shop"
    sessions.mkdir(parents=True)
    shutil.copy(CLAUDE / "sess-red-green.jsonl", sessions)
    _trial(job, "django__django-11141__Cd34", to_atif(json.loads(TRAJECTORY.read_text())),
           {"task_name": "django__django-11141", "trial_name": "django__django-11141__Cd34",
            "verifier_result": {"rewards": {"reward": 1.0}}})
    other = job / "django__django-11141__Cd34" / "agent" / "sessions" / "projects" / "-testbed"
    other.mkdir(parents=True)
    shutil.copy(CLAUDE / "sess-environment.jsonl", other)
    runs = _job_runs(job, tmp_path / "out", apart="claude-code")  # no session imported apart from its trial
    assert sorted(runs) == ["django__django-11141", "shop-rounding"]
    assert runs["django__django-11141"]["run"]["source"] == "atif"
    trial = runs["shop-rounding"]
    assert trial["run"]["agent"] == "claude-code-claude-sonnet-4-5-20250929" and trial["run"]["source"] == "claude-code"
    assert trial["run"]["usage"] == {"input_tokens": 5000, "output_tokens": 700, "cost_usd": 0.12}
    assert trial["run"]["task"]["statement"].startswith("discount(9.99, 10) returns 9")
    assert trial["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 0, "total": 1}
    alone = _imported("claude-code", sessions, tmp_path / "alone")["sess-red-green"]
    # the same loop as the session imported on its own
    assert _read_loop(trial)[-1][0] and _read_loop(trial) == _read_loop(json.loads(alone.read_text()))


def test_claude_codes_stream_json_in_a_harbor_trial_is_the_same_loop_as_its_session(tmp_path: Path) -> None:
    """Harbor keeps what `claude -p --output-format stream-json` printed as agent/claude-code.txt;
    with no session and no trajectory beside it, that stream is the run: the same checks, edits
    and outcomes as the session it came from, the task from the `-p` prompt of the agent's
    command, a line of stderr named in the notes, the trial's verdict attached."""
    trial = tmp_path / "job" / "shop-rounding__Ef56"
    _trial(tmp_path / "job", "shop-rounding__Ef56", None, {"task_name": "shop-rounding", "trial_name": "shop-rounding__Ef56",
                                                            "verifier_result": {"rewards": {"reward": 1.0}}})
    (trial / "agent" / "claude-code.txt").write_text(CLAUDE_STREAM.read_text() + "npm WARN deprecated: a line of stderr\n")
    (trial / "agent" / "command-1").mkdir()
    prompt = "discount(9.99, 10) returns 9 instead of 8.99: fix the rounding in shop/price.py. Tests are in tests/."
    (trial / "agent" / "command-1" / "command.txt").write_text(
        f"claude --verbose --output-format stream-json -p '{prompt}' --allowedTools Bash Edit 2>&1 </dev/null "
        "| tee /logs/agent/claude-code.txt")
    out = tmp_path / "out"
    imported = runner.invoke(app, ["import", "atif", str(trial / "result.json"), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    (path,) = out.rglob("*.json")
    streamed = json.loads(path.read_text())
    assert streamed["run"]["challenge"] == "shop-rounding" and streamed["run"]["task"]["statement"] == prompt
    assert any("claude-code.txt:" in note and "skipped" in note for note in streamed["run"]["notes"])
    assert streamed["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 1, "total": 1}
    session = _imported("claude-code", CLAUDE / "sess-red-green.jsonl", tmp_path / "session")["sess-red-green"]
    loop = _read_loop(streamed)
    assert loop and loop[-1][0] and loop == _read_loop(json.loads(session.read_text()))  # checks read, the same
    (saved,) = _imported("auto", CLAUDE_STREAM, tmp_path / "saved").values()  # a stream saved as it was printed
    assert _read_loop(json.loads(saved.read_text())) == loop
    assert json.loads(saved.read_text())["run"]["usage"]["cost_usd"] == 0.12  # the stream's `result` line
    assert json.loads(saved.read_text())["run"]["challenge"] == "sess-red-green"  # its session_id, as the session's


def test_a_harbor_trial_of_codex_is_read_from_its_rollout(tmp_path: Path) -> None:
    """Codex in Harbor keeps its rollout under agent/sessions/YYYY/MM/DD/: with no trajectory, the
    trial is that rollout's loop with the trial's task and verdict."""
    rollout = ROOT / "tests" / "fixtures" / "codex" / "rollout-2026-11-21T09-00-00-red-green.jsonl"
    _trial(tmp_path / "job", "shop__Gh78", None, {"task_name": "shop", "trial_name": "shop__Gh78",
                                                  "verifier_result": {"rewards": {"reward": 1.0}}})
    day = tmp_path / "job" / "shop__Gh78" / "agent" / "sessions" / "2026" / "11" / "21"
    day.mkdir(parents=True)
    shutil.copy(rollout, day)
    out = tmp_path / "out"
    imported = runner.invoke(app, ["import", "auto", str(tmp_path / "job"), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert "codex:" not in imported.stderr
    (path,) = out.rglob("*.json")
    trial = json.loads(path.read_text())
    assert trial["run"]["challenge"] == "shop" and trial["run"]["agent"].startswith("codex-")
    assert trial["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 1, "total": 1}
    (alone,) = _imported("codex", rollout, tmp_path / "alone").values()
    assert _read_loop(trial)[-1][0] and _read_loop(trial) == _read_loop(json.loads(alone.read_text()))


def _checks_and_files(document: dict[str, Any]) -> list[Any]:
    """Each iteration's checks, counts and the files it changed (by path)."""
    return [(t.get("checks"), t["test_results"].get("post_iteration"), sorted(f["path"] for f in t["changes"].get("files", [])))
            for t in (i["iteration_telemetry"] for i in document["iterations"])]


def test_codex_exec_json_is_read_as_the_rollout_it_printed(tmp_path: Path) -> None:
    """`codex exec --json` prints the commands with their output and exit status and names the files
    each patch changed: `import auto` recognises it, and its loop is the rollout's (the same checks
    and outcomes, the same files; the text of an edit is not in the stream, so none is rebuilt).
    In a Harbor trial (agent/codex.txt) the task is the prompt after `--` in the agent's command."""
    rollout = ROOT / "tests" / "fixtures" / "codex" / "rollout-2026-11-21T09-00-00-red-green.jsonl"
    (streamed,) = _imported("auto", CODEX_STREAM, tmp_path / "out").values()
    (alone,) = _imported("codex", rollout, tmp_path / "rollout").values()
    read, expected = json.loads(streamed.read_text()), json.loads(alone.read_text())
    assert read["run"]["source"] == "codex" and read["run"]["usage"] == {
        "input_tokens": 12000, "output_tokens": 600, "cache_read_input_tokens": 6000}
    assert _checks_and_files(read)[-1][0] and _checks_and_files(read) == _checks_and_files(expected)
    assert judge(load_run(str(streamed))).process_score == judge(load_run(str(alone))).process_score

    trial = tmp_path / "job" / "shop__Ij90"
    _trial(tmp_path / "job", "shop__Ij90", None, {"task_name": "shop", "trial_name": "shop__Ij90",
                                                  "agent_info": {"name": "codex", "model_info": {"name": "openai/gpt-5"}},
                                                  "verifier_result": {"rewards": {"reward": 1.0}}})
    (trial / "agent" / "codex.txt").write_text("Reading prompt from stdin...\n" + CODEX_STREAM.read_text())
    (trial / "agent" / "command-1").mkdir()
    prompt = "discount(9.99, 10) returns 9 instead of 8.99: fix the rounding in shop/price.py."
    (trial / "agent" / "command-1" / "command.txt").write_text(
        f"codex exec --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check --model gpt-5 --json -- "
        f"{shlex.quote(prompt)} 2>&1 </dev/null | tee /logs/agent/codex.txt")
    (harbor,) = _imported("auto", tmp_path / "job", tmp_path / "harbor").values()
    run = json.loads(harbor.read_text())
    assert run["run"]["agent"] == "codex-gpt-5" and run["run"]["task"]["statement"] == prompt
    assert run["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 1, "total": 1}
    assert _checks_and_files(run) == _checks_and_files(expected)


def test_the_folder_a_codex_stream_worked_in_is_read_from_its_paths_and_commands() -> None:
    """`codex exec --json` names changed files by absolute path and never its folder: the folder is
    the deepest one above them from which a changed path appears in a command or output, else the
    folder they share; changes in unrelated folders name none."""
    from procjudge.importers.codex import stream_root
    from procjudge.importers.steps import Step

    def change(path: str) -> Step:
        return Step("", f"apply_patch {path}", 0, "", None, writes=[(path, "edit")], kind="edit")

    ran = Step("", "python -m pytest tests/test_price.py", 1, "FAILED tests/test_price.py::test_cents", None)
    assert stream_root([change("/home/dev/shop/tests/test_price.py"), ran]) == "/home/dev/shop"
    assert stream_root([change("/srv/app/lib/util.py")]) == "/srv/app/lib"  # nothing names it: the shared folder
    assert stream_root([change("/app/src/x.py"), change("/tmp/notes.py")]) is None
    assert stream_root([ran]) is None


def test_a_harbor_trial_of_mini_swe_agent_is_read_from_its_own_trajectory_once(tmp_path: Path) -> None:
    """Harbor's mini-swe-agent keeps its own trajectory (agent/mini-swe-agent.trajectory.json)
    beside the ATIF one: `import auto` reads the trial once, from the ATIF trajectory; a trial
    with only its own is read from it, with the trial's task, verdict and notes, the same loop."""
    from test_trajectory_importers import TRAJECTORY, to_atif

    original = json.loads(TRAJECTORY.read_text())
    job = tmp_path / "job"
    for name, atif in (("both__Kl12", to_atif(original)), ("native__Mn34", None)):
        _trial(job, name, atif, {"task_name": name.split("__")[0], "trial_name": name,
                                 "verifier_result": {"rewards": {"reward": 1.0}},
                                 "exception_info": {"exception_type": "AgentTimeoutError", "exception_message": "900 s"}})
        (job / name / "agent" / "mini-swe-agent.trajectory.json").write_text(TRAJECTORY.read_text())
    runs = _job_runs(job, tmp_path / "out", apart="swe-agent")  # no trajectory read apart from its trial
    assert sorted(runs) == ["both", "native"]
    assert runs["both"]["run"]["source"] == "atif" and runs["native"]["run"]["source"] == "swe-agent"
    native = runs["native"]
    assert native["run"]["agent"] == "mini-swe-agent-gemini-3-pro-preview"
    assert any("AgentTimeoutError" in note for note in native["run"]["notes"])
    assert native["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden"] == {"passed": 1, "total": 1}
    def checks(run: dict[str, Any]) -> list[Any]:
        return [([(c["command"], c["outcome"]) for c in t.get("checks", [])], t["test_results"].get("post_iteration"))
                for t in (i["iteration_telemetry"] for i in run["iterations"])]

    assert checks(native)[-1][0] and checks(native) == checks(runs["both"])  # the same checks from either


def test_a_harbor_trial_whose_agent_never_ran_is_a_note_naming_why(tmp_path: Path) -> None:
    """An agent that never started (its key refused: the log holds one line of text and no event,
    or nothing) is no error in the log and nothing judged: a note naming what the log says and
    the harness's exception, and the import succeeds."""
    job = tmp_path / "job"
    for name, text in (("refused__Op56", "Error: Invalid API key · Please run /login\n"), ("empty__Qr78", "")):
        _trial(job, name, None, {"task_name": name.split("__")[0], "trial_name": name,
                                 "verifier_result": {"rewards": {"reward": 0.0}},
                                 "exception_info": {"exception_type": "NonZeroAgentExitCodeError",
                                                    "exception_message": "exit code 1"}})
        (job / name / "agent" / "claude-code.txt").write_text(text)
    imported = runner.invoke(app, ["import", "auto", str(job), "--out", str(tmp_path / "out")])
    assert imported.exit_code == 0, imported.output
    assert not list((tmp_path / "out").rglob("*.json"))
    assert "trial refused__Op56: the agent's log agent/claude-code.txt holds no event (its first line: " \
           "'Error: Invalid API key · Please run /login')" in imported.stderr
    assert "trial empty__Qr78: the agent's log agent/claude-code.txt holds no event (it is empty)" in imported.stderr
    assert imported.stderr.count("NonZeroAgentExitCodeError: exit code 1") == 2


def test_a_harbor_trials_broken_agent_log_is_an_error_naming_that_log(tmp_path: Path) -> None:
    """An agent log that is not what it should be is an error at the trial, naming the log (not
    the trial's result.json, which is fine), in one line; the other trials are imported."""
    job = tmp_path / "job"
    _trial(job, "broken__St90", None, {"task_name": "broken", "trial_name": "broken__St90"})
    (job / "broken__St90" / "agent" / "mini-swe-agent.trajectory.json").write_text("{not json")
    _trial(job, "fine__Uv12", None, {"task_name": "fine", "trial_name": "fine__Uv12",
                                     "verifier_result": {"rewards": {"reward": 1.0}}})
    sessions = job / "fine__Uv12" / "agent" / "sessions" / "projects" / "-home-dev-shop"
    sessions.mkdir(parents=True)
    shutil.copy(CLAUDE / "sess-red-green.jsonl", sessions)
    imported = runner.invoke(app, ["import", "auto", str(job), "--out", str(tmp_path / "out")])
    assert imported.exit_code == 2
    (error,) = [line for line in imported.stderr.splitlines() if "broken__St90" in line]
    assert "not an ATIF trajectory or a Harbor trial's agent log: agent/mini-swe-agent.trajectory.json: " in error
    assert "Traceback" not in imported.output
    assert [p.stem for p in (tmp_path / "out").rglob("*.json")] == ["fine"]
