"""Reading an input file safely, and saying where in it a field is and what it should have held.

Both loaders (run files in ``loading``, policy files in ``policy``) use these: a file is read only
when it is a regular file, within a size limit, without blocking; a validation error is placed
at its line and column by walking the YAML node tree, and msgspec's message is rephrased for
people with the offending value shown.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterable
from typing import Any

import msgspec
import yaml

from .model import RunFile


def regular_file_problem(path: str) -> str | None:
    """Why a path is not a regular file that can be read without blocking (a FIFO, a device, a
    socket, a folder), or None. Checked with stat, before anything is opened."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, expected a run file"
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"is {kind}, not a regular file (only regular files are read)"


def read_regular(path: str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; OSError or ValueError otherwise.
    The file is opened without blocking (a FIFO swapped in after the check still cannot hang)."""
    problem = regular_file_problem(path)
    if problem is not None:
        raise ValueError(problem)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:  # plain reads on the descriptor: no buffered file object per file (half the cost of a small file)
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("is not a regular file (only regular files are read)")
        # Asking for the file's size (not the limit) spares a buffer of the limit's size per file;
        # a file that grew since is read on, up to the limit.
        chunks = []
        total = 0
        request = min(limit, status.st_size) + 1
        while total <= limit:
            chunk = os.read(fd, min(request, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            request = 2**20
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise OverflowError(len(data))
    return data


def format_path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def resolve(value: Any, parts: list[Any]) -> Any:
    for part in parts:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


_YAML_EXPONENT = re.compile(r"[+-]?(\d+)(?:\.(\d*))?[eE]([+-]?)(\d+)")


def _number_hint(text: str) -> str | None:
    """Why a number written as text was read as a string: YAML 1.1 (PyYAML) reads an exponent only
    with a dot and a signed power (``1.0e+308``), so ``1e308`` is a string; quotes make any number
    a string."""
    bare = text.strip()
    match = _YAML_EXPONENT.fullmatch(bare)
    if match:
        whole, fraction, sign, power = match.groups()
        return (f"YAML reads an exponent only with a dot and a signed power: write "
                f"{bare[0] if bare[0] in '+-' else ''}{whole}.{fraction or '0'}e{sign or '+'}{power}")
    try:
        float(bare)
    except ValueError:
        return None
    return "a number in quotes is text: remove the quotes"


def describe_expected(message: str, value: Any) -> str:
    """msgspec's message, rephrased for people, with the offending value shown."""
    message = message.replace("`", "")
    message = re.sub(r"^Expected ", "expected ", message)
    for name, words in (("float", "a number"), ("int", "an integer"), ("str", "a string"), ("bool", "true or false"),
                        ("array", "a list"), ("object", "a mapping")):
        message = re.sub(rf"\b{name} \| null\b", words, message)
        message = re.sub(rf"^expected {name}\b", f"expected {words}", message)
    message = re.sub(r", got (str|int|float|bool|array|object|null)$",
                     lambda m: ", got " + {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
                                           "array": "a list", "object": "a mapping", "null": "nothing"}[m.group(1)], message)
    if message.startswith("Object missing required field"):
        return "required field is missing"
    if message.startswith("field="):
        return message.split(": ", 1)[1]
    if isinstance(value, float) and not math.isfinite(value):
        return f"{message}; got {value} (NaN and infinity are not accepted)"
    if isinstance(value, str) and len(value) > 60:
        return f"{message}; got a string of {len(value):,} characters"
    if isinstance(value, str) and message.startswith(("expected a number", "expected an integer")):
        hint = _number_hint(value)
        if hint:
            return f"{message} ({value!r}: {hint})"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"{message}; got an integer of {value.bit_length():,} bits"
    if value is not None and not isinstance(value, (dict, list)):
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return f"{message} ({shown})" if ", got " in message else f"{message}; got {shown}"
    return message


def unwrap(annotation: Any) -> Any:
    """The type under ``Annotated[...]`` and ``X | None``."""
    import types
    import typing

    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            others = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(others) != 1:
                return annotation
            annotation = others[0]
        else:
            return annotation


def annotation_at(parts: list[Any], root: Any = RunFile) -> Any:
    """The declared type of the field at ``parts`` (struct fields and list items), or None."""
    import typing

    current = root
    for part in parts:
        current = unwrap(current)
        if isinstance(part, int):
            if typing.get_origin(current) in (list, tuple):
                current = typing.get_args(current)[0]
                continue
            return None
        if not (isinstance(current, type) and issubclass(current, msgspec.Struct)):
            return None
        hints = typing.get_type_hints(current, include_extras=True)
        if part not in hints:
            return None
        current = hints[part]
    return unwrap(current)


def walk(node: Any, parts: list[Any]) -> tuple[int, int]:
    for part in parts:
        found = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    found = value
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            found = node.value[part]
        if found is None:
            break
        node = found
    return node.start_mark.line + 1, node.start_mark.column + 1
