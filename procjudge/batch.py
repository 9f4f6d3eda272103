"""Scoring many run files, in worker processes, streamed in input order.

Results come back one compact ``Result`` per file (``results.py``): a row of the figures every
report needs, plus the encoded verdict only when the chosen output needs it, so memory stays
flat however many runs there are. What is kept of them as they pass is ``tally.py``'s.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from .loading import LoadError
from .policy import DEFAULT, Limits, Policy
from .results import Result, Row

RESULTS = msgspec.msgpack.Decoder(list[Result])
Task = str | tuple[str, int, bytes] | tuple[str, int, str]  # a run file; a JSON-lines record; an error at a line


def score_line(path: str, line: int, data: bytes, policy: Policy = DEFAULT, want_verdict: bool = True,
               want_detail: bool = False) -> Result:
    """Score one record of a JSON-lines file; any failure becomes ``Result.error`` at its line."""
    from .judge import judge
    from .records import load_record, record_path

    name = record_path(path, line)
    detail = None
    try:
        run = load_record(data, path, line)
        verdict = judge(run, policy, explain=want_verdict or want_detail)  # else only the row is read
        if want_detail:
            from .detail import run_detail

            detail = run_detail(run)
    except LoadError as exc:
        return Result(path=path, error=str(exc), error_line=line, file=path)
    except Exception as exc:  # noqa: BLE001 - one broken record must never stop a batch
        return Result(path=path, error=f"{name}: internal error: {type(exc).__name__}: {exc}", error_line=line, file=path)
    lines = {row.iteration: line for row in verdict.iterations} if want_verdict else None  # only verdicts annotate
    return Result.of(name, verdict, lines, want_verdict, file=path, detail=detail)


def score_path(path: str, policy: Policy = DEFAULT, want_lines: bool = False, want_verdict: bool = True,
               want_detail: bool = False) -> Result:
    """Score one file; any failure becomes ``Result.error`` (never an exception). ``want_detail``
    sends what a page shows beyond the verdict, read from the run as it was scored."""
    from .judge import judge
    from .loading import load_run

    detail = None
    try:
        run = load_run(path, with_lines=want_lines)
        verdict = judge(run, policy, explain=want_verdict or want_detail)  # else only the row is read
        if want_detail:
            from .detail import run_detail

            detail = run_detail(run)
    except LoadError as exc:
        return Result(path=path, error=str(exc), error_line=exc.line)
    except Exception as exc:  # noqa: BLE001 - one broken file must never stop a batch
        return Result(path=path, error=f"{path}: internal error: {type(exc).__name__}: {exc}")
    lines: dict[int, int] | None = None
    if want_lines:
        from .facts import iteration_number

        lines = {}
        for position, (entry, line) in enumerate(zip(run.iterations, run.lines, strict=False)):
            if line is not None:
                lines.setdefault(iteration_number(entry, position), line)
    return Result.of(path, verdict, lines, want_verdict, detail=detail)


# --------------------------------------------------------------------------- parallel scoring

_WORKER: dict[str, Any] = {}


def _init_worker(policy: Policy, want_lines: bool, want_verdict: bool = True, want_detail: bool = False) -> None:
    _WORKER.update(policy=policy, want_lines=want_lines, want_verdict=want_verdict, want_detail=want_detail)


def score_task(task: Task, policy: Policy = DEFAULT, want_lines: bool = False, want_verdict: bool = True,
               want_detail: bool = False) -> Result:
    """Score a run file, or a record of a JSON-lines file (or pass on an error found reading one);
    ``want_verdict`` False sends the row without the encoded verdict."""
    if isinstance(task, str):
        return score_path(task, policy, want_lines, want_verdict, want_detail)
    path, line, data = task
    if isinstance(data, str):
        return Result(path=path, error=data, error_line=line, file=path)
    return score_line(path, line, data, policy, want_verdict, want_detail)


def tasks(paths: list[str], limits: Limits = DEFAULT.limits) -> Iterator[Task]:
    """The paths as tasks, in order: a JSON-lines file becomes one task per record, streamed."""
    from .records import is_records, read_records

    for path in paths:
        if not is_records(path):
            yield path
            continue
        for line, data in read_records(path, limits):
            yield (path, line, str(data)) if isinstance(data, LoadError) else (path, line, data)


def _work(task: Task) -> Result:
    return score_task(task, _WORKER["policy"], _WORKER["want_lines"], _WORKER["want_verdict"], _WORKER["want_detail"])


def _work_chunk(chunk: list[Task]) -> bytes:
    """A chunk's results as MessagePack: smaller and faster across the process boundary than
    pickled structs, and decoded back into the same typed values."""
    return msgspec.msgpack.encode([_work(task) for task in chunk])


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this worker when the parent dies, whatever kills the parent (SIGTERM
    mid-start, SIGKILL, a crash), so that no orphan keeps computing or holds the parent's stdout
    open. A worker whose parent is already gone leaves at once."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(0)


def _ignore_interrupts(policy: Policy, want_lines: bool, want_verdict: bool = True, want_detail: bool = False,
                       parent: int | None = None) -> None:
    """Worker start: the parent alone answers Ctrl-C and SIGTERM (no traceback from every worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        _die_with_parent(parent)
    _init_worker(policy, want_lines, want_verdict, want_detail)


def score_paths(
    paths: list[str], policy: Policy = DEFAULT, jobs: int = 1, want_lines: bool = False, want_verdict: bool = True,
    want_detail: bool = False,
) -> Iterator[Result]:
    """Score every path, yielding results in input order; ``jobs`` worker processes.

    Work goes out in chunks, a bounded window ahead of what has been yielded, so memory stays
    flat. A worker that dies (killed from outside, out of memory) breaks only the chunks it held:
    they are scored again in a fresh pool, file by file, and a file that kills its worker a second
    time is reported as an error, never waited for."""
    from .records import is_records

    many = any(is_records(p) for p in paths)
    if jobs <= 1 or (len(paths) < 2 and not many):
        for task in tasks(paths, policy.limits):
            yield score_task(task, policy, want_lines, want_verdict, want_detail)
        return
    import collections
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    size = 64 if many else max(1, min(64, len(paths) // (jobs * 8) or 1))

    def chunked() -> Iterator[list[Task]]:
        chunk: list[Task] = []
        for task in tasks(paths, policy.limits):
            chunk.append(task)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    chunks = chunked()

    def pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(jobs, mp_context=context, initializer=_ignore_interrupts,
                                   initargs=(policy, want_lines, want_verdict, want_detail, os.getpid()))

    executor = pool()

    def submit(chunk: list[Task]) -> Future[bytes] | None:
        """The chunk's future; None when the pool broke under it (the chunk is scored again)."""
        try:
            return executor.submit(_work_chunk, chunk)
        except BrokenProcessPool:
            return None

    window: collections.deque[tuple[list[Task], Future[bytes] | None]] = collections.deque()
    try:
        while True:
            while len(window) < jobs * 4:
                chunk = next(chunks, None)
                if chunk is None:
                    break
                window.append((chunk, submit(chunk)))
            if not window:
                return
            chunk, future = window.popleft()
            try:
                if future is None:
                    raise BrokenProcessPool("the pool broke before this chunk was sent")
                results = RESULTS.decode(future.result())
            except BrokenProcessPool:
                _stop(executor)
                executor = pool()
                results = []
                for task in chunk:
                    result, executor = _rescore(task, executor, pool)
                    results.append(result)
                _worker_died(len(chunk))
                window = collections.deque((c, submit(c)) for c, _ in window)
            yield from results
    finally:
        # On Ctrl-C or SIGTERM nothing is joined: a join inside interrupted pool internals can wait forever.
        _stop(executor, wait=sys.exc_info()[0] is None)


def _worker_died(count: int) -> None:
    """Say on stderr that a worker died and how many runs were scored again (rightly, but not
    silently: a machine short of memory should be seen)."""
    from .render.text import literal

    sys.stderr.write(literal(f"procjudge: warning: a worker process died (killed, or out of memory); "
                             f"{count:,} runs it held were scored again one by one") + "\n")


def _rescore(task: Task, executor: Any, pool: Callable[[], Any]) -> tuple[Result, Any]:
    """Score one file again after its worker died; a second death makes it an error (and the
    broken pool is replaced for the files after it)."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return RESULTS.decode(executor.submit(_work_chunk, [task]).result())[0], executor
    except BrokenProcessPool:
        _stop(executor)
        if isinstance(task, str):
            path, line, file, name = task, None, None, task
        else:
            path, line, file, name = task[0], task[1], task[0], f"{task[0]}:{task[1]}"
        return Result(path=path, file=file, error_line=line,
                      error=f"{name}: the worker scoring this file died twice (killed, or out of memory); not scored"), pool()


def _stop(executor: Any, wait: bool = True) -> None:
    """Stop a pool now: live workers killed first (no waiting on a hung or busy one), then the
    pool shut down; with ``wait`` its manager thread is joined, which returns at once with no
    worker left (and leaves no wakeup pipe for the interpreter's exit hook to trip over)."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()
    executor.shutdown(wait=wait, cancel_futures=True)


# --------------------------------------------------------------------------- gates and summary




def score_rows(paths: list[str], policy: Policy = DEFAULT, jobs: int = 1) -> tuple[list[Row], list[str]]:
    """Every run's row (the figures drift and review read), and the messages of the files that
    could not be scored."""
    rows: list[Row] = []
    errors: list[str] = []
    for result in score_paths(paths, policy, jobs=jobs):
        if result.row is None:
            errors.append(result.error or f"{result.path}: not scored")
        else:
            rows.append(result.row)
    return rows, errors
