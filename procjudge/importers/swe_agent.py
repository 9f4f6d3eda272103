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
the diff, and facts marks it by its name), the THOUGHT texts as the change summary, and the time
of the first step with the duration. The final iteration carries the submitted diff and, from
``report.json``, the held-back suites ``FAIL_TO_PASS`` and ``PASS_TO_PASS`` with every test's outcome. Iterations are not graded
submissions, so no submission time is recorded (the cooldown and double-submit rules are about
graded submissions) and the run's budget is the number of iterations it has.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from ..model import RunFile
from .base import ImportIssue, read_json
from .checks import killed_first
from .driver import Imported, Made, Task, drive, one_run_per_file
from .edits import words_of
from .replay import REJECTED
from .reports import HARNESS_FAILED, harness_failed, held_back_log, hidden_suites, listed, report_of, unlisted_note
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import MAX_OUTPUT, REPO_ROOTS, Step
from .toolcalls import COMMANDS, editor_step


def _decoded(value: Any) -> Any:
    """A field SWE-agent may write as a JSON string (``state``, ``replay_config``) decoded; a
    string that is not JSON is None; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content or "")


_CUT_MARKERS = ("<elided_chars>", "<output_head>", "[... Observation truncated", "Output was truncated",
                "<response clipped>", "Observations should not exceed")


_OUTPUT_OPEN = re.compile(r"<output(?:_head|_tail)?>\n?")
_OUTPUT_CLOSE = re.compile(r"</output(?:_head|_tail)?>")


def _observation(reply: str) -> tuple[int | None, str, bool]:
    """(return code, output, whether the harness cut it) of a mini-swe-agent observation."""
    code = re.search(r"<returncode>(-?\d+)</returncode>", reply)
    parts = []
    at = 0
    first = None  # the first output tag: what the harness said before it
    while (opened := _OUTPUT_OPEN.search(reply, at)) is not None:  # one pass: a tag that never closes ends it
        first = first or opened
        closed = _OUTPUT_CLOSE.search(reply, opened.end())
        if closed is None:
            break
        parts.append(reply[opened.end():closed.start()])
        at = closed.end()
    output = "\n".join(parts) if parts else reply
    if first is not None:
        output = killed_first(reply[:first.start()], output)
    return (int(code.group(1)) if code else None), output, any(marker in reply for marker in _CUT_MARKERS)


def steps(messages: list[Any]) -> Iterator[Step]:
    """Every command of a message list with its output: tool calls answered by ``tool`` messages
    (mini-swe-agent 2.x, SWE-agent 1.x), or one command block per assistant message answered by the
    next message (mini-swe-agent 1.x). Entries that are not messages are skipped."""
    messages = [m for m in messages if isinstance(m, dict)]
    answers = {str(m.get("tool_call_id")): m for m in messages if m.get("role") == "tool" and m.get("tool_call_id")}
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        if calls:
            yield from _call_steps(message, calls, answers)
        else:
            yield from _block_steps(message, messages[k + 1] if k + 1 < len(messages) else None)


def _call_steps(message: dict[str, Any], calls: list[dict[str, Any]],
                answers: dict[str, dict[str, Any]]) -> Iterator[Step]:
    """The steps of an assistant message's tool calls, each answered by its ``tool`` message."""
    text = _text(message.get("content"))
    for call in calls:
        function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
        try:
            arguments = json.loads(function.get("arguments") or "{}") if isinstance(function.get("arguments"), str) \
                else function.get("arguments") or {}
        except ValueError:
            continue  # the harness refused it too: a format error, nothing ran
        answer = answers.get(str(call.get("id")))
        reply = _text(answer.get("content")) if answer else ""
        extra: dict[str, Any] = answer["extra"] if answer and isinstance(answer.get("extra"), dict) else {}
        code, output, cut = _observation(reply)
        if code is None and isinstance(extra.get("returncode"), int):
            code = extra["returncode"]
        step = _tool_step(str(function.get("name") or ""), arguments if isinstance(arguments, dict) else {},
                          text, code, output, cut, _time(message))
        if step is not None:
            yield step


