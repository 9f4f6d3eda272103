"""The per-iteration telemetry signals ("Telemetry Signals the Process Judge Evaluates"): five
positive and five negative, each shown for the iterations where it holds.  A signal's points come
from ``signals.points``; most are 0 (shown, not scored) because a practice or anti-pattern already
scores the same behaviour."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

import msgspec

from ..facts import IterationFacts, RunFacts
from ..policy import Policy
from .base import Detector, Hit, detector


def _checks(policy: Policy) -> list[tuple[str, str, Callable[[IterationFacts], bool]]]:
    """(name, condition as shown, whether it holds for an iteration) of every signal. A signal
    whose inputs are unknown (no timing, no failing tests, no delta) does not hold."""
    cached = _CHECKS.get(id(policy))
    if cached is not None and cached[0] is policy:
        return cached[1]
    s = policy.signals
    slow, fast, runs = s.reads_before_writing_seconds, s.edits_without_reading_seconds, s.local_validation_min_runs
    proportional, shotgun = s.proportional_edits_factor, s.shotgun_edits_factor

    def delta(it: IterationFacts) -> float | None:
        return it.recorded_delta if it.recorded_delta is not None else it.delta

    def against_failures(it: IterationFacts, factor: float, more: bool) -> bool:
        """File edits against the failing tests x factor; unknown (False) when nothing failed."""
        failures, edits = it.failures_before_count, it.file_edits
        if not failures or edits is None:
            return False
        return edits > failures * factor if more else edits <= failures * factor

    checks: list[tuple[str, str, Callable[[IterationFacts], bool]]] = [
        ("reads_before_writing", f"time_before_first_edit_seconds > {slow:g}",
         lambda it: it.seconds_before_first_edit is not None and it.seconds_before_first_edit > slow),
        ("no_regressions", "regressions == 0 (ruled out)", lambda it: it.regressions_ruled_out),
        ("proportional_edits", f"file_edits <= test_failures x {proportional:g}",
         lambda it: against_failures(it, proportional, more=False)),
        ("local_validation", f"test_runs >= {runs}", lambda it: it.test_runs is not None and it.test_runs >= runs),
        ("productive", "score.delta > 0", lambda it: (d := delta(it)) is not None and d > 0),
        ("edits_without_reading", f"time_before_first_edit_seconds < {fast:g}",
         lambda it: it.seconds_before_first_edit is not None and it.seconds_before_first_edit < fast),
        ("regressions", "regressions > 0",
         lambda it: it.delta is not None and it.tests_broken is not None and it.tests_broken > 0),
        ("shotgun_edits", f"file_edits > test_failures x {shotgun:g}", lambda it: against_failures(it, shotgun, more=True)),
        ("no_local_validation", "test_runs == 0", lambda it: it.test_runs == 0),
        ("unproductive", "score.delta <= 0", lambda it: (d := delta(it)) is not None and d <= 0),
    ]
    if len(_CHECKS) > 16:
        _CHECKS.clear()
    _CHECKS[id(policy)] = (policy, checks)  # the policy is held, so its id is not reused
    return checks


_CHECKS: dict[int, tuple[Policy, list[tuple[str, str, Callable[[IterationFacts], bool]]]]] = {}
_LAST: list[tuple[Any, Any, dict[str, Hit]]] = [(None, None, {})]  # facts, policy, the hits


def hits(facts: RunFacts, policy: Policy) -> dict[str, Hit]:
    """Each signal's hit (for the signals that hold somewhere): computed once per run and policy
    for all ten signal detectors (the judge asks them one after another about the same facts)."""
    last_facts, last_policy, result = _LAST[0]  # one tuple: read and replaced whole, so threads may share it
    if last_facts is facts and last_policy is policy:
        return result
    its = facts.iterations
    points_of = policy.signals.points
    result = {}
    for name, condition, holds in _checks(policy):
        numbers = tuple([it.number for it in its if holds(it)])
        if not numbers:
            continue
        points = getattr(points_of, name)
        count = len(numbers)
        result[name] = Hit(points=points * count, iterations=numbers,
                           evidence=f"{condition} in {count} iteration{'' if count == 1 else 's'}"
                           + (f" ({points:+g} each)" if points else " (shown, not scored)"),
                           basis="telemetry fields")
    _LAST[0] = (facts, policy, result)
    return result


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
            rule=("regressions ruled out by the evidence (per-test outcomes, the harness's `regressions: 0`, or every "
                  "test passing on the same suite; a net gain in passes is not enough: 18/24 to 20/24 can hide two), "
                  "after something passed"),
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
            rule="test_runs >= {s.local_validation_min_runs} before submitting",
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
    _signal("no_local_validation", "-", summary="No local test run before submitting (test_runs == 0).",
            rule="no local test run before submitting (test_runs == 0)",
            reads="actions.test_runs", source="Telemetry Signals (negative); example 2"),
    _signal("unproductive", "-", summary="The score did not rise (score.delta <= 0).",
            rule="the score did not rise (score delta <= 0)", reads="the score delta", source="Telemetry Signals (negative)"),
]
