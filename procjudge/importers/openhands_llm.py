"""OpenHands' completion logs (``llm_completions``) as run files: one run per instance.

With ``log_completions`` on, as its SWE-bench evaluation runs it, OpenHands writes one JSON file
per call to the model, ``llm_completions/<instance>/<model>-<epoch seconds>.json``; SWE-bench
experiment submissions keep the last one of each instance as ``trajs/<instance>/<model>-<epoch
seconds>.json``. Each holds ``messages`` (all that was sent: the system prompt, the task, every
turn before), ``response`` (the model's answer), ``fncall_messages`` and ``fncall_response`` (the
same with the tool calls as native ``tool_calls``, written when the model was prompted with them
as text), ``timestamp`` and ``cost``. The last call of an instance holds every turn before it, so
the latest file of a folder (by the epoch in its name) is the run and the earlier ones are passed
over, with one note.

The turns are read from ``fncall_messages`` (else ``messages``) and the last answer: each
assistant tool call answered by the ``tool`` message that names its id.

- ``execute_bash``: a shell command. Its exit code is the one OpenHands appends to the output
  (``[The command completed with exit code N.]``, ``[Command finished with exit code N]``), and
  those lines, the working directory and the interpreter OpenHands names, are not the command's
  output. A command still running at OpenHands' soft timeout (``[The command has no new output
  after 30 seconds. ...]``) has exit code -1, and the empty command or keys that read the rest
  join it (:func:`procjudge.importers.openhands.continued`).
- ``str_replace_editor``: the editor (:mod:`procjudge.importers.toolcalls`); an edit it refused
  (``ERROR: ...``) writes nothing.
- ``execute_ipython_cell``: its ``!`` lines are shell commands; a file its Python opens for writing
  is an edit.
- ``finish`` and ``think``: the agent's words, no step; any other tool by its name and arguments.

A call with no answer (the log's last answer, or a turn cut off) did not run, nor did a command
OpenHands refused because the one before was still running ("[Your command ... is NOT executed.
The previous command is still running ...]"): a read, never a check or an edit. The repository
is the folder the task names (``<uploaded_files>``), the task's statement its
``<issue_description>``; the agent is the model in the file name (before the epoch).
A completion log holds no submitted diff: the run's is rebuilt from the edits.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..model import RunFile
from .base import as_object, read_json
from .openhands import _repository, content_text, continued, ipython_step, not_executed
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import Step
from .toolcalls import editor_step, tool_call_step

# what OpenHands appends to a command's output: its exit code, where it ran, the interpreter
_TRAILER = re.compile(r"^\[(?:The command completed with exit code (-?\d+)\.(?: CTRL\+C was sent\.)?"
                      r"|Command finished with exit code (-?\d+)|Current working directory: [^\n]*"
                      r"|Python interpreter: [^\n]*|Below is the output of the previous command\.)\]$")
_WAITING = "[The command has no new output after"  # OpenHands' soft timeout: the command still runs
_EPOCH = re.compile(r"-(\d+(?:\.\d+)?)\.json$")
_QUIET = frozenset({"finish", "think"})


def is_completion_log(document: Any) -> bool:
    """Whether a JSON document is one of OpenHands' completion logs."""
    return isinstance(document, dict) and isinstance(document.get("messages"), list) \
        and ("fncall_messages" in document or isinstance(document.get("response"), dict))


def epoch_of(path: str) -> float:
    """The time of a completion log from its file name (``<model>-<epoch seconds>.json``), -1 when
    the name holds none."""
    match = _EPOCH.search(os.path.basename(path))
    return float(match.group(1)) if match else -1.0


def latest(paths: list[str]) -> tuple[list[str], list[str]]:
    """(the latest completion log of each folder, in input order; the earlier ones). Files whose
    names hold no time are each a run of their own."""
    newest: dict[str, str] = {}
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        if epoch_of(path) < 0:
            newest[path] = path
        elif folder not in newest or epoch_of(path) > epoch_of(newest[folder]):
            newest[folder] = path
    kept = set(newest.values())
    return [p for p in paths if p in kept], [p for p in paths if p not in kept]


def instance_of(path: str) -> str:
    """The instance a completion log belongs to: its folder's name."""
    return os.path.basename(os.path.dirname(os.path.abspath(path))) or os.path.basename(path)


def model_of(path: str) -> str | None:
    """The model: the file name before its time (``Claude-3.5-Sonnet(Oct)-1743405761.32.json``;
    OpenHands writes ``/`` in a model's name as ``__``), or None when the name holds no time."""
    name = os.path.basename(path)
    match = _EPOCH.search(name)
    return name[:match.start()].replace("__", "/").rsplit("/", 1)[-1] if match and name[:match.start()] else None


