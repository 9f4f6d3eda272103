"""The document's trajectory formulas ("Iteration Scoring"): monotonic improvement, rapid
convergence, wasted iterations, and how time was spread across iterations."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..classify import suspicious_jump as jump_in
from ..facts import (
    SOURCE_FILES,
    IterationFacts,
    RunFacts,
    changed_nothing,
    held_back_fails,
    held_back_scores,
    is_test_path,
    last_run,
)
from ..model import LocalCheck
from ..numbers import fmt_num
from ..policy import Policy
from .base import Hit, detector, each, feedback_steps, having, plural, said, scoring_check, share

FORMATS = ("sprint", "standard", "marathon")


def judged_steps(facts: RunFacts, policy: Policy) -> list[IterationFacts]:
    """Iterations 1..n, less (by default) the first submission of each new marathon phase, and a
    submission whose suite differs from the previous one's (``test_results.suite``): its score
    moves because other tests ran, not because of the agent's change."""
    return list(_judged_steps(facts, policy))


@last_run  # several rules and the judge ask about the same run in turn
def _judged_steps(facts: RunFacts, policy: Policy) -> tuple[IterationFacts, ...]:
    steps = []
    for previous, it in facts.pairs:
        crosses = previous.phase is not None and it.phase is not None and previous.phase != it.phase
        if crosses and not policy.trajectory.judge_phase_boundaries:
            continue
        switches = previous.suite is not None and it.suite is not None and previous.suite != it.suite
        if switches and not policy.trajectory.judge_suite_changes:
            continue
        steps.append(it)
    return tuple(steps)


@last_run  # suspicious_jump and the judge's pattern and tier read them of the same run
def step_flags(facts: RunFacts, policy: Policy) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
    """Whether each step (iterations 1..n) is judged (``judged_steps``), and whether each
    submission's build failed."""
    judged = {it.position for it in _judged_steps(facts, policy)}
    return tuple([it.position in judged for it in facts.iterations[1:]]), tuple([it.build_failed for it in facts.iterations])


def _tests_only(it: IterationFacts) -> bool:
    """Whether a submission changed test files and nothing else (its throw-away files aside)."""
    paths = it.fix_paths
    if not paths:
        return False
    for path in paths:
        if not is_test_path(path):
            return False
    return True


def _only_tests_changed(facts: RunFacts) -> bool:
    """Whether every change the run made that is not throw-away is to test files."""
    changed = False
    for it in facts.iterations:
        if it.fix_paths:
            if not _tests_only(it):
                return False
            changed = True
    return changed


@last_run  # monotonic_improvement and progressive_refinement's share of its pay read them of the same run
def _monotonic_steps(facts: RunFacts, policy: Policy) -> tuple[list[IterationFacts], ...]:
    """The judged steps as the monotonic bonus sorts them: paid (held or rose), flat at 0 (not
    paid), fell, held by changing tests alone (not paid: a step whose only change is to the tests
    is no progress of the code), and, in the agent's own runs, fell by changing tests alone (not
    charged: no regression of the code either; ``tests_only_falls_in_local_runs``)."""
    rule = policy.trajectory.monotonic_improvement
    steps = judged_steps(facts, policy)
    flat: list[IterationFacts] = []
    held: list[IterationFacts] = []
    fell: list[IterationFacts] = []
    tests: list[IterationFacts] = []  # held by changing tests alone, or by changing nothing: not paid
    test_falls: list[IterationFacts] = []  # fell by changing tests alone in the agent's own runs: shown
    pay_flat = rule.pay_flat_at_zero
    local = facts.run.info.iterations_are == "local_runs"
    spare = rule.tests_only_falls_in_local_runs == "shown" and local
    unpaid_flat = rule.flat_in_local_runs == "unpaid" and local
    before = {it.position: previous for previous, it in facts.pairs}
    for it in steps:  # one pass, each step in one list (a step that fell is never flat or held)
        delta = it.delta
        if delta is None:
            continue
        if delta < 0:
            (test_falls if spare and _tests_only(it) else fell).append(it)
        elif delta == 0 and ((it.score == 0 and not pay_flat) or unpaid_flat):
            flat.append(it)
        elif _tests_only(it) or (it.position in before and changed_nothing(before[it.position], it)):
            tests.append(it)
        else:
            held.append(it)
    return steps, held, flat, fell, tests, test_falls


