"""Code read from what a submission carries when it is not a whole file that parses.

Real logs often show a submission as a diff hunk or an excerpt. Three readings, from the most to
the least certain, and the cheat shapes say which one they rest on:

1. ``rebuilt``: the submission's diff applied to the last whole program the run carries (a hunk
   whose old lines are not found where it says, nor anywhere else, makes the rebuild fail);
2. ``hunk``: each hunk's new side (context and added lines) parsed as a statement block, dedented,
   with elisions (``...``, ``# ...``, ``…``, ``# rest unchanged``) read as ``pass`` and a block
   cut at either end trimmed until it parses;
3. text patterns, where neither parses (``shapes.text_special_cases``, ``text_tampering``).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence

from ..diffs import HUNK

# A line that stands for code left out: "...", "# ...", "…", "# rest of the function unchanged".
_ELISION = re.compile(r"^\s*(?:\.\.\.|…|#\s*(?:\.\.\.|…).*|#.*\b(?:unchanged|omitted|rest of|as before|existing code)\b.*)\s*$",
                      re.IGNORECASE)
TRIM = 6  # lines dropped at most from either end of a block cut mid-statement
# A first statement no module can begin with: the rest of a compound statement or of an expression
# whose start was cut off (``else:``, ``except ValueError:``, ``and x == y``).
_CONTINUING = re.compile(r"(?:else|elif|except|finally|and|or)(?![\w])")


def _parse(text: str) -> ast.Module | None:
    """The module ``text`` parses to, or None; its warnings (an invalid escape) are the caller's to
    silence: :func:`parse_block` tries many texts under one ``catch_warnings``."""
    if len(text) > 200_000:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _indent(line: str) -> str | None:
    """The spaces and tabs a line starts with, as ``textwrap.dedent`` counts them; None for a line
    of them alone (dedent leaves it empty and it sets no margin)."""
    stripped = line.lstrip(" \t")
    return line[: len(line) - len(stripped)] if stripped else None


def _margin(margin: str | None, indent: str) -> str:
    """The indentation two lines share, as ``textwrap.dedent`` finds it."""
    if margin is None or indent.startswith(margin):
        return indent if margin is None else margin
    if margin.startswith(indent):
        return indent
    return margin[: next((k for k, (a, b) in enumerate(zip(margin, indent, strict=False)) if a != b),
                         min(len(margin), len(indent)))]


def _elided(lines: Sequence[str]) -> list[str]:
    """Elision lines as ``pass`` at their own indentation (an elided body still makes a block)."""
    out = []
    for line in lines:
        if _ELISION.match(line):
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            out.append(line)
    return out


class _Block:
    """The lines of a block read once: each line's indentation and whether it is blank, so that
    each trimmed candidate is dedented without reading its lines again."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.indents = [_indent(line) for line in lines]
        self.blank = [not line.strip() for line in lines]
        # The margin is the indentations' common prefix, whatever their order: that of lines
        # head:end is that of head:pivot with that of pivot:end, each listed once for every head
        # and end a trim can reach (``left[head]``, ``right[end - pivot]``).
        self.pivot = pivot = min(TRIM, len(lines))
        self.left: list[str | None] = [None] * (pivot + 1)
        for k in range(pivot - 1, -1, -1):
            indent = self.indents[k]
            self.left[k] = self.left[k + 1] if indent is None else _margin(self.left[k + 1], indent)
        self.right: list[str | None] = [None]
        for indent in self.indents[pivot:]:
            self.right.append(self.right[-1] if indent is None else _margin(self.right[-1], indent))

    def _common(self, head: int, end: int) -> str | None:
        """The margin of lines ``head:end``."""
        if not head <= self.pivot <= end:
            margin: str | None = None
            for indent in self.indents[head:end]:
                if indent is not None:
                    margin = _margin(margin, indent)
            return margin
        left, right = self.left[head], self.right[end - self.pivot]
        return right if left is None else left if right is None else _margin(left, right)

    def text(self, head: int, end: int) -> str | None:
        """Lines ``head:end`` as :func:`parse_block` tries them (closed when the last opens a body,
        dedented), or None when all are blank or the first statement is still indented (it cannot
        parse)."""
        last = next((k for k in range(end - 1, head - 1, -1) if not self.blank[k]), None)
        if last is None:
            return None
        kept = self.lines[head:end]
        indents = self.indents[head:end]
        opener = self.lines[last]
        margin = self._common(head, end)
        if opener.rstrip().endswith(":"):
            extra = " " * (len(opener) - len(opener.lstrip()) + 4) + "pass"
            kept = [*kept, extra]
            indents = [*indents, _indent(extra)]
            margin = _margin(margin, indents[-1] or "")
        cut = len(margin or "")
        if _cannot_begin(kept, indents, cut):
            return None
        return "\n".join(line[cut:] if indent is not None else "" for line, indent in zip(kept, indents, strict=True))


