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
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import msgspec
import typer

from .config import MAX_JOBS
from .console import (
    EXIT_ZERO_HELP,
    OUTPUT,
    POLICY_OPTION,
    QUIET_HELP,
    SETTINGS,
    Interrupted,
    checked_stdout,
    columns,
    configuration,
    deliver,
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
    usage,
    write,
)
from .corpus_commands import drift, gate, review_app, validate
from .importers.commands import import_app
from .render import formats as output_formats

if TYPE_CHECKING:
    from .compare import Compared

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
app.add_typer(review_app, name="review")

# --format choices come from the format registry: the formats each command serves.
ScoreFormat = Enum("ScoreFormat", {name: name for name in output_formats.names("score")}, type=str)  # type: ignore[misc]
BatchFormat = Enum("BatchFormat", {name: name for name in output_formats.names("batch")}, type=str)  # type: ignore[misc]
CompareFormat = Enum("CompareFormat", {name: name for name in output_formats.names("compare")}, type=str)  # type: ignore[misc]
COMPLETE_VAR = "_PROCJUDGE_COMPLETE"

# The options, declared once; a command's signature lists them one a line.
EXIT_ZERO = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP)
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
    selection = {"fail_on": fail_on, "exclude": exclude, "include": include, "respect_gitignore": respect_gitignore,
                 "fail_under": fail_under, "fail_under_mean": fail_under_mean}
    code = _batch(targets, format, output or [], selection, strict, list_files, quiet, (engine, scheduler, jobs), policy)
    raise typer.Exit(0 if exit_zero and code == 1 else code)


def _batch(targets: list[str], format: BatchFormat | None, output: list[str], options: dict[str, Any],
           strict: bool | None, list_files: bool, quiet: bool, workers: tuple[str, str | None, int | None],
           policy: Path | None) -> int:
    """The body of ``batch``: its inputs (standard input spooled), the gates, the run, the reports;
    the exit code before --exit-zero."""
    from contextlib import ExitStack

    from .console import batch_inputs, finish_batch, run_batch, stdin_targets

    config = configuration()
    engine, scheduler, jobs = workers
    with ExitStack() as spool:
        targets = stdin_targets(targets, spool)
        outputs, paths, gates = batch_inputs(targets, format, output, config, **options)
        if strict if strict is not None else config.strict:
            gates = msgspec.structs.replace(gates, strict=True)
        if list_files:
            write("".join(f"{path}\n" for path in paths))
            raise typer.Exit(0)
        report = run_batch(targets, paths, outputs, gates, policy_in_force(policy), quiet=quiet, engine=engine,
                           scheduler=scheduler, jobs=jobs if jobs is not None else (config.jobs or 0))
        return finish_batch(report, outputs, quiet, gates)


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
    from .results import UsageError

    active, chosen = policy_in_force(policy), format_of(format, "compare")
    inputs = find_runs([a, b]) if os.path.isdir(a) and os.path.isdir(b) else [a, b]
    check_plot_target(plot, inputs)
    try:
        done = compare_targets(a, b, active, read=load_or_exit, find=find_runs, seed=seed,
                               jobs=jobs or os.cpu_count() or 1, detail=output_formats.shows_detail(chosen))
    except UsageError as exc:
        usage(str(exc))
    _deliver_comparison(done, chosen, output, inputs, quiet)
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


def _deliver_comparison(done: Compared, chosen: str, output: str | None, inputs: list[str], quiet: bool) -> None:
    """A comparison's warnings (not with --quiet) and its report; --quiet's table is the verdict line."""
    from .render.text import warning_lines

    if not quiet:
        for line in warning_lines(done.warnings, done.warning_count):
            err(line)
    if quiet and chosen == "table":
        from .render.compare import verdict_line

        deliver(verdict_line(done.result) + "\n", output, inputs)
    else:
        deliver(output_formats.render("compare", chosen, done.result, judged=done.judged), output, inputs)


app.command(short_help="Attempts, pass rate and findings per source, window by window.")(drift)
app.command(short_help="Each accusing rule's precision, recall and F1 on your labels.")(validate)
app.command(short_help="Keep or reject each revision while the loop runs.")(gate)


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
        usage(f"policy error: {exc}")


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
        usage("explain: name a rule, or --list to see them all")
    try:
        shown = explanation(rule_id, active)
    except ValueError as exc:
        usage(f"explain: {exc}")
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
        usage(f"completion: unknown shell {shell!r}; one of {', '.join(shells)}")
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
