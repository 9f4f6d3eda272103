"""The four rewarded practices of "Iteration Best Practices (What the Process Judge Rewards)"."""

from __future__ import annotations

from collections.abc import Iterable

from ..facts import IterationFacts, RunFacts, is_test_path
from ..numbers import fmt_num
from ..policy import Policy
from .base import Hit, all_of, detector, feedback_steps, having, plural, share
from .shapes import TEST_EDITS, Shape, submitted
from .trajectory import monotonic_pay, progressive_earned, progressive_share


# The needs are asked of every run, so they are plain loops (a generator in any() costs twice as much).
def _reading(facts: RunFacts) -> bool:
    for it in facts.iterations:
        if it.seconds_before_first_edit is not None or it.read_feedback is not None:
            return True
    return False


def _fixes(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:
        if it.tests_fixed is not None and it.files_changed:
            return True
    return False


def _runs(facts: RunFacts) -> bool:
    for it in facts.iterations:
        if it.test_runs is not None:
            return True
    return False


_READING = having(_reading, "no feedback analysis or action log")
_FIXES = all_of(feedback_steps, having(_fixes, "no tests fixed and files changed to relate"))
_RUNS = having(_runs, "no record of local test runs")

_CHAIN = ("read_feedback", "read_file", "edit_file", "run_tests")


def _has_chain(it: IterationFacts) -> bool:
    """Whether the action log shows read feedback -> read source -> edit -> run tests, in order."""
    if not it.action_tools:
        return False
    step = 0
    for tool in it.action_tools:
        if tool == _CHAIN[step]:
            step += 1
            if step == len(_CHAIN):
                return True
    return False


@detector(
    "diagnostic_first", "practice", needs=_READING, section="practices.diagnostic_first",
    values=lambda p: {"one_half": share(p.practices.diagnostic_first.min_marks_share, one=True),
                      "referenced": share(p.practices.diagnostic_first.min_referenced_share)},
    summary="{range}: the agent reads and analyses before it edits.",
    points="{range}",
    rule=("every feedback iteration (iteration 0 for a one-shot run) reads the feedback and waits "
          "{s.min_seconds_before_edit:g} s or more before the first edit; s from the mean of four marks (read, waited, "
          "at least {referenced} the failures referenced, the read-feedback → read-file → edit → run-tests chain in "
          "`actions.log`) from {one_half} to all"),
    reads="time_before_first_edit_seconds, feedback_analysis, actions.log",
    source="Best practice 1",
)
def diagnostic_first(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.practices.diagnostic_first
    iterations = list(facts.iterations[1:]) or [facts.iterations[0]]
    marks = []
    uses_log = False
    for it in iterations:
        chain = _has_chain(it)
        uses_log = uses_log or chain
        read = bool(it.read_feedback) or (it is facts.iterations[0] and it.read_feedback is None and chain)
        waited = it.seconds_before_first_edit is not None and it.seconds_before_first_edit >= rule.min_seconds_before_edit
        if not (read or it is facts.iterations[0]) or not waited:
            return
        needed = max(1, (it.failures_before_count or 0) * rule.min_referenced_share)
        referenced = it.failures_referenced is not None and it.failures_referenced >= needed
        marks.append((read + waited + referenced + chain) / 4)
    yield Hit(points=rule.range.between(sum(marks) / len(marks), rule.min_marks_share, 1.0),
              iterations=tuple(it.number for it in iterations), evidence=lambda: ", ".join(
                  f"iter {it.number}: {fmt_num(it.seconds_before_first_edit or 0.0)}s before first edit"
                  + (f", {it.failures_referenced} failures referenced" if it.failures_referenced is not None else "")
                  + (", full chain in the log" if _has_chain(it) else "")
                  for it in iterations),
              basis="action log" if uses_log else "telemetry fields")


def _files(it: IterationFacts) -> int:
    """Files the fix changed: scratch files (reproduction scripts, probes) aside."""
    return len(it.fix_paths) if it.changed_paths else (it.files_changed or 0)


@detector(
    "targeted_fixes", "practice", needs=_FIXES, section="practices.targeted_fixes",
    summary="{range}: minimal changes that fix what failed.",
    points="{range}",
    rule=("no test broken and at least {s.min_tests_fixed_per_file:g} test fixed per file changed over the feedback "
          "iterations, and no shape aimed at the tests in the code (a deleted check is not a fix); s from "
          "{s.min_tests_fixed_per_file:g} to {s.best_tests_fixed_per_file:g} tests per file"),
    reads="the tests fixed and broken, changes.files",
    source="Best practice 2",
)
def targeted_fixes(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.practices.targeted_fixes
    measured = [it for it in facts.iterations[1:] if it.tests_fixed is not None and _files(it)]
    if not measured or any(it.tests_broken for it in facts.iterations[1:]):
        return
    if any(submitted(facts)):
        return
    fixed = sum(it.tests_fixed or 0 for it in measured)
    files = sum(_files(it) for it in measured)
    ratio = fixed / files
    if ratio < rule.min_tests_fixed_per_file or fixed == 0:
        return
    yield Hit(points=rule.range.between(ratio, rule.min_tests_fixed_per_file, rule.best_tests_fixed_per_file),
              iterations=tuple(it.number for it in measured),
              evidence=lambda: f"{fmt_num(round(ratio, 2))} tests fixed per file changed, none broken ("
              + ", ".join(f"iter {it.number}: {it.tests_fixed} fixed / {plural(_files(it), 'file')}" for it in measured)
              + ")",
              basis=measured[0].tests_basis)


def _edit_run_cycles(it: IterationFacts) -> int:
    if not it.action_tools:
        return 0
    cycles, edited = 0, False
    for tool in it.action_tools:
        if tool == "edit_file":
            edited = True
        elif tool == "run_tests" and edited:
            cycles, edited = cycles + 1, False
    return cycles


@detector(
    "test_driven_iteration", "practice", needs=_RUNS, section="practices.test_driven_iteration",
    values=lambda p: {"half": share(p.practices.test_driven_iteration.min_fraction_of_iterations)},
    summary="{range}: tests run after each change, not only at submission.",
    points="{range}",
    rule=("at least {half} the iterations validate each change: {s.min_runs_per_iteration}+ local test runs, or "
          "{s.min_edit_run_cycles}+ "
          "edit-then-run cycles in the action log, or (in the agent's own runs, `iterations_are: local_runs`) a test "
          "that failed before the change and passes after it, by name, the change touching code and rewriting no test "
          "expectation; s from {half} the iterations to all"),
    reads="actions.test_runs, actions.log, test_results.tests and baseline_tests (local runs)",
    source="Best practice 3",
)
def test_driven_iteration(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.practices.test_driven_iteration
    qualifying, uses_log = [], False
    red_green: dict[int, list[str]] = {}
    local = facts.run.info.iterations_are == "local_runs"
    previous: IterationFacts | None = None
    for it, added in zip(facts.iterations, submitted(facts), strict=True):
        cycles = _edit_run_cycles(it)
        turned = _red_to_green(it, previous, added) if local else []
        previous = it
        if cycles >= rule.min_edit_run_cycles:
            uses_log = True
            qualifying.append(it)
        elif it.test_runs is not None and it.test_runs >= rule.min_runs_per_iteration:
            qualifying.append(it)
        elif turned:
            red_green[it.number] = turned
            qualifying.append(it)
    share = len(qualifying) / len(facts.iterations)
    if not qualifying or share < rule.min_fraction_of_iterations:
        return
    def evidence() -> str:
        shown = ", ".join(f"iter {it.number}: " + (f"{red_green[it.number][0]} failed in the agent's run before the "
                                                   "change and passes after it" if it.number in red_green
                                                   else f"{it.test_runs} runs")
                          for it in qualifying)
        return f"{len(qualifying)} of {plural(len(facts.iterations), 'iteration')} validated each change locally ({shown})"

    yield Hit(points=rule.range.between(share, rule.min_fraction_of_iterations, 1.0),
              iterations=tuple(it.number for it in qualifying), evidence=evidence,
              basis="action log" if uses_log else "telemetry fields")


def _red_to_green(it: IterationFacts, previous: IterationFacts | None, added: tuple[Shape, ...]) -> list[str]:
    """Tests that failed in the agent's own run before an iteration's change (the baseline run for
    the first) and pass after it, where the change touched code beyond the tests and rewrote no
    test's expectation: the red-green loop of test-driven work, by name."""
    if not any(not is_test_path(path) for path in it.fix_paths) or any(shape.rule in TEST_EDITS for shape in added):
        return []
    if previous is not None:
        failing, same_suite = previous.failing_after or frozenset(), previous.suite == it.suite
    else:
        failing, same_suite = frozenset(it.baseline_failures), it.counted_before  # the baseline ran this suite
    if it.passing_after is not None:
        return sorted(failing & it.passing_after)
    # no passing names (a quiet run): every test passes, in the same suite, so the failing ones now pass
    return sorted(failing) if same_suite and it.failed == 0 and it.total else []


@detector(
    "progressive_refinement", "practice", section="practices.progressive_refinement",
    values=lambda p: {"stacking": ("" if p.practices.progressive_refinement.stacks_with_monotonic else
                                   "; paid in full, and taken from what monotonic_improvement pays for the same "
                                   "steps (together they pay the larger of the two), so that a slow climb never "
                                   "outranks the same final reached sooner")},
    summary="{range}: textbook progression{stacking}.",
    points="{range}",
    rule=("{s.min_steps}+ steps, every step gains, gains shrink, nothing broken, final at least {s.min_final:g}; s from "
          "{s.min_final:g} to {s.full_marks_final:g}{stacking}"),
    reads="the scores, the tests broken",
    source="Best practice 4; Early Termination Scoring",
)
def progressive_refinement(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    found = progressive_earned(facts, policy)
    if found is None:
        return
    earned, gains = found
    evidence = (f"trajectory {' -> '.join(fmt_num(s) for s in facts.trajectory)}: gains "
                f"{', '.join('+' + fmt_num(g) for g in gains)} shrink steadily, nothing broken")
    handed = progressive_share(facts, policy)
    if handed:
        # Paid here, and taken from what monotonic_improvement pays for the same rising steps: together
        # they pay the larger of the two, so a slow climb never outranks the same final reached sooner.
        evidence += (f"; +{fmt_num(handed)} of it taken from monotonic_improvement, which pays the same rising steps "
                     f"(+{fmt_num(monotonic_pay(facts, policy))})")
    yield Hit(points=earned, iterations=tuple(it.number for it in facts.iterations), evidence=evidence)


DETECTORS = [diagnostic_first, targeted_fixes, test_driven_iteration, progressive_refinement]
