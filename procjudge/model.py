"""The validated shape of a run file.

Every record here mirrors a record of the source document ("Iteration Telemetry", "What Agents
Receive Between Iterations") plus the optional extensions of the public contract.  The types are
msgspec Structs: immutable, keyword-only, and cheap to build, and msgspec's converter reports
every violation with the path of the offending field.  Limits on numbers (no negatives where a
count is meant, no NaN or infinity, nothing astronomically large) live in the annotations, so the
JSON Schema printed by ``procjudge schema`` carries them too.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

import msgspec

# Bounds that refuse hostile numbers (1e400, NaN, 10**400) while admitting any real run.
MAX_COUNT = 10_000_000
MAX_SECONDS = 10_000_000.0
MAX_POINTS = 1_000_000.0

Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT, description="a non-negative count")]
SignedCount = Annotated[int, msgspec.Meta(ge=-MAX_COUNT, le=MAX_COUNT)]
Seconds = Annotated[float, msgspec.Meta(ge=0, le=MAX_SECONDS, description="seconds, >= 0")]
Score = Annotated[float, msgspec.Meta(ge=-MAX_POINTS, le=MAX_POINTS, description="a finite score")]
# An iteration's score is on the document's 0..100 scale; anything outside it is a broken record.
IterationScore = Annotated[float, msgspec.Meta(ge=0, le=100, description="a score on the 0..100 scale")]
ScoreDelta = Annotated[float, msgspec.Meta(ge=-100, le=100, description="a score change, -100..100")]
Percent = Annotated[float, msgspec.Meta(ge=0, le=100)]
Text = Annotated[str, msgspec.Meta(max_length=1_000_000)]
Name = Annotated[str, msgspec.Meta(max_length=10_000)]
DiffText = Annotated[str, msgspec.Meta(max_length=64_000_000)]


class Record(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of every input record: immutable, keyword-only, unknown keys tolerated."""


class Counts(Record):
    """Pass/fail counts of one suite at one moment."""

    passed: Count = 0
    failed: Optional[Count] = None
    total: Optional[Count] = None
    skipped: Optional[Count] = None

    def __post_init__(self) -> None:
        if self.total is not None and self.passed > self.total:
            raise ValueError(f"field=passed: passed ({self.passed}) cannot exceed total ({self.total})")
        if (
            self.total is not None
            and self.failed is not None
            and self.passed + self.failed > self.total
        ):
            raise ValueError(
                f"field=failed: passed + failed ({self.passed} + {self.failed}) cannot exceed total ({self.total})"
            )

    @property
    def total_or_sum(self) -> int:
        """The suite size: ``total`` when given, else ``passed + failed``."""
        if self.total is not None:
            return self.total
        return self.passed + (self.failed or 0)


class ActionLogEntry(Record):
    tool: Literal["read_feedback", "read_file", "edit_file", "run_tests", "search", "submit", "other"]
    target: Optional[Name] = None
    at_seconds: Optional[Seconds] = None
    result: Optional[Counts] = None


class Actions(Record):
    tool_calls_total: Optional[Count] = None
    file_reads: Optional[Count] = None
    file_edits: Optional[Count] = None
    test_runs: Optional[Count] = None
    search_operations: Optional[Count] = None
    other_tools: Optional[Count] = None
    log: Optional[list[ActionLogEntry]] = None


class FileChange(Record):
    path: Name
    status: Literal["modified", "created", "deleted", "renamed"] = "modified"
    previous_path: Optional[Name] = None
    lines_added: Optional[Count] = None
    lines_removed: Optional[Count] = None
    scratch: Optional[bool] = None  # a throw-away file (reproduction script, probe): not part of the fix


class Changes(Record):
    files_modified: Optional[Count] = None
    files_created: Optional[Count] = None
    files_deleted: Optional[Count] = None
    lines_added: Optional[Count] = None
    lines_removed: Optional[Count] = None
    net_lines_changed: Optional[SignedCount] = None
    files: Optional[list[FileChange]] = None
    diff: Optional[DiffText] = None
    summary: Optional[list[Text]] = None
    code_hash: Optional[Name] = None
    code: Optional[DiffText] = None  # extension: the submitted code itself (importers record it)


class TestOutcome(Record):
    name: Name
    outcome: Literal["passed", "failed", "skipped", "error"]
    category: Optional[Name] = None
    message: Optional[Text] = None
    files: Optional[list[Name]] = None


class HiddenSuite(Counts):
    """One named held-back suite (``hidden`` sums them)."""

    name: Name = "hidden"


class TestResults(Record):
    pre_iteration: Optional[Counts] = None
    post_iteration: Optional[Counts] = None
    delta: Optional[SignedCount] = None
    regressions: Optional[Count] = None
    tests: Optional[list[TestOutcome]] = None
    hidden: Optional[Counts] = None
    hidden_suites: Optional[list[HiddenSuite]] = None  # extension: several held-back suites, by name
    suite: Optional[Name] = None  # the identity of the suite that produced the counts (command, targets)


class ScoreRecord(Record):
    pre_iteration: Optional[IterationScore] = None
    post_iteration: Optional[IterationScore] = None
    delta: Optional[ScoreDelta] = None
    samples: Optional[list[IterationScore]] = None  # the same submission scored repeatedly: the score's noise


class FeedbackAnalysis(Record):
    read_feedback: Optional[bool] = None
    time_before_first_edit_seconds: Optional[Seconds] = None
    failure_messages_referenced: Optional[Count] = None


