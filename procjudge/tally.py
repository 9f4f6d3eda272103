"""What a batch keeps as results stream past, in memory that does not grow with the batch: the
gates each run is held to, the per-agent tallies, the loop-level counters, and at the end the
finished ``BatchReport`` the reports read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

import msgspec

from .policy import DEFAULT, Limits
from .results import (
    AgentSummary,
    BatchReport,
    BatchSummary,
    GateSummary,
    LoopGate,
    LoopSummary,
    Result,
    Row,
    Unreadable,
    worst_first,
)

WARNINGS_SHOWN = 20


class Gates(msgspec.Struct, frozen=True, kw_only=True):
    """Per run: ``fail_under`` (any run below it) and ``fail_on`` (any run with one of these
    findings). Over the batch: ``fail_under_mean`` (the mean process score below it)."""

    fail_under: float | None = None
    fail_on: tuple[str, ...] = ()
    fail_under_mean: float | None = None
    strict: bool = False  # a run with a warning about its input is refused, as an unreadable file is
    # how messages name each gate: the option, or the configuration key and its file
    fail_under_name: str = "--fail-under"
    fail_on_name: str = "--fail-on"
    fail_under_mean_name: str = "--fail-under-mean"

    def failures(self, row: Row) -> list[str]:
        """Why a run fails the gates (empty when it passes)."""
        reasons = []
        if self.fail_under is not None and row.process_score < self.fail_under:
            reasons.append(f"process score {row.process_score:g} < {self.fail_under_name} {self.fail_under:g}")
        found = [d for d in self.fail_on if d in row.items]
        if found:
            reasons.append(f"{self.fail_on_name}: {', '.join(found)}")
        return reasons


def strict_refusal(result: Result) -> Result:
    """A scored run whose input drew warnings, refused under ``--strict``: the file becomes an
    error naming its first warning (and how many there are)."""
    row = result.row
    assert row is not None
    first = row.input_warnings[0]
    more = " (and more)" if len(row.input_warnings) > 1 else ""
    return Result(path=result.path, file=result.file, error=f"{result.path}: --strict: {first}{more}")


class LoopTally:
    """Counters of the loop-level rules over a batch, kept as runs stream past (no row is kept):
    runs ending below their best and the points lost so, runs per attempt bucket and outcome, and
    the gate's rejection rate per round with the share of runs whose returned round is 1."""

    def __init__(self) -> None:
        self.runs = self.below_best = 0
        self.points_lost = 0.0
        self.buckets: dict[str, int] = {}
        self.outcomes: dict[str, int] = {}
        self.replayed = self.returned_first = self.early_exits = self.first_round_exits = 0
        self.returned: dict[int, int] = {}
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
            self.early_exits += bool(row.gate_early_exit)
            # the seed's share: the early exit fired before any revision was offered (no second round ran)
            self.first_round_exits += bool(row.gate_early_exit) and not any(
                decision in ("accepted", "rejected") for decision in rounds[1:])
            if row.returned_round is not None:
                self.returned[row.returned_round] = self.returned.get(row.returned_round, 0) + 1
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
                share_returned_round={str(k): round(self.returned[k] / self.replayed, 4) for k in sorted(self.returned)},
                share_early_exit=round(self.early_exits / self.replayed, 4) if self.replayed else None,
                share_first_round_exit=round(self.first_round_exits / self.replayed, 4) if self.replayed else None,
            ),
        )


# agent, process, final, iterations, tier, anti-patterns, cost (None: not known), resolved by the held-back suite
Figures = tuple[str, float, float, int, str, tuple[str, ...], float | None, bool | None]


WORST_KEPT = 50  # the runs the markdown report lists, worst first


