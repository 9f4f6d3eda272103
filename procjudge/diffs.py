"""Unified diffs read one way, with one rule for the path a header names: what the importers and the
judging core read a submitted diff, a patch an agent applied or a commit it showed with.

- **Files.** A file's diff starts at a ``--- `` header followed by a ``+++ `` header, or at git's
  ``diff --git a/X b/Y`` line (whose ``new file mode``, ``deleted file mode`` and ``rename``
  lines are read, and whose paths stand when no ``---``/``+++`` pair follows: a pure rename or a
  mode change).
- **The path rule** (:func:`header_path`): the text after the marker up to a tab (``diff -u``
  writes the file's time there), git's quotes removed, git's ``a/`` or ``b/`` prefix removed;
  ``/dev/null`` names no file (the file is created or deleted).
- **Hunks.** A hunk's body is read by its header's counts (``@@ -12,3 +12,4 @@``), so a removed
  line ``-- comment`` (``--- comment``) or an added ``++i;`` (``+++i;``) is a line of the body,
  never a header. Where an agent wrote the counts short, the lines after them that still start
  with a space, ``+`` or ``-`` (and begin no header) are kept in the hunk; a line that starts with
  none of them ends it. An empty line in a hunk is context that lost its space.

The reading is linear in the text and never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")  # a hunk's header: old start, count, new start, count
_GIT = re.compile(r'^diff --git (?:"a/(.+)"|a/(\S+)) (?:"b/(.+)"|b/(\S+))\s*$')


def in_header_pair(lines: list[str], k: int) -> bool:
    """Whether ``lines[k]`` is one of a ``--- ``/``+++ `` header pair (a lone one is a hunk's line:
    an added ``++i;``, a removed ``-- comment``)."""
    line = lines[k]
    return (line.startswith("--- ") and k + 1 < len(lines) and lines[k + 1].startswith("+++ ")
            or line.startswith("+++ ") and k > 0 and lines[k - 1].startswith("--- "))


def header_path(line: str) -> str:
    """The path a ``--- `` or ``+++ `` header names ('' for ``/dev/null``): the text after the
    marker up to a tab, unquoted, without git's ``a/`` or ``b/``."""
    text = line[4:].split("\t", 1)[0].strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    if text == "/dev/null":
        return ""
    return text[2:] if text.startswith(("a/", "b/")) else text


@dataclass
class Hunk:
    """One hunk: its header's numbers and its body's lines as written (a space, ``+``, ``-`` or
    ``\\`` first; an empty line is context)."""

    old_start: int
    new_start: int
    lines: list[str] = field(default_factory=list)

    @property
    def added(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] == "+"]

    @property
    def removed(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] == "-"]


@dataclass
class FilePatch:
    """One file's diff: the paths its headers name ('' for ``/dev/null``) and its hunks."""

    old_path: str = ""
    new_path: str = ""
    hunks: list[Hunk] = field(default_factory=list)
    created: bool = False  # ``--- /dev/null``, or git's ``new file mode``
    deleted: bool = False  # ``+++ /dev/null``, or git's ``deleted file mode``
    headers: bool = False  # its ``---``/``+++`` pair was read

    @property
    def path(self) -> str:
        """The file the diff leaves: the new path, the old one for a deletion."""
        return self.new_path or self.old_path

    @property
    def added(self) -> list[str]:
        return [line for hunk in self.hunks for line in hunk.added]

    @property
    def removed(self) -> list[str]:
        return [line for hunk in self.hunks for line in hunk.removed]


def read(text: str) -> list[FilePatch]:
    """Every file of a unified diff, in order (see the module's text for the rules)."""
    files: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    old_left = new_left = 0
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    for k, line in enumerate(lines):
        if hunk is not None and (old_left > 0 or new_left > 0):
            mark = line[:1] if line != "\r" else ""  # a blank line of a CRLF diff is context too
            if mark in (" ", ""):
                old_left, new_left = old_left - 1, new_left - 1
            elif mark == "-":
                old_left -= 1
            elif mark == "+":
                new_left -= 1
            elif mark != "\\":
                hunk = None  # the counts were long: the hunk ends here and the line is read afresh
            if hunk is not None:
                hunk.lines.append(line)
                continue
        pair = line.startswith("--- ") and in_header_pair(lines, k)
        if hunk is not None and line[:1] in (" ", "+", "-", "\\") and not pair and not line.startswith("diff --git "):
            hunk.lines.append(line)  # past the counts an agent wrote short: still the hunk's
            continue
        hunk = None
        if line.startswith("diff --git "):
            current = FilePatch()
            files.append(current)
            git = _GIT.match(line)
            if git:
                current.old_path = git.group(1) or git.group(2) or ""
                current.new_path = git.group(3) or git.group(4) or ""
        elif pair or (line.startswith("+++ ") and in_header_pair(lines, k) and current is not None
                      and not current.headers and not current.hunks):
            if line.startswith("--- "):
                if current is None or current.headers or current.hunks:
                    current = FilePatch()
                    files.append(current)
                current.old_path = header_path(line)
                current.created = current.created or current.old_path == ""
            elif current is not None:
                current.new_path = header_path(line)
                current.deleted = current.deleted or current.new_path == ""
                current.headers = True
        elif current is not None and not current.hunks and line.startswith(("new file mode", "deleted file mode",
                                                                               "rename from ", "rename to ")):
            if line.startswith("new file mode"):
                current.created = True
            elif line.startswith("deleted file mode"):
                current.deleted = True
            elif line.startswith("rename from "):
                current.old_path = line[len("rename from "):].strip()
            else:
                current.new_path = line[len("rename to "):].strip()
        else:
            header = HUNK.match(line)
            if header:
                if current is None:
                    current = FilePatch()
                    files.append(current)
                hunk = Hunk(int(header.group(1)), int(header.group(3)))
                current.hunks.append(hunk)
                old_left = int(header.group(2)) if header.group(2) is not None else 1
                new_left = int(header.group(4)) if header.group(4) is not None else 1
    return files