class Build(Record):
    status: Literal["success", "failure"] = "success"
    errors: Optional[list[Text]] = None
    warnings: Optional[list[Text]] = None


class IterationTelemetry(Record):
    """One submission: the source document's per-iteration telemetry record."""

    iteration_number: Optional[Count] = None
    timestamp_start: Optional[Name] = None
    timestamp_submit: Optional[Name] = None
    duration_seconds: Optional[Seconds] = None
    phase: Optional[Name] = None
    build: Optional[Build] = None
    timed_out: Optional[bool] = None
    tests_completed: Optional[Count] = None
    actions: Optional[Actions] = None
    changes: Optional[Changes] = None
    test_results: Optional[TestResults] = None
    score: Optional[ScoreRecord] = None
    feedback_analysis: Optional[FeedbackAnalysis] = None


class Failure(Record):
    name: Name
    message: Optional[Text] = None
    category: Optional[Name] = None
    files: Optional[list[Name]] = None


class FeedbackTests(Record):
    total: Optional[Count] = None
    passed: Optional[Count] = None
    failed: Optional[Count] = None
    skipped: Optional[Count] = None
    failures: Optional[list[Failure]] = None

    def __post_init__(self) -> None:
        if self.total is not None and self.passed is not None and self.passed > self.total:
            raise ValueError(f"field=passed: passed ({self.passed}) cannot exceed total ({self.total})")
        if self.total is not None and self.passed is not None and self.failed is not None and (
            self.passed + self.failed > self.total
        ):
            raise ValueError(f"field=failed: passed + failed ({self.passed} + {self.failed}) cannot exceed total ({self.total})")


class Lint(Record):
    errors: Optional[Count] = None
    warnings: Optional[Count] = None
    issues: Optional[list[Text]] = None


class Coverage(Record):
    line_percent: Optional[Percent] = None
    branch_percent: Optional[Percent] = None
    uncovered_files: Optional[list[Name]] = None


class IterationFeedback(Record):
    """The machine feedback produced by judging one submission."""

    iteration: Optional[Count] = None
    timestamp: Optional[Name] = None
    build: Optional[Build] = None
    tests: Optional[FeedbackTests] = None
    lint: Optional[Lint] = None
    coverage: Optional[Coverage] = None


class Entry(Record):
    iteration_telemetry: IterationTelemetry
    iteration_feedback: Optional[IterationFeedback] = None


class Phase(Record):
    name: Name
    max_iterations: Optional[Annotated[int, msgspec.Meta(ge=1, le=10_000)]] = None


Format = Literal["sprint", "standard", "marathon"]


class Task(Record):
    """What the agent was given before its first submission: the statement and the visible tests.

    Literals found here are specification, not special-casing, unless a branch keyed on them
    returns a visible test's expected output; the visible tests are the cases a special case
    would be keyed on, from the first submission on."""

    statement: Optional[Text] = None
    visible_tests: Optional[list[Text]] = None
    language: Optional[Name] = None


class RunInfo(Record):
    id: Optional[Name] = None
    agent: Optional[Name] = None
    challenge: Optional[Name] = None
    format: Format = "standard"
    max_iterations: Optional[Annotated[int, msgspec.Meta(ge=1, le=10_000)]] = None
    process_weight: Optional[Annotated[float, msgspec.Meta(ge=0, le=1)]] = None
    source: Optional[Name] = None
    started_at: Optional[Name] = None
    phases: Optional[list[Phase]] = None
    phase_budget: Optional[Literal["per_phase", "global"]] = None
    task: Optional[Task] = None
    siblings_failed: Optional[Count] = None  # best-of-N: how many parallel candidates failed the check
    notes: Optional[list[Text]] = None  # what an importer noticed about the log (shown as warnings)


class ActionEfficiency(Record):
    total_tool_calls: Optional[Count] = None
    tool_calls_per_point_gained: Optional[Score] = None
    file_edits_per_test_fixed: Optional[Score] = None


class TimeEfficiency(Record):
    seconds_per_point_gained: Optional[Score] = None
    time_distribution: Optional[list[Annotated[float, msgspec.Meta(ge=0, le=1)]]] = None
    front_loaded: Optional[bool] = None


class AggregateTelemetry(Record):
    total_iterations: Optional[Count] = None
    total_duration_seconds: Optional[Seconds] = None
    score_trajectory: Optional[list[Score]] = None
    improvement_rate: Optional[Score] = None
    regression_count: Optional[Count] = None
    wasted_iterations: Optional[Count] = None
    action_efficiency: Optional[ActionEfficiency] = None
    time_efficiency: Optional[TimeEfficiency] = None


class RunFile(Record):
    """The canonical run file: every accepted shape is normalised to this before validation."""

    iterations: Annotated[list[Entry], msgspec.Meta(min_length=1, max_length=100_000)]
    run: RunInfo = RunInfo()
    aggregate_telemetry: Optional[AggregateTelemetry] = None


class Run(msgspec.Struct, frozen=True, kw_only=True):
    """A validated run, with where it came from and what loading noticed."""

    path: str
    info: RunInfo
    iterations: list[Entry]
    aggregate: Optional[AggregateTelemetry]
    warnings: tuple[str, ...] = ()
    # Line (1-based) of each iteration record in the source file, where known.
    lines: tuple[Optional[int], ...] = ()

    @property
    def id(self) -> str:
        if self.info.id:
            return self.info.id
        name = self.path.replace("\\", "/").rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0] if "." in name else name
