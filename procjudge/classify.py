"""Where a trajectory sits: its pattern (the five interpretations of "Score Trajectory", plus
``single_iteration``) and its tier (the six strategies of "Summary: The Iteration Hierarchy").

Each function returns the name and the rule that placed the run there, in words (or a function
that writes them, called only where a report reads them), so the report can say why. ``judged``
marks the steps that count as regressions or stalls (a step into a new marathon phase does not,
by default: see ``trajectory.judge_phase_boundaries``)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .numbers import fmt_num
from .policy import Policy
from .render.text import Text, written


def classify_pattern(trajectory: list[float], policy: Policy, judged: Sequence[bool] | None = None,
                     build_failed: Sequence[bool] | None = None) -> tuple[str, Text]:
    """The first rule that holds, in this order:

    single_iteration  only one scored submission;
    suspicious_jump   a gain of at least 30 points right after a step that moved less than 2
                      (a stall of failed builds is not one: a repaired build jumps honestly);
    strong_start      the first score is at least 85 and no step regresses;
    regression_recovered  some step regresses, and the final score is above every score before
                      the last regression;
    thrashing         a regression never recovered, or the mean gain per step is under 5 points
                      with at least half of the steps stalled (moving less than 2);
    healthy_progression  otherwise (no regression and steady gains).
    """
    p = policy.pattern
    stall = policy.trajectory.wasted_iteration.min_delta
    if len(trajectory) == 1:
        return "single_iteration", "one submission: there is no trajectory to read"
    deltas = [b - a for a, b in itertools.pairwise(trajectory)]
    judged = list(judged) if judged is not None else [True] * len(deltas)
    failed_builds = list(build_failed) if build_failed is not None else [False] * len(trajectory)
    jump = suspicious_jump(deltas, judged, failed_builds, p.suspicious_jump_points, stall)
    if jump is not None:
        return "suspicious_jump", jump[1]
    regressions = [k for k, d in enumerate(deltas) if d < 0 and judged[k]]
    if trajectory[0] >= p.strong_start and not regressions:
        return "strong_start", lambda: (f"first score {fmt_num(trajectory[0])} >= {fmt_num(p.strong_start)} and "
                                        f"{none_regressed(deltas, judged)}")
    mean_gain = (trajectory[-1] - trajectory[0]) / len(deltas)
    if regressions:
        last = regressions[-1]
        before = max(trajectory[: last + 1])
        if trajectory[-1] > before and mean_gain >= p.thrashing_mean_gain:
            return "regression_recovered", lambda: (
                f"regressed at iteration {last + 1}, then recovered to {fmt_num(trajectory[-1])} "
                f"(above the earlier best {fmt_num(before)})"
            )
        return "thrashing", lambda: (
            f"regressed at iteration {last + 1} and the mean gain is {fmt_num(mean_gain)} a step"
            + ("" if trajectory[-1] > before else f"; never recovered above {fmt_num(before)}")
        )
    stalled = sum(1 for d, counted in zip(deltas, judged, strict=True) if counted and abs(d) < stall)
    if mean_gain < p.thrashing_mean_gain and stalled * 2 >= len(deltas):
        return "thrashing", lambda: (f"mean gain {fmt_num(mean_gain)} a step < {fmt_num(p.thrashing_mean_gain)} and {stalled} of "
                             f"{len(deltas)} steps stalled: minimal progress")
    return "healthy_progression", lambda: f"{none_regressed(deltas, judged)} and a mean gain of {fmt_num(mean_gain)} a step"


def none_regressed(deltas: Sequence[float], judged: Sequence[bool]) -> str:
    """'no regression', or, where a score dropped on a step that is not judged (a phase boundary
    or a change of suite, by policy), 'no counted regression' and which drops were left out, so
    that the text agrees with the aggregate's count of every drop."""
    uncounted = [k + 1 for k, d in enumerate(deltas) if d < 0 and not judged[k]]
    if not uncounted:
        return "no regression"
    at = ", ".join(str(k) for k in uncounted)
    return (f"no counted regression (the drop at iteration{'s' if len(uncounted) > 1 else ''} {at} crosses a phase or "
            "suite boundary and is not judged)")


