"""The command line: each command parses its options, calls the library, writes, and exits.

Exit codes: 0 every run read and scored and no threshold failed; 1 a
threshold failed; 2 bad usage, or an input that could not be read or validated.

Imports stay lazy: ``procjudge score`` must not pay for pandas (batch, compare) or for modules
that another command needs.
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

import msgspec
import typer

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from .config import Config
    from .model import Run
    from .policy import Policy
    from .render.batch import Reporter
    from .results import Comparison, Result, Row
    from .tally import Collector

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
import_app = typer.Typer(help="Turn other tools' logs into run files.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(import_app, name="import")
review_app = typer.Typer(help="Draw a stratified review sample of runs, and estimate the defect rate from its labels.",
                         no_args_is_help=True, rich_markup_mode=None)
app.add_typer(review_app, name="review")


from .render import formats as output_formats

# --format choices come from the format registry: the formats each command serves.
ScoreFormat = Enum("ScoreFormat", {name: name for name in output_formats.names("score")}, type=str)  # type: ignore[misc]


# Where every importer writes: one option, the same for each `import` command.
IMPORT_OUT_OPTION = typer.Option(..., "--out", "-o", metavar="DIR",
                                 help="Folder to write the run files into (one sub-folder per agent).")


def _reports_option(default: str) -> Any:
    """The SWE-bench ``--reports DIR`` option of the importers that read them; ``default`` says
    where the reports come from without it."""
    return typer.Option(None, "--reports", metavar="DIR",
                        help=f"SWE-bench evaluation reports: DIR/<instance>/report.json or DIR/<instance>.json (default: {default}).")
POLICY_OPTION = typer.Option(
    None, "--policy", metavar="POLICY.yaml",
    help="YAML file overriding any part of the scoring policy (see `procjudge policy show`).",
)


def _err(message: str) -> None:
    from .render.text import literal

    # one line per message: a newline from input must not start a line (a CI workflow command)
    sys.stderr.write(literal(message.replace("\r", "\\r").replace("\n", "\\n"), 4000) + "\n")


def _no_runs(targets: Iterable[str | Path]) -> str:
    """What a command that found nothing to read says: every suffix discovery reads."""
    from .discovery import RUN_SUFFIXES

    plain = ", ".join(s for s in RUN_SUFFIXES if not s.endswith((".gz", ".zst")))
    return f"procjudge: no run files ({plain}; the last two also .gz or .zst) found in {' '.join(map(str, targets))}"


def _columns(pipe: int, narrowest: int, widest: int | None = None) -> int:
    """The width to wrap text to: the terminal's (``COLUMNS``, else the terminal itself) within
    ``narrowest``..``widest``, and ``pipe`` when the output is not a terminal."""
    import shutil

    width = max(narrowest, shutil.get_terminal_size((pipe, 24)).columns)
    return min(width, widest) if widest is not None else width


@contextlib.contextmanager
def _writing(target: Path, newline: str | None = None) -> Iterator[TextIO]:
    """A report file written atomically; an unwritable target is a one-line error (exit 2)."""
    from .safe_io import WriteError, atomic_write

    try:
        with atomic_write(str(target), newline=newline) as handle:
            yield cast("TextIO", handle)  # opened in text mode
    except WriteError as exc:
        _err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


def _finite(option: str) -> Callable[[float | None], float | None]:
    """A typer callback refusing NaN and infinity: a NaN threshold would pass every gate."""
    def check(value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise typer.BadParameter(f"expected a finite number, got {value}", param_hint=option)
        return value
    return check


MAX_JOBS = 256


class Interrupted(Exception):
    """SIGTERM reached the parent: stop scoring, as Ctrl-C does."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_GLOBAL: dict[str, Any] = {"config": None, "isolated": False, "loaded": None}


def _config() -> Config:
    """The configuration in force (``--config FILE``, else found upward; none with --isolated)."""
    from .config import ConfigError, load

    if _GLOBAL["loaded"] is None:
        try:
            path = _GLOBAL["config"]
            _GLOBAL["loaded"] = load(str(path) if path is not None else None, isolated=_GLOBAL["isolated"])
        except ConfigError as exc:
            _err(f"procjudge: configuration error: {exc}")
            raise typer.Exit(2) from None
    loaded: Config = _GLOBAL["loaded"]
    return loaded


def _load_policy(path: Path | None) -> Policy:
    from .policy import PolicyError, load_policy

    config = _config()
    try:
        return load_policy(path, config.policy, config.path)
    except PolicyError as exc:
        _err(f"procjudge: policy error: {exc}")
        raise typer.Exit(2) from None


def _format(given: Enum | None, command: str) -> str:
    """--format, else the configuration's format when this command offers it, else table."""
    if given is not None:
        return str(given.value)
    configured = _config().format
    return configured if configured in output_formats.names(command) else "table"


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
    _GLOBAL.update(config=config, isolated=isolated, loaded=None)


QUIET_HELP = "Only the summary: no per-run rows in the table, no warnings on stderr."
EXIT_ZERO_HELP = "Exit 0 even when a gate fails (unreadable input still exits 2)."


def _deliver(rendered: str | RenderableType, target: str | None, inputs: list[str]) -> None:
    """A report to stdout (no target, or ``-``) or written atomically to a file that is none of
    the inputs."""
    if target is None or target == "-":
        _show(rendered)
        return
    from .safe_io import check_target

    problem = check_target(target, inputs, "--output")
    if problem:
        _err(f"procjudge: {problem}")
        raise typer.Exit(2)
    with _writing(Path(target), newline="") as handle:
        if isinstance(rendered, str):
            handle.write(rendered)
        else:
            _console(handle).print(rendered)


STDIN_LIMIT = 64 * 1024 * 1024


def _load(target: str) -> Run:
    """A run from a file, or from standard input for ``-``; exit 2 with the message if unreadable."""
    from .loading import LoadError, load_run

    try:
        if target == "-":
            data = sys.stdin.buffer.read(STDIN_LIMIT + 1) if sys.stdin is not None else b""
            return load_run("<stdin>", data)
        return load_run(target)
    except LoadError as exc:
        _err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


def _console(file: TextIO | None = None) -> Console:
    from rich.console import Console

    if file is None and sys.stdout is None:
        _err("procjudge: standard output is closed; nothing was written (use --output FILE, or a pipe)")
        raise typer.Exit(2)

    return Console(file=file or sys.stdout, highlight=False, markup=False, emoji=False, soft_wrap=False)


