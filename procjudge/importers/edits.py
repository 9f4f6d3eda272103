"""What each step of a shell agent changed in a file, rebuilt as diff lines, so that the rules that
read test edits see edits made with ``sed -i``, an editor tool or a script as they see a diff.

The importer keeps what it has seen of each file (:class:`Views`): the lines the agent printed
(``cat``, ``cat -n``, ``nl``, ``grep -n``, ``sed -n``, an editor's numbered view), the lines the
submitted diff shows of the file before and after, and what earlier edits made of them. An edit is
rebuilt from those lines:

- an editor's ``old_str``/``new_str`` replacement (SWE-agent, OpenHands), ``create`` with its text,
  ``insert``; SWE-agent 0.x's ``edit N:M`` ... ``end_of_edit`` on the open file and its
  ``edit 'search' 'replace'``;
- ``sed -i 's/A/B/'`` (basic or ``-E`` regular expressions, ``&`` and ``\\1`` in the replacement, a
  line-number address), applied to the lines known of the file;
- a here-document or ``cat``/``printf``/``echo`` redirected into a file (its whole new text);
- a Python script (``python - <<EOF``, ``python -c``) that calls ``.replace('old', 'new')`` on one
  file's text with string literals.

When the lines an edit changes were never shown, nothing is guessed: the edit is listed in
``unrecovered`` with why, and the importer says so in the run's notes.

Replaying is bounded: an agent's regular expression gets ``REPLAY_SECONDS`` a line, and the lines
a trajectory's edits may search, compare or move in all are ``MAX_REBUILD_WORK``; the edits past
that bound are listed as not rebuilt (:class:`Unrebuilt`), so no log costs more than linear time.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import functools
import re
import shlex
import warnings
from dataclasses import dataclass, field
from typing import Any

MAX_VIEW_LINES = 50_000  # lines kept per file
# Lines the edits of one trajectory may search, compare or move in all: each edit costs the lines of
# its file, so a thousand edits of a 50,000-line file would cost 50 million; the real logs measured
# cost at most (see benchmarks/bench_import_shapes.py) a few hundred thousand.
MAX_REBUILD_WORK = 2_000_000
REGEX_COST = 20  # one line matched by an agent's expression costs about as much as twenty lines moved


class Unrebuilt(Exception):
    """An edit not replayed, and why: the reason is a note of the run (the step's own edits stay
    out of the rebuilt diff, nothing is guessed)."""
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)|^\s*(?:it|test)\(\s*['\"]")


@dataclass
class Edit:
    """One change to one file: the lines removed and added, where the file's lines are numbered
    (``line``: the first removed line, 1-based, when known) and the test it sits in (``within``)."""

    path: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    how: str
    line: int | None = None
    within: str | None = None
    created: bool = False  # the edit made the file (nothing of it was known before)


@dataclass
class Views:
    """What has been seen of each file: line number -> text."""

    lines: dict[str, dict[int, str]] = field(default_factory=dict)
    open_file: str | None = None  # SWE-agent's open file, the target of ``edit N:M``
    work: int = 0  # lines searched, compared or moved by the edits replayed so far

    def spend(self, lines: int) -> None:
        """Charge an edit's cost in lines, before it is made; past ``MAX_REBUILD_WORK`` the edit is
        not replayed."""
        self.work += lines
        if self.work > MAX_REBUILD_WORK:
            raise Unrebuilt(f"not replayed: the log's edits had searched or moved more than "
                            f"{MAX_REBUILD_WORK:,} lines before it")

    def see(self, path: str, numbered: dict[int, str]) -> None:
        if not path or not numbered:
            return
        known = self.lines.setdefault(path, {})
        if len(known) < MAX_VIEW_LINES:
            known.update(numbered)

    def whole(self, path: str, text: str) -> None:
        """The file's whole text is known (it was printed whole, or written whole)."""
        self.lines[path] = {k + 1: line for k, line in enumerate(text.split("\n")[:MAX_VIEW_LINES])}

    def enclosing_test(self, path: str, line: int | None) -> str | None:
        known = self.lines.get(path) or {}
        if line is None:
            return None
        for number in range(line, max(0, line - 400), -1):
            text = known.get(number)
            if text is not None:
                match = _TEST_DEF.match(text)
                if match and match.group(1):
                    return match.group(1)
        return None

    def enclosing_tests(self, path: str, numbers: list[int]) -> dict[int, str | None]:
        """``enclosing_test`` of many lines at once: one pass over the file's known lines."""
        known = self.lines.get(path) or {}
        starts: list[int] = []
        names: list[str] = []
        for number in sorted(known):
            match = _TEST_DEF.match(known[number])
            if match and match.group(1):
                starts.append(number)
                names.append(match.group(1))
        found: dict[int, str | None] = {}
        for number in numbers:
            at = bisect.bisect_right(starts, number) - 1
            found[number] = names[at] if at >= 0 and starts[at] > number - 400 else None
        return found


