"""What every importer shares: bounded reading, one run file per task, safe writes, errors with
file and line, and the registry that ``procjudge import auto`` and third-party importers use.

An importer turns another tool's log into run files. Every document is checked against the typed
model (:class:`procjudge.model.RunFile`) before it is written, so an importer can never write a
file ``score`` would refuse: a value out of range or of the wrong type is an error at import
time, at the record's file and line.

**Third-party importers.** A package can ship an importer as an entry point in the group
``procjudge.importers``; the object it names needs ``name`` (the command word), ``summary`` (one
line), ``detect(path, head) -> bool`` (``head`` is the file's first bytes) and
``import_files(paths, out, agent=None) -> (written, issues)``, usually one call of
:func:`procjudge.importers.driver.drive` on the runs its reader yields (which returns an
:class:`~procjudge.importers.driver.Imported`, a pair with the files' fates besides). When its
``import_files`` also takes ``overwrite``, ``--overwrite`` reaches it. It then appears in
``procjudge import list``, is tried by ``procjudge import auto`` and is chosen by
``procjudge import auto --using NAME PATH... --out DIR``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

import msgspec

from ..safe_io import WriteError
from .values import REPAIRING, fitted, loads, odd_ones

if TYPE_CHECKING:
    from ..model import RunFile

MAX_NAME = 100
MAX_LINE_BYTES = 64 * 1024 * 1024
HEAD_BYTES = 64 * 1024


class ImportIssue(Exception):
    """A record that cannot be imported: its file, line number and why (``note``: expected in the
    data, such as a task with nothing to judge; not an error)."""

    def __init__(self, path: str, line: int, reason: str, note: bool = False, unwritten: bool = False) -> None:
        super().__init__(reason)
        self.path, self.line, self.reason, self.note = path, line, reason, note
        self.unwritten = unwritten  # read, but its run file could not be written (a full disk): not the log's fault

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


class NothingLogged(ValueError):
    """A record with nothing to judge (no loop logged): reported as a note, not an error."""


def safe_name(task: str) -> str:
    """A file name for a task id: unsafe characters folded to ``_``; a long id cut, with a hash of
    the whole id so that two long ids stay apart."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", task).strip("._") or "task"
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME - 13] + "-" + hashlib.sha256(task.encode("utf-8")).hexdigest()[:12]
    return name


def typed(document: RunFile | dict[str, Any]) -> bytes:
    """A run document checked against the typed model and encoded (JSON, indented, fields in the
    model's order, every field that has a value written out: :func:`explicit`). A value the model
    refuses is left out and named in the run's notes; ValueError naming the field when it is one
    the model requires."""
    from ..model import RunFile

    # built typed, its values' limits are checked here as a plain document's are
    plain: dict[str, Any] = msgspec.to_builtins(document) if isinstance(document, RunFile) else document
    if not isinstance(document, RunFile):  # a plug-in's document: a field the model does not know would be lost
        from ..loading import unknown_fields

        unknown = unknown_fields(plain)
        if unknown:
            raise ValueError(f"the run has {'a field' if len(unknown) == 1 else 'fields'} the run model does not "
                             f"know (misspelt?): {'; '.join(unknown[:3])}")
    left_out = fitted(plain, RunFile)
    if left_out:
        run = plain.setdefault("run", {})
        run["notes"] = [*(run.get("notes") or []), _left_out_note(left_out, "the run model refuses")]
    return msgspec.json.format(msgspec.json.encode(explicit(msgspec.convert(plain, RunFile, strict=False))), indent=1)


class Encoded(NamedTuple):
    """A run already checked and encoded by :func:`typed` (and its closing newline), as a worker
    process sends it back to be written."""

    data: bytes


def encoded(document: RunFile | dict[str, Any]) -> RunFile | dict[str, Any] | Encoded:
    """``document`` encoded, or as it is when :func:`typed` refuses it (the writer then names why)."""
    try:
        return Encoded(typed(document) + b"\n")
    except ValueError:
        return document


