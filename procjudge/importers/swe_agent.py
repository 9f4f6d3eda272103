"""mini-swe-agent and SWE-agent trajectories (``*.traj.json``, ``*.traj``) as run files (the
conversion itself is :mod:`procjudge.importers.shell`'s, shared with OpenHands and ATIF).

The agent works in a shell: each assistant message holds a THOUGHT and one bash command, the next
user message the command's ``<returncode>`` and ``<output>``. procjudge reads every command as a
step and classifies it:

- a **test run** is a command whose runner it recognises (Django's ``tests/runtests.py``,
  ``pytest`` / ``py.test`` / ``python -m pytest``, ``python -m unittest``, ``tox``, ``nox``) and
  whose output carries counts (unittest's ``Ran N tests`` with ``OK`` / ``FAILED (...)``, pytest's
  summary line); a recognised runner whose output has no counts (an import error, a system check
  that fails) is a run that did not build. Any other command, a reproduction script among them,
  is not a test run;
- an **edit** is a command that writes a file: ``sed -i``, ``perl -pi``, a redirection (``>``,
  ``>>``, ``tee``) of ``cat``/``echo``/``printf``, a Python script that opens a file for writing,
  ``cp``/``mv`` onto a path, ``rm``, ``patch`` and ``git apply``;
- every other command is a read or a search.

**An iteration is one or more edits followed by a test run** (test runs before any edit are the
baseline; a test run with no edit since the previous one is a re-run, counted in ``test_runs``).
Edits after the last test run belong to the final iteration: they were submitted untested, and a
note says so. Per iteration: the test command and its targets as the suite identity (counts from
different commands are never compared), the counts and the failing (and, in verbose output,
passing) tests by name, the files the commands wrote, marked ``scratch`` when the final diff does
not contain them or when they lie outside the repository (a throw-away script the agent keeps is in
the diff, and facts marks it by its name), the THOUGHT texts as the change summary, and the time of the first step with the duration. The final
iteration carries the submitted diff and, from ``report.json``, the held-back suites
``FAIL_TO_PASS`` and ``PASS_TO_PASS`` with every test's outcome. Iterations are not graded
submissions, so no submission time is recorded (the cooldown and double-submit rules are about
graded submissions) and the run's budget is the number of iterations it has.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from .base import ImportIssue, one_run_per_file, read_json
from .shell import (  # noqa: F401 - the shell helpers were first defined here; tests and users import them from here
    MAX_OUTPUT,
    Counts,
    Step,
    Trajectory,
    diff_files,
    hidden_suites,
    parse_counts,
    test_command,
    written_files,
)
from .shell import convert as convert_steps


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content or "")


def steps(messages: list[dict[str, Any]]) -> Iterator[Step]:
    """Every command of a trajectory with its output (the user message that answers it)."""
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        text = _text(message.get("content"))
        blocks = re.findall(r"```(?:bash|sh)\s*\n(.*?)\n?```", text, re.DOTALL)
        if len(blocks) != 1:  # the harness runs exactly one command block; anything else is refused
            continue
        thought = text.split("```", 1)[0].replace("THOUGHT:", "").strip()
        reply = _text(messages[k + 1].get("content")) if k + 1 < len(messages) else ""
        code = re.search(r"<returncode>(-?\d+)</returncode>", reply)
        output = "\n".join(re.findall(r"<output(?:_head|_tail)?>\n?(.*?)</output(?:_head|_tail)?>", reply, re.DOTALL)) or reply
        yield Step(thought, blocks[0].strip(), int(code.group(1)) if code else None, output[:MAX_OUTPUT], _time(message))


def _time(message: dict[str, Any]) -> float | None:
    extra = message.get("extra")
    if isinstance(extra, dict):
        response = extra.get("response")
        created = response.get("created") if isinstance(response, dict) else extra.get("timestamp")
        if isinstance(created, (int, float)) and created > 0:
            return float(created)
    return None


def convert(trajectory: dict[str, Any], agent: str, report: dict[str, Any] | None = None) -> dict[str, Any]:
    """One trajectory (and its SWE-bench report) -> one run document."""
    instance = str(trajectory.get("instance_id") or trajectory.get("environment") or "run")
    messages = trajectory.get("messages") or trajectory.get("history") or []
    if not isinstance(messages, list):
        raise TypeError("no messages")
    info = trajectory.get("info") or {}
    first_user = next((_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"), "")
    statement = re.search(r"<pr_description>(.*?)</pr_description>", first_user, re.DOTALL)
    return convert_steps(Trajectory(
        instance=instance, agent=agent, source="swe-agent", steps=list(steps(messages)),
        submission=str(info.get("submission") or ""), statement=statement.group(1) if statement else first_user,
        hidden=hidden_suites(report, instance) if report is not None else [], language="python"))


def read_trajectory(path: str) -> dict[str, Any]:
    document = read_json(path)
    if isinstance(document, list):  # SWE-agent's older .traj: the history alone
        document = {"messages": document}
    if not isinstance(document, dict):
        raise TypeError(f"expected a JSON object, got {type(document).__name__}")
    if "trajectory" in document and "messages" not in document and "history" in document:
        document["messages"] = document["history"]
    return document


def model_name(trajectory: dict[str, Any]) -> str | None:
    """The model the agent ran on, from the trajectory's configuration (its last path component)."""
    config = (trajectory.get("info") or {}).get("config") or {}
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return str(name).rsplit("/", 1)[-1] if name else None


def find_report(reports: str | None, instance: str, path: str) -> dict[str, Any] | None:
    """The SWE-bench report of an instance: REPORTS/<id>/report.json, REPORTS/<id>.json, or a
    report.json beside the trajectory's folder (logs/<id>/report.json next to trajs/<id>/)."""
    candidates = []
    if reports:
        candidates += [os.path.join(reports, instance, "report.json"), os.path.join(reports, f"{instance}.json")]
    folder = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    candidates.append(os.path.join(os.path.dirname(folder), "logs", instance, "report.json"))
    for candidate in candidates:
        if os.path.isfile(candidate):
            loaded = read_json(candidate, 64 * 1024 * 1024)
            if not isinstance(loaded, dict):
                raise ValueError(f"{candidate}: a report is a JSON object")
            return loaded
    return None


def import_files(paths: list[str], out: str, agent: str | None = None,
                 reports: str | None = None) -> tuple[int, list[ImportIssue]]:
    """Import trajectories; return (runs written, issues: errors and notes)."""
    def produce(path: str) -> tuple[str, str, dict[str, Any]]:
        trajectory = read_trajectory(path)
        name = agent or model_name(trajectory) or os.path.basename(os.path.dirname(os.path.abspath(path))) or "agent"
        instance = str(trajectory.get("instance_id") or os.path.basename(path).split(".traj")[0])
        trajectory.setdefault("instance_id", instance)
        return name, instance, convert(trajectory, name, find_report(reports, instance, path))

    return one_run_per_file(paths, out, produce, "a trajectory")