def monotonic_pay(facts: RunFacts, policy: Policy) -> float:
    """What the monotonic bonus pays for the steps that did not fall (its positive part)."""
    return len(_monotonic_steps(facts, policy)[1]) * policy.trajectory.monotonic_improvement.per_step


@last_run  # progressive_refinement and monotonic_improvement's share both read it
def progressive_earned(facts: RunFacts, policy: Policy) -> tuple[float, list[float]] | None:
    """(what the textbook progression earns, its gains) when the run is one: at least
    ``min_steps`` steps, every one gaining less than the one before, nothing broken, a final of at
    least ``min_final``; None otherwise."""
    rule = policy.practices.progressive_refinement
    steps = facts.iterations[1:]
    if len(steps) < rule.min_steps:
        return None
    gains = [it.delta or 0.0 for it in steps]
    if any(g <= 0 for g in gains) or any(b > a for a, b in itertools.pairwise(gains)):
        return None
    if any(it.tests_broken for it in steps) or facts.final.score < rule.min_final:
        return None
    return rule.range.between(facts.final.score, rule.min_final, rule.full_marks_final), gains


def progressive_share(facts: RunFacts, policy: Policy) -> float:
    """The part of the monotonic bonus's pay for rising steps that progressive_refinement pays
    instead (0 when it stacks on the bonus, or does not fire): the two read the same scores, and
    paying both would rank [70, 85, 92, 95] above [70, 95], which "Early Termination Scoring" ranks
    the other way. Together they pay the larger of the two."""
    if policy.practices.progressive_refinement.stacks_with_monotonic:
        return 0.0
    found = progressive_earned(facts, policy)
    return min(found[0], monotonic_pay(facts, policy)) if found else 0.0


