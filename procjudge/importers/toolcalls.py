"""One vocabulary for a file editor's tool calls, whatever agent made them: SWE-agent's
``str_replace_editor``, Anthropic's ``str_replace_based_edit_tool`` (ATIF, Inspect), OpenHands'
``edit`` and ``write`` actions. Each format's reader names the call's arguments; the step is made
here, the same for all:

- ``view`` (and SWE-agent's ``open``) is a read whose output is the numbered window of the file,
  which the rebuilding of edits reads;
- ``create``, ``write``, ``str_replace``, ``insert``, ``undo_edit`` (and SWE-agent 0.x's
  ``line_edit`` and ``append``) are edits of the file, carried with their arguments (``old_str``,
  ``new_str``, ``file_text``, ``content``, ``insert_line``) so that the edit is rebuilt as diff
  lines; an edit the editor refused (its output says so, :data:`.replay.REJECTED`), or whose command
  line the shell refused (:data:`.grammar.SHELL_REFUSED`), writes nothing;
- any other command of the editor is a read.

:func:`tool_call_step` reads any tool call by its name and arguments: the editor tool (by its
``command`` argument), ``apply_patch`` (the files its patch names), another tool whose name says it
writes a file it names (``write_file``, ``edit``), a shell command (``command``, ``cmd``,
``keystrokes``, ``script``), else a read. ATIF's reader and the Inspect scorer use it as it is; a
format whose tools differ (Claude Code's ``Edit``/``MultiEdit``, Codex's ``exec_command``,
OpenHands' ``run_ipython``, SWE-agent 0.x's ``edit N:M``) reads those in its own module and calls
:func:`editor_step` or makes a :class:`Step` for the rest.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .grammar import SHELL_REFUSED
from .replay import REJECTED
from .steps import Step

# The editor's commands, as the tool schemas name them: the ones that read, and the ones that write.
READS = frozenset({"view", "open"})
EDITS = frozenset({"create", "write", "str_replace", "insert", "undo_edit", "line_edit", "append"})
COMMANDS = READS | EDITS

SHELL_ARGUMENTS = ("command", "cmd", "keystrokes", "script")
PATH_ARGUMENTS = ("path", "file_path", "filename", "file")
_WRITING = re.compile(r"write|edit|create|replace|insert|patch", re.IGNORECASE)
_EXIT = re.compile(r"(?i)\b(?:exit(?:ed with)? code|return ?code|exit status)\W{0,3}(-?\d+)")


def tool_call_step(name: str, arguments: dict[str, Any], thought: str, output: str, time: float | None) -> Step:
    """Any tool call as a step, by its name and arguments (see the module's docstring); its exit
    status is the one its output states, where it states one."""
    path = next((str(arguments[key]) for key in PATH_ARGUMENTS if isinstance(arguments.get(key), str)), "")
    exit_code = _EXIT.search(output[-2000:])
    code = int(exit_code.group(1)) if exit_code else None
    editor = arguments.get("command")
    if path and isinstance(editor, str) and editor in COMMANDS:
        return editor_step({**arguments, "path": path}, thought, code, output, time)
    if name == "apply_patch" or isinstance(arguments.get("patch"), str):
        patch = str(arguments.get("input") or arguments.get("patch") or "")
        files = re.findall(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", patch, re.MULTILINE)
        files += re.findall(r"^\+\+\+ b/(\S+)", patch, re.MULTILINE)
        return Step(thought, "apply_patch", code, output, time, writes=[(os.path.normpath(f.strip()), "edit") for f in files],
                    kind="edit")
    if path and _WRITING.search(name):
        return Step(thought, f"{name} {path}", code, output, time, writes=[(os.path.normpath(path), "edit")], kind="edit")
    command = next((arguments[key] for key in SHELL_ARGUMENTS if isinstance(arguments.get(key), str)), None)
    if command is not None:
        return Step(thought, command.replace("\r", "").strip(), code, output, time)
    return Step(thought, f"{name} {path}".strip(), code, output, time, kind="read")


def editor_step(arguments: dict[str, Any], thought: str, code: int | None, output: str, time: float | None,
                open_file: str | None = None) -> Step:
    """A file editor's call as a step (``open_file``: the file an editor without a ``path``
    argument works on, as SWE-agent 0.x's ``edit`` does)."""
    command = str(arguments.get("command") or "")
    path = str(arguments.get("path") or open_file or "")
    if command not in EDITS:
        return Step(thought, f"{command} {path}".strip(), code, output, time, kind="read",
                    editor={"command": "view", "path": path} if path else None)
    # the editor refused the edit, or the shell the command line that carried it (SWE-agent 0.x's `edit N:M`
    # without `end_of_edit`: bash read its text as commands and stopped at a syntax error)
    rejected = REJECTED.search(output[:600]) or SHELL_REFUSED.search(output[:600])
    writes = [] if rejected or not path else [(os.path.normpath(path), "create" if command == "create" else "edit")]
    return Step(thought, f"{command} {path}", code, output, time, writes=writes, kind="edit",
                editor={**arguments, "command": command, "path": path})
