"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as run files: one run per
rollout.

A rollout holds one JSON object a line, ``{timestamp, type, payload}``: ``session_meta`` (the
session's ``id``, ``cwd``, ``cli_version``, ``git``), ``turn_context`` (the ``model``),
``response_item`` (what the model saw and did: a ``message``, ``reasoning``, a ``function_call``
with JSON-string ``arguments`` and its ``function_call_output``, a ``custom_tool_call`` such as
``apply_patch`` with its ``*** Begin Patch`` ``input`` and its ``custom_tool_call_output``, a
``local_shell_call``) and ``event_msg`` (what the CLI showed: ``exec_command_end`` with the
``exit_code`` and ``aggregated_output``, ``patch_apply_end``, ``token_count``, ``user_message``,
``agent_message``). Which of these a rollout keeps depends on the CLI's version and persistence
mode; the reader takes each fact from wherever it is:

- a shell call (``shell`` with an ``argv``, ``bash -lc "..."`` unwrapped; ``exec_command`` or
  ``shell_command`` with a command string; ``local_shell_call``) is a command of
  :mod:`procjudge.importers.shell`; its exit status is ``exec_command_end``'s, else the output's
  ``metadata.exit_code`` (older rollouts keep the output as a JSON string), else ``Process
  exited with code N`` in its text; its output is ``aggregated_output``, else the output's text;
- ``apply_patch`` (a custom tool call, or a shell call whose argv starts with it) edits the files
  its patch names: each ``*** Update File`` hunk an old and a new text, ``*** Add File`` a file
  written whole, ``*** Delete File`` a deletion; a patch the CLI reports as failed changed nothing;
- every other call (``update_plan``, ``view_image``, ``web_search``, ...) is a read.

The agent is the model of the turns, the task the first prompt the user typed (Codex's own
``<environment_context>`` and instructions aside), the repository the session's ``cwd``. Tokens
are the last ``token_count``'s totals in ``run.usage``. A line that is not JSON costs that line.

What ``codex exec --json`` printed (``thread.started``, ``item.*``, ``turn.*`` events) is read by
:func:`exec_steps`: the commands and their output, the files each change names (not its text),
the tokens of the turns; it names neither the prompt nor the folder (:func:`stream_root`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..model import RunFile, Usage
from .base import ImportIssue, as_list, as_object, epoch_seconds, read_records
from .build import token_counts, with_usage
from .driver import Imported, Made, Task, drive, one_run_per_file
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import REPO_ROOTS, Step

_EXITED = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash"})
_SHELL_TOOLS = frozenset({"shell", "container.exec", "local_shell"})
_COMMAND_TOOLS = frozenset({"exec_command", "shell_command"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _output(raw: Any) -> tuple[str, int | None]:
    """A call's output text and exit status, from an output that is text, a JSON string of
    ``{"output": ..., "metadata": {"exit_code": N}}``, or an object of that shape."""
    value: Any = raw
    if isinstance(raw, str) and raw.lstrip().startswith("{"):
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
    if isinstance(value, dict):
        code = as_object(value.get("metadata")).get("exit_code")
        text = value.get("output")
        return (str(text) if text is not None else ""), (code if isinstance(code, int) else None)
    text = _text(value) if not isinstance(value, str) else value
    exited = _EXITED.search(text[:2000])
    code = int(exited.group(1)) if exited else None
    if "\nOutput:\n" in text[:2000]:  # the unified exec's header (chunk, wall time, exit code) before the output
        text = text.split("\nOutput:\n", 1)[1]
    return text, code


def _command(name: str, arguments: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the shell command, or the patch) a call runs; (None, None) for another tool."""
    if name in _COMMAND_TOOLS:
        command = arguments.get("cmd", arguments.get("command"))
        if isinstance(command, list):
            command = shlex.join(str(word) for word in command)
        return (str(command), None) if isinstance(command, str) else (None, None)
    argv = arguments.get("command")
    if name in _SHELL_TOOLS and isinstance(argv, list) and argv and all(isinstance(w, str) for w in argv):
        if argv[0] == "apply_patch" and len(argv) > 1:
            return None, argv[1]
        if os.path.basename(argv[0]) in _SHELLS and len(argv) >= 3 and argv[1] in ("-lc", "-c", "-l", "-ic"):
            script = argv[-1]
            if script.lstrip().startswith("apply_patch") and "*** Begin Patch" in script:
                return None, script[script.index("*** Begin Patch"):]
            return script, None
        return shlex.join(argv), None
    if name in _SHELL_TOOLS and isinstance(argv, str):
        return argv, None
    return None, None


def tool_steps(name: str, arguments: dict[str, Any], output: str, code: int | None, thought: str,
               time: float | None, applied: bool | None = None) -> list[Step] | None:
    """One Codex tool call (a shell argv, ``exec_command``, ``apply_patch``) as steps, or None for a
    tool Codex does not have; ``applied``: whether a patch took (by default, it exited 0). Shared
    by the rollout reader and the reading of Inspect logs, where Codex run by ``inspect_swe``
    calls the same tools."""
    took = code in (None, 0) if applied is None else applied
    if name == "apply_patch":
        patch = arguments.get("input")
        patch = patch if isinstance(patch, str) else str(arguments.get("patch") or "")
        return _patch_steps(patch, thought, output, time, took)
    command, patch = _command(name, arguments)
    if patch is not None:
        return _patch_steps(patch, thought, output, time, took)
    return [Step(thought, command.strip(), code, output, time)] if command is not None else None


def _patch_steps(patch: str, thought: str, output: str, time: float | None, applied: bool) -> list[Step]:
    """The edits of a ``*** Begin Patch`` envelope, one step a hunk (nothing when not applied)."""
    if not applied:
        return [Step(thought, "apply_patch", 1, output, time, kind="read")]
    found: list[Step] = []
    path, mode = "", ""
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path and mode == "update" and (old or new):
            editor = {"command": "str_replace", "path": path, "old_str": "\n".join(old), "new_str": "\n".join(new)}
            found.append(Step(thought, f"apply_patch {path}", 0, output, time, writes=[(os.path.normpath(path), "edit")],
                              kind="edit", editor=editor))
        elif path and mode == "add":
            editor = {"command": "create", "path": path, "file_text": "\n".join(new) + ("\n" if new else "")}
            found.append(Step(thought, f"apply_patch {path}", 0, output, time,
                              writes=[(os.path.normpath(path), "create")], kind="edit", editor=editor))
        old.clear()
        new.clear()

    for line in patch.replace("\r\n", "\n").split("\n"):
        header = re.match(r"^\*\*\* (Update|Add|Delete) File: (.+)$", line)
        if header:
            flush()
            mode, path = header.group(1).lower(), header.group(2).strip()
            if mode == "delete":
                found.append(Step(thought, f"apply_patch delete {path}", 0, output, time,
                                  writes=[(os.path.normpath(path), "delete")], kind="edit"))
            continue
        moved = re.match(r"^\*\*\* Move to: (.+)$", line)
        if moved and path:
            found.append(Step(thought, f"apply_patch move {path}", 0, output, time,
                              writes=[(os.path.normpath(moved.group(1).strip()), "copy"), (os.path.normpath(path), "delete")],
                              kind="edit"))
            continue
        if line.startswith("*** End Patch"):
            flush()
            mode = ""
            continue
        if line.startswith("***"):
            continue  # Begin, End of File
        if line.startswith("@@"):
            flush()
            continue
        if mode == "update":
            mark, text = line[:1], line[1:]
            if mark == " " or line == "":  # context (a blank line may have lost its space)
                old.append(text)
                new.append(text)
            elif mark == "-":
                old.append(text)
            elif mark == "+":
                new.append(text)
        elif mode == "add" and line.startswith("+"):
            new.append(line[1:])
    flush()
    return found


def _user_prompt(payload: dict[str, Any]) -> str | None:
    """A prompt the user typed (not Codex's environment context or instructions)."""
    text = _text(payload.get("content")) if payload.get("type") == "message" else str(payload.get("message") or "")
    stripped = text.lstrip()
    if not stripped or stripped.startswith(("<environment_context>", "<user_instructions>", "# AGENTS.md",
                                            "<permissions", "<INSTRUCTIONS>")):
        return None
    return text


def steps(records: list[dict[str, Any]]) -> tuple[list[Step], str, dict[str, int]]:
    """(every call of a rollout as steps, in order; the first prompt; the tokens used)."""
    ends: dict[str, dict[str, Any]] = {}
    outputs: dict[str, Any] = {}
    patched: dict[str, bool] = {}
    tokens: dict[str, int] = {}
    prompt = ""
    for record in records:
        payload = as_object(record.get("payload"))
        kind = payload.get("type")
        if record.get("type") == "event_msg":
            if kind == "exec_command_end" and isinstance(payload.get("call_id"), str):
                ends[payload["call_id"]] = payload
            elif kind == "patch_apply_end" and isinstance(payload.get("call_id"), str):
                patched[payload["call_id"]] = payload.get("success") is not False
            elif kind == "token_count":
                total = as_object(as_object(payload.get("info")).get("total_token_usage"))
                tokens = token_counts(total, (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                                              ("cached_input_tokens", "cache_read_input_tokens"))) or tokens
            elif kind == "user_message" and not prompt:
                prompt = _user_prompt(payload) or ""
        elif record.get("type") == "response_item" and kind in ("function_call_output", "custom_tool_call_output"):
            if isinstance(payload.get("call_id"), str):
                outputs[payload["call_id"]] = payload.get("output")
        elif record.get("type") == "response_item" and kind == "message" and payload.get("role") == "user" and not prompt:
            prompt = _user_prompt(payload) or ""
    found: list[Step] = []
    thought = ""
    for record in records:
        payload = as_object(record.get("payload"))
        kind = payload.get("type")
        if record.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") == "assistant":
            thought = _text(payload.get("content")).strip()
        elif kind == "reasoning":
            summary = " ".join(_text([part]) for part in as_list(payload.get("summary")) if isinstance(part, dict))
            thought = summary.strip() or thought
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            found += _call_steps(payload, thought, epoch_seconds(record.get("timestamp")), ends, outputs, patched)
            thought = ""
    return found, prompt, tokens


_CHANGE_KINDS = {"add": "create", "update": "edit", "delete": "delete"}


def is_exec_stream(records: list[dict[str, Any]]) -> bool:
    """Whether the records are what ``codex exec --json`` printed (``thread.started``, ``item.*``,
    ``turn.*`` events), not a rollout (``{timestamp, type, payload}``)."""
    return any(str(r.get("type", "")).startswith(("thread.", "item.", "turn.")) for r in records[:20])


def exec_steps(records: list[dict[str, Any]]) -> tuple[list[Step], dict[str, int]]:
    """(every command and file change of a ``codex exec --json`` stream as steps, in order; the
    tokens its turns used). Only completed items count (``item.completed``): a command's
    ``aggregated_output`` and ``exit_code`` (``bash -lc "..."`` unwrapped), a ``file_change``'s
    paths and kinds (the stream carries no text of the change, so the edit is not rebuilt), a
    command Codex declined or a change that failed changed nothing and ran nothing."""
    found: list[Step] = []
    tokens: Counter[str] = Counter()
    thought = ""
    for record in records:
        if record.get("type") == "turn.completed":
            tokens.update(token_counts(as_object(record.get("usage")), (
                ("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                ("cached_input_tokens", "cache_read_input_tokens"))))
            continue
        if record.get("type") != "item.completed":
            continue
        item = as_object(record.get("item"))
        kind = item.get("type", item.get("item_type"))  # `item_type` in the first versions of the stream
        status = item.get("status")
        if kind in ("agent_message", "reasoning"):
            thought = str(item.get("text") or "").strip() or thought
        elif kind == "command_execution" and isinstance(item.get("command"), str):
            output = str(item.get("aggregated_output") or "")
            if status == "declined":
                found.append(Step(thought, f"declined: {item['command']}", None, output, None, kind="read"))
                continue
            try:
                argv = shlex.split(item["command"])
            except ValueError:
                argv = []
            code = item.get("exit_code")
            code = code if isinstance(code, int) else (1 if status == "failed" else None)
            made = tool_steps("shell", {"command": argv}, output, code, thought, None) if argv else None
            found += made if made is not None else [Step(thought, item["command"].strip(), code, output, None)]
            thought = ""
        elif kind == "file_change":
            changes = [as_object(change) for change in as_list(item.get("changes"))]
            writes = [(os.path.normpath(str(change["path"])), _CHANGE_KINDS.get(str(change.get("kind")), "edit"))
                      for change in changes if isinstance(change.get("path"), str) and change["path"]]
            shown = " ".join(path for path, _ in writes)
            if status == "failed" or not writes:
                found.append(Step(thought, f"apply_patch {shown}".strip(), 1, "", None, kind="read"))
            else:
                found.append(Step(thought, f"apply_patch {shown}", 0, "", None, writes=writes, kind="edit"))
            thought = ""
        elif kind in ("mcp_tool_call", "web_search", "todo_list", "collab_tool_call"):
            found.append(Step(thought, f"{kind} {item.get('tool') or item.get('query') or ''}".strip(), 0, "", None,
                              kind="read"))
    return found, dict(tokens)


def stream_root(found: list[Step]) -> str | None:
    """The folder a ``codex exec --json`` stream worked in, which it does not name: of the folders
    above the files its changes name (always absolute), the deepest from which a changed file's
    path, with a folder in it, appears in a command or its output (``sed -n 1,5p shop/price.py``
    names ``/home/dev/shop`` for ``/home/dev/shop/shop/price.py``); else the folder the changed
    files share; None when no change names an absolute path or they share only ``/``."""
    changed = [path for step in found if not step.shell for path, _ in step.writes if path.startswith("/")]
    if not changed:
        return None
    shared = os.path.commonpath([os.path.dirname(path) for path in changed])
    if shared == os.path.dirname(shared):
        return None  # changes in unrelated folders (/app and /tmp): the known roots decide
    texts = [f"{step.command}\n{step.output[:20_000]}" for step in found if step.shell]
    folder = shared
    while folder != os.path.dirname(folder):
        if any("/" in relative and any(relative in text for text in texts)
               for relative in (os.path.relpath(path, folder) for path in changed)):
            return folder
        folder = os.path.dirname(folder)
    return shared


def _call_steps(payload: dict[str, Any], thought: str, time: float | None, ends: dict[str, dict[str, Any]],
                outputs: dict[str, Any], patched: dict[str, bool]) -> list[Step]:
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    kind = payload.get("type")
    name = str(payload.get("name") or ("local_shell" if kind == "local_shell_call" else ""))
    if kind == "local_shell_call":
        arguments = as_object(payload.get("action"))
    elif kind == "custom_tool_call":
        arguments = {"input": payload.get("input")}
    else:
        arguments = _arguments(payload.get("arguments"))
    text, code = _output(outputs.get(call_id))
    end = ends.get(call_id)
    if end is not None:
        if isinstance(end.get("exit_code"), int):
            code = end["exit_code"]
        shown = end.get("aggregated_output")
        if not isinstance(shown, str):
            shown = "\n".join(str(end.get(key) or "") for key in ("stdout", "stderr")).strip("\n")
        text = shown or text
    ran = tool_steps(name, arguments, text, code, thought, time, patched.get(call_id))
    return ran if ran is not None else [Step(thought, name or "tool", code, text, time, kind="read")]


def model(records: list[dict[str, Any]]) -> str | None:
    models = Counter(str(as_object(r.get("payload")).get("model")) for r in records
                     if r.get("type") == "turn_context" and isinstance(as_object(r.get("payload")).get("model"), str))
    return models.most_common(1)[0][0].rsplit("/", 1)[-1] if models else None


def convert(records: list[dict[str, Any]], agent: str, session: str, notes: list[str] | None = None,
            hidden: list[dict[str, Any]] | None = None, statement: str = "") -> RunFile:
    """One rollout's (or ``codex exec --json`` stream's) records -> one run (the typed model, from
    the shell builder); ``hidden``: the held-back suites where a harness ran them (a Harbor trial);
    ``statement``: the task where the records do not hold the prompt (the stream never does)."""
    meta = next((as_object(r.get("payload")) for r in records if r.get("type") == "session_meta"), {})
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else next(
        (as_object(r.get("payload")).get("cwd") for r in records if r.get("type") == "turn_context"
         and isinstance(as_object(r.get("payload")).get("cwd"), str)), None)
    if is_exec_stream(records):
        (found, tokens), prompt = exec_steps(records), statement
        cwd = cwd or stream_root(found) or "/app"  # where Harbor's tasks work, else the known roots
    else:
        found, prompt, tokens = steps(records)
        prompt = prompt or statement
    roots = ((str(cwd).rstrip("/"),) if cwd else ()) + REPO_ROOTS
    document = convert_steps(Trajectory(instance=session, agent=agent, source="codex", steps=found, submission=None,
                                        statement=prompt, roots=roots, hidden=hidden or [], notes=list(notes or [])))
    return with_usage(document, Usage(**tokens)) if tokens else document


def import_files(paths: list[str], out: str, agent: str | None = None, jobs: int = 1,
                 overwrite: bool = False) -> Imported:
    """Import Codex CLI rollouts and ``codex exec --json`` streams (``jobs`` worker processes)."""
    return drive(tasks(paths, agent, jobs), out, paths, overwrite)


def tasks(paths: list[str], agent: str | None, jobs: int = 1) -> Iterator[Task | ImportIssue]:
    """A run per file, read in ``jobs`` worker processes and written in input order; a file none
    of whose lines can be read is an error."""
    yield from one_run_per_file(paths, functools.partial(_produce, agent), "a Codex rollout", jobs)


def _produce(agent: str | None, path: str) -> Made:
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for number, record in read_records(path):
        if not isinstance(record, dict):
            reason = record.reason if isinstance(record, ImportIssue) else "not a JSON object"
            notes.append(f"{os.path.basename(path)}:{number}: {reason}; the line was skipped")
            continue
        records.append(record)
    if not records:
        raise ValueError("no line could be read")
    meta = next((as_object(r.get("payload")) for r in records if r.get("type") == "session_meta"), {})
    thread = next((r.get("thread_id") for r in records if r.get("type") == "thread.started"), None)
    session = str(meta.get("id") or thread or os.path.splitext(os.path.basename(path))[0].removeprefix("rollout-"))
    name = agent or model(records) or "codex"
    return name, session, convert(records, name, session, notes)
