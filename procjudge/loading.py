"""Bytes to a validated Run.

The loader accepts every shape of the public contract (a wrapped file, a YAML stream of records,
a bare list of entries, a bare record), normalises it to one canonical mapping and validates that
with msgspec.  The fast path tracks no line numbers; when validation fails the file is composed a
second time (node tree only) to find the line and column of the offending field.

Every failure is a ``LoadError`` naming the file, line and column where known, the field path and
what was expected.  Hostile input is refused before it can cost much: files over ``MAX_FILE_BYTES``,
bytes that are not UTF-8, nesting deeper than libyaml's limit, and alias graphs whose expansion
would exceed ``MAX_EXPANDED_NODES``.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from typing import Any

import msgspec
import yaml

from . import fastyaml
from .locate import (
    annotation_at,
    describe_expected,
    format_path,
    read_regular,
    resolve,
    walk,
)
from .model import Entry, IterationTelemetry, Run, RunFile
from .outcome import SCORE_NEEDED, scoreable

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_EXPANDED_NODES = 2_000_000
BYTES_PER_VALUE = 64  # text weighs one value per 64 characters in the alias expansion check

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LoadError(Exception):
    """A run file that could not be read or validated; ``str()`` is the one-line message."""

    def __init__(
        self,
        path: str,
        reason: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason
        self.line = line
        self.column = column
        self.field = field

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = f" {self.field}:" if self.field else ""
        return f"{where}:{field} {self.reason}"


def _without_timestamps(resolvers: dict[Any, Any]) -> dict[Any, Any]:
    """Resolver table minus implicit timestamps: telemetry times stay the strings they were."""
    cleaned = {}
    for first, pairs in resolvers.items():
        kept = [(tag, regexp) for tag, regexp in pairs if tag != "tag:yaml.org,2002:timestamp"]
        if kept:
            cleaned[first] = kept
    return cleaned


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_TRUE = frozenset(("yes", "true", "on"))
_RESOLVED: dict[str, str] = {}


class _RunLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """libyaml's safe loader with timestamps kept as text and a memoised scalar resolver.

    Run files repeat the same keys and small values thousands of times; PyYAML resolves each
    occurrence with a regex scan, which is a third of its load time. The resolution of a plain
    scalar depends on its text alone, so it is cached."""

    yaml_implicit_resolvers = _without_timestamps(_BaseLoader.yaml_implicit_resolvers)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= 64:
                    if len(_RESOLVED) > 100_000:
                        _RESOLVED.clear()
                    _RESOLVED[value] = tag
            return tag
        return super().resolve(kind, value, implicit)


class _Builder:
    """Values from composed nodes: a tight recursive walk for the common tags, PyYAML's
    SafeConstructor for everything else (so semantics match ``yaml.safe_load``). Shared nodes
    (aliases) become shared objects, as in PyYAML, and are reported for the expansion check."""

    def __init__(self, loader: _RunLoader) -> None:
        self.loader = loader
        self.memo: dict[int, Any] = {}
        self.aliases_used = False

    def build(self, node: Any) -> Any:
        kind = type(node)
        tag = node.tag
        if kind is yaml.ScalarNode:
            value = node.value
            if len(value) > 1024:  # a large scalar reached twice is an alias: weigh the expansion
                if id(node) in self.memo:
                    self.aliases_used = True
                self.memo[id(node)] = value
            if tag == _STR:
                return value
            if tag == _INT and (value.isdigit() or (value[:1] == "-" and value[1:].isdigit())) and (
                value == "0" or value.lstrip("-")[:1] != "0"
            ):
                return int(value)
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return value.lower() in _TRUE
            if tag == _FLOAT and "_" not in value and "." in value and value[-1:].isdigit() and ":" not in value:
                return float(value)
            return self._construct(node)
        key = id(node)
        if key in self.memo:
            self.aliases_used = True
            return self.memo[key]
        if kind is yaml.MappingNode and tag == _MAP:
            return self._mapping(node, key)
        if kind is yaml.SequenceNode and tag == _SEQ:
            sequence: list[Any] = []
            self.memo[key] = sequence
            sequence.extend(self.build(item) for item in node.value)
            return sequence
        value = self._construct(node)
        if isinstance(value, (list, tuple, dict, set)):
            self.aliases_used = True  # !!pairs, !!omap, !!set: let the expansion check count them
        return value

    def _mapping(self, node: Any, key: int) -> dict[Any, Any]:
        """A plain mapping; a key given twice is an error at its line, a merge key is PyYAML's."""
        mapping: dict[Any, Any] = {}
        self.memo[key] = mapping
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                self.memo[key] = mapping = self._construct(node)
                self.aliases_used = True
                return mapping
            name = self.build(key_node)
            try:
                if name in mapping:
                    first = next(k for k, _ in node.value if k is not key_node and self.build(k) == name)
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", first.start_mark,
                        f"found the key {str(name)[:80]!r} twice (first on line {first.start_mark.line + 1}, "
                        f"again on line {key_node.start_mark.line + 1}); a duplicate key would silently win",
                        key_node.start_mark)
                mapping[name] = self.build(value_node)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found an unhashable key", key_node.start_mark
                ) from None
        return mapping

    def _construct(self, node: Any) -> Any:
        """PyYAML's SafeConstructor for a rare tag; its crashes on malformed values (an empty
        ``!!int``, a 13th month in ``!!timestamp``) become errors at the node's line."""
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, OverflowError, AttributeError) as exc:
            shown = str(getattr(node, "value", ""))[:40] if isinstance(node, yaml.ScalarNode) else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {shown!r} as {node.tag.rsplit(':', 1)[-1]}: {str(exc)[:120]}",
                node.start_mark) from None


