"""Scoring many run files: discovery, parallel workers, gates and the per-agent summary.

Results stream in input order, one compact ``Result`` per file: a row of the figures every
report needs, plus the verdict's JSON or its findings only when the chosen output needs them, so
memory stays flat however many runs there are; the per-agent summary is kept as sums and counts
(``AgentTally``), so it does not grow with the batch either.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from .loading import LoadError
from .policy import DEFAULT, Policy
from .verdict import Item, Verdict

WARNINGS_PER_RUN = 5
WARNINGS_SHOWN = 20


class Finding(msgspec.Struct, frozen=True):
    """One item worth an annotation: an anti-pattern, or a rule that cost points, with the line
    of the run file where its (last) iteration starts."""

    id: str
    kind: str
    points: float
    evidence: str
    iteration: int | None
    line: int | None


def annotated(item: Item) -> bool:
    """An item worth an annotation in CI (GitHub, SARIF, GitLab): an anti-pattern, or a rule that
    cost points."""
    return item.kind == "anti_pattern" or (item.kind == "rule" and item.points < 0)


class Row(msgspec.Struct, frozen=True, kw_only=True):
    """The figures of one run every batch report reads: a projection of its verdict."""

    id: str
    agent: str
    challenge: str
    format: str
    path: str
    iterations_used: int
    final_score: float
    process_score: float
    raw_process_score: float
    tier: str
    pattern: str
    anti_patterns: tuple[str, ...]
    items: tuple[str, ...]
    warnings: int
    final_minus_best: float
    bucket: str
    outcome: str
    gate_rounds: tuple[str, ...] | None
    returned_round: int | None
    source: str
    started_at: str
    first_failing_test: str
    gate_failures: tuple[str, ...] = ()
    held_back_resolved: bool | None = None
    held_back_passed: int | None = None
    held_back_total: int | None = None

    @classmethod
    def of(cls, verdict: Verdict, path: str) -> Row:
        run, gate = verdict.run, verdict.gate
        return cls(
            id=run.id, agent=run.agent or "", challenge=run.challenge or "", format=run.format, path=path,
            iterations_used=verdict.iterations_used, final_score=verdict.final_score,
            process_score=verdict.process_score, raw_process_score=verdict.raw_process_score,
            tier=verdict.tier, pattern=verdict.pattern, anti_patterns=tuple(verdict.anti_patterns),
            items=tuple(verdict.findings), warnings=len(verdict.warnings),
            final_minus_best=verdict.final_minus_best, bucket=verdict.attempts.bucket,
            outcome=verdict.attempts.outcome,
            gate_rounds=tuple(d.decision for d in gate.iterations) if gate.replayed else None,
            returned_round=gate.returned_round, source=run.source or "", started_at=run.started_at or "",
            first_failing_test=run.first_failing_test or "",
            held_back_resolved=verdict.held_back.resolved if verdict.held_back else None,
            held_back_passed=verdict.held_back.passed if verdict.held_back else None,
            held_back_total=verdict.held_back.total if verdict.held_back else None,
        )


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker sends back for one file: the whole verdict (it round-trips through
    MessagePack), the line where each of its iterations starts, or why the file was not scored.

    The verdict travels encoded (``verdict_msgpack``) beside the figures every report reads
    (``row``) and the run's first warnings: a report that needs the whole verdict (json, sarif,
    gitlab, github) decodes it with ``verdict()``, and the others never pay for it."""

    path: str
    row: Row | None = None
    verdict_msgpack: bytes | None = None
    warnings: list[str] = []  # the run's first WARNINGS_PER_RUN warnings, for stderr
    lines: dict[int, int] | None = None  # the line where each submission starts, by number, when asked for
    error: str | None = None
    error_line: int | None = None
    # A run of a JSON-lines file: ``path`` names it ``FILE:LINE``, ``file`` is the file itself
    # (annotations point at ``file``, at the record's line).
    file: str | None = None

    @property
    def location(self) -> str:
        """The file an annotation points at."""
        return self.file or self.path

    @classmethod
    def of(cls, path: str, verdict: Verdict, lines: dict[int, int] | None = None, with_verdict: bool = True,
           file: str | None = None) -> Result:
        """The result of a scored run; without ``with_verdict`` only the row travels (the lighter
        result the csv, junit, markdown and table reports need)."""
        return cls(path=path, row=Row.of(verdict, path),
                   verdict_msgpack=msgspec.msgpack.encode(verdict) if with_verdict else None,
                   warnings=verdict.warnings[:WARNINGS_PER_RUN], lines=lines, file=file)

    def verdict(self) -> Verdict | None:
        """The whole verdict, decoded (None for a file that was not scored)."""
        return VERDICT.decode(self.verdict_msgpack) if self.verdict_msgpack is not None else None

    def findings(self, verdict: Verdict | None = None) -> list[Finding]:
        """The items worth an annotation, each at the line of its (last) iteration."""
        verdict = verdict or self.verdict()
        if verdict is None:
            return []
        lines = self.lines or {}
        # every iteration of a JSON-lines record is on the record's line
        record = next(iter(lines.values()), None) if self.file is not None else None
        return [
            Finding(i.id, i.kind, i.points, i.evidence, i.iterations[-1] if i.iterations else None,
                    lines.get(i.iterations[-1], record) if i.iterations else record)
            for i in verdict.items if annotated(i)
        ]


