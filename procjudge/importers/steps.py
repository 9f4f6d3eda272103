"""One step of a shell agent's log (a command, or a structured edit or read, and what it printed),
and where the repository lies: what every reader of such logs fills in and :mod:`.shell` judges.

A step reads its own command once: whether it is a test run (and its counts), a build, and which
files it writes. The passes of :func:`procjudge.importers.shell.convert` add what needs the whole
log (whether a test run validated anything, the checks scripts make, the edits rebuilt).
"""

from __future__ import annotations

import os
from typing import Any

from .. import diffs
from ..model import CheckKind
from .checks import Outcome
from .classify import build_command, build_ran_last, test_command, written_files
from .edits import Edit
from .grammar import SHELL_REFUSED, ran_before_refusal
from .test_output import ANSI, parse_counts


def outside_repo(path: str) -> bool:
    return os.path.isabs(path) or path.startswith(("..", "~"))

REPO_ROOTS = ("/testbed", "/repo", "/workspace")
MAX_OUTPUT = 200_000


def diff_files(diff: str) -> dict[str, str]:
    """path -> status of every file a unified diff touches (read by :mod:`procjudge.diffs`)."""
    files: dict[str, str] = {}
    for patch in diffs.read(diff):
        if patch.path:
            files[patch.path] = "created" if patch.created else "deleted" if patch.deleted else "modified"
    return files


def repo_relative(path: str, roots: tuple[str, ...] = REPO_ROOTS) -> tuple[str, bool]:
    """(path relative to the repository, whether it lies outside it)."""
    for root in roots:
        if path == root or path.startswith(root + "/"):
            return path[len(root) + 1:] or ".", False
    if os.path.isabs(path):
        return path, True
    return path.removeprefix("./"), False


def is_scratch(path: str, submitted: dict[str, str] | None) -> bool:
    return outside_repo(path) or (submitted is not None and path not in submitted)


class Step:
    """One action and what it printed, frozen: what it is (a test run, a build, a write) is read
    once, when it is made. ``writes`` overrides what is read from the command (a structured edit
    names its file); ``kind`` is ``"read"`` for a structured read. What later passes learn of it
    (why a run validated nothing, the script it ran as a check, its rebuilt edits, whether it
    changed the code) comes back as a new step: :meth:`but`."""

    __slots__ = (
        "_made",
        "code_edit",
        "command",
        "counts",
        "cut",
        "editor",
        "edits",
        "failed_build",
        "frames",
        "output",
        "probe",
        "probe_code",
        "probe_kind",
        "probe_outcome",
        "returncode",
        "rewritten",
        "set_aside",
        "shell",
        "test",
        "thought",
        "time",
        "unavailable",
        "unrecovered",
        "writes",
    )

    def __init__(self, thought: str, command: str, returncode: int | None, output: str, time: float | None,
                 writes: list[tuple[str, str]] | None = None, kind: str | None = None,
                 editor: dict[str, Any] | None = None, cut: bool = False) -> None:
        object.__setattr__(self, "_made", False)  # open until the last field is set
        if "\x1b" in output:  # colour codes (pytest --color, a tty) would hide the summary lines
            output = ANSI.sub("", output)
        self.output, self.time = output[:MAX_OUTPUT], time
        shell = kind is None
        if shell and returncode in (2, None) and SHELL_REFUSED.search(self.output[:4000]):
            command = ran_before_refusal(command)  # the shell refused the rest: every pass reads what ran
        self.thought, self.command, self.returncode = thought, command, returncode
        self.shell = shell  # a command the agent ran, not a structured edit or read
        self.test = test_command(command) if shell else None
        self.writes = writes if writes is not None else written_files(command) if shell else []
        self.counts = parse_counts(self.output) if self.test else None
        build = build_command(command) if shell and not self.test else None
        # the exit code is the last command's: a build is failed by it only when the build ran last
        self.failed_build = build if build and returncode not in (None, 0) and build_ran_last(command) else None
        self.editor = editor  # a structured edit or view: its command, path and texts (old_str/new_str, ...)
        self.cut = cut  # the harness elided part of the output
        # why a test run validated nothing (the runner is missing, its output was cut or discarded):
        # set by convert, which knows the repository; such a run is neither a check nor a build failure
        self.unavailable: str | None = None
        self.edits: list[Edit] = []  # what the step changed, rebuilt as diff lines (see procjudge.importers.edits)
        self.unrecovered: list[tuple[str, str]] = []  # (path, why) of writes whose change could not be rebuilt
        # a script the agent ran to see whether its code works (procjudge.importers.checks), and what it showed:
        # set by convert, which knows the scripts the agent wrote
        self.probe: str | None = None
        self.probe_outcome: Outcome | None = None
        self.probe_kind: CheckKind = "reproduction"  # inline, reproduction or project_script
        self.probe_code: int | None = None  # the script's own exit status, where the log has it
        self.frames: list[tuple[str, int]] = []  # the repository frames its traceback passed through
        self.code_edit = False  # it changed the code, not only throw-away files (set by convert)
        # a check run while the agent's changes were set aside (``git stash`` ... ``pop``, or its files
        # restored): it shows what the unchanged code does, so it is no check of the agent's code (set by convert)
        self.set_aside = False
        # a script check run after the agent wrote its script again since the check last passed (set by convert)
        self.rewritten = False
        self._made = True

    def __setattr__(self, name: str, value: Any) -> None:
        if self._made:
            raise AttributeError(f"a Step is frozen: step.but({name}=...) makes the step with its {name} changed")
        object.__setattr__(self, name, value)

    def but(self, **changes: Any) -> Step:
        """This step with ``changes`` (a field's new value each), as a new step."""
        odd = changes.keys() - set(Step.__slots__) | ({"_made"} & changes.keys())
        if odd:
            raise TypeError(f"a Step has no field {min(odd)!r}")
        made = Step.__new__(Step)
        for name in Step.__slots__:
            object.__setattr__(made, name, changes[name] if name in changes else getattr(self, name))
        return made

    @property
    def check(self) -> str | None:
        """What this step checked, when it ends an iteration: a test run's suite, a script run, or a
        failed build (not one run with the agent's changes set aside)."""
        if self.unavailable or self.set_aside:
            return None
        return self.test or self.probe or self.failed_build
