"""sed, as the agents write it, replayed on the lines known of a file: ``s`` with basic or extended
regular expressions (``&`` and ``\\1`` in the replacement, the ``g``, ``I`` and numbered flags),
``d``, ``i``, ``a``, ``c`` and ``r FILE`` (the lines of a file whose text the log holds), with a
line number, a range or a pattern as the address.

An agent's expression is matched in bounded time (the ``regex`` module's timeout,
``REPLAY_SECONDS`` a line); one that runs past it leaves the edit listed as not rebuilt.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .edits import REGEX_COST, Edit, Views, apply_lines, consecutive

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

    def __init__(self, compiled: Any, error: type[Exception]) -> None:
        self.compiled = compiled
        self.error = error  # the regex module's own (not a subclass of re.error)
        self.pattern: str = compiled.pattern  # the expression as Python reads it

    def search(self, text: str) -> Any:
        try:
            return self.compiled.search(text, timeout=REPLAY_SECONDS)
        except TimeoutError:
            raise ReplayTimeout from None

    def sub(self, replacement: str, text: str, count: int = 0) -> str:
        """The text with the replacement written for each match; ValueError when the replacement
        cannot be written (``\\1`` where the expression has no group: sed refuses it too)."""
        try:
            result: str = self.compiled.sub(replacement, text, count=count, timeout=REPLAY_SECONDS)
        except TimeoutError:
            raise ReplayTimeout from None
        except self.error as error:
            raise ValueError(str(error)) from None
        return result


@functools.lru_cache(maxsize=1024)
def compile_sed(pattern: str, extended: bool, flags: int = 0) -> SedPattern | None:
    """A sed regular expression compiled as Python's ``regex`` reads it (matched in bounded time),
    or None when it cannot be."""
    import regex  # type: ignore[import-untyped]  # the project ships no stubs; SedPattern is its typed face

    try:
        with warnings.catch_warnings():  # a bracket Python would read as a nested set
            warnings.simplefilter("ignore")
            return SedPattern(regex.compile(_bre_to_python(pattern, extended), flags), regex.error)
    except (regex.error, re.error, RecursionError, OverflowError, ValueError):
        return None


_PLAIN_ESCAPES = frozenset("()[]{}?*+-|^$\\.&~# ")  # what re.escape escapes, each then itself
_SPECIAL = frozenset(".^$*+?{}[]|()\\")


@functools.lru_cache(maxsize=1024)
def plain_text(pattern: str, extended: bool) -> str | None:
    """The text a sed expression matches when it is plain text (punctuation escaped or not special
    where it stands), else None. Such an expression matches exactly where ``str.find`` finds its
    text, so it is replaced without a regular expression (most of the agents' substitutions are)."""
    python = _bre_to_python(pattern, extended)
    out = []
    k = 0
    while k < len(python):
        char = python[k]
        if char == "\\":
            if k + 1 >= len(python) or python[k + 1] not in _PLAIN_ESCAPES:
                return None
            out.append(python[k + 1])
            k += 2
            continue
        if char in _SPECIAL:
            return None
        out.append(char)
        k += 1
    return "".join(out) or None


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


# An escape in the text of ``a``, ``i``, ``c`` and in a replacement, as GNU sed reads it: a
# backslash before a newline continues the text on the next line; ``\\xHH`` is that byte
# (``\\x27``, a quote inside a quoted script), ``\\n`` and ``\\t`` a newline and a tab; any
# other character stands for itself.
_TEXT_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|.)", re.DOTALL)


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) == 3:
        return chr(int(code[1:], 16))
    return {"n": "\n", "t": "\t"}.get(code, code)


def _sed_replacement(text: str) -> str:
    """A sed replacement as a Python one: ``&`` is the whole match, ``\\1`` a group."""
    out = []
    k = 0
    while k < len(text):
        char = text[k]
        if char == "\\" and k + 1 < len(text):
            nxt = text[k + 1]
            hexed = _TEXT_ESCAPE.match(text, k) if nxt == "x" else None
            if hexed is not None and len(hexed.group(1)) == 3:  # \x27: the byte, a quote
                out.append(_unescape(hexed).replace("\\", "\\\\"))
                k += 4
                continue
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


# an address, and a range's end: a line number, ``$``, ``/re/``, or (GNU) ``+N``, the N lines after the first
_ADDRESS = re.compile(r"^\s*(\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(\d+|\$|\+\d+|/(?:[^/\\]|\\.)*/))?\s*")


@dataclass
class SedCommand:
    first: str | None  # a line number, ``$`` or ``/re/``; None for every line
    last: str | None
    verb: str  # s, d, i, a, c, r (``text``: the file it reads)
    pattern: str = ""
    replacement: str = ""
    flags: str = ""
    text: str = ""


def parse_sed(script: str) -> list[SedCommand] | None:
    """The commands of a sed script (``s``, ``d``, ``i``, ``a``, ``c``, ``r`` with line-number
    or ``/re/`` addresses), or None when it holds anything else."""
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
            text = _TEXT_ESCAPE.sub(_unescape, text)
            commands.append(SedCommand(first, last, verb, text=text))
            rest = ""
        elif verb == "r":  # the file's name runs to the end of the line, as GNU sed reads it
            name, _, rest = rest[1:].partition("\n")
            if not name.strip():
                return None
            commands.append(SedCommand(first, last, "r", text=name.strip()))
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
    if command.last.startswith("+"):
        return _following(command.first, int(command.last[1:]), numbers, matches)
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


