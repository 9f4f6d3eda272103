"""The per-iteration telemetry signals ("Telemetry Signals the Process Judge Evaluates"): five
positive and five negative, each shown for the iterations where it holds.  A signal's points come
from ``signals.points``; most are 0 (shown, not scored) because a practice or anti-pattern already
scores the same behaviour."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from ..facts import SOURCE_FILES, IterationFacts, RunFacts, changed_nothing, last_run
from ..policy import Policy
from .base import Detector, Hit, detector

SIGNALS = ("reads_before_writing", "no_regressions", "proportional_edits", "local_validation", "productive",
           "edits_without_reading", "regressions", "shotgun_edits", "no_local_validation", "unproductive",
           "on_target", "largest_first_step")
# The standard format's pass-rate targets (seed 000): 60-70% at iteration 0, 80-85% at 1, 90-95% at 2; the
# lower bound of each is what a submission must reach to be on target.
TARGETS = (0.60, 0.80, 0.90)


Signal = tuple[str, str, float]  # name, condition as the evidence shows it, points per iteration


def _conditions(policy: Policy) -> tuple[Signal, ...]:
    """Each signal's name, condition as its evidence shows it and points per iteration, in the
    order of ``SIGNALS`` (made once per policy)."""
    cached = _CONDITIONS.get(id(policy))
    if cached is not None and cached[0] is policy:
        return cached[1]
    s = policy.signals
    conditions = (
        f"time_before_first_edit_seconds > {s.reads_before_writing_seconds:g}", "regressions == 0 (ruled out)",
        f"file_edits <= test_failures x {s.proportional_edits_factor:g}", f"test_runs >= {s.local_validation_min_runs}",
        "score.delta > 0", f"time_before_first_edit_seconds < {s.edits_without_reading_seconds:g}", "regressions > 0",
        f"file_edits > test_failures x {s.shotgun_edits_factor:g}", "test_runs == 0", "score.delta <= 0",
        "passed / total >= the standard format's target (60%, 80%, 90% at the first, second, third iteration)",
        "the score's rise from iteration 0 to 1 is the run's largest")
    signals = tuple((name, condition, getattr(s.points, name)) for name, condition in zip(SIGNALS, conditions, strict=True))
    if len(_CONDITIONS) > 16:
        _CONDITIONS.clear()
    _CONDITIONS[id(policy)] = (policy, signals)  # the policy is held, so its id is not reused
    return signals


_CONDITIONS: dict[int, tuple[Policy, tuple[Signal, ...]]] = {}


def _holding(facts: RunFacts, policy: Policy) -> tuple[list[int], ...]:
    """The iterations where each signal holds, in the order of ``SIGNALS``. A signal whose inputs
    are unknown (no timing, no failing tests, no delta) does not hold. One pass, no tuple per
    iteration: the signals are asked of every run."""
    s = policy.signals
    reads, hasty, min_runs = s.reads_before_writing_seconds, s.edits_without_reading_seconds, s.local_validation_min_runs
    proportional, shotgun = s.proportional_edits_factor, s.shotgun_edits_factor
    held: tuple[list[int], ...] = ([], [], [], [], [], [], [], [], [], [], [], [])
    (reads_before_writing, no_regressions, proportional_edits, local_validation, productive, edits_without_reading,
     regressions, shotgun_edits, no_local_validation, unproductive, on_target, largest_first_step) = held
    unchanged = {it.number for previous, it in facts.pairs if changed_nothing(previous, it)}
    for it in facts.iterations:
        number = it.number
        before_edit = it.seconds_before_first_edit
        if before_edit is not None:
            if before_edit > reads:
                reads_before_writing.append(number)
            if before_edit < hasty:
                edits_without_reading.append(number)
        if it.regressions_ruled_out and number not in unchanged:  # the same program again rules nothing out
            no_regressions.append(number)
        failures, edits, runs = it.failures_before_count, it.file_edits, it.test_runs
        if failures and edits is not None:  # file edits against the failing tests; unknown when none failed
            if edits <= failures * proportional:
                proportional_edits.append(number)
            if edits > failures * shotgun:
                shotgun_edits.append(number)
        if runs is not None and runs >= min_runs:
            local_validation.append(number)
        if runs == 0 or it.untested_edits:  # the submitted code's last change was never run
            no_local_validation.append(number)
        delta = it.recorded_delta if it.recorded_delta is not None else it.delta
        if delta is not None and delta > 0:
            productive.append(number)
        if delta is not None and delta <= 0:
            unproductive.append(number)
        if it.delta is not None and it.tests_broken is not None and it.tests_broken > 0:
            regressions.append(number)
    if facts.format == "standard" and facts.run.info.iterations_are != "local_runs":
        for position, it in enumerate(facts.iterations[:len(TARGETS)]):
            if it.passed is not None and it.total and it.passed / it.total >= TARGETS[position]:
                on_target.append(it.number)
    rises = [it.delta for it in facts.iterations[1:]]
    if len(rises) >= 2 and all(rise is not None for rise in rises):
        first, *later = rises
        if first is not None and first > 0 and all(first > rise for rise in later if rise is not None):
            largest_first_step.append(facts.iterations[1].number)
    return held


@last_run
def hits(facts: RunFacts, policy: Policy) -> dict[str, Hit]:
    """Each signal's hit (for the signals that hold somewhere): computed once per run and policy
    for all the signal detectors (the judge asks them one after another about the same facts)."""
    result = {}
    local = facts.run.info.iterations_are == "local_runs"  # the run submits once: these two are paid once
    once_validated = local and policy.signals.local_validation_in_local_runs == "once"
    once_unbroken = local and policy.signals.no_regressions_in_local_runs == "once"
    for (name, condition, points), numbers in zip(_conditions(policy), _holding(facts, policy), strict=True):
        if not numbers:
            continue
        count = len(numbers)
        paid = 1 if (once_validated and name == "local_validation") or (once_unbroken and name == "no_regressions") else count
        shown = ""
        if name == "no_local_validation" and any(it.untested_edits for it in facts.iterations if it.number in numbers):
            condition = "test_runs == 0, or source files written after the last check (submitted untested)"
            shown = "".join(_untested(it) for it in facts.iterations if it.number in numbers and it.untested_edits)
        elif name == "no_local_validation" and local:  # a shell agent that ran no check: what it changed unchecked
            shown = "".join(_unchecked(it) for it in facts.iterations if it.number in numbers)
        result[name] = Hit(points=points * paid, iterations=tuple(numbers),
                           evidence=functools.partial(_evidence, condition, count, points, paid, shown),
                           basis="telemetry fields")
    return result


def _untested(it: IterationFacts) -> str:
    """Which source files a shell agent wrote after its last check, and that check, as its final
    iteration records them (``actions.untested_files``, ``actions.last_check``)."""
    actions = it.entry.iteration_telemetry.actions
    files = (actions.untested_files or []) if actions else []
    if not files:
        return ""
    after = f" after `{actions.last_check}`" if actions is not None and actions.last_check else ""
    return f"; iteration {it.number} wrote {_listed(files)}{after}, and no check ran after"


def _unchecked(it: IterationFacts) -> str:
    """The files of the code a shell agent's iteration changed with no check run at all."""
    files = [path for path in it.fix_paths if path.endswith(SOURCE_FILES)]
    if not files:
        return ""
    return f"; iteration {it.number} changed {_listed(files)} and ran no check of the code"