RESULTS = msgspec.msgpack.Decoder(list[Result])
Task = str | tuple[str, int, bytes] | tuple[str, int, str]  # a run file; a JSON-lines record; an error at a line
VERDICT = msgspec.msgpack.Decoder(Verdict)


def score_line(path: str, line: int, data: bytes, policy: Policy = DEFAULT, want_verdict: bool = True) -> Result:
    """Score one record of a JSON-lines file; any failure becomes ``Result.error`` at its line."""
    from .records import record_path, score_record

    name = record_path(path, line)
    try:
        verdict = score_record(data, policy, source=path, line=line)
    except LoadError as exc:
        return Result(path=path, error=str(exc), error_line=line, file=path)
    except Exception as exc:  # noqa: BLE001 - one broken record must never stop a batch
        return Result(path=path, error=f"{name}: internal error: {type(exc).__name__}: {exc}", error_line=line, file=path)
    return Result.of(name, verdict, {row.iteration: line for row in verdict.iterations}, want_verdict, file=path)


def score_path(path: str, policy: Policy = DEFAULT, want_lines: bool = False, want_verdict: bool = True) -> Result:
    """Score one file; any failure becomes ``Result.error`` (never an exception)."""
    from .judge import judge
    from .loading import load_run

    try:
        run = load_run(path, with_lines=want_lines)
        verdict = judge(run, policy)
    except LoadError as exc:
        return Result(path=path, error=str(exc), error_line=exc.line)
    except Exception as exc:  # noqa: BLE001 - one broken file must never stop a batch
        return Result(path=path, error=f"{path}: internal error: {type(exc).__name__}: {exc}")
    lines: dict[int, int] | None = None
    if want_lines:
        from .facts import iteration_number

        lines = {}
        for position, (entry, line) in enumerate(zip(run.iterations, run.lines)):
            if line is not None:
                lines.setdefault(iteration_number(entry, position), line)
    return Result.of(path, verdict, lines, want_verdict)


# --------------------------------------------------------------------------- parallel scoring

_WORKER: dict[str, Any] = {}


def _init_worker(policy: Policy, want_lines: bool, want_verdict: bool = True) -> None:
    _WORKER.update(policy=policy, want_lines=want_lines, want_verdict=want_verdict)


def score_task(task: Task, policy: Policy = DEFAULT, want_lines: bool = False, want_verdict: bool = True) -> Result:
    """Score a run file, or a record of a JSON-lines file (or pass on an error found reading one);
    ``want_verdict`` False sends the row without the encoded verdict."""
    if isinstance(task, str):
        return score_path(task, policy, want_lines, want_verdict)
    path, line, data = task
    if isinstance(data, str):
        return Result(path=path, error=data, error_line=line, file=path)
    return score_line(path, line, data, policy, want_verdict)


def tasks(paths: list[str]) -> Iterator[Task]:
    """The paths as tasks, in order: a JSON-lines file becomes one task per record, streamed."""
    from .records import is_records, read_records

    for path in paths:
        if not is_records(path):
            yield path
            continue
        for line, data in read_records(path):
            yield (path, line, str(data)) if isinstance(data, LoadError) else (path, line, data)


def _work(task: Task) -> Result:
    return score_task(task, _WORKER["policy"], _WORKER["want_lines"], _WORKER["want_verdict"])


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


