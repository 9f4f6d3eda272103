"""An importer for "steplog", a small JSON-lines log a shell agent might write: one reader, a
recogniser beside it, and the one call of the driver. docs/development.md walks through it, and
tests/test_trajectory_importers.py installs it as a plug-in and imports a log with it.

A steplog holds one line per event::

    {"type": "task", "id": "calc-1", "agent": "my-agent", "statement": "total() is off by one"}
    {"type": "command", "command": "python -m pytest -q", "output": "...", "exit": 1, "time": 1700000000.5}
    {"type": "edit", "path": "calc.py", "old": "return sum(xs) + 1", "new": "return sum(xs)"}
    {"type": "submit", "diff": "--- a/calc.py\\n+++ b/calc.py\\n..."}

Every command becomes a step the shell builder classifies (a test run, a script, a read), every
edit an editor call; the builder groups them into iterations, reads each check's outcome and
rebuilds the edits as text.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from typing import Any

from procjudge.importers.base import ImportIssue, NothingLogged, records_of
from procjudge.importers.driver import Imported, Task, drive, named
from procjudge.importers.shell import Trajectory, convert
from procjudge.importers.steps import Step
from procjudge.importers.toolcalls import editor_step
from procjudge.model import RunFile

NAME = "steplog"
SUMMARY = "steplog JSON lines (a task line, then command, edit and submit lines)"


def detect(path: str, head: bytes) -> bool:
    """A steplog starts with its task line: recognised by its first bytes, never by its name alone."""
    first = head.lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"type": "task"' in first and b'"statement"' in first


def import_files(paths: list[str], out: str, agent: str | None = None, overwrite: bool = False) -> Imported:
    """Import steplog files, one run per file."""
    return drive(tasks(paths, agent), out, paths, overwrite)


def tasks(paths: list[str], agent: str | None) -> Iterator[Task | ImportIssue]:
    """A run per file; a line that is not a JSON object is an error at its line, and the rest of
    the file is still read."""
    for path in paths:
        issues: list[ImportIssue] = []
        events = list(records_of(path, issues))
        yield from issues
        if not events:
            continue
        task = next((event for _, event in events if event.get("type") == "task"), {})
        instance = str(task.get("id") or os.path.splitext(os.path.basename(path))[0])
        name = agent or str(task.get("agent") or "steplog")
        make = functools.partial(run_of, [event for _, event in events], name, instance)
        yield Task(path, 1, named(name, instance, make), label=instance, what="a steplog", records=events)


def run_of(events: list[dict[str, Any]], agent: str, instance: str) -> RunFile:
    """One log's events -> one run, built by the shell builder."""
    found = [step for step in map(_step, events) if step is not None]
    if not found:
        raise NothingLogged("no command and no edit: nothing to judge")
    task = next((event for event in events if event.get("type") == "task"), {})
    submitted = next((event.get("diff") for event in events if event.get("type") == "submit"), None)
    return convert(Trajectory(instance=instance, agent=agent, source=NAME, steps=found,
                              submission=submitted if isinstance(submitted, str) else None,
                              statement=str(task.get("statement") or "")))


def _step(event: dict[str, Any]) -> Step | None:
    """A command as a shell step, an edit as the editor's call; anything else is no step."""
    time = event.get("time") if isinstance(event.get("time"), (int, float)) else None
    if event.get("type") == "command":
        code = event.get("exit")
        return Step("", str(event.get("command") or ""), code if isinstance(code, int) else None,
                    str(event.get("output") or ""), time)
    if event.get("type") == "edit":
        arguments = {"command": "str_replace", "path": str(event.get("path") or ""),
                     "old_str": str(event.get("old") or ""), "new_str": str(event.get("new") or "")}
        return editor_step(arguments, "", 0, "The file has been edited.", time)
    return None


class Importer:
    """What the ``procjudge.importers`` entry point names: the recogniser and the reader."""

    name, summary = NAME, SUMMARY
    detect = staticmethod(detect)
    import_files = staticmethod(import_files)


importer = Importer()
__all__ = ["detect", "import_files", "importer", "run_of", "tasks"]