def suspicious_jump(deltas: list[float], judged: Sequence[bool], failed_builds: Sequence[bool], points: float,
                    stall: float) -> tuple[int, str] | None:
    """The first gain of ``points`` or more right after a stalled step (neither a failed build):
    the position of the step that jumped (1 is the second submission), and the rule as it reads."""
    for k in range(1, len(deltas)):
        if failed_builds[k] or failed_builds[k - 1]:
            continue
        if judged[k] and judged[k - 1] and deltas[k] >= points and abs(deltas[k - 1]) < stall:
            return k + 1, (f"+{fmt_num(deltas[k])} at iteration {k + 1} right after a stall "
                           f"({fmt_num(deltas[k - 1])}): possible brute force or copying")
    return None


def classify_tier(trajectory: list[float], wasted: int, policy: Policy, judged: Sequence[bool] | None = None,
                  cheating: str | None = None, held_back: str | None = None) -> tuple[str, Text]:
    """The tier, by the first rule that holds:

    get_it_right_first_time  first score >= 85, at most 2 submissions, no regression, no cheating,
                             and (``tier.first_time_held_back: must_pass``) no failing held-back
                             suite on the final submission (``held_back`` says how it fails);
    regression_spiral        two steps or more, final below first, at least half the steps regress;
    persistent_thrashing     (cheating) definite evidence of cheating: no better than this tier;
    exploratory_converging   (one submission) below 85, or right by the first rule but for its
                             held-back suite: there is no iteration to judge;
    systematic_refinement    no regression, no wasted step, mean gain >= 5 a step;
    exploratory_converging   no regression and the final score is acceptable (>= 70), or the run
                             still trends upward with most steps gaining;
    thrashing_recovering     regressions happened but the final score is acceptable (>= 70);
    persistent_thrashing     otherwise: no convergence, iterations wasted, score stagnant.

    A run kept from the first tier only by its held-back suite says so in its rule.
    """
    t = policy.tier
    deltas = [b - a for a, b in itertools.pairwise(trajectory)]
    judged = list(judged) if judged is not None else [True] * len(deltas)
    regressions = sum(1 for d, counted in zip(deltas, judged, strict=True) if d < 0 and counted)
    first = trajectory[0]
    first_time = (first >= t.first_time_score and len(trajectory) <= t.first_time_max_iterations
                  and not regressions and not cheating)
    wrong = held_back if t.first_time_held_back == "must_pass" else None
    if first_time and not wrong:
        return "get_it_right_first_time", lambda: (
            f"first score {fmt_num(first)} >= {fmt_num(t.first_time_score)} in "
            f"{len(trajectory)} submission{'s' if len(trajectory) > 1 else ''}, no regression"
        )
    if first_time and not deltas:
        return "exploratory_converging", lambda: (f"one submission scoring {fmt_num(first)}, but {wrong}: not right the "
                                          "first time, and there is no iteration to judge")
    tier, rule = _after_first_time(trajectory, deltas, judged, regressions, wasted, policy, cheating)
    if first_time:
        return tier, lambda: f"{written(rule)} (not get_it_right_first_time: {wrong})"
    return tier, rule