def bash_output(output: str) -> tuple[str, int | None]:
    """(what the command printed, its exit code) from an ``execute_bash`` answer: OpenHands' own
    lines set aside (the ones it appends, and the one it puts first when it shows the rest of a
    command's output); -1 for a command still running at the soft timeout."""
    lines = output.split("\n")
    code: int | None = None
    end = len(lines)
    while end > 0:
        line = lines[end - 1].strip()
        trailer = _TRAILER.match(line) if line.startswith("[") else None
        if line and trailer is None:
            break
        if trailer is not None and code is None and (trailer.group(1) or trailer.group(2)):
            code = int(trailer.group(1) or trailer.group(2))
        end -= 1
    start = 1 if end and _TRAILER.match(lines[0].strip()) else 0
    if code is None and any(line.startswith(_WAITING) for line in lines[-3:]):
        code = -1
    return "\n".join(lines[start:end]).rstrip("\n"), code


def _turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages with native tool calls, and the last answer after them."""
    messages = document.get("fncall_messages")
    response = document.get("fncall_response") if isinstance(messages, list) else None
    if not isinstance(messages, list):
        messages, response = document.get("messages"), document.get("response")
    turns = [m for m in messages or [] if isinstance(m, dict)]
    choices = as_object(response).get("choices")
    last = as_object(choices[0]).get("message") if isinstance(choices, list) and choices else None
    return [*turns, last] if isinstance(last, dict) else turns


def task_text(turns: list[dict[str, Any]]) -> str:
    """The task: the first user message that names the repository, else the first one."""
    users = [content_text(m.get("content")) for m in turns if m.get("role") == "user"]
    return next((text for text in users if "<uploaded_files>" in text), users[0] if users else "")


def _statement(task: str) -> str:
    match = re.search(r"<issue_description>\s*(.*?)\s*</issue_description>", task, re.DOTALL)
    return match.group(1) if match else task


def completion_steps(turns: list[dict[str, Any]]) -> list[Step]:
    """Every tool call of the turns as a step, answered by its ``tool`` message."""
    answers = {str(m.get("tool_call_id")): m for m in turns if m.get("role") == "tool" and m.get("tool_call_id")}
    found: list[Step] = []
    for message in turns:
        if message.get("role") != "assistant":
            continue
        thought = content_text(message.get("content")).strip()
        for call in message.get("tool_calls") or []:
            function = as_object(as_object(call).get("function"))
            name = str(function.get("name") or "")
            raw = function.get("arguments")
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                continue  # OpenHands refused it too: nothing ran
            if not isinstance(arguments, dict) or name in _QUIET:
                continue
            answer = answers.get(str(as_object(call).get("id")))
            output = content_text(answer.get("content")) if answer is not None else ""
            if answer is None:  # never answered: it did not run
                target = arguments.get("command") or arguments.get("path") or arguments.get("code") or ""
                found.append(Step(thought, f"{name} {str(target)[:200]}".strip(), None, "", None, kind="read"))
            elif name == "execute_bash" and not_executed(output):  # refused: the command before still ran
                found.append(Step(thought, str(arguments.get("command") or ""), None, output, None, kind="read"))
            elif name == "execute_bash":
                command = str(arguments.get("command") or "")
                is_input = arguments.get("is_input") in (True, "true")
                printed, code = bash_output(output)
                if not continued(found, command, is_input, code, printed) and command.strip() and not is_input:
                    found.append(Step(thought, command, code, printed, None))
            elif name == "str_replace_editor":
                found.append(editor_step({**arguments, "path": str(arguments.get("path") or "")}, thought, None,
                                         output, None))
            elif name == "execute_ipython_cell":
                found.append(ipython_step(str(arguments.get("code") or ""), thought, None, output, None))
            else:
                found.append(tool_call_step(name, arguments, thought, output, None))
    return found


def convert(document: dict[str, Any], path: str, agent: str, report: dict[str, Any] | None = None) -> RunFile:
    """One completion log (as :func:`read` gives it) -> one run (the typed model, from the shell
    builder)."""
    from .reports import HARNESS_FAILED, harness_failed, hidden_suites

    turns = _turns(document)
    task = task_text(turns)
    instance = instance_of(path)
    failed = harness_failed(report)
    return convert_steps(Trajectory(
        instance=instance, agent=agent, source="openhands", steps=completion_steps(turns), submission=None,
        statement=_statement(task), roots=_repository(task), notes=[HARNESS_FAILED] if failed else [],
        language="python", hidden=hidden_suites(report, instance) if report is not None and not failed else []))


def read(path: str) -> dict[str, Any]:
    document = read_json(path)
    if not is_completion_log(document):
        raise TypeError("expected an OpenHands completion log: a JSON object with 'messages' and 'response'")
    return dict(document)