def _block_steps(message: dict[str, Any], answer: dict[str, Any] | None) -> Iterator[Step]:
    """The command of an assistant message (its ``extra.actions``, else its one command block),
    answered by the next message."""
    text = _text(message.get("content"))
    extra = message["extra"] if isinstance(message.get("extra"), dict) else {}
    actions: list[str] = [a["command"] for a in extra.get("actions") or []
                          if isinstance(a, dict) and isinstance(a.get("command"), str)]
    if not actions:
        blocks = re.findall(r"```(?:bash|sh)\s*\n(.*?)\n?```", text, re.DOTALL)
        if len(blocks) != 1:  # the harness runs exactly one command block; anything else is refused
            return
        actions = [blocks[0]]
    thought = text.split("```", 1)[0].replace("THOUGHT:", "").strip()
    reply = _text(answer.get("content")) if answer is not None else ""
    code, output, cut = _observation(reply)
    for command in actions[:1] if len(actions) == 1 else actions:
        yield Step(thought, command.strip(), code, output[:MAX_OUTPUT], _time(message), cut=cut)


def _tool_step(name: str, arguments: dict[str, Any], thought: str, code: int | None, output: str, cut: bool,
               time: float | None) -> Step | None:
    """A tool call as a step: ``bash`` a command, ``str_replace_editor`` an editor action."""
    if name in ("submit", "finish", "think"):
        return None
    command = arguments.get("command")
    if name == "str_replace_editor" or isinstance(arguments.get("path"), str) and command in COMMANDS:
        return editor_step(arguments, thought, code, output, time)
    if isinstance(command, str):
        return Step(thought, command.strip(), code, output, time, cut=cut)
    return None


def aci_steps(trajectory: list[Any]) -> Iterator[Step]:
    """SWE-agent's ``trajectory``: each entry an action as written (a shell command, or an ACI
    command such as ``edit 10:12`` ... ``end_of_edit``, ``create``, ``open``, ``str_replace_editor
    str_replace PATH --old_str ... --new_str ...``) with its observation. SWE-agent records no
    return codes."""
    open_file: str | None = None
    cursors: tuple[int, int] | None = None  # the cursor editor's selection (``set_cursors``)
    for entry in trajectory:
        if not isinstance(entry, dict):
            continue
        action = str(entry.get("action") or "").replace("\r\n", "\n").strip()
        output = _text(entry.get("observation")).replace("\r\n", "\n")
        thought = _text(entry.get("thought")).strip()
        state = _decoded(entry.get("state"))
        if isinstance(state, dict) and isinstance(state.get("open_file"), str) and state["open_file"] not in ("n/a", ""):
            open_file = state["open_file"]
        if not action:
            continue
        step = _aci_step(action, thought, output, open_file, cursors)
        cursors = _cursors_after(action, output, cursors)
        if step is None:
            continue
        step = step.but(cut=any(marker in output for marker in _CUT_MARKERS))
        if step.editor and step.editor.get("path"):
            open_file = str(step.editor["path"])
        yield step


_SET_CURSORS = re.compile(r"set_cursors\s+(\d+)\s+(\d+)\s*$")
_CURSOR_MOVED = re.compile(r"^(START|END)_CURSOR moved to (\d+)\s*$", re.MULTILINE)
_START_MARK = re.compile(r"^<<<<< START CURSOR >>>>>\n(\d+):", re.MULTILINE)
_END_MARK = re.compile(r"^(\d+):.*\n<<<<< END CURSOR >>>>>", re.MULTILINE)


def _cursors_after(action: str, output: str, cursors: tuple[int, int] | None) -> tuple[int, int] | None:
    """The cursor editor's selection after an action (SWE-agent 0.x's ``cursors`` tools): what
    ``set_cursors START END`` set, what a cursor edit leaves selected (its new lines), and what the
    observation shows last (``START_CURSOR moved to N``, the ``<<<<< START CURSOR >>>>>`` marks);
    None when it is not known."""
    first_line = action.partition("\n")[0].strip()
    named = _SET_CURSORS.fullmatch(first_line)
    if named:
        cursors = (int(named.group(1)), int(named.group(2)))
    elif first_line == "edit" and cursors is not None and not REJECTED.search(output[:600]):
        body = _edit_body(action)
        cursors = (cursors[0], cursors[0] + body.count("\n") if body else cursors[0])
    start, end = (cursors if cursors is not None else (None, None))
    for which, number in _CURSOR_MOVED.findall(output):
        start, end = (int(number), end) if which == "START" else (start, int(number))
    marks = _START_MARK.findall(output), _END_MARK.findall(output)
    if marks[0] and marks[1]:
        start, end = int(marks[0][-1]), int(marks[1][-1])
    return (start, end) if start is not None and end is not None else None


def _edit_body(action: str) -> str:
    """The text an ACI ``edit`` command carries: its lines up to ``end_of_edit``."""
    return re.sub(r"\n?end_of_edit\s*$", "", action.partition("\n")[2])


_ACI_READS = ("find_file", "search_file", "search_dir", "goto", "scroll_up", "scroll_down", "filemap")