def explicit(value: Any) -> Any:
    """A typed run as JSON values, every field that has a value written out (a count of 0, a
    status of ``modified``, a suite named ``hidden``), in the model's order: a run file says what
    it holds without the reader knowing the model's defaults."""
    if isinstance(value, msgspec.Struct):
        fields = ((name, getattr(value, name)) for name in value.__struct_fields__)
        return {name: explicit(field) for name, field in fields if field is not None}
    if isinstance(value, list):
        return [explicit(item) for item in value]
    return value


def _left_out_note(left_out: list[str], why: str) -> str:
    shown = "; ".join(left_out[:3]) + (f" (+{len(left_out) - 3} more)" if len(left_out) > 3 else "")
    return f"{len(left_out)} value(s) {why} were left out and the rest of the run kept: {shown}"


@dataclasses.dataclass
class Writes:
    """What a writer did with each run, for an import's summary line: files new, already there
    with the same content, written beside an earlier import's file of the same name, and replaced
    (``--overwrite``)."""

    new: int = 0
    unchanged: int = 0
    beside: int = 0
    replaced: int = 0

    def add(self, other: Writes) -> None:
        self.new += other.new
        self.unchanged += other.unchanged
        self.beside += other.beside
        self.replaced += other.replaced


class Writer:
    """Run files written under ``out`` and nowhere else: a folder that leads outside ``out``
    (a planted symlink) is refused, an input file is never overwritten (same device and inode),
    and two tasks whose names clean to the same file get distinct names, with a note.

    A file is published whole and only where nothing is (a hard link from a temporary file, which
    fails when the name is taken): a run already there with the same bytes is left as it is
    (importing twice changes nothing), another run of the same name is kept and this one is written
    beside it as ``name-2.json``, with a note, unless ``--overwrite`` asks for it to be replaced.
    So two imports into one folder, even at the same time, lose no run. ``writes`` counts what
    became of each file."""

    def __init__(self, out: str, inputs: list[str], overwrite: bool = False) -> None:
        if os.path.exists(out) and not os.path.isdir(out):
            raise WriteError(f"--out {out} is a file; give a folder")
        os.makedirs(out, exist_ok=True)
        self.out = out
        self.root = os.path.realpath(out)
        self.inputs = inputs
        self.overwrite = overwrite
        self.written: set[str] = set()
        self.writes = Writes()

    def check_folder(self, folder: str) -> None:
        """ValueError when ``folder`` resolves outside ``out`` (a planted symlink)."""
        real = os.path.realpath(folder)
        if real != self.root and not real.startswith(self.root + os.sep):
            raise ValueError(f"{folder} leads outside --out ({real}); refusing to write there")

    def target(self, folder: str, name: str) -> tuple[str, str | None]:
        """(path to write, a note when the name had to change); ValueError when it cannot be."""
        self.check_folder(folder)
        path, note = os.path.join(folder, name + ".json"), None
        k = 2
        while path in self.written:
            path = os.path.join(folder, f"{name}-{k}.json")
            k += 1
        if k > 2:
            note = f"another task already wrote {name}.json; this one is {os.path.basename(path)}"
        return path, note

    def write(self, path: str, document: RunFile | dict[str, Any] | Encoded) -> str | None:
        """Write one run at ``path`` (encoded here, unless a worker did it), or beside an earlier
        import's different file of that name; returns a note when it went elsewhere, or was
        replaced."""
        from ..safe_io import same_file_as

        clash = same_file_as(path, self.inputs)
        if clash is not None:
            raise ValueError(f"{path} is the input file {clash}; refusing to overwrite it")
        data = document.data if isinstance(document, Encoded) else typed(document) + b"\n"
        stem, k = path.removesuffix(".json"), 1
        candidate = path
        while True:
            outcome = _publish(candidate, data, self.overwrite and candidate == path)
            if outcome != "taken":
                break
            k += 1
            candidate = f"{stem}-{k}.json"
        self.written.add(candidate)
        setattr(self.writes, outcome, getattr(self.writes, outcome) + 1)
        if outcome == "new" and candidate != path:
            self.writes.beside += 1
            return (f"{os.path.basename(path)} holds another run from an earlier import; this one is "
                    f"{os.path.basename(candidate)} (--overwrite replaces instead)")
        if outcome == "replaced":
            return f"replaced {os.path.basename(path)}, written by an earlier import (--overwrite)"
        return None

    def put(self, source: str, line: int, agent: str, task: str, document: RunFile | dict[str, Any] | Encoded,
            issues: list[ImportIssue]) -> bool:
        """Write one task's run as ``out/<agent>/<task>.json``; a problem becomes an issue at
        ``source:line``. True when the file was written."""
        folder = os.path.join(self.out, safe_name(agent.replace("/", "__")))
        try:
            self.check_folder(folder)
            os.makedirs(folder, exist_ok=True)
            target, note = self.target(folder, safe_name(task))
            note = self.write(target, document) or note
        except (OSError, WriteError) as exc:
            issues.append(ImportIssue(source, line, str(exc), unwritten=True))
            return False
        except ValueError as exc:
            issues.append(ImportIssue(source, line, str(exc)))
            return False
        if note:
            issues.append(ImportIssue(source, line, note, note=True))
        return True


