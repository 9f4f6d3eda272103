"""What every command of the command line shares: writing to stdout, stderr and report files with
the same care, the configuration and policy in force, the options several commands take, and
leaving cleanly on Ctrl-C or SIGTERM.

A command parses its options, calls one library function and hands its typed result to
``deliver`` (through the format registry); everything here turns a problem into a one-line
message and an exit code, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import io
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

import typer

from .config import MAX_JOBS
from .render import formats as output_formats

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from .config import Config
    from .model import Run
    from .policy import Policy
    from .render.batch import Reporter
    from .results import BatchReport, Comparison, Result
    from .tally import Collector, Gates


# Where every importer writes: one option, the same for each `import` command.
IMPORT_OUT_OPTION = typer.Option(..., "--out", "-o", metavar="DIR",
                                 help="Folder to write the run files into (one sub-folder per agent).")


OVERWRITE_OPTION = typer.Option(False, "--overwrite",
                                help="Replace a run file an earlier import wrote under the same name (by default it is "
                                     "kept and the new run written beside it as NAME-2.json; the same run is left as it is).")


def reports_option(default: str) -> Any:
    """The SWE-bench ``--reports DIR`` option of the importers that read them; ``default`` says
    where the reports come from without it."""
    return typer.Option(None, "--reports", metavar="DIR",
                        help="SWE-bench evaluation reports: DIR/<instance>/report.json or DIR/<instance>.json (default: "
                             f"{default}).")


POLICY_OPTION = typer.Option(
    None, "--policy", metavar="POLICY.yaml",
    help="YAML file overriding any part of the scoring policy (see `procjudge policy show`).",
)


def err(message: str) -> None:
    from .render.text import literal

    # one line per message: a newline from input must not start a line (a CI workflow command)
    sys.stderr.write(literal(message.replace("\r", "\\r").replace("\n", "\\n"), 4000) + "\n")


def no_runs(targets: Iterable[str | Path]) -> str:
    """What a command that found nothing to read says: every suffix discovery reads."""
    from .discovery import nothing_found

    return f"procjudge: {nothing_found(targets)}"


def columns(pipe: int, narrowest: int, widest: int | None = None) -> int:
    """The width to wrap text to: the terminal's (``COLUMNS``, else the terminal itself) within
    ``narrowest``..``widest``, and ``pipe`` when the output is not a terminal."""
    import shutil

    width = max(narrowest, shutil.get_terminal_size((pipe, 24)).columns)
    return min(width, widest) if widest is not None else width


@contextlib.contextmanager
def writing(target: Path, newline: str | None = None) -> Iterator[TextIO]:
    """A report file written atomically; an unwritable target is a one-line error (exit 2)."""
    from .safe_io import WriteError, atomic_write

    try:
        with atomic_write(str(target), newline=newline) as handle:
            yield cast("TextIO", handle)  # opened in text mode
    except WriteError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


def finite(option: str) -> Callable[[float | None], float | None]:
    """A typer callback refusing NaN and infinity: a NaN threshold would pass every gate."""
    def check(value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise typer.BadParameter(f"expected a finite number, got {value}", param_hint=option)
        return value
    return check


def patterns(option: str) -> Callable[[list[str] | None], list[str] | None]:
    """A typer callback refusing a pattern gitignore syntax cannot read (``!`` alone), as the
    configuration's ``exclude`` and ``include`` refuse it."""
    def check(values: list[str] | None) -> list[str] | None:
        from .discovery import pattern_problem

        for value in values or ():
            problem = pattern_problem(value)
            if problem:
                raise typer.BadParameter(problem, param_hint=option)
        return values if values is not None else []  # older typer takes len() of what a callback returns
    return check


