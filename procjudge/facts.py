"""What each submission did, derived once from a validated Run.

Every detector reads these facts instead of the raw records, so a quantity such as "tests fixed in
iteration 2" is computed in one place, with one rule, and says what evidence it rests on
(``basis``): per-test outcomes by name when the run has them, the document's plain counts
otherwise.

The submission plan is settled here too, before anything is scored: in sprint format a submission
followed by another within the double-submit window does not count; submissions past the budget
(per format, per marathon phase, or ``run.max_iterations``) are not scored, and the last valid
submission is the final one.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any, Optional

import msgspec

from .model import Counts, Entry, Run
from .policy import Policy

_DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(.+?)\s*$")
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|(^|/)conftest\.py$")


@functools.lru_cache(maxsize=4096)
def is_test_path(path: str) -> bool:
    """Whether a path names a test file (tests/, test_x.py, x_test.go, x.spec.ts, conftest.py)."""
    return bool(_TEST_PATH.search(path.replace("\\", "/")))


class FileDiff(msgspec.Struct, frozen=True):
    """What a diff adds to and removes from one file."""

    path: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    is_test: bool
    added_text: str  # the added lines joined by newlines, built once for the detectors that scan it


class Diff(msgspec.Struct, frozen=True):
    """A unified diff split per file into added and removed lines."""

    per_file: tuple[FileDiff, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.path for f in self.per_file if f.path))

    @property
    def empty(self) -> bool:
        return not any(f.added or f.removed for f in self.per_file)

    @property
    def size(self) -> int:
        """Characters added and removed."""
        return sum(len(f.added_text) for f in self.per_file) + sum(sum(map(len, f.removed)) for f in self.per_file)




def _file_chunks(text: str) -> list[str]:
    """Cut a diff where each file's ``--- `` / ``+++ `` header pair begins (found with str.find:
    C speed, no per-line Python); git's ``diff --git``/``index`` lines fall in the previous chunk
    and are ignored there, since they start with neither + nor -."""
    starts = [0]
    at = text.find("\n+++ ")
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        if line_start > 0 and text.startswith("--- ", line_start):
            starts.append(line_start)
        at = text.find("\n+++ ", at + 1)
    starts.append(len(text))
    return [text[a:b] for a, b in zip(starts, starts[1:]) if b > a]


def parse_diff(text: str) -> Diff:
    """Split a unified diff per file into added and removed lines (linear, no per-line branching)."""
    per_file = []
    for chunk in _file_chunks(text):
        if not chunk:
            continue
        lines = chunk.split("\n")
        path = ""
        header = 0
        for index, line in enumerate(lines[:6]):
            if line.startswith("@@"):
                break
            if line.startswith("+++ "):
                match = _DIFF_FILE.match(line)
                path = match.group(1) if match else ""
                header = index + 1
            elif line.startswith("--- ") and not path:
                candidate = line[4:].strip()
                path = candidate[2:] if candidate.startswith("a/") else candidate
                header = index + 1
            elif line.startswith("diff --git "):
                header = index + 1
        if path == "/dev/null":
            path = ""
        body = lines[header:]
        added = tuple([line[1:] for line in body if line[:1] == "+"])
        removed = tuple([line[1:] for line in body if line[:1] == "-"])
        if path or added or removed:
            per_file.append(FileDiff(path, added, removed, is_test_path(path) if path else False, "\n".join(added)))
    return Diff(tuple(per_file))


def iteration_number(entry: Entry, position: int) -> int:
    """The iteration number a record gives itself, else its position in the file."""
    recorded = entry.iteration_telemetry.iteration_number
    return recorded if recorded is not None else position


def parse_time(value: Optional[str]) -> Optional[float]:
    """Seconds since the epoch for an ISO 8601 timestamp, or None when absent or unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class IterationFacts(msgspec.Struct, frozen=True, kw_only=True):
    """One scored submission, as the detectors see it."""

    position: int  # index in the original file
    number: int  # iteration number as recorded (or the position)
    entry: Entry
    phase: Optional[str]
    score: float
    score_source: str
    delta: Optional[float]
    passed: Optional[int]
    failed: Optional[int]
    total: Optional[int]
    build_failed: bool
    timed_out: bool
    tests_not_run: int
    failing_before: Optional[frozenset[str]]
    failing_after: Optional[frozenset[str]]
    failures_before_count: Optional[int]
    tests_fixed: Optional[int]
    tests_broken: Optional[int]
    broken_names: tuple[str, ...]
    tests_basis: str
    files_changed: Optional[int]
    changed_paths: tuple[str, ...]
    stack_files_before: frozenset[str]
    duration: Optional[float]
    submitted_at: Optional[float]
    test_runs: Optional[int]
    file_edits: Optional[int]
    read_feedback: Optional[bool]
    seconds_before_first_edit: Optional[float]
    failures_referenced: Optional[int]
    code_hash: Optional[str]
    diff: Optional[Diff]
    hidden: Optional[Counts]

    @property
    def all_passing(self) -> bool:
        return self.total is not None and self.total > 0 and self.passed == self.total