def _publish(path: str, data: bytes, replace: bool) -> str:
    """Put ``data`` at ``path`` whole: ``new`` (nothing was there), ``unchanged`` (the same bytes
    were), ``taken`` (another file is there), ``replaced`` (with ``replace``). WriteError when the
    folder cannot be written."""
    from ..safe_io import atomic_write, write_new

    if replace:
        same = _same_bytes(path, data)
        with atomic_write(path, mode="wb") as handle:
            handle.write(data)
        return "unchanged" if same else ("replaced" if same is False else "new")
    if write_new(path, data):
        return "new"
    return "unchanged" if _same_bytes(path, data) else "taken"


def _same_bytes(path: str, data: bytes) -> bool | None:
    """Whether the file at ``path`` holds exactly ``data``; None when there is none."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(data) + 1) == data
    except FileNotFoundError:
        return None
    except OSError:
        return False


# Names in a path that say nothing of the agent: what holds logs, and benchmarks' names.
GENERIC_NAMES = frozenset({"results", "result", "output", "outputs", "log", "logs", "data", "runs", "run", "out",
                           "final-results", "final_results", "samples", "predictions", "trajs", "trajectories", "traj",
                           "evaluation", "evals", "eval"})
BENCHMARK_NAME = re.compile(r"(?i)^(?:humaneval|mbpp|apps|codecontests|xcodeeval|livecodebench|ds-?1000|swe-?bench)"
                            r"(?:[-_.]?(?:et|x|plus|\+|py|python3?|lite|verified|full))*$")


def _telling(name: str) -> bool:
    return bool(name) and name.lower() not in GENERIC_NAMES and not BENCHMARK_NAME.match(name)


def agent_from_folders(path: str) -> str:
    """The agent a log's path names, for a log that names none itself: its file name and the
    nearest folder (of the three above it) that is neither generic (``results``, ``logs``,
    ``data``) nor a benchmark's name (``HumanEval``, ``mbpp``), so ``ldb/humaneval/codellama/
    results.jsonl`` is ``codellama`` and ``final-results/ChatGPT/HumanEval/ChatGPT-Reflexion-10.jsonl``
    is ``ChatGPT/ChatGPT-Reflexion-10``; the file's folder when nothing tells."""
    stem = os.path.basename(path)
    for suffix in (".gz", ".zst", ".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    folders = os.path.dirname(os.path.abspath(path)).split(os.sep)[::-1][:3]
    folder = next((name for name in folders if _telling(name)), None)
    parts = [part for part in (folder, stem if _telling(stem) else None) if part]
    return "/".join(parts) or (folders[0] if folders and folders[0] else "agent")


def benchmark_challenge(path: str, task: str) -> str:
    """A task id as its benchmark's: ``HumanEval/3`` in a ``HumanEvalET`` folder is ``HumanEvalET/3``,
    and ``mbpp_100_x`` in an ``MBPPET`` folder ``MBPPET/mbpp_100_x`` (the extended suite's run of
    the same task), so that two benchmarks' runs of one agent stay apart."""
    prefix, slash, rest = task.partition("/")
    if not slash:
        leading = re.match(r"[A-Za-z]+", task)
        prefix, rest = (leading.group(0) if leading else ""), task
    if not prefix:
        return task
    for name in os.path.dirname(os.path.abspath(path)).split(os.sep)[::-1][:3]:
        if BENCHMARK_NAME.match(name) and name.lower() != prefix.lower() and name.lower().startswith(prefix.lower()):
            return f"{name}/{rest}"
    return task


def agent_names(paths: list[str], agent: str | None) -> dict[str, str]:
    """The agent of each file: --agent, else what its path names (:func:`agent_from_folders`)."""
    return {path: agent or agent_from_folders(path) for path in paths}


def read_records(path: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object or ImportIssue) for every non-blank line of a JSON-lines file,
    streamed; a line over ``MAX_LINE_BYTES`` is skipped (read in pieces, never held whole) and
    reported."""
    from ..locate import regular_file_problem

    problem = regular_file_problem(path)
    if problem is not None:
        yield 1, ImportIssue(path, 1, problem)
        return
    from ..records import numbered_lines

    with open(path, "rb") as handle:
        for number, raw in numbered_lines(handle, limit=MAX_LINE_BYTES):
            if raw is None:
                yield number, ImportIssue(path, number, f"line is longer than {MAX_LINE_BYTES // 2**20} MiB; skipped")
                continue
            if not raw.strip():
                continue
            try:
                yield number, loads(raw)
            except (UnicodeDecodeError, RecursionError, ValueError) as exc:
                yield number, ImportIssue(path, number, f"not a JSON object: {str(exc)[:120]}")


def records_of(path: str, issues: list[ImportIssue]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every JSON object of a JSON-lines log; an unreadable line or a
    value that is not an object becomes an issue at its line, and the lines after it are read."""
    for number, record in read_records(path):
        if isinstance(record, ImportIssue):
            issues.append(record)
        elif not isinstance(record, dict):
            issues.append(ImportIssue(path, number, f"expected a JSON object, got {type(record).__name__}"))
        else:
            yield number, record


UNREADABLE = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError, OverflowError,
              RecursionError)


