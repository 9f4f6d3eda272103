"""What a detector is: a pure function of the run's facts and the policy, yielding hits, and the
one declaration of its rule.

A detector declares everything about its rule once, with ``@detector``: its id and kind, the
evidence it needs, whether it accuses, its policy section, and the texts ``procjudge explain``,
the SARIF rule list and docs/rules.md print (a one-sentence summary, its points, the rule, what
it reads, the rulebook section it comes from). The texts are templates filled from the policy in
force (``{p...}`` is the policy, ``{s...}`` the rule's own section, and ``values`` adds numbers
derived from them), so an explanation under a custom policy states the custom numbers. The judge
stamps id, kind and the presentation flags (a signal's polarity, whether a 0-point signal is shown
per iteration) onto every hit the function yields, so a detector cannot mislabel its own
findings, and asks ``needs`` first: a detector whose evidence the run lacks is listed as not
checked, with the reason, instead of staying silent.

Every hit says how strong its evidence is: ``definite`` (the record shows it: per-test outcomes,
the code itself, the scores), ``likely`` (inferred: counts that bound a quantity, text patterns,
stack traces), or ``weak`` (word overlap, equal change sizes).  A detector may set it; otherwise it
follows from the basis through ``STRENGTH_OF_BASIS``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Literal

import msgspec

from ..facts import IterationFacts, RunFacts
from ..model import LocalCheck
from ..policy import Policy
from ..render.text import Text

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


Detail = dict[str, Any] | Callable[[], dict[str, Any] | None] | None


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One finding as a detector reports it: points, the iterations concerned, evidence, basis.

    ``evidence`` and ``detail`` may be given as functions that write them: the judge calls them
    when the verdict is explained, and a batch whose reports read only the figures never does
    (writing the texts is a sixth of judging a small run). Such a function is called as soon as the
    detector hands the hit over, before it resumes, so it may read the detector's loop variables;
    a detector that keeps hits for later binds what it reads (``functools.partial``)."""

    points: float
    iterations: tuple[int, ...] = ()
    evidence: Text
    basis: str = "telemetry fields"
    detail: Detail = None
    name: str | None = None  # a sub-name (signals: which signal)
    strength: str | None = None  # None: from the basis


Needs = Callable[[RunFacts], str | None]


Check = Callable[[RunFacts, Policy], Iterable[Hit]]


class Detector(msgspec.Struct, frozen=True, kw_only=True):
    """A rule, declared once: the check and everything said about it."""

    id: str
    kind: str
    func: Check
    summary: str  # one sentence: what it finds and what it is worth (a template)
    points: str  # its points as the policy sets them (a template)
    rule: str  # the rule in full (a template)
    reads: str  # the fields of a run it reads
    source: str  # the rulebook section it comes from
    section: str | None = None  # the dotted path of its policy section: ``{s...}`` in the templates
    values: Callable[[Policy], dict[str, Any]] | None = None  # numbers the templates derive from the policy
    needs: Needs | None = None  # the reason it cannot be evaluated on a run, or None
    accuses: bool = False  # a definite finding says the agent cheated (the run scores the floor)
    polarity: Literal["+", "-"] | None = None  # a telemetry signal: good (+) or bad (-) practice
    per_iteration: bool = False  # a telemetry signal at 0 points is shown per iteration, not among the items
    tracked: bool = False  # the drift report follows the share of runs it fires on, window by window

    def text(self, template: str, policy: Policy) -> str:
        """A template filled from ``policy``."""
        section: Any = policy
        for part in (self.section or "").split("."):
            section = getattr(section, part) if part else section
        extra = self.values(policy) if self.values is not None else {}
        if hasattr(section, "range"):
            extra.setdefault("range", span(section.range.mild, section.range.severe))
        return template.format(p=policy, s=section, **extra)


