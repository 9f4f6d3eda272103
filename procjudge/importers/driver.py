"""The one import loop: a format's reader yields the runs its logs hold, as :class:`Task` values;
:func:`drive` makes each one, with the one ladder of what can go wrong, and writes it through one
:class:`~procjudge.importers.base.Writer`. What the import did comes back as :class:`Imported`:
the runs written, the errors and notes, and what became of each file (new, already there and
unchanged, written beside an earlier import's file of the same name, replaced).

A format's ``import_files`` is then one call::

    def import_files(paths, out, agent=None, overwrite=False):
        return drive(tasks(paths, agent), out, paths, overwrite)

where ``tasks`` reads the logs and yields a ``Task`` per run (and an ``ImportIssue`` for what it
could not read: a line that is not JSON, a log that is not the format).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..model import RunFile
from .base import UNREADABLE, ImportIssue, NothingLogged, Writer, Writes, produced

Made = tuple[str, str, "RunFile | dict[str, Any]"]  # (agent, task id, run: typed, or a plug-in's plain document)


class Task(NamedTuple):
    """One run a log holds: where (``path``, ``line``), how to make it (``make()`` gives the agent,
    the task id and the run document, or raises :class:`NothingLogged` or one of ``UNREADABLE``),
    and how the messages about it read: ``label`` leads them ("sample 3", a task id), ``what``
    names what the log should have been in an error ("an OpenHands instance"), ``cut`` bounds the
    error's text. ``records``: what ``make`` reads, to read again without the values of a kind it
    cannot read (:func:`~procjudge.importers.base.produced`); None: the readers' own re-read."""

    path: str
    line: int
    make: Callable[[], Made]
    label: str = ""
    what: str = ""
    records: list[Any] | None = None
    cut: int | None = None


@dataclass
class Imported:
    """What an import did: the runs written, the issues (errors, and notes: ``note``), and what
    became of each file written. It unpacks as the importer protocol's ``(written, issues)``."""

    written: int = 0
    issues: list[ImportIssue] = field(default_factory=list)
    writes: Writes = field(default_factory=Writes)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.written, self.issues))

    def add(self, other: Imported | tuple[int, list[ImportIssue]]) -> None:
        """Count another import's outcome in this one (a plug-in's plain pair counts as new files)."""
        written, issues = other
        self.written += written
        self.issues += issues
        if isinstance(other, Imported):
            self.writes.add(other.writes)
        else:
            self.writes.new += written


def drive(tasks: Iterable[Task | ImportIssue], out: str, inputs: list[str], overwrite: bool = False) -> Imported:
    """Make and write every run ``tasks`` yields (an ImportIssue it yields is kept as it is), under
    ``out`` and never over one of ``inputs``; with ``overwrite`` a file of the same name is
    replaced. Nothing to judge is a note and anything unreadable an error, each at its task's file
    and line; either costs that run only."""
    writer = Writer(out, inputs, overwrite)
    done = Imported(writes=writer.writes)
    for task in tasks:
        if isinstance(task, ImportIssue):
            done.issues.append(task)
        else:
            done.written += _write(writer, done.issues, task)
    return done


def _write(writer: Writer, issues: list[ImportIssue], task: Task) -> int:
    lead = f"{task.label}: " if task.label else ""
    try:
        agent, name, document = produced(task.make, task.records)
    except NothingLogged as exc:
        issues.append(ImportIssue(task.path, task.line, f"{lead}{exc}", note=True))
        return 0
    except UNREADABLE as exc:
        text = str(exc) if task.cut is None else str(exc)[:task.cut]
        issues.append(ImportIssue(task.path, task.line, f"{lead}{f'not {task.what}: ' if task.what else ''}{text}"))
        return 0
    return writer.put(task.path, task.line, agent, name, document, issues)


def one_run_per_file(paths: list[str], make: Callable[[str], Made], what: str,
                     jobs: int = 1) -> Iterator[Task | ImportIssue]:
    """The runs of logs that hold one run each: ``make(path)`` gives (agent, task, run document);
    nothing to judge is a note, anything unreadable an error naming ``what`` the file should be.
    With ``jobs`` above 1 the files are read in that many worker processes and yielded in input
    order, so the output is the same byte for byte."""
    for path, (kind, value) in zip(paths, _produced_all(paths, make, jobs), strict=True):
        if kind == "note":
            yield ImportIssue(path, 1, str(value), note=True)
        elif kind == "error":
            yield ImportIssue(path, 1, f"not {what}: {value}")
        else:
            yield Task(path, 1, functools.partial(_given, value))


def _given(value: Made) -> Made:
    return value


def named(agent: str, task: str, make: Callable[[], RunFile | dict[str, Any]]) -> Callable[[], Made]:
    """A ``Task.make`` for a run whose agent and task id are known before it is made."""
    return functools.partial(_named, agent, task, make)