def _aci_step(action: str, thought: str, output: str, open_file: str | None,
              cursors: tuple[int, int] | None = None) -> Step | None:
    first, _, rest = action.partition("\n")
    words = words_of(first)
    head = words[0] if words else ""
    if head in ("submit", "exit_cost", "exit_context", "exit_error", "exit_format", "exit_forfeit"):
        return None
    if head == "edit" and len(words) >= 2 and re.fullmatch(r"\d+:\d+", words[1]):
        lines, last = words[1].split(":")
        return editor_step({"command": "line_edit", "first": int(lines), "last": int(last), "text": _edit_body(action)},
                            thought, None, output, None, open_file)
    if head == "edit" and len(words) == 1 and rest:  # the cursor editor: the selection replaced
        # the lines START..END replaced (START 0: inserted before the first line)
        where = {"first": max(cursors[0], 1), "last": cursors[1]} if cursors is not None else {}
        return editor_step({"command": "line_edit", **where, "text": _edit_body(action)}, thought, None, output,
                            None, open_file)
    if head == "set_cursors":
        return Step(thought, action, None, output, None, kind="read")
    if head == "edit":  # SWE-agent 1.x's windowed editor: edit 'search' 'replace' [replace-all] on the open file
        full = words_of(action)
        if len(full) == 3 or len(full) == 4 and full[3] in ("True", "False", "true", "false"):
            return editor_step({"command": "str_replace", "old_str": full[1], "new_str": full[2]}, thought, None,
                                output, None, open_file)
    if head == "insert":
        full = words_of(action)
        return editor_step({"command": "append", "text": full[1] if len(full) > 1 else ""}, thought, None, output,
                            None, open_file)
    if head == "create" and len(words) == 2:
        return editor_step({"command": "create", "path": words[1], "file_text": ""}, thought, None, output, None)
    if head == "open" and len(words) >= 2:
        return editor_step({"command": "view", "path": words[1]}, thought, None, output, None)
    if head in _ACI_READS:
        return editor_step({"command": "view", "path": open_file or ""}, thought, None, output, None) \
            if head in ("goto", "scroll_up", "scroll_down") else Step(thought, action, None, output, None, kind="read")
    if head == "str_replace_editor" and len(words) >= 3:
        full = words_of(action)
        arguments: dict[str, Any] = {"command": full[1], "path": full[2]}
        k = 3
        while k + 1 < len(full):
            if full[k].startswith("--"):
                key = full[k][2:]
                arguments[key] = int(full[k + 1]) if key == "insert_line" and full[k + 1].isdigit() else full[k + 1]
                k += 2
            else:
                k += 1
        return editor_step(arguments, thought, None, output, None)
    return Step(thought, action, None, output[:MAX_OUTPUT], None)



def _time(message: dict[str, Any]) -> float | None:
    extra = message.get("extra")
    if isinstance(extra, dict):
        response = extra.get("response")
        created = response.get("created") if isinstance(response, dict) else extra.get("timestamp")
        if isinstance(created, (int, float)) and created > 0:
            return float(created)
    return None


def _statement(first_user: str) -> str:
    for pattern in (r"<pr_description>(.*?)</pr_description>", r"ISSUE:\n(.*?)\n+INSTRUCTIONS:",
                    r"<issue_description>(.*?)</issue_description>"):
        found = re.search(pattern, first_user, re.DOTALL)
        if found:
            return found.group(1)
    return first_user