def _following(first: str, count: int, numbers: list[int], matches: Callable[[str, int], bool]) -> list[int] | None:
    """The lines of GNU sed's ``FIRST,+COUNT``: each line FIRST matches and the COUNT lines after it
    (a match inside a range starts no other), or None when one of those lines is not known."""
    selected: list[int] = []
    known = set(numbers)
    end = -1  # the last line of the range being read
    for number in numbers:
        if number <= end:
            continue
        if matches(first, number):
            wanted = range(number, number + count + 1)
            if not all(n in known for n in wanted):
                return None
            selected.extend(wanted)
            end = number + count
    return selected


def sed_edits(views: Views, words: list[str], resolve: Any = None,
              read: Callable[[str], str | None] | None = None) -> tuple[list[Edit], list[tuple[str, str]]]:
    """The edits of ``sed -i`` applied to the known lines of each file; (path, why) for the files
    whose change could not be rebuilt. ``read`` gives the whole text of a file an ``r FILE``
    command reads (its name as the command writes it), None when the log does not hold it."""
    scripts, files, extended = sed_arguments(words)
    commands: list[SedCommand] = []
    for script in scripts:
        parsed = parse_sed(script)
        if parsed is None:
            why = f"its sed script {script[:50]!r} is not rebuilt (only s, d, i, a, c and r)"
            return [], [(resolve(f) if callable(resolve) else f, why) for f in files]
        commands += parsed
    for k, command in enumerate(commands):
        if command.verb == "r":  # the lines of the file it reads, appended after each addressed line
            text = read(command.text) if read is not None else None
            if text is None:
                why = f"its sed script reads {command.text[:60]}, whose text is not in the log"
                return [], [(resolve(f) if callable(resolve) else f, why) for f in files]
            commands[k] = SedCommand(command.first, command.last, "a", text=text.removesuffix("\n"))
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
                if not selected and command.verb in "ia" and command.text and _inserts_at_unseen_line(command, numbers):
                    selected = [int(str(command.first))]  # the line exists (a later one was seen): the text is known
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


def _plain_replacement(target: str, text: str) -> str | None:
    """A Python replacement as the text it writes for a match of ``text``, or None when it holds a
    group or an escape (only the whole match, ``\\g<0>``, is read here)."""
    if "\0" in target:
        return None
    written = target.replace("\\g<0>", "\0")
    return None if "\\" in written else written.replace("\0", text)


def _plain(command: SedCommand, target: str, extended: bool, folded: bool) -> tuple[str, str] | None:
    """(the text matched, the text written) of a substitution that needs no regular expression."""
    text = None if folded else plain_text(command.pattern, extended)
    written = _plain_replacement(target, text) if text is not None else None
    return (text, written) if text is not None and written is not None else None


def _substitute(views: Views, name: str, command: SedCommand, selected: list[int], extended: bool,
                unrecovered: list[tuple[str, str]]) -> list[Edit]:
    count = 0 if "g" in command.flags else 1
    target = _sed_replacement(command.replacement)
    folded = "I" in command.flags or "i" in command.flags
    plain = _plain(command, target, extended, folded)
    regex = None
    if plain is None:
        regex = compile_sed(command.pattern, extended, re.IGNORECASE if folded else 0)
        if regex is None:
            unrecovered.append((name, "a sed pattern that could not be read"))
            return []
    views.spend(len(selected) * REGEX_COST)
    edits = []
    within = views.enclosing_tests(name, selected)
    for number in reversed(selected):
        old = views.lines[name].get(number)
        if old is None:
            continue
        if plain is not None:  # plain text: it matches where str.replace finds it
            new = old.replace(plain[0], plain[1], count or -1)
        elif regex is not None:  # (always, when the text is not plain)
            try:
                new = regex.sub(target, old, count=count)
            except (re.error, IndexError, ValueError):
                continue
        if new != old:
            after = new.split("\n")
            edits.append(Edit(name, (old,), tuple(after), "sed", number, within[number]))
            apply_lines(views, name, number, [old], after)
    return edits[::-1]


def _inserts_at_unseen_line(command: SedCommand, numbers: list[int]) -> bool:
    """Whether a command inserts text before or after one line given by its number that was never
    shown, in a file whose later lines were (so the line exists, and sed writes the text there)."""
    return command.last is None and command.first is not None and command.first.isdigit() \
        and bool(numbers) and 0 < int(command.first) < numbers[-1]


def _line_command(views: Views, name: str, command: SedCommand, selected: list[int]) -> list[Edit]:
    """``d``, ``i``, ``a`` or ``c`` on the selected lines (a run of consecutive lines at a time;
    ``i`` and ``a`` also at a line not shown)."""
    known = views.lines[name]
    runs = consecutive(selected)
    text = command.text.split("\n") if command.text else []
    edits = []
    for run in reversed(runs):
        old = [known[n] for n in run] if command.verb in "dc" else []
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
        apply_lines(views, name, start, before, after)
    return edits[::-1]
