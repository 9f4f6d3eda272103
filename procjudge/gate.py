"""``procjudge gate``: seed 003's regression gate as a harness calls it, one submission a line.

Each line of input is one submission as JSON::

    {"tests": {"test_a": true, "test_b": false}, "score": 0.62}
    {"tests": {...}, "score": 0.81, "samples": [0.8, 0.83], "build": "failure"}

``tests`` maps each check to whether it passed (the hard checks), ``score`` is the soft score on
0..1, ``samples`` the same submission scored again (the noise floor that raises the margin), and
``"build": "failure"`` a submission that did not build (it passes no check). Each line gets one
line of answer at once, from :class:`procjudge.loop.Gate` (the rule the replay of a finished run
applies): its round, ``accepted`` or ``rejected``, the clause and the check that decided, the round
the gate returns now, and whether to stop. A line that is not a submission gets one line naming
what is wrong, and the rounds go on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from .loop import Gate, GateDecision
from .policy import Policy


class SubmissionError(ValueError):
    """A line that is not a submission: what is wrong with it, in one line."""


def submission(line: str) -> tuple[dict[str, bool], float, list[float] | None, bool]:
    """(tests, soft score, samples, build failed) of one line, or SubmissionError."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise SubmissionError(f"not JSON: {str(exc)[:80]}; expected an object such as "
                              '{"tests": {"test_a": true}, "score": 0.8}') from None
    if not isinstance(value, dict):
        raise SubmissionError(f"expected a JSON object, got {type(value).__name__}")
    unknown = sorted(set(value) - {"tests", "score", "samples", "build"})
    if unknown:
        raise SubmissionError(f"unknown field {unknown[0]!r}: expected tests, score, samples, build")
    tests = value.get("tests")
    if not isinstance(tests, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in tests.items()):
        raise SubmissionError("field tests: expected an object of check name to true or false")
    build = value.get("build", "success")
    if build not in ("success", "failure"):
        raise SubmissionError(f"field build: expected \"success\" or \"failure\", got {build!r}")
    score = _soft(value.get("score"), "score")
    samples = value.get("samples")
    if samples is not None:
        if not isinstance(samples, list) or len(samples) > 10_000:
            raise SubmissionError("field samples: expected a list of soft scores on 0..1")
        samples = [_soft(sample, "samples") for sample in samples]
    return tests, score, samples, build == "failure"


def _soft(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise SubmissionError(f"field {field}: expected a soft score from 0 to 1, got {json.dumps(value)[:40]}")
    return float(value)


def answers(lines: Iterable[str], policy: Policy, json_lines: bool) -> Iterator[tuple[str, bool]]:
    """(one line of answer, whether the input line was a submission) for every non-blank input line,
    as it comes."""
    gate = Gate(policy)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            tests, score, samples, failed = submission(line)
        except SubmissionError as exc:
            yield (json.dumps({"line": number, "error": str(exc)}) if json_lines else f"line {number}: error: {exc}"), False
            continue
        yield (_json(gate.offer(tests, score, samples, failed)) if json_lines
               else _text(gate.offer(tests, score, samples, failed))), True


def _json(decision: GateDecision) -> str:
    return msgspec.json.encode(decision).decode()


def _text(decision: GateDecision) -> str:
    """'round 2: accepted (2: repairs a failing check and breaks nothing); returning round 2'."""
    line = f"round {decision.round}: {decision.decision} ({decision.clause}"
    line += f"; decided by {decision.check})" if decision.check else ")"
    line += f"; returning round {decision.returned_round}"
    if decision.stop:
        line += f"; stop: {decision.stop_reason}"
    return line
