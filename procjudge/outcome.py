"""What one record says of its outcome, read the same way by the loader and the facts: its test
counts (from the first field that has them), whether its build failed, the held-back pass rate
that stands in for a score where no local run validated anything, and so whether it can be placed
on the trajectory at all (``scoreable``)."""

from __future__ import annotations

from .model import Counts, Entry


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
                "(test_results.unavailable), a held-back suite (test_results.hidden)")


def scoreable(entry: Entry) -> bool:
    """Whether a record can be placed on the trajectory: it has a score, test counts, or a
    failed build (which scores 0). ``load_run`` refuses a run with a record that cannot."""
    telemetry = entry.iteration_telemetry
    if telemetry.score is not None and telemetry.score.post_iteration is not None:
        return True
    _, _, total = test_counts(entry)
    return bool(total) or build_failed(entry) or held_back_only(entry) is not None


def held_back_only(entry: Entry) -> float | None:
    """The held-back pass rate of a record whose own outcome is unknown (``test_results.unavailable``
    and no counts: no local test run validated anything), which is then its score; else None."""
    results = entry.iteration_telemetry.test_results
    if results is None or results.unavailable is None or results.hidden is None:
        return None
    total = results.hidden.total_or_sum
    return round(100.0 * results.hidden.passed / total, 2) if total else None
