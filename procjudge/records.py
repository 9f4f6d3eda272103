"""Many runs per file: JSON Lines (``.jsonl``, ``.ndjson``; also ``.gz`` and ``.zst``), and the
pure function that scores one record.

A JSON-lines file holds one run per line, each a JSON object in any shape a run file may have
(``{"run": ..., "iterations": [...]}``, a list of records, one bare record). A run's path is
``FILE:LINE`` wherever it is shown, and an error or an annotation points at that line. Lines are
streamed, so a file of a million runs is read in bounded memory; a line longer than
``MAX_RECORD_BYTES`` is an error at its line and is skipped without being held. A file whose first
record is not a run (another tool's log) is one error, not one per line.

:func:`score_record` is what the batch workers, the Dask integration and a Spark job call: pure,
picklable, from bytes (or an already parsed object) and a policy to a verdict.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import IO, Any

import msgspec

from .discovery import RECORD_SUFFIXES as SUFFIXES
from .loading import LoadError, load_run
from .locate import regular_file_problem
from .model import Run
from .policy import DEFAULT, Limits, Policy
from .verdict import Verdict

MAX_RECORD_BYTES = 64 * 1024 * 1024
RUN_KEYS = (b'"iterations"', b'"iteration_telemetry"', b'"score"', b'"test_results"')


def is_records(path: str) -> bool:
    """Whether a path names a JSON-lines file of runs (by its suffix)."""
    return path.lower().endswith(SUFFIXES)


def numbered_lines(handle: IO[bytes], first: int = 1, end: int | None = None,
                   limit: int | None = None) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line) for each line of a binary stream, up to the byte offset ``end``;
    a line longer than ``limit`` bytes is read past in pieces, never held whole, and given as None."""
    limit = MAX_RECORD_BYTES if limit is None else limit
    number = first - 1
    while end is None or handle.tell() < end:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            while True:
                rest = handle.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, raw


def too_long(path: str, line: int) -> LoadError:
    return LoadError(path, f"line is longer than {MAX_RECORD_BYTES // 2**20} MiB; skipped", line=line)


def not_runs(path: str, line: int) -> LoadError:
    """The one error for a JSON-lines file whose first record is not a run."""
    return LoadError(path, "not a file of runs: its first record has no iterations, score or test results "
                           "(another tool's log? procjudge import reads those)", line=line)


def read_records(path: str, limits: Limits = DEFAULT.limits) -> Generator[tuple[int, bytes | LoadError], None, None]:
    """(line number, the line's bytes or the error at that line) for every non-blank line; a
    compressed file is read within ``limits`` (``procjudge.bounded``), and a stream that is cut
    short, corrupt or beyond a limit ends with an error at the line it reached."""
    from .bounded import InputLimit, open_input

    problem = regular_file_problem(path)
    if problem is not None:
        yield 1, LoadError(path, problem)
        return
    try:
        handle = open_input(path, limits)
    except InputLimit as exc:
        yield 1, LoadError(path, str(exc))
        return
    except OSError as exc:
        yield 1, LoadError(path, f"cannot read: {exc.strerror or exc}")
        return
    number = 0
    try:
        with handle:
            for number, record in run_lines(path, handle, limits=limits):
                yield number, record
    except (OSError, EOFError, ValueError) as exc:  # InputLimit: cut short, corrupt, beyond a limit
        where = f"cannot read past line {number:,}" if number else "cannot read it"
        yield number + 1, LoadError(path, f"{where}: {exc}", line=number + 1)


def run_lines(path: str, handle: IO[bytes], first: int = 1, end: int | None = None,
              check_first: bool = True, limits: Limits = DEFAULT.limits) -> Iterator[tuple[int, bytes | LoadError]]:
    """(line number, the record or the error at that line) for the non-blank lines of an open
    JSON-lines stream (from line ``first``, up to the byte offset ``end``); with ``check_first``,
    a first record that is not a run ends the stream with one error. A line past ``limits.lines``
    ends the stream with one error."""
    from .bounded import line_limit

    for number, raw in numbered_lines(handle, first, end):
        beyond = line_limit(limits, number)
        if beyond is not None:
            yield number, LoadError(path, str(beyond), line=number)
            return
        if raw is None:
            yield number, too_long(path, number)
            continue
        if not raw.strip():
            continue
        if check_first:
            check_first = False
            if not any(key in raw for key in RUN_KEYS):
                yield number, not_runs(path, number)
                return
        yield number, raw


def record_path(path: str, line: int) -> str:
    """How a run of a JSON-lines file is named: ``FILE:LINE``."""
    return f"{path}:{line}"


def load_record(data: bytes | dict[str, Any] | list[Any], source: str = "<record>", line: int | None = None) -> Run:
    """One record as a validated Run; LoadError at ``source`` (and ``line``) when it is not one."""
    name = record_path(source, line) if line is not None else source
    if not isinstance(data, (bytes, bytearray)):
        data = msgspec.json.encode(data)
    try:
        return load_run(name, bytes(data), json=True)
    except LoadError as exc:
        raise LoadError(source, exc.reason, line=line if line is not None else exc.line,
                        column=exc.column if line is None or exc.line in (None, 1) else None, field=exc.field) from None


def score_record(data: bytes | dict[str, Any] | list[Any], policy: Policy = DEFAULT, source: str = "<record>",
                 line: int | None = None) -> Verdict:
    """Score one run given as JSON bytes or a parsed object: pure and picklable (what a batch
    worker, a Dask task or a Spark ``mapInPandas`` function calls). Raises LoadError on a record
    that is not a run."""
    from .judge import judge

    return judge(load_record(data, source, line), policy)