def _ignore_interrupts(policy: Policy, want_lines: bool, want_verdict: bool = True, parent: int | None = None) -> None:
    """Worker start: the parent alone answers Ctrl-C and SIGTERM (no traceback from every worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        _die_with_parent(parent)
    _init_worker(policy, want_lines, want_verdict)


def score_paths(
    paths: list[str], policy: Policy = DEFAULT, jobs: int = 1, want_lines: bool = False, want_verdict: bool = True
) -> Iterator[Result]:
    """Score every path, yielding results in input order; ``jobs`` worker processes.

    Work goes out in chunks, a bounded window ahead of what has been yielded, so memory stays
    flat. A worker that dies (killed from outside, out of memory) breaks only the chunks it held:
    they are scored again in a fresh pool, file by file, and a file that kills its worker a second
    time is reported as an error, never waited for."""
    from .records import is_records

    many = any(is_records(p) for p in paths)
    if jobs <= 1 or (len(paths) < 2 and not many):
        for task in tasks(paths):
            yield score_task(task, policy, want_lines, want_verdict)
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
        for task in tasks(paths):
            chunk.append(task)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    chunks = chunked()

    def pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(jobs, mp_context=context, initializer=_ignore_interrupts,
                                   initargs=(policy, want_lines, want_verdict, os.getpid()))

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
                window = collections.deque((c, submit(c)) for c, _ in window)
            yield from results
    finally:
        # On Ctrl-C or SIGTERM nothing is joined: a join inside interrupted pool internals can wait forever.
        _stop(executor, wait=sys.exc_info()[0] is None)


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


class Gates(msgspec.Struct, frozen=True, kw_only=True):
    """Per run: ``fail_under`` (any run below it) and ``fail_on`` (any run with one of these
    findings). Over the batch: ``fail_under_mean`` (the mean process score below it)."""

    fail_under: float | None = None
    fail_on: tuple[str, ...] = ()
    fail_under_mean: float | None = None

    def failures(self, row: Row) -> list[str]:
        """Why a run fails the gates (empty when it passes)."""
        reasons = []
        if self.fail_under is not None and row.process_score < self.fail_under:
            reasons.append(f"process score {row.process_score:g} < --fail-under {self.fail_under:g}")
        found = [d for d in self.fail_on if d in row.items]
        if found:
            reasons.append(f"--fail-on: {', '.join(found)}")
        return reasons


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the batch summary's parts."""


class GateSummary(Summary, frozen=True):
    """The gates and how the batch fared: ``passed`` is every gate, per run and over the batch."""

    fail_under: float | None
    fail_on: list[str]
    failed_runs: int
    passed: bool
    fail_under_mean: float | None = None
    mean_process_score: float | None = None
    mean_passed: bool = True


class AgentSummary(Summary, frozen=True):
    """One agent over the batch: runs, mean and median scores, tiers, anti-pattern shares."""

    agent: str
    runs: int
    mean_process_score: float
    median_process_score: float
    mean_final_score: float
    mean_iterations_used: float
    tiers: dict[str, int]
    anti_pattern_share: dict[str, float]


class LoopGate(Summary, frozen=True):
    replayed_runs: int
    share_returned_round_1: float | None
    rejection_rate_per_round: dict[str, float]


class LoopSummary(Summary, frozen=True):
    """The loop-level rules over a batch: best-so-far, attempt buckets and outcomes, the gate."""

    runs_below_best: int
    share_below_best: float | None
    points_lost_below_best: float
    attempt_buckets: dict[str, int]
    outcomes: dict[str, int]
    gate: LoopGate


class BatchSummary(Summary, frozen=True):
    files: int
    runs_scored: int
    errors: int
    gate: GateSummary
    agents: list[AgentSummary]
    loop: LoopSummary


class Unreadable(Summary, frozen=True):
    """A file that could not be scored."""

    path: str
    message: str
    line: int | None = None


