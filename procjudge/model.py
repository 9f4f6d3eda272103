"""The validated shape of a run file.

Every record here mirrors a record of the source document ("Iteration Telemetry", "What Agents
Receive Between Iterations") plus the optional extensions of the public contract.  The types are
msgspec Structs: immutable, keyword-only, and cheap to build, and msgspec's converter reports
every violation with the path of the offending field.  Limits on numbers (no negatives where a
count is meant, no NaN or infinity, nothing astronomically large) live in the annotations, so the
JSON Schema printed by ``procjudge schema`` carries them too.
"""

from __future__ import annotations

from typing import Annotated, Literal

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


# the words a run file's fields take (named, so that a builder's computed value can be typed as one)
FileStatus = Literal["modified", "created", "deleted", "renamed"]
EditVia = Literal["sed", "editor", "heredoc", "script", "redirect", "patch"]
CheckOutcome = Literal["passed", "failed", "error", "unavailable"]
CheckKind = Literal["test_runner", "project_script", "reproduction", "inline", "build"]
Unavailable = Literal["runner_missing", "output_cut", "no_output", "not_a_test_run"]
TestOutcomeWord = Literal["passed", "failed", "skipped", "error"]


class Record(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of every input record: immutable, keyword-only, unknown keys tolerated."""


class Counts(Record, frozen=True):
    """Pass/fail counts of one suite at one moment."""

    passed: Count = 0
    failed: Count | None = None
    total: Count | None = None
    skipped: Count | None = None

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


class ActionLogEntry(Record, frozen=True):
    tool: Literal["read_feedback", "read_file", "edit_file", "run_tests", "search", "submit", "other"]
    target: Name | None = None
    at_seconds: Seconds | None = None
    result: Counts | None = None


class Actions(Record, frozen=True):
    tool_calls_total: Count | None = None
    file_reads: Count | None = None
    file_edits: Count | None = None
    test_runs: Count | None = None
    search_operations: Count | None = None
    other_tools: Count | None = None
    log: list[ActionLogEntry] | None = None
    # extension, a shell log's final iteration: writes of source files after its last check (the
    # submitted code's last change was never run)
    untested_edits: Count | None = None
    # extension, with it: those source files, by path, in the order first written, and the last
    # check they came after (its command)
    untested_files: list[Name] | None = None
    last_check: Name | None = None


class EditText(Record, frozen=True):
    """One change an importer rebuilt from a shell command or an editor call: the text before and
    after (``old`` empty for an insertion or a new file) and what made it."""

    old: Text = ""
    new: Text = ""
    via: EditVia = "editor"


class FileChange(Record, frozen=True):
    path: Name
    status: FileStatus = "modified"
    previous_path: Name | None = None
    lines_added: Count | None = None
    lines_removed: Count | None = None
    scratch: bool | None = None  # a throw-away file (reproduction script, probe): not part of the fix
    edits: list[EditText] | None = None  # extension: the changes rebuilt from the agent's commands, in order
    # extension: the command that made the file by running a script whose text opens it for writing
    # (``python reproduce_issue.py`` writing its fixture app), when no other command of the iteration
    # wrote it: the script's output, not an edit of the agent's
    made_by: Text | None = None
    # extension: for a file the agent created, the first command that used it as a tool: ran it as a
    # script (``python update_deletion_final.py``) or fed it to an edit (``sed -i '691r replacement.txt'
    # F``, ``git apply fix.patch``)
    used_by: Text | None = None
    # extension: for a data file (JSON, CSV, text, YAML) the agent wrote by hand (a here-document,
    # ``echo``/``printf``, an editor), the decimal numbers it typed in that no command's output had
    # shown before, when there are three or more: values it made up, not ones it computed or read
    typed_numbers: list[Name] | None = None


class Changes(Record, frozen=True):
    files_modified: Count | None = None
    files_created: Count | None = None
    files_deleted: Count | None = None
    lines_added: Count | None = None
    lines_removed: Count | None = None
    net_lines_changed: SignedCount | None = None
    files: list[FileChange] | None = None
    diff: DiffText | None = None
    summary: list[Text] | None = None
    # extension: "prose" when the summary is the agent's own reasoning (an importer's THOUGHT text)
    # rather than a description of the change; scope_creep does not score prose
    summary_kind: Literal["descriptions", "prose"] | None = None
    code_hash: Name | None = None
    code: DiffText | None = None  # extension: the submitted code itself (importers record it)
    # extension: true when ``diff`` is the patch the agent handed in (a harness's submission), not
    # only what the iteration's own commands wrote; graded submissions are patches by definition
    submitted: bool | None = None
    # extension: the edits of this iteration an importer could not rebuild as text ("path: why"):
    # the rules that read edits saw them only in the submitted diff
    unrebuilt: list[Text] | None = None


class TestOutcome(Record, frozen=True):
    name: Name
    outcome: TestOutcomeWord
    category: Name | None = None
    message: Text | None = None
    files: list[Name] | None = None


class HiddenSuite(Counts, frozen=True):
    """One named held-back suite (``hidden`` sums them), with its tests' outcomes when known
    (SWE-bench's FAIL_TO_PASS and PASS_TO_PASS)."""

    name: Name = "hidden"
    tests: list[TestOutcome] | None = None


class Frame(Record, frozen=True):
    """A place a check's traceback passed through, in the repository."""

    path: Name
    line: Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)] | None = None


