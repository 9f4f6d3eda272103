"""OpenHands evaluation output (``output.jsonl``) as run files: one run per instance (line).

Each line is one instance: ``instance_id``, ``instruction`` (the prompt), ``instance`` (the
benchmark's record, with ``problem_statement``), ``history`` (the event stream), ``test_result``
(``git_patch``: the submitted diff; after evaluation, ``report``), ``metadata`` (the model and the
agent), ``metrics`` and ``error``. The history is read in either of the shapes OpenHands has
written: a flat list of events (actions and observations, an observation naming its action in
``cause``), or the older list of ``[action, observation]`` pairs.

The events become shell steps, converted as :mod:`procjudge.importers.shell` describes (an
iteration is one or more edits followed by a test run or a failed build):

- ``run``: a shell command (``args.command``), with the exit code and output of its observation;
- ``edit`` (``str_replace``, ``insert``, ``create``) and ``write``: a structured edit of
  ``args.path``, carried with its arguments so that it is rebuilt as diff lines (an edit the
  editor refused writes nothing); the editor's ``view`` is a read of the window it shows
  (:mod:`procjudge.importers.toolcalls`, shared with SWE-agent and ATIF);
- ``run_ipython``: its ``!`` lines are shell commands; a file the Python opens for writing is an
  edit;
- ``read``, ``browse``, ``think``, ``message``, ``recall`` and the rest: reads and other steps (the
  system prompt and the task message are not steps).

Lines the OpenHands software agent SDK writes (the ``OpenHands/benchmarks`` harness) hold its
events instead, each with a ``kind`` (``ActionEvent``, ``ObservationEvent``, ``MessageEvent``, ...):
:func:`sdk_steps` reads them.

The repository is the folder the instruction names (``<uploaded_files>``, or "the repository in
/workspace/..."), so a file written elsewhere (``/workspace/test.c``) is scratch. The held-back
verdict comes from ``--reports DIR`` (SWE-bench's ``report.json`` per instance, with every test's
outcome), else from ``test_result.report`` (its ``tests_status`` when present, else ``resolved``
as a one-test suite named ``resolved``). An instance whose agent stopped on an error keeps the
error as a note.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from typing import Any

from ..model import RunFile
from .base import ImportIssue, as_object, epoch_seconds, records_of
from .classify import written_files
from .driver import Imported, Task, drive, named
from .reports import find_report, hidden_suites, unlisted_note
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import MAX_OUTPUT, Step
from .toolcalls import editor_step, tool_call_step


def events(history: list[Any]) -> list[dict[str, Any]]:
    """The history as a flat list of events (the older ``[action, observation]`` pairs unfolded)."""
    flat: list[dict[str, Any]] = []
    for item in history:
        if isinstance(item, list):
            flat += [part for part in item if isinstance(part, dict)]
        elif isinstance(item, dict):
            flat.append(item)
    return flat


def _exit_code(observation: dict[str, Any] | None) -> int | None:
    """A classic observation's exit code: its ``extras`` hold it as an SDK observation does."""
    return _code_in(as_object(observation.get("extras")), metadata_first=True) if observation is not None else None


def _code_in(holder: dict[str, Any], metadata_first: bool = False) -> int | None:
    """The exit code an observation holds in ``exit_code`` or ``metadata.exit_code`` (the classic
    history reads the metadata's first, the SDK its own field first)."""
    own, nested = holder.get("exit_code"), as_object(holder.get("metadata")).get("exit_code")
    for value in ((nested, own) if metadata_first else (own, nested)):
        if isinstance(value, int) and not isinstance(value, bool) and value >= -1:
            return value
    return None