def _silence_stdout() -> None:
    """The reader went away (``| head``): send the rest of the output nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _print(renderable: RenderableType) -> None:
    """Print a rich renderable to stdout, with the same care as ``emit``."""
    console = _console()
    try:
        console.print(renderable)
    except BrokenPipeError:
        _silence_stdout()
    except OSError as exc:
        _err(f"procjudge: cannot write to standard output: {exc.strerror or exc}; nothing more was written")
        raise typer.Exit(2) from None


def _show(rendered: str | RenderableType) -> None:
    """Text to stdout as it is; a rich renderable through the console."""
    if isinstance(rendered, str):
        write(rendered)
    else:
        _print(rendered)


def write(text: str) -> None:
    """Write a report to stdout; a reader that closed the pipe early is not an error."""
    emit([text])


def emit(chunks: Iterable[str]) -> None:
    """Write report chunks to stdout as they come. If the reader closes the pipe, stop writing
    but keep consuming, so that every run is still scored and the exit code reflects the gates."""
    if sys.stdout is None:
        _err("procjudge: standard output is closed; nothing was written (use --output FILE, or a pipe)")
        raise typer.Exit(2)
    try:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        for _ in chunks:
            pass
    except OSError as exc:
        _err(f"procjudge: cannot write to standard output: {exc.strerror or exc}; nothing more was written")
        raise typer.Exit(2) from None


@app.command()
def score(
    run_file: str = typer.Argument(..., metavar="RUN.yaml", help="A run file (.yaml, .yml or .json), or - for standard input."),
    format: ScoreFormat | None = typer.Option(None, "--format", "-f", help=output_formats.help_text("score") + " [default: table]"),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                      help="Write the report to FILE (written whole or not at all; - is standard output)."),
    policy: Path | None = POLICY_OPTION,
    fail_under: float | None = typer.Option(None, "--fail-under", metavar="N", callback=_finite("--fail-under"),
                                            help="Gate: exit 1 when the run's process score is below N."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the verdict's headline and totals; no warnings on stderr."),
) -> None:
    """Score one run: every item with its points, iterations and evidence; totals, pattern, tier.

    Exit codes: 0 scored (and the gate passed); 1 the process score is below --fail-under;
    2 the run file (or the policy or configuration) could not be read.

    Example: procjudge score sample_telemetry/example1_good_standard.yaml
    """
    from .judge import judge

    active = _load_policy(policy)
    run = _load(run_file)
    verdict = judge(run, active)
    if not quiet:
        for warning in verdict.warnings:
            _err(f"procjudge: warning: {run_file}: {warning}")
    fmt = _format(format, "score")
    detail = None
    if output_formats.shows_detail(fmt):
        from .detail import run_detail

        detail = run_detail(run)
    if quiet and fmt == "table":
        from .render.table import summary

        rendered = summary(verdict)
    else:
        rendered = output_formats.render("score", fmt, verdict, detail=detail)
    _deliver(rendered, output, [run_file])
    gate = fail_under if fail_under is not None else _config().fail_under
    if gate is not None and verdict.process_score < gate:
        _err(f"procjudge: process score {verdict.process_score:g} is below --fail-under {gate:g}")
        if not exit_zero:
            raise typer.Exit(1)


BatchFormat = Enum("BatchFormat", {name: name for name in output_formats.names("batch")}, type=str)  # type: ignore[misc]


def _outputs(values: list[str], default: str, known: list[str]) -> list[tuple[str, str | None]]:
    """(format, file or None for stdout) for each report asked for: ``-o FILE`` writes --format to
    FILE; ``-o FORMAT=FILE`` another format; ``-`` as the file is standard output. Unless a plain
    ``-o FILE`` or a ``-o FORMAT=-`` is given, --format goes to standard output."""
    outputs: list[tuple[str, str | None]] = []
    plain = False
    for value in values:
        name, sep, target = value.partition("=")
        if sep and name in known:
            outputs.append((name, target))
        elif sep and "/" not in name and "." not in name:
            _err(f"procjudge: --output {value}: unknown format {name!r}; known: {', '.join(known)}")
            raise typer.Exit(2)
        else:
            outputs.append((default, value))
            plain = True
    outputs = [(name, None if target == "-" else target) for name, target in outputs]
    if sum(target is None for _, target in outputs) > 1:
        _err("procjudge: --output: only one report can go to standard output (-)")
        raise typer.Exit(2)
    if not plain and all(target is not None for _, target in outputs):
        outputs.insert(0, (default, None))  # no report named stdout: --format goes there
    targets = [os.path.abspath(t) for _, t in outputs if t is not None]
    if len(set(targets)) != len(targets):
        _err("procjudge: --output: two reports would be written to the same file")
        raise typer.Exit(2)
    return outputs


def _report(reporters: list[tuple[str, Reporter, str | None]], stream: Iterable[tuple[Result, list[str] | None]],
            collector: Collector) -> None:
    """Feed one stream of results to every report at once, each through its lifecycle; a report
    file is written whole or not at all."""
    with contextlib.ExitStack() as stack:
        sinks: list[tuple[str, Reporter, TextIO | None]] = []
        for name, reporter, target in reporters:
            if getattr(reporter, "writes_files", False):  # parquet: the reporter writes its own files
                reporter.target = target  # type: ignore[attr-defined]
                stack.callback(reporter.abandon)  # type: ignore[attr-defined]
                sinks.append((name, reporter, None))
                continue
            handle = stack.enter_context(_writing(Path(target), newline="")) if target is not None else None
            sinks.append((name, reporter, handle))

        def put(name: str, handle: TextIO | None, text: Any) -> None:
            if not isinstance(text, str):  # the table report: a rich renderable
                if handle is None:
                    _print(text)
                else:
                    _console(handle).print(text)
            elif text and handle is None:
                emit([text])
            elif text and handle is not None:
                handle.write(text)

        for name, reporter, handle in sinks:
            put(name, handle, reporter.start())
        for result, reasons in stream:
            for name, reporter, handle in sinks:
                put(name, handle, reporter.each(result, reasons))
        report = collector.finish()
        for name, reporter, handle in sinks:
            put(name, handle, reporter.finish(report))


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _discover(targets: list[str]) -> list[str]:
    """Run files under targets, with the configuration's excludes, includes and .gitignore rule."""
    from .discovery import discover

    config = _config()
    return discover(targets, exclude=config.exclude, include=config.include, respect_gitignore=config.respect_gitignore)