class LocalCheck(Record, frozen=True):
    """One check the agent ran on its code in its own runs, as an imported shell log records it:
    the command and its kind (a test runner, a script of the project's, a reproduction the agent
    wrote, inline code, a build), its exit status, what it showed (``error``: it crashed, or the
    runner printed no summary), the repository frames its traceback passed through, and why it
    could not run. Extensions: the line that shows its outcome, a test run's counts and failing
    tests, whether it ran again with nothing done since its previous run, and whether it ran with
    the agent's changes set aside (``on_base``)."""

    command: Name
    outcome: CheckOutcome
    kind: CheckKind | None = None
    exit_code: SignedCount | None = None
    frames: list[Frame] | None = None
    unavailable: Text | None = None
    message: Text | None = None
    passed: Count | None = None
    failed: Count | None = None
    failing: list[Name] | None = None
    unchanged: bool | None = None
    # extension: run while the agent's changes were set aside (``git stash`` ... ``git stash pop``, or
    # every file it changed restored with ``git checkout``/``git restore``, or each of its edits undone
    # by hand, until it changes one again):
    # what the unchanged code does, not a check of the agent's code
    on_base: bool | None = None
    # extension: the agent wrote the check's script again after the check last passed: what it shows
    # now is another check than the one that passed, so its failure breaks nothing that passed
    rewritten: bool | None = None


class TestResults(Record, frozen=True):
    pre_iteration: Counts | None = None
    post_iteration: Counts | None = None
    delta: SignedCount | None = None
    regressions: Count | None = None
    tests: list[TestOutcome] | None = None
    hidden: Counts | None = None
    hidden_suites: list[HiddenSuite] | None = None  # extension: several held-back suites, by name
    suite: Name | None = None  # the identity of the suite that produced the counts (command, targets)
    # extension: the tests' outcomes in the agent's own run before the iteration's first edit (an
    # imported shell log's baseline run): the failures it saw before its first change
    baseline_tests: list[TestOutcome] | None = None
    # extension, for local test runs: why the agent's test runs in this iteration (all of them when
    # there are no counts, else those besides the one counted) validated nothing
    unavailable: Unavailable | None = None


class ScoreRecord(Record, frozen=True):
    pre_iteration: IterationScore | None = None
    post_iteration: IterationScore | None = None
    delta: ScoreDelta | None = None
    samples: list[IterationScore] | None = None  # the same submission scored repeatedly: the score's noise


class FeedbackAnalysis(Record, frozen=True):
    read_feedback: bool | None = None
    time_before_first_edit_seconds: Seconds | None = None
    failure_messages_referenced: Count | None = None


class Build(Record, frozen=True):
    status: Literal["success", "failure"] = "success"
    errors: list[Text] | None = None
    warnings: list[Text] | None = None


class HistoryRead(Record, frozen=True):
    """A command that read the repository's history beyond the task's base (``git log --all``,
    ``git show REV``, ``git checkout REV -- F``, ``git fetch``, the reflog), with the revision it
    named and how many non-trivial lines of what it printed (or of the files it checked out) the
    submitted diff adds."""

    command: Name
    revision: Name | None = None
    lines_in_submission: Count = 0
    submission_lines: Count | None = None  # the non-trivial lines the submitted diff adds, all told


class IterationTelemetry(Record, frozen=True):
    """One submission: the source document's per-iteration telemetry record."""

    iteration_number: Count | None = None
    timestamp_start: Name | None = None
    timestamp_submit: Name | None = None
    duration_seconds: Seconds | None = None
    phase: Name | None = None
    build: Build | None = None
    timed_out: bool | None = None
    tests_completed: Count | None = None
    actions: Actions | None = None
    changes: Changes | None = None
    test_results: TestResults | None = None
    score: ScoreRecord | None = None
    feedback_analysis: FeedbackAnalysis | None = None
    history: list[HistoryRead] | None = None  # extension: reads of the repository history (shell agents)
    # for shell and tool-call agents: every check the agent ran on this iteration's code, in order (the test
    # results are one of them); what the agent saw before it submitted
    checks: Annotated[list[LocalCheck], msgspec.Meta(max_length=200)] | None = None
    # extension: a hybrid best-of-N's round: the parallel candidates the check rejected beside the one submitted
    siblings_failed: Count | None = None


class Failure(Record, frozen=True):
    name: Name
    message: Text | None = None
    category: Name | None = None
    files: list[Name] | None = None


class FeedbackTests(Record, frozen=True):
    total: Count | None = None
    passed: Count | None = None
    failed: Count | None = None
    skipped: Count | None = None
    failures: list[Failure] | None = None

    def __post_init__(self) -> None:
        if self.total is not None and self.passed is not None and self.passed > self.total:
            raise ValueError(f"field=passed: passed ({self.passed}) cannot exceed total ({self.total})")
        if self.total is not None and self.passed is not None and self.failed is not None and (
            self.passed + self.failed > self.total
        ):
            raise ValueError(f"field=failed: passed + failed ({self.passed} + {self.failed}) cannot exceed total ({self.total})")


