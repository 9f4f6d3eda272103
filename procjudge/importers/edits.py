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
  line-number address), applied to the lines known of the file (the emulator is :mod:`.sed`);
- a here-document or ``cat``/``printf``/``echo`` redirected into a file (its whole new text);
- a Python script (``python - <<EOF``, ``python -c``) that calls ``.replace('old', 'new')`` on one
  file's text with string literals.

When the lines an edit changes were never shown, nothing is guessed: the edit is listed in
``unrecovered`` with why, and the importer says so in the run's notes.

Replaying is bounded: an agent's regular expression gets ``sed.REPLAY_SECONDS`` a line, and the lines
a trajectory's edits may search, compare or move in all are ``MAX_REBUILD_WORK``; the edits past
that bound are listed as not rebuilt (:class:`Unrebuilt`), so no log costs more than linear time.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from .. import diffs

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

    def seen_whole(self, path: str) -> list[str] | None:
        """A file's lines when every one from the first was seen (printed or written whole), else None."""
        known = self.lines.get(path)
        if not known or sorted(known) != list(range(1, len(known) + 1)):
            return None
        return [known[n] for n in sorted(known)]

    def enclosing_test(self, path: str, line: int | None) -> str | None:
        known = self.lines.get(path) or {}
        if line is None:
            return None
        for number in range(line, max(0, line - 400), -1):
            text = known.get(number)
            if text is not None and "test" in text and "def" in text:  # a named test's line holds both
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
            text = known[number]
            if "test" not in text or "def" not in text:  # a named test's line holds both
                continue
            match = _TEST_DEF.match(text)
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
    for patch in diffs.read(diff):
        path = patch.old_path or patch.new_path
        if not path:
            continue
        for hunk in patch.hunks:
            old = hunk.old_start
            if old == 0:
                continue
            for raw in hunk.lines:
                line = raw.rstrip("\r")
                if line.startswith((" ", "-")) or line == "":
                    views.lines.setdefault(path, {}).setdefault(old, line[1:])
                    old += 1


def observe(views: Views, command: str, output: str, relative: str | None = None, cut: bool = False) -> None:
    """Record what a read printed of a file: ``cat FILE`` (the whole text), ``head -n K FILE`` and
    ``sed -n 'A,Bp' FILE`` (lines from a known number), ``cat -n``/``nl`` (also piped into
    ``sed -n``/``head``/``tail``/``grep``) and ``grep -n`` (numbered lines). Where the harness
    ``cut`` the output (mini-swe-agent's head and tail of a long one, the middle elided), plain
    lines have no known number past the cut, so only numbered lines are read."""
    read = _read_of(command, output)
    if read is None:
        return
    words, file, numbered_reader = read
    path = relative or file
    if cut and not numbered_reader:
        return
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
        return tuple(_split(text))
    except ValueError:
        return tuple(text.split())


# A piece of a POSIX shell word as shlex.split reads it: plain characters, a single-quoted string,
# a double-quoted string, an escaped character; or the blanks between words.
_PIECE = re.compile(r"""([^ \t\r\n'"\\]+)|'([^']*)'|"((?:[^"\\]|\\[\s\S])*)"|\\([\s\S])|([ \t\r\n]+)""")
_IN_DOUBLE = re.compile(r"\\([\s\S])")


def _unescaped(match: re.Match[str]) -> str:
    return match.group(1) if match.group(1) in '"\\' else match.group(0)  # only these two are escaped there


def _split(text: str) -> list[str]:
    """``shlex.split(text)``, word for word, in one regular expression's pass instead of its
    character-by-character lexer; ValueError where shlex raises it (a quote that does not close, a
    backslash at the end)."""
    words: list[str] = []
    word: str | None = None
    at = 0
    while at < len(text):
        piece = _PIECE.match(text, at)
        if piece is None:
            raise ValueError("No closing quotation" if text[at] in "'\"" else "No escaped character")
        plain, single, double, escaped, blanks = piece.groups()
        if blanks is not None:
            if word is not None:
                words.append(word)
            word = None
        else:
            if double is not None and "\\" in double:
                double = _IN_DOUBLE.sub(_unescaped, double)
            word = (word or "") + next(part for part in (plain, single, double, escaped) if part is not None)
        at = piece.end()
    if word is not None:
        words.append(word)
    return words


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
                apply_lines(views, path, run[first], before, after)
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


def apply_lines(views: Views, path: str, start: int, before: list[str], after: list[str]) -> None:
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
        apply_lines(views, path, first, [""] * (last - first + 1), new)
        return [], f"`edit {first}:{last}` on lines never shown"
    before = [line for line in old if line is not None]
    edits = _hunks(path, before, new, how, views, first)
    apply_lines(views, path, first, before, new)
    return edits, None


MAX_UNSEEN_LINES = 10_000  # lines an edit may name past those the log showed of its file


# What printf's format and %b arguments read after a backslash (POSIX); any other escape (octal, \c,
# \x) leaves the text not rebuilt.
_PRINTF_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "a": "\a", "r": "\r", "b": "\b", "f": "\f",
                   "v": "\v"}
_CONVERSION = re.compile(r"%(%|s|b|d|i)")


