"""The per-iteration telemetry signals ("Telemetry Signals the Process Judge Evaluates"): five
positive and five negative, each shown for the iterations where it holds.  A signal's points come
from ``signals.points``; most are 0 (shown, not scored) because a practice or anti-pattern already
scores the same behaviour."""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from ..facts import IterationFacts, RunFacts
from ..policy import Policy
from .base import Hit, detector, plural


def _delta(it: IterationFacts) -> Optional[float]:
    return it.recorded_delta if it.recorded_delta is not None else it.delta


def _regressions(it: IterationFacts) -> Optional[int]:
    return it.tests_broken if it.delta is not None else None


def _checks(policy: Policy) -> list[tuple[str, str, Callable[[IterationFacts], Optional[bool]]]]:
    s = policy.signals

    def failures(it: IterationFacts) -> Optional[int]:
        return it.failures_before_count

    def known(*values: object) -> bool:
        return all(v is not None for v in values)

    return [
        ("reads_before_writing", f"time_before_first_edit_seconds > {s.reads_before_writing_seconds:g}",
         lambda it: it.seconds_before_first_edit > s.reads_before_writing_seconds if known(it.seconds_before_first_edit) else None),
        ("no_regressions", "regressions == 0 (ruled out)",
         lambda it: it.regressions_ruled_out or None),
        ("proportional_edits", f"file_edits <= test_failures x {s.proportional_edits_factor:g}",
         lambda it: it.file_edits <= failures(it) * s.proportional_edits_factor if known(it.file_edits, failures(it)) and failures(it) else None),
        ("local_validation", f"test_runs >= {s.local_validation_min_runs}",
         lambda it: it.test_runs >= s.local_validation_min_runs if known(it.test_runs) else None),
        ("productive", "score.delta > 0",
         lambda it: _delta(it) > 0 if known(_delta(it)) else None),
        ("edits_without_reading", f"time_before_first_edit_seconds < {s.edits_without_reading_seconds:g}",
         lambda it: it.seconds_before_first_edit < s.edits_without_reading_seconds if known(it.seconds_before_first_edit) else None),
        ("regressions", "regressions > 0",
         lambda it: _regressions(it) > 0 if known(_regressions(it)) else None),
        ("shotgun_edits", f"file_edits > test_failures x {s.shotgun_edits_factor:g}",
         lambda it: it.file_edits > failures(it) * s.shotgun_edits_factor if known(it.file_edits, failures(it)) and failures(it) else None),
        ("no_local_validation", "test_runs == 0",
         lambda it: it.test_runs == 0 if known(it.test_runs) else None),
        ("unproductive", "score.delta <= 0",
         lambda it: _delta(it) <= 0 if known(_delta(it)) else None),
    ]


POSITIVE = ("reads_before_writing", "no_regressions", "proportional_edits", "local_validation", "productive")
NEGATIVE = ("edits_without_reading", "regressions", "shotgun_edits", "no_local_validation", "unproductive")


@detector("signals", "signal")
def signals(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """The ten per-iteration signals: reads before writing (> 30 s), no regressions, edits
    proportional to failures (<= 2x), local validation (>= 2 test runs), productive (delta > 0);
    and edits without reading (< 5 s), regressions, shotgun edits (> 5x failures), no local
    validation (0 test runs), unproductive (delta <= 0). One item per signal, listing its
    iterations; its points are per iteration, from ``signals.points``."""
    for name, condition, check in _checks(policy):
        hits = [it for it in facts.iterations if check(it)]
        if not hits:
            continue
        points = getattr(policy.signals.points, name)
        yield Hit(name=name, points=points * len(hits), iterations=tuple(it.number for it in hits),
                  evidence=f"{condition} in {plural(len(hits), 'iteration')}"
                  + (f" ({points:+g} each)" if points else " (shown, not scored)"),
                  basis="seed fields")


DETECTORS = [signals]
