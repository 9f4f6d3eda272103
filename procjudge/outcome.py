"""What one record says of its outcome, read the same way by the loader and the facts: its test
counts (from the first field that has them), whether its build failed, the held-back pass rate
that stands in for a score where no local run validated anything, and so whether it can be placed
on the trajectory at all (``scoreable``)."""

from __future__ import annotations

import operator

import msgspec

from .model import Counts, Entry, HiddenSuite, Run


def build_failed(entry: Entry) -> bool:
    telemetry_build = entry.iteration_telemetry.build
    if telemetry_build is not None:
        return telemetry_build.status == "failure"
    feedback = entry.iteration_feedback
    return bool(feedback and feedback.build and feedback.build.status == "failure")


def post_counts(entry: Entry) -> Counts | None:
    results = entry.iteration_telemetry.test_results
    if results is not None and results.post_iteration is not None:
        return results.post_iteration
    feedback = entry.iteration_feedback
    if feedback is not None and feedback.tests is not None and feedback.tests.passed is not None:
        tests = feedback.tests
        return Counts(passed=tests.passed or 0, failed=tests.failed, total=tests.total, skipped=tests.skipped)
    if results is not None and results.tests:
        passed = sum(1 for t in results.tests if t.outcome == "passed")
        failed = sum(1 for t in results.tests if t.outcome in ("failed", "error"))
        return Counts(passed=passed, failed=failed, total=passed + failed)
    return None


def test_counts(entry: Entry) -> tuple[int | None, int | None, int | None]:
    """(passed, failed, total) after a submission, from the first record that has them."""
    counts = post_counts(entry)
    if counts is None:
        return None, None, None
    total = counts.total_or_sum
    failed = counts.failed if counts.failed is not None else total - counts.passed
    return counts.passed, failed, total


SCORE_NEEDED = ("needs score.post_iteration or test counts (test_results.post_iteration, "
                "iteration_feedback.tests) to be scored, or, where no local run validated anything "
                "(test_results.unavailable), a held-back suite (test_results.hidden) or a run judged from the "
                "agent's own checks (run.iterations_are: local_runs), where it scores 0")


def scoreable(entry: Entry, local: bool = False) -> bool:
    """Whether a record can be placed on the trajectory: it has a score, test counts, or a
    failed build (which scores 0), or, no check having validated anything
    (``test_results.unavailable``), a held-back suite or a place in the agent's own runs
    (``local``: it scores 0, nothing validated). ``load_run`` refuses a run with a record that
    cannot."""
    telemetry = entry.iteration_telemetry
    if telemetry.score is not None and telemetry.score.post_iteration is not None:
        return True
    _, _, total = test_counts(entry)
    if bool(total) or build_failed(entry) or held_back_only(entry) is not None:
        return True
    return local and telemetry.test_results is not None and telemetry.test_results.unavailable is not None


def held_back_only(entry: Entry) -> float | None:
    """The held-back pass rate of a record whose own outcome is unknown (``test_results.unavailable``
    and no counts: no local test run validated anything), which is then its score; else None."""
    results = entry.iteration_telemetry.test_results
    if results is None or results.unavailable is None or results.hidden is None:
        return None
    total = results.hidden.total_or_sum
    return round(100.0 * results.hidden.passed / total, 2) if total else None


def hold_back_categories(run: Run, categories: frozenset[str]) -> Run:
    """The run with every per-test outcome whose category is a held-back one (the policy's
    ``test_chasing.hidden_categories``: an adversarial suite reported beside the visible tests)
    moved out of ``test_results.tests`` into a held-back suite named after the categories, added
    to ``test_results.hidden``. The visible counts and test names then leave those tests out, and
    the held-back rules (``hidden_suite_gap``, the tier, ``rapid_convergence``) read them. A record
    whose tests all carry such a category, with no other count or score, keeps them: nothing else
    could score it."""
    if not categories:
        return run
    entries = [_hold_back(entry, categories) for entry in run.iterations]
    if all(map(operator.is_, entries, run.iterations)):  # none moved (one entry each): the run itself
        return run
    return msgspec.structs.replace(run, iterations=entries)


_CATEGORY = operator.attrgetter("category")


def _hold_back(entry: Entry, categories: frozenset[str]) -> Entry:
    telemetry = entry.iteration_telemetry
    results = telemetry.test_results
    if results is None or not results.tests or categories.isdisjoint(map(_CATEGORY, results.tests)):
        return entry
    visible = [t for t in results.tests if t.category not in categories]
    held = [t for t in results.tests if t.category in categories]
    counted_elsewhere = results.post_iteration is not None or (telemetry.score is not None and
                                                               telemetry.score.post_iteration is not None)
    if not visible and not counted_elsewhere:
        return entry
    passed = sum(1 for t in held if t.outcome == "passed")
    failed = sum(1 for t in held if t.outcome in ("failed", "error"))
    before = results.hidden or Counts(passed=0, failed=0, total=0)
    hidden = Counts(passed=before.passed + passed, failed=(before.failed or 0) + failed,
                    total=before.total_or_sum + passed + failed)
    name = "categories: " + ", ".join(sorted({t.category for t in held if t.category}))
    suite = HiddenSuite(name=name, passed=passed, failed=failed, total=passed + failed,
                        tests=held)
    results = msgspec.structs.replace(results, tests=visible or None, hidden=hidden,
                                      hidden_suites=[*(results.hidden_suites or ()), suite])
    return msgspec.structs.replace(entry, iteration_telemetry=msgspec.structs.replace(telemetry, test_results=results))