Produced = TypeVar("Produced")


def produced(produce: Callable[[], Produced], records: list[Any] | None = None) -> Produced:
    """``produce()``; when the log holds a value of a kind the importer cannot read, once more
    with the odd values left out (:func:`values.odd_ones`; of ``records``, or of what the
    readers read again when they are not given) and named in the run's notes. The first error
    when that does not help either."""
    try:
        return produce()
    except NothingLogged:
        raise
    except UNREADABLE as exc:
        first = exc
    left_out: list[str] = []
    token = REPAIRING.set(left_out) if records is None else None
    try:
        for record in records or []:
            left_out += odd_ones(record)
        if not left_out and records is not None:
            raise first
        result = produce()
    except NothingLogged:
        raise
    except UNREADABLE:
        raise first from None
    finally:
        if token is not None:
            REPAIRING.reset(token)
    if not left_out:
        return result
    note = _left_out_note(left_out, "of a kind the importer could not read")
    if isinstance(result, tuple):
        return cast(Produced, tuple(_noted(value, note) for value in result))
    return cast(Produced, _noted(result, note))


def _noted(value: Any, note: str) -> Any:
    """A run (typed, or a plain document) with ``note`` added to its notes; anything else as it is."""
    from ..model import RunFile

    if isinstance(value, RunFile):
        run = value.run
        return msgspec.structs.replace(value, run=msgspec.structs.replace(run, notes=[*(run.notes or []), note]))
    if isinstance(value, dict) and isinstance(value.get("run"), dict):
        value["run"]["notes"] = [*(value["run"].get("notes") or []), note]
    return value


def as_object(value: Any) -> dict[str, Any]:
    """A JSON value as an object: itself when it is one, else empty."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A JSON value as a list: itself when it is one, else empty."""
    return value if isinstance(value, list) else []


def epoch_seconds(stamp: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (no zone means UTC), or None."""
    from datetime import datetime, timezone

    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


def read_json(path: str, limit: int = 256 * 1024 * 1024) -> Any:
    """One JSON document of at most ``limit`` bytes; ValueError or OSError saying why not."""
    from ..locate import read_regular

    data = read_regular(path, limit)
    try:
        return loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def head(path: str, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a regular file (b"" for anything else)."""
    from ..locate import regular_file_problem

    if regular_file_problem(path) is not None:
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""