def _after_first_time(trajectory: list[float], deltas: list[float], judged: list[bool], regressions: int, wasted: int,
                      policy: Policy, cheating: str | None) -> tuple[str, Text]:
    """The tiers below the first, by the first rule that holds (``classify_tier``)."""
    t = policy.tier
    p = policy.pattern
    first, final = trajectory[0], trajectory[-1]
    if len(deltas) >= 2 and final < first and regressions * 2 >= len(deltas):
        return "regression_spiral", lambda: (f"{regressions} of {len(deltas)} steps regress and the final {fmt_num(final)} "
                                     f"is below the first {fmt_num(first)}")
    if cheating:
        return "persistent_thrashing", lambda: f"definite evidence of cheating ({cheating}): no better than persistent thrashing"
    if not deltas:
        return "exploratory_converging", lambda: (f"one submission scoring {fmt_num(first)} < {fmt_num(t.first_time_score)}: "
                                          "no iteration to judge")
    mean_gain = (final - first) / len(deltas) if deltas else 0.0
    if not regressions and not wasted and mean_gain >= p.thrashing_mean_gain:
        return "systematic_refinement", lambda: (f"{none_regressed(deltas, judged)}, no wasted iteration, mean gain "
                                                 f"{fmt_num(mean_gain)} a step")
    gaining = sum(1 for d in deltas if d >= policy.trajectory.wasted_iteration.min_delta)
    if not regressions and (final >= t.acceptable_final or gaining * 2 > len(deltas)):
        return "exploratory_converging", lambda: (
            f"{none_regressed(deltas, judged)}; {gaining} of {len(deltas)} steps gained, final {fmt_num(final)}"
        )
    if regressions and final >= t.acceptable_final:
        return "thrashing_recovering", lambda: (
            f"{regressions} regressing step{'s' if regressions > 1 else ''} but the final {fmt_num(final)} "
            f">= {fmt_num(t.acceptable_final)} is acceptable"
        )
    return "persistent_thrashing", lambda: (
        f"final {fmt_num(final)} < {fmt_num(t.acceptable_final)} after {len(trajectory)} submissions; "
        f"{regressions} regressing and {wasted} wasted"
    )


# --------------------------------------------------------------------------- what explain says of them

# (id, kind, rule as a template filled from the policy: {p...}), in the order the rules apply.
PLACEMENTS: tuple[tuple[str, str, str], ...] = (
    ("single_iteration", "pattern", "only one scored submission: there is no trajectory to read"),
    ("suspicious_jump", "pattern", (
        "a gain of {p.pattern.suspicious_jump_points:g} points or more right after a step that moved less "
        "than {p.trajectory.wasted_iteration.min_delta:g} (a stall of failed builds is not one: a repaired "
        "build jumps honestly); possible brute force or copying. The rule of the same name makes it gateable"
    )),
    ("strong_start", "pattern", "the first score is at least {p.pattern.strong_start:g} and no step regresses"),
    ("regression_recovered", "pattern", (
        "some step regresses, and the final score is above every score before the last regression, with a "
        "mean gain of {p.pattern.thrashing_mean_gain:g} a step or more"
    )),
    ("thrashing", "pattern", (
        "a regression never recovered, or a mean gain under {p.pattern.thrashing_mean_gain:g} a step with at "
        "least half of the steps stalled (moving less than {p.trajectory.wasted_iteration.min_delta:g})"
    )),
    ("healthy_progression", "pattern", "otherwise: no regression and steady gains"),
    ("get_it_right_first_time", "tier", (
        "first score {p.tier.first_time_score:g} or more in at most {p.tier.first_time_max_iterations} "
        "submissions, no regression, no definite cheating, and (tier.first_time_held_back: "
        "{p.tier.first_time_held_back}) no failing held-back suite on the final submission"
    )),
    ("regression_spiral", "tier", (
        "two steps or more, the final score below the first, and at least half of the steps regress"
    )),
    ("systematic_refinement", "tier", (
        "no regression, no wasted step, and a mean gain of {p.pattern.thrashing_mean_gain:g} a step or more"
    )),
    ("exploratory_converging", "tier", (
        "no regression and a final score of {p.tier.acceptable_final:g} or more, or most steps still gaining;"
        " also a single submission below {p.tier.first_time_score:g} (no iteration to judge)"
    )),
    ("thrashing_recovering", "tier", (
        "regressions happened, but the final score of {p.tier.acceptable_final:g} or more is acceptable"
    )),
    ("persistent_thrashing", "tier", (
        "otherwise (no convergence, iterations wasted, score stagnant); and at best this tier for a run with "
        "definite evidence of cheating"
    )),
)
SOURCES = {"pattern": "Score Trajectory (the five interpretations), and one submission",
           "tier": "Summary: The Iteration Hierarchy (best to worst)"}


def placement(name: str, policy: Policy) -> tuple[str, str, str] | None:
    """(kind, rule filled from the policy, source) of a tier or pattern; None for another name."""
    for ident, kind, template in PLACEMENTS:
        if ident == name:
            return kind, template.format(p=policy), SOURCES[kind]
    return None