@detector(
    "monotonic_improvement", "trajectory", needs=feedback_steps, section="trajectory.monotonic_improvement",
    summary=("{s.per_step:+g} for every iteration whose score did not fall below the previous one, {s.per_regression:+g} "
             "for every regression (the monotonic improvement bonus); a step from 0 to 0 is not paid unless "
             "``pay_flat_at_zero`` is set."),
    points="{s.per_step:+g} / step, {s.per_regression:+g} / regression",
    rule=("{s.per_step:+g} for every step whose score did not fall, {s.per_regression:+g} for every step that fell; a "
          "step that changed only test files (its throw-away files aside), or nothing (the previous program again, an "
          "empty diff), is not paid: it is no progress of the code; in the agent's own runs a step whose checks scored "
          "what they scored before is not paid either, a check run again (`flat_in_local_runs`), and a step that changed only "
          "test files and fell (a test written before its fix) is not charged either: no regression of the code "
          "(`tests_only_falls_in_local_runs`); what progressive_refinement pays for the same rising steps is taken "
          "from it"),
    reads="the score of every submission",
    source="Monotonic Improvement Bonus",
)
def monotonic_improvement(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.trajectory.monotonic_improvement
    steps, held, flat, fell, tests, test_falls = _monotonic_steps(facts, policy)
    if not steps:
        return
    handed = progressive_share(facts, policy) if held else 0.0
    points = len(held) * rule.per_step - handed + len(fell) * rule.per_regression
    local = facts.run.info.iterations_are == "local_runs"

    def evidence() -> str:
        parts = []
        if held:
            parts.append(f"{plural(len(held), 'non-regressing step')} x {fmt_num(rule.per_step)}")
        if handed:
            parts.append(f"{fmt_num(handed)} of it paid as progressive_refinement, the textbook progression of the "
                         "same steps")
        zero = [it for it in flat if it.score == 0]
        if zero:
            parts.append(f"{plural(len(zero), 'step')} from 0 to 0 not paid (nothing held)")
        if len(zero) < len(flat):
            shown = ", ".join(f"iter {it.number}: {fmt_num(it.score)}" for it in flat if it.score != 0)
            parts.append(f"{plural(len(flat) - len(zero), 'step')} that held the score of the agent's own checks not "
                         f"paid ({shown}): a check run again, no progress (trajectory.monotonic_improvement."
                         "flat_in_local_runs)")
        if tests:
            shown = ", ".join(f"iter {it.number}" for it in tests)
            parts.append(f"{plural(len(tests), 'step')} that changed nothing or only tests not paid ({shown})")
        if fell:
            falls = ", ".join(f"iter {it.number}: {fmt_num(it.delta or 0.0)}{_fell_on(it, local)}" for it in fell)
            parts.append(f"{plural(len(fell), 'regression')} x {fmt_num(rule.per_regression)} ({falls})")
        if test_falls:
            falls = ", ".join(f"iter {it.number}: {fmt_num(it.delta or 0.0)}" for it in test_falls)
            parts.append(f"{plural(len(test_falls), 'fall')} from changing only tests not charged ({falls}): no "
                         "regression of the code (trajectory.monotonic_improvement.tests_only_falls_in_local_runs)")
        return "; ".join(parts)

    def detail() -> dict[str, Any] | None:
        kept = rule.per_step - handed / len(held) if held else 0.0
        shares = {str(it.number): kept for it in held} | {str(it.number): rule.per_regression for it in fell}
        return {"per_iteration": {n: p for n, p in shares.items() if p}} if len(steps) > 1 else None

    yield Hit(points=points, iterations=tuple(it.number for it in steps), evidence=evidence, detail=detail)


def _fell_on(it: IterationFacts, local: bool) -> str:
    """In the agent's own runs, the check that showed a fall: `` (`python t.py` crashed: ...)``."""
    check = scoring_check(it) if local else None
    return f" ({said(check, 70)})" if check is not None else ""


def _per_unused(p: Policy) -> str:
    per = p.trajectory.rapid_convergence.per_unused_submission
    return f", {per:+g} per unused submission of the budget" if per else ""


def _changed_code(it: IterationFacts) -> bool:
    """Whether an iteration changed source code beyond the tests (not a scratch file, a document or a setting)."""
    return any(path.endswith(SOURCE_FILES) and not is_test_path(path) for path in it.fix_paths)


def _held_from(trajectory: Sequence[float], level: float) -> int:
    """The index of the iteration from which every score is at least `level` (0 when all are)."""
    return next((i + 1 for i in range(len(trajectory) - 1, -1, -1) if trajectory[i] < level), 0)


@detector(
    "rapid_convergence", "trajectory", section="trajectory.rapid_convergence",
    values=lambda p: {"baselines": ", ".join(f"{p.format(name).convergence_baseline:g}" for name in FORMATS),
                      "within": {name: p.format(name).convergence_baseline / p.trajectory.rapid_convergence.factor
                                 for name in FORMATS},
                      "unused": _per_unused(p)},
    summary=("{s.points:+g} when final score / iterations used exceeds the format baseline (final score / "
             "{p.formats.sprint.convergence_baseline:g}, {p.formats.standard.convergence_baseline:g} or "
             "{p.formats.marathon.convergence_baseline:g} for sprint, standard, marathon) times {s.factor:g}, and the run "
             "converged: its final score is at least {s.min_final:g} (the document's targets), not below its own best "
             "by {p.trajectory.wasted_iteration.min_delta:g} or more, and its held-back suite (where one ran) passes."),
    points="{s.points:+g}{unused}",
    rule=("final / iterations used > (final / baseline) x {s.factor:g}, baseline {baselines} for sprint, standard, "
          "marathon (so: fewer than {within[standard]:g} submissions in standard, {within[marathon]:g} in marathon; never "
          "in sprint), and converged: final {s.min_final:g}+ and not {p.trajectory.wasted_iteration.min_delta:g}+ below "
          "the run's own best; in the agent's own runs, where counting every iteration falls short, the iterations "
          "counted are those up to the one from which its code last changed and from which its checks held the final "
          "score (`rapid_convergence.local_runs`); a flat "
          "bonus whatever the budget{unused}; not paid when the final submission's held-back suite ran and fails "
          "(`rapid_convergence.held_back`), nor when the run changed nothing but test files"),
    reads="the scores, the format's convergence baseline, the final submission's held-back suite",
    source="Rapid Convergence Bonus; Early Termination Scoring",
)
def rapid_convergence(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.trajectory.rapid_convergence
    final = facts.final.score
    best = max(facts.trajectory)
    used = counted = len(facts.iterations)
    baseline_iterations = policy.format(facts.format).convergence_baseline
    threshold = final / baseline_iterations * rule.factor
    if final > 0 and final / used <= threshold and rule.local_runs == "reached" \
            and facts.run.info.iterations_are == "local_runs":
        steady = _held_from(facts.trajectory, final - policy.trajectory.wasted_iteration.min_delta)
        coded = max((n for n, it in enumerate(facts.iterations) if _changed_code(it)), default=0)
        counted = max(steady, coded) + 1  # the code still changing, or its checks not yet holding, is no convergence
    efficiency = final / counted
    if final <= 0 or efficiency <= threshold or final < rule.min_final:
        return
    if best - final >= policy.trajectory.wasted_iteration.min_delta:
        return
    if rule.held_back == "must_pass" and held_back_scores(facts.run, policy) and held_back_fails(facts.final, policy):
        return  # it converged on an answer the held-back suite rejects
    if _only_tests_changed(facts):
        return  # it reached its score by changing the tests alone: no convergence of the code
    unused = max(0, facts.budget - used) if not facts.excluded else 0
    points = rule.points + rule.per_unused_submission * unused
    extra = (f"; +{fmt_num(rule.per_unused_submission)} x {plural(unused, 'unused submission')}"
             if unused and rule.per_unused_submission else "")
    hidden = facts.final.hidden if held_back_scores(facts.run, policy) else None
    held = (f"; held-back suite {hidden.passed}/{hidden.total_or_sum}" if hidden is not None and hidden.total_or_sum
            else "")
    if counted < used:
        later = used - counted
        held += (f"; counted to iteration {facts.iterations[counted - 1].number}, the code's last change with its checks "
                 f"holding the final score from there: the {plural(later, 'iteration')} after it ran them again "
                 "(`rapid_convergence.local_runs`)")
    yield Hit(
        points=points,
        iterations=(facts.final.number,),
        evidence=lambda: (
            f"{fmt_num(final)}/{counted} = {efficiency:.2f} > {facts.format} baseline "
            f"{fmt_num(final)}/{fmt_num(baseline_iterations)} x {fmt_num(rule.factor)} = {threshold:.2f}, "
            f"final {fmt_num(final)} >= {fmt_num(rule.min_final)}{held}{extra}"
        ),
    )


@detector(
    "wasted_iteration", "trajectory", needs=feedback_steps, section="trajectory.wasted_iteration",
    summary="{s.points:+g} for every iteration whose score moved by less than {s.min_delta:g} points from the previous one.",
    points="{s.points:+g} each",
    rule=("a step whose score moved by less than {s.min_delta:g} points (absolute delta, as the formula says). In a "
          "run of the agent's own checks (`iterations_are: local_runs`) a step whose check passed in full before the "
          "change and after it is a confirmation it chose to run, not a submission it spent: named at 0 "
          "(`trajectory.wasted_iteration.passing_in_local_runs`); so is a step whose change only added or removed output "
          "lines in the code (prints, logging, a debugger's call, the branch that guards them, a value computed only "
          "for them), or changed only the "
          "agent's own scripts and no file of the code, an investigation of the failure rather than an attempt at its "
          "fix (`diagnostic_in_local_runs`); and so is a step that made a failing test of the same suite pass and broke "
          "none, progress that a large suite's pass rate hides (1 of 148 tests is 0.68 points; "
          "`fixing_in_local_runs`), and a step that added tests to its suite (test files changed, the suite counting more "
          "tests) while every test that passed before still passes: new tests failing, not a submission spent "
          "(`growing_in_local_runs`)"),
    reads="the score of every submission",
    source="Wasted Iteration Penalty",
)
def wasted_iteration(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.trajectory.wasted_iteration
    local = facts.run.info.iterations_are == "local_runs"
    before = {it.position: previous for previous, it in facts.pairs}
    for it in judged_steps(facts, policy):
        delta = it.delta or 0.0
        moved = delta if rule.measure == "improvement" else abs(delta)
        if moved >= rule.min_delta:
            continue
        if local and rule.passing_in_local_runs == "shown" and it.score >= 100.0 and it.score - delta >= 100.0:
            yield Hit(points=0.0, iterations=(it.number,), strength="weak", evidence=functools.partial(
                _confirmed, it.score, delta))
        elif local and rule.fixing_in_local_runs == "shown" and delta > 0 and (
                fixed := _fixed_breaking_none(before.get(it.position), it)):
            yield Hit(points=0.0, iterations=(it.number,), strength="weak", evidence=functools.partial(
                _fixed, it.score, delta, fixed))
        elif local and rule.growing_in_local_runs == "shown" and (grown := _grew(before.get(it.position), it)):
            yield Hit(points=0.0, iterations=(it.number,), strength="weak", evidence=functools.partial(
                _grown, it.score, delta, *grown))
        elif local and rule.diagnostic_in_local_runs == "shown" and (why := diagnostic_step(it)) is not None:
            yield Hit(points=0.0, iterations=(it.number,), strength="weak", evidence=functools.partial(
                _diagnosed, it.score, delta, why))
        else:
            yield Hit(
                points=rule.points,
                iterations=(it.number,),
                evidence=functools.partial(_moved, it.score, delta, rule.min_delta,
                                           scoring_check(it) if local else None),
            )


def _moved(score: float, delta: float, min_delta: float, check: LocalCheck | None = None) -> str:
    """The step's score before and after; in the agent's own runs, the check that scored it after."""
    moved = f"score {fmt_num(score - delta)} -> {fmt_num(score)} (moved {fmt_num(abs(delta))} < {fmt_num(min_delta)})"
    return moved + (f"; after the change {said(check)}" if check is not None else "")


# A line that only shows what the code does (an output or a debugger call, the import it needs), a
# comment, or nothing: instrumentation, not a change of what the code computes.
_OUTPUT_LINE = re.compile(
    r"(?:print\s*\(|pprint\s*\(|(?:logging|logger|log|_log|LOGGER)\.(?:debug|info|warning|warn|error|exception|critical)\s*\("
    r"|sys\.(?:stdout|stderr)\.(?:write|flush)\s*\(|console\.(?:log|error|debug|warn)\s*\(|traceback\.print_\w*\s*\("
    r"|breakpoint\s*\(|(?:i?pdb)\.set_trace\s*\(|import\s+(?:sys|pdb|ipdb|traceback|logging|pprint)\s*$"
    r"|from\s+pprint\s+import\s+pprint\s*$|#|$)")


# A branch or loop header: with nothing but output lines beside it, all it can guard is the output.
_GUARD_LINE = re.compile(r"(?:if|elif|for)\b.*:$|else\s*:$")
# A one-line branch whose body is an output line (``if mod: print(f"DEBUG: {mod}")``): its guard.
_INLINE_GUARD = re.compile(r"(?:(?:if|elif|for|while)\b.*?|else\s*):\s*(?=(?:print|pprint|logging|logger|log|_log|LOGGER"
                           r"|sys\.std|console\.|traceback\.print|breakpoint|i?pdb\.)\b)")


def diagnostic_step(it: IterationFacts) -> str | None:
    """Why a step of the agent's own runs is an investigation, not an attempt at a fix: its change
    touched only the agent's own throw-away files (its reproduction, its scratch scripts), or only
    added or removed output lines (``print``, a logger's call, a debugger's, their imports) and
    comments in the code; None when it changed what the code computes, or nothing at all."""
    if it.diff is None or it.diff.empty:
        return None
    scratch = set(it.scratch_paths)
    product = [file for file in it.diff.per_file if file.path not in scratch]
    if set(it.fix_paths) - {file.path for file in product}:
        return None  # a file of the code changed that the diff does not show (a script's write): unknown
    if not product:
        return "it changed only the agent's own scripts"
    shown = False
    for file in product:
        lines = (*file.added, *file.removed)
        shown_names = _shown_names(lines)
        context = tuple(line[1:] for hunk in file.hunks for line in hunk[1:] if line.startswith(" "))
        for line in lines:
            text = line.strip()
            if _GUARD_LINE.match(text):
                continue  # ``if call.when == "call":`` before a print: the print's guard
            guarded = _INLINE_GUARD.match(text)
            if guarded:
                text = text[guarded.end():]
            if not _OUTPUT_LINE.match(text) and not _shown_only(text, shown_names, lines, context):
                return None
            shown = shown or bool(text) and not text.startswith(("#", "import", "from"))
    return "it only added or removed output lines (prints, logging) in the code" if shown else None


# A plain name given a value (``max_y = np.max(vertices[:, 1])``), not an attribute, an item or ``==``
_ASSIGNED = re.compile(r"(\w+)\s*=(?!=)")


def _shown_names(lines: tuple[str, ...]) -> frozenset[str]:
    """The names the output lines of a change read (the words of its prints and log calls)."""
    stripped = (line.strip() for line in lines)
    return frozenset(word for text in stripped if text and not text.startswith("#") and _OUTPUT_LINE.match(text)
                     for word in re.findall(r"\w+", text))


def _shown_only(text: str, shown: frozenset[str], lines: tuple[str, ...], context: tuple[str, ...]) -> bool:
    """Whether a line only computes a value for the change's output: it gives a plain name a value
    that an output line of the change prints, and no other line of the change, nor of the code the
    diff shows around it, reads or writes that name (matplotlib-24177: ``max_y = np.max(vertices[:,
    1])`` above ``print(f"DEBUG: ... {max_y}")``; ``b = abs(b)`` above ``return a * b`` is a fix)."""
    assigned = _ASSIGNED.match(text)
    if assigned is None or assigned.group(1) not in shown:
        return False
    name = re.compile(rf"\b{re.escape(assigned.group(1))}\b")
    return not any(name.search(line) for line in context) \
        and all(line.strip() == text or _OUTPUT_LINE.match(line.strip()) or not name.search(line) for line in lines)


def _diagnosed(score: float, delta: float, why: str) -> str:
    return (f"score {fmt_num(score - delta)} -> {fmt_num(score)}: {why}, an investigation of the failure rather than an "
            "attempt at its fix (shown, not charged: trajectory.wasted_iteration.diagnostic_in_local_runs)")


def _fixed_breaking_none(previous: IterationFacts | None, it: IterationFacts) -> int:
    """How many failing tests a step made pass while it broke none: as the facts count them, or,
    where a run names only its failures (Django's runner), the failures of the same suite that
    are gone while every failure left is one that failed before and every failure is named."""
    if it.tests_fixed and it.tests_broken == 0:
        return it.tests_fixed
    if previous is None or it.suite is None or previous.suite != it.suite:
        return 0
    counted, counted_before = _recorded(it), _recorded(previous)  # as the run counted them (none left out)
    if counted is None or counted_before is None or counted[1] != counted_before[1]:
        return 0
    before, after = previous.failing_after, it.failing_after
    if not before or after is None or not after < before or counted[0] != len(after):
        return 0
    return len(before - after)


def _grew(previous: IterationFacts | None, it: IterationFacts) -> tuple[int, int, int] | None:
    """(tests added, total before, total after) when a step changed test files and its run of the
    same suite counts more tests, as many passing as before or more, and no more new failures
    than the tests it added: the agent wrote tests (failing, as a new test fails before its fix or
    while it is still wrong), and nothing that passed broke. None otherwise."""
    if previous is None or it.suite is None or previous.suite != it.suite:
        return None
    counted, counted_before = _recorded(it), _recorded(previous)
    if counted is None or counted_before is None or not any(is_test_path(f.path) for f in it.file_changes):
        return None
    (failed, total), (failed_before, total_before) = counted, counted_before
    added = total - total_before
    if added <= 0 or total - failed < total_before - failed_before or failed - failed_before > added:
        return None
    return added, total_before, total


def _grown(score: float, delta: float, added: int, before: int, after: int) -> str:
    return (f"score {fmt_num(score - delta)} -> {fmt_num(score)}: the step added {plural(added, 'test')} to the suite "
            f"({before} -> {after} tests) and every test that passed before still passes: new tests failing, not a "
            "submission spent (shown, not charged: trajectory.wasted_iteration.growing_in_local_runs)")


def _recorded(it: IterationFacts) -> tuple[int, int] | None:
    """(failed, total) of a step's test run as its record counts them."""
    results = it.entry.iteration_telemetry.test_results
    counts = results.post_iteration if results is not None else None
    if counts is None or counts.failed is None:
        return None
    return counts.failed, counts.total_or_sum


def _fixed(score: float, delta: float, fixed: int) -> str:
    return (f"score {fmt_num(score - delta)} -> {fmt_num(score)}: the step made {plural(fixed, 'failing test')} of the "
            "same suite pass and broke none, progress the pass rate of a large suite hides (shown, not charged: "
            "trajectory.wasted_iteration.fixing_in_local_runs)")


def _confirmed(score: float, delta: float) -> str:
    return (f"score {fmt_num(score - delta)} -> {fmt_num(score)}: the agent's own check passed before the change and "
            "after it, a confirmation it chose to run, not a submission it spent (shown, not charged: "
            "trajectory.wasted_iteration.passing_in_local_runs)")


def _against_profile(facts: RunFacts, shares: list[float], total: float, profile: tuple[float, ...],
                     tolerance: float) -> str:
    """How the run's split of time compares with its format's recommended profile (a marathon's,
    phase by phase), as the evidence states it; empty where there is nothing to compare."""
    against = ""
    if facts.format != "marathon" and len(shares) <= len(profile):
        expected, within, outside = _profile_split(facts.format, profile[: len(shares)], tolerance)
        worst = max(abs(s - e) for s, e in zip(shares, expected, strict=True))
        against = within if worst <= tolerance else outside
    if facts.format == "marathon" and facts.phases:
        against = _phase_split(facts, total, profile, tolerance)
    return against


@functools.lru_cache(maxsize=256)
def _profile_split(format: str, profile: tuple[float, ...], tolerance: float) -> tuple[list[float], str, str]:
    """A format's recommended split of time over this many iterations (renormalised), and the
    evidence's two sentences about it: within and outside the tolerance."""
    scale = sum(profile)
    expected = [e / scale for e in profile]
    shown = f"; recommended {format} split {'/'.join(f'{e:.0%}' for e in expected)}: "
    return expected, f"{shown}within {tolerance:.0%}", f"{shown}outside {tolerance:.0%}"


def _phase_split(facts: RunFacts, total: float, profile: tuple[float, ...], tolerance: float) -> str:
    """How a marathon's time split over its phases compares with the recommended phase shares
    (30/35/25 with a 10% buffer), renormalised to the phases the run declares."""
    spent = [sum(it.duration or 0.0 for it in facts.iterations if it.phase == name) for name in facts.phases]
    expected = list(profile[: len(facts.phases)])
    if len(expected) < len(facts.phases) or not sum(expected):
        return ""
    scale = sum(expected)
    expected = [e / scale for e in expected]
    shares = [s / total for s in spent]
    worst = max(abs(s - e) for s, e in zip(shares, expected, strict=True))
    verdict = "within" if worst <= tolerance else "outside"
    pairs = ", ".join(f"{name} {s:.0%} (recommended {e:.0%})" for name, s, e in zip(facts.phases, shares, expected, strict=True))
    return f"; phase split {pairs}: {verdict} {tolerance:.0%}"


def _timed(facts: RunFacts) -> bool:
    """More than one submission, each with its duration (a plain loop: the needs are asked of every run)."""
    if len(facts.iterations) < 2:
        return False
    for it in facts.iterations:
        if it.duration is None:
            return False
    return True


@detector(
    "time_allocation", "trajectory", section="trajectory.time_allocation",
    needs=having(_timed, "no duration for every submission"),
    values=lambda p: {"profiles": {name: "/".join(f"{round(share * 100, 4):g}" for share in p.format(name).time_profile)
                                   for name in FORMATS},
                      "tolerance": round(p.trajectory.time_allocation.profile_tolerance * 100, 4)},
    summary=("Front-loaded time (iteration 0 took longer than any other) {s.front_loaded:+g}; back-loaded time (each iteration "
             "took at least as long as the one before, the last longer than the first) {s.back_loaded:+g}; also how the "
             "run's time split compares with the format's recommended profile."),
    points="{s.front_loaded:+g} / {s.back_loaded:+g}",
    rule=("front-loaded (iteration 0 took longer than any other; a tie is not) {s.front_loaded:+g}; back-loaded (never "
          "shorter than the one before, last longer than first) {s.back_loaded:+g}; the evidence compares the split with "
          "the format's recommended profile (standard {profiles[standard]}, sprint {profiles[sprint]}, tolerance "
          "{tolerance:g} points)"),
    reads="duration_seconds of every submission",
    source="Concrete Examples 1 and 2; Time Management",
)
def time_allocation(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.trajectory.time_allocation
    timed = [it for it in facts.iterations if it.duration is not None]
    if len(timed) < 2 or len(timed) != len(facts.iterations):
        return
    durations = [it.duration for it in timed if it.duration is not None]
    total = sum(durations)
    if total <= 0:
        return
    shares = [d / total for d in durations]
    profile = policy.format(facts.format).time_profile
    numbers_ = tuple(it.number for it in timed)

    def evidence(lead: str) -> Callable[[], str]:
        def write() -> str:
            shown = ", ".join(fmt_num(round(d / 60, 1)) for d in durations)
            split = "/".join(f"{s:.0%}" for s in shares)
            against = _against_profile(facts, shares, total, profile, rule.profile_tolerance)
            return f"{lead}minutes per iteration {shown} ({split}){against}"
        return write

    def detail(front_loaded: bool) -> Callable[[], dict[str, Any]]:
        return lambda: {"time_distribution": [round(s, 4) for s in shares], "front_loaded": front_loaded}

    if durations[0] > max(durations[1:]):  # a later iteration as long as iteration 0 is no front-loading
        yield Hit(points=rule.front_loaded, iterations=numbers_, evidence=evidence("front-loaded: "), detail=detail(True))
    elif all(b >= a for a, b in itertools.pairwise(durations)) and durations[-1] > durations[0]:
        yield Hit(points=rule.back_loaded, iterations=numbers_, evidence=evidence("back-loaded: "), detail=detail(False))
    elif _against_profile(facts, shares, total, profile, rule.profile_tolerance):
        yield Hit(points=0.0, iterations=numbers_, evidence=evidence(""), detail=detail(False))


@detector(
    "suspicious_jump", "trajectory", needs=feedback_steps, section="pattern",
    values=lambda p: {"each": each(p.rules.suspicious_jump, "once")},
    summary=("A gain of {s.suspicious_jump_points:g} points or more right after a step that moved less than "
             "{p.trajectory.wasted_iteration.min_delta:g}: possible brute force or copying, named so that a gate can "
             "stop on it (--fail-on suspicious_jump)."),
    points="{each}",
    rule=("a step gaining {s.suspicious_jump_points:g}+ right after a stalled step (moved less than "
          "{p.trajectory.wasted_iteration.min_delta:g}); a failed build on either side is not a stall (a repaired build "
          "jumps honestly); the first such step, as the pattern of the same name reads it (`rules.suspicious_jump`)"),
    reads="the scores, build.status",
    source="Pattern classification; Red flags",
)
def suspicious_jump(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    judged, build_failed = step_flags(facts, policy)
    deltas = [b - a for a, b in itertools.pairwise(facts.trajectory)]
    found = jump_in(deltas, judged, build_failed, policy.pattern.suspicious_jump_points,
                    policy.trajectory.wasted_iteration.min_delta)
    if found is not None:
        step, text = found
        yield Hit(points=policy.rules.suspicious_jump, iterations=(facts.iterations[step].number,), evidence=text)


@detector(
    "early_reach", "trajectory", section="trajectory.early_reach",
    needs=feedback_steps,
    values=lambda p: {"pct": share(p.trajectory.early_reach.share), "fmts": ", ".join(p.trajectory.early_reach.formats)},
    summary=("{s.points:+g}: the run reached {pct} of its final score by iteration {s.by_iteration} and went on "
             "(named in {fmts} runs): the agent understood the problem on first read, and what came after bought "
             "the rest."),
    points="{s.points:+g}",
    rule=("a submission at or before iteration {s.by_iteration} scored at least {pct} of the final score, the run made "
          "submissions after iteration {s.by_iteration}, and it converged as rapid_convergence means it (final "
          "{p.trajectory.rapid_convergence.min_final:g}+, not {p.trajectory.wasted_iteration.min_delta:g}+ below its best, "
          "its held-back suite passing where one ran); "
          "in {fmts} runs; the rulebook gives it no "
          "points (`trajectory.early_reach.points`)"),
    reads="the scores",
    source="Rapid Convergence Bonus (\"Reaching 90% of your final score by iteration 1\")",
)
def early_reach(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.trajectory.early_reach
    if facts.format not in rule.formats or len(facts.iterations) <= rule.by_iteration + 1:
        return
    final = facts.final.score
    early = [it for it in facts.iterations if it.number <= rule.by_iteration]
    converged = policy.trajectory.rapid_convergence
    if not early or final < converged.min_final or max(facts.trajectory) - final >= \
            policy.trajectory.wasted_iteration.min_delta:
        return  # 90% of a poor final, or of a final below the run's best, is no efficiency
    if converged.held_back == "must_pass" and held_back_scores(facts.run, policy) and held_back_fails(facts.final, policy):
        return  # nor 90% of an answer the held-back suite rejects
    first = next((it for it in early if it.score >= rule.share * final), None)
    if first is None:
        return
    later = sum(1 for it in facts.iterations if it.number > first.number)
    yield Hit(points=rule.points, iterations=(first.number,),
              evidence=lambda: (f"iteration {first.number} scored {fmt_num(first.score)}, {first.score / final:.0%} of the final "
                        f"{fmt_num(final)} (>= {rule.share:.0%}); {plural(later, 'iteration')} after it"))


DETECTORS = [monotonic_improvement, rapid_convergence, wasted_iteration, time_allocation, suspicious_jump, early_reach]
