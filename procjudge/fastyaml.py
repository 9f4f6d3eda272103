"""An optional fast YAML reader: yaml-rs (Rust) where its result provably equals libyaml's.

procjudge reads YAML as PyYAML does (YAML 1.1 scalars: ``yes`` is true, ``012`` is octal, ``1:30``
is 90, ``1e5`` is text), with timestamps kept as text. yaml-rs implements YAML 1.2, where those
read differently, and parses about ten times faster than libyaml builds Python values. So it is
used only for text in which no such difference can occur, and libyaml reads everything else:

* before parsing, the text is refused when it has what the fast path does not decide: a tab, a
  carriage return or a Unicode line break, more than one document, a directive, a tag, an anchor,
  an alias, a ``=`` (PyYAML's value key) or a flow collection at the start of a node, except
  ``[]``, ``{}`` and a one-line list of plain words (YAML 1.2 accepts flow forms that 1.1 refuses,
  such as ``{b:}`` and ``[?, 1]``), a
  line long enough to nest deeper than yaml-rs can safely recurse, or a plain word that could be a
  number written in a form one reader takes as a number and the other does not, or differently
  (``1e5``, ``012``, ``0o17``, ``1_000``, ``.5``, ``+1``, ``1:30``);
* after parsing, the value is refused when any string in it is one that PyYAML would have read as
  something else had it been plain (``yes``, ``no``, ``on``, ``off`` in any case, ``=``, ``<<``
  (PyYAML's merge key), a sexagesimal number), whether or not it was quoted;
* any error from yaml-rs is refused too, so that libyaml reports it, with the same message.

``tests/test_fastyaml.py`` holds the conformance test: every sample, fixture and case file, every
fuzz case and a grammar of odd scalars, parsed both ways, must give identical values (types
included) wherever the fast path accepts the text. ``PROCJUDGE_YAML=libyaml`` turns it off.

yaml-rs takes about 5 ms to import, more than libyaml needs for a few small files, so it is
imported only once a process has read ``MIN_TEXTS`` YAML texts: ``score`` of one run starts as
fast as without it, and ``batch`` switches after its first files. A text over ``MAX_CHARS`` goes
to libyaml: the checks read every word, and a run that large is mostly long scalars (diffs, code),
which libyaml reads about as fast (a 62 MB run: checks 1.8 s, libyaml's whole load 0.5 s).
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec

MIN_TEXTS = 8  # importing yaml-rs costs about 5 ms: worth it from the eighth text a process reads
MAX_CHARS = 1_000_000  # past this the checks cost more than libyaml (a large run is mostly long scalars)
MAX_LINE = 2000  # yaml-rs recurses per level: lines this long bound nesting at about 4,000 levels
MAX_UNSPLIT = 8_000  # a text this short cannot nest that deep, whatever its lines
_MARKER = re.compile(r"^---", re.MULTILINE)
# A node property (tag, anchor, alias), a bare = or a flow collection other than [] and {}: where
# one begins a node, the text is left to libyaml (YAML 1.2 also reads flow forms 1.1 refuses).
# Each is found with str.find, a few times faster than a regular expression over the text.
_PROPERTIES = (("!", ""), ("&", ""), ("*", ""), ("=", ""), ("[", "]"), ("{", "}"))  # the character, and the empty form
# A one-line flow sequence of plain words ([src/a.py, src/b.py], [1, 2]): both readers agree on it
# (its words go through the same checks as every other word).
_SIMPLE_LIST = re.compile(r"\[[ ]*[^\s\[\]{}?:#&*!|>'\"\\%@`,-][^\n\[\]{}?:#&*!|>'\"\\%@`]*(?<![ ,])[ ]*\](?=[ ]*(?:\n|$))")
_SAFE_NUMBER = re.compile(r"[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")  # the same value in YAML 1.1 and 1.2
# Wider than every integer and float of YAML 1.1 (PyYAML) and 1.2 (yaml-rs) together.
_ANY_NUMBER = re.compile(r"[-+]?(?:0[xXoObB][0-9a-fA-F_]*|[0-9_.]*[0-9][0-9_.]*(?:[eE][-+]?[0-9]+)?"
                         r"|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|\.(?:inf|Inf|INF|nan|NaN|NAN))")
# A string (in the value encoded as JSON) that PyYAML reads as something else when it is plain:
# YAML 1.1's booleans, its value and merge keys, its sexagesimal numbers.
# The lookahead passes over every other string at its first character (a fourth of the cost).
_READ_OTHERWISE = re.compile(rb'"(?=[yYnNoO=<+0-9-])(?:[yY]es|YES|[nN]o|NO|[oO]n|ON|[oO]ff|OFF|=|<<'
                             rb'|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?)"')
_BLOCK = re.compile(r"[|>][-+0-9]{0,3}[ ]*(?:#[^\n]*)?\n")
_FLOW_SPLIT = re.compile(r"[\[\]{},]|(?<=[\"']):")
# Words already judged safe, and risky (runs repeat their words); each set is emptied past MAX_TOKENS.
MAX_TOKENS = 100_000
_SAFE_TOKENS: set[str] = set()
_RISKY_TOKENS: set[str] = set()
_reader: list[Any] = []  # yaml-rs's module once imported, or None when it is not installed
_texts_seen = 0


def _yaml_rs() -> Any:
    """yaml-rs, imported on first use (an optional extra: pip install 'procjudge[fast]')."""
    if not _reader:
        module: Any
        try:
            import yaml_rs as module
        except ImportError:
            module = None
        _reader.append(module)
    return _reader[0]


def available() -> bool:
    """Whether yaml-rs is installed."""
    return _yaml_rs() is not None


def enabled() -> bool:
    """Whether the fast reader is installed and not turned off with ``PROCJUDGE_YAML=libyaml``."""
    return os.environ.get("PROCJUDGE_YAML", "").lower() != "libyaml" and available()


def _risky_token(token: str) -> bool:
    """Whether a whitespace-separated word could be a plain scalar that the two readers resolve
    differently: any number either reader knows, other than a plain decimal (``12``, ``-0.5``)."""
    for piece in _FLOW_SPLIT.split(token):  # [1e5,2] and {"a":1e5} hold several scalars in one word
        core = piece.removesuffix(":")
        if _ANY_NUMBER.fullmatch(core) and not _SAFE_NUMBER.fullmatch(core):
            return True
    return False


def _starts_node(text: str, at: int) -> bool:
    """Whether the character at ``at`` could begin a node: only indentation, or an indicator
    (``:``, ``-``, ``?``, ``[``, ``{``, ``,``) and spaces, stand before it on its line."""
    k = at - 1
    while k >= 0 and text[k] == " ":
        k -= 1
    return k < 0 or text[k] in "\n:-?[{,"


def _block_scalars_have_content(text: str) -> bool:
    """Whether every block scalar (``|``, ``>``) that begins a node has a first line of content,
    indented past its header's line (yaml-rs reads an empty block scalar differently)."""
    for match in _BLOCK.finditer(text):
        if not _starts_node(text, match.start()):
            continue
        header = text[text.rfind("\n", 0, match.start()) + 1:match.start()]
        header_indent = len(header) - len(header.lstrip(" "))
        end = text.find("\n", match.end())
        following = text[match.end():end if end >= 0 else len(text)]
        content = following.lstrip(" ")
        if not content or len(following) - len(content) <= header_indent:
            return False
    return True


def accepts(text: str) -> bool:
    """Whether the text is free of everything the fast path leaves to libyaml (checked before
    parsing; ``parse`` checks the value after)."""
    if not _one_plain_document(text):
        return False
    if len(text) > MAX_UNSPLIT and max(map(len, text.split("\n"))) > MAX_LINE:
        return False
    if " \n" in text or text.endswith(" "):
        return False  # trailing spaces: a line of only spaces ends a block scalar differently in 1.2
    if ("|" in text or ">" in text) and not _block_scalars_have_content(text):
        return False
    if _property_starts_a_node(text):
        return False
    return not _has_risky_token(text)


def _property_starts_a_node(text: str) -> bool:
    """Whether a node property, a bare ``=`` or a flow collection (other than ``[]``, ``{}`` and a
    one-line list of plain words) begins a node."""
    for char, empty in _PROPERTIES:
        at = text.find(char)
        while at >= 0:
            if not (empty and text.startswith(empty, at + 1)) and _starts_node(text, at) and not (
                    char == "[" and _SIMPLE_LIST.match(text, at)):
                return True
            at = text.find(char, at + 1)
    return False


def _one_plain_document(text: str) -> bool:
    """One document of plain lines: no tab, carriage return or Unicode line break (YAML 1.1 and 1.2
    differ on them), no directive, document end or second document (one leading --- is fine)."""
    if ("\t" in text or "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text
            or "\ufeff" in text):
        return False
    return not ("%" in text or "..." in text or ("---" in text and _MARKER.search(text, 3)))


def _has_risky_token(text: str) -> bool:
    """Whether a word of the text is one the two readers may take differently. Words already
    judged are set aside by set operations, so only new words are looked at one by one."""
    words = text.split()
    if not _RISKY_TOKENS.isdisjoint(words):
        return True
    if _SAFE_TOKENS.issuperset(words):  # the common case in a batch: nothing new
        return False
    for word in set(words) - _SAFE_TOKENS:
        risky = _risky_token(word)
        judged = _RISKY_TOKENS if risky else _SAFE_TOKENS
        if len(judged) >= MAX_TOKENS:
            judged.clear()
        judged.add(word)
        if risky:
            return True
    return False


def parse(text: str) -> list[Any] | None:
    """The documents of a YAML text (one), read by yaml-rs, or None when the text must be read by
    libyaml: the fast reader is off, or the text or its value is one where the two could differ."""
    global _texts_seen
    _texts_seen += 1
    if len(text) > MAX_CHARS or (_texts_seen < MIN_TEXTS and not _reader):
        return None  # a command reading a few small files is faster without importing yaml-rs
    if not enabled() or not text.strip() or not accepts(text):
        return None
    try:
        value = _yaml_rs().loads(text, parse_datetime=False)
        encoded = msgspec.json.encode(value)
    except Exception:  # noqa: BLE001 - any error is libyaml's to report, in procjudge's words
        return None
    if _READ_OTHERWISE.search(encoded):
        return None
    return [value]
