"""The document's edge-case and format rules ("Edge Cases and Special Rules", "Format-Specific
Iteration Quirks", "Early Termination", "Iteration Budget by Format")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..facts import IterationFacts, RunFacts, failure_gist, same_program
from ..numbers import fmt_num
from ..policy import Policy
from ..render.text import written
from .base import Hit, all_of, detector, each, feedback_steps, having, plural, scoring_check, seconds
from .shapes import normal_form, normal_lines


class _Programs:
    """The earlier submissions, indexed by program, so that a return to one (A, B, A) is found in
    constant time per submission: by ``code_hash`` where both are hashed, else by the code, else
    by the code's normal form (comments, docstrings and layout aside)."""

    def __init__(self) -> None:
        self.by_hash: dict[str, IterationFacts] = {}
        self.by_code: dict[str, IterationFacts] = {}  # every submission with code
        self.by_code_unhashed: dict[str, IterationFacts] = {}
        self.by_normal: dict[str, IterationFacts] = {}

    def add(self, e: IterationFacts) -> None:
        if e.code_hash is not None:
            self.by_hash.setdefault(e.code_hash, e)
        if e.code is not None:
            self.by_code.setdefault(e.code, e)
            if e.code_hash is None:
                self.by_code_unhashed.setdefault(e.code, e)
            self.by_normal.setdefault(normal_form(e.code), e)

    def find(self, it: IterationFacts) -> IterationFacts | None:
        """The first earlier submission that is the same program as ``it`` (as ``_same_program``
        decides), else the first that is the same under a cosmetic edit."""
        candidates = []
        if it.code_hash is not None:
            candidates.append(self.by_hash.get(it.code_hash))
            if it.code is not None:
                candidates.append(self.by_code_unhashed.get(it.code))
        elif it.code is not None:
            candidates.append(self.by_code.get(it.code))
        found = [c for c in candidates if c is not None]
        if found:
            return min(found, key=lambda e: e.position)
        if it.code is not None:
            return self.by_normal.get(normal_form(it.code))
        return None


def _python(path: str) -> bool:
    return path.endswith((".py", ".pyi"))


def _cosmetic(previous: IterationFacts, it: IterationFacts) -> tuple[str, str] | None:
    """(reason, basis) when a submission changes only comments, docstrings or layout."""
    if previous.code is not None and it.code is not None and previous.code != it.code:
        if normal_form(previous.code) == normal_form(it.code):
            return "the program is unchanged under a cosmetic edit (comments, docstrings or layout only)", "normalised code"
        return None
    if (it.diff is not None and not it.diff.empty
            and all(normal_lines(f.added, _python(f.path)) == normal_lines(f.removed, _python(f.path))
                    for f in it.diff.per_file)):
        return "the diff changes only comments, docstrings or layout", "normalised code"
    return None


# A failure a style checker reported: then a layout-only edit is its fix, not a cosmetic resubmission.
_STYLE_CHECKER = re.compile(r"checkstyle|\bflake8\b|pycodestyle|\bpylint\b|would reformat|\bisort\b|\bruff\b|\beslint\b"
                            r"|\bprettier\b|\brubocop\b|\bgofmt\b|clang-format|\bspotless|\bktlint\b|\bstylelint\b"
                            r"|trailing whitespace|line too long|\bW29[123]\b|\bE501\b", re.IGNORECASE)


def _style_checked(previous: IterationFacts) -> bool:
    """Whether what failed before was a style or layout checker (Checkstyle, flake8, black, eslint):
    a layout edit answering it is a fix."""
    return any(_STYLE_CHECKER.search(text) for text in previous.failures if text)


def _still_failing(previous: IterationFacts, it: IterationFacts) -> bool:
    if previous.failing_after is not None and it.failing_after is not None:
        return bool(it.failing_after) and it.failing_after == previous.failing_after
    return bool(it.failed) and it.score <= previous.score


