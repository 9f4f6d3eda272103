"""The per-iteration telemetry signals ("Telemetry Signals the Process Judge Evaluates"): five
positive and five negative, each shown for the iterations where it holds.  A signal's points come
from ``signals.points``; most are 0 (shown, not scored) because a practice or anti-pattern already
scores the same behaviour."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..facts import IterationFacts, RunFacts
from ..policy import Policy
from .base import Detector, Hit, detector

if TYPE_CHECKING:
    from ..verdict import Item


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


# Each signal's description (its docstring as a detector) and polarity.
DOCS = {
    "reads_before_writing": ("+", "More than 30 s between the feedback and the first edit (time_before_first_edit_seconds > 30)."),
    "no_regressions": ("+", ("No previously passing test broken, ruled out by the evidence (per-test outcomes, the harness's "
                            "regressions: 0, or every test passing on the same suite) after something passed.")),
    "proportional_edits": ("+", "File edits no more than twice the failing tests (file_edits <= test_failures x 2)."),
    "local_validation": ("+", "The tests were run locally at least twice before submitting (test_runs >= 2)."),
    "productive": ("+", "The score rose (score.delta > 0)."),
    "edits_without_reading": ("-", "An edit within 5 s of the feedback (time_before_first_edit_seconds < 5)."),
    "regressions": ("-", "Previously passing tests broken (regressions > 0; regression_blindness scores it)."),
    "shotgun_edits": ("-", "File edits more than five times the failing tests (file_edits > test_failures x 5)."),
    "no_local_validation": ("-", "No local test run before submitting (test_runs == 0)."),
    "unproductive": ("-", "The score did not rise (score.delta <= 0)."),
}
POSITIVE = tuple(name for name, (sign, _) in DOCS.items() if sign == "+")


def shown_per_iteration(item: Item) -> bool:
    """Whether a report lists an item per iteration rather than among the items: a telemetry
    signal at 0 points (a 0-point note about the suites, such as ``visible_suite_contradicted``,
    stays among the items)."""
    return item.kind == "signal" and not item.points and item.id in DOCS
NEGATIVE = tuple(name for name, (sign, _) in DOCS.items() if sign == "-")


def _signal(name: str) -> Detector:
    """One of the document's per-iteration telemetry signals as a detector of its own: one item
    listing the iterations where it holds; its points are per iteration, from ``signals.points``."""

    def check(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
        hit = hits(facts, policy).get(name)
        return (hit,) if hit is not None else ()

    check.__doc__ = DOCS[name][1] + " Per iteration; points from ``signals.points``."
    return detector(name, "signal")(check)


DETECTORS = [_signal(name) for name in DOCS]