def _without_own_outputs(found: list[str], targets: list[str]) -> list[str]:
    """The discovered files less the reports this command writes: a -o target that is an earlier
    procjudge report (or empty), and the file standard output is redirected to (``> out.json``).
    A -o target that is a run stays an input, and writing it is refused."""
    from .safe_io import is_own_report, same_file_as

    own = [t for t in targets if os.path.exists(t) and is_own_report(t)]
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if stat.S_ISREG(os.fstat(sys.stdout.fileno()).st_mode):
            own.append(f"/dev/fd/{sys.stdout.fileno()}")  # same_file_as stats it: the redirect target
    return [p for p in found if same_file_as(p, own) is None]


def _known_item_ids() -> list[str]:
    from .detectors import ALL
    return [d.id for d in ALL]


def _progress(results: Iterable[Result], total: int) -> Iterator[Result]:
    """Wrap the results in a progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty() or total < 2:
        yield from results
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress("scoring", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("scoring", total=total)
        for result in results:
            bar.advance(task)
            yield result


@app.command()
def batch(
    targets: list[str] = typer.Argument(..., metavar="DIR|GLOB...", help="Folders (searched recursively), files or globs of run files."),
    format: BatchFormat | None = typer.Option(None, "--format", "-f",
                                              help=output_formats.help_text("batch") + " [default: table]"),
    output: list[str] | None = typer.Option(
        None, "--output", "-o", metavar="[FORMAT=]FILE",
        help="Write the report to FILE instead of stdout (never one of the inputs; - is stdout). Repeatable with a "
             "format each, to write several reports from one scoring pass: -o junit=out.xml -o markdown=summary.md."),
    fail_under: float | None = typer.Option(None, "--fail-under", metavar="N", callback=_finite("--fail-under"),
                                            help="Gate, per run: fail (exit 1) when any run's process score is below N."),
    fail_under_mean: float | None = typer.Option(None, "--fail-under-mean", metavar="N", callback=_finite("--fail-under-mean"),
                                                 help="Gate, over the batch: fail (exit 1) when the mean process score of "
                                                      "all runs is below N (coverage's --fail-under reads a total like this)."),
    fail_on: list[str] | None = typer.Option(None, "--fail-on", metavar="FINDING[,...]",
                                                help="Gate, per run: fail (exit 1) when any run has one of these findings, e.g. "
                                                     "test_chasing,regression_blindness; repeatable, every one given counts."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    exclude: list[str] | None = typer.Option(None, "--exclude", metavar="PATTERN",
                                             help="Skip files and folders matching PATTERN (gitignore syntax, relative to "
                                                  "each folder given); repeatable; adds to the configuration's."),
    include: list[str] | None = typer.Option(None, "--include", metavar="PATTERN",
                                             help="Read only files matching PATTERN (gitignore syntax); repeatable."),
    respect_gitignore: bool | None = typer.Option(None, "--respect-gitignore/--no-respect-gitignore",
                                                  help="Skip what .gitignore files ignore [default: respect them]."),
    list_files: bool = typer.Option(False, "--list-files", help="Print the run files that would be read, one per line, and exit."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=0, max=MAX_JOBS,
                                    help=f"Worker processes, 0 to {MAX_JOBS} (default 0: the machine's cores)."),
    engine: str = typer.Option("local", "--engine", metavar="local|dask",
                               help="Where runs are scored: local worker processes, or a Dask cluster (pip install "
                                    "'procjudge[dask]'): the one at --scheduler, else a local one of --jobs workers."),
    scheduler: str | None = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                         help="With --engine dask: the scheduler to use, e.g. tcp://10.0.0.5:8786."),
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

    Example: procjudge batch runs/ --format junit --output procjudge.xml --fail-under -10
    """
    from .batch import score_paths
    from .discovery import discover
    from .safe_io import check_target
    from .tally import Collector, Gates

    config = _config()
    gates_on: tuple[str, ...] = ()
    wanted = [*(fail_on or [])] or list(config.fail_on)
    if wanted:
        gates_on = tuple(dict.fromkeys(d.strip() for option in wanted for d in option.split(",") if d.strip()))
        known = _known_item_ids()
        unknown = [d for d in gates_on if d not in known]
        if unknown:
            import difflib

            close = list(dict.fromkeys([k for k in known if k.startswith(unknown[0])]
                                       + difflib.get_close_matches(unknown[0], known, n=3)))[:3]
            hint = f" (did you mean {' or '.join(close)}?)" if close else f"; known: {', '.join(known)}"
            _err(f"procjudge: --fail-on: unknown finding {unknown[0]!r}{hint}; `procjudge explain --list` lists them")
            raise typer.Exit(2)
    outputs = _outputs(output or [], _format(format, "batch"), output_formats.names("batch"))
    found = discover(targets, exclude=[*config.exclude, *(exclude or [])], include=[*(include or config.include)],
                     respect_gitignore=config.respect_gitignore if respect_gitignore is None else respect_gitignore)
    paths = _without_own_outputs(found, [target for _, target in outputs if target is not None])
    if list_files:
        write("".join(f"{path}\n" for path in paths))
        raise typer.Exit(0)
    active = _load_policy(policy)
    for _, target in outputs:
        problem = check_target(target, paths) if target is not None else None
        if problem:
            _err(f"procjudge: {problem}")
            raise typer.Exit(2)
    if not paths:
        _err(f"{_no_runs(targets)} (hidden, git-ignored and excluded files are skipped; --list-files shows what is read)")
        raise typer.Exit(2)
    for name, target in outputs:
        if name == "parquet" and target is None:
            _err("procjudge: --format parquet writes files: give -o DIR (runs.parquet and items.parquet) or -o NAME.parquet")
            raise typer.Exit(2)
    try:
        from . import __version__
        from .catalogue import catalogue

        reporters = [(name, output_formats.reporter(name, quiet=lambda: quiet, rules=lambda: catalogue(active),
                                                    version=lambda: __version__), target) for name, target in outputs]
    except ImportError as exc:
        _err(f"procjudge: {exc}")
        raise typer.Exit(2) from None
    gates = Gates(fail_under=fail_under if fail_under is not None else config.fail_under,
                  fail_under_mean=fail_under_mean if fail_under_mean is not None else config.fail_under_mean,
                  fail_on=gates_on)
    collector = Collector(gates, keep_rows=not quiet and any(name in ("table", "markdown") for name, _ in outputs))
    chosen = jobs if jobs is not None else (config.jobs or 0)
    workers = chosen or os.cpu_count() or 1
    want_lines = any(r.needs_lines for _, r, _ in reporters)
    want_verdict = any(r.needs_verdict for _, r, _ in reporters)  # else the lighter result
    want_detail = any(r.needs_detail for _, r, _ in reporters)
    if engine not in ("local", "dask"):
        _err(f"procjudge: --engine {engine!r}: expected local or dask")
        raise typer.Exit(2)
    if scheduler and engine != "dask":
        _err("procjudge: --scheduler needs --engine dask")
        raise typer.Exit(2)
    if engine == "dask":
        try:
            import distributed  # noqa: F401

            from .dask import stream
        except ImportError:
            _err("procjudge: --engine dask needs Dask: pip install 'procjudge[dask]'")
            raise typer.Exit(2) from None
        results: Iterable[Result] = stream(paths, active, scheduler, workers, want_lines=want_lines,
                                           want_verdict=want_verdict, want_detail=want_detail)
    else:
        results = score_paths(paths, active, jobs=workers, want_lines=want_lines, want_verdict=want_verdict,
                              want_detail=want_detail)
    _report(reporters, collector.feed(_progress(results, len(paths))), collector)
    from .render.text import warning_lines

    if not quiet:
        for line in warning_lines(collector.warnings, collector.warning_count):
            _err(line)
    for error in collector.errors:
        _err(f"procjudge: {error.message}")
    if collector.failed and any(name != "table" or target is not None for name, _, target in reporters):
        _err(f"procjudge: {len(collector.failed)} of {collector.scored} runs failed the gate")
    mean_failure = collector.mean_failure()
    if mean_failure:
        _err(f"procjudge: {mean_failure}")
    code = collector.exit_code
    raise typer.Exit(0 if exit_zero and code == 1 else code)