def printed_text(words: list[str]) -> str | None:
    """The text an ``echo`` or ``printf`` command prints (its words as the shell splits them,
    redirections left out), or None when the shell that ran it decides: ``echo`` with a backslash
    or ``-e`` prints differently in bash and in dash (``sh``), and ``printf`` is read for its
    POSIX escapes and ``%s``, ``%b``, ``%d``, ``%%`` only (the format reused while arguments
    remain, as printf does)."""
    head, args = words[0], list(words[1:])
    if head == "echo":
        newline = True
        if args and args[0] == "-n":
            newline, args = False, args[1:]
        text = " ".join(args)
        if "\\" in text or (args and re.fullmatch(r"-[neE]+", args[0])):
            return None
        return text + ("\n" if newline else "")
    if head != "printf" or not args or args[0].startswith("-"):
        return None
    form, values = args[0], args[1:]
    out: list[str] = []
    while True:
        piece = _printf_once(form, values)
        if piece is None:
            return None
        text, used = piece
        out.append(text)
        values = values[used:]
        if not values or not used:
            return "".join(out)


def _printf_once(form: str, values: list[str]) -> tuple[str, int] | None:
    """One pass of printf's format over its arguments: the text and how many arguments it used."""
    out: list[str] = []
    used = k = 0
    while k < len(form):
        char = form[k]
        if char == "\\":
            escaped = _PRINTF_ESCAPES.get(form[k + 1:k + 2])
            if escaped is None:
                return None
            out.append(escaped)
            k += 2
        elif char == "%":
            conversion = _CONVERSION.match(form, k)
            if conversion is None:
                return None
            kind = conversion.group(1)
            if kind == "%":
                out.append("%")
            else:
                value = values[used] if used < len(values) else ""
                used += 1
                if kind in "di":
                    if value and not re.fullmatch(r"[+-]?\d+", value):
                        return None
                    value = str(int(value or "0"))
                elif kind == "b":
                    unescaped = _printf_once(value.replace("%", "%%"), [])
                    if unescaped is None:
                        return None
                    value = unescaped[0]
                out.append(value)
            k = conversion.end()
        else:
            out.append(char)
            k += 1
    return "".join(out), used


def append_text(path: str, text: str, how: str) -> list[Edit]:
    """Lines added at a file's end (``cat <<'EOF' >> tests/test_x.py``): what was seen of the file
    need not reach its end, so the edit sits at no known line and the view is left as it is."""
    added = text.split("\n")
    if added and added[-1] == "":
        added.pop()
    return [Edit(path, (), tuple(added), how, None, None)] if added else []


def write_whole(views: Views, path: str, text: str, how: str) -> list[Edit]:
    """A file written whole (created, or overwritten by a redirection or an editor's create)."""
    after = text.split("\n")
    if after and after[-1] == "":
        after.pop()
    before = views.seen_whole(path)
    if before is not None:
        edits = _hunks(path, before, after, how, views)
    else:
        edits = [Edit(path, (), tuple(after), how, 1, None, created=not views.lines.get(path))] if after else []
    views.whole(path, "\n".join(after))
    return edits


# --------------------------------------------------------------------------- scripts


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def script_replacements(script: str) -> list[tuple[str, str]]:
    """(old, new) of every ``.replace(old, new)`` call on strings in a Python script, in the order
    of the script, where each is made on the text as a whole: string literals, or names the
    script binds to one literal each (``old_block = '''...'''``, then
    ``content.replace(old_block, new_block)``); none when one is made inside a loop or on one line of
    a list (``for line in lines: ... line.replace(...)``, ``lines[5].replace(...)``): that change is
    computed (which line it touches), not a replacement of the first occurrence."""
    if "replace" not in script:
        return []  # most scripts a log holds replace nothing: no parse
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    nodes = list(ast.walk(tree))
    calls = [node for node in nodes if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "replace" and len(node.args) >= 2]
    if not calls:
        return []
    looped = {id(inner) for loop in nodes if isinstance(loop, _LOOPS) for inner in ast.walk(loop)}
    texts = _bound_texts(nodes)
    found = []
    for node in sorted(calls, key=lambda call: (call.lineno, call.col_offset)):
        old, new = (_text_of(arg, texts) for arg in node.args[:2])
        if old is None or new is None:
            continue
        if id(node) in looped or isinstance(node.func.value, ast.Subscript):  # type: ignore[attr-defined]
            return []
        found.append((old, new))
    return found


def _bound_texts(nodes: list[ast.AST]) -> dict[str, str]:
    """The names a script binds once, to a string literal (a name bound twice or to anything else
    is left out: which text it holds at a call depends on the order); ``nodes``: the script's tree,
    walked."""
    bound: dict[str, str | None] = {}
    for node in nodes:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) and target is name else None
                    text = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
                    bound[name.id] = text if name.id not in bound else None
    return {name: text for name, text in bound.items() if text is not None}


def _text_of(node: ast.expr, texts: dict[str, str]) -> str | None:
    """A string literal's text, or the text a name is bound to; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return texts.get(node.id)
    return None


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
    path, created = "", False
    removed: list[str] = []
    added: list[str] = []
    start = 0

    def flush() -> None:
        nonlocal removed, added
        if path and (removed or added):
            name = resolve(path) if callable(resolve) else path
            edits.append(Edit(name, tuple(removed), tuple(added), "patch", start or None,
                              views.enclosing_test(name, start or None), created=created))
            apply_lines(views, name, start or 1, list(removed), list(added))
        removed, added = [], []

    for patch in diffs.read(text):
        path, created = patch.path if patch.headers else "", patch.created
        for hunk in patch.hunks:
            old_line = start = hunk.old_start
            if not path or not old_line:
                continue
            for line in hunk.lines:
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