# --------------------------------------------------------------------------- seeing files


_NUMBERED = re.compile(r"^\s*(\d+)(?:\t|:|\s{1,2}|-)(.*)$")
_PRINTERS = re.compile(r"^(?:cat|nl|head|tail|sed\s+-n|grep|less|more|awk)\b")


def seed_from_diff(views: Views, diff: str) -> None:
    """The lines a unified diff shows of each file before it (context and removed lines), with
    their numbers: what the agent's edits started from."""
    path = ""
    old = 0
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for raw in lines:
        line = raw.rstrip("\r")
        if line.startswith("--- "):
            path = line[4:].strip().removeprefix("a/")
            continue
        if line.startswith("+++ "):
            target = line[4:].strip().removeprefix("b/")
            path = target if path == "/dev/null" else path
            continue
        header = re.match(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", line)
        if header:
            old = int(header.group(1))
            continue
        if not path or old == 0:
            continue
        if line.startswith((" ", "-")) or line == "":
            views.lines.setdefault(path, {}).setdefault(old, line[1:])
            old += 1


def observe(views: Views, command: str, output: str, relative: str | None = None) -> None:
    """Record what a read printed of a file: ``cat FILE`` (the whole text), ``head -n K FILE`` and
    ``sed -n 'A,Bp' FILE`` (lines from a known number), ``cat -n``/``nl`` (also piped into
    ``sed -n``/``head``/``tail``/``grep``) and ``grep -n`` (numbered lines)."""
    read = _read_of(command, output)
    if read is None:
        return
    words, file, numbered_reader = read
    path = relative or file
    if numbered_reader:
        numbered = {}
        for line in output.split("\n"):
            match = _NUMBERED.match(line)
            if match:
                numbered[int(match.group(1))] = match.group(2)
        views.see(path, numbered)
        return
    _plain_read(views, path, words, output[:-1].split("\n") if output.endswith("\n") else output.split("\n"))


def _read_of(command: str, output: str) -> tuple[list[str], str, bool] | None:
    """(the reader's words, the one file it reads, whether it prints numbered lines) of a command
    that only reads one file, alone or piped into line filters; None for anything else."""
    if not output or len(output) > 2_000_000 or "\n" in command.strip() or ">" in command or ";" in command \
            or "&&" in command:
        return None
    stages = [words_of(part) for part in re.split(r"(?<!\|)\|(?!\|)", command)]
    if not stages or not stages[0]:
        return None
    words = stages[0]
    files = [w for w in words[1:] if not w.startswith("-") and ("/" in w or re.search(r"\.\w{1,5}$", w))
             and not re.match(r"^\d+(?:,\d+)?p$", w)]
    if len(files) != 1:
        return None
    head = words[0]
    numbered_reader = head == "nl" or (head == "cat" and "-n" in words) or (head == "grep" and "-n" in words[1:])
    if len(stages) > 1 and (not numbered_reader
                            or not all(stage and stage[0] in ("sed", "head", "tail", "grep") for stage in stages[1:])):
        return None
    return words, files[0], numbered_reader


def _plain_read(views: Views, path: str, words: list[str], lines: list[str]) -> None:
    """A read of plain lines: ``cat FILE`` (the whole text), ``sed -n 'A,Bp'``, ``head``."""
    head = words[0]
    if head == "cat" and len(words) == 2:
        views.whole(path, "\n".join(lines))
    elif head == "sed" and "-n" in words:
        span = next((re.match(r"^(\d+)(?:,(\d+))?p$", w) for w in words if re.match(r"^\d+(?:,\d+)?p$", w)), None)
        if span:
            start = int(span.group(1))
            stop = int(span.group(2) or start)
            if len(lines) <= stop - start + 1:
                views.see(path, {start + k: line for k, line in enumerate(lines)})
    elif head == "head" and len(words) in (2, 3, 4):
        views.see(path, {k + 1: line for k, line in enumerate(lines)})


def observe_window(views: Views, path: str, output: str) -> None:
    """An editor's numbered view (SWE-agent's ``open``: ``12:text``; ``str_replace_editor view``:
    ``    12\\ttext``; Claude Code's ``Read``: ``    12→text``)."""
    numbered = {}
    for line in output.replace("\r\n", "\n").split("\n"):
        match = re.match(r"^\s*(\d+)(?::|\t|\u2192)(.*)$", line)
        if match:
            numbered[int(match.group(1))] = match.group(2)
    views.see(path, numbered)


def words_of(text: str) -> list[str]:
    """A command's words as the shell splits them (plain whitespace when its quotes do not close)."""
    return list(_words(text))


_QUOTING = frozenset("'\"\\")
_BLANKS = re.compile(r"[ \t\r\n]+")  # what shlex splits on


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    """``words_of``, once per text (a command is split by several readers). Text with no quote and
    no backslash splits on whitespace alone, as shlex would split it, without its tokenizer."""
    if _QUOTING.isdisjoint(text):
        return tuple(word for word in _BLANKS.split(text) if word)
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


# --------------------------------------------------------------------------- rebuilding edits


def _hunks(path: str, before: list[str], after: list[str], how: str, views: Views, first_line: int = 1) -> list[Edit]:
    views.spend(len(before) + len(after))
    edits = []
    for a0, a1, b0, b1 in changed_runs(before, after, views.spend):
        line = first_line + a0
        edits.append(Edit(path, tuple(before[a0:a1]), tuple(after[b0:b1]), how, line, views.enclosing_test(path, line)))
    return edits


MAX_DIFF_PAIRS = 1_000_000  # lines compared pairwise at most: a larger change is one hunk


def changed_runs(before: list[str], after: list[str], spend: Any = None) -> list[tuple[int, int, int, int]]:
    """(a0, a1, b0, b1) of each run of lines ``after`` changes in ``before``, as ``difflib``
    finds them. difflib is quadratic on repeated lines, so past ``MAX_DIFF_PAIRS`` lines compared
    pairwise the lines both share at the start and the end are set aside first, and when what
    remains is still larger it is one run: every line of it removed and added, nothing guessed.
    ``spend`` is charged the pairs compared (twenty to a line moved: a pair costs difflib little
    on distinct lines, about a twentieth of a line moved at worst)."""
    head = tail = 0
    a, b = before, after
    if len(a) * len(b) > MAX_DIFF_PAIRS:
        while head < len(before) and head < len(after) and before[head] == after[head]:
            head += 1
        while tail < len(before) - head and tail < len(after) - head and before[-1 - tail] == after[-1 - tail]:
            tail += 1
        a, b = before[head:len(before) - tail], after[head:len(after) - tail]
        if len(a) * len(b) > MAX_DIFF_PAIRS:
            return [(head, head + len(a), head, head + len(b))] if a or b else []
    if spend is not None:
        spend(len(a) * len(b) // 20)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return [(head + a0, head + a1, head + b0, head + b1)
            for tag, a0, a1, b0, b1 in matcher.get_opcodes() if tag != "equal"]


def replace_text(views: Views, path: str, old: str, new: str, how: str) -> list[Edit]:
    """An exact text replacement (an editor's old_str/new_str, a script's str.replace)."""
    known = views.lines.get(path)
    if known:
        views.spend(len(known))
        # the first run of consecutive known lines that holds the old text
        for run in consecutive(sorted(known)):
            text = "\n".join(known[n] for n in run)
            at = text.find(old) if old else -1
            if at >= 0:  # only the lines the old text spans are compared: a small diff in a large file
                first = text.count("\n", 0, at)
                last = first + old.count("\n")
                before = [known[n] for n in run[first:last + 1]]
                after = "\n".join(before).replace(old, new, 1).split("\n")
                edits = _hunks(path, before, after, how, views, run[first])
                _apply(views, path, run[first], before, after)
                return edits
    old_lines, new_lines = old.split("\n"), new.split("\n")
    return [Edit(path, tuple(old_lines), tuple(new_lines), how, None, None)]


def consecutive(numbers: list[int]) -> list[list[int]]:
    """Sorted line numbers cut into runs of consecutive ones."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return runs


def _apply(views: Views, path: str, start: int, before: list[str], after: list[str]) -> None:
    """Update the view after an edit that replaced ``before`` (from line ``start``) by ``after``."""
    known = views.lines.setdefault(path, {})
    shift = len(after) - len(before)
    if not shift:  # the same number of lines: only those change (a sed substitution, most replacements)
        known.update({start + k: line for k, line in enumerate(after)})
        return
    views.spend(len(known))
    stop = start + len(before)
    moved = {(n + shift if n >= stop else n): t for n, t in known.items() if not start <= n < stop}
    moved.update({start + k: line for k, line in enumerate(after)})
    views.lines[path] = moved


def line_edit(views: Views, path: str, first: int, last: int, text: str, how: str) -> tuple[list[Edit], str | None]:
    """Lines ``first``..``last`` replaced by ``text`` (SWE-agent's ``edit N:M``)."""
    known = views.lines.get(path) or {}
    new = text.split("\n") if text else []
    if last - first >= max(len(known), 1) + MAX_UNSEEN_LINES or first < 0:
        return [], f"`edit {first}:{last}` spans more lines than the file was ever shown to have"
    old = [known.get(n) for n in range(first, last + 1)]
    if any(line is None for line in old):
        _apply(views, path, first, [""] * (last - first + 1), new)
        return [], f"`edit {first}:{last}` on lines never shown"
    before = [line for line in old if line is not None]
    edits = _hunks(path, before, new, how, views, first)
    _apply(views, path, first, before, new)
    return edits, None


MAX_UNSEEN_LINES = 10_000  # lines an edit may name past those the log showed of its file


def write_whole(views: Views, path: str, text: str, how: str) -> list[Edit]:
    """A file written whole (created, or overwritten by a redirection or an editor's create)."""
    known = views.lines.get(path)
    after = text.split("\n")
    if after and after[-1] == "":
        after.pop()
    if known and sorted(known) == list(range(1, len(known) + 1)):
        before = [known[n] for n in sorted(known)]
        edits = _hunks(path, before, after, how, views)
    else:
        edits = [Edit(path, (), tuple(after), how, 1, None, created=not known)] if after else []
    views.whole(path, "\n".join(after))
    return edits


# --------------------------------------------------------------------------- sed


_BRE_SPECIAL = {"\\(": "(", "\\)": ")", "\\{": "{", "\\}": "}", "\\+": "+", "\\?": "?", "\\|": "|"}


_POSIX_CLASSES = {"[:space:]": r"\s", "[:digit:]": r"\d", "[:alpha:]": "a-zA-Z", "[:alnum:]": "a-zA-Z0-9",
                  "[:upper:]": "A-Z", "[:lower:]": "a-z", "[:blank:]": " \t", "[:punct:]": r"!-/:-@\[-`{-~",
                  "[:xdigit:]": "0-9a-fA-F"}


# How long one match or substitution of an agent's expression may take: an expression such as
# `(a+)+$` on a line of forty a's backtracks for hours in a backtracking engine.
REPLAY_SECONDS = 0.05


class ReplayTimeout(Exception):
    """An agent's regular expression that did not finish in ``REPLAY_SECONDS``: the edit it makes is
    listed as not rebuilt."""


class SedPattern:
    """An agent's sed expression, matched in bounded time (the ``regex`` module's timeout)."""

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.pattern: str = compiled.pattern  # the expression as Python reads it

    def search(self, text: str) -> Any:
        try:
            return self.compiled.search(text, timeout=REPLAY_SECONDS)
        except TimeoutError:
            raise ReplayTimeout from None

    def sub(self, replacement: str, text: str, count: int = 0) -> str:
        try:
            result: str = self.compiled.sub(replacement, text, count=count, timeout=REPLAY_SECONDS)
        except TimeoutError:
            raise ReplayTimeout from None
        return result


@functools.lru_cache(maxsize=1024)
def compile_sed(pattern: str, extended: bool, flags: int = 0) -> SedPattern | None:
    """A sed regular expression compiled as Python's ``regex`` reads it (matched in bounded time),
    or None when it cannot be."""
    import regex  # type: ignore[import-untyped]  # the project ships no stubs; SedPattern is its typed face

    try:
        with warnings.catch_warnings():  # a bracket Python would read as a nested set
            warnings.simplefilter("ignore")
            return SedPattern(regex.compile(_bre_to_python(pattern, extended), flags))
    except (regex.error, re.error, RecursionError, OverflowError, ValueError):
        return None


def _bre_to_python(pattern: str, extended: bool) -> str:
    """A sed regular expression as a Python one (GNU basic or extended syntax, POSIX classes)."""
    for name, replacement in _POSIX_CLASSES.items():
        pattern = pattern.replace(name, replacement)
    out = []
    k = 0
    while k < len(pattern):
        char = pattern[k]
        if char == "\\" and k + 1 < len(pattern):
            pair = pattern[k:k + 2]
            if not extended and pair in _BRE_SPECIAL:
                out.append(_BRE_SPECIAL[pair])
            elif pair[1] in "nt" or pair[1].isdigit():
                out.append(pair)
            else:
                out.append(re.escape(pair[1]) if not pair[1].isalnum() else pair)
            k += 2
            continue
        if not extended and char in "(){}+?|":
            out.append(re.escape(char))
        elif not extended and char == "$" and k != len(pattern) - 1 and not pattern.startswith("\\)", k + 1):
            out.append(r"\$")  # in a basic expression $ anchors only at the end
        elif not extended and char == "^" and k != 0 and not pattern.endswith("\\(", 0, k):
            out.append(r"\^")  # and ^ only at the start
        else:
            out.append(char)
        k += 1
    return "".join(out)


def _sed_replacement(text: str) -> str:
    """A sed replacement as a Python one: ``&`` is the whole match, ``\\1`` a group."""
    out = []
    k = 0
    while k < len(text):
        char = text[k]
        if char == "\\" and k + 1 < len(text):
            nxt = text[k + 1]
            out.append("\\g<" + nxt + ">" if nxt.isdigit() else "\n" if nxt == "n" else "\t" if nxt == "t"
                       else nxt.replace("\\", "\\\\"))
            k += 2
            continue
        out.append("\\g<0>" if char == "&" else char.replace("\\", "\\\\"))
        k += 1
    return "".join(out)


def _split_s(script: str) -> tuple[str, str, str, int] | None:
    """(pattern, replacement, flags, characters read) of the ``s/A/B/flags`` at the start of
    ``script`` (after the ``s``'s address), or None."""
    if len(script) < 2 or script[0] != "s":
        return None
    delimiter = script[1]
    parts: list[str] = []
    current: list[str] = []
    k = 2
    while k < len(script) and len(parts) < 3:
        char = script[k]
        if char == "\\" and k + 1 < len(script):
            if script[k + 1] == delimiter:
                current.append(delimiter if delimiter not in "/|#,:@!%" else "\\" + delimiter)
            else:
                current.append(script[k:k + 2])
            k += 2
            continue
        if char == delimiter and len(parts) < 2:
            parts.append("".join(current))
            current = []
        elif len(parts) == 2 and char in ";\n}":
            break
        else:
            current.append(char)
        k += 1
    if len(parts) < 2:
        return None
    flags = "".join(current).strip()
    if not re.fullmatch(r"[gIip0-9]*", flags):
        return None
    return parts[0], parts[1], flags, k


_ADDRESS = re.compile(r"^\s*(\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(\d+|\$|/(?:[^/\\]|\\.)*/))?\s*")


@dataclass
class SedCommand:
    first: str | None  # a line number, ``$`` or ``/re/``; None for every line
    last: str | None
    verb: str  # s, d, i, a, c
    pattern: str = ""
    replacement: str = ""
    flags: str = ""
    text: str = ""


def parse_sed(script: str) -> list[SedCommand] | None:
    """The commands of a sed script (``s``, ``d``, ``i``, ``a``, ``c`` with line-number or
    ``/re/`` addresses), or None when it holds anything else."""
    commands: list[SedCommand] = []
    rest = script
    while rest.strip():
        rest = rest.lstrip(" \t\n;")
        if not rest:
            break
        address = _ADDRESS.match(rest)
        first = last = None
        if address and address.group(0).strip():
            first, last = address.group(1), address.group(2)
            rest = rest[address.end():]
        if not rest:
            return None
        verb = rest[0]
        if verb == "s":
            parsed = _split_s(rest)
            if parsed is None:
                return None
            pattern, replacement, flags, used = parsed
            commands.append(SedCommand(first, last, "s", pattern, replacement, flags))
            rest = rest[used:]
        elif verb == "d":
            commands.append(SedCommand(first, last, "d"))
            rest = rest[1:]
        elif verb in "iac":
            text = rest[1:]
            text = text[1:] if text.startswith("\\") else text.lstrip(" ")
            text = text.lstrip("\n") if text.startswith("\n") else text
            text = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)
            commands.append(SedCommand(first, last, verb, text=text))
            rest = ""
        else:
            return None
    return commands


def _addressed(command: SedCommand, numbers: list[int], known: dict[int, str], extended: bool) -> list[int] | None:
    """The known line numbers a command applies to, or None when its range is not all known."""
    def matches(address: str, number: int) -> bool:
        if address == "$":
            return number == numbers[-1]
        if address.startswith("/"):
            regex = compile_sed(address[1:-1], extended)
            return regex is not None and regex.search(known[number]) is not None
        return number == int(address)

    if command.first is None:
        return numbers
    if command.last is None:
        return [n for n in numbers if matches(command.first, n)]
    if command.first.isdigit() and command.last.isdigit():
        first, last = int(command.first), int(command.last)
        if last - first >= len(known):  # more lines than were ever shown (`1,99999999999d`): not all known
            return None
        wanted = list(range(first, last + 1))
        return wanted if all(n in known for n in wanted) else None
    selected, inside = [], False
    for number in numbers:
        if not inside and matches(command.first, number):
            inside = True
            selected.append(number)
            continue
        if inside:
            selected.append(number)
            if command.last.isdigit() and number >= int(command.last) or not command.last.isdigit() and matches(command.last,
                                                                                                                number):
                inside = False
    return selected


def sed_edits(views: Views, words: list[str], resolve: Any = None) -> tuple[list[Edit], list[tuple[str, str]]]:
    """The edits of ``sed -i`` applied to the known lines of each file; (path, why) for the files
    whose change could not be rebuilt."""
    scripts, files, extended = sed_arguments(words)
    commands: list[SedCommand] = []
    for script in scripts:
        parsed = parse_sed(script)
        if parsed is None:
            why = f"its sed script {script[:50]!r} is not rebuilt (only s, d, i, a and c)"
            return [], [(resolve(f) if callable(resolve) else f, why) for f in files]
        commands += parsed
    edits: list[Edit] = []
    unrecovered: list[tuple[str, str]] = []
    for path in files:
        name = resolve(path) if callable(resolve) else path
        if not views.lines.get(name):
            unrecovered.append((name, "`sed -i` on lines never shown"))
            continue
        before = len(edits)
        try:
            for command in commands:
                known = views.lines[name]
                regex_address = any(a and a.startswith("/") for a in (command.first, command.last))
                views.spend(len(known) * (REGEX_COST if regex_address else 1))
                numbers = sorted(known)
                selected = _addressed(command, numbers, known, extended)
                if selected is None:
                    unrecovered.append((name, "`sed -i` on lines never shown"))
                    continue
                if command.verb == "s":
                    edits += _substitute(views, name, command, selected, extended, unrecovered)
                elif selected:
                    edits += _line_command(views, name, command, selected)
        except ReplayTimeout:
            del edits[before:]
            unrecovered.append((name, f"its sed expression took longer than {REPLAY_SECONDS:g} s a line to replay"))
            continue
        if len(edits) == before and not any(p == name for p, _ in unrecovered):
            unrecovered.append((name, "`sed -i` matched none of the lines shown"))
    return edits, unrecovered


def sed_arguments(words: list[str]) -> tuple[list[str], list[str], bool]:
    """(the scripts, the files, whether expressions are extended) of a ``sed`` command line."""
    scripts: list[str] = []
    files: list[str] = []
    extended = False
    expect_script = False
    for word in words[1:]:
        if expect_script:
            scripts.append(word)
            expect_script = False
        elif word in ("-e", "--expression"):
            expect_script = True
        elif word in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif word.startswith("-") and not word.startswith("--"):
            extended = extended or "E" in word[1:] or "r" in word[1:]
            if word.endswith("e") and len(word) > 2 and "i" in word:
                expect_script = True
        elif word.startswith("--"):
            pass
        elif not scripts:
            scripts.append(word)
        else:
            files.append(word)
    return scripts, files, extended


def _substitute(views: Views, name: str, command: SedCommand, selected: list[int], extended: bool,
                unrecovered: list[tuple[str, str]]) -> list[Edit]:
    regex = compile_sed(command.pattern, extended, re.IGNORECASE if "I" in command.flags or "i" in command.flags else 0)
    if regex is None:
        unrecovered.append((name, "a sed pattern that could not be read"))
        return []
    count = 0 if "g" in command.flags else 1
    target = _sed_replacement(command.replacement)
    views.spend(len(selected) * REGEX_COST)
    edits = []
    within = views.enclosing_tests(name, selected)
    for number in reversed(selected):
        old = views.lines[name].get(number)
        if old is None:
            continue
        try:
            new = regex.sub(target, old, count=count)
        except (re.error, IndexError, ValueError):
            continue
        if new != old:
            after = new.split("\n")
            edits.append(Edit(name, (old,), tuple(after), "sed", number, within[number]))
            _apply(views, name, number, [old], after)
    return edits[::-1]


def _line_command(views: Views, name: str, command: SedCommand, selected: list[int]) -> list[Edit]:
    """``d``, ``i``, ``a`` or ``c`` on the selected lines (a run of consecutive lines at a time)."""
    known = views.lines[name]
    runs = consecutive(selected)
    text = command.text.split("\n") if command.text else []
    edits = []
    for run in reversed(runs):
        old = [known[n] for n in run]
        if command.verb == "d":
            start, before, after = run[0], old, []
        elif command.verb == "c":
            start, before, after = run[0], old, text
        elif command.verb == "i":
            start, before, after = run[0], [], text
        else:
            start, before, after = run[-1] + 1, [], text
        if command.verb in "ia" and len(run) > 1:
            continue  # one insertion per addressed line: rebuilt only for a single line
        edits.append(Edit(name, tuple(before), tuple(after), "sed", start, views.enclosing_test(name, start)))
        _apply(views, name, start, before, after)
    return edits[::-1]


# --------------------------------------------------------------------------- scripts


def script_replacements(script: str) -> list[tuple[str, str]]:
    """(old, new) of every ``.replace('old', 'new')`` call on string literals in a Python script."""
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
                and len(node.args) >= 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:2])):
            old, new = node.args[0].value, node.args[1].value  # type: ignore[attr-defined]
            found.append((old, new))
    return found