def detector(id: str, kind: str, *, summary: str, points: str, rule: str, reads: str, source: str,
             section: str | None = None, values: Callable[[Policy], dict[str, Any]] | None = None,
             needs: Needs | None = None, accuses: bool = False, tracked: bool = False) -> Callable[[Check], Detector]:
    """Declare a rule in one place: its id, kind, texts, policy section and the evidence it needs."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    def wrap(func: Check) -> Detector:
        return Detector(id=id, kind=kind, func=func, summary=summary, points=points, rule=rule, reads=reads,
                        source=source, section=section, values=values, needs=needs, accuses=accuses,
                        tracked=tracked)

    return wrap


# --------------------------------------------------------------------------- shared per run

# --------------------------------------------------------------------------- what detectors need


def feedback_steps(facts: RunFacts) -> str | None:
    return None if len(facts.iterations) > 1 else "one submission: no iteration after feedback"


def all_of(*needs: Needs) -> Needs:
    """A need met when every one of ``needs`` is, failing with the first one's reason; the judge
    asks each part once per run, however many detectors share it (``parts``)."""
    def check(facts: RunFacts) -> str | None:
        for need in needs:
            reason = need(facts)
            if reason is not None:
                return reason
        return None

    check.parts = needs  # type: ignore[attr-defined]
    return check


def parts(needs: Needs | None) -> tuple[Needs, ...]:
    """The needs a detector's ``needs`` is made of, in order (itself, when it is not an ``all_of``)."""
    if needs is None:
        return ()
    inner = getattr(needs, "parts", None)
    return (needs,) if inner is None else tuple(need for part in inner for need in parts(part))


def having(test: Callable[[RunFacts], bool], reason: str) -> Needs:
    """A need met when ``test(facts)`` holds."""
    return lambda facts: None if test(facts) else reason


def written_detail(detail: Detail) -> dict[str, Any] | None:
    """A hit's detail, made now if it was given as a function."""
    return detail() if callable(detail) else detail


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


# --------------------------------------------------------------------------- a check as the log shows it

_SHOWED = {"passed": "passed", "failed": "failed", "error": "crashed", "unavailable": "could not run"}


def said(check: LocalCheck, width: int = 90) -> str:
    """One of the agent's own checks as a reviewer finds it in the log: the command, what it
    showed, and the line that shows it (``message``, cut at ``width`` characters), else its counts:
    ```python reproduce.py` crashed: NameError: name 'dt' is not defined (exit status 1)``."""
    line = check.message or (f"{check.failed} failed, {check.passed} passed"
                             if check.failed is not None and check.passed is not None else "")
    if check.outcome == "unavailable" and check.unavailable and not line:
        line = check.unavailable.replace("_", " ")
    line = " ".join(line.split())
    if len(line) > width:
        line = line[:width - 3].rstrip() + "..."
    return f"`{check.command}` {_SHOWED[check.outcome]}" + (f": {line}" if line else "")


def scoring_check(it: IterationFacts) -> LocalCheck | None:
    """The check of the agent's own runs that scored an iteration: the last one run of its suite
    (``test_results.suite``, the command whose counts the iteration carries), else its last check;
    None in a run of graded submissions."""
    checks = it.local_checks
    return next((check for check in reversed(checks) if check.command == it.suite), checks[-1] if checks else None)


# --------------------------------------------------------------------------- the texts' numbers


def each(points: float, what: str = "each") -> str:
    """A rule's points as its texts state them: ``-5 each``, or 0 shown and gateable."""
    return f"{points:+g} {what}" if points else "0 (shown, gateable)"


def span(low: float, high: float) -> str:
    """A range of points: ``-3 to -8``."""
    return f"{low:+g} to {high:+g}"


def share(value: float, one: bool = False) -> str:
    """A fraction in words where the rulebook has them (``half``; ``one half`` with ``one``), else a
    percentage."""
    if value == 0.5:
        return "one half" if one else "half"
    return f"{value:.0%}"


def seconds(value: float | None) -> str:
    """A gap in seconds, or what an unset one means."""
    return f"{value:g}" if value is not None else "(unset)"
