"""What a detector is: a pure function of the run's facts and the policy, yielding hits.

A detector declares its id and kind once, with ``@detector``; its docstring is its description
(the README table and ``procjudge explain`` read it).  The judge stamps id and kind onto every hit
the function yields, so a detector cannot mislabel its own findings.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import msgspec

from ..facts import RunFacts
from ..policy import Policy

KINDS = ("trajectory", "anti_pattern", "practice", "rule", "signal")


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One finding as a detector reports it: points, the iterations concerned, evidence, basis."""

    points: float
    iterations: tuple[int, ...] = ()
    evidence: str
    basis: str = "seed fields"
    detail: Optional[dict[str, Any]] = None
    name: Optional[str] = None  # a sub-name (signals: which signal)


class Detector(msgspec.Struct, frozen=True):
    id: str
    kind: str
    func: Callable[[RunFacts, Policy], Iterable[Hit]]

    @property
    def doc(self) -> str:
        return " ".join((self.func.__doc__ or "").split())

    def __call__(self, facts: RunFacts, policy: Policy) -> Iterable[Hit]:
        return self.func(facts, policy)


def detector(id: str, kind: str) -> Callable[[Callable[[RunFacts, Policy], Iterable[Hit]]], Detector]:
    """Declare a detector's id and kind in one place."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    def wrap(func: Callable[[RunFacts, Policy], Iterable[Hit]]) -> Detector:
        return Detector(id, kind, func)

    return wrap


def fmt_num(value: float) -> str:
    """A number as people write it: 62 rather than 62.0, 84.5 as is."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")


def plural(count: int, word: str, many: Optional[str] = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"