CompareFormat = Enum("CompareFormat", {name: name for name in output_formats.names("compare")}, type=str)  # type: ignore[misc]


def _side_rows(target: str, active: Policy, jobs: int) -> tuple[list[Row], list[str], int]:
    """Score one folder; return its rows and its unreadable files."""
    from .batch import score_paths
    from .render.text import warning_lines
    from .tally import WARNINGS_SHOWN

    paths = _discover([target])
    rows: list[Row] = []
    errors: list[str] = []
    warnings: list[tuple[str, str]] = []
    count = 0
    for result in score_paths(paths, active, jobs=jobs):
        if result.row is None:
            errors.append(result.error or f"{result.path}: not scored")
        else:
            rows.append(result.row)
            count += result.row.warnings
            warnings += [(result.path, w) for w in result.warnings][: max(0, WARNINGS_SHOWN - len(warnings))]
    for line in warning_lines(warnings, count):
        _err(line)
    return rows, errors, len(paths)


def _label(target: str, rows: list[Row]) -> str:
    agents = sorted({r.agent for r in rows if r.agent})
    return agents[0] if len(agents) == 1 else os.path.basename(os.path.normpath(target))


@app.command()
def compare(
    a: str = typer.Argument(..., metavar="A", help="A run file, or a folder of one agent's runs."),
    b: str = typer.Argument(..., metavar="B", help="A run file, or a folder of the other agent's runs (same kind as A)."),
    format: CompareFormat | None = typer.Option(None, "--format", "-f", help=output_formats.help_text("compare") + " [default: table]"),
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                      help="Write the report to FILE (written whole or not at all; - is standard output)."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help=EXIT_ZERO_HELP),
    fail_if_worse: float | None = typer.Option(None, "--fail-if-worse", metavar="MARGIN", callback=_finite("--fail-if-worse"),
                                                  help="Gate: exit 1 when B's (mean) process score is below A's by more than MARGIN."),
    plot: Path | None = typer.Option(None, "--plot", metavar="FILE", help="Also draw the comparison to FILE (.png or .svg; needs procjudge[plot])."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap interval (folders), for reproducible output."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS, help=f"Worker processes for folders, 0 to {MAX_JOBS} (default 0: the machine's cores)."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Put two runs, or two agents' folders of runs, side by side: who iterates better, where, and how sure.

    Two files: every item with A's points, B's points and the difference, both trajectories drawn
    together, and the winner with the items that decided it. Two folders: runs paired by
    run.challenge (else by file name), per-agent aggregates, paired wins/losses/ties and the mean
    paired difference with a seeded 95% bootstrap interval; unmatched runs are listed.

    Example: procjudge compare runs/agent-a runs/agent-b --fail-if-worse 2 --plot compare.png
    """
    from .compare import compare_folders, compare_runs, worse_by

    active = _load_policy(policy)
    kinds = [os.path.isdir(x) for x in (a, b)]
    if a == "-" and b == "-":
        _err("procjudge: only one side of compare can be read from standard input")
        raise typer.Exit(2)
    for target in (a, b):
        if target != "-" and not os.path.exists(target):
            _err(f"procjudge: {target}: no such file or folder")
            raise typer.Exit(2)
    if kinds[0] != kinds[1]:
        _err("procjudge: compare takes two run files or two folders, not one of each")
        raise typer.Exit(2)
    if plot is not None:
        from .safe_io import check_target

        problem = check_target(str(plot), _discover([a, b]) if kinds[0] else [a, b], "--plot")
        if problem:
            _err(f"procjudge: {problem}")
            raise typer.Exit(2)
    from .results import FoldersComparison, Judged

    errors: list[str] = []
    judged: dict[str, Judged] = {}
    if not kinds[0]:
        from .detail import run_detail
        from .judge import judge
        from .render.text import warning_lines

        verdicts = []
        for target in (a, b):
            run = _load(target)
            verdicts.append(judge(run, active))
            judged[verdicts[-1].run.path] = Judged(verdict=verdicts[-1], detail=run_detail(run))
            shown = [(target, w) for w in verdicts[-1].warnings[:20]]
            for line in warning_lines(shown, len(verdicts[-1].warnings)):
                _err(line)
        result: Comparison = compare_runs(*verdicts)
    else:
        workers = jobs or os.cpu_count() or 1
        rows_a, errors_a, found_a = _side_rows(a, active, workers)
        rows_b, errors_b, found_b = _side_rows(b, active, workers)
        errors = errors_a + errors_b
        if not found_a or not found_b:
            _err(_no_runs([a if not found_a else b]))
            raise typer.Exit(2)
        result = compare_folders(rows_a, rows_b, seed=seed, label_a=_label(a, rows_a), label_b=_label(b, rows_b))
    chosen = _format(format, "compare")
    final = msgspec.structs.replace(result, errors=errors)
    if isinstance(final, FoldersComparison) and output_formats.shows_detail(chosen):
        from .compare import judge_most_different

        judged = judge_most_different(final, active)  # the pairs a page opens, judged again whole
    _deliver(output_formats.render("compare", chosen, final, judged=judged), output,
             _discover([a, b]) if kinds[0] else [a, b])
    if plot is not None:
        from .plot import PlotError
        from .plot import plot as draw

        try:
            draw(result, str(plot))
        except PlotError as exc:
            _err(f"procjudge: {exc}")
            raise typer.Exit(2) from None
    for error in errors:
        _err(f"procjudge: {error}")
    if errors:
        raise typer.Exit(2)
    if fail_if_worse is not None:
        gap = worse_by(result)
        if gap is not None and gap > fail_if_worse:
            _err(f"procjudge: B is worse than A by {gap:g} points (> --fail-if-worse {fail_if_worse:g})")
            if not exit_zero:
                raise typer.Exit(1)


def _require_files(paths: list[Path]) -> None:
    for path in paths:
        if not path.is_file():
            _err(f"procjudge: {path}: no such file")
            raise typer.Exit(2)


def _files_in(paths: list[Path], suffixes: tuple[str, ...]) -> list[Path]:
    """The files named, and in each folder named the files ending in ``suffixes`` (searched
    recursively, in sorted order); a folder with none is an error naming the suffixes."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes))
            if not inside:
                _err(f"procjudge: {path}: no {' or '.join(suffixes)} files in this folder")
                raise typer.Exit(2)
            found += inside
        else:
            found.append(path)
    _require_files(found)
    return found


def _import_report(written: int, issues: list[Any], out: Path, unit: str, note_unit: str) -> NoReturn:
    """Print an import's errors, its notes (the first 20) and its one-line summary; exit 2 on an error."""
    errors = [issue for issue in issues if not issue.note]
    notes = [issue for issue in issues if issue.note]
    for issue in errors:
        _err(f"procjudge: {issue}")
    for issue in notes[:20]:
        _err(f"procjudge: note: {issue}")
    if len(notes) > 20:
        _err(f"procjudge: note: {len(notes) - 20:,} more notes")
    skipped = f"; {_plural(len(errors), unit)} skipped" if errors else ""
    skipped += f"; {_plural(len(notes), note_unit)}" if notes else ""
    sys.stdout.write(f"imported {_plural(written, 'run')} into {out}{skipped}\n")
    raise typer.Exit(2 if errors else 0)


@import_app.command("reflexion")
def import_reflexion(
    files: list[Path] = typer.Argument(..., metavar="FILE.jsonl...", help="Reflexion-family logs: LDB, Reflexion, MapCoder's Reflexion runs."),
    out: Path = IMPORT_OUT_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the file's folder; plus the file name when several files share a folder)."),
    hidden_from: Path | None = typer.Option(None, "--hidden-from", metavar="OTHER.jsonl",
                                               help="A second file of the same runs whose is_solved is a second hidden verdict, joined on the task (e.g. HumanEvalET)."),
    hidden_name: str = typer.Option("extended", "--hidden-name", help="Name of the second hidden suite."),
    max_iterations: int | None = typer.Option(None, "--max-iterations", min=1,
                                                 help="The loop's budget of submissions (default: the most any task in the file used)."),
) -> None:
    """Import code-repair logs (one JSON object per task per line) as one run file per task.

    Per iteration: the visible tests by name (the assert text) and their outcome, the output after
    a failure, the counts, the code, the diff from the previous iteration (the repeated import
    header set aside) and a code hash; is_solved becomes the held-back suite after the last
    iteration. A malformed line is reported with its line number; every other line is imported.

    Example: procjudge import reflexion ldb/humaneval/*/results.jsonl --out imported/
    """
    from .importers.reflexion import import_files

    _require_files(list(files) + ([hidden_from] if hidden_from else []))
    written, issues = import_files([str(f) for f in files], str(out), agent=agent,
                                   hidden_from=str(hidden_from) if hidden_from else None,
                                   max_iterations=max_iterations, hidden_name=hidden_name)
    _import_report(written, issues, out, "line", "record with nothing to judge")


@import_app.command("inspect")
def import_inspect(
    files: list[Path] = typer.Argument(..., metavar="LOG...", help="Inspect AI logs (.eval or .json)."),
    out: Path = IMPORT_OUT_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the log's model)."),
) -> None:
    """Import Inspect AI evaluation logs as one run file per sample and epoch.

    An iteration is one scored submission: a multi-attempt agent's intermediate scores, then the
    final score when it is a new answer. Per iteration the score, test counts from the scorer's
    metadata (passed, total), the submitted answer as code, the scorer's explanation as feedback,
    the tool calls since the previous submission, and the timing. Zstandard-compressed .eval logs
    need Python 3.14 or pip install 'procjudge[inspect]'.

    Example: procjudge import inspect logs/*.eval --out imported/
    """
    from .importers.inspect import import_files

    _require_files(list(files))
    written, issues = import_files([str(f) for f in files], str(out), agent=agent)
    _import_report(written, issues, out, "log", "note")


@import_app.command("swe-agent")
def import_swe_agent(
    files: list[Path] = typer.Argument(..., metavar="TRAJ...", help="mini-swe-agent or SWE-agent trajectories (.traj.json, .traj), or folders holding them."),
    out: Path = IMPORT_OUT_OPTION,
    reports: Path | None = typer.Option(
        None, "--reports", metavar="DIR|FILE",
        help="SWE-bench evaluation reports: DIR/<instance>/report.json or DIR/<instance>.json, or a results.json "
             "that lists the resolved instances (default: logs/<instance>/report.json beside the trajectories)."),
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the model in the trajectory's configuration, else its run folder)."),
) -> None:
    """Import shell-agent trajectories as one run file per task.

    Reads mini-swe-agent (1.x command blocks, 2.x tool calls) and SWE-agent (0.x ACI commands
    such as edit N:M, 1.x str_replace_editor calls). An iteration is one or more edits followed by
    a test run (Django's runtests.py, pytest, unittest, tox or nox, with counts in its output); a
    test run that validated nothing (the runner is missing, its output was cut or discarded) is
    not a failure and is named in the run's notes. Per iteration the suite, the counts and the
    tests by name, the files written (scratch files marked) with each edit rebuilt as text, the
    THOUGHT as the change summary and the timing; the last iteration carries the submitted diff and
    the held-back FAIL_TO_PASS and PASS_TO_PASS suites of report.json. A trajectory with no test
    run that validated anything is one iteration of unknown outcome, scored by its held-back suite
    (skipped with a note when it has none); one unreadable file is an error that costs that file only.

    Example: procjudge import swe-agent trajs/ --reports logs --out imported/
    """
    from .importers.swe_agent import import_files

    files = _files_in(list(files), (".traj.json", ".traj"))
    written, issues = import_files([str(f) for f in files], str(out), agent=agent, reports=str(reports) if reports else None)
    _import_report(written, issues, out, "file", "note")


@import_app.command("openhands")
def import_openhands(
    files: list[Path] = typer.Argument(..., metavar="OUTPUT.jsonl...", help="OpenHands evaluation output: one instance per line."),
    out: Path = IMPORT_OUT_OPTION,
    reports: Path | None = _reports_option("the line's own test_result.report"),
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the model in the line's metadata)."),
) -> None:
    """Import OpenHands evaluation output (output.jsonl) as one run file per instance.

    The history's events are read as a shell agent's steps: run actions are commands (test runs
    and builds recognised as for swe-agent), edit and write actions are edits of their path. An
    iteration is one or more edits followed by a test run or a failed build; the last iteration
    carries test_result.git_patch and the held-back verdict. Lines are streamed; a malformed line
    is reported with its number and the others are imported.

    Example: procjudge import openhands evaluation/outputs/*/output.jsonl --out imported/
    """
    from .importers.openhands import import_files

    _require_files(list(files))
    written, issues = import_files([str(f) for f in files], str(out), agent=agent, reports=str(reports) if reports else None)
    _import_report(written, issues, out, "line", "note")


@import_app.command("atif")
def import_atif(
    files: list[Path] = typer.Argument(..., metavar="TRAJECTORY.json...", help="ATIF trajectories (Harbor: TRIAL/agent/trajectory.json)."),
    out: Path = IMPORT_OUT_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the trajectory's agent name and model)."),
) -> None:
    """Import Agent Trajectory Interchange Format trajectories as one run file each.

    Tool calls are read as a shell agent's steps: shell commands (command, cmd, keystrokes),
    file edits (an editor's str_replace/create/insert, write and edit tools, apply_patch) and
    reads. In a Harbor trial folder the verifier's ctrf.json or reward.txt is the held-back suite.

    Example: procjudge import atif jobs/*/*/agent/trajectory.json --out imported/
    """
    from .importers.atif import import_files

    _require_files(list(files))
    written, issues = import_files([str(f) for f in files], str(out), agent=agent)
    _import_report(written, issues, out, "file", "note")


@import_app.command("list")
def import_list() -> None:
    """List the importers: the built-in ones and those other packages install (entry-point group
    procjudge.importers)."""
    from .importers.base import BUILTINS, registry

    importers, problems = registry()
    builtin = {b.name for b in BUILTINS}
    width = max(len(i.name) for i in importers)
    for importer in importers:
        origin = "" if importer.name in builtin else "  (plugin)"
        sys.stdout.write(f"{importer.name:<{width}}  {importer.summary}{origin}\n")
    for problem in problems:
        _err(f"procjudge: warning: {problem}")


def _import_inputs(targets: list[Path]) -> list[str]:
    """The files under targets (folders walked, hidden folders skipped), in order."""
    found: list[str] = []
    for target in targets:
        if target.is_dir():
            for folder, subfolders, names in os.walk(target):
                subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
                found += [os.path.join(folder, n) for n in sorted(names) if not n.startswith(".")]
        elif target.is_file():
            found.append(str(target))
        else:
            _err(f"procjudge: {target}: no such file or folder")
            raise typer.Exit(2)
    return found


@import_app.command("auto")
def import_auto(
    targets: list[Path] = typer.Argument(..., metavar="PATH...", help="Log files, or folders to search for them."),
    out: Path = IMPORT_OUT_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: each importer's own)."),
    using: str | None = typer.Option(None, "--using", metavar="IMPORTER",
                                     help="Read every file with this importer instead of recognising each (see import list)."),
) -> None:
    """Recognise each log's format and import it: swe-agent trajectories, OpenHands output,
    ATIF trajectories, Inspect logs, Reflexion-family logs, and any installed plugin's format.

    A file is recognised by its name and first bytes; in a folder, files no importer recognises
    are passed over (and counted), while a named file that is not recognised is an error.

    Example: procjudge import auto runs/ --out imported/
    """
    from .importers.base import recognise, registry

    importers, problems = registry()
    for problem in problems:
        _err(f"procjudge: warning: {problem}")
    chosen = None
    if using is not None:
        chosen = next((i for i in importers if i.name == using), None)
        if chosen is None:
            _err(f"procjudge: no importer named {using!r}; there are: {', '.join(i.name for i in importers)}")
            raise typer.Exit(2)
    named = {str(t) for t in targets if t.is_file()}
    groups: dict[str, list[str]] = {}
    passed_over: list[str] = []
    unknown: list[str] = []
    for path in _import_inputs(list(targets)):
        importer = chosen or recognise(path, importers)
        if importer is None:
            (unknown if path in named else passed_over).append(path)
        else:
            groups.setdefault(importer.name, []).append(path)
    by_name = {i.name: i for i in importers}
    written, issues = 0, []
    for name, paths in groups.items():
        count, found = by_name[name].import_files(paths, str(out), agent=agent)
        written += count
        issues += found
        _err(f"procjudge: {name}: {_plural(len(paths), 'file')}, {_plural(count, 'run')}")
    if passed_over:
        _err(f"procjudge: {_plural(len(passed_over), 'file')} under the folders recognised by no importer, passed over")
    if not groups and not unknown:
        _err("procjudge: no logs found")
    if unknown:
        from .importers.base import ImportIssue

        issues += [ImportIssue(path, 1, "not a log any importer recognises (see procjudge import list; "
                               "--using NAME forces one)") for path in unknown]
    _import_report(written, issues, out, "file", "note")


def _rows(targets: list[str], active: Policy, jobs: int) -> tuple[list[Row], list[str]]:
    """Score the runs under targets (batch's discovery and workers); unreadable files are listed
    on stderr and make the exit code 2 at the end, as in batch."""
    from .batch import score_paths

    paths = _discover(targets)
    if not paths:
        _err(_no_runs(targets))
        raise typer.Exit(2)
    rows: list[Row] = []
    errors: list[str] = []
    for result in score_paths(paths, active, jobs=jobs or os.cpu_count() or 1):
        if result.row is None:
            errors.append(result.error or f"{result.path}: not scored")
        else:
            rows.append(result.row)
    for error in errors:
        _err(f"procjudge: {error}")
    return rows, errors


@review_app.command("sample")
def review_sample(
    targets: list[str] = typer.Argument(..., metavar="DIR|GLOB...", help="Folders, files or globs of run files."),
    out: Path = typer.Option(..., "--out", "-o", metavar="QUEUE",
                             help="Write QUEUE.csv and QUEUE.json (the suffix, if given, is replaced)."),
    per_stratum: int = typer.Option(40, "--per-stratum", min=1, max=100_000, help="Runs to draw from each stratum."),
    by: str = typer.Option("bucket", "--by", help="Strata: bucket (attempt buckets 1, 2, 3, 4-6, 7+) or finding."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draw: the same runs and seed give the same queue."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS, help="Worker processes (0: the machine's cores)."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Draw a review queue: equal numbers of runs per attempt bucket (or per finding), each with its
    sampling weight, so every stratum gets enough reviews to estimate its defect rate.

    Example: procjudge review sample runs/ --per-stratum 40 --seed 7 --out queue
    """
    from .render.json import dumps
    from .render.review import queue_csv, queue_note
    from .review import draw
    from .safe_io import check_target

    if by not in ("bucket", "finding"):
        _err(f"procjudge: --by: expected bucket or finding, got {by!r}")
        raise typer.Exit(2)
    rows, errors = _rows(targets, _load_policy(policy), jobs)
    queue = draw(rows, per_stratum, seed, by)
    stem = str(out.with_suffix("")) if out.suffix in (".csv", ".json") else str(out)
    for target in (stem + ".csv", stem + ".json"):
        problem = check_target(target, [r.path for r in rows], "--out")
        if problem:
            _err(f"procjudge: {problem}")
            raise typer.Exit(2)
    with _writing(Path(stem + ".json")) as handle:
        handle.write(dumps(queue))
    with _writing(Path(stem + ".csv"), newline="") as handle:
        handle.write(queue_csv(queue))
    sys.stdout.write(queue_note(queue, stem))
    raise typer.Exit(2 if errors else 0)


@review_app.command("estimate")
def review_estimate(
    queue_file: Path = typer.Argument(..., metavar="QUEUE.json", help="The queue `review sample` wrote."),
    labels_file: Path = typer.Argument(..., metavar="LABELS.csv", help="A CSV with columns path and label (defect or ok)."),
    format: str = typer.Option("table", "--format", "-f", help="table, json or markdown."),
) -> None:
    """Estimate the defect rate from reviewers' labels: per stratum with a Wilson 95% interval, and
    overall reweighted by each stratum's share of the runs (with the unweighted mean of stratum
    rates beside it, the mistake to avoid).

    Example: procjudge review estimate queue.json queue.csv
    """
    import csv as csv_module

    from .locate import read_regular
    from .review import estimate, read_label, read_queue

    try:
        data = read_regular(str(queue_file), 256 * 2**20)
        text = read_regular(str(labels_file), 256 * 2**20).decode("utf-8-sig")
    except (OSError, ValueError, OverflowError) as exc:
        _err(f"procjudge: cannot read the queue or the labels: {exc}")
        raise typer.Exit(2) from None
    try:
        queue = read_queue(data)
    except ValueError as exc:
        _err(f"procjudge: {queue_file}: not a review queue written by `procjudge review sample`{exc}")
        raise typer.Exit(2) from None
    labels, problems = [], []
    reader = csv_module.DictReader(text.splitlines())
    if not reader.fieldnames or "path" not in reader.fieldnames or "label" not in reader.fieldnames:
        _err(f"procjudge: {labels_file}: expected columns path and label")
        raise typer.Exit(2)
    for number, row in enumerate(reader, start=2):
        if not (row.get("label") or "").strip():
            continue
        value = read_label(row["label"])
        if value is None:
            problems.append(f"{labels_file}:{number}: label {row['label']!r}: expected defect or ok")
            continue
        labels.append((row["path"].lstrip("'"), value))
    for problem in problems:
        _err(f"procjudge: {problem}")
    if format not in ("table", "json", "markdown"):
        _err(f"procjudge: --format: expected table, json or markdown, got {format!r}")
        raise typer.Exit(2)
    write(output_formats.renderer("estimate", format)(estimate(queue, labels)))
    raise typer.Exit(2 if problems else 0)


class DriftFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


@app.command()
def drift(
    targets: list[str] = typer.Argument(..., metavar="DIR|GLOB...", help="Folders, files or globs of run files."),
    window: str = typer.Option("day", "--window", help="day or week (ISO week)."),
    threshold: float = typer.Option(0.5, "--threshold", callback=_finite("--threshold"),
                                    help="Alert when mean attempts per source rises by more than this from one window to the next."),
    collapse: float = typer.Option(0.6, "--collapse", callback=_finite("--collapse"),
                                   help="Alert when one test becomes this share of a source's first failures."),
    format: DriftFormat = typer.Option(DriftFormat.table, "--format", "-f", help="table, json or markdown."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS, help="Worker processes (0: the machine's cores)."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Mean attempts, pass rate, findings and the first failing test per source (run.source) and
    window (run.started_at): attempts move before the pass rate does. Exit 1 on an alert.

    Example: procjudge drift runs/ --window day --threshold 0.5
    """
    from .drift import drift as compute

    if window not in ("day", "week"):
        _err(f"procjudge: --window: expected day or week, got {window!r}")
        raise typer.Exit(2)
    rows, errors = _rows(targets, _load_policy(policy), jobs)
    result = compute(rows, window, threshold, collapse)
    write(output_formats.renderer("drift", format.value)(result, width=_columns(120, 72)))
    raise typer.Exit(2 if errors else (1 if result.alerts else 0))


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
    from .policy import PolicyError, policy_yaml, sources

    active = _load_policy(policy)
    if not show_sources:
        write(policy_yaml(active))
        return
    config = _config()
    try:
        found = sources(str(policy) if policy is not None else None, config.policy, config.path)
    except PolicyError as exc:
        _err(f"procjudge: policy error: {exc}")
        raise typer.Exit(2) from None
    values = msgspec.to_builtins(active)
    lines = [f"# configuration: {config.path or 'none found'}; --policy: {policy or 'not given'}"]
    for key, source in found.items():
        value: Any = values
        for part in key.split("."):
            value = value[part]
        lines.append(f"{key} = {msgspec.json.encode(value).decode()}  # {source}")
    write("\n".join(lines) + "\n")


@app.command()
def explain(
    rule_id: str | None = typer.Argument(None, metavar="RULE", help="A rule id, as in a verdict's items (e.g. test_chasing)."),
    list_all: bool = typer.Option(False, "--list", help="List every rule with its kind and points."),
    as_json: bool = typer.Option(False, "--json", help="The catalogue entry (and example) as JSON."),
    policy: Path | None = POLICY_OPTION,
) -> None:
    """Explain a rule: what it detects, its points and range under the policy in force, the
    evidence it reads, the section of the rulebook it comes from, and an example scored now.

    Example: procjudge explain test_chasing        procjudge explain --list
    """
    from .catalogue import catalogue, example, rule

    active = _load_policy(policy)
    if list_all or rule_id is None:
        if not list_all:
            _err("procjudge: explain: name a rule, or --list to see them all")
            raise typer.Exit(2)
        entries = catalogue(active)
        if as_json:
            write(msgspec.json.format(msgspec.json.encode(entries), indent=2).decode() + "\n")
            return
        import textwrap

        name_width = max(len(e.id) for e in entries)
        indent = " " * (name_width + 16)
        columns = _columns(120, len(indent) + 20, 120)
        write("".join("\n".join(textwrap.wrap(f"{e.id:<{name_width}}  {e.kind:<12}  {e.points}", width=columns,
                                              subsequent_indent=indent)) + "\n" for e in entries))
        return
    try:
        entry = rule(rule_id, active)
    except (KeyError, StopIteration):
        import difflib

        known = [e.id for e in catalogue(active)]
        close = list(dict.fromkeys([k for k in known if k.startswith(rule_id)]
                                   + difflib.get_close_matches(rule_id, known, n=3)))[:3]
        hint = f"; did you mean {' or '.join(close)}?" if close else "; procjudge explain --list shows them"
        _err(f"procjudge: explain: no rule {rule_id!r}{hint}")
        raise typer.Exit(2) from None
    shown = example(entry.id, active)
    if as_json:
        write(msgspec.json.format(msgspec.json.encode({"rule": entry, "example": shown}), indent=2).decode() + "\n")
        return
    import textwrap

    from .render.text import literal

    width = _columns(96, 40, 96)

    def field(label: str, text: str) -> list[str]:
        return textwrap.wrap(text, width=width, initial_indent=f"{label:<9}", subsequent_indent=" " * 9) or [label]

    accuses = "; accuses: definite evidence scores the run at the floor" if entry.accuses else ""
    lines = [*textwrap.wrap(f"{entry.id}  ({entry.kind}{accuses})", width=width, subsequent_indent="  "), "",
             *field("points", entry.points), *field("rule", entry.rule),
             *field("reads", entry.reads), *field("source", entry.source)]
    if shown is not None:
        # the example run is YAML, shown as written (not wrapped)
        lines += ["", *field("example", shown.name), *("  | " + line for line in shown.run.rstrip().splitlines()[:40])]
        for points, iterations, strength, basis, evidence in shown.findings:
            lines += textwrap.wrap(f"-> {points:+g} at iteration {', '.join(map(str, iterations)) or '-'} "
                                   f"[{strength}; {basis}]: {literal(evidence, 600)}", width=width,
                                   initial_indent="  ", subsequent_indent="     ")
    write("\n".join(lines) + "\n")


COMPLETE_VAR = "_PROCJUDGE_COMPLETE"


@app.command()
def completion(
    shell: str = typer.Argument(..., metavar="SHELL", help="bash, zsh, fish or powershell."),
) -> None:
    """Print the shell completion script for SHELL.

    Example (bash): procjudge completion bash > ~/.local/share/bash-completion/completions/procjudge
    Example (zsh):  procjudge completion zsh > "${fpath[1]}/_procjudge"
    Example (fish): procjudge completion fish > ~/.config/fish/completions/procjudge.fish
    """
    from typer.completion import get_completion_script  # type: ignore[attr-defined]  # public, re-exported

    shells = ("bash", "zsh", "fish", "powershell")
    if shell not in shells:
        _err(f"procjudge: completion: unknown shell {shell!r}; one of {', '.join(shells)}")
        raise typer.Exit(2)
    write(get_completion_script(prog_name="procjudge", complete_var=COMPLETE_VAR, shell=shell).rstrip("\n") + "\n")


@app.command()
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
    _flush_and_exit(code)


def _terminate(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def _interrupted(message: str, code: int) -> NoReturn:
    """Leave at once after Ctrl-C or SIGTERM: the report's temporary file is already removed on
    the way out; no exit hook runs (an interrupted pool's hooks can block or print tracebacks)."""
    _err(message)
    _flush_and_exit(code)


def _flush_and_exit(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code.  No Python traceback ever reaches the user; Ctrl-C
    exits 130 and SIGTERM 143, each within a moment and without leaving a half-written report."""
    import signal

    with contextlib.suppress(ValueError):  # not the main thread (embedded use): keep the default
        signal.signal(signal.SIGTERM, _terminate)
    if COMPLETE_VAR in os.environ:  # the shell asks for completions (see `procjudge completion`)
        from typer.completion import completion_init  # type: ignore[attr-defined]  # public, re-exported

        completion_init()
    try:
        code = app(args=argv, prog_name="procjudge", standalone_mode=False)
        if code == 130:  # typer's answer to Ctrl-C, returned rather than raised
            _err("procjudge: interrupted")
        return code if isinstance(code, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # click's own exits; typer turns Ctrl-C into exit 130
        code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
        if code == 130:
            _err("procjudge: interrupted")
        return code
    except KeyboardInterrupt:
        _interrupted("procjudge: interrupted", 130)
    except Interrupted as exc:
        _interrupted("procjudge: terminated", 128 + exc.signum)
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        # click's usage errors (typer may vendor click, so match the protocol, not the class)
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            show()
            return code
        if type(exc).__name__ == "Abort":
            if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                _interrupted("procjudge: interrupted", 130)
            _err("procjudge: aborted")
            return 2
        _err(f"procjudge: internal error: {type(exc).__name__}: {exc}")
        return 2
