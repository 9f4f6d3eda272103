"""Findings of the loop-level rules (``procjudge.loop``): a run that returned a worse submission
than one it had, and a run that passed only after many attempts."""

from __future__ import annotations

from collections.abc import Iterable

from .. import loop
from ..facts import RunFacts
from ..numbers import fmt_num
from ..policy import Policy
from .base import Hit, detector, each, feedback_steps


@detector(
    "returned_worse", "rule", tracked=True,
    needs=feedback_steps, section="best_so_far", values=lambda p: {"each": each(p.best_so_far.points, "once")},
    summary=("A run that ends {s.min_drop:g} or more points below its own best: it returned a worse submission than one "
             "it had (\"Iteration caps and regression gates\")."),
    points="{each}",
    rule=("the run ends {s.min_drop:g}+ points below its own best: it returned a worse submission than one it had "
          "(`best_so_far.min_drop`, `best_so_far.points`)"),
    reads="the scores (best against last)",
    source='003: "Iteration caps and regression gates"',
)
def returned_worse(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    best, iteration, below = loop.best_so_far(facts)
    if -below >= policy.best_so_far.min_drop:
        yield Hit(points=policy.best_so_far.points, iterations=(iteration, facts.final.number),
                  evidence=f"best {fmt_num(best)} at iteration {iteration}, returned {fmt_num(facts.final.score)} "
                  f"at iteration {facts.final.number} ({fmt_num(below)})", strength="definite")


@detector(
    "late_pass", "rule", tracked=True, section="attempts",
    values=lambda p: {"each": each(p.attempts.late_pass_points, "once"), "siblings": p.attempts.late_pass_min - 1},
    summary=("A run that passed only after {s.late_pass_min} or more attempts, sequential rounds and failing sibling "
             "candidates of a best-of-N counted together (one round with {siblings} or more siblings failing): outputs "
             "that pass late are the ones to review (\"More attempts means more search\"; 56% of those at 4-6 attempts "
             "were not real fixes)."),
    points="{each}",
    rule=("the run passed only at attempt {s.late_pass_min} or later, counting its sequential rounds plus, best-of-N, "
          "the sibling candidates that failed (`run.siblings_failed`): one round with {siblings}+ siblings failing, or "
          "a hybrid such as 5 rounds with none (`attempts.late_pass_min`)"),
    reads="the number of attempts, run.siblings_failed, the final tests",
    source='004: "More attempts means more search"',
)
def late_pass(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.attempts
    attempts = loop.attempts(facts, policy)
    risk = loop.risk_count(attempts.count, attempts.siblings_failed)
    if attempts.outcome == "passed" and risk >= rule.late_pass_min:
        siblings = attempts.siblings_failed
        what = (f"passed at attempt {attempts.count}" if not siblings
                else f"{siblings} sibling candidates failed the check" if attempts.count == 1
                else f"passed at attempt {attempts.count}, {siblings} sibling candidates failing the check")
        yield Hit(points=rule.late_pass_points, iterations=(facts.final.number,),
                  evidence=f"{what} (bucket {attempts.bucket}): a late pass, worth a reviewer's read",
                  strength="definite")


DETECTORS = [returned_worse, late_pass]
