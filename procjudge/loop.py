"""The loop-level rules of the two further chapters: best-so-far against last, a replay of the
regression gate, and attempt count as risk.

From "Iteration caps and regression gates": a loop's last submission is not privileged, so the
run's best score and where it was reached are reported beside the final one; and the gate that
only accepts a revision beating the incumbent is replayed over the run:

1. never accept a revision that breaks a check the incumbent passed (hard checks: the per-test
   outcomes; every test the incumbent passed must still pass);
2. accept a revision that repairs a failing check and breaks nothing;
3. otherwise accept only when the soft score (the iteration score on 0..1) beats the incumbent's
   by the margin; ties keep the incumbent.

The incumbent is the best so far, never simply the previous submission; the loop exits early once
the incumbent passes everything with a soft score of 0.95, and stops after two rejections in a
row. Per run: the round the gate would have returned, the revisions offered and rejected with the
clause and the check that decided, and what the gate would have saved or cost against the run's
actual final.

From "More attempts means more search for outputs that satisfy the check": a run's attempt count
(or, for best-of-N, the number of sibling candidates that failed the check) places it in a risk
bucket; a run that passed only after many attempts is a finding, and a run that spent its budget
without ever going green is exhausted, a separate outcome.
"""

from __future__ import annotations

import functools
from typing import Literal

import msgspec

from .facts import IterationFacts, RunFacts, last_run
from .policy import Policy
from .verdict import Attempts, GateReplay, GateRound


def best_so_far(facts: RunFacts) -> tuple[float, int, float]:
    """(best score, the iteration that first reached it, final minus best)."""
    scores = facts.trajectory
    best = max(scores)
    return best, facts.iterations[scores.index(best)].number, round(scores[-1] - best, 6)


def _passing(it: IterationFacts) -> frozenset[str] | None:
    """Tests passing after a submission, by name, where the run has per-test outcomes."""
    return it.passing_after


def _all_pass(it: IterationFacts) -> bool:
    """Green: every visible test passes (or, without counts, a score of 100)."""
    if it.build_failed:
        return False
    return it.all_passing if it.total else it.score >= 100


def decide(passing: frozenset[str], soft: float, build_failed: bool, incumbent: frozenset[str], incumbent_soft: float,
           margin: float) -> tuple[Literal["accepted", "rejected"], str, str | None]:
    """The gate's decision on one revision against the incumbent (its passing checks and soft score
    on 0..1): decision, clause, and the check that decided. The one rule the replay and the live
    gate (``procjudge gate``, :class:`Gate`) share."""
    broken = sorted(incumbent - passing)
    if broken:
        clause = "1: the build failed: breaks every check the incumbent passed" if build_failed else \
            "1: breaks a check the incumbent passed"
        return "rejected", clause, broken[0]
    if len(passing) > len(incumbent):
        return "accepted", "2: repairs a failing check and breaks nothing", None
    if soft >= incumbent_soft + margin:
        return "accepted", f"3: soft score {soft:.2f} >= {incumbent_soft:.2f} + {margin:g}", None
    return ("rejected",
            f"3: soft score {soft:.2f} < {incumbent_soft:.2f} + {margin:g} (ties keep the incumbent)", None)


def stop_reason(incumbent_green: bool, incumbent_soft: float, rejections_in_a_row: int, policy: Policy,
                incumbent_number: int, unit: str = "iteration") -> str | None:
    """Why the gate offers no more rounds, or None: the incumbent passes every check with the soft
    score ``gate.done_soft``, or ``gate.stop_after_rejections`` revisions in a row were rejected."""
    rule = policy.gate
    if incumbent_green and incumbent_soft >= rule.done_soft:
        return f"early exit: {unit} {incumbent_number} passes every check with soft score {incumbent_soft:.2f}"
    if rejections_in_a_row >= rule.stop_after_rejections:
        return f"stopped after {rule.stop_after_rejections} rejections in a row"
    return None