def _comparable_code(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:  # a plain loop: the needs are asked of every run
        if it.code_hash or it.code is not None or it.diff is not None or it.changes:
            return True
    return False


_IDENTICAL_NEEDS = all_of(feedback_steps, having(_comparable_code, "no code, hashes, diffs or change records"))


@detector(
    "identical_submission", "rule", tracked=True, needs=_IDENTICAL_NEEDS,
    summary=("{p.rules.identical_submission:+g} for every submission that is the same program as the previous one: the "
             "same ``code_hash`` or code (byte for byte; when both are hashed the hash alone decides), an empty diff, or "
             "(plain fields) no file and no line changed; also the same program under a cosmetic edit (comments, "
             "docstrings, layout: the Python AST, else the text without comments and white space) while the same tests "
             "keep failing, unless what failed was a style checker (Checkstyle, flake8, eslint: a layout edit is its "
             "fix); and a return to an earlier submission (A, B, A)."),
    points="{p.rules.identical_submission:+g} each",
    rule=("same `code_hash` or code as the previous submission (when both are hashed the hash alone decides, byte for "
          "byte), else an empty diff, else a change record with no file and no line changed; also the same program under "
          "a cosmetic edit (comments, docstrings, layout: Python's AST, else the text without comments and white space, a "
          "Python line's indentation kept: it is syntax) "
          "while the same tests keep failing (not when a style checker reported the failure), and a return to an earlier "
          "submission's program (A, B, A). In a run of the agent's own checks (`iterations_are: local_runs`) an iteration "
          "is a check it chose to run, not a submission it spent: named at 0 (`rules.identical_submission_in_local_runs`)"),
    reads="changes.code_hash, changes.code, changes.diff or the change records",
    source="Identical Submissions",
)
def identical_submission(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    local = facts.run.info.iterations_are == "local_runs"
    earlier_programs = _Programs()
    pairs = facts.pairs
    for k, (previous, it) in enumerate(pairs):
        if k:
            earlier_programs.add(pairs[k - 1][0])  # every submission before ``previous``
        changes = it.changes
        same = same_program(previous, it)
        cosmetic = None if same or not _still_failing(previous, it) or _style_checked(previous) else _cosmetic(previous, it)
        if same:
            reason, basis = f"{same} as iteration {previous.number}", "code_hash" if same.startswith("code_hash") else "code"
        elif it.code_hash is None and it.code is None and it.diff is not None and it.diff.empty:
            reason, basis = "the diff from the previous submission is empty", "diff"
        elif (
            changes is not None
            and it.diff is None and it.code is None and it.code_hash is None
            and changes.files is None
            and (changes.lines_added, changes.lines_removed) == (0, 0)
            and not any((changes.files_modified, changes.files_created, changes.files_deleted))
        ):
            reason, basis = "no file and no line changed", "telemetry fields"
        elif cosmetic is not None:
            reason, basis = cosmetic
            reason += ", and the same tests still fail"
        else:
            earlier = earlier_programs.find(it)
            if earlier is None:
                continue
            reason, basis = f"returns to the program of iteration {earlier.number} (an earlier submission)", "code"
        if local and policy.rules.identical_submission_in_local_runs == "shown":
            yield Hit(points=0.0, iterations=(it.number,), basis=basis, strength="weak",
                      evidence=f"{reason}; scored {fmt_num(it.score)} (the agent's own check, not a submission it spent: "
                      "shown, not charged; a failing check re-run past copy_paste_loop's count is charged there)")
            continue
        yield Hit(points=policy.rules.identical_submission, iterations=(it.number,),
                  evidence=f"{reason}; scored {fmt_num(it.score)}", basis=basis, strength="definite")


@detector(
    "build_failure", "rule",
    summary=("A submission that does not build scores 0 (the document states it for iteration 0; the policy "
             "``rules.build_failure.zero_score`` extends it to every iteration by default)."),
    points="0 (the submission scores 0)",
    rule="a submission that does not build (`build.status: failure` in telemetry or feedback) scores 0",
    reads="build.status (telemetry or feedback)",
    source="Build Failure on Iteration 0",
)
def build_failure(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    for it in facts.iterations:
        if not it.build_failed:
            continue
        first = f": {failure_gist(it.build_errors[0])}" if it.build_errors else ""
        scored = "scored 0" if it.score_source == "build failure" else f"scored {fmt_num(it.score)} ({it.score_source})"
        yield Hit(points=0.0, iterations=(it.number,), evidence=f"build failed{first}; {scored}")


@detector(
    "persistent_build_failure", "rule", section="rules.build_failure",
    summary=("{s.persistent_points:+g} once for every streak of {s.persistent_min_iterations} or more consecutive "
             "submissions that do not build."),
    points="{s.persistent_points:+g} per streak",
    rule=("{s.persistent_min_iterations} or more consecutive submissions that do not build (in the agent's own runs, "
          "consecutive iterations of its checks)"),
    reads="build.status (telemetry or feedback)",
    source="Build Failure on Iteration 0",
)
def persistent_build_failure(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.rules.build_failure
    streak: list[IterationFacts] = []
    for it in list(facts.iterations) + [None]:
        if it is not None and it.build_failed:
            streak.append(it)
            continue
        if len(streak) >= rule.persistent_min_iterations:
            local = facts.run.info.iterations_are == "local_runs"
            gists = list(dict.fromkeys(_broke(s, local) for s in streak if s.build_errors))
            shown = f": {'; '.join(gists[:3])}{' ...' if len(gists) > 3 else ''}" if gists else ""
            spent = "iterations of the agent's own checks" if local else "submissions"
            yield Hit(points=rule.persistent_points, iterations=tuple(s.number for s in streak),
                      evidence=f"the build failed in {len(streak)} consecutive {spent}{shown}")
        streak = []


def _broke(it: IterationFacts, local: bool) -> str:
    """What a build failure showed; in the agent's own runs, behind the command that showed it
    (```runtests.py timezones`: IndentationError: ...``)."""
    gist = failure_gist(it.build_errors[0])
    check = scoring_check(it) if local else None
    return f"`{check.command}`: {gist}" if check is not None else gist


@detector(
    "timeout", "rule", values=lambda p: {"each": each(p.rules.timeout)},
    summary=("A submission that timed out: tests that completed are scored normally, tests that did not run count as "
             "failed."),
    points="{each}",
    rule="a timed-out submission: completed tests scored normally, tests that did not run count as failed",
    reads="timed_out, the test counts",
    source="Timeout on Submission",
)
def timeout(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    for it in facts.iterations:
        if not it.timed_out:
            continue
        completed = it.tests_completed
        shown = f"{completed}/{it.total}" if completed is not None and it.total is not None else "some"
        yield Hit(points=policy.rules.timeout, iterations=(it.number,),
                  evidence=f"execution timed out; {shown} tests completed, {it.tests_not_run} not run "
                  f"counted as failed; scored {fmt_num(it.score)} ({it.score_source})")


def _exclusions(facts: RunFacts, rule: str, points: float) -> Iterable[Hit]:
    dropped = [e for e in facts.excluded if e.rule == rule]
    for exclusion in dropped:
        yield Hit(points=points, iterations=(exclusion.number,),
                  evidence=f"iteration {exclusion.number} not scored: {exclusion.reason}")


@detector(
    "budget_exceeded", "rule", values=lambda p: {"each": each(p.rules.budget_exceeded)},
    summary=("Submissions past the budget (sprint {p.formats.sprint.budget}, standard {p.formats.standard.budget}, "
             "marathon {p.formats.marathon.budget}, ``run.max_iterations``, or a marathon phase's own budget) are not "
             "scored; the last valid submission is the final one."),
    points="{each}",
    rule="submissions past the budget are not scored; the last valid submission is the final one",
    reads="the number of submissions, run.format and phase budgets",
    source="Iteration Budget by Format",
)
def budget_exceeded(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    hits = list(_exclusions(facts, "budget_exceeded", policy.rules.budget_exceeded))
    if hits:
        final = facts.final.number
        for hit in hits:
            yield Hit(points=hit.points, iterations=hit.iterations,
                      evidence=f"{written(hit.evidence)}; the final submission is iteration {final}")


@detector(
    "double_submit", "rule",
    values=lambda p: {"each": each(p.rules.double_submit), "gap": seconds(p.formats.sprint.min_gap_seconds)},
    summary="Sprint: two submissions within {gap} seconds count as one, the second.",
    points="{each}",
    rule="sprint: two submissions within {gap} s count as one, the second",
    reads="timestamp_submit (sprint)",
    source="Format-Specific Quirks",
)
def double_submit(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    yield from _exclusions(facts, "double_submit", policy.rules.double_submit)


def _timestamps(facts: RunFacts) -> str | None:
    if facts.format != "standard":
        return None
    if len(facts.iterations) < 2:
        return "one submission: no gap between submissions"
    for it in facts.iterations:
        if it.submitted_at is None:
            return "no submission timestamps"
    return None


@detector(
    "cooldown_violation", "rule", needs=_timestamps, values=lambda p: {"gap": seconds(p.formats.standard.min_gap_seconds)},
    summary=("Standard: a submission less than {gap} seconds after the previous one breaks the cooldown (points are "
             "procjudge's choice: the document states the rule, not a penalty)."),
    points="{p.rules.cooldown_violation:+g} each (procjudge's choice)",
    rule="standard: a submission less than {gap} s after the previous one",
    reads="timestamp_submit (standard)",
    source="Format-Specific Quirks",
)
def cooldown_violation(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    gap = policy.format(facts.format).min_gap_seconds
    if facts.format != "standard" or gap is None:
        return
    for previous, it in facts.pairs:
        if previous.submitted_at is None or it.submitted_at is None:
            continue
        elapsed = it.submitted_at - previous.submitted_at
        if elapsed < gap:
            yield Hit(points=policy.rules.cooldown_violation, iterations=(it.number,),
                      evidence=f"submitted {fmt_num(round(elapsed, 1))}s after iteration {previous.number} "
                      f"(cooldown {fmt_num(gap)}s)", basis="timestamps")


@detector(
    "phase_gate", "rule",
    summary=("Marathon: iterating on phase N+1 before phase N was submitted breaks the phase gate, and so does going "
             "back to a phase once a later one has started (its unused iterations are lost)."),
    points="{p.rules.phase_gate:+g} each (procjudge's choice)",
    rule="marathon: work on phase N+1 before phase N was submitted, or a return to a phase already left",
    reads="phase of every submission (marathon)",
    source="Format-Specific Quirks",
)
def phase_gate(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    if not facts.phases:
        return
    order = {name: index for index, name in enumerate(facts.phases)}
    reached = -1
    started: set[str] = set()
    # Every submission counts here, scored or not: the gate is about what the agent did.
    for number, phase in facts.submissions:
        if phase is None or phase not in order:
            continue
        index = order[phase]
        if index > reached + 1:
            skipped = ", ".join(f"`{p}`" for p in facts.phases[reached + 1 : index])
            yield Hit(points=policy.rules.phase_gate, iterations=(number,),
                      evidence=f"iteration {number} works on phase `{phase}` before {skipped} was submitted")
        elif index < reached and phase in started:
            yield Hit(points=policy.rules.phase_gate, iterations=(number,),
                      evidence=f"iteration {number} returns to phase `{phase}` after "
                      f"`{facts.phases[reached]}` had started")
        reached = max(reached, index)
        started.add(phase)


@detector(
    "early_termination", "rule",
    summary=("Stopping with budget left while tests still fail with fixable failures is flagged (always after "
             "iteration 0, and after a failed build); stopping when everything passes, or when the last iteration "
             "stalled (the data shows a dead end: the score moved less than {p.trajectory.wasted_iteration.min_delta:g}), "
             "is not."),
    points="{p.rules.early_termination:+g} (procjudge's choice)",
    values=lambda p: {"sprint": "flagged in sprint too" if p.rules.early_termination_in_sprint
                      else "never in sprint, where using 1 of 2 submissions is no penalty"},
    rule=("stopping with budget left while tests fail: always after iteration 0 or on a broken build; otherwise when "
          "the last step still moved the score by {p.trajectory.wasted_iteration.min_delta:g} or more. Not flagged when "
          "everything passes or the last step stalled (a dead end the data shows), when the run took an abort or "
          "escalation its harness offered or the harness ended it (`run.ended_by`), or under time pressure: less of "
          "`run.time_budget_seconds` left than an iteration took on average; {sprint} "
          "(`rules.early_termination_in_sprint`)"),
    reads="the scores, the failing tests, the budget, run.ended_by, run.time_budget_seconds and the iterations' durations",
    source="Early Termination",
)
def early_termination(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    final = facts.final
    used = len(facts.iterations)
    if facts.excluded:
        return  # submissions were dropped (budget or double submit): the run did not stop early
    if facts.run.info.ended_by not in (None, "agent"):
        return  # it took the abort or escalation its harness offered, or the harness ended it: not the agent stopping
    if _out_of_time(facts):
        return  # "Time pressure: remaining time is insufficient for a meaningful iteration"
    if facts.format == "sprint" and not policy.rules.early_termination_in_sprint:
        return  # "Sprint: Using 1 of 2 iterations -> no penalty"
    left = facts.budget - used
    if left <= 0:
        return
    failing = final.failed if final.failed is not None else None
    if final.build_failed:
        reason = "the final submission does not build"
    elif failing is None or failing < policy.rules.early_termination_min_failing:
        return
    elif used == 1:
        reason = f"stopped after iteration 0 with {plural(failing, 'failing test')}"
    elif final.delta is not None and abs(final.delta) < policy.trajectory.wasted_iteration.min_delta:
        return  # diminishing returns / dead end: stopping is allowed
    else:
        reason = (f"stopped with {plural(failing, 'failing test')} while the last iteration still "
                  f"moved the score by {fmt_num(final.delta or 0.0)}")
    yield Hit(points=policy.rules.early_termination, iterations=(final.number,),
              evidence=f"{reason}; {plural(left, 'submission')} of the {facts.format} budget of "
              f"{facts.budget} left unused")


def _out_of_time(facts: RunFacts) -> bool:
    """Whether the run's time budget (``run.time_budget_seconds``) had less left than its
    iterations took on average: too little for another meaningful iteration."""
    budget = facts.run.info.time_budget_seconds
    durations = [it.duration for it in facts.iterations if it.duration is not None]
    if budget is None or not durations:
        return False
    return budget - sum(durations) < sum(durations) / len(durations)


DETECTORS = [
    identical_submission, build_failure, persistent_build_failure, timeout, budget_exceeded,
    double_submit, cooldown_violation, phase_gate, early_termination,
]