def cannot_begin(text: str) -> bool:
    """Whether ``text`` surely cannot parse as it is because its first statement is indented (a
    hunk's added lines inside a function; its dedented reading is the one to try) or closes or
    continues what was cut off before it."""
    lines = text.split("\n")
    return _cannot_begin(lines, [_indent(line) for line in lines], 0)


def _cannot_begin(kept: list[str], indents: list[str | None], cut: int) -> bool:
    """Whether the first logical line of a candidate, dedented by ``cut``, is still indented, or
    closes a bracket or continues a statement the cut left out: a module cannot begin so, so it
    cannot parse (most trims of a hunk cut mid-body fail so, and are not worth a parse). Only a sure
    case: blank and comment lines before it, and a first character that begins a statement;
    anything else is left to the parser."""
    for line, indent in zip(kept, indents, strict=True):
        if "\r" in line:  # the parser starts a new line there: not a sure case
            return False
        rest = line.lstrip(" \t")
        if not rest or rest[0] == "#":
            continue
        first = rest[0]
        if first in ")]}" or _CONTINUING.match(rest):  # closes or continues what the cut left out
            return True
        return indent is not None and len(indent) > cut and (first.isalnum() or first in "_\"'([{@")
    return False


# The block parse_block last found, with its tree: the shapes read from that very text next, and
# the tree is not built twice. One tuple, read and replaced whole, so threads may share it.
_LAST_TREE: list[tuple[str, ast.Module | None]] = [("", None)]


def parsed(text: str) -> ast.Module | None:
    """The tree of ``text`` when it is the block :func:`parse_block` last found (parsed there
    already), else None: the caller parses it."""
    last, tree = _LAST_TREE[0]
    return tree if last == text else None


def parse_block(lines: Sequence[str]) -> tuple[str, int] | None:
    """A statement block from lines of code that may be cut at either end: the text that parses
    (dedented, elisions as ``pass``) and how many leading lines were dropped (its line numbers count
    from the first line kept); None when no trimming makes it parse."""
    block = _Block(_elided(lines))
    size = len(block.lines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dropped in range(min(2 * TRIM, size - 1) + 1):  # the fewest lines dropped first
            for head in range(min(dropped, TRIM) + 1):
                tail = dropped - head
                if tail > TRIM:
                    continue
                text = block.text(head, size - tail)
                tree = _parse(text) if text is not None else None
                if tree is not None and text is not None:
                    _LAST_TREE[0] = (text, tree)
                    return text, head
    return None


def new_side(hunk: Sequence[str]) -> tuple[list[str], set[int]]:
    """A hunk's new side: its context and added lines in order, and the (1-based) numbers of the
    added ones among them."""
    lines: list[str] = []
    added: set[int] = set()
    for line in hunk:
        if line.startswith(("@@", "\\")):
            continue
        mark, text = line[:1], line[1:]
        if mark == "-":
            continue
        lines.append(text if mark in ("+", " ") else line)
        if mark == "+":
            added.add(len(lines))
    return lines, added




def apply_hunks(source: str, hunks: Sequence[Sequence[str]]) -> str | None:
    """The file after its diff: each hunk's old side (context and removed lines) replaced by its
    new side, found at the line its header names or, failing that, anywhere after the previous
    hunk; None when a hunk's old lines are not in the file (the diff is of another version)."""
    lines = source.split("\n")
    out: list[str] = []
    at = 0
    for hunk in hunks:
        old = [line[1:] for line in hunk if line[:1] in (" ", "-")]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+")]
        if not old:  # a pure insertion: its header says where
            header = HUNK.match(hunk[0]) if hunk and hunk[0].startswith("@@") else None
            if header is None:
                return None
            # "-10,0": insert after line 10; "-10": the hunk starts at line 10
            where = int(header.group(1)) - (0 if header.group(2) == "0" else 1)
            where = min(max(where, at), len(lines))
            out += lines[at:where] + new
            at = where
            continue
        start = _find(lines, old, at, hunk[0] if hunk and hunk[0].startswith("@@") else "")
        if start is None:
            return None
        out += lines[at:start] + new
        at = start + len(old)
    out += lines[at:]
    return "\n".join(out)


def _find(lines: list[str], old: list[str], after: int, header: str) -> int | None:
    """Where ``old`` begins in ``lines`` at or after ``after``: the header's line first, then the
    nearest match; trailing whitespace is ignored."""
    wanted = [line.rstrip() for line in old]
    match = HUNK.match(header)
    hint = int(match.group(1)) - 1 if match else after
    candidates = [hint] if hint >= after else []
    candidates += sorted(range(after, len(lines) - len(old) + 1), key=lambda k: abs(k - hint))
    for start in candidates:
        if [line.rstrip() for line in lines[start: start + len(old)]] == wanted:
            return start
    return None