def _observations(flat: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """index of each action -> its observation: the one whose ``cause`` is the action's id, else
    the next observation before another action."""
    by_cause: dict[Any, dict[str, Any]] = {}
    for event in flat:
        if "observation" in event and event.get("cause") is not None:
            by_cause.setdefault(event["cause"], event)
    answers: dict[int, dict[str, Any]] = {}
    for k, event in enumerate(flat):
        if "action" not in event:
            continue
        found = by_cause.get(event.get("id")) if event.get("id") is not None else None
        if found is None and k + 1 < len(flat) and "observation" in flat[k + 1] and flat[k + 1].get("cause") is None:
            found = flat[k + 1]
        if found is not None:
            answers[k] = found
    return answers


_SDK_SHELL = frozenset({"ExecuteBashAction", "TerminalAction", "BashAction"})
_SDK_EDITORS = frozenset({"FileEditorAction", "StrReplaceEditorAction", "PlanningFileEditorAction"})
_SDK_QUIET = frozenset({"FinishAction", "MessageAction"})  # the agent's last word, not a step of its loop
_SDK_FAILED = frozenset({"AgentErrorEvent", "UserRejectObservation"})  # the tool call did not run


def content_text(value: Any) -> str:
    """A text OpenHands writes as a string or as a list of content parts (``{"type": "text", ...}``):
    the SDK's events, a completion log's messages."""
    if isinstance(value, str):
        return value
    return "".join(str(part.get("text") or "") for part in value if isinstance(part, dict)) if isinstance(value, list) else ""


def sdk_steps(flat: list[dict[str, Any]]) -> list[Step]:
    """The events of the OpenHands software agent SDK (``kind``: ``ActionEvent``, whose
    ``action`` has a ``kind`` of its own, answered by the ``ObservationEvent`` whose ``action_id``
    is its id, or by an ``AgentErrorEvent`` when the call did not run) as steps: a terminal command
    with its exit code; the file editor's calls as structured edits and reads; ``apply_patch`` and
    the write and edit tools by the files they name; anything else (the browser, ``think``) a read.
    A call that did not run, or an edit the editor refused, changes nothing."""
    answers: dict[Any, dict[str, Any]] = {}
    for event in flat:
        if event.get("kind") in ("ObservationEvent", *_SDK_FAILED):
            for key in (event.get("action_id"), event.get("tool_call_id")):
                if key is not None:
                    answers.setdefault(key, event)
    found: list[Step] = []
    for event in flat:
        action = as_object(event.get("action"))
        kind = str(action.get("kind") or "")
        if event.get("kind") != "ActionEvent" or not kind or kind in _SDK_QUIET:
            continue
        answer = answers.get(event.get("id")) or answers.get(event.get("tool_call_id")) or {}
        observation = as_object(answer.get("observation"))
        failed = answer.get("kind") in _SDK_FAILED or observation.get("is_error") is True or bool(observation.get("error"))
        output = content_text(observation.get("content")) or content_text(observation.get("output")) or \
            str(observation.get("error") or answer.get("error") or answer.get("reason") or "")
        thought = "\n".join(filter(None, (content_text(event.get("thought")), str(event.get("reasoning_content") or ""))))
        time = epoch_seconds(event.get("timestamp"))
        arguments = {key: value for key, value in action.items() if key != "kind"}
        command, code = str(action.get("command") or ""), _code_in(observation)
        if kind in _SDK_SHELL and continued(found, command, bool(action.get("is_input")), code, output):
            continue
        if kind in _SDK_SHELL and not action.get("is_input"):
            ran = bool(answer) and answer.get("kind") not in _SDK_FAILED
            found.append(Step(thought, command, code if ran else None, output, time, kind=None if ran else "read"))
        elif kind in _SDK_EDITORS and not failed:
            found.append(editor_step({**arguments, "path": str(action.get("path") or "")}, thought, None, output, time))
        elif not failed and kind not in _SDK_EDITORS and kind not in _SDK_SHELL:
            name = str(event.get("tool_name") or kind)
            found.append(tool_call_step(name, arguments, thought, output, time))
        else:
            target = action.get("path") or action.get("command") or ""
            found.append(Step(thought, f"{kind} {target}".strip(), None, output, time, kind="read"))
    return found


def steps(history: list[Any]) -> list[Step]:
    """Every action of an OpenHands history as a step."""
    flat = events(history)
    if any(event.get("kind") == "ActionEvent" for event in flat):
        return sdk_steps(flat)
    answers = _observations(flat)
    found: list[Step] = []
    for k, event in enumerate(flat):
        action = event.get("action")
        if not isinstance(action, str) or action in ("system", "message", "recall", "finish", "change_agent_state"):
            continue
        args = as_object(event.get("args"))
        thought = str(args.get("thought") or "")
        observation = answers.get(k)
        output = str(observation.get("content") or "") if observation else ""
        time = epoch_seconds(event.get("timestamp"))
        code = _exit_code(observation)
        if action == "run":
            command = str(args.get("command") or "")
            if not_executed(output):
                found.append(Step(thought, command, None, output, time, kind="read"))
            elif not continued(found, command, args.get("is_input") in (True, "true"), code, output):
                found.append(Step(thought, command, code, output, time))
        elif action in ("edit", "write"):
            command = str(args.get("command") or ("write" if action == "write" else "str_replace"))
            found.append(editor_step({**args, "command": command, "path": str(args.get("path") or "")}, thought, code,
                                     output, time))
        elif action == "run_ipython":
            found.append(ipython_step(str(args.get("code") or ""), thought, code, output, time))
        else:
            target = args.get("path") or args.get("url") or ""
            found.append(Step(thought, f"{action} {target}".strip(), code, output, time, kind="read"))
    return found


def ipython_step(source: str, thought: str, code: int | None, output: str, time: float | None) -> Step:
    """A Python cell OpenHands ran: its ``!`` lines are shell commands, and a file its Python opens
    for writing is an edit."""
    shell = "\n".join(line.strip()[1:] for line in source.splitlines() if line.strip().startswith("!"))
    writes = [(path, how) for path, how in written_files(f"python - <<'EOF'\n{source}\nEOF") if how == "script"]
    return Step(thought, shell, code, output, time, writes=writes + written_files(shell))


def not_executed(output: str) -> bool:
    """Whether OpenHands refused a command because the one before was still running: \"[Your
    command \"...\" is NOT executed. The previous command is still running ...]\". It ran nothing (an
    `rm` deleted nothing, a test run checked nothing)."""
    return "is NOT executed. The previous command is still running" in output[:2000]


def continued(found: list[Step], command: str, is_input: bool, code: int | None, output: str) -> bool:
    """Whether a terminal action only waited on the command before it: OpenHands answers a command
    still running at its soft timeout with exit code -1, and the agent reads the rest with an empty
    command (or sends it keys). Then that command's step takes the rest of the output and the exit
    code the wait ended with (an interrupt, ``C-c``, leaves it unfinished); the wait is no step."""
    previous = found[-1] if found else None
    if previous is None or not previous.shell or previous.returncode != -1 or (command.strip() and not is_input):
        return False
    interrupted = is_input and command.strip().upper().startswith("C-")  # C-c, C-d, C-z: it did not finish
    whole = f"{previous.output}\n{output}" if output else previous.output
    if len(whole) > MAX_OUTPUT:  # its end says how it finished: keep the end, and the start
        whole = f"{whole[:MAX_OUTPUT // 4]}\n[...]\n{whole[-(MAX_OUTPUT * 3 // 4 - 16):]}"
    found[-1] = Step(previous.thought, previous.command, -1 if interrupted else code, whole, previous.time,
                     cut=previous.cut)
    return True


def _repository(instruction: str) -> tuple[str, ...]:
    """Where the repository lies, from the instruction."""
    for pattern in (r"<uploaded_files>\s*(/\S+?)/?\s*</uploaded_files>", r"repository (?:in|at) (/workspace/[\w.+-]+)",
                    r"directory (/workspace/[\w.+-]+)"):
        match = re.search(pattern, instruction)
        if match:
            return (match.group(1).rstrip("/."), "/testbed")
    return ("/testbed", "/workspace", "/repo")


def hidden(record: dict[str, Any], report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The held-back suites: a SWE-bench report's, else the record's own evaluation."""
    instance = str(record.get("instance_id"))
    if report is not None:
        return hidden_suites(report, instance)
    result = as_object(record.get("test_result"))
    own = result.get("report") if isinstance(result.get("report"), dict) else None
    if own is None:
        return []
    if isinstance(own.get("tests_status"), dict):
        return hidden_suites(own, instance)
    if isinstance(own.get("resolved"), bool):
        return [{"name": "resolved", "passed": int(own["resolved"]), "total": 1,
                 "tests": [{"name": "resolved", "outcome": "passed" if own["resolved"] else "failed"}]}]
    return []


def model_name(record: dict[str, Any]) -> str | None:
    """The model in the record's metadata: ``llm_config.model``, the SDK's ``llm.model``, else the
    model or agent named there."""
    metadata = as_object(record.get("metadata"))
    config = as_object(metadata.get("llm_config")) or as_object(metadata.get("llm"))
    name = config.get("model") or metadata.get("model_name") or metadata.get("agent_class")
    return str(name).rsplit("/", 1)[-1] if name else None


def convert(record: dict[str, Any], agent: str, report: dict[str, Any] | None = None) -> RunFile:
    """One line of output.jsonl -> one run (the typed model, from the shell builder)."""
    instance = record.get("instance_id")
    if not isinstance(instance, (str, int)) or isinstance(instance, bool):
        raise TypeError("no instance_id")
    history = record.get("history")
    if not isinstance(history, list):
        raise TypeError("history is not a list of events")
    result = as_object(record.get("test_result"))
    patch = result.get("git_patch", record.get("git_patch"))
    benchmark = as_object(record.get("instance"))
    instruction = str(record.get("instruction") or "")
    notes = []
    if record.get("error"):
        notes.append(f"the agent stopped on an error: {str(record['error'])[:300]}")
    language = benchmark.get("language")
    return convert_steps(Trajectory(
        instance=str(instance), agent=agent, source="openhands", steps=steps(history),
        submission=str(patch).replace("\r\n", "\n") if isinstance(patch, str) else None,
        statement=str(benchmark.get("problem_statement") or instruction), roots=_repository(instruction),
        hidden=hidden(record, report), notes=notes, language=str(language) if isinstance(language, str) else None))


def import_files(paths: list[str], out: str, agent: str | None = None, reports: str | None = None,
                 jobs: int = 1, overwrite: bool = False, unlisted: str = "unknown") -> Imported:
    """Import output.jsonl files, streamed line by line, and completion logs (``.json``,
    :mod:`procjudge.importers.openhands_llm`); the instances made in ``jobs`` worker processes."""
    return drive(tasks(paths, agent, reports, unlisted), out, paths, overwrite, jobs)


def tasks(paths: list[str], agent: str | None, reports: str | None,
          unlisted: str = "unknown") -> Iterator[Task | ImportIssue]:
    """A run per instance (a line; a completion log's latest file); a line that is not a JSON
    object is an error at its number."""
    logs = [path for path in paths if path.endswith(".json")]
    yield from _output_tasks([path for path in paths if not path.endswith(".json")], agent, reports)
    if logs:
        yield from _completion_tasks(logs, agent, reports, unlisted)


def _completion_tasks(paths: list[str], agent: str | None, reports: str | None,
                      unlisted: str) -> Iterator[Task | ImportIssue]:
    """A run per instance's latest completion log; one note on the earlier logs passed over, and
    one on the instances a results file does not list."""
    from . import openhands_llm
    from .reports import listed

    kept, earlier = openhands_llm.latest(paths)
    results_file = reports if reports and os.path.isfile(reports) else None
    unknown = []
    for path in kept:
        instance = openhands_llm.instance_of(path)
        name = agent or openhands_llm.model_of(path) or "openhands"
        produce = functools.partial(_completion_run, path, name, reports, instance, unlisted)
        if results_file is not None and listed(results_file, instance, unlisted) is None:
            unknown.append(instance)
        yield Task(path, 1, named(name, instance, produce), label=instance, what="an OpenHands completion log")
    if earlier:
        yield ImportIssue(earlier[0], 1, f"{len(earlier)} earlier completion log(s) of the same instances passed over: "
                          "the latest call of an instance holds every turn before it", note=True)
    note = unlisted_note(reports, unknown)
    if note is not None:
        yield note


def _completion_run(path: str, name: str, reports: str | None, instance: str, unlisted: str) -> RunFile:
    from . import openhands_llm

    return openhands_llm.convert(openhands_llm.read(path), path, name, find_report(reports, instance, path, unlisted))


def _output_tasks(paths: list[str], agent: str | None, reports: str | None) -> Iterator[Task | ImportIssue]:
    """A run per output.jsonl line."""
    for path in paths:
        issues: list[ImportIssue] = []
        for number, record in records_of(path, issues):
            yield from issues
            issues.clear()
            instance = str(record.get("instance_id") or f"record {number}")
            name = agent or model_name(record) or "openhands"
            produce = functools.partial(_with_report, record, name, reports, instance, path)
            yield Task(path, number, named(name, instance, produce), label=instance, what="an OpenHands instance",
                       records=[record])
        yield from issues


def _with_report(record: dict[str, Any], name: str, reports: str | None, instance: str, path: str) -> RunFile:
    """One instance's run, with its SWE-bench report when ``reports`` holds one."""
    return convert(record, name, find_report(reports, instance, path) if reports else None)