def _listed(files: list[str]) -> str:
    """Files named in evidence: the first four, and how many more."""
    return ", ".join(files[:4]) + (f" (+{len(files) - 4} more)" if len(files) > 4 else "")


def _evidence(condition: str, count: int, points: float, paid: int, shown: str = "") -> str:
    held = f"{condition} in {count} iteration{'' if count == 1 else 's'}"
    if not points:
        return held + " (shown, not scored)" + shown
    if paid < count:  # local_validation and no_regressions in a run of the agent's own checks
        return held + f" ({points:+g} once: the run submits once)" + shown
    return held + f" ({points:+g} each)" + shown


def _times(factor: float) -> str:
    return {2.0: "twice", 5.0: "five times"}.get(factor, f"{factor:g} times")


def _signal(name: str, polarity: Literal["+", "-"], *, summary: str, rule: str, reads: str, source: str) -> Detector:
    """One of the document's per-iteration telemetry signals as a detector of its own: one item
    listing the iterations where it holds; its points are per iteration, from ``signals.points``."""

    def check(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
        hit = hits(facts, policy).get(name)
        return (hit,) if hit is not None else ()

    def values(policy: Policy) -> dict[str, Any]:
        s = policy.signals
        worth = float(getattr(s.points, name))
        return {"worth": f"{worth:+g} per iteration" if worth else "0 (shown, not scored)",
                "proportional": _times(s.proportional_edits_factor), "shotgun": _times(s.shotgun_edits_factor),
                "runs": {1: "once", 2: "twice"}.get(s.local_validation_min_runs, f"{s.local_validation_min_runs} times")}

    declared = detector(name, "signal", section="signals", values=values, summary=summary, points="{worth}", rule=rule,
                        reads=reads, source=source)(check)
    return msgspec.structs.replace(declared, polarity=polarity, per_iteration=True)


DETECTORS = [
    _signal("reads_before_writing", "+",
            summary=("More than {s.reads_before_writing_seconds:g} s between the feedback and the first edit "
                     "(time_before_first_edit_seconds > {s.reads_before_writing_seconds:g})."),
            rule="time_before_first_edit_seconds > {s.reads_before_writing_seconds:g} (signals.reads_before_writing_seconds)",
            reads="time_before_first_edit_seconds", source="Telemetry Signals (positive)"),
    _signal("no_regressions", "+",
            summary=("No previously passing test broken, ruled out by the evidence (per-test outcomes, the harness's "
                     "regressions: 0, or every test passing on the same suite) after something passed."),
            rule=("regressions ruled out by the evidence (per-test outcomes in which the tests that passed before ran "
                  "again, the harness's `regressions: 0`, or every test passing on the same suite; a net gain in passes "
                  "is not enough: 18/24 to 20/24 can hide two; a shell agent's next check that is another script rules "
                  "out nothing), "
                  "after something passed; not by a submission that changed nothing (the previous program again); a run "
                  "of the agent's own checks submits once and is paid once (`signals.no_regressions_in_local_runs`)"),
            reads="per-test outcomes, regressions, the pass counts of one suite",
            source="Telemetry Signals (positive); example 1"),
    _signal("proportional_edits", "+",
            summary=("File edits no more than {proportional} the failing tests (file_edits <= test_failures x "
                     "{s.proportional_edits_factor:g})."),
            rule="file_edits <= test failures x {s.proportional_edits_factor:g}",
            reads="actions.file_edits, the failing tests", source="Telemetry Signals (positive)"),
    _signal("local_validation", "+",
            summary=("The tests were run locally at least {runs} before submitting (test_runs >= "
                     "{s.local_validation_min_runs})."),
            rule=("test_runs >= {s.local_validation_min_runs} before submitting; a run of the agent's own checks "
                  "submits once and is paid once, however many of its iterations hold "
                  "(`signals.local_validation_in_local_runs`)"),
            reads="actions.test_runs", source="Telemetry Signals (positive); example 3"),
    _signal("productive", "+", summary="The score rose (score.delta > 0).", rule="the score rose (score delta > 0)",
            reads="the score delta", source="Telemetry Signals (positive)"),
    _signal("edits_without_reading", "-",
            summary=("An edit within {s.edits_without_reading_seconds:g} s of the feedback (time_before_first_edit_seconds "
                     "< {s.edits_without_reading_seconds:g})."),
            rule="time_before_first_edit_seconds < {s.edits_without_reading_seconds:g}",
            reads="time_before_first_edit_seconds", source="Telemetry Signals (negative)"),
    _signal("regressions", "-",
            summary="Previously passing tests broken (regressions > 0; regression_blindness scores it).",
            rule="previously passing tests broken (regressions > 0; regression_blindness scores it)",
            reads="per-test outcomes or the pass counts of one suite", source="Telemetry Signals (negative)"),
    _signal("shotgun_edits", "-",
            summary=("File edits more than {shotgun} the failing tests (file_edits > test_failures x "
                     "{s.shotgun_edits_factor:g})."),
            rule="file_edits > test failures x {s.shotgun_edits_factor:g}",
            reads="actions.file_edits, the failing tests", source="Telemetry Signals (negative)"),
    _signal("no_local_validation", "-",
            summary=("No local test run before submitting (test_runs == 0), or, in a shell agent's run, source "
                     "files written after its last check (the submitted code's last change never ran)."),
            rule=("no local test run before submitting (test_runs == 0); in a shell agent's final iteration, also "
                  "a write of a source file after its last check (`actions.untested_edits`; a README, a summary, an "
                  "answer or data file written then is not one)"),
            reads="actions.test_runs, actions.untested_edits", source="Telemetry Signals (negative); example 2"),
    _signal("unproductive", "-", summary="The score did not rise (score.delta <= 0).",
            rule="the score did not rise (score delta <= 0)", reads="the score delta", source="Telemetry Signals (negative)"),
    _signal("on_target", "+",
            summary=("A standard run's submission at or above the format's pass-rate target: 60% of the tests at "
                     "the first iteration, 80% at the second, 90% at the third (the lower bound of each of the "
                     "rulebook's ranges)."),
            rule=("passed / total at least 60%, 80% and 90% at a standard run's first, second and third iterations "
                  "(not in the agent's own runs, which are not graded submissions)"),
            reads="the test counts, the format", source="Standard format (targets per iteration)"),
    _signal("largest_first_step", "+",
            summary="The score rose most from iteration 0 to 1, as the rulebook expects of a standard run.",
            rule=("the rise from iteration 0 to 1 is positive and larger than every later one (three iterations or more, "
                  "every step scored)"),
            reads="the score deltas", source="Standard format (\"the biggest score jump should be iter 0 -> iter 1\")"),
]
