"""Scoring on Dask: partitions of run files and of JSON-lines byte ranges, scored on the workers.

    import procjudge.dask
    runs = procjudge.dask.score_paths(["runs/"])            # a dask.dataframe of runs
    runs.to_parquet("scored/")                               # or .compute(), .groupby(...)
    items = procjudge.dask.score_paths(["runs/"], table="items")

and ``procjudge batch runs/ --engine dask [--scheduler tcp://host:8786]``, which sends the same
partitions to a cluster (a local one of ``--jobs`` worker processes when no scheduler is named)
and streams the results back, in order, into the usual reports: the output is the same as with
``--jobs``.

A partition is a list of run files, a byte range of a plain JSON-lines file (cut at line ends,
with the number of its first line), or a whole compressed JSON-lines file (a gzip or zstd stream
cannot be entered in the middle). Each is scored by :func:`score_partition`, a plain function of
the partition and the policy: the workers need procjudge installed, nothing else. Dask itself is
an optional extra: ``pip install 'procjudge[dask]'``.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

import msgspec

from .batch import Task, score_task, tasks
from .loading import LoadError
from .policy import DEFAULT, Limits, Policy
from .records import is_records, run_lines
from .render.parquet import COLUMNS
from .results import Result, UsageError

BLOCK_BYTES = 32 * 2**20  # a JSON-lines partition: about 6,000 runs of 5 KB
FILES_PER_PARTITION = 500


class Partition(msgspec.Struct, frozen=True):
    """What one task scores: ``files`` (run files), or a JSON-lines ``path`` with the byte range
    ``start``..``end`` whose first line is ``line`` (``end`` -1: the whole, compressed file)."""

    files: list[str] = []
    path: str = ""
    start: int = 0
    end: int = -1
    line: int = 1


def partitions(paths: list[str], block: int = BLOCK_BYTES, files: int = FILES_PER_PARTITION) -> list[Partition]:
    """The partitions of the paths, in order. A plain JSON-lines file is cut into blocks of about
    ``block`` bytes at line ends, its newlines counted once here so that every run keeps its line."""
    return list(iter_partitions(paths, block, files))


def iter_partitions(paths: list[str], block: int = BLOCK_BYTES, files: int = FILES_PER_PARTITION) -> Iterator[Partition]:
    """``partitions``, each made when it is asked for: ``batch --engine dask`` sends the first
    blocks of a large file to the workers while the parent is still cutting the rest (counting the
    newlines of a million runs, 5 GB, takes seconds)."""
    pending: list[str] = []
    for path in paths:
        if not is_records(path):
            pending.append(path)
            if len(pending) >= files:
                yield Partition(files=pending)
                pending = []
            continue
        if pending:
            yield Partition(files=pending)
            pending = []
        if path.lower().endswith((".gz", ".zst")):
            yield Partition(path=path)
            continue
        yield from _ranges(path, block)
    if pending:
        yield Partition(files=pending)


def _ranges(path: str, block: int) -> Iterator[Partition]:
    size = os.path.getsize(path)
    if size == 0:
        yield Partition(path=path, start=0, end=0)
        return
    start, line = 0, 1
    with open(path, "rb") as handle:
        while start < size:
            handle.seek(min(size, start + block))
            handle.readline()  # to the end of the line the cut falls in
            end = min(size, handle.tell()) if start + block < size else size
            handle.seek(start)
            newlines = 0
            remaining = end - start
            while remaining > 0:
                chunk = handle.read(min(remaining, 8 * 2**20))
                if not chunk:
                    break
                newlines += chunk.count(b"\n")
                remaining -= len(chunk)
            yield Partition(path=path, start=start, end=end, line=line)
            start, line = end, line + newlines


def _tasks(partition: Partition, limits: Limits = DEFAULT.limits) -> Iterator[Task]:
    if partition.files:
        yield from partition.files
        return
    if partition.end < 0:
        yield from tasks([partition.path], limits)
        return
    with open(partition.path, "rb") as handle:
        handle.seek(partition.start)
        for number, record in run_lines(partition.path, handle, partition.line, partition.end,
                                        check_first=partition.start == 0, limits=limits):
            if isinstance(record, LoadError):
                yield partition.path, number, str(record)
            else:
                yield partition.path, number, record


def score_partition(partition: Partition, policy: Policy = DEFAULT, want_lines: bool = False,
                    want_verdict: bool = True, want_detail: bool = False) -> bytes:
    """Score one partition: its results as MessagePack (``list[Result]``), in order."""
    return msgspec.msgpack.encode([score_task(task, policy, want_lines, want_verdict, want_detail)
                                   for task in _tasks(partition, policy.limits)])


def _frame(partition: Partition, policy: Policy, table: str) -> Any:
    import pandas as pd

    from .render.parquet import item_rows, run_row

    rows: list[dict[str, Any]] = []
    for result in (score_task(task, policy, want_verdict=table == "items") for task in _tasks(partition, policy.limits)):
        if result.row is None:
            if table == "errors":
                rows.append({"path": result.path, "line": result.error_line, "message": result.error})
            continue
        if table == "runs":
            rows.append(run_row(result.row))
        elif table == "items":
            verdict = result.verdict()
            rows += item_rows(result.row, verdict) if verdict is not None else []
    return pd.DataFrame(rows, columns=list(_META[table]))


# The Parquet tables' columns, as the partitions build them (no nullable extension dtypes: a
# missing integer is NaN, a missing string None)
_PLAIN = {"string": "object", "Int64": "float64", "boolean": "object"}
_ALWAYS = frozenset(["iterations_used", "warnings"])  # integers every run has: int64, not float64


def _plain(name: str, kind: str) -> str:
    return "int64" if kind == "Int64" and name in _ALWAYS else _PLAIN.get(kind, kind)


_META: dict[str, dict[str, str]] = {
    **{table: {name: _plain(name, kind) for name, kind in COLUMNS[table].items()} for table in ("runs", "items")},
    "errors": {"path": "object", "line": "float64", "message": "object"},
}


def score_paths(targets: list[str], policy: Policy = DEFAULT, table: str = "runs", block: int = BLOCK_BYTES) -> Any:
    """A ``dask.dataframe.DataFrame`` of the runs (``table="runs"``), their items (``"items"``) or
    the records that could not be scored (``"errors"``) under folders, files and globs (found as
    ``procjudge batch`` finds them). Nothing is scored until it is computed."""
    import dask
    import dask.dataframe as dd
    import pandas as pd

    from .discovery import discover

    if table not in _META:
        raise ValueError(f"table is one of {', '.join(_META)}, not {table!r}")
    parts = partitions(discover(targets), block=block)
    meta = pd.DataFrame({name: pd.Series(dtype=kind) for name, kind in _META[table].items()})
    if not parts:
        return dd.from_pandas(meta, npartitions=1)
    delayed = [dask.delayed(_frame)(part, policy, table) for part in parts]
    return dd.from_delayed(delayed, meta=meta, verify_meta=False)


# What procjudge's own local cluster turns down (a cluster named by ``--scheduler`` is its owner's
# to configure). Each wakes a thread of every worker process, which then takes the interpreter
# lock from the thread that scores; two idle workers on two cores used 11 to 17% of a core with
# Dask's defaults and 1.5 to 1.8% with these (benchmarks/bench_dask.py; docs/scale.md).
QUIET = {
    "distributed.worker.profile.enabled": False,  # a sample of the scoring thread's stack every 10 ms
    "distributed.admin.tick.interval": "1s",  # the event loop's watchdog, every 20 ms
    "distributed.admin.system-monitor.interval": "5s",  # CPU, memory and network read every 500 ms
    "distributed.worker.memory.monitor-interval": "1s",  # the memory limit checked every 100 ms
}


def quiet_settings() -> dict[str, Any]:
    """The ``QUIET`` settings the user has not set: a value from a Dask configuration file or a
    ``DASK_...`` variable is the user's, and kept, as is one the program set (``dask.config.set``)
    to other than Dask's default."""
    import dask.config
    import distributed  # noqa: F401 - registers its defaults

    defaults = dask.config.merge(*dask.config.defaults)
    chosen = dask.config.collect()  # the files and the environment, without the defaults
    unset = object()
    settings = {}
    for key, value in QUIET.items():
        default = dask.config.get(key, default=unset, config=defaults)
        if default is unset:  # a setting this version of Dask does not have
            continue
        if dask.config.get(key, default=unset, config=chosen) is unset and dask.config.get(key) == default:
            settings[key] = value
    return settings