def _named(agent: str, task: str, make: Callable[[], RunFile | dict[str, Any]]) -> Made:
    return agent, task, make()


@dataclass(frozen=True)
class Engine:
    """Where :func:`one_run_per_file` reads its files when ``jobs`` is above 1: ``local`` forked
    worker processes, or ``dask``: the Dask cluster at ``scheduler``, else a local one of
    ``jobs`` worker processes (``pip install 'procjudge[dask]'``). The runs come back to this
    process and are written here, in input order, so the output is the same either way."""

    name: str = "local"
    scheduler: str | None = None


_ENGINE: list[Engine] = [Engine()]


@contextlib.contextmanager
def engine(chosen: Engine) -> Iterator[None]:
    """Read the files of the imports inside the block on ``chosen`` (``import ... --engine dask``)."""
    _ENGINE.append(chosen)
    try:
        yield
    finally:
        _ENGINE.pop()


# the make function of the pool's import (inherited by forked workers, never pickled)
_MAKE: list[Callable[[str], Any]] = []


def _produce_one(path: str) -> tuple[str, Any]:
    """("run", (agent, task, document)), ("note", why) or ("error", why) for one file."""
    return produce_with(_MAKE[-1], path)


def produce_with(make: Callable[[str], Any], path: str) -> tuple[str, Any]:
    """:func:`_produce_one` with its make function given (a Dask worker receives it pickled)."""
    try:
        return "run", produced(functools.partial(make, path))
    except NothingLogged as exc:
        return "note", str(exc)
    except UNREADABLE as exc:
        return "error", str(exc)


FILES_PER_TASK = 16  # the files one Dask task reads: the task's own cost is paid once for them


def _produce_many(make: Callable[[str], Any], paths: list[str]) -> list[tuple[str, Any]]:
    """A Dask task: each file's outcome; a file whose reading failed otherwise costs itself only
    (on a cluster an archive's import does not stop for one file)."""
    out = []
    for path in paths:
        try:
            out.append(produce_with(make, path))
        except Exception as exc:  # noqa: BLE001 - named, and the task's other files still read
            out.append(("error", _failed_on_dask(exc)))
    return out


def _failed_on_dask(exc: BaseException) -> str:
    return f"the Dask task reading this file failed: {type(exc).__name__}: {exc}"[:300]


def _on_dask(paths: list[str], make: Callable[[str], Any], jobs: int, scheduler: str | None) -> Iterator[tuple[str, Any]]:
    """Each file's outcome in input order, read on a Dask cluster ``FILES_PER_TASK`` files a task;
    a task that fails there (its worker died, or the cluster could not run it) costs its files,
    each named."""
    from ..dask import map_ordered

    chunks = [paths[k: k + FILES_PER_TASK] for k in range(0, len(paths), FILES_PER_TASK)]
    for chunk, (ok, value) in zip(chunks, map_ordered(_produce_many, chunks, scheduler, jobs, shared=make), strict=True):
        if ok:
            yield from value
        else:
            yield from (("error", _failed_on_dask(value)) for _ in chunk)


def _produced_all(paths: list[str], make: Callable[[str], Any], jobs: int) -> Iterator[tuple[str, Any]]:
    """Each file's outcome in input order; on the Dask cluster of :func:`engine` when one is
    chosen; else in ``jobs`` forked worker processes when above 1 (and the platform forks), at
    most eight files a worker ahead of what has been written. A worker that dies (killed, out of
    memory) costs the file it held, named; the files after it are read here."""
    import multiprocessing

    chosen = _ENGINE[-1]
    if chosen.name == "dask" and paths:
        yield from _on_dask(paths, make, jobs, chosen.scheduler)
        return
    _MAKE.append(make)
    try:
        if jobs <= 1 or len(paths) < 2 or "fork" not in multiprocessing.get_all_start_methods():
            yield from (_produce_one(path) for path in paths)
            return
        import collections
        from concurrent.futures import Future, ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
        window: collections.deque[Future[tuple[str, Any]]] = collections.deque()
        ahead = iter(paths)
        done = 0
        try:
            while True:
                while len(window) < jobs * 8:
                    path = next(ahead, None)
                    if path is None:
                        break
                    window.append(pool.submit(_produce_one, path))
                if not window:
                    return
                try:
                    outcome = window.popleft().result()
                except BrokenProcessPool:
                    yield "error", "the worker reading this file died (killed, or out of memory)"
                    done += 1
                    yield from (_produce_one(path) for path in paths[done:])
                    return
                done += 1
                yield outcome
        finally:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                if process.is_alive() and sys.exc_info()[0] is not None:
                    process.kill()
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        _MAKE.pop()