_HEREDOC_OPENER = re.compile(r"(?<!<)<<(?!<)(-?)\s*['\"]?(\w+)['\"]?")
_HEREDOC_END = re.compile(r"(\t*)(\w+)[ \t]*")


def heredoc_bodies(command: str) -> list[tuple[str, str]]:
    """(the line that opens it, body) of every here-document of a command: the body runs to the
    first later line that is its delimiter alone (after tabs, for ``<<-``); an opener that never
    closes opens nothing. Where a line opens several, the last one that closes is read. One pass
    over the lines, a binary search per opener: linear in the command's length."""
    lines = command.split("\n")
    ends: dict[tuple[str, bool], list[int]] = {}  # (delimiter, after tabs) -> the lines that end it
    for number, line in enumerate(lines):
        end = _HEREDOC_END.fullmatch(line)
        if end:
            ends.setdefault((end.group(2), True), []).append(number)
            if not end.group(1):
                ends.setdefault((end.group(2), False), []).append(number)
    found = []
    number = 0
    while number < len(lines):
        line = lines[number]
        if "<<" in line:
            for opener in reversed(list(_HEREDOC_OPENER.finditer(line))):
                closing = ends.get((opener.group(2), opener.group(1) == "-"), [])
                at = bisect.bisect_right(closing, number)
                if at < len(closing):
                    found.append((line, "\n".join(lines[number + 1:closing[at]])))
                    number = closing[at]
                    break
        number += 1
    return found