class Collector:
    """Keeps what the reports need as results stream past, and summarises them at the end.

    With ``keep_rows`` (the table and markdown reports list every run) each run's row is kept;
    otherwise only the six figures the summary needs, as a tuple of interned values, so 100,000
    runs cost a few megabytes. Failed runs and errors are always kept."""

    def __init__(self, gates: Gates, keep_rows: bool = True, limits: Limits = DEFAULT.limits) -> None:
        self.gates = gates
        self.keep_rows = keep_rows
        self.keep = limits.errors_kept  # errors and failed runs kept for the reports; the rest counted
        self.listed = limits.rows_listed  # runs the table lists; the rest counted
        self.rows: list[Row] = []
        self.rows_omitted = 0
        self.worst: list[Row] = []  # the WORST_KEPT worst (markdown), cut back whenever it doubles
        self.error_count = 0
        self.failed_count = 0
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
            self.error_count += 1
            if len(self.errors) < self.keep:
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
        self.failed_count += bool(reasons)
        if self.keep_rows or reasons:
            kept = msgspec.structs.replace(row, gate_failures=tuple(reasons))
            if self.keep_rows:
                self._list(kept)
            if reasons and len(self.failed) < self.keep:
                self.failed.append(kept)
        return reasons

    def _list(self, row: Row) -> None:
        """Keep a row for the table (the first ``rows_listed``) and the markdown (the worst)."""
        if len(self.rows) < self.listed:
            self.rows.append(row)
        else:
            self.rows_omitted += 1
        self.worst.append(row)
        if len(self.worst) >= 2 * WORST_KEPT:
            self.worst = sorted(self.worst, key=worst_first)[:WORST_KEPT]

    def feed(self, results: Iterable[Result]) -> Iterator[tuple[Result, list[str] | None]]:
        for result in results:
            if self.gates.strict and result.row is not None and result.row.input_warnings:
                result = strict_refusal(result)
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
        return f"the mean process score {mean:g} of {self.scored} runs is below {self.gates.fail_under_mean_name} {gate:g}"

    @property
    def exit_code(self) -> int:
        if self.error_count:
            return 2
        return 1 if self.failed_count or self.mean_failure() else 0

    def finish(self) -> BatchReport:
        """The finished batch every report's ``finish`` reads."""
        worst = sorted(self.worst, key=worst_first)[:WORST_KEPT]
        return BatchReport(summary=self.summary(), rows=self.rows, failed=self.failed, errors=self.errors,
                           worst=worst, rows_omitted=self.rows_omitted,
                           warnings=self.warnings, warning_count=self.warning_count,
                           mean_failure=self.mean_failure(), exit_code=self.exit_code)

    def summary(self) -> BatchSummary:
        """Counts, the gates, and the per-agent summary."""
        return BatchSummary(
            files=self.scored + self.error_count,
            runs_scored=self.scored,
            errors=self.error_count,
            gate=GateSummary(fail_under=self.gates.fail_under, fail_on=list(self.gates.fail_on),
                             failed_runs=self.failed_count,
                             passed=not self.failed_count and not self.mean_failure() and not self.error_count,
                             fail_under_mean=self.gates.fail_under_mean, mean_process_score=self.mean_process_score,
                             mean_passed=self.mean_failure() is None, unreadable=self.error_count),
            agents=self.agents.summary(),
            loop=self.loop.summary(),
        )


class _Agent:
    __slots__ = ("cost", "costed", "final", "iterations", "patterns", "process", "resolved", "runs", "scores", "tiers")

    def __init__(self) -> None:
        self.cost = 0.0
        self.costed = self.resolved = 0  # runs with a known cost, and those of them the held-back suite resolved
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
        agent, process, final, iterations, tier, patterns, cost, resolved = figures
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
        if cost is not None:
            tally.cost += cost
            tally.costed += 1
            tally.resolved += bool(resolved)

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
                cost_usd=round(tally.cost, 4) if tally.costed else None, runs_with_cost=tally.costed,
                cost_per_resolved_run=round(tally.cost / tally.resolved, 4) if tally.costed and tally.resolved else None,
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
    """The figures the per-agent summary reads, optionally under another agent name."""
    return (row.agent if agent is None else agent, row.process_score, row.final_score, row.iterations_used,
            row.tier, row.anti_patterns, row.cost_usd, row.held_back_resolved)
