"""The command line: each command parses its options, calls one library function, hands the typed
result to the format registry, and exits.

Exit codes: 0 every run read and scored and no threshold failed; 1 a threshold failed; 2 bad
usage, or an input that could not be read or validated.

What the commands share (writing, the configuration and policy in force, shared options, leaving
cleanly on a signal) is ``console``'s; ``procjudge import`` is ``importers.commands``'. Imports stay
lazy: ``procjudge score`` must not pay for pandas (batch, compare) or for what another command needs.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import msgspec
import typer

from .config import MAX_JOBS
from .console import (
    EXIT_ZERO_HELP,
    POLICY_OPTION,
    QUIET_HELP,
    SETTINGS,
    Interrupted,
    checked_stdout,
    columns,
    configuration,
    deliver,
    emit,
    err,
    finite,
    flush_and_exit,
    format_of,
    interrupted,
    load_or_exit,
    patterns,
    policy_in_force,
    silence_stdout,
    terminate,
    write,
    writing,
)
from .importers.commands import import_app
from .render import formats as output_formats

if TYPE_CHECKING:
    from .results import Row

app = typer.Typer(
    name="procjudge",
    help=(
        "Judge how a coding agent iterates: score a run's trajectory, detect anti-patterns "
        "(shotgun debugging, test-chasing, scope creep, regression blindness, copy-paste loops), "
        "reward good practice, and explain every point.\n\n"
        "Exit codes: 0 scored and every gate passed; 1 a gate failed; 2 bad usage or unreadable input."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
policy_app = typer.Typer(help="Show the scoring policy in force.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(policy_app, name="policy")
app.add_typer(import_app, name="import")
review_app = typer.Typer(help="Draw a stratified review sample of runs, and estimate the defect rate from its labels.",
                         short_help="Sample runs for review; estimate the defect rate from labels.",
                         no_args_is_help=True, rich_markup_mode=None)
app.add_typer(review_app, name="review")

# --format choices come from the format registry: the formats each command serves.
ScoreFormat = Enum("ScoreFormat", {name: name for name in output_formats.names("score")}, type=str)  # type: ignore[misc]
BatchFormat = Enum("BatchFormat", {name: name for name in output_formats.names("batch")}, type=str)  # type: ignore[misc]
CompareFormat = Enum("CompareFormat", {name: name for name in output_formats.names("compare")}, type=str)  # type: ignore[misc]
DriftFormat = Enum("DriftFormat", {name: name for name in output_formats.names("drift")}, type=str)  # type: ignore[misc]
COMPLETE_VAR = "_PROCJUDGE_COMPLETE"

# The options, declared once; a command's signature lists them one a line.
TARGETS = typer.Argument(..., metavar="DIR|GLOB...", help="Folders, files or globs of run files.")
OUTPUT = typer.Option(None, "--output", "-o", metavar="FILE",
                      help="Write the report to FILE (written whole or not at all; - is standard output).")
EXIT_ZERO = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP)
JOBS = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS, help="Worker processes (0: the machine's cores).")
SCORE_FORMAT = typer.Option(None, "--format", "-f", help=output_formats.help_text("score") + " [default: table]")
SCORE_FAIL_UNDER = typer.Option(None, "--fail-under", metavar="N", callback=finite("--fail-under"),
                                help="Gate: exit 1 when the run's process score is below N.")
SCORE_QUIET = typer.Option(False, "--quiet", "-q", help="Only the verdict's headline and totals; no warnings on stderr.")
BATCH_TARGETS = typer.Argument(..., metavar="DIR|GLOB...", help="Folders (searched recursively), files or globs of run files.")
BATCH_FORMAT = typer.Option(None, "--format", "-f", help=output_formats.help_text("batch") + " [default: table]")
BATCH_OUTPUT = typer.Option(
    None, "--output", "-o", metavar="[FORMAT=]FILE",
    help="Write the report to FILE instead of stdout (never one of the inputs; - is stdout). Repeatable with a "
         "format each, to write several reports from one scoring pass: -o junit=out.xml -o markdown=summary.md.")
FAIL_UNDER = typer.Option(None, "--fail-under", metavar="N", callback=finite("--fail-under"),
                          help="Gate, per run: fail (exit 1) when any run's process score is below N.")
FAIL_UNDER_MEAN = typer.Option(None, "--fail-under-mean", metavar="N", callback=finite("--fail-under-mean"),
                               help="Gate, over the batch: fail (exit 1) when the mean process score of all runs is "
                                    "below N (coverage's --fail-under reads a total like this).")
FAIL_ON = typer.Option(None, "--fail-on", metavar="FINDING[,...]",
                       help="Gate, per run: fail (exit 1) when any run has one of these findings, e.g. "
                            "test_chasing,regression_blindness; repeatable, every one given counts.")
QUIET = typer.Option(False, "--quiet", "-q", help=QUIET_HELP)
STRICT = typer.Option(None, "--strict/--no-strict",
                      help="Refuse a run with any warning about its input (an unknown key, an implausible value): exit 2, "
                           "as for an unreadable file [default: strict in the configuration, else off].")
EXCLUDE = typer.Option(None, "--exclude", metavar="PATTERN", callback=patterns("--exclude"),
                       help="Skip files and folders matching PATTERN (gitignore syntax, relative to each folder given); "
                            "repeatable; adds to the configuration's.")
INCLUDE = typer.Option(None, "--include", metavar="PATTERN", callback=patterns("--include"),
                       help="Read only files matching PATTERN (gitignore syntax); repeatable.")
GITIGNORE = typer.Option(None, "--respect-gitignore/--no-respect-gitignore",
                         help="Skip what .gitignore files ignore [default: respect them].")
LIST_FILES = typer.Option(False, "--list-files", help="Print the run files that would be read, one per line, and exit.")
BATCH_JOBS = typer.Option(None, "--jobs", "-j", min=0, max=MAX_JOBS,
                          help=f"Worker processes, 0 to {MAX_JOBS} (default 0: the machine's cores).")
ENGINE = typer.Option("local", "--engine", metavar="local|dask",
                      help="Where runs are scored: local worker processes, or a Dask cluster (pip install "
                           "'procjudge[dask]'): the one at --scheduler, else a local one of --jobs workers.")
SCHEDULER = typer.Option(None, "--scheduler", metavar="ADDRESS",
                         help="With --engine dask: the scheduler to use, e.g. tcp://10.0.0.5:8786.")
COMPARE_FORMAT = typer.Option(None, "--format", "-f", help=output_formats.help_text("compare") + " [default: table]")
FAIL_IF_WORSE = typer.Option(None, "--fail-if-worse", metavar="MARGIN", callback=finite("--fail-if-worse"),
                             help="Gate: exit 1 when B's (mean) process score is below A's by more than MARGIN.")
PLOT = typer.Option(None, "--plot", metavar="FILE",
                    help="Also draw the comparison to FILE (.png or .svg; needs procjudge[plot]).")
SEED = typer.Option(0, "--seed", help="Seed of the bootstrap interval (folders), for reproducible output.")
COMPARE_JOBS = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS,
                            help=f"Worker processes for folders, 0 to {MAX_JOBS} (default 0: the machine's cores).")


def _show_version(value: bool) -> None:
    if value:
        from . import __version__

        write(f"procjudge {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_show_version,
                                 help="Print the version and exit."),
    config: Path | None = typer.Option(None, "--config", metavar="FILE",
                                       help="Read options from FILE (a procjudge.toml, or a pyproject.toml with "
                                            "[tool.procjudge]) instead of the one found from the working folder upward."),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore every configuration file."),
) -> None:
    """Options that come before the command: procjudge --config ci.toml batch runs/"""
    SETTINGS.update(config=config, isolated=isolated, loaded=None)


def _usage(message: str) -> NoReturn:
    err(f"procjudge: {message}")
    raise typer.Exit(2)


@app.command(short_help="Score one run: every item with its points, tier and findings.")
def score(
    run_file: str = typer.Argument(..., metavar="RUN.yaml", help="A run file (.yaml, .yml or .json), or - for standard input."),
    format: ScoreFormat | None = SCORE_FORMAT,
    output: str | None = OUTPUT,
    policy: Path | None = POLICY_OPTION,
    fail_under: float | None = SCORE_FAIL_UNDER,
    exit_zero: bool = EXIT_ZERO,
    quiet: bool = SCORE_QUIET,
    strict: bool | None = STRICT,
) -> None:
    """Score one run: every item with its points, iterations and evidence; totals, pattern, tier.

    Exit codes: 0 scored (and the gate passed); 1 the process score is below --fail-under;
    2 the run file (or the policy or configuration) could not be read.

    Example: procjudge score sample_telemetry/example1_good_standard.yaml
    """
    from .judge import judge

    run = load_or_exit(run_file)
    verdict = judge(run, policy_in_force(policy))
    if (strict if strict is not None else configuration().strict) and verdict.input_warnings:
        for warning in verdict.warnings[:verdict.input_warnings]:
            err(f"procjudge: {run_file}: --strict: {warning}")
        raise typer.Exit(2)
    for warning in [] if quiet else verdict.warnings:
        err(f"procjudge: warning: {run_file}: {warning}")
    fmt = format_of(format, "score")
    if quiet and fmt == "table":
        from .render.table import summary

        deliver(summary(verdict), output, [run_file])
    else:
        from .detail import run_detail

        detail = run_detail(run) if output_formats.shows_detail(fmt) else None
        deliver(output_formats.render("score", fmt, verdict, detail=detail), output, [run_file])
    gate = fail_under if fail_under is not None else configuration().fail_under
    if gate is not None and verdict.process_score < gate:
        name = "--fail-under" if fail_under is not None else configuration().where("fail_under")
        err(f"procjudge: process score {verdict.process_score:g} is below {name} {gate:g}")
        if not exit_zero:
            raise typer.Exit(1)


@app.command(short_help="Score every run under folders and globs; report and gate.")
def batch(
    targets: list[str] = BATCH_TARGETS,
    format: BatchFormat | None = BATCH_FORMAT,
    output: list[str] | None = BATCH_OUTPUT,
    fail_under: float | None = FAIL_UNDER,
    fail_under_mean: float | None = FAIL_UNDER_MEAN,
    fail_on: list[str] | None = FAIL_ON,
    exit_zero: bool = EXIT_ZERO,
    quiet: bool = QUIET,
    exclude: list[str] | None = EXCLUDE,
    include: list[str] | None = INCLUDE,
    respect_gitignore: bool | None = GITIGNORE,
    list_files: bool = LIST_FILES,
    jobs: int | None = BATCH_JOBS,
    engine: str = ENGINE,
    scheduler: str | None = SCHEDULER,
    strict: bool | None = STRICT,
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Score every run file under folders and globs, in a deterministic order, and gate on the result.

    Folders are searched like ruff searches them: .gitignore respected; hidden folders, virtual
    environments, node_modules and files that are never runs (package.json, lock files, CI
    configurations) skipped; the reports being written are never read back. --list-files shows
    what would be read.

    Two kinds of gate: --fail-under and --fail-on judge each run (one bad run fails the batch);
    --fail-under-mean judges the batch's mean process score.

    Exit codes: 0 all scored and gates passed; 1 a gate failed; 2 a file could not be read or
    validated (each is listed on stderr; every other file is still scored and reported).

    - reads the targets from standard input, one per line (find runs -name '*.yaml' | procjudge
    batch -), or JSON lines of runs (cat runs.jsonl | procjudge batch -).

    Example: procjudge batch runs/ --format junit --output procjudge.xml --fail-under -10
    """
    from contextlib import ExitStack

    from .console import batch_inputs, finish_batch, run_batch, stdin_targets

    config = configuration()
    with ExitStack() as spool:
        targets = stdin_targets(targets, spool)
        outputs, paths, gates = batch_inputs(targets, format, output or [], config, fail_on=fail_on, exclude=exclude,
                                             include=include, respect_gitignore=respect_gitignore, fail_under=fail_under,
                                             fail_under_mean=fail_under_mean)
        if strict if strict is not None else config.strict:
            gates = msgspec.structs.replace(gates, strict=True)
        if list_files:
            write("".join(f"{path}\n" for path in paths))
            raise typer.Exit(0)
        report = run_batch(targets, paths, outputs, gates, policy_in_force(policy), quiet=quiet, engine=engine,
                           scheduler=scheduler, jobs=jobs if jobs is not None else (config.jobs or 0))
        code = finish_batch(report, outputs, quiet, gates)
    raise typer.Exit(0 if exit_zero and code == 1 else code)