class Exclusion(msgspec.Struct, frozen=True):
    """A submission that is not scored, and why (``rule`` is the rule item id)."""

    position: int
    number: int
    rule: str
    reason: str


class RunFacts(msgspec.Struct, frozen=True, kw_only=True):
    run: Run
    format: str
    budget: int
    iterations: tuple[IterationFacts, ...]
    excluded: tuple[Exclusion, ...]
    phases: tuple[str, ...]
    phase_budgets: dict[str, int]

    @property
    def trajectory(self) -> list[float]:
        return [it.score for it in self.iterations]

    @property
    def pairs(self) -> list[tuple[IterationFacts, IterationFacts]]:
        """Each scored submission with the one before it: (previous, current)."""
        return list(zip(self.iterations, self.iterations[1:]))

    @property
    def final(self) -> IterationFacts:
        return self.iterations[-1]


class FactsError(Exception):
    """A run that validates but cannot be placed on a trajectory; carries the iteration position."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position


def _build_failed(entry: Entry) -> bool:
    telemetry_build = entry.iteration_telemetry.build
    if telemetry_build is not None:
        return telemetry_build.status == "failure"
    feedback = entry.iteration_feedback
    return bool(feedback and feedback.build and feedback.build.status == "failure")


def _post_counts(entry: Entry) -> Optional[Counts]:
    results = entry.iteration_telemetry.test_results
    if results is not None and results.post_iteration is not None:
        return results.post_iteration
    feedback = entry.iteration_feedback
    if feedback is not None and feedback.tests is not None and feedback.tests.passed is not None:
        tests = feedback.tests
        return Counts(passed=tests.passed, failed=tests.failed, total=tests.total, skipped=tests.skipped)
    if results is not None and results.tests:
        passed = sum(1 for t in results.tests if t.outcome == "passed")
        failed = sum(1 for t in results.tests if t.outcome in ("failed", "error"))
        return Counts(passed=passed, failed=failed, total=passed + failed)
    return None


def _names(entry: Entry) -> tuple[Optional[frozenset[str]], Optional[frozenset[str]], frozenset[str]]:
    """(failing names, passing names, stack-trace files of the failing tests) after a submission."""
    results = entry.iteration_telemetry.test_results
    files: set[str] = set()
    failing: Optional[set[str]] = None
    passing: Optional[set[str]] = None
    if results is not None and results.tests:
        failing, passing = set(), set()
        for test in results.tests:
            if test.outcome in ("failed", "error"):
                failing.add(test.name)
                files.update(test.files or ())
            elif test.outcome == "passed":
                passing.add(test.name)
    feedback = entry.iteration_feedback
    if feedback is not None and feedback.tests is not None and feedback.tests.failures is not None:
        if failing is None:
            failing = set()
        for failure in feedback.tests.failures:
            failing.add(failure.name)
            files.update(failure.files or ())
    return (
        frozenset(failing) if failing is not None else None,
        frozenset(passing) if passing is not None else None,
        frozenset(files),
    )


def _changed(entry: Entry, diff: Optional[Diff]) -> tuple[Optional[int], tuple[str, ...]]:
    changes = entry.iteration_telemetry.changes
    if changes is None:
        return None, ()
    if changes.files is not None:
        return len(changes.files), tuple(f.path for f in changes.files)
    counts = [changes.files_modified, changes.files_created, changes.files_deleted]
    if any(c is not None for c in counts):
        return sum(c or 0 for c in counts), diff.files if diff else ()
    if diff is not None:
        return len(diff.files), diff.files
    return None, ()


def _tests_fixed_broken(
    before: tuple, after: tuple, results: Any, pre: Optional[Counts], passed: Optional[int]
) -> tuple[Optional[int], Optional[int], tuple[str, ...], str]:
    """(tests fixed, tests broken, names broken, basis) for one submission.

    By name when both it and the previous one have per-test outcomes; else broken is
    ``test_results.regressions`` or, without it, the drop in passes (a lower bound), and fixed
    is the gain in passes plus the broken ones."""
    failing_before, passing_before = before
    failing_after, passing_after = after
    if None not in (failing_before, passing_before, failing_after, passing_after):
        broken = tuple(sorted(passing_before & failing_after))
        return len(failing_before & passing_after), len(broken), broken, "per-test outcomes"
    broken_count = results.regressions if results and results.regressions is not None else None
    if pre is None or passed is None:
        return None, broken_count, (), "seed counts" if broken_count is not None else "none"
    gained = passed - pre.passed
    basis = "seed counts"
    if broken_count is None:
        broken_count, basis = max(0, -gained), "pass counts (lower bound)"
    return max(0, gained + broken_count), broken_count, (), basis


def _plan(run: Run, policy: Policy) -> tuple[list[int], list[Exclusion], dict[str, int], int]:
    """Which submissions are scored: double submits merged (sprint), budgets applied."""
    info = run.info
    fmt = policy.format(info.format)
    entries = run.iterations
    excluded: list[Exclusion] = []
    positions = list(range(len(entries)))

    def number(position: int) -> int:
        return iteration_number(entries[position], position)

    if info.format == "sprint" and fmt.min_gap_seconds is not None:
        kept = []
        for position in positions:
            nxt = position + 1
            if nxt < len(entries):
                now = parse_time(entries[position].iteration_telemetry.timestamp_submit)
                later = parse_time(entries[nxt].iteration_telemetry.timestamp_submit)
                if now is not None and later is not None and 0 <= later - now < fmt.min_gap_seconds:
                    excluded.append(Exclusion(position, number(position), "double_submit",
                                              f"followed by iteration {number(nxt)} {later - now:.0f}s later "
                                              f"(< {fmt.min_gap_seconds:.0f}s): only the second counts"))
                    continue
            kept.append(position)
        positions = kept

    phase_budgets: dict[str, int] = {}
    if info.phases:
        mode = info.phase_budget or ("per_phase" if any(p.max_iterations for p in info.phases) else "global")
        if mode == "per_phase":
            phase_budgets = {p.name: p.max_iterations or fmt.budget for p in info.phases}
    budget = info.max_iterations or (sum(phase_budgets.values()) if phase_budgets else fmt.budget)

    kept = []
    used_in_phase: dict[str, int] = {}
    for position in positions:
        phase = entries[position].iteration_telemetry.phase
        if phase_budgets and phase in phase_budgets:
            used = used_in_phase.get(phase, 0)
            if used >= phase_budgets[phase]:
                excluded.append(Exclusion(position, number(position), "budget_exceeded",
                                          f"phase `{phase}` allows {phase_budgets[phase]} submissions"))
                continue
            used_in_phase[phase] = used + 1
        if len(kept) >= budget:
            excluded.append(Exclusion(position, number(position), "budget_exceeded",
                                      f"the {info.format} budget is {budget} submissions"))
            continue
        kept.append(position)
    excluded.sort(key=lambda e: e.position)
    return kept, excluded, phase_budgets, budget


def derive(run: Run, policy: Policy) -> RunFacts:
    """Facts for every scored submission of a run, in order."""
    positions, excluded, phase_budgets, budget = _plan(run, policy)
    scope = policy.rules.build_failure.zero_score
    facts: list[IterationFacts] = []
    previous: Optional[IterationFacts] = None
    previous_names: tuple = (None, None, frozenset())
    for position in positions:
        entry = run.iterations[position]
        telemetry = entry.iteration_telemetry
        number = iteration_number(entry, position)
        build_failed = _build_failed(entry)
        counts = _post_counts(entry)
        passed = counts.passed if counts else None
        total = counts.total_or_sum if counts else None
        failed = (counts.failed if counts.failed is not None else (total - passed)) if counts else None
        timed_out = bool(telemetry.timed_out)
        tests_not_run = 0
        if timed_out and total is not None:
            completed = telemetry.tests_completed
            if completed is not None:
                tests_not_run = max(0, total - completed)
            else:
                tests_not_run = max(0, total - passed - (failed or 0))
            failed = total - passed
        first_of_phase = not facts or (telemetry.phase is not None and facts[-1].phase != telemetry.phase)
        zero_by_build = build_failed and (scope == "every_iteration" or first_of_phase)
        if zero_by_build:
            score, source = 0.0, "build failure"
        elif telemetry.score is not None and telemetry.score.post_iteration is not None:
            score, source = float(telemetry.score.post_iteration), "score.post_iteration"
        elif total:
            score, source = round(100.0 * passed / total, 2), "100 x passed / total"
        elif build_failed:
            score, source = 0.0, "build failure"
        else:
            raise FactsError(position, "needs score.post_iteration or test counts "
                                       "(test_results.post_iteration, iteration_feedback.tests) to be scored")

        failing_after, passing_after, stack_files = _names(entry)
        failing_before, passing_before, stack_before = previous_names
        diff = parse_diff(telemetry.changes.diff) if telemetry.changes and telemetry.changes.diff is not None else None

        results = telemetry.test_results
        pre = results.pre_iteration if results and results.pre_iteration else None
        if pre is None and previous is not None and previous.passed is not None:
            pre = Counts(passed=previous.passed, failed=previous.failed, total=previous.total)
        tests_fixed, tests_broken, broken_names, basis = _tests_fixed_broken(
            (failing_before, passing_before), (failing_after, passing_after), results, pre, passed
        )

        failures_before_count = None
        if previous is not None:
            failures_before_count = previous.failed
        elif pre is not None:
            failures_before_count = pre.failed if pre.failed is not None else (pre.total_or_sum - pre.passed)

        files_changed, changed_paths = _changed(entry, diff)
        actions = telemetry.actions
        analysis = telemetry.feedback_analysis
        test_runs = actions.test_runs if actions else None
        if actions and actions.log is not None and test_runs is None:
            test_runs = sum(1 for a in actions.log if a.tool == "run_tests")
        file_edits = actions.file_edits if actions else None
        if actions and actions.log is not None and file_edits is None:
            file_edits = sum(1 for a in actions.log if a.tool == "edit_file")
        started = parse_time(telemetry.timestamp_start)
        submitted = parse_time(telemetry.timestamp_submit)
        duration = telemetry.duration_seconds
        if duration is None and started is not None and submitted is not None and submitted >= started:
            duration = submitted - started
        seconds_before_edit = analysis.time_before_first_edit_seconds if analysis else None
        if seconds_before_edit is None and actions and actions.log:
            first_edit = next((a.at_seconds for a in actions.log if a.tool == "edit_file" and a.at_seconds is not None), None)
            seconds_before_edit = first_edit
        read_feedback = analysis.read_feedback if analysis else None
        if read_feedback is None and actions and actions.log is not None:
            read_feedback = any(a.tool == "read_feedback" for a in actions.log)

        current = IterationFacts(
            position=position, number=number, entry=entry, phase=telemetry.phase,
            score=score, score_source=source,
            delta=None if previous is None else round(score - previous.score, 6),
            passed=passed, failed=failed, total=total,
            build_failed=build_failed, timed_out=timed_out, tests_not_run=tests_not_run,
            failing_before=failing_before, failing_after=failing_after,
            failures_before_count=failures_before_count,
            tests_fixed=tests_fixed, tests_broken=tests_broken,
            broken_names=broken_names, tests_basis=basis,
            files_changed=files_changed, changed_paths=changed_paths, stack_files_before=stack_before,
            duration=duration, submitted_at=submitted,
            test_runs=test_runs, file_edits=file_edits, read_feedback=read_feedback,
            seconds_before_first_edit=seconds_before_edit,
            failures_referenced=analysis.failure_messages_referenced if analysis else None,
            code_hash=telemetry.changes.code_hash if telemetry.changes else None,
            diff=diff, hidden=results.hidden if results else None,
        )
        facts.append(current)
        previous = current
        previous_names = (failing_after, passing_after, stack_files)

    return RunFacts(
        run=run, format=run.info.format, budget=budget, iterations=tuple(facts), excluded=tuple(excluded),
        phases=tuple(p.name for p in run.info.phases or ()), phase_budgets=phase_budgets,
    )
