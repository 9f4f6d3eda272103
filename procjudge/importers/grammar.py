"""Shell command lines read with the shell's grammar (tree-sitter-bash), not split by hand.

An agent's command is a whole shell program: ``cd /testbed && cat <<'EOF' > x.py ... EOF``,
``python x.py 2>&1 | tail -5``, ``for f in a b; do sed -i ... "$f"; done``. The importers need its
simple commands, each with its redirections and without a here-document's body (the body is a
file's text, not commands). tree-sitter-bash parses every one of the 1,867 commands of the real
corpora, error-tolerant where a log cut a command short, at about 8 microseconds a command;
bashlex refused 301 of them (quoted here-document delimiters) and took 25 times longer.

The grammar attaches a redirection written after a list to the whole list (``a && b > f``); the
shell applies it to the last simple command, and so does :func:`simple_commands`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Parser

_PARSER = Parser(Language(tree_sitter_bash.language()))

# Nodes that are one simple command (with the words the shell passes to one program).
_SIMPLE = frozenset({"command", "declaration_command", "unset_command", "test_command", "variable_assignment",
                     "variable_assignments"})
# Nodes whose commands are read one by one.
_COMPOUND = frozenset({"program", "list", "pipeline", "subshell", "compound_statement", "if_statement", "elif_clause",
                       "else_clause", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
                       "case_item", "do_group", "negated_command", "function_definition"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
MAX_COMMAND = 1_000_000  # characters a command line is read to; the rest is cut off


def _parsed(command: str) -> tuple[bytes, Any]:
    """A command line (to ``MAX_COMMAND`` characters) as the bytes the grammar read and its tree."""
    text = command[:MAX_COMMAND]
    source = text.encode("utf-8", "surrogatepass")
    return source, _PARSER.parse(parseable(text) if "{" in text and not text.isascii() else source)


@functools.lru_cache(maxsize=4096)
def simple_commands(command: str) -> tuple[str, ...]:
    """The simple commands of a command line, in order, as text: each with its redirections and a
    here-document's opening line (``cat <<'EOF' > x.py``), never its body; a backslash-newline
    joins its lines, as the shell does."""
    source, tree = _parsed(command)
    if tree.root_node.has_error:  # a command the log cut short, or not bash: split it by hand, in linear time
        return tuple(by_hand(command[:MAX_COMMAND]))
    found = [joined(text).strip() if "\\\n" in text else text.strip() for text in _collect(tree.root_node, source)]
    return tuple(text for text in found if text)


# What a non-interactive shell prints when it refuses a command line it cannot parse (`bash -c`, as
# mini-swe-agent runs each command): the line of the construct it could not close
SHELL_REFUSED = re.compile(r"^(?:/bin/)?(?:ba|da)?sh: (?:-c: )?line \d+: (?:syntax error|unexpected EOF while looking for)",
                           re.MULTILINE)


def ran_before_refusal(command: str) -> str:
    """The part of a command line the shell ran before it refused the rest: the shell reads and runs
    one line (with the lines a construct carries on to) at a time, so the commands that end on a line
    before the first statement it cannot parse ran, and nothing from that line on did. django-15037's
    `sed -i '120,131c\\ ... "%s(\\'%s\\'" ...' F`, whose `\\'` closed the single quote and left a double
    quote open, ran nothing: bash printed `unexpected EOF while looking for matching` and wrote no
    file, least of all the words after the quote. Where the grammar finds no error, the whole command."""
    source, tree = _parsed(command)
    if not tree.root_node.has_error:
        return command
    children = tree.root_node.children
    broken = next((k for k, child in enumerate(children) if child.has_error or child.type == "ERROR"), len(children))
    if broken == len(children):
        return command
    row = children[broken].start_point.row
    ran = [child for child in children[:broken] if child.end_point.row < row]
    return source[:ran[-1].end_byte].decode("utf-8", "surrogatepass") if ran else ""


def joined(text: str) -> str:
    """A command's text with each backslash-newline read as the shell reads it: outside quotes a
    line break between words (kept as a space), inside double quotes nothing; inside single quotes
    it is text (``sed -i '3c\\`` and the lines after it are the text sed writes, and a quoted
    script keeps its lines)."""
    out: list[str] = []
    quote = ""
    k = 0
    while k < len(text):
        char = text[k]
        if char == "\\" and quote != "'" and k + 1 < len(text):
            if text[k + 1] == "\n":
                out.append("" if quote else " ")
            else:
                out.append(text[k:k + 2])
            k += 2
            continue
        if char in "'\"" and (not quote or quote == char):
            quote = "" if quote else char
        out.append(char)
        k += 1
    return "".join(out)


# tree-sitter-bash's scanner hands the character after a `{` (and after `{1..`) to C's isdigit(), which reads
# its table out of bounds for a code point above 255: at random, a crash of the whole process (`echo {\U00076f96`).
_BRACE_DIGITS = re.compile(r"\{[0-9]*(?:\.\.[0-9]*)?([^\x00-\x7f])")


def parseable(text: str) -> bytes:
    """The bytes given to the grammar for a command line: its UTF-8, except that a non-ASCII character
    where the scanner reads a brace range's digits (``{1..9}``) becomes as many ``x`` as it has bytes.
    The lengths match, so every node's text is still read from the command itself."""
    def ascii_letters(match: re.Match[str]) -> str:
        return match.group(0)[:-1] + "x" * len(match.group(1).encode("utf-8", "surrogatepass"))

    return _BRACE_DIGITS.sub(ascii_letters, text).encode("utf-8", "surrogatepass")