class Lint(Record, frozen=True):
    errors: Count | None = None
    warnings: Count | None = None
    issues: list[Text] | None = None


class Coverage(Record, frozen=True):
    line_percent: Percent | None = None
    branch_percent: Percent | None = None
    uncovered_files: list[Name] | None = None


class IterationFeedback(Record, frozen=True):
    """The machine feedback produced by judging one submission."""

    iteration: Count | None = None
    timestamp: Name | None = None
    build: Build | None = None
    tests: FeedbackTests | None = None
    lint: Lint | None = None
    coverage: Coverage | None = None


class Entry(Record, frozen=True):
    iteration_telemetry: IterationTelemetry
    iteration_feedback: IterationFeedback | None = None


class Phase(Record, frozen=True):
    name: Name
    max_iterations: Annotated[int, msgspec.Meta(ge=1, le=10000)] | None = None


Format = Literal["sprint", "standard", "marathon"]


class Task(Record, frozen=True):
    """What the agent was given before its first submission: the statement and the visible tests.

    Literals found here are specification, not special-casing, unless a branch keyed on them
    returns a visible test's expected output; the visible tests are the cases a special case
    would be keyed on, from the first submission on."""

    statement: Text | None = None
    visible_tests: list[Text] | None = None
    language: Name | None = None


class Usage(Record, frozen=True):
    """What a run cost, where its log says: tokens, and money when the harness priced them."""

    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None
    cache_read_input_tokens: Count | None = None
    cost_usd: Annotated[float, msgspec.Meta(ge=0)] | None = None


class RunInfo(Record, frozen=True):
    id: Name | None = None
    agent: Name | None = None
    challenge: Name | None = None
    format: Format = "standard"
    max_iterations: Annotated[int, msgspec.Meta(ge=1, le=10000)] | None = None
    process_weight: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    source: Name | None = None
    started_at: Name | None = None
    # what the run worked on and which verifier graded it (the chapter's "doc_type" and
    # "verifier_version" tags): drift segments each source by them where runs carry them
    doc_type: Name | None = None
    verifier_version: Name | None = None
    phases: list[Phase] | None = None
    phase_budget: Literal["per_phase", "global"] | None = None
    task: Task | None = None
    siblings_failed: Count | None = None  # best-of-N: how many parallel candidates failed the check
    notes: list[Text] | None = None  # what an importer noticed about the log (shown as warnings)
    # extension: "local_runs" when each iteration ends with the agent's own test run (a shell
    # agent's log imported), not a graded submission the agent learns its results from afterwards
    iterations_are: Literal["submissions", "local_runs"] | None = None
    usage: Usage | None = None  # extension: tokens and cost, as the agent's log records them
    # extension: how the run ended when not by the agent's own choice to stop: it took an abort or an
    # escalation its harness offered, or the harness ended it (its clock, an error); never early termination
    ended_by: Literal["agent", "offered_abort", "offered_escalation", "harness"] | None = None
    # extension: the time the run was given; with too little of it left for another iteration, stopping is allowed
    time_budget_seconds: Seconds | None = None


class ActionEfficiency(Record, frozen=True):
    total_tool_calls: Count | None = None
    tool_calls_per_point_gained: Score | None = None
    file_edits_per_test_fixed: Score | None = None


class TimeEfficiency(Record, frozen=True):
    seconds_per_point_gained: Score | None = None
    time_distribution: list[Annotated[float, msgspec.Meta(ge=0, le=1)]] | None = None
    front_loaded: bool | None = None


class AggregateTelemetry(Record, frozen=True):
    total_iterations: Count | None = None
    total_duration_seconds: Seconds | None = None
    score_trajectory: list[Score] | None = None
    improvement_rate: Score | None = None
    regression_count: Count | None = None
    wasted_iterations: Count | None = None
    action_efficiency: ActionEfficiency | None = None
    time_efficiency: TimeEfficiency | None = None


class RunFile(Record, frozen=True, kw_only=True):
    """The canonical run file: every accepted shape is normalised to this before validation."""

    run: RunInfo = RunInfo()  # first: a run file written from the model opens with what the run is
    iterations: Annotated[list[Entry], msgspec.Meta(min_length=1, max_length=100_000)]
    aggregate_telemetry: AggregateTelemetry | None = None


class Run(msgspec.Struct, frozen=True, kw_only=True):
    """A validated run, with where it came from and what loading noticed."""

    path: str
    info: RunInfo
    iterations: list[Entry]
    aggregate: AggregateTelemetry | None
    warnings: tuple[str, ...] = ()
    # Line (1-based) of each iteration record in the source file, where known.
    lines: tuple[int | None, ...] = ()

    @property
    def id(self) -> str:
        if self.info.id:
            return self.info.id
        name = self.path.replace("\\", "/").rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0] if "." in name else name
