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

import collections
import contextlib
import functools
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..model import RunFile
from .base import UNREADABLE, ImportIssue, NothingLogged, Writer, Writes, encoded, produced

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


def drive(tasks: Iterable[Task | ImportIssue], out: str, inputs: list[str], overwrite: bool = False,
          jobs: int = 1) -> Imported:
    """Make and write every run ``tasks`` yields (an ImportIssue it yields is kept as it is), under
    ``out`` and never over one of ``inputs``; with ``overwrite`` a file of the same name is
    replaced. Nothing to judge is a note and anything unreadable an error, each at its task's file
    and line; either costs that run only. With ``jobs`` above 1 (or on the Dask engine) the runs
    are made in worker processes and written here in the order ``tasks`` gives them: the same
    files, byte for byte."""
    writer = Writer(out, inputs, overwrite)
    done = Imported(writes=writer.writes)
    for task, outcome in _made_all(tasks, jobs):
        if isinstance(task, ImportIssue):
            done.issues.append(task)
        else:
            done.written += _write(writer, done.issues, task, outcome)
    return done


def _make(make: Callable[[], Made], records: list[Any] | None) -> tuple[str, Any]:
    """("run", (agent, task, document)), ("note", why) or ("error", why) for one run."""
    try:
        return "run", produced(make, records)
    except NothingLogged as exc:
        return "note", str(exc)
    except UNREADABLE as exc:
        return "error", str(exc)


def _write(writer: Writer, issues: list[ImportIssue], task: Task, outcome: tuple[str, Any]) -> int:
    lead = f"{task.label}: " if task.label else ""
    kind, value = outcome
    if kind == "note":
        issues.append(ImportIssue(task.path, task.line, f"{lead}{value}", note=True))
        return 0
    if kind == "error":
        text = str(value) if task.cut is None else str(value)[:task.cut]
        issues.append(ImportIssue(task.path, task.line, f"{lead}{f'not {task.what}: ' if task.what else ''}{text}"))
        return 0
    agent, name, document = value
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
    return _make(functools.partial(make, path), None)


FILES_PER_TASK = 16  # the files one Dask task reads: the task's own cost is paid once for them