def load_run(path: str | os.PathLike[str], data: bytes | None = None, *, with_lines: bool = False,
             json: bool | None = None) -> Run:
    """Read, parse, normalise and validate one run file; raise ``LoadError`` on any failure.

    ``with_lines`` also records the line of every iteration record (a second, node-only pass
    over the file: only reports that point at lines, such as CI annotations, ask for it).
    ``json`` says whether the bytes are JSON; by default a path ending in ``.json`` is."""
    path = os.fspath(path)
    if data is None:
        data = _read_bytes(path)
    text = _decode(path, data)
    documents = _parse(path, text, path.endswith(".json") if json is None else json)
    canonical, origins = _normalise(path, documents, text)
    try:
        runfile = msgspec.convert(canonical, RunFile, str_keys=True)
    except msgspec.ValidationError as exc:
        raise _locate_validation_error(path, text, canonical, origins, str(exc)) from None
    unknown, hidden = _unknown_keys(canonical, {k for k, origin in enumerate(origins) if not origin.wrapped})
    _check_scoreable(path, text, runfile, origins, unknown)
    warnings = tuple(_unknown_key_warnings(unknown, hidden))
    if with_lines:
        _fill_lines(text, origins)
    return Run(
        path=path,
        info=runfile.run,
        iterations=runfile.iterations,
        aggregate=runfile.aggregate_telemetry,
        warnings=warnings,
        lines=tuple(origin.line for origin in origins),
    )


def _check_scoreable(path: str, text: str, runfile: RunFile, origins: Origins, unknown: list[tuple[str, str]]) -> None:
    """Refuse a run with a record that has neither a score nor test counts, at that record's line,
    naming any unknown key in it (a typo such as ``scroe:`` is the usual cause)."""
    local = runfile.run.iterations_are == "local_runs"
    for k, entry in enumerate(runfile.iterations):
        if scoreable(entry, local):
            continue
        origin = origins[k]
        line, column = _node_position(text, origin.prefix[0], list(origin.prefix[1:]))
        typos = [f"`{where}`{hint}" for where, hint in unknown if where.startswith(f"iterations[{k}].")]
        hint = f"; this record has unknown keys: {', '.join(typos[:3])}" if typos else ""
        raise LoadError(path, SCORE_NEEDED + hint, line=line, column=column, field=f"iterations[{k}]")


# --------------------------------------------------------------------------- reading and parsing


def _too_large(path: str, size: int) -> LoadError:
    return LoadError(path, f"file is {size / 1e6:.1f} MB; run files are limited to {MAX_FILE_BYTES // 2**20} MiB")