class LoopTally:
    """Counters of the loop-level rules over a batch, kept as runs stream past (no row is kept):
    runs ending below their best and the points lost so, runs per attempt bucket and outcome, and
    the gate's rejection rate per round with the share of runs whose returned round is 1."""

    def __init__(self) -> None:
        self.runs = self.below_best = 0
        self.points_lost = 0.0
        self.buckets: dict[str, int] = {}
        self.outcomes: dict[str, int] = {}
        self.replayed = self.returned_first = 0
        self.offered: dict[int, int] = {}
        self.rejected: dict[int, int] = {}

    def add(self, row: Row) -> None:
        self.runs += 1
        if row.final_minus_best < 0:
            self.below_best += 1
            self.points_lost -= row.final_minus_best
        for counter, key in ((self.buckets, row.bucket), (self.outcomes, row.outcome)):
            if key:
                counter[key] = counter.get(key, 0) + 1
        rounds = row.gate_rounds
        if rounds is not None:
            self.replayed += 1
            self.returned_first += row.returned_round == 1
            for number, decision in enumerate(rounds[1:], start=2):
                if decision in ("accepted", "rejected"):
                    self.offered[number] = self.offered.get(number, 0) + 1
                    self.rejected[number] = self.rejected.get(number, 0) + (decision == "rejected")

    def summary(self) -> LoopSummary:
        from .loop import bucket_labels
        from .policy import DEFAULT as policy

        order = bucket_labels(policy.attempts.buckets)
        return LoopSummary(
            runs_below_best=self.below_best,
            share_below_best=round(self.below_best / self.runs, 4) if self.runs else None,
            points_lost_below_best=round(self.points_lost, 4),
            attempt_buckets={label: self.buckets[label] for label in order if label in self.buckets}
            | {k: v for k, v in self.buckets.items() if k not in order},
            outcomes=dict(sorted(self.outcomes.items())),
            gate=LoopGate(
                replayed_runs=self.replayed,
                share_returned_round_1=round(self.returned_first / self.replayed, 4) if self.replayed else None,
                rejection_rate_per_round={str(k): round(self.rejected[k] / self.offered[k], 4)
                                          for k in sorted(self.offered)},
            ),
        )


Figures = tuple[str, float, float, int, str, tuple[str, ...]]  # agent, process, final, iterations, tier, anti-patterns


class Collector:
    """Keeps what the reports need as results stream past, and summarises them at the end.

    With ``keep_rows`` (the table and markdown reports list every run) each run's row is kept;
    otherwise only the six figures the summary needs, as a tuple of interned values, so 100,000
    runs cost a few megabytes. Failed runs and errors are always kept."""

    def __init__(self, gates: Gates, keep_rows: bool = True) -> None:
        self.gates = gates
        self.keep_rows = keep_rows
        self.rows: list[Row] = []
        self.agents = AgentTally()  # per agent, in bounded memory: a million runs cost what a thousand do
        self.count = 0
        self.total = 0.0
        self.errors: list[Unreadable] = []
        self.failed: list[Row] = []
        self.warnings: list[tuple[str, str]] = []  # the first WARNINGS_SHOWN (path, warning), for stderr
        self.warning_count = 0
        self.loop = LoopTally()

    def add(self, result: Result) -> list[str] | None:
        """Record a result; return its gate failures (None for an unreadable file)."""
        row = result.row
        if row is None:
            self.errors.append(Unreadable(path=result.path, message=result.error or "not scored", line=result.error_line))
            return None
        self.warning_count += row.warnings
        for warning in result.warnings:
            if len(self.warnings) < WARNINGS_SHOWN:
                self.warnings.append((result.path, warning))
        reasons = self.gates.failures(row)
        self.loop.add(row)
        self.agents.add(figures_of(row))
        self.count += 1
        self.total += row.process_score
        if self.keep_rows or reasons:
            kept = msgspec.structs.replace(row, gate_failures=tuple(reasons))
            if self.keep_rows:
                self.rows.append(kept)
            if reasons:
                self.failed.append(kept)
        return reasons

    def feed(self, results: Iterable[Result]) -> Iterator[tuple[Result, list[str] | None]]:
        for result in results:
            yield result, self.add(result)

    @property
    def scored(self) -> int:
        return self.count

    @property
    def mean_process_score(self) -> float | None:
        return round(self.total / self.count, 4) if self.count else None

    def mean_failure(self) -> str | None:
        """Why the batch fails --fail-under-mean, or None."""
        mean, gate = self.mean_process_score, self.gates.fail_under_mean
        if gate is None or mean is None or mean >= gate:
            return None
        return f"the mean process score {mean:g} of {self.scored} runs is below --fail-under-mean {gate:g}"

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.failed or self.mean_failure() else 0

    def summary(self) -> BatchSummary:
        """Counts, the gates, and the per-agent summary."""
        return BatchSummary(
            files=self.scored + len(self.errors),
            runs_scored=self.scored,
            errors=len(self.errors),
            gate=GateSummary(fail_under=self.gates.fail_under, fail_on=list(self.gates.fail_on),
                             failed_runs=len(self.failed), passed=not self.failed and not self.mean_failure(),
                             fail_under_mean=self.gates.fail_under_mean, mean_process_score=self.mean_process_score,
                             mean_passed=self.mean_failure() is None),
            agents=self.agents.summary(),
            loop=self.loop.summary(),
        )