class Interrupted(BaseException):
    """SIGTERM reached the parent: stop scoring, as Ctrl-C does. A ``BaseException``, as
    ``KeyboardInterrupt`` is, so that no ``except Exception`` (one broken run must never stop a
    batch) can take the signal for a run's error and go on to publish a report missing that run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


SETTINGS: dict[str, Any] = {"config": None, "isolated": False, "loaded": None}


def configuration() -> Config:
    """The configuration in force (``--config FILE``, else found upward; none with --isolated)."""
    from .config import ConfigError, load

    if SETTINGS["loaded"] is None:
        try:
            path = SETTINGS["config"]
            SETTINGS["loaded"] = load(str(path) if path is not None else None, isolated=SETTINGS["isolated"])
        except ConfigError as exc:
            err(f"procjudge: configuration error: {exc}")
            raise typer.Exit(2) from None
    loaded: Config = SETTINGS["loaded"]
    return loaded


def policy_in_force(path: Path | None) -> Policy:
    from .policy import PolicyError, load_policy

    config = configuration()
    try:
        return load_policy(path, config.policy, config.path)
    except PolicyError as exc:
        err(f"procjudge: policy error: {exc}")
        raise typer.Exit(2) from None


def format_of(given: Enum | None, command: str) -> str:
    """--format, else the configuration's format when this command offers it, else table."""
    if given is not None:
        return str(given.value)
    configured = configuration().format
    return configured if configured in output_formats.names(command) else "table"


QUIET_HELP = ("Only the summary on the terminal: no per-run rows in the table, no warnings on stderr "
              "(reports in other formats are whole).")


EXIT_ZERO_HELP = "Exit 0 even when a gate fails (unreadable input still exits 2)."


def deliver(rendered: str | RenderableType, target: str | None, inputs: list[str]) -> None:
    """A report to stdout (no target, or ``-``) or written atomically to a file that is none of
    the inputs."""
    if target is None or target == "-":
        show(rendered)
        return
    from .safe_io import check_target

    problem = check_target(target, inputs, "--output")
    if problem:
        err(f"procjudge: {problem}")
        raise typer.Exit(2)
    with writing(Path(target), newline="") as handle:
        if isinstance(rendered, str):
            handle.write(rendered)
        else:
            console_for(handle).print(rendered, crop=False)


STDIN_LIMIT = 64 * 1024 * 1024


def _one_record(path: str) -> Run:
    """The run of a JSON-lines file that holds one; a file of several is a usage error pointing at
    ``batch``, which scores each of them."""
    from .loading import LoadError
    from .records import load_record, read_records

    found: list[tuple[int, bytes]] = []
    for number, record in read_records(path):
        if isinstance(record, LoadError):
            raise record
        found.append((number, record))
        if len(found) > 1:
            err(f"procjudge: {path}: a JSON-lines file of several runs; score reads one run: "
                f"procjudge batch {path} scores each of them")
            raise typer.Exit(2)
    if not found:
        raise LoadError(path, "no run in this JSON-lines file")
    number, record = found[0]
    return load_record(record, path, number)


def load_or_exit(target: str) -> Run:
    """A run from a file, or from standard input for ``-``; exit 2 with the message if unreadable."""
    from .loading import LoadError, load_run

    try:
        if target == "-":
            data = sys.stdin.buffer.read(STDIN_LIMIT + 1) if sys.stdin is not None else b""
            return load_run("<stdin>", data)
        from .records import is_records

        if is_records(target):
            return _one_record(target)
        return load_run(target)
    except LoadError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")
_COMMAND = re.compile(r"^((?:\x1b\[[0-9;]*m)*)::")


def _unlead(line: str) -> str:
    """A line that would start with ``::`` (a CI workflow command) as ``\\::``."""
    return _COMMAND.sub(r"\1\\::", line)


