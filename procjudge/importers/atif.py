"""Agent Trajectory Interchange Format (ATIF) trajectories as run files: one run per file.

ATIF (the Harbor project's RFC 0001, versions 1.0 to 1.7) is one JSON object: ``schema_version``
("ATIF-v1.x"), ``session_id``, ``agent`` (``name``, ``version``, ``model_name``), ``steps`` and
``final_metrics``. A step has a ``source`` (``system``, ``user`` or ``agent``), a ``message``,
an agent's ``reasoning_content``, ``tool_calls`` (``tool_call_id``, ``function_name``,
``arguments``) and an ``observation`` whose ``results`` answer the calls by ``source_call_id``.

Each tool call becomes a step of :mod:`procjudge.importers.shell` (an iteration is one or more
edits followed by a test run or a failed build):

- a file editor's call (its arguments hold ``command`` and ``path``, as Anthropic's
  ``str_replace_based_edit_tool`` and OpenHands' editor have it) is an edit of ``path`` carried
  with its arguments, so that the edit is rebuilt, or a read for ``view``
  (:mod:`procjudge.importers.toolcalls`, shared with SWE-agent and OpenHands);
- a call whose name says it writes or edits (``write``, ``edit``, ``create``, ``replace``,
  ``insert``, ``patch``) with a file path (``path``, ``file_path``, ``filename``) is an edit of
  that file; ``apply_patch`` edits the files its patch names (``*** Update File: PATH``);
- a call with a shell command (``command``, ``cmd``, ``keystrokes`` as Terminus sends them,
  ``script``) is a shell command, and its observation's content is its output; the exit code is
  read from the content when the harness printed it (``exit code: N``);
- every other call is a read or another tool.

ATIF carries no submitted diff, so files are marked scratch only when they lie outside the
repository (``/app``, ``/testbed``, ``/workspace``, ``/repo``) or by their throw-away names. The
held-back verdict comes from the Harbor trial folder the trajectory lies in
(``TRIAL/agent/trajectory.json``): ``TRIAL/verifier/ctrf.json`` (per-test outcomes, the Common
Test Report Format) when present, else ``TRIAL/verifier/reward.txt`` or ``result.json``'s
reward, as a one-test suite named ``reward`` (passed when the reward is 1). The task is
``result.json``'s ``task_name``, else the trial folder's name, else the session id. A trial with
no ATIF trajectory is read from the log its agent wrote itself (:func:`agent_log`: a Claude Code
session or ``stream-json`` output, a Codex rollout or ``codex exec --json`` stream, mini-swe-agent's
own trajectory), with the same verdict.
"""

from __future__ import annotations

import glob
import itertools
import os
from collections.abc import Iterator
from typing import Any

from ..model import RunFile, Usage
from .base import UNREADABLE, ImportIssue, NothingLogged, as_object, epoch_seconds, read_json, read_records
from .build import cost_usd, token_counts, with_usage
from .driver import Imported, Made, Task, drive, one_run_per_file
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import Step
from .toolcalls import tool_call_step

ROOTS = ("/app", "/testbed", "/workspace", "/repo")