def local_cluster(workers: int, quiet: bool = True) -> Any:
    """The cluster ``batch --engine dask`` starts when no scheduler is named: ``workers`` processes
    of one thread each, with the ``quiet_settings`` (``quiet=False``: Dask's own, to compare)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(quiet_settings() if quiet else {}):  # the nannies hand the settings to the workers they start
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                            silence_logs=40)


class SchedulerUnreachable(UsageError):
    """``--scheduler``'s cluster could not be reached: the command exits 2 saying so."""


def connect(scheduler: str | None, workers: int) -> tuple[Any, Any]:
    """A client of ``scheduler``'s cluster, or of a local one of ``workers`` processes (then the
    cluster too, for the caller to close); a scheduler that cannot be reached is a
    :class:`SchedulerUnreachable` naming it."""
    from distributed import Client

    if not scheduler:
        cluster = local_cluster(max(1, workers))
        return Client(cluster), cluster
    try:
        return Client(scheduler, timeout="10s"), None
    except (OSError, ValueError, TypeError) as exc:
        raise SchedulerUnreachable(f"--scheduler {scheduler}: no Dask scheduler answered there ({exc}); start one "
                                   "(dask scheduler) or check the address") from None


def map_ordered(func: Callable[..., Any], items: Iterable[Any], scheduler: str | None, workers: int,
                shared: Any = None, ahead: int | None = None) -> Generator[tuple[bool, Any], None, None]:
    """``func(shared, item)`` for each item, run on a cluster (``scheduler``'s, or a local one of
    ``workers`` processes), yielded in the items' order as ``(True, result)``, or ``(False,
    exception)`` for an item whose task failed; ``shared`` is sent to the workers once, and two
    tasks a worker are in flight (or ``ahead``). ``func`` and ``shared`` go to the workers pickled
    (cloudpickle: a closure travels with what it holds): ``import`` and ``batch --engine dask``."""
    import collections

    client, cluster = connect(scheduler, workers)
    try:
        remote = client.scatter(shared, broadcast=True) if shared is not None else None
        limit = ahead or 2 * max(1, sum(client.nthreads().values()) if scheduler else workers)
        pending = iter(items)
        window: collections.deque[Any] = collections.deque()
        while True:
            while len(window) < limit:
                item = next(pending, _DONE)
                if item is _DONE:
                    break
                window.append(client.submit(func, remote, item, pure=False))
            if not window:
                return
            future = window.popleft()
            try:
                yield True, future.result()
            except Exception as exc:  # noqa: BLE001 - a task's failure costs its item, named
                yield False, exc
            future.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


_DONE = object()


def stream(paths: list[str], policy: Policy, scheduler: str | None, workers: int,
           block: int = BLOCK_BYTES, want_lines: bool = False, want_verdict: bool = True,
           want_detail: bool = False) -> Iterator[Result]:
    """``batch --engine dask``: the partitions scored on a cluster (``scheduler``'s, or a local
    one of ``workers`` processes), results yielded in input order, a bounded window in flight
    (:func:`map_ordered`); a partition that fails there stops the batch with its error."""
    score = functools.partial(_score_with, want_lines=want_lines, want_verdict=want_verdict, want_detail=want_detail)
    scored = map_ordered(score, iter_partitions(paths, block=block), scheduler, workers, shared=policy,
                         ahead=max(2, 2 * workers))
    with contextlib.closing(scored):  # a failure closes the cluster before it is raised on
        for ok, value in scored:
            if not ok:
                raise value
            yield from msgspec.msgpack.decode(value, type=list[Result])


def _score_with(policy: Policy, part: Any, want_lines: bool, want_verdict: bool, want_detail: bool) -> bytes:
    """:func:`score_partition` with the policy first, as :func:`map_ordered` hands it over."""
    return score_partition(part, policy, want_lines, want_verdict, want_detail)