def replay_gate(facts: RunFacts, policy: Policy) -> GateReplay:
    """The regression gate replayed over the run (see the module docstring for the clauses)."""
    rule = policy.gate
    # A submission whose build failed passes no check: the gate reads it as an empty set rather
    # than giving up on the whole run for want of its per-test outcomes.
    outcomes = [_passing(it) for it in facts.iterations]
    passing = [frozenset() if p is None and it.build_failed else p
               for p, it in zip(outcomes, facts.iterations, strict=True)]
    if any(p is None for p in passing) or all(p is None for p in outcomes):
        return GateReplay(replayed=False, reason="no per-test outcomes for every submission: the hard checks are unknown")
    noise = noise_floor(facts)
    margin = max(rule.margin, noise + rule.above_noise) if noise is not None else rule.margin
    decisions = [GateRound(iteration=facts.iterations[0].number, decision="incumbent",
                           clause="the first submission", check=None)]
    known = [p for p in passing if p is not None]
    incumbent = 0
    rejections_in_a_row = 0
    stopped: str | None = None
    offered = rejected = 0
    reasons: dict[str, int] = {}
    for k in range(1, len(facts.iterations)):
        it = facts.iterations[k]
        current = facts.iterations[incumbent]
        if stopped is None:
            stopped = stop_reason(_all_pass(current), current.score / 100, rejections_in_a_row, policy, current.number)
        if stopped is not None:
            decisions.append(GateRound(iteration=it.number, decision="not_offered", clause=stopped, check=None))
            continue
        offered += 1
        decision, clause, check = decide(known[k], it.score / 100, it.build_failed, known[incumbent],
                                         current.score / 100, margin)
        if decision == "accepted":
            incumbent, rejections_in_a_row = k, 0
        else:
            rejected += 1
            rejections_in_a_row += 1
            reasons[clause.split(":")[0]] = reasons.get(clause.split(":")[0], 0) + 1
        decisions.append(GateRound(iteration=it.number, decision=decision, clause=clause, check=check))
    gated = facts.iterations[incumbent]
    return GateReplay(
        replayed=True,
        margin=margin,
        noise_floor=noise,
        iterations=decisions,
        returned_round=incumbent + 1,
        returned_iteration=gated.number,
        gated_final=gated.score,
        actual_final=facts.final.score,
        saved=round(gated.score - facts.final.score, 6),
        revisions_offered=offered,
        revisions_rejected=rejected,
        rejected_by_clause={f"clause {k}": v for k, v in sorted(reasons.items())},
        stopped=None if stopped is None else "early_exit" if stopped.startswith("early exit") else "rejections",
    )


def noise_floor(facts: RunFacts) -> float | None:
    """The soft score's noise floor, where the run scored a submission more than once
    (``score.samples``): the widest spread of one submission's repeated scores, on 0..1."""
    spreads = []
    for it in facts.iterations:
        if len(it.score_samples) >= 2:
            spreads.append((max(it.score_samples) - min(it.score_samples)) / 100)
    return round(max(spreads), 6) if spreads else None


@last_run  # the judge and late_pass ask about the same run in turn
def attempts(facts: RunFacts, policy: Policy) -> Attempts:
    """Attempt count, its risk bucket, and the run's outcome: ``passed`` (the final submission
    passes every visible test), ``exhausted`` (the budget was spent and it never went green),
    or ``stopped`` (it ended with failures and budget left)."""
    rule = policy.attempts
    info = facts.run.info
    count = len(facts.iterations)
    # a hybrid's siblings round by round where the records give them, else the run's one count
    per_round = [it.entry.iteration_telemetry.siblings_failed for it in facts.iterations]
    siblings = sum(n for n in per_round if n is not None) if any(n is not None for n in per_round) else info.siblings_failed
    basis: Literal["attempts", "siblings_failed"] = "attempts" if siblings is None else "siblings_failed"
    bucket = bucket_of(risk_count(count, siblings), rule.buckets)
    ever_green = any(_all_pass(it) for it in facts.iterations)
    outcome: Literal["passed", "exhausted", "stopped"]
    if _all_pass(facts.final):
        outcome = "passed"
    elif not ever_green and (count >= facts.budget or facts.excluded):
        outcome = "exhausted"
    else:
        outcome = "stopped"
    return Attempts(count=count, bucket=bucket, basis=basis, siblings_failed=siblings, outcome=outcome)