def _content(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def call_step(call: dict[str, Any], thought: str, output: str, time: float | None) -> Step:
    """An ATIF tool call (``function_name``, ``arguments``) as the one vocabulary's step."""
    return tool_call_step(str(call.get("function_name") or ""), as_object(call.get("arguments")), thought, output, time)


def steps(trajectory: dict[str, Any]) -> list[Step]:
    """Every tool call of an ATIF trajectory, with the observation that answers it."""
    found: list[Step] = []
    raw = trajectory.get("steps")
    if not isinstance(raw, list):
        raise TypeError("steps is not a list")
    for step in raw:
        if not isinstance(step, dict) or step.get("source") != "agent":
            continue
        calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        results = [r for r in as_object(step.get("observation")).get("results") or [] if isinstance(r, dict)]
        by_id = {r.get("source_call_id"): r for r in results if r.get("source_call_id") is not None}
        thought = str(step.get("reasoning_content") or step.get("message") or "")
        time = epoch_seconds(step.get("timestamp"))
        for k, call in enumerate(calls):
            answer = by_id.get(call.get("tool_call_id")) or (results[k] if len(results) == len(calls) else None)
            found.append(call_step(call, thought if k == 0 else "", _content(answer) if answer else "", time))
    return found


def _trial(path: str) -> str | None:
    """The Harbor trial folder of a trajectory at TRIAL/agent/trajectory.json, or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) == "agent":
        return os.path.dirname(folder)
    return None


def verdict(path: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the held-back suites of the trial, its result.json) from the folder the trajectory lies in."""
    trial = _trial(path)
    return trial_verdict(trial) if trial is not None else ([], {})


def trial_verdict(trial: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the held-back suites of a Harbor trial folder, its result.json)."""
    result_path = os.path.join(trial, "result.json")
    result = as_object(read_json(result_path, 16 * 1024 * 1024)) if os.path.isfile(result_path) else {}
    ctrf_path = os.path.join(trial, "verifier", "ctrf.json")
    if os.path.isfile(ctrf_path):
        tests = [t for t in as_object(as_object(read_json(ctrf_path, 64 * 1024 * 1024)).get("results")).get("tests") or []
                 if isinstance(t, dict) and isinstance(t.get("name"), str)]
        outcomes = [{"name": t["name"], "outcome": {"passed": "passed", "failed": "failed", "skipped": "skipped"}
                     .get(str(t.get("status")), "failed" if t.get("status") != "pending" else "skipped")} for t in tests]
        counted = [o for o in outcomes if o["outcome"] != "skipped"]
        if counted:
            return [{"name": "verifier", "passed": sum(o["outcome"] == "passed" for o in counted), "total": len(counted),
                     "tests": outcomes}], result
    reward: Any = None
    reward_path = os.path.join(trial, "verifier", "reward.txt")
    if os.path.isfile(reward_path):
        from ..locate import read_regular

        text = read_regular(reward_path, 4096).decode("utf-8", "replace").strip()
        try:
            reward = float(text)
        except ValueError:
            raise ValueError(f"{reward_path}: expected a number, got {text[:40]!r}") from None
    else:
        reward = as_object(as_object(result.get("verifier_result")).get("rewards")).get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        solved = reward >= 1
        return [{"name": "reward", "passed": int(solved), "total": 1,
                 "tests": [{"name": "reward", "outcome": "passed" if solved else "failed"}]}], result
    return [], result


def convert(trajectory: dict[str, Any], agent: str, instance: str,
            hidden: list[dict[str, Any]] | None = None, notes: list[str] | None = None) -> RunFile:
    """One ATIF trajectory -> one run (the typed model, from the shell builder)."""
    version = str(trajectory.get("schema_version") or "")
    if not version.upper().startswith("ATIF"):
        raise ValueError(f"schema_version is {version!r}, not ATIF-v1.x")
    statement = next((str(s.get("message") or "") for s in trajectory.get("steps") or []
                      if isinstance(s, dict) and s.get("source") == "user"), "")
    return convert_steps(Trajectory(instance=instance, agent=agent, source="atif", steps=steps(trajectory),
                                    submission=None, statement=statement, roots=ROOTS, hidden=hidden or [],
                                    notes=list(notes or [])))


def agent_name(trajectory: dict[str, Any]) -> str:
    agent = as_object(trajectory.get("agent"))
    model = agent.get("model_name")
    name = str(agent.get("name") or "agent")
    return f"{name}-{str(model).rsplit('/', 1)[-1]}" if model else name


# Harbor's exceptions, by whose they are: the agent's own (its time, its process) end the run where the
# agent left it; the verifier's and the environment's are the harness's, never charged to the agent.
_AGENTS_OWN = {"AgentTimeoutError": "the agent ran out of its time", "NonZeroAgentExitCodeError":
               "the agent's process exited non-zero"}
_VERIFIERS = ("Verifier", "Reward")


def harness_notes(result: dict[str, Any]) -> tuple[list[str], bool]:
    """(the notes a Harbor trial's ``exception_info`` gives, whether its verifier failed, so that
    the trial has no held-back outcome)."""
    info = as_object(result.get("exception_info"))
    kind = str(info.get("exception_type") or "")
    if not kind:
        return [], False
    message = " ".join(str(info.get("exception_message") or "").split())[:200]
    shown = f"{kind}" + (f": {message}" if message else "")
    if kind in _AGENTS_OWN:
        return [f"the harness stopped the trial: {shown} ({_AGENTS_OWN[kind]}: the run ends where the agent left it)"], False
    if kind.startswith(_VERIFIERS):
        return [f"the harness's verifier failed: {shown}: no held-back outcome, and nothing charged to the agent"], True
    return [f"the harness failed: {shown}: not the agent's, and nothing charged to it"], False


def _usage(result: dict[str, Any]) -> dict[str, Any]:
    """Tokens and cost from a Harbor trial's ``agent_result``."""
    found = as_object(result.get("agent_result"))
    usage: dict[str, Any] = token_counts(found, (("n_input_tokens", "input_tokens"), ("n_output_tokens", "output_tokens"),
                                                 ("n_cache_tokens", "cache_read_input_tokens")))
    cost = cost_usd(found.get("cost_usd"))
    if cost is not None:
        usage["cost_usd"] = cost
    return usage


def _trial_name(result: dict[str, Any], trial: str | None) -> str:
    return str(result.get("task_name") or (os.path.basename(trial).rsplit("__", 1)[0] if trial else ""))


def agent_log(trial: str) -> tuple[str, list[str]] | None:
    """The log a Harbor trial's agent wrote itself, read where Harbor left no ATIF trajectory of it
    (an older Harbor, or a conversion that failed): ("claude-code", its session files under
    ``agent/sessions/projects/``, else ``agent/claude-code.txt``, the ``stream-json`` Claude Code
    printed), ("codex", its rollouts under ``agent/sessions/``, else ``agent/codex.txt``, what
    ``codex exec --json`` printed), or ("swe-agent", mini-swe-agent's own
    ``agent/mini-swe-agent.trajectory.json``); None when there is none of these."""
    agent = os.path.join(trial, "agent")
    sessions = sorted(glob.glob(os.path.join(glob.escape(agent), "sessions", "projects", "*", "*.jsonl")))
    if sessions:
        return "claude-code", sessions
    stream = os.path.join(agent, "claude-code.txt")
    if os.path.isfile(stream):
        return "claude-code", [stream]
    rollouts = sorted(glob.glob(os.path.join(glob.escape(agent), "sessions", "**", "rollout-*.jsonl"), recursive=True))
    if rollouts:
        return "codex", rollouts
    stream = os.path.join(agent, "codex.txt")
    if os.path.isfile(stream):
        return "codex", [stream]
    native = os.path.join(agent, "mini-swe-agent.trajectory.json")
    return ("swe-agent", [native]) if os.path.isfile(native) else None


def instruction(trial: str) -> str:
    """The task as Harbor handed it to the agent: the prompt of ``claude -p PROMPT`` or of ``codex
    exec ... -- PROMPT`` in the trial's ``agent/command-N/command.txt`` ("" when none is there; the
    agents' printed streams do not repeat it)."""
    from ..locate import read_regular
    from .edits import words_of
    from .grammar import simple_commands

    for path in sorted(glob.glob(os.path.join(glob.escape(trial), "agent", "command-*", "command.txt"))):
        try:
            text = read_regular(path, 4 * 1024 * 1024).decode("utf-8", "replace")
        except OSError:
            continue
        for command in simple_commands(text):
            words = words_of(command)
            codex = bool(words) and os.path.basename(words[0]) == "codex" and "exec" in words
            for word, following in itertools.pairwise(words):
                if (word in ("-p", "--print") and not following.startswith("-")) or (codex and word == "--"):
                    return following
    return ""


def _harbor_model(result: dict[str, Any]) -> str:
    """The model a trial's ``result.json`` names (``agent_info.model_info.name``), else "unknown"."""
    model = as_object(as_object(result.get("agent_info")).get("model_info")).get("name")
    return str(model).rsplit("/", 1)[-1] if isinstance(model, str) and model else "unknown"


def _from_agent_log(trial: str, agent: str | None) -> Made:
    """A Harbor trial read from its agent's own log, with the trial's verdict, notes and usage, as
    a trial with an ATIF trajectory is (the session with the most lines, when there are several)."""
    from . import claude_code, codex, swe_agent

    found = agent_log(trial)
    if found is None:
        raise ValueError("the agent's log is gone")
    kind, files = found
    hidden, result = trial_verdict(trial)
    notes, verifier_failed = harness_notes(result)
    instance = _trial_name(result, trial)

    def nothing(path: str) -> NothingLogged:
        """The agent's log holds no event: it never ran (a key refused, a crash at start), which is
        the harness's or the environment's to explain, and nothing is judged."""
        from ..locate import read_regular

        first = next((line.strip() for line in read_regular(path, 64 * 1024).decode("utf-8", "replace").splitlines()
                      if line.strip()), "")
        said = f" (its first line: {first[:120]!r})" if first else " (it is empty)"
        why = f"; {notes[0]}" if notes else ""
        return NothingLogged(f"trial {os.path.basename(trial)}: the agent's log {os.path.relpath(path, trial)} holds "
                             f"no event{said}{why}: nothing to judge")

    document: RunFile
    if kind == "claude-code":
        issues: list[ImportIssue] = []
        sessions = claude_code.sessions(files, issues)
        if not sessions:
            raise nothing(files[0])
        _, events, skipped = max(sessions.values(), key=lambda held: len(held[1]))
        name = agent or f"claude-code-{claude_code.model(events) or _harbor_model(result)}"
        document = claude_code.convert(events, name, instance, [*notes, *skipped],
                                       hidden=[] if verifier_failed else hidden, statement=instruction(trial))
    elif kind == "swe-agent":
        trajectory = swe_agent.read_trajectory(files[0])
        name = agent or f"mini-swe-agent-{swe_agent.model_name(trajectory) or _harbor_model(result)}"
        document = swe_agent.convert(trajectory, name, instance=instance, hidden=[] if verifier_failed else hidden,
                                     notes_given=notes)
    else:
        records = [record for path in files[-1:] for _, record in read_records(path) if isinstance(record, dict)]
        if not records:
            raise nothing(files[-1])
        name = agent or f"codex-{codex.model(records) or _harbor_model(result)}"
        document = codex.convert(records, name, instance, notes, hidden=[] if verifier_failed else hidden,
                                 statement=instruction(trial))
    usage = _usage(result)
    return name, instance, with_usage(document, Usage(**usage)) if usage else document


def import_files(paths: list[str], out: str, agent: str | None = None, jobs: int = 1,
                 overwrite: bool = False) -> Imported:
    """Import ATIF trajectory files, and Harbor trial folders by their ``result.json`` (a trial
    whose agent left no trajectory is a note naming the harness's exception)."""
    return drive(tasks(paths, agent, jobs), out, paths, overwrite)


def tasks(paths: list[str], agent: str | None, jobs: int = 1) -> Iterator[Task | ImportIssue]:
    """A run per trajectory (in ``jobs`` worker processes), each read once however it was named."""
    issues: list[ImportIssue] = []
    trajectories: list[str] = []
    for path in paths:
        if os.path.basename(path) != "result.json":
            trajectories.append(path)
            continue
        result = as_object(read_json(path, 16 * 1024 * 1024))
        if "trial_name" not in result and "task_name" not in result:
            continue  # a job's summary of its trials, not a trial
        trajectory = os.path.join(os.path.dirname(path), "agent", "trajectory.json")
        if os.path.isfile(trajectory):
            trajectories.append(trajectory)
        elif agent_log(os.path.dirname(path)) is not None:
            trajectories.append(path)  # read from the log the agent wrote itself
        else:
            notes, _ = harness_notes(result)
            why = notes[0] if notes else ("the agent left no trajectory (agent/trajectory.json) and no log of its "
                                          "own (a Claude Code or Codex session, a mini-swe-agent trajectory)")
            issues.append(ImportIssue(path, 1, f"trial {result.get('trial_name') or _trial_name(result, None)}: "
                                      f"no agent trajectory to judge; {why}", note=True))
    unique: list[str] = []
    seen: set[str] = set()
    for path in trajectories:  # a trial named by its result.json and by its trajectory is read once
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            unique.append(path)

    def produce(path: str) -> Made:
        if os.path.basename(path) == "result.json":
            folder = os.path.dirname(path)
            try:
                return _from_agent_log(folder, agent)
            except NothingLogged:
                raise
            except UNREADABLE as exc:  # the error names the agent's log, not the trial's result
                logs = (agent_log(folder) or ("", [path]))[1]
                raise ValueError(f"{os.path.relpath(logs[0], folder)}: {exc}") from None
        trajectory = read_json(path)
        if not isinstance(trajectory, dict):
            raise TypeError(f"expected a JSON object, got {type(trajectory).__name__}")
        hidden, result = verdict(path)
        notes, verifier_failed = harness_notes(result)
        trial = _trial(path)
        instance = _trial_name(result, trial) or str(trajectory.get("session_id")
                                                     or os.path.splitext(os.path.basename(path))[0])
        name = agent or agent_name(trajectory)
        document = convert(trajectory, name, instance, [] if verifier_failed else hidden, notes)
        usage = _usage(result)
        return name, instance, with_usage(document, Usage(**usage)) if usage else document

    yield from issues  # the trials without a trajectory, then the trajectories' runs
    yield from one_run_per_file(unique, produce, "an ATIF trajectory or a Harbor trial's agent log", jobs)
