"""One bad value of a log costs that value, not the run.

Logs are JSON written by other programs, and a value of one of them can be anything: an integer
of five thousand digits (Python refuses to read it), a lone UTF-16 surrogate (no file can hold it),
a number where every other step has a list. Read here:

- :func:`loads` reads JSON as the importers need it: an integer too long for Python is infinite
  (its sign kept), and a lone surrogate is U+FFFD, as undecodable bytes are.
- :func:`odd_ones` is the second reading of a log an importer could not convert: in each list of
  objects (the steps, messages and events of a log), a field whose type differs from the one most
  of its siblings hold is left out, each named (``steps[31].observation.results: a number where
  the others hold a list``), and the importer tries once more. The note goes on the run.
- :func:`fitted` makes a converted run fit the run model: a value the model refuses is left out
  and named, so long as what the model requires is still there.
"""

from __future__ import annotations

import contextvars
import json
import math
import re
from typing import Any

import msgspec

MAX_INT_DIGITS = 4000  # Python reads integers of up to 4,300 digits from text
MAX_LEFT_OUT = 50  # values one run may lose before it is refused

# a high surrogate escape with no low one after it, or a low one with no high one before it
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_LONE_SURROGATE_BYTES = re.compile(_LONE_SURROGATE.pattern.encode())
_SURROGATES = re.compile("[\ud800-\udfff]")

# the second reading of a log: while set, read_json and read_records take odd values out (and name them here)
REPAIRING: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("REPAIRING", default=None)


def _bounded_int(digits: str) -> int | float:
    if len(digits) <= MAX_INT_DIGITS:
        return int(digits)
    return -math.inf if digits.startswith("-") else math.inf


_DECODE = msgspec.json.Decoder().decode


def loads(data: str | bytes) -> Any:
    """JSON as a log's value: an integer too long for Python is infinite, a lone surrogate is
    U+FFFD. ``ValueError`` (``json.JSONDecodeError``) when it is not JSON.

    msgspec reads it first (in C, about twice as fast as ``json``); it refuses what it reads
    otherwise than ``json`` does (a lone surrogate, an integer of thousands of digits, ``NaN``,
    ``1e400``, text that is not JSON), and that text is read as before."""
    try:
        value = _DECODE(data)
    except msgspec.DecodeError:
        value = _loads_slowly(data)
    repairing = REPAIRING.get()
    if repairing is not None:
        repairing += odd_ones(value)
    return value


def _loads_slowly(data: str | bytes) -> Any:
    try:
        value = json.loads(data)
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        value = json.loads(data, parse_int=_bounded_int)
    if isinstance(data, str):
        lone = ("\\ud" in data or "\\uD" in data) and _LONE_SURROGATE.search(data) is not None
    else:
        lone = (b"\\ud" in data or b"\\uD" in data) and _LONE_SURROGATE_BYTES.search(data) is not None
    if lone:
        value = without_surrogates(value)
    return value


def without_surrogates(value: Any) -> Any:
    """The value with every lone surrogate in its texts (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATES.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def kind(value: Any) -> str:
    """A JSON value's kind in words: text, a number, a list, an object, true or false, null."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null"


def odd_ones(root: Any) -> list[str]:
    """Take out of ``root``, in place, each value whose kind differs from the one most values at
    the same place in the log hold (``steps[].observation.results`` of every step; null is never
    odd), once at least three are there. Returns where each was and what it was."""
    walked = list(_walk_with_parents(root))  # once: the kinds at each place, then the odd ones among them
    kinds: dict[str, list[str]] = {}
    for place, _, value in walked:
        if value is not None:
            kinds.setdefault(place, []).append(kind(value))
    usual = {place: most for place, seen in kinds.items() if (most := _majority(seen)) is not None}
    odd = [(place, where, container, key, value) for place, (container, key, where), value in walked
           if value is not None and place in usual and kind(value) != usual[place]]
    found: list[str] = []
    for place, where, container, key, value in reversed(odd):  # list items from the last, so the numbers hold
        found.append(f"{where}: {kind(value)} where the others hold {usual[place]}")
        del container[key]
        if len(found) > MAX_LEFT_OUT:
            break
    return found[::-1]


def _walk_with_parents(root: Any) -> Any:
    """(place with list numbers as ``[]``, (container, key, place with numbers), value) of every
    value under ``root``, depth first."""
    stack: list[tuple[Any, str, str, Any, Any]] = [(root, "", "", None, None)]
    while stack:
        value, place, where, container, key = stack.pop()
        if container is not None:
            yield place, (container, key, where), value
        if isinstance(value, dict):
            stack += [(child, f"{place}.{name}" if place else str(name), f"{where}.{name}" if where else str(name), value, name)
                      for name, child in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(child, f"{place}[]", f"{where}[{number}]", value, number)
                      for number, child in reversed(list(enumerate(value)))]


def _majority(kinds: list[str]) -> str | None:
    """The kind more than half of ``kinds`` are, when there are three or more."""
    if len(kinds) < 3:
        return None
    best = max(set(kinds), key=kinds.count)
    return best if kinds.count(best) * 2 > len(kinds) else None


_AT = re.compile(r" - at `\$((?:\.[^.\[`]+|\[\d+\])*)`$")
_STEP = re.compile(r"\.([^.\[`]+)|\[(\d+)\]")


def fitted(document: dict[str, Any], model: type) -> list[str]:
    """Make a converted run fit ``model``, in place: each value the model refuses is left out
    (a field of an object, an item of a list) and named with the model's reason. ``ValueError``
    naming the field when what it refuses is required, or when more than ``MAX_LEFT_OUT`` go."""
    left_out: list[str] = []
    refused = ""  # the model's words on the value last left out
    while True:
        try:
            msgspec.convert(document, model, strict=False)
            return left_out
        except msgspec.ValidationError as exc:
            message = str(exc)
        at = _AT.search(message)
        reason = message[:at.start()] if at else message
        steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(at.group(1))] if at else []
        if "required field" in reason and refused:  # what was left out is required: name it as refused
            message, steps = refused, []
        if not steps or len(left_out) >= MAX_LEFT_OUT:
            raise ValueError(f"the converted run does not fit the run model: {message}") from None
        parent: Any = document
        for key, number in steps[:-1]:
            parent = parent[key] if key is not None else parent[int(number)]
        key, number = steps[-1]
        if key is not None and isinstance(parent, dict) and key in parent:
            del parent[key]
        elif number is not None and isinstance(parent, list) and int(number) < len(parent):
            del parent[int(number)]
        else:
            raise ValueError(f"the converted run does not fit the run model: {message}") from None
        refused = message
        left_out.append(f"{at.group(1)[1:] if at else '?'}: {reason}")