def risk_count(rounds: int, siblings_failed: int | None) -> int:
    """The search a run's pass cost: its sequential rounds, plus, best-of-N, the sibling candidates
    that failed the check (a pure best-of-N run is one round; a hybrid is rounds and siblings: with
    each round's siblings rejected beside its submitted candidate, ``iteration_telemetry.
    siblings_failed``, three rounds of four draws count twelve, the product of the two)."""
    return rounds + (siblings_failed or 0)


@functools.lru_cache(maxsize=1024)
def bucket_of(count: int, bounds: tuple[int, ...]) -> str:
    """The bucket label of an attempt count: bounds (1, 2, 3, 4, 7) give 1, 2, 3, 4-6, 7+."""
    label = str(bounds[0])
    for k, low in enumerate(bounds):
        if count < low:
            break
        high = bounds[k + 1] - 1 if k + 1 < len(bounds) else None
        label = str(low) if high == low else (f"{low}-{high}" if high is not None else f"{low}+")
    return label


def bucket_labels(bounds: tuple[int, ...]) -> list[str]:
    return [bucket_of(low, bounds) for low in bounds]


# --------------------------------------------------------------------------- the gate while the loop runs


class GateDecision(msgspec.Struct, frozen=True, kw_only=True):
    """The live gate's answer to one submission: its round (1 for the first), ``accepted`` or
    ``rejected``, the clause that decided, the check that did (a rejection by clause 1), the round
    the gate would return now (the incumbent's), and whether to stop offering rounds."""

    round: int
    decision: Literal["accepted", "rejected"]
    clause: str
    check: str | None
    returned_round: int
    stop: bool
    stop_reason: str | None = None
    margin: float


class Gate:
    """Seed 003's regression gate, deciding each round as the loop runs: the first submission is the
    incumbent; each later one is accepted or rejected by :func:`decide` against it (the rule the
    replay applies); ``stop`` once the incumbent passes every check with ``gate.done_soft`` or after
    ``gate.stop_after_rejections`` rejections in a row. The margin is ``gate.margin``, raised to the
    noise floor of the scores seen so far plus ``gate.above_noise`` once a submission is scored
    repeatedly (``samples``).

        gate = Gate(policy)
        for tests, score in rounds:
            answer = gate.offer(tests, score)
            if answer.stop: break
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.round = 0
        self.incumbent: tuple[int, frozenset[str], float, bool] | None = None  # round, passing, soft, green
        self.rejections_in_a_row = 0
        self.noise: float | None = None

    def offer(self, tests: dict[str, bool], score: float, samples: list[float] | None = None,
              build_failed: bool = False) -> GateDecision:
        """Decide on one submission: ``tests`` maps each check to whether it passed, ``score`` is the
        soft score on 0..1, ``samples`` the same submission scored again (on 0..1)."""
        if not 0 <= score <= 1:
            raise ValueError(f"score {score!r} is not a soft score on 0..1")
        rule = self.policy.gate
        if samples and len(samples) >= 2:
            spread = max(samples) - min(samples)
            self.noise = spread if self.noise is None else max(self.noise, spread)
        margin = max(rule.margin, round(self.noise, 6) + rule.above_noise) if self.noise is not None else rule.margin
        self.round += 1
        passing = frozenset(name for name, passed in tests.items() if passed and not build_failed)
        green = bool(tests) and not build_failed and all(tests.values())
        if self.incumbent is None:
            self.incumbent = (self.round, passing, score, green)
            decision: Literal["accepted", "rejected"] = "accepted"
            clause, check = "the first submission: the incumbent", None
        else:
            _, incumbent, incumbent_soft, _ = self.incumbent
            decision, clause, check = decide(passing, score, build_failed, incumbent, incumbent_soft, margin)
            if decision == "accepted":
                self.incumbent, self.rejections_in_a_row = (self.round, passing, score, green), 0
            else:
                self.rejections_in_a_row += 1
        number, _, soft, incumbent_green = self.incumbent
        reason = stop_reason(incumbent_green, soft, self.rejections_in_a_row, self.policy, number, "round")
        return GateDecision(round=self.round, decision=decision, clause=clause, check=check, returned_round=number,
                            stop=reason is not None, stop_reason=reason, margin=margin)
