"""What a report shows of a run beyond its verdict, read from the run as it was scored.

The HTML page shows each submission's diff, the tests it fixed and broke, its files, change
summaries, actions and build error; none of that is in the verdict. The worker that judges a run
reads it here, from the same ``Run``, and sends it beside the verdict (``Result.detail``), so a
page shows what was scored, never the file as it is on disk later, and a report never reads or
judges a run itself.
"""

from __future__ import annotations

from .facts import iteration_number
from .model import Entry, Run
from .results import DIFF_MAX_LINES, IterationDetail, RunDetail

LOG_MAX = 200  # actions of a log kept
SUMMARY_MAX = 5  # change summaries kept, each cut to SUMMARY_CHARS
SUMMARY_CHARS = 400
BUILD_CHARS = 2000


def _names(entry: Entry) -> tuple[set[str], set[str]] | None:
    """(failing, passing) test names of a submission, where it has per-test outcomes."""
    results = entry.iteration_telemetry.test_results
    tests = results.tests if results else None
    if not tests:
        return None
    failing = {t.name for t in tests if t.outcome in ("failed", "error")}
    passing = {t.name for t in tests if t.outcome == "passed"}
    return failing, passing


def _one(entry: Entry, number: int) -> IterationDetail:
    telemetry = entry.iteration_telemetry
    fields: dict[str, object] = {"number": number, "started": telemetry.timestamp_start}
    names = _names(entry)
    if names is not None:
        fields["failing"], fields["passing"] = sorted(names[0]), sorted(names[1])
    changes = telemetry.changes
    if changes is not None:
        lines = (changes.diff or "").splitlines()
        fields["diff"] = "\n".join(lines[:DIFF_MAX_LINES])
        fields["diff_lines"] = len(lines)
        fields["files"] = [f"{f.path} ({f.status}{', scratch' if f.scratch else ''})" for f in changes.files or []]
        fields["summary"] = [s[:SUMMARY_CHARS] for s in changes.summary or []][:SUMMARY_MAX]
    actions = telemetry.actions
    if actions is not None:
        counts = [("tool calls", actions.tool_calls_total), ("file reads", actions.file_reads),
                  ("file edits", actions.file_edits), ("test runs", actions.test_runs),
                  ("searches", actions.search_operations)]
        fields["actions"] = [f"{name} {value}" for name, value in counts if value is not None]
        fields["log"] = [(f"{e.at_seconds:g}s " if e.at_seconds is not None else "") + e.tool
                         + (" " + e.target if e.target else "") for e in (actions.log or [])[:LOG_MAX]]
    build = telemetry.build
    if build is not None and build.status == "failure":
        fields["build"] = "; ".join(build.errors or [])[:BUILD_CHARS] or "the build failed"
    return IterationDetail(**fields)  # type: ignore[arg-type]


def run_detail(run: Run) -> RunDetail:
    """Every submission's detail, in the run's order, numbered as the verdict numbers them."""
    return RunDetail(iterations=[_one(entry, iteration_number(entry, position))
                                 for position, entry in enumerate(run.iterations)])
