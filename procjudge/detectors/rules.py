"""The document's edge-case and format rules ("Edge Cases and Special Rules", "Format-Specific
Iteration Quirks", "Early Termination", "Iteration Budget by Format")."""

from __future__ import annotations

from typing import Iterable

from ..facts import RunFacts, iteration_number
from ..policy import Policy
from .base import Hit, detector, fmt_num, plural


@detector("identical_submission", "rule")
def identical_submission(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-5 for every submission identical to the previous one: the same ``code_hash`` (when both
    submissions are hashed, the hash alone decides: byte for byte), else an empty diff, else
    (plain fields) a change record with no file and no line changed."""
    for previous, it in facts.pairs:
        changes = it.entry.iteration_telemetry.changes
        if it.code_hash is not None and previous.code_hash is not None:
            # Both hashed: the hash decides, byte for byte (a diff can be empty for a whitespace change).
            if it.code_hash != previous.code_hash:
                continue
            reason, basis = f"code_hash {it.code_hash[:16]} equals iteration {previous.number}'s", "code_hash"
        elif it.diff is not None and it.diff.empty:
            reason, basis = "the diff from the previous submission is empty", "diff"
        elif (
            changes is not None
            and it.diff is None
            and changes.files is None
            and (changes.lines_added, changes.lines_removed) == (0, 0)
            and not any((changes.files_modified, changes.files_created, changes.files_deleted))
        ):
            reason, basis = "no file and no line changed", "seed fields"
        else:
            continue
        yield Hit(points=policy.rules.identical_submission, iterations=(it.number,),
                  evidence=f"{reason}; scored {fmt_num(it.score)} again", basis=basis)


@detector("build_failure", "rule")
def build_failure(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """A submission that does not build scores 0 (the document states it for iteration 0; the
    policy ``rules.build_failure.zero_score`` extends it to every iteration by default)."""
    for it in facts.iterations:
        if not it.build_failed:
            continue
        build = it.entry.iteration_telemetry.build or (it.entry.iteration_feedback and it.entry.iteration_feedback.build)
        errors = list(build.errors or []) if build else []
        first = f": {errors[0][:120]}" if errors else ""
        scored = "scored 0" if it.score_source == "build failure" else f"scored {fmt_num(it.score)} ({it.score_source})"
        yield Hit(points=0.0, iterations=(it.number,), evidence=f"build failed{first}; {scored}")


@detector("persistent_build_failure", "rule")
def persistent_build_failure(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-10 once for every streak of 2 or more consecutive submissions that do not build."""
    rule = policy.rules.build_failure
    streak: list = []
    for it in list(facts.iterations) + [None]:
        if it is not None and it.build_failed:
            streak.append(it)
            continue
        if len(streak) >= rule.persistent_min_iterations:
            yield Hit(points=rule.persistent_points, iterations=tuple(s.number for s in streak),
                      evidence=f"the build failed in {len(streak)} consecutive submissions")
        streak = []


@detector("timeout", "rule")
def timeout(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """A submission that timed out: tests that completed are scored normally, tests that did not
    run count as failed."""
    for it in facts.iterations:
        if not it.timed_out:
            continue
        completed = it.entry.iteration_telemetry.tests_completed
        shown = f"{completed}/{it.total}" if completed is not None and it.total is not None else "some"
        yield Hit(points=policy.rules.timeout, iterations=(it.number,),
                  evidence=f"execution timed out; {shown} tests completed, {it.tests_not_run} not run "
                  f"counted as failed; scored {fmt_num(it.score)} ({it.score_source})")


def _exclusions(facts: RunFacts, rule: str, points: float) -> Iterable[Hit]:
    dropped = [e for e in facts.excluded if e.rule == rule]
    for exclusion in dropped:
        yield Hit(points=points, iterations=(exclusion.number,),
                  evidence=f"iteration {exclusion.number} not scored: {exclusion.reason}")


@detector("budget_exceeded", "rule")
def budget_exceeded(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """Submissions past the budget (sprint 2, standard 4, marathon 8, ``run.max_iterations``, or a
    marathon phase's own budget) are not scored; the last valid submission is the final one."""
    hits = list(_exclusions(facts, "budget_exceeded", policy.rules.budget_exceeded))
    if hits:
        final = facts.final.number
        for hit in hits:
            yield Hit(points=hit.points, iterations=hit.iterations,
                      evidence=f"{hit.evidence}; the final submission is iteration {final}")


@detector("double_submit", "rule")
def double_submit(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """Sprint: two submissions within 30 seconds count as one, the second."""
    yield from _exclusions(facts, "double_submit", policy.rules.double_submit)


@detector("cooldown_violation", "rule")
def cooldown_violation(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """Standard: a submission less than 60 seconds after the previous one breaks the cooldown
    (points are procjudge's choice: the document states the rule, not a penalty)."""
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


@detector("phase_gate", "rule")
def phase_gate(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """Marathon: iterating on phase N+1 before phase N was submitted breaks the phase gate, and so
    does going back to a phase once a later one has started (its unused iterations are lost)."""
    if not facts.phases:
        return
    order = {name: index for index, name in enumerate(facts.phases)}
    reached = -1
    started: set[str] = set()
    # Every submission counts here, scored or not: the gate is about what the agent did.
    for position, entry in enumerate(facts.run.iterations):
        telemetry = entry.iteration_telemetry
        phase = telemetry.phase
        if phase is None or phase not in order:
            continue
        number = iteration_number(entry, position)
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


@detector("early_termination", "rule")
def early_termination(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """Stopping with budget left while tests still fail with fixable failures is flagged (always
    after iteration 0, and after a failed build); stopping when everything passes, or when the
    last iteration stalled (the data shows a dead end: the score moved less than 2), is not."""
    final = facts.final
    used = len(facts.iterations)
    if facts.excluded:
        return  # submissions were dropped (budget or double submit): the run did not stop early
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
                  f"moved the score by {fmt_num(final.delta)}")
    yield Hit(points=policy.rules.early_termination, iterations=(final.number,),
              evidence=f"{reason}; {plural(left, 'submission')} of the {facts.format} budget of "
              f"{facts.budget} left unused")


DETECTORS = [
    identical_submission, build_failure, persistent_build_failure, timeout, budget_exceeded,
    double_submit, cooldown_violation, phase_gate, early_termination,
]
