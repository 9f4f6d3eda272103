"""The commands that measure a corpus of runs or a loop in progress rather than score one run:
``review sample`` and ``review estimate`` (a stratified review queue and the defect rate from its
labels), ``drift`` (attempts and pass rate per source, window by window), ``validate`` (each
accusing rule on the user's own labels) and ``gate`` (keep or reject each revision while the loop
runs). :mod:`procjudge.cli` registers them beside the others.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .console import (
    JOBS,
    OUTPUT,
    POLICY_OPTION,
    TARGETS,
    columns,
    deliver,
    emit,
    err,
    finite,
    policy_in_force,
    usage,
    write,
    writing,
)
from .render import formats as output_formats

if TYPE_CHECKING:
    from .results import Row

review_app = typer.Typer(help="Draw a stratified review sample of runs, and estimate the defect rate from its labels.",
                         short_help="Sample runs for review; estimate the defect rate from labels.",
                         no_args_is_help=True, rich_markup_mode=None)

DriftFormat = Enum("DriftFormat", {name: name for name in output_formats.names("drift")}, type=str)  # type: ignore[misc]


def _rows(targets: list[str], active_policy: Path | None, jobs: int, quiet: bool = False) -> tuple[list[Row], list[str]]:
    """Score the runs under targets (batch's discovery and workers); unreadable files are listed
    on stderr (counted in one line with ``quiet``) and make the exit code 2 at the end, as in batch."""
    from .batch import score_rows
    from .console import find_runs, no_runs

    active = policy_in_force(active_policy)
    paths = find_runs(targets)
    if not paths:
        err(no_runs(targets))
        raise typer.Exit(2)
    rows, errors = score_rows(paths, active, jobs=jobs or os.cpu_count() or 1)
    for error in errors if not quiet else ():
        err(f"procjudge: {error}")
    if quiet and errors:
        err(f"procjudge: {len(errors):,} unreadable file(s)")
    return rows, errors


@review_app.command("sample")
def review_sample(
    targets: list[str] = TARGETS,
    out: Path = typer.Option(..., "--out", "-o", metavar="QUEUE",
                             help="Write QUEUE.csv and QUEUE.json (the suffix, if given, is replaced)."),
    per_stratum: int = typer.Option(40, "--per-stratum", min=1, max=100_000, help="Runs to draw from each stratum."),
    by: str = typer.Option("bucket", "--by", help="Strata: bucket (attempt buckets 1, 2, 3, 4-6, 7+) or finding."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw: the same runs and seed give the same queue."),
    jobs: int = JOBS,
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Draw a review queue: equal numbers of runs per attempt bucket (or per finding), each with its
    sampling weight, so every stratum gets enough reviews to estimate its defect rate.

    Example: procjudge review sample runs/ --per-stratum 40 --seed 7 --out queue
    """
    from .render.json import dumps
    from .render.review import queue_csv, queue_note
    from .review import draw, queue_stem
    from .safe_io import check_target

    if by not in ("bucket", "finding"):
        usage(f"--by: expected bucket or finding, got {by!r}")
    rows, errors = _rows(targets, policy, jobs)
    queue, stem = draw(rows, per_stratum, seed, by), queue_stem(str(out))
    for target in (stem + ".csv", stem + ".json"):
        problem = check_target(target, [r.path for r in rows], "--out")
        if problem:
            usage(problem)
    with writing(Path(stem + ".json")) as handle:
        handle.write(dumps(queue))
    with writing(Path(stem + ".csv"), newline="") as handle:
        handle.write(queue_csv(queue))
    sys.stdout.write(queue_note(queue, stem))
    raise typer.Exit(2 if errors else 0)


@review_app.command("estimate")
def review_estimate(
    queue_file: Path = typer.Argument(..., metavar="QUEUE.json", help="The queue `review sample` wrote."),
    labels_file: Path = typer.Argument(..., metavar="LABELS.csv", help="A CSV with columns path and label (defect or ok)."),
    format: str = typer.Option("table", "--format", "-f", help=", ".join(output_formats.names("estimate")) + "."),
) -> None:
    """Estimate the defect rate from reviewers' labels: per stratum with a Wilson 95% interval, and
    overall reweighted by each stratum's share of the runs (with the unweighted mean of stratum
    rates beside it, the mistake to avoid).

    Example: procjudge review estimate queue.json queue.csv
    """
    from .locate import read_regular
    from .review import estimate, read_labels, read_queue

    try:
        data = read_regular(str(queue_file), 256 * 2**20)
        text = read_regular(str(labels_file), 256 * 2**20).decode("utf-8-sig")
    except (OSError, ValueError, OverflowError) as exc:
        usage(f"cannot read the queue or the labels: {exc}")
    try:
        queue = read_queue(data)
    except ValueError as exc:
        usage(f"{queue_file}: not a review queue written by `procjudge review sample`{exc}")
    try:
        labels, problems = read_labels(text, str(labels_file))
    except ValueError as exc:
        usage(str(exc))
    for problem in problems:
        err(f"procjudge: {problem}")
    if format not in output_formats.names("estimate"):
        usage(f"--format: expected {', '.join(output_formats.names('estimate'))}, got {format!r}")
    write(output_formats.render("estimate", format, estimate(queue, labels)))
    raise typer.Exit(2 if problems else 0)


def drift(
    targets: list[str] = TARGETS,
    window: str = typer.Option("day", "--window", help="day or week (ISO week)."),
    threshold: float | None = typer.Option(None, "--threshold", callback=finite("--threshold"),
                                           help="Alert when a source's mean attempts rise above its baseline by more than "
                                                "this [default: drift.threshold, 0.5]."),
    collapse: float | None = typer.Option(None, "--collapse", callback=finite("--collapse"),
                                          help="Alert when one test becomes this share of a source's first failures "
                                               "[default: drift.collapse, 0.6]."),
    baseline: int | None = typer.Option(None, "--baseline", min=1, max=1000, metavar="WINDOWS",
                                        help="The baseline: the mean of up to this many windows before each one "
                                             "[default: drift.baseline_windows, 3]."),
    format: DriftFormat = typer.Option(DriftFormat["table"], "--format", "-f", help="table, json or markdown."),
    output: str | None = OUTPUT,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the alerts (table format); no per-file errors on stderr."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even on an alert (unreadable input still exits 2)."),
    jobs: int = JOBS,
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Mean attempts, pass rate, findings and the first failing test per source (run.source) and
    window (run.started_at): attempts move before the pass rate does. Each window is compared with
    the source's baseline (the windows before it), so a sustained shift alerts whatever the window.
    A source is segmented by run.doc_type and run.verifier_version where runs carry them
    (drift.segment_by). Exit 1 on an alert (0 with --exit-zero).

    Example: procjudge drift runs/ --window day --threshold 0.5
    """
    from .drift import drift as compute

    if window not in ("day", "week"):
        usage(f"--window: expected day or week, got {window!r}")
    rows, errors = _rows(targets, policy, jobs, quiet)
    rule = policy_in_force(policy).drift
    result = compute(rows, window, threshold if threshold is not None else rule.threshold,
                     collapse if collapse is not None else rule.collapse, baseline or rule.baseline_windows,
                     rule.segment_by)
    if quiet and format.value == "table":
        from .render.drift import alerts

        deliver(alerts(result, columns(120, 72)), output, [*targets])
    else:
        deliver(output_formats.render("drift", format.value, result, width=columns(120, 72)), output, [*targets])
    raise typer.Exit(2 if errors else (1 if result.alerts and not exit_zero else 0))


class ValidateFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


def validate(
    targets: list[str] = TARGETS,
    labels: Path = typer.Option(..., "--labels", metavar="LABELS.csv", exists=True, dir_okay=False,
                                help="CSV of labels: a run column (its id or file name), label (cheat or honest, also "
                                     "1/0, yes/no) and an optional rule column (an accusing rule, or any other rule "
                                     "labelled yes or no on that run)."),
    format: ValidateFormat = typer.Option(ValidateFormat.table, "--format", "-f", help="table, json, csv or markdown."),
    output: str | None = OUTPUT,
    fail_under_precision: float | None = typer.Option(
        None, "--fail-under-precision", metavar="P", min=0.0, max=1.0,
        help="Exit 1 when a rule's precision (or any accusation's) is below P."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap interval of the AUROC."),
    jobs: int = JOBS,
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Each accusing rule's precision, recall and F1 on your own labelled runs, and the AUROC of the
    process score (a low score predicting "cheat") with a bootstrap interval; the missed cheats and
    the false accusations by run. Labels that name no run, and runs with no label, are counted.

    A row whose rule column names any other rule (regression_blindness, wasted_iteration, a reward)
    labels that rule alone on that run, yes or no: is its shape there? That rule's precision and
    recall are measured on its rows, with the runs it missed and those it fired on wrongly.

    Example: procjudge validate --labels labels.csv runs/ --fail-under-precision 0.9
    """
    from .detectors import ALL
    from .judge import ACCUSING
    from .validate import LabelError, as_csv, as_json, as_markdown, as_table, below, read_labels
    from .validate import validate as measure

    rules = sorted(ACCUSING)
    try:
        read = read_labels(str(labels), rules, [det.id for det in ALL])
    except LabelError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None
    rows, errors = _rows(targets, policy, jobs)
    result = measure(read, rows, rules, seed)
    render = {"table": as_table, "json": as_json, "csv": as_csv, "markdown": as_markdown}[format.value]
    deliver(render(result), output, [*targets, str(labels)])
    failing = below(result, fail_under_precision) if fail_under_precision is not None else []
    for reason in failing:
        err(f"procjudge: precision below {fail_under_precision:g}: {reason}")
    raise typer.Exit(2 if errors else 1 if failing else 0)


def _stdin_lines() -> Iterator[str]:
    """Standard input a line at a time, as it arrives (a harness waits for each answer); the end
    of input, however the stream signals it, ends the lines."""
    while True:
        try:
            line = sys.stdin.readline()
        except EOFError:
            return
        if not line:
            return
        yield line


class GateFormat(str, Enum):
    text = "text"
    json = "json"


def gate(
    format: GateFormat = typer.Option(GateFormat.text, "--format", "-f", help="text, or json (one object a line)."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Decide, while the loop runs, whether to keep each revision: seed 003's regression gate.

    Reads one submission a line on standard input, {"tests": {"test_a": true, ...}, "score": SOFT}
    (soft score on 0..1; optional "samples": [repeated scores] and "build": "failure"), and answers
    each at once: its round, accepted or rejected, the clause and check that decided, the round to
    return, and whether to stop (the incumbent passes every check with gate.done_soft, or
    gate.stop_after_rejections rejections in a row). The same rule as the replay of a finished run.
    Exit 2 when a line was not a submission (it is answered with the error, and the rounds go on).

    Example: my-harness | procjudge gate --format json
    """
    from .gate import answers

    active = policy_in_force(policy)
    bad = False
    for line, ok in answers(_stdin_lines(), active, format.value == "json"):
        bad = bad or not ok
        emit([line + "\n"])  # flushed at once: the harness waits for it
    raise typer.Exit(2 if bad else 0)
