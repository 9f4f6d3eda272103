"""The typed results procjudge hands to its reports, beside ``Verdict`` on the ground floor.

A batch streams ``Result``s (one per file: a ``Row`` of the figures every report reads, the
verdict encoded when a report needs it, or why the file was not scored) and ends in a
``BatchReport`` (the summary, the kept rows, the errors and the exit code); a comparison is a
``RunsComparison`` or a ``FoldersComparison``; drift, the review queue and its estimate, and the
rule catalogue each have their own type. The engines build these; ``render/`` reads them and
imports nothing above them. Field order is the JSON order.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .verdict import Item, Verdict

WARNINGS_PER_RUN = 5


class UsageError(ValueError):
    """What a command was asked cannot be done (two things that cannot be compared, an output that
    is an input, an engine not installed): the message says why; the command exits 2."""

DIFF_MAX_LINES = 5000  # lines of a submission's diff a run's detail keeps; the page says how many more

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
    best_score: float | None = None  # None in a row not made from a verdict
    best_iteration: int | None = None
    gated_final: float | None = None  # the score of the submission the replayed gate would return
    gate_early_exit: bool | None = None  # the replayed gate stopped offering rounds: the incumbent passed everything
    doc_type: str = ""
    verifier_version: str = ""
    input_warnings: tuple[str, ...] = ()  # the first of the warnings about the input itself (--strict refuses those)
    cost_usd: float | None = None  # what the run cost, where its log says (run.usage.cost_usd)
    tokens: int | None = None  # input and output tokens, where its log says
    accused: bool = False  # an accusing rule found something (test_chasing, checker_tampering, stand_in, repository_history)

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
            best_score=verdict.best_score, best_iteration=verdict.best_iteration,
            gated_final=gate.gated_final if gate.replayed else None,
            gate_early_exit=gate.stopped == "early_exit" if gate.replayed else None,
            doc_type=run.doc_type or "", verifier_version=run.verifier_version or "",
            input_warnings=tuple(verdict.warnings[:min(verdict.input_warnings, 3)]),
            cost_usd=run.usage.cost_usd if run.usage else None,
            tokens=(run.usage.input_tokens or 0) + (run.usage.output_tokens or 0) if run.usage
            and (run.usage.input_tokens is not None or run.usage.output_tokens is not None) else None,
            accused=verdict.accused,
        )


def worst_first(row: Row, failed: bool | None = None) -> tuple[bool, bool, float, str]:
    """The one order in which every report lists runs, worst first (a sort key): a failed gate
    (``failed``, else the row's own ``gate_failures``), then an accusation, then the lowest process
    score, then the path."""
    return (not (row.gate_failures if failed is None else failed), not row.accused, row.process_score, row.path)


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
    detail: RunDetail | None = None  # what a page shows beyond the verdict, when a report asks for it
    # A run of a JSON-lines file: ``path`` names it ``FILE:LINE``, ``file`` is the file itself
    # (annotations point at ``file``, at the record's line).
    file: str | None = None

    @property
    def location(self) -> str:
        """The file an annotation points at."""
        return self.file or self.path

    @classmethod
    def of(cls, path: str, verdict: Verdict, lines: dict[int, int] | None = None, with_verdict: bool = True,
           file: str | None = None, detail: RunDetail | None = None) -> Result:
        """The result of a scored run; without ``with_verdict`` only the row travels (the lighter
        result the csv, junit, markdown and table reports need)."""
        return cls(path=path, row=Row.of(verdict, path),
                   verdict_msgpack=msgspec.msgpack.encode(verdict) if with_verdict else None,
                   warnings=verdict.warnings[:WARNINGS_PER_RUN], lines=lines, file=file, detail=detail)

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


VERDICT = msgspec.msgpack.Decoder(Verdict)


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the batch summary's parts."""


class GateSummary(Summary, frozen=True):
    """The gates and how the batch fared: ``passed`` is every gate, per run and over the batch, on
    every file; a file that could not be read (``unreadable``, exit 2) was never judged, so the
    batch cannot be said to have passed."""

    fail_under: float | None
    fail_on: list[str]
    failed_runs: int
    passed: bool
    fail_under_mean: float | None = None
    mean_process_score: float | None = None
    mean_passed: bool = True
    unreadable: int = 0

    @property
    def gate_failed(self) -> bool:
        """A gate failed on the runs that were scored (as opposed to a file left unread)."""
        return bool(self.failed_runs) or not self.mean_passed


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
    # what the agent's runs cost, where their logs say: the total, over how many runs, and per run the held-back
    # suite resolved (the cost of a success)
    cost_usd: float | None = None
    runs_with_cost: int = 0
    cost_per_resolved_run: float | None = None


class LoopGate(Summary, frozen=True):
    """The regression gate replayed over a batch: which round each run would return, how often the
    early exit fired, and how often an offered revision was rejected in each round."""

    replayed_runs: int
    share_returned_round_1: float | None
    rejection_rate_per_round: dict[str, float]
    share_returned_round: dict[str, float] = {}  # returned round -> share of the replayed runs
    share_early_exit: float | None = None  # runs whose gate exited early, at any round (their incumbent passed everything)
    # the seed's early-exit share: runs that never ran a second round (the first answer passed everything)
    share_first_round_exit: float | None = None


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



class BatchReport(Summary, frozen=True):
    """A finished batch, as every report's ``finish`` reads it: the summary, the rows kept (every
    run's, when a report lists them all), the runs that failed a gate, the unreadable files, the
    first warnings with their total, why the batch mean failed its gate, and the exit code."""

    summary: BatchSummary
    rows: list[Row]
    failed: list[Row]
    errors: list[Unreadable]  # the first limits.errors_kept; summary.errors counts them all
    warnings: list[tuple[str, str]]
    warning_count: int
    mean_failure: str | None
    exit_code: int
    worst: list[Row] = []  # the worst runs, worst first (:func:`worst_first`), at most 50
    rows_omitted: int = 0  # runs past limits.rows_listed, counted but not listed

# --------------------------------------------------------------------------- comparisons

COMPARE_SCHEMA = "procjudge.compare/1"
Winner = Literal["a", "b", "tie"]


class ComparisonPart(msgspec.Struct, frozen=True, kw_only=True):
    """Base of a comparison's parts."""


class ItemDifference(ComparisonPart, frozen=True):
    """One finding id: A's points, B's points (None where the run has no such item), B - A."""

    id: str
    kind: str
    a: float | None
    b: float | None
    difference: float


class RunsComparison(ComparisonPart, frozen=True):
    """Two runs side by side (``compare FILE FILE``)."""

    schema: str
    mode: Literal["runs"]
    a: Verdict
    b: Verdict
    rows: list[ItemDifference]
    winner: Winner
    deciding: list[str]
    difference: float
    errors: list[str] = []


class Side(ComparisonPart, frozen=True):
    """One agent's folder: its label, the agents in it, its score summary and best-so-far loss."""

    label: str
    agents: list[str]
    runs: int
    mean_process_score: float | None = None
    median_process_score: float | None = None
    mean_final_score: float | None = None
    mean_iterations_used: float | None = None
    tiers: dict[str, int] = {}
    anti_pattern_share: dict[str, float] = {}
    share_below_best: float | None = None
    points_lost_below_best: float = 0.0
    cost_usd: float | None = None  # where the runs' logs say what they cost
    cost_per_resolved_run: float | None = None


class PairedRun(ComparisonPart, frozen=True):
    id: str
    path: str
    process_score: float
    final_score: float
    tier: str
    anti_patterns: list[str]


class Pair(ComparisonPart, frozen=True):
    """The two agents' runs of one challenge."""

    challenge: str
    a: PairedRun
    b: PairedRun
    difference: float
    winner: Winner


class Paired(ComparisonPart, frozen=True):
    """Paired wins, losses and ties, and the mean paired difference B - A with its interval."""

    pairs: int
    b_wins: int
    b_losses: int
    ties: int
    mean_difference: float | None
    ci95: list[float] | None
    seed: int
    resamples: int


class UnmatchedRun(ComparisonPart, frozen=True):
    path: str
    key: str


class Unmatched(ComparisonPart, frozen=True):
    a: list[UnmatchedRun]
    b: list[UnmatchedRun]


class FoldersComparison(ComparisonPart, frozen=True):
    """Two agents' folders of runs, paired by challenge (``compare DIR DIR``)."""

    schema: str
    mode: Literal["folders"]
    a: Side
    b: Side
    rows: list[Pair]
    winner: Winner  # the side the mean paired difference favours
    paired: Paired
    unmatched: Unmatched
    errors: list[str] = []
    # false when the 95% bootstrap interval of the mean paired difference includes 0 (or there are
    # too few pairs for one): the reports then say "no clear winner" rather than naming ``winner``
    clear: bool = True


Comparison = RunsComparison | FoldersComparison


# --------------------------------------------------------------------------- drift


class DriftPart(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the drift result's parts."""


class Segment(DriftPart, frozen=True):
    """What drift follows over time: a source, segmented by the runs' document type and verifier
    version where they carry them."""

    source: str
    doc_type: str | None  # null where the runs carry none
    verifier_version: str | None

    @property
    def segment(self) -> str:
        """``broker-a``, or ``broker-a · claim_form · verifier 3``."""
        parts = [self.source, self.doc_type or "", f"verifier {self.verifier_version}" if self.verifier_version else ""]
        return " · ".join(part for part in parts if part)


class FirstFailing(DriftPart, frozen=True):
    """The mix of a window's first failing tests: the most common, its share, how many distinct."""

    top: str | None
    top_share: float | None
    distinct: int


class DriftWindow(Segment, frozen=True):
    """One segment over one window (a day or an ISO week)."""

    window: str
    runs: int
    mean_attempts: float
    pass_rate: float
    finding_share: dict[str, float]
    first_failing_test: FirstFailing


class DriftAlert(Segment, frozen=True):
    window: str
    kind: Literal["attempts", "first_failing_test"]
    message: str


class DriftResult(DriftPart, frozen=True):
    """``procjudge drift``: every source's windows in order, and the alerts raised between them."""

    schema: str
    window: str
    threshold: float
    collapse: float
    runs: int
    runs_without_time: int
    series: list[DriftWindow]
    alerts: list[DriftAlert]


# --------------------------------------------------------------------------- review


class ReviewPart(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the review queue's and estimate's parts."""


class StratumDraw(ReviewPart, frozen=True):
    population: int
    sampled: int


class QueueEntry(ReviewPart, frozen=True):
    """One run to review, with its sampling weight (runs in its stratum / runs drawn from it)."""

    path: str
    stratum: str
    bucket: str
    attempts: int
    findings: list[str]
    process_score: float
    weight: float


class ReviewQueue(ReviewPart, frozen=True):
    """``procjudge review sample``: the strata and the runs drawn from each (written as JSON and
    read back by ``review estimate``)."""

    schema: str
    by: str
    seed: int
    per_stratum: int
    runs: int
    strata: dict[str, StratumDraw]
    queue: list[QueueEntry]


class StratumEstimate(ReviewPart, frozen=True):
    population: int
    share: float
    reviewed: int
    defects: int
    rate: float | None
    ci95: list[float] | None


class ReviewEstimate(ReviewPart, frozen=True):
    """``procjudge review estimate``: per stratum, and overall reweighted by each stratum's share."""

    schema: str
    by: str | None
    labels_used: int
    strata: dict[str, StratumEstimate]
    weighted_rate: float | None
    weighted_ci95: list[float] | None
    strata_covered_share: float
    unweighted_mean_of_strata: float | None
    note: str
    unlabelled_strata: list[str] = []  # strata with no label: the weighted rate is renormalised over the others


# --------------------------------------------------------------------------- the rule catalogue


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """One catalogue entry (``procjudge explain``, the SARIF rule list, docs/rules.md): a rule's
    declaration with its texts filled from the policy in force."""

    id: str
    kind: str
    points: str
    rule: str
    reads: str
    source: str
    summary: str
    accuses: bool = False


class Example(msgspec.Struct, frozen=True, kw_only=True):
    """A rule's example: a named case, its run as written, and what procjudge finds in it."""

    name: str
    run: str
    findings: list[tuple[float, list[int], str, str, str]]  # points, iterations, strength, basis, evidence


# --------------------------------------------------------------------------- a run's detail


class IterationDetail(msgspec.Struct, frozen=True, kw_only=True):
    """What a page shows of one submission beyond its verdict row: when it started, the tests
    failing and passing after it (by name, where the run has per-test outcomes), its diff (at most
    ``DIFF_MAX_LINES`` lines, with the full count), files, change summaries, action counts and
    log, and the build error."""

    number: int
    started: str | None = None
    failing: list[str] | None = None
    passing: list[str] | None = None
    diff: str = ""
    diff_lines: int = 0
    files: list[str] = []
    summary: list[str] = []
    actions: list[str] = []
    log: list[str] = []
    build: str | None = None


class RunDetail(msgspec.Struct, frozen=True, kw_only=True):
    """A run's detail, read from the run as it was scored (by the worker that judged it)."""

    iterations: list[IterationDetail]


class Judged(msgspec.Struct, frozen=True, kw_only=True):
    """A run judged for a page: its verdict and its detail."""

    verdict: Verdict
    detail: RunDetail | None = None


def most_different(result: FoldersComparison, count: int = 10) -> list[Pair]:
    """The pairs whose process scores differ most, the ones a comparison page opens side by side."""
    return sorted(result.rows, key=lambda p: -abs(p.difference))[:count]


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """``procjudge explain RULE``: the rule's catalogue entry and its example, scored now."""

    rule: Rule
    example: Example | None
