"""Findings of the loop-level rules (``procjudge.loop``): a run that returned a worse submission
than one it had, and a run that passed only after many attempts."""

from __future__ import annotations

from collections.abc import Iterable

from .. import loop
from ..facts import RunFacts, fmt_num
from ..policy import Policy
from .base import Hit, detector, feedback_steps


@detector("returned_worse", "rule", needs=feedback_steps)
def returned_worse(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """A run that ends 2 or more points below its own best: it returned a worse submission than
    one it had ("Iteration caps and regression gates"). Points from ``best_so_far.points``
    (0 by default: the regressing step already costs -5); gateable with ``--fail-on``."""
    best, iteration, below = loop.best_so_far(facts)
    if -below >= policy.best_so_far.min_drop:
        yield Hit(points=policy.best_so_far.points, iterations=(iteration, facts.final.number),
                  evidence=f"best {fmt_num(best)} at iteration {iteration}, returned {fmt_num(facts.final.score)} "
                  f"at iteration {facts.final.number} ({fmt_num(below)})", strength="definite")


@detector("late_pass", "rule")
def late_pass(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """A run that passed only after 4 or more attempts (or, best-of-N, with 3 or more sibling
    candidates failing): outputs that pass late are the ones to review ("More attempts means more
    search"; 56% of those at 4-6 attempts were not real fixes). 0 points by default: a risk, not a
    verdict; gateable with ``--fail-on late_pass``."""
    rule = policy.attempts
    attempts = loop.attempts(facts, policy)
    risk = (attempts.siblings_failed + 1) if attempts.siblings_failed is not None else attempts.count
    if attempts.outcome == "passed" and risk >= rule.late_pass_min:
        what = (f"{attempts.siblings_failed} sibling candidates failed the check" if attempts.basis == "siblings_failed"
                else f"passed at attempt {attempts.count}")
        yield Hit(points=rule.late_pass_points, iterations=(facts.final.number,),
                  evidence=f"{what} (bucket {attempts.bucket}): a late pass, worth a reviewer's read",
                  strength="definite")


DETECTORS = [returned_worse, late_pass]
