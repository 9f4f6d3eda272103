"""One vocabulary for a file editor's tool calls, whatever agent made them: SWE-agent's
``str_replace_editor``, Anthropic's ``str_replace_based_edit_tool`` (ATIF, Inspect), OpenHands'
``edit`` and ``write`` actions. Each format's reader names the call's arguments; the step is made
here, the same for all:

- ``view`` (and SWE-agent's ``open``) is a read whose output is the numbered window of the file,
  which the rebuilding of edits reads;
- ``create``, ``write``, ``str_replace``, ``insert``, ``undo_edit`` (and SWE-agent 0.x's
  ``line_edit`` and ``append``) are edits of the file, carried with their arguments (``old_str``,
  ``new_str``, ``file_text``, ``content``, ``insert_line``) so that the edit is rebuilt as diff
  lines; an edit the editor refused (its output says so, :data:`.replay.REJECTED`) writes nothing;
- any other command of the editor is a read.
"""

from __future__ import annotations

import os
from typing import Any

from .replay import REJECTED
from .steps import Step

# The editor's commands, as the tool schemas name them: the ones that read, and the ones that write.
READS = frozenset({"view", "open"})
EDITS = frozenset({"create", "write", "str_replace", "insert", "undo_edit", "line_edit", "append"})
COMMANDS = READS | EDITS


def editor_step(arguments: dict[str, Any], thought: str, code: int | None, output: str, time: float | None,
                open_file: str | None = None) -> Step:
    """A file editor's call as a step (``open_file``: the file an editor without a ``path``
    argument works on, as SWE-agent 0.x's ``edit`` does)."""
    command = str(arguments.get("command") or "")
    path = str(arguments.get("path") or open_file or "")
    if command not in EDITS:
        return Step(thought, f"{command} {path}".strip(), code, output, time, kind="read",
                    editor={"command": "view", "path": path} if path else None)
    rejected = REJECTED.search(output[:600])
    writes = [] if rejected or not path else [(os.path.normpath(path), "create" if command == "create" else "edit")]
    return Step(thought, f"{command} {path}", code, output, time, writes=writes, kind="edit",
                editor={**arguments, "command": command, "path": path})