def diff_edits(views: Views, text: str, resolve: Any = None) -> list[Edit]:
    """The edits a unified diff applies (``git apply``, ``patch``): one per hunk's run of removed
    and added lines, at the line its header gives; the views follow them."""
    edits: list[Edit] = []
    path, created, old_line = "", False, 0
    removed: list[str] = []
    added: list[str] = []
    start = 0

    def flush() -> None:
        nonlocal removed, added
        if path and (removed or added):
            name = resolve(path) if callable(resolve) else path
            edits.append(Edit(name, tuple(removed), tuple(added), "patch", start or None,
                              views.enclosing_test(name, start or None), created=created))
            _apply(views, name, start or 1, list(removed), list(added))
        removed, added = [], []

    for line in text.split("\n"):
        if line.startswith("--- "):
            flush()
            created = line[4:].strip() == "/dev/null"
            continue
        if line.startswith("+++ "):
            path = line[4:].strip().split("\t")[0].removeprefix("b/")
            continue
        header = re.match(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", line)
        if header:
            flush()
            old_line = int(header.group(1))
            start = old_line
            continue
        if not path or not old_line:
            continue
        if line.startswith("-"):
            if not removed and not added:
                start = old_line
            removed.append(line[1:])
            old_line += 1
        elif line.startswith("+"):
            if not removed and not added:
                start = old_line
            added.append(line[1:])
        else:
            flush()
            old_line += 1
    flush()
    return edits


def render(edits: list[Edit]) -> str:
    """The edits as a unified diff, one hunk each (line numbers where known; the enclosing test on
    the hunk header, as git writes the enclosing function)."""
    out = []
    for edit in edits:
        line = edit.line or 1
        out.append(f"--- {'/dev/null' if edit.created else 'a/' + edit.path}\n+++ b/{edit.path}")
        header = f"@@ -{line},{len(edit.removed)} +{line},{len(edit.added)} @@"
        if edit.within:
            header += f" def {edit.within}("
        out.append(header)
        out += ["-" + text for text in edit.removed]
        out += ["+" + text for text in edit.added]
    return "\n".join(out) + ("\n" if out else "")