def _dask_chunk(work: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    """A Dask task: ``work(item)`` for each item; one whose work failed otherwise costs itself only
    (on a cluster an archive's import does not stop for one file)."""
    out = []
    for item in items:
        try:
            out.append(work(item))
        except Exception as exc:  # noqa: BLE001 - named, and the task's other items still worked
            out.append(("error", _failed_on_dask(exc)))
    return out


def _failed_on_dask(exc: BaseException) -> str:
    return f"the Dask task reading this file failed: {type(exc).__name__}: {exc}"[:300]


def _on_dask(chunks: Iterable[list[Any]], work: Callable[[Any], Any], jobs: int,
             scheduler: str | None) -> Iterator[Any]:
    """Each item's outcome in input order, ``work`` (sent to the workers once) done on a Dask
    cluster a chunk a task; a task that fails there (its worker died, or the cluster could not run
    it) costs its items, each named."""
    from ..dask import map_ordered

    sizes: collections.deque[int] = collections.deque()

    def sent() -> Iterator[list[Any]]:
        for chunk in chunks:
            sizes.append(len(chunk))
            yield chunk

    for ok, value in map_ordered(_dask_chunk, sent(), scheduler, jobs, shared=work):
        size = sizes.popleft()
        yield from value if ok else [("error", _failed_on_dask(value))] * size


def _produced_all(paths: list[str], make: Callable[[str], Any], jobs: int) -> Iterator[tuple[str, Any]]:
    """Each file's outcome in input order; on the Dask cluster of :func:`engine` when one is
    chosen; else in ``jobs`` forked worker processes when above 1 (and the platform forks), at
    most eight files a worker ahead of what has been written. A worker that dies (killed, out of
    memory) costs the file it held, named, when it dies again reading that file alone."""
    chosen = _ENGINE[-1]
    if chosen.name == "dask" and paths:
        chunks = (paths[k: k + FILES_PER_TASK] for k in range(0, len(paths), FILES_PER_TASK))
        yield from _on_dask(chunks, functools.partial(produce_with, make), jobs, chosen.scheduler)
        return
    _MAKE.append(make)
    try:
        if jobs <= 1 or len(paths) < 2 or not _forks():
            yield from (_produce_one(path) for path in paths)
            return
        yield from _pooled(([path] for path in paths), _produce_each, jobs,
                           "the worker reading this file died (killed, or out of memory)")
    finally:
        _MAKE.pop()


def _produce_each(paths: list[str]) -> list[tuple[str, Any]]:
    """A worker's task: each file's outcome, a run encoded here (the writer's work, spread)."""
    return [_encoded(_produce_one(path)) for path in paths]


def _encoded(outcome: tuple[str, Any]) -> tuple[str, Any]:
    kind, value = outcome
    if kind != "run":
        return outcome
    agent, name, document = value
    return kind, (agent, name, encoded(document))


def _forks() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _pooled(chunks: Iterable[list[Any]], work: Callable[[list[Any]], list[Any]], jobs: int,
            died: str) -> Iterator[Any]:
    """The outcome of each item of each chunk, ``work(chunk)`` run in ``jobs`` forked worker
    processes, in input order, at most eight chunks a worker ahead. When a worker dies (killed,
    out of memory) every chunk in flight fails with it: the first is worked again alone in a
    worker of its own, and costs its items, each ``("error", died)``, only when that one dies
    too; the pool starts afresh for the others."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    pool = _fork_pool(jobs)
    window: collections.deque[tuple[list[Any], Future[list[Any]]]] = collections.deque()
    ahead = iter(chunks)
    try:
        while True:
            while len(window) < jobs * 8:
                chunk = next(ahead, None)
                if chunk is None:
                    break
                window.append((chunk, pool.submit(work, chunk)))
            if not window:
                return
            chunk, future = window.popleft()
            try:
                outcomes = future.result()
            except BrokenProcessPool:
                outcomes = _alone(work, chunk, died)
                _stop(pool)
                pool = _fork_pool(jobs)
                window = collections.deque((later, _again(pool, work, later, done)) for later, done in window)
            yield from outcomes
    finally:
        _stop(pool)


def _fork_pool(jobs: int) -> Any:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))


def _stop(pool: Any) -> None:
    """Shut ``pool`` down; its workers are killed when an exception is on its way out."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive() and sys.exc_info()[0] is not None:
            process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def _again(pool: Any, work: Callable[[list[Any]], list[Any]], chunk: list[Any], done: Any) -> Any:
    """``done`` when its chunk was worked before the pool broke, else the chunk sent to ``pool``."""
    return done if done.done() and not done.cancelled() and done.exception() is None else pool.submit(work, chunk)


def _alone(work: Callable[[list[Any]], list[Any]], chunk: list[Any], died: str) -> list[Any]:
    """``work(chunk)`` in a worker of its own; when that one dies too, each item alone in its own,
    and an item whose worker dies still is ``("error", died)``."""
    from concurrent.futures.process import BrokenProcessPool

    pool = _fork_pool(1)
    try:
        result: list[Any] = pool.submit(work, chunk).result()
        return result
    except BrokenProcessPool:
        if len(chunk) == 1:
            return [("error", died)]
    finally:
        _stop(pool)
    return [outcome for item in chunk for outcome in _alone(work, [item], died)]


CHUNK_RUNS, CHUNK_BYTES = 16, 64 * 1024  # the runs one worker task makes: at most this many, or this much pickled


def _made_all(tasks: Iterable[Task | ImportIssue], jobs: int) -> Iterator[tuple[Task | ImportIssue, tuple[str, Any]]]:
    """Each task with its outcome (an issue with none), in the order ``tasks`` gives them: made
    here; on the Dask cluster of :func:`engine` when one is chosen; else in ``jobs`` forked worker
    processes when above 1. A worker receives each task's ``make`` and ``records`` pickled
    together, small runs several at a time (``CHUNK_RUNS``, ``CHUNK_BYTES``); a task that cannot
    be pickled (a plug-in's closure) is made here, in its place."""
    chosen = _ENGINE[-1]
    if chosen.name != "dask" and (jobs <= 1 or not _forks()):
        for task in tasks:
            yield task, _NO_MAKING if isinstance(task, ImportIssue) else _make(task.make, task.records)
        return
    pending: collections.deque[tuple[Task | ImportIssue, bytes | None]] = collections.deque()

    def chunks() -> Iterator[list[bytes | None]]:
        chunk: list[bytes | None] = []
        size = 0
        for task in tasks:
            payload = _payload(task)
            pending.append((task, payload))
            chunk.append(payload)
            size += len(payload or b"")
            if len(chunk) >= CHUNK_RUNS or size >= CHUNK_BYTES:
                yield chunk
                chunk, size = [], 0
        if chunk:
            yield chunk

    outcomes = (_on_dask(chunks(), _made_from, jobs, chosen.scheduler) if chosen.name == "dask"
                else _pooled(chunks(), _make_chunk, jobs, "the worker making this run died (killed, or out of memory)"))
    for outcome in outcomes:
        task, payload = pending.popleft()
        if isinstance(task, ImportIssue):
            yield task, _NO_MAKING
        else:
            yield task, outcome if payload is not None else _make(task.make, task.records)


_NO_MAKING = ("issue", None)


def _payload(task: Task | ImportIssue) -> bytes | None:
    """What a worker makes ``task`` from: its make function and records pickled together (so that
    a record the make function holds is the one a second reading repairs); None for an issue, or
    a task that cannot be pickled (made here)."""
    if isinstance(task, ImportIssue):
        return None
    try:
        return pickle.dumps((task.make, task.records), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


def _make_chunk(payloads: list[bytes | None]) -> list[tuple[str, Any] | None]:
    """A worker's task: each pickled task's outcome (:func:`_made_from`)."""
    return [_made_from(payload) for payload in payloads]


def _made_from(payload: bytes | None) -> tuple[str, Any] | None:
    """A pickled task's outcome, its run encoded here (the writer's work, spread); None for one
    made in the process that asked."""
    if payload is None:
        return None
    make, records = pickle.loads(payload)
    return _encoded(_make(make, records))
