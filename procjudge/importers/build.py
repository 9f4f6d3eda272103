"""The typed pieces every importer builds a run from (:mod:`procjudge.model`'s records), and the
builder of graded submissions.

An importer builds :class:`~procjudge.model.RunFile` itself, so a misspelt field fails where it
is written (a struct takes only its own fields). Two builders cover the two kinds of run:
:func:`procjudge.importers.shell.convert` for agents whose iterations are their own checks
(``iterations_are: local_runs``), and :func:`submissions` here for loops graded per submission
(the Inspect log's scored answers, a Reflexion-family repair loop). Readers still hand the
pieces they parse as plain values (a test as ``{"name", "outcome", "message", "files"}``, a
held-back suite as ``{"name", "passed", "total", "tests"}``); :func:`outcome` and :func:`suite`
take those by their keys, so a reader's misspelt key fails here as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import Counts, Entry, HiddenSuite, RunFile, RunInfo, TestOutcome, Usage

_OUTCOME_KEYS = frozenset({"name", "outcome", "message", "files", "category"})
_SUITE_KEYS = frozenset({"name", "passed", "total", "tests"})


def outcome(test: dict[str, Any]) -> TestOutcome:
    """A test's outcome as a reader parsed it; TypeError on a key the model does not have."""
    odd = test.keys() - _OUTCOME_KEYS
    if odd:
        raise TypeError(f"a test outcome has no field {min(odd)!r}")
    return TestOutcome(name=test["name"], outcome=test["outcome"], category=test.get("category"),
                       message=test.get("message"), files=test.get("files"))


def outcomes(tests: list[dict[str, Any]]) -> list[TestOutcome]:
    return [outcome(test) for test in tests]


def suite(found: dict[str, Any]) -> HiddenSuite:
    """A held-back suite as a reader found it; TypeError on a key the model does not have."""
    odd = found.keys() - _SUITE_KEYS
    if odd:
        raise TypeError(f"a held-back suite has no field {min(odd)!r}")
    tests = found.get("tests")
    return HiddenSuite(name=found["name"], passed=found["passed"], total=found["total"],
                       tests=outcomes(tests) if tests is not None else None)


def held_back(suites: list[dict[str, Any]]) -> tuple[Counts, list[HiddenSuite]]:
    """The held-back suites summed (``hidden``), and each by name (``hidden_suites``)."""
    return (Counts(passed=sum(s["passed"] for s in suites), total=sum(s["total"] for s in suites)),
            [suite(s) for s in suites])


def submissions(run: RunInfo, iterations: list[Entry]) -> RunFile:
    """A loop graded per submission: its identity, and per submission its telemetry and, where the
    log has it, the feedback it was graded with."""
    return RunFile(run=run, iterations=iterations)


def token_counts(found: dict[str, Any], names: Iterable[tuple[str, str]]) -> dict[str, int]:
    """The counts a log's ``found`` holds under each source name, keyed by :class:`Usage`'s name for
    it (``(("n_input_tokens", "input_tokens"), ...)``): non-negative integers only, the rest left out."""
    return {target: value for source, target in names
            if isinstance(value := found.get(source), int) and not isinstance(value, bool) and value >= 0}


def cost_usd(value: Any) -> float | None:
    """A price in dollars where a log gives one: a number, not a boolean, not negative."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def with_usage(document: RunFile, usage: Usage) -> RunFile:
    """The run with what it cost, as its log records it."""
    import msgspec

    return msgspec.structs.replace(document, run=msgspec.structs.replace(document.run, usage=usage))


def with_notes(document: RunFile, notes: list[str]) -> RunFile:
    """The run with ``notes`` added to what its importer noticed."""
    import msgspec

    run = document.run
    return msgspec.structs.replace(document, run=msgspec.structs.replace(run, notes=[*(run.notes or []), *notes]))


__all__ = ["held_back", "outcome", "outcomes", "submissions", "suite", "token_counts", "with_notes", "with_usage"]