@app.command(short_help="Two runs, or two agents' folders of runs, side by side.")
def compare(
    a: str = typer.Argument(..., metavar="A", help="A run file, or a folder of one agent's runs."),
    b: str = typer.Argument(..., metavar="B", help="A run file, or a folder of the other agent's runs (same kind as A)."),
    format: CompareFormat | None = COMPARE_FORMAT,
    output: str | None = OUTPUT,
    exit_zero: bool = EXIT_ZERO,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the verdict line (table format); no warnings on stderr."),
    fail_if_worse: float | None = FAIL_IF_WORSE,
    plot: Path | None = PLOT,
    seed: int = SEED,
    jobs: int = COMPARE_JOBS,
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Put two runs, or two agents' folders of runs, side by side: who iterates better, where, and how sure.

    Two files: every item with A's points, B's points and the difference, both trajectories drawn
    together, and the winner with the items that decided it. Two folders: runs paired by
    run.challenge (else by file name), per-agent aggregates, paired wins/losses/ties and the mean
    paired difference with a seeded 95% bootstrap interval; unmatched runs are listed.

    Example: procjudge compare runs/agent-a runs/agent-b --fail-if-worse 2 --plot compare.png
    """
    from .compare import compare_targets, worse_by
    from .console import check_plot_target, draw_plot, find_runs
    from .render.text import warning_lines
    from .results import UsageError

    active, chosen = policy_in_force(policy), format_of(format, "compare")
    inputs = find_runs([a, b]) if os.path.isdir(a) and os.path.isdir(b) else [a, b]
    check_plot_target(plot, inputs)
    try:
        done = compare_targets(a, b, active, read=load_or_exit, find=find_runs, seed=seed,
                               jobs=jobs or os.cpu_count() or 1, detail=output_formats.shows_detail(chosen))
    except UsageError as exc:
        _usage(str(exc))
    if not quiet:
        for line in warning_lines(done.warnings, done.warning_count):
            err(line)
    if quiet and chosen == "table":
        from .render.compare import verdict_line

        deliver(verdict_line(done.result) + "\n", output, inputs)
    else:
        deliver(output_formats.render("compare", chosen, done.result, judged=done.judged), output, inputs)
    draw_plot(done.result, plot)
    for error in done.result.errors:
        err(f"procjudge: {error}")
    if done.result.errors:
        raise typer.Exit(2)
    gap = worse_by(done.result) if fail_if_worse is not None else None
    if gap is not None and fail_if_worse is not None and gap > fail_if_worse:
        err(f"procjudge: B is worse than A by {gap:g} points (> --fail-if-worse {fail_if_worse:g})")
        if not exit_zero:
            raise typer.Exit(1)


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
        _usage(f"--by: expected bucket or finding, got {by!r}")
    rows, errors = _rows(targets, policy, jobs)
    queue, stem = draw(rows, per_stratum, seed, by), queue_stem(str(out))
    for target in (stem + ".csv", stem + ".json"):
        problem = check_target(target, [r.path for r in rows], "--out")
        if problem:
            _usage(problem)
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
        _usage(f"cannot read the queue or the labels: {exc}")
    try:
        queue = read_queue(data)
    except ValueError as exc:
        _usage(f"{queue_file}: not a review queue written by `procjudge review sample`{exc}")
    try:
        labels, problems = read_labels(text, str(labels_file))
    except ValueError as exc:
        _usage(str(exc))
    for problem in problems:
        err(f"procjudge: {problem}")
    if format not in output_formats.names("estimate"):
        _usage(f"--format: expected {', '.join(output_formats.names('estimate'))}, got {format!r}")
    write(output_formats.render("estimate", format, estimate(queue, labels)))
    raise typer.Exit(2 if problems else 0)


@app.command(short_help="Attempts, pass rate and findings per source, window by window.")
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
        _usage(f"--window: expected day or week, got {window!r}")
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


@app.command(short_help="Each accusing rule's precision, recall and F1 on your labels.")
def validate(
    targets: list[str] = TARGETS,
    labels: Path = typer.Option(..., "--labels", metavar="LABELS.csv", exists=True, dir_okay=False,
                                help="CSV of labels: a run column (its id or file name), label (cheat or honest, also "
                                     "1/0, yes/no) and an optional rule column."),
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

    Example: procjudge validate --labels labels.csv runs/ --fail-under-precision 0.9
    """
    from .judge import ACCUSING
    from .validate import LabelError, as_csv, as_json, as_markdown, as_table, below, read_labels
    from .validate import validate as measure

    rules = sorted(ACCUSING)
    try:
        read = read_labels(str(labels), rules)
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


@app.command(short_help="Keep or reject each revision while the loop runs.")
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


@policy_app.command("show")
def policy_show(
    policy: Path | None = POLICY_OPTION,
    show_sources: bool = typer.Option(False, "--sources", help="Also say where each value comes from: the default, "
                                                               "the configuration file, or the --policy file."),
) -> None:
    """Print the scoring policy in force, as YAML: the defaults, with the configuration's
    [tool.procjudge.policy] table and then a --policy file merged over them.

    Example: procjudge policy show --sources --policy strict.yaml
    """
    from .policy import PolicyError, policy_yaml, sources_listing

    active, config = policy_in_force(policy), configuration()
    if not show_sources:
        write(policy_yaml(active))
        return
    try:
        write(sources_listing(active, str(policy) if policy is not None else None, config.policy, config.path))
    except PolicyError as exc:
        _usage(f"policy error: {exc}")


def _explain_names(incomplete: str) -> list[str]:
    from .catalogue import names

    return [name for name in names() if name.startswith(incomplete)]


@app.command(short_help="What a rule detects, its points and range, with an example.")
def explain(
    rule_id: str | None = typer.Argument(None, metavar="RULE", autocompletion=_explain_names,
                                         help="A rule id, as in a verdict's items (e.g. test_chasing), or a tier or "
                                              "pattern a verdict names (e.g. persistent_thrashing)."),
    list_all: bool = typer.Option(False, "--list", help="List every rule, tier and pattern with its kind and points."),
    as_json: bool = typer.Option(False, "--json", help="The catalogue entry (and example) as JSON."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Explain a rule: what it detects, its points and range under the policy in force, the
    evidence it reads, the section of the rulebook it comes from, and an example scored now. Tiers
    and patterns (what a verdict calls the run) are explained too.

    Example: procjudge explain test_chasing        procjudge explain persistent_thrashing
    """
    from .catalogue import catalogue, placements
    from .catalogue import explain as explanation

    active, fmt = policy_in_force(policy), "json" if as_json else "table"
    if list_all:
        write(output_formats.render("rules", fmt, catalogue(active) + placements(active), width=columns(120, 40, 120)))
        return
    if rule_id is None:
        _usage("explain: name a rule, or --list to see them all")
    try:
        shown = explanation(rule_id, active)
    except ValueError as exc:
        _usage(f"explain: {exc}")
    write(output_formats.render("explain", fmt, shown, width=columns(96, 40, 96)))


@app.command()
def completion(
    shell: str = typer.Argument(..., metavar="SHELL", help="bash, zsh, fish or powershell."),
) -> None:
    """Print the shell completion script for SHELL.

    \b
    Examples, one line each:
      procjudge completion bash > ~/.local/share/bash-completion/completions/procjudge
      procjudge completion zsh > "${fpath[1]}/_procjudge"
      procjudge completion fish > ~/.config/fish/completions/procjudge.fish
    """
    from typer.completion import get_completion_script  # type: ignore[attr-defined]  # public, re-exported

    shells = ("bash", "zsh", "fish", "powershell")
    if shell not in shells:
        _usage(f"completion: unknown shell {shell!r}; one of {', '.join(shells)}")
    write(get_completion_script(prog_name="procjudge", complete_var=COMPLETE_VAR, shell=shell).rstrip("\n") + "\n")


@app.command(short_help="Print the JSON Schema of a run file, for editors and CI.")
def schema(
    lenient: bool = typer.Option(False, "--lenient", help="Allow keys the contract does not know (the loader keeps "
                                                          "them with a warning); by default they are errors, so "
                                                          "that an editor flags a typo."),
) -> None:
    """Print the JSON Schema of a run file, for editors (yaml-language-server, VS Code) and CI.

    It checks types, ranges, enums, the shapes a run file may take and that every iteration can
    be scored.

    Example: procjudge schema > procjudge-run.schema.json
    """
    from .schema import run_schema

    write(run_schema(lenient))


def run() -> NoReturn:
    """The ``procjudge`` command: ``main()``, then leave at once. Once the reports are written
    there is nothing left to do, so a Ctrl-C arriving during the interpreter's own shutdown (which
    joins pool threads) can neither hang the exit nor print a traceback."""
    import signal

    code = main()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, signal.SIG_IGN)
    flush_and_exit(code)


GLOBALS = ("--isolated", "--config")


def hoist_globals(argv: list[str]) -> list[str]:
    """The arguments with the global options (``--isolated``, ``--config FILE``) given after the
    command moved before it, as they must be read: ``procjudge batch runs/ --isolated`` works as
    ``procjudge --isolated batch runs/``. Nothing after a ``--`` is moved."""
    front: list[str] = []
    rest: list[str] = []
    seen_command = False
    k = 0
    while k < len(argv):
        token = argv[k]
        if token == "--":
            rest += argv[k:]
            break
        if not seen_command:
            if token == "--config" and k + 1 < len(argv):
                front += argv[k:k + 2]
                k += 2
                continue
            seen_command = not token.startswith("-")
            (rest if seen_command else front).append(token)
        elif token == "--isolated" or token.startswith("--config="):
            front.append(token)
        elif token == "--config" and k + 1 < len(argv):
            front += argv[k:k + 2]
            k += 1
        else:
            rest.append(token)
        k += 1
    return front + rest


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code.  No Python traceback ever reaches the user; Ctrl-C
    exits 130 and SIGTERM 143, each within a moment and without leaving a half-written report."""
    import signal

    with contextlib.suppress(ValueError):  # not the main thread (embedded use): keep the default
        signal.signal(signal.SIGTERM, terminate)
    if COMPLETE_VAR in os.environ:  # the shell asks for completions (see `procjudge completion`)
        from typer.completion import completion_init  # type: ignore[attr-defined]  # public, re-exported

        completion_init()
    with checked_stdout():
        code = _main(hoist_globals(sys.argv[1:] if argv is None else argv))
        return _flushed(code)


def _flushed(code: int) -> int:
    """The exit code once standard output is flushed: a report the output did not take in full
    (a full disk) is exit 2, never 0 with half a report."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        err(f"procjudge: cannot write to standard output: {exc.strerror or exc}; the report is incomplete")
        return 2
    return code


def _main(args: list[str]) -> int:
    try:
        code = app(args=args, prog_name="procjudge", standalone_mode=False)
        if code == 130:  # typer's answer to Ctrl-C, returned rather than raised
            err("procjudge: interrupted")
        return code if isinstance(code, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # click's own exits; typer turns Ctrl-C into exit 130
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
        if code == 130:
            err("procjudge: interrupted")
        return code
    except KeyboardInterrupt:
        interrupted("procjudge: interrupted", 130)
    except Interrupted as exc:
        interrupted("procjudge: terminated", 128 + exc.signum)
    except BrokenPipeError:
        silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        return _unexpected(exc)


def _unexpected(exc: Exception) -> int:
    """A click usage error shown as click shows it; an abort; anything else one line, never a traceback."""
    # click's usage errors (typer may vendor click, so match the protocol, not the class)
    show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
    if callable(show) and isinstance(code, int):
        show()
        return code
    if type(exc).__name__ == "Abort":
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            interrupted("procjudge: interrupted", 130)
        err("procjudge: aborted")
        return 2
    err(f"procjudge: internal error: {type(exc).__name__}: {exc}")
    return 2