def convert(trajectory: dict[str, Any], agent: str, report: dict[str, Any] | None = None,
            log: str | None = None, instance: str | None = None, hidden: list[dict[str, Any]] | None = None,
            notes_given: list[str] | None = None) -> RunFile:
    """One trajectory (and its SWE-bench report, and the held-back run's log) -> one run (the typed
    model); ``instance``, ``hidden`` and ``notes`` where a harness other than SWE-bench's gives the
    task, the held-back suites and what befell the trial (``notes_given``: a Harbor trial)."""
    instance = instance or str(trajectory.get("instance_id") or "run")
    messages = trajectory.get("messages") or trajectory.get("history") or []
    if not isinstance(messages, list):
        raise TypeError("`messages` (or `history`) is not a list")
    info: dict[str, Any] = trajectory["info"] if isinstance(trajectory.get("info"), dict) else {}
    users = (_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user")
    first_user = next((text for text in users if "ISSUE:" in text or "<pr_description>" in text
                       or "<issue_description>" in text), "")
    if not first_user:
        first_user = next((_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"), "")
    actions = trajectory.get("trajectory")
    roots: tuple[str, ...] = REPO_ROOTS
    if isinstance(actions, list) and actions:
        found = list(aci_steps(actions))
        roots = REPO_ROOTS + tuple(dict.fromkeys(_working_dirs(actions)))
    else:
        found = list(steps(messages))
    submission = info.get("submission")
    failed = harness_failed(report)
    notes = [HARNESS_FAILED] if failed else []
    notes += notes_given or []
    return convert_steps(Trajectory(
        instance=instance, agent=agent, source="swe-agent", steps=found,
        submission=str(submission).replace("\r\n", "\n") if submission else "",
        statement=_statement(first_user), roots=roots, notes=notes,
        hidden=hidden if hidden is not None else hidden_suites(report, instance) if report is not None
        and not failed else [],
        held_back_log=log if not failed else None, language="python"))


def _working_dirs(actions: list[Any]) -> Iterator[str]:
    for entry in actions:
        state = entry.get("state") if isinstance(entry, dict) else None
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except ValueError:
                continue
        if isinstance(state, dict) and isinstance(state.get("working_dir"), str) and state["working_dir"].startswith("/"):
            yield state["working_dir"].rstrip("/")


def read_trajectory(path: str) -> dict[str, Any]:
    document = read_json(path)
    if isinstance(document, list):  # SWE-agent's older .traj: the history alone
        document = {"messages": document}
    if not isinstance(document, dict):
        raise TypeError(f"expected a JSON object, got {type(document).__name__}")
    if "trajectory" in document and "messages" not in document and "history" in document:
        document["messages"] = document["history"]
    return document


_GENERIC_FOLDERS = frozenset({"trajs", "trajectories", "traj", "logs", "results", "evaluation", "output", "outputs", "runs"})


def agent_from_path(path: str, instance: str) -> str:
    """The agent's name from where its trajectory lies: the nearest folder that is neither the
    instance's own nor a generic one (``trajs``); SWE-agent's run folders (``gpt4__SWE-bench_Lite
    __default__t-0.00...``) give their model, the part before the first ``__``."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(4):
        name = os.path.basename(folder)
        if not name:
            break
        if name != instance and name.lower() not in _GENERIC_FOLDERS:
            return name.split("__", 1)[0] or name
        folder = os.path.dirname(folder)
    return "agent"


def model_name(trajectory: dict[str, Any]) -> str | None:
    """The model the agent ran on, from the trajectory's own configuration (its last path
    component): mini-swe-agent's ``info.config.model.model_name``, SWE-agent 1.x's
    ``replay_config.agent.model.name`` (``replay_config`` is a JSON string or an object)."""
    info = trajectory.get("info")
    config = info.get("config") if isinstance(info, dict) else None
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    if not name:
        replay = _decoded(trajectory.get("replay_config"))
        agent = replay.get("agent") if isinstance(replay, dict) else None
        model = agent.get("model") if isinstance(agent, dict) else None
        name = model.get("name") if isinstance(model, dict) else None
    return str(name).rsplit("/", 1)[-1] if isinstance(name, str) and name.strip() else None


def import_files(paths: list[str], out: str, agent: str | None = None, reports: str | None = None,
                 unlisted: str = "unknown", jobs: int = 1, overwrite: bool = False) -> Imported:
    """Import trajectories (``jobs`` worker processes). A results file that does not list an
    instance leaves its outcome unknown, said once in one note (``unlisted="unresolved"``: the
    file is complete); an instance the harness failed on is imported without a held-back outcome,
    with a note on the run."""
    return drive(tasks(paths, agent, reports, unlisted, jobs), out, paths, overwrite)


def tasks(paths: list[str], agent: str | None, reports: str | None, unlisted: str = "unknown",
          jobs: int = 1) -> Iterator[Task | ImportIssue]:
    """A run per trajectory file, then the note on the instances the results file does not list."""

    def produce(path: str) -> Made:
        trajectory = read_trajectory(path)
        instance = str(trajectory.get("instance_id") or os.path.basename(path).split(".traj")[0])
        name = agent or model_name(trajectory) or agent_from_path(path, instance)
        trajectory.setdefault("instance_id", instance)
        report, where = report_of(reports, instance, path, unlisted)
        return name, instance, convert(trajectory, name, report, held_back_log(where))

    unknown: list[str] = []
    # a file listing instances by outcome (not a folder of reports), looked at once
    results_file = reports if reports and os.path.isfile(reports) else None
    for task in one_run_per_file(paths, produce, "a trajectory", jobs):
        if isinstance(task, Task) and results_file is not None:
            instance = task.make()[1]
            if listed(results_file, instance, unlisted) is None:
                unknown.append(instance)
        yield task
    note = unlisted_note(reports, unknown)
    if note is not None:
        yield note