class Trimmed(io.TextIOBase):
    """The writer of every rich report (tables, explain, drift): drops the spaces rich pads the end
    of each line with (before any colour reset), so that no report line ends in whitespace, and
    escapes a line that would start with ``::`` (``\\::``), so that no name in a report is read
    as a CI workflow command (``::error``, ``::add-mask::``, ``::stop-commands::``); everything else
    passes through. Text from input is one line already (``render.text.literal``)."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target, self.pending = target, ""

    def write(self, text: str) -> int:
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if lines:
            self.target.write("\n".join(_unlead(_TRAILING.sub(r"\1", line)) for line in lines) + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.target.write(_unlead(self.pending))
            self.pending = ""
        self.target.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"


class CheckedStdout(io.TextIOBase):
    """Standard output written with ``os.write``, every byte accounted for: a short write is
    continued and a failure (a full disk, a file-size limit) raises OSError instead of losing the
    rest. Python's own buffered writer reports a write of 16,890 bytes as done when the disk took
    4,096 of them and refused the next, so a report cut short would exit 0. Installed by ``main``
    for the length of a command; everything written to stdout passes here."""

    LIMIT = 64 * 1024

    def __init__(self, original: TextIO) -> None:
        super().__init__()
        self.original, self.fd = original, original.fileno()
        self.codec = getattr(original, "encoding", None) or "utf-8"
        self.mistakes = getattr(original, "errors", None) or "strict"
        self.pending = bytearray()

    def write(self, text: str) -> int:
        self.pending += text.encode(self.codec, self.mistakes)
        if len(self.pending) >= self.LIMIT:
            self.flush()
        return len(text)

    def flush(self) -> None:
        view = memoryview(bytes(self.pending))
        self.pending.clear()
        while view:
            written = os.write(self.fd, view)
            if written <= 0:
                raise OSError(errno.ENOSPC, "the output took no more bytes")
            view = view[written:]

    def isatty(self) -> bool:
        return self.original.isatty()

    def fileno(self) -> int:
        return self.fd

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.codec

    @property
    def errors(self) -> str:  # type: ignore[override]
        return self.mistakes


@contextlib.contextmanager
def checked_stdout() -> Iterator[None]:
    """Standard output as a :class:`CheckedStdout` while the block runs (when it is a file
    descriptor: a test's captured stdout is left as it is); the original is flushed first and put
    back after."""
    original = sys.stdout
    try:
        if original is None:
            raise ValueError("closed")
        original.flush()
        checked: TextIO | None = cast(TextIO, CheckedStdout(original))
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        checked = None
    if checked is None:
        yield
        return
    sys.stdout = checked
    try:
        yield
    finally:
        if sys.stdout is checked:
            sys.stdout = original


def console_for(file: TextIO | None = None) -> Console:
    from rich.console import Console

    if file is None and sys.stdout is None:
        err("procjudge: standard output is closed; nothing was written (use --output FILE, or a pipe)")
        raise typer.Exit(2)

    return Console(file=cast(TextIO, Trimmed(file or sys.stdout)), highlight=False, markup=False, emoji=False,
                   soft_wrap=False)


def silence_stdout() -> None:
    """The reader went away (``| head``): send the rest of the output nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def print_renderable(renderable: RenderableType) -> None:
    """Print a rich renderable to stdout, with the same care as ``emit``."""
    console = console_for()
    try:
        console.print(renderable, crop=False)  # off a terminal a line may run past the width: whole ids
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        err(f"procjudge: cannot write to standard output: {exc.strerror or exc}; nothing more was written")
        raise typer.Exit(2) from None


def show(rendered: str | RenderableType) -> None:
    """Text to stdout as it is; a rich renderable through the console."""
    if isinstance(rendered, str):
        write(rendered)
    else:
        print_renderable(rendered)


def write(text: str) -> None:
    """Write a report to stdout; a reader that closed the pipe early is not an error."""
    emit([text])


def emit(chunks: Iterable[str]) -> None:
    """Write report chunks to stdout as they come. If the reader closes the pipe, stop writing
    but keep consuming, so that every run is still scored and the exit code reflects the gates."""
    if sys.stdout is None:
        err("procjudge: standard output is closed; nothing was written (use --output FILE, or a pipe)")
        raise typer.Exit(2)
    try:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
        for _ in chunks:
            pass
    except OSError as exc:
        err(f"procjudge: cannot write to standard output: {exc.strerror or exc}; nothing more was written")
        raise typer.Exit(2) from None


def outputs(values: list[str], default: str, known: list[str]) -> list[tuple[str, str | None]]:
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
            err(f"procjudge: --output {value}: unknown format {name!r}; known: {', '.join(known)}")
            raise typer.Exit(2)
        else:
            outputs.append((default, value))
            plain = True
    outputs = [(name, None if target == "-" else target) for name, target in outputs]
    if sum(target is None for _, target in outputs) > 1:
        err("procjudge: --output: only one report can go to standard output (-)")
        raise typer.Exit(2)
    if not plain and all(target is not None for _, target in outputs):
        outputs.insert(0, (default, None))  # no report named stdout: --format goes there
    targets = [os.path.abspath(t) for _, t in outputs if t is not None]
    if len(set(targets)) != len(targets):
        err("procjudge: --output: two reports would be written to the same file")
        raise typer.Exit(2)
    return outputs


def feed_reports(reporters: list[tuple[str, Reporter, str | None]], stream: Iterable[tuple[Result, list[str] | None]],
            collector: Collector) -> BatchReport:
    """Feed one stream of results to every report at once, each through its lifecycle; a report
    file is written whole or not at all. Returns the finished batch."""
    with contextlib.ExitStack() as stack:
        sinks: list[tuple[str, Reporter, TextIO | None]] = []
        for name, reporter, target in reporters:
            if getattr(reporter, "writes_files", False):  # parquet: the reporter writes its own files
                reporter.target = target  # type: ignore[attr-defined]
                stack.callback(reporter.abandon)  # type: ignore[attr-defined]
                sinks.append((name, reporter, None))
                continue
            handle = stack.enter_context(writing(Path(target), newline="")) if target is not None else None
            sinks.append((name, reporter, handle))

        def put(name: str, handle: TextIO | None, text: Any) -> None:
            if isinstance(text, Iterator):  # a report streamed in pieces (junit's spooled test cases)
                if handle is None:
                    emit(text)
                else:
                    for piece in text:
                        handle.write(piece)
            elif not isinstance(text, str):  # the table report: a rich renderable
                if handle is None:
                    print_renderable(text)
                else:
                    console_for(handle).print(text, crop=False)
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
    return report


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def find_runs(targets: list[str]) -> list[str]:
    """Run files under targets, with the configuration's excludes, includes and .gitignore rule."""
    from .discovery import discover

    config = configuration()
    return discover(targets, exclude=config.exclude, include=config.include, respect_gitignore=config.respect_gitignore)


def without_own_outputs(found: list[str], targets: list[str]) -> list[str]:
    """The discovered files less the reports this command writes: a -o target that is an earlier
    procjudge report (or empty), and the file standard output is redirected to (``> out.json``).
    A -o target that is a run stays an input, and writing it is refused."""
    from .safe_io import is_own_report, same_file_as

    own = [t for t in targets if os.path.exists(t) and is_own_report(t)]
    with contextlib.suppress(OSError, ValueError, AttributeError):
        if stat.S_ISREG(os.fstat(sys.stdout.fileno()).st_mode):
            own.append(f"/dev/fd/{sys.stdout.fileno()}")  # same_file_as stats it: the redirect target
    return [p for p in found if same_file_as(p, own) is None]


def progress(results: Iterable[Result], total: int) -> Iterator[Result]:
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


def terminate(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def interrupted(message: str, code: int) -> NoReturn:
    """Leave at once after Ctrl-C or SIGTERM: the report's temporary file is already removed on
    the way out; no exit hook runs (an interrupted pool's hooks can block or print tracebacks)."""
    err(message)
    flush_and_exit(code)


def flush_and_exit(code: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)


def stdin_targets(targets: list[str], spool: Any) -> list[str]:
    """``-`` among batch's targets read from standard input: JSON lines of runs (a first line that
    starts with ``{`` or ``[``), spooled to ``stdin.jsonl`` in a temporary folder that ``spool`` (an
    ExitStack) removes; else one target per line (files, folders or globs; blank lines and ``#``
    comments skipped), as ``find ... | procjudge batch -`` gives them."""
    import shutil
    import tempfile

    if "-" not in targets:
        return targets
    rest = [t for t in targets if t != "-"]
    stream = sys.stdin.buffer
    head = stream.read(64 * 1024)
    if head.lstrip()[:1] in (b"{", b"["):
        folder = spool.enter_context(tempfile.TemporaryDirectory(prefix="procjudge-stdin-"))
        path = os.path.join(folder, "stdin.jsonl")
        with open(path, "wb") as handle:
            handle.write(head)
            shutil.copyfileobj(stream, handle, 1024 * 1024)
        return rest + [path]
    text = (head + stream.read()).decode("utf-8", "replace")
    named = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not named:
        err("procjudge: warning: standard input (-) named no run file")
    return rest + named


def batch_inputs(targets: list[str], format: Enum | None, output: list[str], config: Config, *,
                 fail_on: list[str] | None, exclude: list[str] | None, include: list[str] | None,
                 respect_gitignore: bool | None, fail_under: float | None,
                 fail_under_mean: float | None) -> tuple[list[tuple[str, str | None]], list[str], Gates]:
    """``batch``'s reports, run files and gates from its options over the configuration's (exit 2
    on an unknown ``--fail-on`` finding or a bad ``-o``)."""
    from .batching import gate_findings
    from .detectors import ALL
    from .discovery import discover
    from .results import UsageError
    from .tally import Gates

    fail_on_name = "--fail-on" if fail_on else config.where("fail_on")
    try:
        gates_on = gate_findings([*(fail_on or [])] or list(config.fail_on), [d.id for d in ALL], fail_on_name)
    except UsageError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None
    chosen = outputs(output, format_of(format, "batch"), output_formats.names("batch"))
    found = discover(targets, exclude=[*config.exclude, *(exclude or [])], include=[*(include or config.include)],
                     respect_gitignore=config.respect_gitignore if respect_gitignore is None else respect_gitignore)
    paths = without_own_outputs(found, [target for _, target in chosen if target is not None])
    from .discovery import empty_globs

    if paths:  # with nothing found at all, batch says so as an error
        for pattern in empty_globs(targets):
            err(f"procjudge: warning: {pattern} matches no file")
    gates = Gates(fail_under=fail_under if fail_under is not None else config.fail_under,
                  fail_under_mean=fail_under_mean if fail_under_mean is not None else config.fail_under_mean,
                  fail_on=gates_on,
                  fail_under_name="--fail-under" if fail_under is not None else config.where("fail_under"),
                  fail_under_mean_name="--fail-under-mean" if fail_under_mean is not None else config.where("fail_under_mean"),
                  fail_on_name=fail_on_name)
    return chosen, paths, gates


def project_root() -> str:
    """What CI annotations are relative to, as ruff does: the folder of the configuration in force,
    else the working folder."""
    config = configuration()
    return os.path.dirname(os.path.abspath(config.path)) if config.path else os.getcwd()


def run_batch(targets: list[str], paths: list[str], chosen: list[tuple[str, str | None]], gates: Gates, policy: Policy, *,
              quiet: bool, engine: str, scheduler: str | None, jobs: int) -> BatchReport:
    """One scoring pass feeding every report asked for (exit 2 on what cannot be done)."""
    from . import __version__
    from .batching import plan, results
    from .catalogue import catalogue
    from .results import UsageError
    from .tally import Collector

    def reporter(name: str) -> Reporter:
        made: Reporter = output_formats.reporter(name, quiet=lambda: quiet, rules=lambda: catalogue(policy),
                                                 version=lambda: __version__, root=project_root,
                                                 limits=lambda: policy.limits)
        return made

    nothing = f"{no_runs(targets)} (hidden, git-ignored and excluded files are skipped; --list-files shows what is read)"
    try:
        batch = plan(paths, chosen, gates, engine=engine, scheduler=scheduler, workers=jobs or os.cpu_count() or 1,
                     reporter=reporter, nothing=nothing.removeprefix("procjudge: "))
    except UsageError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None
    from .safe_io import WriteError

    collector = Collector(gates, keep_rows=not quiet and batch.keeps_rows, limits=policy.limits)
    try:
        return feed_reports(batch.reporters, collector.feed(progress(results(batch, policy), len(paths))), collector)
    except (WriteError, UsageError) as exc:  # UsageError: a --scheduler that does not answer
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


def gate_names(gates: Gates | None) -> str:
    """The per-run gates in force, each named as it was set (an option, or a configuration key
    with its file): a gate inherited from a parent folder's configuration is never a mystery."""
    if gates is None:
        return ""
    named = [f"{gates.fail_under_name} {gates.fail_under:g}"] if gates.fail_under is not None else []
    named += [f"{gates.fail_on_name} {','.join(gates.fail_on)}"] if gates.fail_on else []
    return f" ({'; '.join(named)})" if named else ""


ERRORS_SHOWN = 50  # unreadable runs named on stderr; the rest counted in one line


def finish_batch(report: BatchReport, chosen: list[tuple[str, str | None]], quiet: bool, gates: Gates | None = None) -> int:
    """The batch's stderr lines (warnings, unreadable files, gate failures); its exit code."""
    from .render.text import warning_lines

    if not quiet:
        for line in warning_lines(report.warnings, report.warning_count):
            err(line)
    for error in report.errors[:ERRORS_SHOWN]:
        err(f"procjudge: {error.message}")
    if report.summary.errors > ERRORS_SHOWN:
        err(f"procjudge: {report.summary.errors - ERRORS_SHOWN:,} more unreadable runs or files (the reports list the first "
            f"{len(report.errors):,}; limits.errors_kept in the policy)")
    failed = report.summary.gate.failed_runs
    if failed and any(name != "table" or target is not None for name, target in chosen):
        err(f"procjudge: {failed:,} of {report.summary.runs_scored:,} runs failed the gate{gate_names(gates)}")
    if report.mean_failure:
        err(f"procjudge: {report.mean_failure}")
    return report.exit_code


def check_plot_target(plot: Path | None, inputs: list[str]) -> None:
    """Exit 2 when ``--plot`` would overwrite an input or cannot be written."""
    if plot is None:
        return
    from .safe_io import check_target

    problem = check_target(str(plot), inputs, "--plot")
    if problem:
        err(f"procjudge: {problem}")
        raise typer.Exit(2)


def draw_plot(result: Comparison, plot: Path | None) -> None:
    """Draw a comparison to ``--plot`` (exit 2 when it cannot be drawn)."""
    if plot is None:
        return
    from .plot import PlotError
    from .plot import plot as draw

    try:
        draw(result, str(plot))
    except PlotError as exc:
        err(f"procjudge: {exc}")
        raise typer.Exit(2) from None


def usage(message: str) -> NoReturn:
    """Bad usage: the message on stderr, exit 2."""
    err(f"procjudge: {message}")
    raise typer.Exit(2)


# Options more than one command declares, declared once.
TARGETS = typer.Argument(..., metavar="DIR|GLOB...", help="Folders, files or globs of run files.")
OUTPUT = typer.Option(None, "--output", "-o", metavar="FILE",
                      help="Write the report to FILE (written whole or not at all; - is standard output).")
JOBS = typer.Option(0, "--jobs", "-j", min=0, max=MAX_JOBS, help="Worker processes (0: the machine's cores).")