def _collect(node: Any, source: bytes) -> list[str]:
    kind = node.type
    if kind in _SIMPLE:
        return [_text(node, source)]
    if kind == "redirected_statement":
        body = [child for child in node.named_children if child.type not in _REDIRECTS]
        redirects = " ".join(_redirect(child, source) for child in node.named_children if child.type in _REDIRECTS)
        commands = [text for child in body for text in _collect(child, source)]
        if not commands:
            return [redirects] if redirects else []
        commands[-1] = f"{commands[-1]} {redirects}".strip()  # the shell redirects the last simple command
        return commands
    if kind in _COMPOUND or kind == "ERROR":
        return [text for child in node.named_children for text in _collect(child, source)]
    return []


def _redirect(node: Any, source: bytes) -> str:
    """A redirection's text, a here-document's without its body and end (``<<'EOF' > x.py``)."""
    if node.type != "heredoc_redirect":
        return _text(node, source)
    text = ""
    for child in node.children:
        if child.type in ("heredoc_body", "heredoc_end"):
            continue
        part = _text(child, source)
        text += part if child.type == "heredoc_start" or not text else " " + part  # `<<'EOF'` stays one word
    return text


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


_OPENER = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def by_hand(command: str) -> list[str]:
    """The simple commands of a command line the grammar cannot read whole: split on ``&&``,
    ``||``, ``;``, ``|`` and newlines outside quotes, a here-document's body (up to its delimiter,
    or to the end when it never closes) left out. One pass over the lines, one over the text."""
    kept: list[str] = []
    delimiter: str | None = None
    for line in command.split("\n"):
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        kept.append(line)
        opener = _OPENER.search(line)
        if opener:
            delimiter = opener.group(1)
    body = "\n".join(kept).replace("\\\n", " ")
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    k = 0
    while k < len(body):
        char = body[k]
        if quote:
            if char == "\\" and quote == '"' and k + 1 < len(body):
                current.append(body[k:k + 2])
                k += 2
                continue
            if char == quote:
                quote = ""
            current.append(char)
        elif char == "\\" and k + 1 < len(body):
            current.append(body[k:k + 2])
            k += 2
            continue
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char in ";|\n" or body.startswith("&&", k):
            parts.append("".join(current))
            current = []
            if body.startswith(("&&", "||"), k):
                k += 1
        else:
            current.append(char)
        k += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]