class _Agent:
    __slots__ = ("final", "iterations", "patterns", "process", "runs", "scores", "tiers")

    def __init__(self) -> None:
        self.runs = 0
        self.process = self.final = 0.0
        self.iterations = 0
        self.scores: Counter[float] = Counter()  # process scores take few distinct values: an exact median
        self.tiers: Counter[str] = Counter()
        self.patterns: Counter[str] = Counter()


class AgentTally:
    """The per-agent summary kept as runs stream past, in memory that does not grow with the
    number of runs: sums, counts of tiers and anti-patterns, and the process scores as a count per
    distinct value (whose median is exact)."""

    def __init__(self) -> None:
        self.agents: dict[str, _Agent] = {}

    def add(self, figures: Figures) -> None:
        agent, process, final, iterations, tier, patterns = figures
        tally = self.agents.get(agent or "(none)")
        if tally is None:
            tally = self.agents[agent or "(none)"] = _Agent()
        tally.runs += 1
        tally.process += process
        tally.final += final
        tally.iterations += iterations
        tally.scores[process] += 1
        tally.tiers[tier] += 1
        tally.patterns.update(set(patterns))

    def summary(self) -> list[AgentSummary]:
        out = []
        for name in sorted(self.agents):
            tally = self.agents[name]
            out.append(AgentSummary(
                agent=name, runs=tally.runs,
                mean_process_score=round(tally.process / tally.runs, 4),
                median_process_score=round(_median(tally.scores, tally.runs), 4),
                mean_final_score=round(tally.final / tally.runs, 4),
                mean_iterations_used=round(tally.iterations / tally.runs, 4),
                tiers=dict(sorted(tally.tiers.items())),
                anti_pattern_share={p: round(n / tally.runs, 4) for p, n in sorted(tally.patterns.items())},
            ))
        return out


def _median(counts: Counter[float], total: int) -> float:
    """The median of values given as a count per value."""
    middle = [(total - 1) // 2, total // 2]
    found: list[float] = []
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        while middle and middle[0] < seen:
            found.append(value)
            middle.pop(0)
        if not middle:
            break
    return (found[0] + found[1]) / 2


def agent_summary(figures: Iterable[Figures]) -> list[AgentSummary]:
    """Per agent: runs, mean and median process score and final score, mean iterations used,
    tier distribution, and the share of runs in which each anti-pattern occurs."""
    tally = AgentTally()
    for one in figures:
        tally.add(one)
    return tally.summary()


def figures_of(row: Row, agent: str | None = None) -> Figures:
    """The six figures the per-agent summary reads, optionally under another agent name."""
    return (row.agent if agent is None else agent, row.process_score, row.final_score, row.iterations_used,
            row.tier, row.anti_patterns)


def check_output_path(output: str | None, inputs: list[str]) -> str | None:
    """An error message when the output file cannot be written or would overwrite an input."""
    if output is None:
        return None
    from .safe_io import check_target

    return check_target(output, inputs)


def warning_lines(shown: list[tuple[str, str]], total: int) -> list[str]:
    """The warnings for stderr grouped per file (a file's first warning names it, the rest are
    indented under it), one line each, with a count of those left out."""
    from .render.text import one_line

    lines: list[str] = []
    previous = None
    for path, warning in shown:
        if path != previous:
            lines.append(f"procjudge: warning: {one_line(path, 500)}: {one_line(warning, 500)}")
            previous = path
        else:
            lines.append(f"  {one_line(warning, 500)}")
    if total > len(shown):
        lines.append(f"procjudge: {total - len(shown):,} more warnings not shown (every one is in --format json)")
    return lines