def _read_bytes(path: str) -> bytes:
    try:
        return read_regular(path, MAX_FILE_BYTES)
    except ValueError as exc:
        raise LoadError(path, str(exc)) from None
    except OverflowError:
        raise _too_large(path, os.path.getsize(path)) from None
    except IsADirectoryError:
        raise LoadError(path, "is a directory, expected a run file") from None
    except FileNotFoundError:
        raise LoadError(path, "no such file") from None
    except OSError as exc:
        raise LoadError(path, f"cannot read: {exc.strerror or exc}") from None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _decode(path: str, data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise _too_large(path, len(data))
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", "replace")
        line, column = _line_col(prefix, len(prefix))
        raise LoadError(
            path, f"byte 0x{data[exc.start]:02x} is not valid UTF-8; run files must be UTF-8 text",
            line=line, column=column,
        ) from None
    if "\x00" in text:
        line, column = _line_col(text, text.index("\x00"))
        raise LoadError(path, "NUL character; run files must be text", line=line, column=column)
    return text


def _parse(path: str, text: str, json: bool = False) -> list[Any]:
    """Parse JSON with msgspec, or YAML: with yaml-rs where it provably reads as libyaml does
    (``procjudge.fastyaml``), else with libyaml."""
    if not text.strip():
        raise LoadError(path, "file is empty, expected a run (a mapping with `iterations:`, a list or a stream of records)")
    if json:
        return [_parse_json(path, text)]
    fast = fastyaml.parse(text)
    if fast is not None:
        return fast
    loader = _RunLoader(text)
    builder = _Builder(loader)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            documents.append(builder.build(node) if node is not None else None)
            builder.memo.clear()  # anchors are per document, and a freed node's id can be reused
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(filter(None, [exc.context, exc.problem])) or "invalid YAML"
        raise LoadError(
            path, f"YAML syntax error: {reason}",
            line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as exc:
        raise LoadError(path, f"YAML error: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise LoadError(path, "nesting is too deep") from None
    except ValueError as exc:  # int conversion beyond Python's digit limit, and the like
        raise LoadError(path, f"unreadable value: {exc}") from None
    finally:
        loader.dispose()
    if builder.aliases_used:
        _check_alias_expansion(path, documents)
    return documents


def _refuse_duplicate_keys(path: str, text: str) -> None:
    """A JSON object that gives a key twice is an error naming both lines (msgspec, like most JSON
    readers, would keep the last one silently)."""
    import json

    def check(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                needle = re.compile(re.escape(json.dumps(key)) + r"\s*:")
                lines = [text.count("\n", 0, m.start()) + 1 for m in needle.finditer(text)][:2]
                where = f" (lines {lines[0]} and {lines[1]})" if len(lines) == 2 else ""
                raise LoadError(path, f"the key {_shown_key(key)!r} is given twice in one object{where}; "
                                      "a duplicate key would silently win", line=lines[-1] if lines else None)
            seen.add(key)
        return dict(pairs)

    try:
        json.loads(text, object_pairs_hook=check)
    except (ValueError, RecursionError):
        pass  # msgspec has read it already; only duplicates are looked for here


def _may_repeat_keys(text: str, value: Any) -> bool:
    """False when the JSON text provably gives no key twice in one object; True when it may.

    Exact by counting colons: outside strings a colon follows every key, so the text has one
    colon per key it gives plus those inside its strings. Encoding the decoded value again gives
    one per key kept plus the same string colons, since every kept string was in the text. A key
    given twice is kept once, so the text has more colons than the encoding exactly when some
    key repeats. A colon written as an escape (``\\u003a``) is not in the text's count: such
    text takes the slow path."""
    if "\\u003" in text and ("\\u003a" in text or "\\u003A" in text):  # one scan of the text in the common case
        return True
    return text.count(":") != msgspec.json.encode(value).count(b":")


def _parse_json(path: str, text: str) -> Any:
    try:
        value = msgspec.json.decode(text)
        if _may_repeat_keys(text, value):
            _refuse_duplicate_keys(path, text)
        return value
    except msgspec.ValidationError as exc:  # numbers beyond range, e.g. 1e400
        raise LoadError(path, f"JSON value error: {str(exc).split(' - at ')[0].lower()} (NaN, infinity and "
                              "numbers beyond 64 bits are not accepted)") from None
    except msgspec.DecodeError as exc:
        message = str(exc)
        match = re.search(r"\(byte (\d+)\)", message)
        line = column = None
        if match:
            offset = len(text.encode("utf-8")[: int(match.group(1))].decode("utf-8", "ignore"))
            line, column = _line_col(text, offset)
            message = message[: match.start()].strip()
        raise LoadError(path, f"JSON syntax error: {message}", line=line, column=column) from None
    except RecursionError:
        raise LoadError(path, "nesting is too deep") from None


def _check_alias_expansion(path: str, documents: list[Any]) -> None:
    """Refuse alias graphs (billion laughs) whose expanded size would be unbounded. Values are
    weighed by what they hold: a container or scalar counts 1, a string one more per
    ``BYTES_PER_VALUE`` characters (one large string aliased a thousand times is a bomb too), and
    tuples and sets (``!!pairs``, ``!!set``) are containers like lists."""
    sizes: dict[int, int] = {}

    def size(value: Any) -> int:
        if isinstance(value, (str, bytes)):
            return 1 + len(value) // BYTES_PER_VALUE
        if not isinstance(value, (list, dict, tuple, set, frozenset)):
            return 1
        key = id(value)
        if key in sizes:
            return sizes[key]
        sizes[key] = 1  # cycles (recursive aliases) count once and are refused below
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_EXPANDED_NODES:
                break
        sizes[key] = total
        return total

    try:
        total = sum(size(document) for document in documents)
        recursive = _has_cycle(documents)
    except RecursionError:
        raise LoadError(path, "YAML aliases nest too deeply") from None
    if recursive:
        raise LoadError(path, "YAML alias refers to itself (a recursive structure)")
    if total > MAX_EXPANDED_NODES:
        raise LoadError(
            path, f"YAML aliases expand to more than {MAX_EXPANDED_NODES:,} values or "
                  f"{MAX_EXPANDED_NODES * BYTES_PER_VALUE // 2**20} MiB of text (an alias bomb?)"
        )


def _has_cycle(documents: list[Any]) -> bool:
    on_stack: set[int] = set()
    done: set[int] = set()

    def visit(value: Any) -> bool:
        if not isinstance(value, (list, dict, tuple)) or id(value) in done:
            return False
        if id(value) in on_stack:
            return True
        on_stack.add(id(value))
        children = value.values() if isinstance(value, dict) else value
        found = any(visit(child) for child in children)
        on_stack.discard(id(value))
        done.add(id(value))
        return found

    return any(visit(document) for document in documents)


# --------------------------------------------------------------------------- shapes


class _Origin(msgspec.Struct):
    """Where iteration k of the canonical run sits in the source: path components, and its line."""

    prefix: tuple[Any, ...]
    wrapped: bool
    line: int | None = None


_TELEMETRY_KEYS = frozenset(f.name for f in msgspec.structs.fields(IterationTelemetry))


def _entry(value: Any, prefix: tuple[Any, ...]) -> tuple[Any, _Origin]:
    """One iteration entry in either form: wrapped ``{iteration_telemetry: ...}`` or a bare record."""
    if isinstance(value, dict) and "iteration_telemetry" in value:
        return value, _Origin(prefix, True)
    return {"iteration_telemetry": value}, _Origin(prefix, False)


def _looks_like_record(value: Any) -> bool:
    return isinstance(value, dict) and bool(_TELEMETRY_KEYS.intersection(value))


TOP_LEVEL_KEYS = ("run", "iterations", "aggregate_telemetry", "iteration_telemetry", "iteration_feedback")


def _not_a_run(path: str, document: Any, text: str) -> LoadError:
    """No run shape matched: name the keys found, and the key that was probably meant."""
    expected = "expected a run: a mapping with `iterations:`, a list of iterations, a stream of records or one record"
    if not isinstance(document, dict):
        return LoadError(path, f"{expected}; got {_kind(document)}")
    keys = [str(k) for k in document]
    for key in keys:
        close = difflib.get_close_matches(key, TOP_LEVEL_KEYS, n=1, cutoff=0.75)
        if close and close[0] != key:
            line, column = _node_position(text, 0, [key]) if text else (None, None)
            return LoadError(path, f"{expected}; got a mapping with keys {', '.join(keys[:8])}: did you mean "
                                   f"`{close[0]}:` rather than `{key}:`?", line=line, column=column, field=key)
    return LoadError(path, f"{expected}; got a mapping with keys {', '.join(keys[:8])} (none of them `iterations`)")


def _normalise(path: str, documents: list[Any], text: str = "") -> tuple[dict[str, Any], Origins]:
    """Turn any accepted shape into ``{run, iterations, aggregate_telemetry}`` plus origins."""
    documents = [d for d in documents if d is not None]
    if not documents:
        raise LoadError(path, "file holds no data, expected a run")
    if len(documents) == 1:
        document = documents[0]
        if isinstance(document, list):
            pairs = [_entry(item, (0, k)) for k, item in enumerate(document)]
            return _canonical({}, pairs, path)
        if isinstance(document, dict):
            if "iterations" in document:
                items = document["iterations"]
                if not isinstance(items, list):
                    raise LoadError(path, f"expected a list, got {_kind(items)}", field="iterations")
                pairs = [_entry(item, (0, "iterations", k)) for k, item in enumerate(items)]
                rest = {key: value for key, value in document.items() if key != "iterations"}
                return _canonical(rest, pairs, path)
            if "iteration_telemetry" in document or _looks_like_record(document):
                return _canonical({}, [_entry(document, (0,))], path)
        raise _not_a_run(path, document, text)
    # A YAML stream: optional run document, records, optional aggregate document.
    header: dict[str, Any] = {}
    key_documents: dict[str, int] = {}
    pairs = []
    for index, document in enumerate(documents):
        if isinstance(document, dict) and ("run" in document or "aggregate_telemetry" in document) and not (
            "iteration_telemetry" in document or _looks_like_record(document)
        ):
            for key, value in document.items():
                header[key] = value
                key_documents[str(key)] = index
            continue
        if not isinstance(document, dict):
            raise LoadError(path, f"document {index + 1} of the stream: expected an iteration record, got {_kind(document)}")
        pairs.append(_entry(document, (index,)))
    return _canonical(header, pairs, path, key_documents)


class Origins(list[Any]):
    """Where each canonical iteration came from, plus the stream document of each top-level key."""

    key_documents: dict[str, int]


def _canonical(rest: dict[str, Any], pairs: list[tuple[Any, _Origin]], path: str,
               key_documents: dict[str, int] | None = None) -> tuple[dict[str, Any], Origins]:
    canonical = dict(rest)
    canonical["iterations"] = [entry for entry, _ in pairs]
    origins = Origins(origin for _, origin in pairs)
    origins.key_documents = key_documents or {}
    if not origins:
        raise LoadError(path, "the run has no iterations", field="iterations")
    return canonical, origins


def _kind(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    return "nothing" if value is None else names.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- error locations

_PATH_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[\.\.\.\]")


def _split_path(path: str) -> list[Any]:
    """``$.iterations[2].iteration_telemetry.x`` -> ``["iterations", 2, "iteration_telemetry", "x"]``."""
    parts: list[Any] = []
    for match in _PATH_TOKEN.finditer(path):
        if match.group(1) is not None:
            parts.append(match.group(1))
        elif match.group(2) is not None:
            parts.append(int(match.group(2)))
    return parts


def _source_parts(parts: list[Any], origins: Origins) -> tuple[int, list[Any]]:
    """Map a canonical field path to (document index, path inside that document)."""
    if len(parts) >= 2 and parts[0] == "iterations" and isinstance(parts[1], int) and parts[1] < len(origins):
        origin = origins[parts[1]]
        rest = parts[2:]
        if not origin.wrapped and rest[:1] == ["iteration_telemetry"]:
            rest = rest[1:]
        return origin.prefix[0], list(origin.prefix[1:]) + rest
    return origins.key_documents.get(str(parts[0]) if parts else "", 0), parts


TIME_EXAMPLE = "2026-03-27T14:00:00Z"


def _likely_fix(parts: list[Any], value: Any, reason: str) -> str:
    """The reason with what was expected spelt out: an enum's values (and the one meant), an ISO
    8601 example for a time given as a number."""
    import typing

    annotation = annotation_at(parts)
    if typing.get_origin(annotation) is typing.Literal:
        allowed = [str(a) for a in typing.get_args(annotation)]
        shown = repr(value) if not isinstance(value, (dict, list)) else f"a {'mapping' if isinstance(value, dict) else 'list'}"
        text = f"expected one of {', '.join(allowed)}; got {shown[:60]}"
        if isinstance(value, str):
            close = [a for a in allowed if a.lower() == value.strip().lower()] or difflib.get_close_matches(value, allowed, n=1)
            if close:
                text += f" (did you mean {close[0]!r}?)"
        return text
    name = str(parts[-1]) if parts else ""
    if ("timestamp" in name or name.endswith("_at")) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{reason}; write the time in ISO 8601, e.g. {TIME_EXAMPLE} (epoch numbers are not read)"
    return reason


def _locate_validation_error(path: str, text: str, canonical: dict[str, Any], origins: Origins, raw: str) -> LoadError:
    message, _, where = raw.rpartition(" - at ")
    if not message:
        message, where = raw, "$"
    parts = _split_path(where)
    missing = re.match(r"Object missing required field `([^`]+)`", message)
    field_hint = re.match(r"field=([A-Za-z_]+):", message)
    value = resolve(canonical, parts)
    if field_hint:
        parts.append(field_hint.group(1))
        value = resolve(canonical, parts)
    reason = describe_expected(message, value)
    if not missing:
        reason = _likely_fix(parts, value, reason)
    field_parts = parts + [missing.group(1)] if missing else parts
    document, inner = _source_parts(parts, origins)
    line, column = _node_position(text, document, inner)
    return LoadError(path, reason, line=line, column=column, field=format_path(field_parts) or "(top level)")


def _compose(text: str) -> list[Any] | None:
    """The file's node trees (no values built), one per document; None when unreadable."""
    try:
        nodes = list(yaml.compose_all(text, Loader=_RunLoader))
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return [n for n in nodes if n is not None and not (isinstance(n, yaml.ScalarNode) and n.tag.endswith(":null"))]


def _fill_lines(text: str, origins: Origins) -> None:
    nodes = _compose(text)
    if nodes is None:
        return
    for origin in origins:
        if origin.prefix[0] < len(nodes):
            line, _ = walk(nodes[origin.prefix[0]], list(origin.prefix[1:]))
            origin.line = line


def _node_position(text: str, document: int, parts: list[Any]) -> tuple[int | None, int | None]:
    """Compose the file again (nodes only, no values built) and walk to the field's node."""
    nodes = _compose(text)
    if nodes is None or document >= len(nodes):
        return None, None
    return walk(nodes[document], parts)


# --------------------------------------------------------------------------- unknown keys


_FIELD_CACHE: dict[type, dict[str, Any]] = {}


def _inner_struct(annotation: Any) -> tuple[str, type | None]:
    """Classify a field annotation: ("struct", T), ("list", T) or ("other", None)."""
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _inner_struct(typing.get_args(annotation)[0])
    if origin is typing.Union:
        for arg in typing.get_args(annotation):
            kind, inner = _inner_struct(arg)
            if kind != "other":
                return kind, inner
        return "other", None
    if origin is list:
        kind, inner = _inner_struct(typing.get_args(annotation)[0])
        return ("list", inner) if kind == "struct" else ("other", None)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return "struct", annotation
    return "other", None


def _fields_of(struct_type: type) -> dict[str, tuple[str, type | None]]:
    cached = _FIELD_CACHE.get(struct_type)
    if cached is None:
        import typing

        hints = typing.get_type_hints(struct_type, include_extras=True)
        cached = {f.name: _inner_struct(hints[f.name]) for f in msgspec.structs.fields(struct_type)}
        _FIELD_CACHE[struct_type] = cached
    return cached


MAX_UNKNOWN_KEY_WARNINGS = 20
_KEY_SHOWN = 80


def _shown_key(key: Any) -> str:
    """A key as a warning shows it: one line, control characters escaped, long keys cut."""
    text = str(key)
    cut = text[:_KEY_SHOWN]
    cut = re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", lambda m: m.group(0).encode("unicode_escape").decode("ascii"), cut)
    return cut + (f"... ({len(text):,} characters)" if len(text) > _KEY_SHOWN else "")


def _unknown_key_warnings(unknown: list[tuple[str, str]], hidden: int) -> Iterable[str]:
    """A warning for every key the contract does not know, with its "did you mean"; then one line
    counting those past ``MAX_UNKNOWN_KEY_WARNINGS``."""
    for where, hint in unknown:
        yield f"unknown key `{where}` is kept but not used{hint}"
    if hidden:
        yield f"{hidden:,} more unknown keys are kept but not used (only the first {MAX_UNKNOWN_KEY_WARNINGS} are named)"


_NESTED_CACHE: dict[type, tuple[frozenset[str], tuple[tuple[str, bool, type], ...]]] = {}


def _nested(struct_type: type) -> tuple[frozenset[str], tuple[tuple[str, bool, type], ...]]:
    """A struct's field names, and (name, is a list, struct type) of its fields that hold structs."""
    cached = _NESTED_CACHE.get(struct_type)
    if cached is None:
        fields = _fields_of(struct_type)
        cached = (frozenset(fields), tuple((name, kind == "list", inner) for name, (kind, inner) in fields.items()
                                          if inner is not None))
        _NESTED_CACHE[struct_type] = cached
    return cached


def _all_keys_known(value: Any, struct_type: type) -> bool:
    """Whether every key under ``value`` is a field the contract knows (the common case, checked
    without naming anything; ``_unknown_keys`` names the keys when it is not)."""
    if not isinstance(value, dict):
        return True
    names, nested = _nested(struct_type)
    if not names.issuperset(value):
        return False
    for name, many, inner in nested:
        child = value.get(name)
        if child is None:
            continue
        if many:
            if isinstance(child, list) and not all(_all_keys_known(item, inner) for item in child):
                return False
        elif not _all_keys_known(child, inner):
            return False
    return True


def unknown_fields(document: dict[str, Any]) -> list[str]:
    """Every key of a run document the model does not know, as ``where (did you mean `x`?)``,
    the first ``MAX_UNKNOWN_KEY_WARNINGS`` of them."""
    unknown, _ = _unknown_keys(document)
    return [f"{where}{hint}" for where, hint in unknown]


def _unknown_keys(canonical: dict[str, Any], bare: set[int] | frozenset[int] = frozenset()) -> tuple[list[tuple[str, str]], int]:
    """(path, " (did you mean `x`?)" or "") of every key the contract does not know, in the file's
    order, up to ``MAX_UNKNOWN_KEY_WARNINGS``, and how many more there are. Iterations in ``bare``
    were written without the ``iteration_telemetry:`` wrapper, and their keys are named as written."""
    if _all_keys_known(canonical, RunFile):
        return [], 0
    stack: list[tuple[Any, type, str]] = [(canonical, RunFile, "")]
    unknown: list[tuple[str, str]] = []
    hidden = 0
    while stack:  # depth first, in the file's order
        value, struct_type, where = stack.pop()
        if not isinstance(value, dict):
            continue
        fields = _fields_of(struct_type)
        children: list[tuple[Any, type, str]] = []
        for key, child in value.items():
            spec = fields.get(key)
            if spec is None:
                if len(unknown) >= MAX_UNKNOWN_KEY_WARNINGS:
                    hidden += 1
                    continue
                here = f"{where}.{_shown_key(key)}" if where else _shown_key(key)
                name = str(key)
                candidates = list(fields)
                if struct_type is IterationTelemetry:  # a misspelt wrapper reads as a bare record's key
                    candidates += ["iteration_telemetry", "iteration_feedback"]
                close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75) if len(name) <= 64 else []
                unknown.append((here, f" (did you mean `{close[0]}`?)" if close else ""))
                continue
            here = f"{where}.{key}" if where else str(key)
            if (key == "iteration_telemetry" and struct_type is Entry and where.startswith("iterations[")
                    and int(where[len("iterations["):-1]) in bare):
                here = where  # written without the wrapper: name its keys as written
            kind, inner = spec
            if kind == "struct" and inner is not None:
                children.append((child, inner, here))
            elif kind == "list" and inner is not None and isinstance(child, list):
                children.extend((item, inner, f"{here}[{index}]") for index, item in enumerate(child))
        stack.extend(reversed(children))
    return unknown, hidden
