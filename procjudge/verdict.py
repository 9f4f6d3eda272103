"""The typed result of judging one run: ``Verdict`` and every part of it.

These are msgspec Structs, like the input model, so a verdict encodes to JSON or MessagePack and
decodes back to the same value (a batch worker sends verdicts to the parent that way), and every
report reads named, typed fields rather than dictionary keys. The field names and their order are
the JSON that ``procjudge score --format json`` prints.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .model import Usage

SCHEMA = "procjudge.score/1"


class Part(msgspec.Struct, frozen=True, kw_only=True):
    """Base of the verdict's parts: immutable and keyword-only."""


class Item(Part, frozen=True, omit_defaults=True):
    """One scored finding: the rule that produced it, its points, where, and on what evidence."""

    id: str
    kind: str
    points: float
    iterations: list[int]
    evidence: str
    basis: str
    strength: str
    detail: dict[str, Any] | None = None
    polarity: Literal["+", "-"] | None = None  # a telemetry signal: good (+) or bad (-) practice
    per_iteration: bool = False  # a telemetry signal at 0 points: reports list it per iteration, not among the items
    accuses: bool = False  # its rule accuses the agent of cheating (definite evidence scores the run the floor)


class RunSummary(Part, frozen=True):
    """Who ran what: the run's identity as the file declares it, with the budget that applied."""

    id: str
    agent: str | None
    challenge: str | None
    format: str
    path: str
    source: str | None
    budget: int
    started_at: str | None
    first_failing_test: str | None
    doc_type: str | None = None
    verifier_version: str | None = None
    usage: Usage | None = None  # tokens and cost, as the run's log records them


class GateRound(Part, frozen=True):
    """One submission as the replayed regression gate saw it."""

    iteration: int
    decision: Literal["incumbent", "accepted", "rejected", "not_offered"]
    clause: str
    check: str | None


class GateReplay(Part, frozen=True):
    """The regression gate replayed over the run; ``replayed`` is false (with the ``reason``) when
    the run lacks per-test outcomes for every submission, and the other fields are then null."""

    replayed: bool
    reason: str | None = None
    margin: float | None = None
    noise_floor: float | None = None
    iterations: list[GateRound] = []
    returned_round: int | None = None
    returned_iteration: int | None = None
    gated_final: float | None = None
    actual_final: float | None = None
    saved: float | None = None
    revisions_offered: int | None = None
    revisions_rejected: int | None = None
    rejected_by_clause: dict[str, int] | None = None
    # why later rounds were not offered: the incumbent passed everything (early exit), or the
    # rejections in a row reached the limit; null when every round was offered
    stopped: Literal["early_exit", "rejections"] | None = None


class Attempts(Part, frozen=True):
    """The attempt count as a risk signal, and how the run ended."""

    count: int
    bucket: str
    basis: Literal["attempts", "siblings_failed"]
    siblings_failed: int | None
    outcome: Literal["passed", "exhausted", "stopped"]


class NotChecked(Part, frozen=True):
    """A detector that could not be evaluated on this run, and why."""

    detector: str
    reason: str


class PhaseSummary(Part, frozen=True):
    """A marathon phase: its budget, what it used and lost, and the items confined to it."""

    name: str
    budget: int | None
    used: int
    unused_lost: int | None
    not_scored: int
    trajectory: list[float]
    iterations: list[int]
    points: float
    items: list[str]


class ActionEfficiency(Part, frozen=True):
    total_tool_calls: int | None
    tool_calls_per_point_gained: float | None
    file_edits_per_test_fixed: float | None


class TimeEfficiency(Part, frozen=True):
    seconds_per_point_gained: float | None
    time_distribution: list[float] | None
    front_loaded: bool | None


class Aggregate(Part, frozen=True):
    """The source document's ``aggregate_telemetry`` figures, computed from the iterations."""

    total_iterations: int
    total_duration_seconds: float | None
    score_trajectory: list[float]
    improvement_rate: float | None
    regression_count: int
    wasted_iterations: int
    action_efficiency: ActionEfficiency
    time_efficiency: TimeEfficiency


class IterationRow(Part, frozen=True):
    """One scored submission: its score and where it came from, the tests, and the signals that
    hold for it."""

    iteration: int
    score: float
    score_source: str
    delta: float | None
    passed: int | None
    total: int | None
    phase: str | None
    duration_seconds: float | None
    signals: list[str]


class HeldBack(Part, frozen=True):
    """The held-back suite of the submission the run returned (the checks the agent never saw, such
    as SWE-bench's FAIL_TO_PASS and PASS_TO_PASS): whether it resolves the task (every held-back
    test passes; null when the suite ran no test), its counts, and the first failing tests by name."""

    resolved: bool | None
    passed: int
    total: int
    failing: list[str]
    failing_count: int


class Verdict(Part, frozen=True, omit_defaults=True):
    """The judgement of one run: what ``--format json`` prints."""

    schema: str
    run: RunSummary
    trajectory: list[float]
    iterations_used: int
    final_score: float
    process_score: float
    raw_process_score: float
    composite_swing: float
    tier: str
    tier_rule: str
    pattern: str
    pattern_rule: str
    process_rule: str
    best_score: float
    best_iteration: int
    final_minus_best: float
    last_score: float
    gate: GateReplay
    attempts: Attempts
    items: list[Item]
    not_checked: list[NotChecked]
    phases: list[PhaseSummary]
    aggregate: Aggregate
    iterations: list[IterationRow]
    warnings: list[str]
    held_back: HeldBack | None = None  # only for runs with a held-back suite
    # how many of ``warnings`` (the first ones) are about the input (unknown keys, implausible
    # values, an aggregate that disagrees); the rest are what an importer noticed in its log
    input_warnings: int = 0

    @property
    def anti_patterns(self) -> list[str]:
        """Ids of the anti-patterns found, in report order, without repeats. A weak finding that
        scores nothing (shown for a reviewer, as an edited test the held-back suite vindicates)
        is not one: it neither counts in the summaries nor trips a --fail-on gate."""
        return list(dict.fromkeys(i.id for i in self.items if i.kind == "anti_pattern" and not _note(i)))

    @property
    def accused(self) -> bool:
        """Whether an accusing rule found something (a weak note that scores nothing is not a finding)."""
        return any(i.accuses and not _note(i) for i in self.items)

    @property
    def findings(self) -> list[str]:
        """Ids of every item a --fail-on gate can name, less the weak notes that score nothing (of
        any kind: a step ``wasted_iteration`` shows and does not charge is no wasted iteration)."""
        return sorted({i.id for i in self.items if not _note(i)})


def _note(item: Item) -> bool:
    """A 0-point item shown for a reviewer, not found: on weak evidence, or marked ``shown_only``
    by its detector (a regression the agent's own test run showed and the next iteration
    repaired)."""
    return item.points == 0 and (item.strength == "weak" or bool((item.detail or {}).get("shown_only")))


VERDICT_DECODER = msgspec.msgpack.Decoder(Verdict)
