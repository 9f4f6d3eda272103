"""The per-iteration telemetry signals ("Telemetry Signals the Process Judge Evaluates"): five
positive and five negative, each shown for the iterations where it holds.  A signal's points come
from ``signals.points``; most are 0 (shown, not scored) because a practice or anti-pattern already
scores the same behaviour."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..facts import IterationFacts, RunFacts
from ..policy import Policy
from .base import Detector, Hit, detector, plural


def _delta(it: IterationFacts) -> float | None:
    return it.recorded_delta if it.recorded_delta is not None else it.delta


def _regressions(it: IterationFacts) -> int | None:
    return it.tests_broken if it.delta is not None else None


def _compare(value: float | None, op: str, limit: float | None) -> bool | None:
    """``value op limit``, or None (not known) when either side is unknown."""
    if value is None or limit is None:
        return None
    return {"<": value < limit, "<=": value <= limit, ">": value > limit, ">=": value >= limit,
            "==": value == limit}[op]


def _edits_against_failures(it: IterationFacts, op: str, factor: float) -> bool | None:
    """File edits compared with the failing tests x factor; unknown when nothing failed."""
    failures = it.failures_before_count
    if not failures:
        return None
    return _compare(it.file_edits, op, failures * factor)


def _checks(policy: Policy) -> list[tuple[str, str, Callable[[IterationFacts], bool | None]]]:
    s = policy.signals
    return [
        ("reads_before_writing", f"time_before_first_edit_seconds > {s.reads_before_writing_seconds:g}",
         lambda it: _compare(it.seconds_before_first_edit, ">", s.reads_before_writing_seconds)),
        ("no_regressions", "regressions == 0 (ruled out)",
         lambda it: it.regressions_ruled_out or None),
        ("proportional_edits", f"file_edits <= test_failures x {s.proportional_edits_factor:g}",
         lambda it: _edits_against_failures(it, "<=", s.proportional_edits_factor)),
        ("local_validation", f"test_runs >= {s.local_validation_min_runs}",
         lambda it: _compare(it.test_runs, ">=", s.local_validation_min_runs)),
        ("productive", "score.delta > 0",
         lambda it: _compare(_delta(it), ">", 0)),
        ("edits_without_reading", f"time_before_first_edit_seconds < {s.edits_without_reading_seconds:g}",
         lambda it: _compare(it.seconds_before_first_edit, "<", s.edits_without_reading_seconds)),
        ("regressions", "regressions > 0",
         lambda it: _compare(_regressions(it), ">", 0)),
        ("shotgun_edits", f"file_edits > test_failures x {s.shotgun_edits_factor:g}",
         lambda it: _edits_against_failures(it, ">", s.shotgun_edits_factor)),
        ("no_local_validation", "test_runs == 0",
         lambda it: _compare(it.test_runs, "==", 0)),
        ("unproductive", "score.delta <= 0",
         lambda it: _compare(_delta(it), "<=", 0)),
    ]


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
NEGATIVE = tuple(name for name, (sign, _) in DOCS.items() if sign == "-")


def _signal(name: str) -> Detector:
    """One of the document's per-iteration telemetry signals as a detector of its own: one item
    listing the iterations where it holds; its points are per iteration, from ``signals.points``."""

    def check(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
        condition, holds = next((c, f) for n, c, f in _checks(policy) if n == name)
        hits = [it for it in facts.iterations if holds(it)]
        if not hits:
            return
        points = getattr(policy.signals.points, name)
        yield Hit(points=points * len(hits), iterations=tuple(it.number for it in hits),
                  evidence=f"{condition} in {plural(len(hits), 'iteration')}"
                  + (f" ({points:+g} each)" if points else " (shown, not scored)"),
                  basis="telemetry fields")

    check.__doc__ = DOCS[name][1] + " Per iteration; points from ``signals.points``."
    return detector(name, "signal")(check)


DETECTORS = [_signal(name) for name in DOCS]
