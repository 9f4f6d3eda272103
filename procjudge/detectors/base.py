"""What a detector is: a pure function of the run's facts and the policy, yielding hits.

A detector declares its id, kind and the evidence it needs once, with ``@detector``; its
docstring is its description (the README table reads it).  The judge stamps id and kind onto
every hit the function yields, so a detector cannot mislabel its own findings, and asks ``needs``
first: a detector whose evidence the run lacks is listed as not checked, with the reason, instead
of staying silent.

Every hit says how strong its evidence is: ``definite`` (the record shows it: per-test outcomes,
the code itself, the scores), ``likely`` (inferred: counts that bound a quantity, text patterns,
stack traces), or ``weak`` (word overlap, equal change sizes).  A detector may set it; otherwise it
follows from the basis through ``STRENGTH_OF_BASIS``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from ..facts import RunFacts
from ..policy import Policy

KINDS = ("trajectory", "anti_pattern", "practice", "rule", "signal")
STRENGTHS = ("definite", "likely", "weak")

# What each basis of evidence is worth, when a detector does not say.
STRENGTH_OF_BASIS = {
    "telemetry fields": "definite", "per-test outcomes": "definite", "test counts": "definite",
    "code_hash": "definite", "diff": "definite", "normalised code": "definite", "timestamps": "definite",
    "action log": "definite", "hidden suite": "definite", "test-file diff": "definite", "code": "definite",
    "pass counts (lower bound)": "likely", "stack traces": "likely", "file list": "likely",
    "diff similarity": "likely", "feedback categories": "likely", "diff literals": "likely",
    "text patterns": "likely", "file list, stack traces": "likely",
    "change summaries": "weak", "change sizes": "weak",
}


@functools.lru_cache(maxsize=256)
def strength_of(basis: str) -> str:
    """The weakest strength among a basis's parts (``"diff, stack traces"`` is likely)."""
    order = {name: k for k, name in enumerate(STRENGTHS)}
    parts = [STRENGTH_OF_BASIS.get(part.strip(), "likely") for part in basis.split(",") if part.strip()]
    return max(parts or ["likely"], key=lambda s: order[s])


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One finding as a detector reports it: points, the iterations concerned, evidence, basis."""

    points: float
    iterations: tuple[int, ...] = ()
    evidence: str
    basis: str = "telemetry fields"
    detail: dict[str, Any] | None = None
    name: str | None = None  # a sub-name (signals: which signal)
    strength: str | None = None  # None: from the basis


Needs = Callable[[RunFacts], str | None]


class Detector(msgspec.Struct, frozen=True):
    id: str
    kind: str
    func: Callable[[RunFacts, Policy], Iterable[Hit]]
    needs: Needs | None = None  # the reason it cannot be evaluated on a run, or None
    accuses: bool = False  # a finding that says the agent cheated
    @property
    def doc(self) -> str:
        return " ".join((self.func.__doc__ or "").split())

    def __call__(self, facts: RunFacts, policy: Policy) -> Iterable[Hit]:
        return self.func(facts, policy)


def detector(id: str, kind: str, needs: Needs | None = None,
             accuses: bool = False) -> Callable[[Callable[[RunFacts, Policy], Iterable[Hit]]], Detector]:
    """Declare a detector's id, kind and the evidence it needs in one place."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    def wrap(func: Callable[[RunFacts, Policy], Iterable[Hit]]) -> Detector:
        return Detector(id, kind, func, needs, accuses)

    return wrap


# --------------------------------------------------------------------------- what detectors need


def feedback_steps(facts: RunFacts) -> str | None:
    return None if len(facts.iterations) > 1 else "one submission: no iteration after feedback"


def any_of(*needs: Needs) -> Needs:
    """Evaluable when any of the alternatives is; otherwise the reasons joined."""

    def check(facts: RunFacts) -> str | None:
        reasons = []
        for need in needs:
            reason = need(facts)
            if reason is None:
                return None
            reasons.append(reason)
        return "; ".join(dict.fromkeys(reasons))

    return check


def all_of(*needs: Needs) -> Needs:
    def check(facts: RunFacts) -> str | None:
        for need in needs:
            reason = need(facts)
            if reason is not None:
                return reason
        return None

    return check


def having(test: Callable[[RunFacts], bool], reason: str) -> Needs:
    """A need met when ``test(facts)`` holds."""
    return lambda facts: None if test(facts) else reason


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"
