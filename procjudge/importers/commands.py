"""``procjudge import``: one command per built-in importer, ``import list`` and ``import auto``.

Adding an importer is a module with its ``import_files`` and its entry in ``registry.BUILTINS`` (or,
from another package, an entry point in the group ``procjudge.importers``): ``import auto``
recognises its files and ``import auto --using NAME`` forces it. A command of its own here is
only for options of its own (``--reports``, ``--hidden-from``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from ..console import IMPORT_OUT_OPTION, OVERWRITE_OPTION, err, plural, reports_option

if TYPE_CHECKING:
    from .driver import Imported

IMPORT_JOBS_OPTION = typer.Option(1, "--jobs", "-j", min=0, max=256,
                                  help="Worker processes reading the logs, 0 to 256 (0: the machine's cores; default 1). "
                                       "The run files written are the same whatever the number.")


IMPORT_ENGINE_OPTION = typer.Option("local", "--engine", metavar="local|dask",
                                    help="Where the logs are read: local worker processes, or a Dask cluster (pip install "
                                         "'procjudge[dask]'): the one at --scheduler, else a local one of --jobs workers. "
                                         "The runs come back here and are written in input order: the same files either way.")
IMPORT_SCHEDULER_OPTION = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                       help="With --engine dask: the scheduler to use, e.g. tcp://10.0.0.5:8786 (its "
                                            "workers need procjudge installed and the logs at the same paths).")


def _workers(jobs: int) -> int:
    return jobs or os.cpu_count() or 1


def reading_on(engine: str, scheduler: str | None) -> Any:
    """The context the import's files are read in (``--engine``, ``--scheduler``); exit 2 on an
    engine that is not known or not installed, or a scheduler without Dask."""
    from .driver import Engine
    from .driver import engine as reading

    if engine not in ("local", "dask"):
        err(f"procjudge: --engine {engine!r}: expected local or dask")
        raise typer.Exit(2)
    if scheduler and engine != "dask":
        err("procjudge: --scheduler needs --engine dask")
        raise typer.Exit(2)
    if engine == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            err("procjudge: --engine dask needs Dask: pip install 'procjudge[dask]'")
            raise typer.Exit(2) from None
    return reading(Engine(engine, scheduler))


import_app = typer.Typer(help="Turn other tools' logs into run files.", no_args_is_help=True, rich_markup_mode=None)


def require_files(paths: list[Path]) -> None:
    """Exit 2 naming the first path that is not a regular file, and what it is instead."""
    from ..locate import regular_file_problem

    for path in paths:
        problem = regular_file_problem(str(path))
        if problem is not None:
            err(f"procjudge: {path}: {problem.replace('expected a run file', 'expected a log file')}")
            raise typer.Exit(2)


def files_in(paths: list[Path], suffixes: tuple[str, ...], keep: Callable[[Path], bool] | None = None) -> list[Path]:
    """The files named, and in each folder named the files ending in ``suffixes`` (searched
    recursively, in sorted order; only those ``keep`` accepts, when given: a folder of logs also
    holds other JSON); a folder with none is an error naming the suffixes."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes)
                            and (keep is None or keep(p)))
            if not inside:
                err(f"procjudge: {path}: no {' or '.join(suffixes)} files in this folder")
                raise typer.Exit(2)
            found += inside
        else:
            found.append(path)
    require_files(found)
    return found


SHOWN = 20  # errors and notes printed at most (the rest are counted)


def _likely_importer(path: str, used: str | None) -> str | None:
    """The importer that recognises a file, when it is not the one used."""
    from .registry import recognise, registry

    found = recognise(path, registry()[0])
    return found.name if found is not None and found.name != used else None


def error_lines(errors: list[Any], used: str | None) -> list[str]:
    """The errors as lines: a file none of whose many records could be read is one line, naming
    the importer that recognises it; at most SHOWN lines, the rest counted."""
    by_path: dict[str, list[Any]] = {}
    for issue in errors:
        by_path.setdefault(issue.path, []).append(issue)
    lines: list[str] = []
    for path, found in by_path.items():
        if len(found) > 3 and all(getattr(issue, "unwritten", False) for issue in found):
            lines.append(f"{path}: {len(found):,} runs were read but could not be written under --out (first, line "
                         f"{found[0].line}: {found[0].reason}); free space or choose another --out, then import again")
        elif len(found) > 3:
            likely = _likely_importer(path, used)
            hint = f"; it looks like a {likely} log: procjudge import {likely} {path}" if likely else ""
            lines.append(f"{path}: {len(found):,} records could not be read{f' as {used} logs' if used else ''} (first, "
                         f"line {found[0].line}: {found[0].reason}){hint}")
        else:
            lines += [str(issue) for issue in found]
    if len(lines) > SHOWN:
        lines = lines[:SHOWN] + [f"{len(lines) - SHOWN:,} more errors"]
    return lines


class Folders:
    """The agent folders an import creates under ``--out``, so that those left empty (every record
    of their file refused) are removed again: the import leaves no empty folder behind. Nothing it
    did not create is touched, and a folder is removed only while empty."""

    def __init__(self, out: Path) -> None:
        if out.exists() and not out.is_dir():
            err(f"procjudge: --out {out} is a file; give a folder (it is created when missing)")
            raise typer.Exit(2)
        self.out, self.existed = out, out.is_dir()
        try:
            self.before = {p.name for p in out.iterdir() if p.is_dir()} if self.existed else set()
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            err(f"procjudge: --out {out}: cannot create or read this folder: {exc.strerror or exc}")
            raise typer.Exit(2) from None

    @contextlib.contextmanager
    def unless_refused(self) -> Iterator[None]:
        """The import inside, which may find that it cannot be done (a Dask scheduler that does
        not answer): then exit 2 saying why, leaving no folder it created."""
        from ..results import UsageError

        try:
            yield
        except UsageError as exc:
            self.tidy()
            if not self.existed:
                with contextlib.suppress(OSError):
                    self.out.rmdir()
            err(f"procjudge: {exc}")
            raise typer.Exit(2) from None

    def tidy(self) -> None:
        if not self.out.is_dir():
            return
        for folder in self.out.iterdir():
            if folder.is_dir() and folder.name not in self.before:
                try:
                    folder.rmdir()  # only while empty
                except OSError:
                    pass
        if not self.existed:
            try:
                self.out.rmdir()
            except OSError:
                pass


def import_report(done: Imported, out: Path, unit: str, note_unit: str, used: str | None = None,
                  folders: Folders | None = None) -> NoReturn:
    """Print an import's errors and notes (the first SHOWN of each) and its one-line summary, after
    removing the folders the import created and left empty; exit 2 on an error."""
    if folders is not None:
        folders.tidy()
    written, issues, writes = done.written, done.issues, done.writes
    errors = [issue for issue in issues if not issue.note]
    notes = [issue for issue in issues if issue.note]
    for line in error_lines(errors, used):
        err(f"procjudge: {line}")
    for issue in notes[:SHOWN]:
        err(f"procjudge: note: {issue}")
    if len(notes) > SHOWN:
        err(f"procjudge: note: {len(notes) - SHOWN:,} more notes")
    skipped = f"; {plural(len(errors), unit)} skipped" if errors else ""
    skipped += f"; {plural(len(notes), note_unit)}" if notes else ""
    kept = [f"{writes.unchanged:,} already there, unchanged"] if writes.unchanged else []
    kept += [f"{writes.beside:,} beside an earlier import's file of the same name"] if writes.beside else []
    kept += [f"{writes.replaced:,} replacing an earlier import's file"] if writes.replaced else []
    kept_text = f" ({'; '.join(kept)})" if kept else ""
    sys.stdout.write(f"imported {plural(written, 'run')} into {out}{kept_text}{skipped}\n")
    raise typer.Exit(2 if errors else 0)


def run_import(import_files: Callable[..., Imported], files: list[Path], suffixes: tuple[str, ...],
               out: Path, overwrite: bool, unit: str, name: str, *, jobs: int, engine: str, scheduler: str | None,
               keep: Callable[[Path], bool] | None = None, **options: Any) -> NoReturn:
    """The body every import command shares: the files (folders searched for ``suffixes``, those
    ``keep`` accepts), the output folder, the importer's ``import_files`` with ``options``, read in
    ``jobs`` workers on ``engine`` (``--jobs``, ``--engine``, ``--scheduler``), then the report and
    exit."""
    with reading_on(engine, scheduler):
        found = files_in(list(files), suffixes, keep)
        folders = Folders(out)
        with folders.unless_refused():
            done = import_files([str(f) for f in found], str(out), overwrite=overwrite, jobs=_workers(jobs), **options)
    import_report(done, out, unit, "note", name, folders)


@import_app.command("reflexion")
def import_reflexion(
    files: list[Path] = typer.Argument(..., metavar="FILE.jsonl...",
                                       help="Reflexion-family logs (LDB, Reflexion, MapCoder's Reflexion runs), or folders "
                                            "holding .jsonl logs."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent",
                                     help="Agent name (default: the record's model, else the file name after the nearest "
                                          "folder that is neither generic nor a benchmark's name: codellama, "
                                          "reflexion/gpt-4-1106-preview)."),
    hidden_from: Path | None = typer.Option(None, "--hidden-from", metavar="OTHER.jsonl",
                                               help="A second file of the same runs whose is_solved is a second hidden verdict, "
                                                    "joined on the task (e.g. HumanEvalET)."),
    hidden_name: str = typer.Option("extended", "--hidden-name", help="Name of the second hidden suite."),
    max_iterations: int | None = typer.Option(None, "--max-iterations", min=1,
                                                 help="The loop's budget of submissions (default: the most any task in the file "
                                                      "used)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import code-repair logs (one JSON object per task per line) as one run file per task.

    Per iteration: the visible tests by name (the assert text) and their outcome, the output after
    a failure, the counts, the code, the diff from the previous iteration (the repeated import
    header set aside) and a code hash; is_solved becomes the held-back suite after the last
    iteration. A malformed line is reported with its line number; every other line is imported.

    Example: procjudge import reflexion ldb/humaneval/*/results.jsonl --out imported/
    """
    from .reflexion import import_files

    files = files_in(list(files), (".jsonl",))
    require_files([hidden_from] if hidden_from else [])
    folders = Folders(out)
    with reading_on(engine, scheduler):
        done = import_files([str(f) for f in files], str(out), agent=agent,
                            hidden_from=str(hidden_from) if hidden_from else None, max_iterations=max_iterations,
                            hidden_name=hidden_name, jobs=_workers(jobs), overwrite=overwrite)
    import_report(done, out, "line", "note", "reflexion", folders)


@import_app.command("inspect")
def import_inspect(
    files: list[Path] = typer.Argument(..., metavar="LOG...", help="Inspect AI logs (.eval or .json), or folders holding them."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the log's model)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import Inspect AI evaluation logs as one run file per sample and epoch.

    A sample whose agent changed files with tool calls and was scored once is read as its own loop,
    as procjudge's Inspect scorer reads it live (Claude Code and Codex run by inspect_swe too):
    an iteration is an edit and the checks on it, the task's score the held-back outcome.
    Otherwise an iteration is one scored submission: a multi-attempt agent's intermediate scores,
    then the final score when it is a new answer. Per iteration the score, test counts from the scorer's
    metadata (passed, total), the submitted answer as code, the scorer's explanation as feedback,
    the tool calls since the previous submission, and the timing. Zstandard-compressed .eval logs
    need Python 3.14 or pip install 'procjudge[inspect]'.

    Example: procjudge import inspect logs/*.eval --out imported/
    """
    from .inspect import import_files

    files = files_in(list(files), (".eval", ".json"))
    folders = Folders(out)
    from ..console import policy_in_force

    with reading_on(engine, scheduler):
        done = import_files([str(f) for f in files], str(out), agent=agent, limits=policy_in_force(None).limits,
                            jobs=_workers(jobs), overwrite=overwrite)
    import_report(done, out, "log", "note", "inspect", folders)


class Unlisted(str, Enum):
    """What an instance is that a results file does not list."""

    unknown = "unknown"
    unresolved = "unresolved"


UNLISTED_OPTION = typer.Option(
    Unlisted.unknown, "--unlisted",
    help="What an instance that a --reports FILE does not list is: unknown (one note names them), or unresolved "
         "(the file lists every resolved instance).")


@import_app.command("swe-agent")
def import_swe_agent(
    files: list[Path] = typer.Argument(..., metavar="TRAJ...",
                                       help="mini-swe-agent or SWE-agent trajectories (.traj.json, .traj), or folders holding "
                                            "them."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    reports: Path | None = typer.Option(
        None, "--reports", metavar="DIR|FILE", exists=True,
        help="SWE-bench evaluation reports: DIR/<instance>/report.json or DIR/<instance>.json, or a file that lists "
             "instances by outcome (results.json, or the harness summary with resolved_ids, unresolved_ids, error_ids) "
             "(default: report.json beside each trajectory, or logs/<instance>/report.json near them)."),
    unlisted: Unlisted = UNLISTED_OPTION,
    agent: str | None = typer.Option(None, "--agent",
                                     help="Agent name (default: the model in the trajectory's configuration, else its run "
                                          "folder)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import shell-agent trajectories as one run file per task.

    Reads mini-swe-agent (1.x command blocks, 2.x tool calls) and SWE-agent (0.x ACI commands
    such as edit N:M, 1.x str_replace_editor calls). Every check the agent made is read as one: its
    test runs (with their counts) and the scripts and inline code it ran to see what its code does
    (a reproduction's exit status, traceback or printed verdict); installs never are. An iteration
    is an edit of the code and the checks that saw it; a check that could not run (a missing
    runner or module, a cut output) is named, not failed. Per iteration the checks in order, the
    files written (throw-away files marked) with each edit rebuilt as text, the THOUGHT as the
    change summary and the timing; the last iteration carries the submitted diff and, shown beside
    the score but never scoring it, the held-back FAIL_TO_PASS and PASS_TO_PASS suites. A
    trajectory that edits and never checks is one iteration that nothing validated; every
    trajectory with an edit imports, with or without a report; one unreadable file is an error that
    costs that file only.

    Example: procjudge import swe-agent trajs/ --reports logs --out imported/
    """
    from .swe_agent import import_files

    run_import(import_files, files, (".traj.json", ".traj"), out, overwrite, "file", "swe-agent", agent=agent,
               reports=str(reports) if reports else None, unlisted=unlisted.value,
               jobs=jobs, engine=engine, scheduler=scheduler)


@import_app.command("openhands")
def import_openhands(
    files: list[Path] = typer.Argument(..., metavar="LOG...",
                                       help="OpenHands evaluation output (one instance per line), completion logs "
                                            "(llm_completions/<instance>/<model>-<time>.json), or folders holding "
                                            "either."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    reports: Path | None = reports_option("the line's own test_result.report"),
    unlisted: Unlisted = UNLISTED_OPTION,
    agent: str | None = typer.Option(None, "--agent",
                                     help="Agent name (default: the model in the line's metadata, or in a completion "
                                          "log's file name)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import OpenHands evaluation output (output.jsonl) or completion logs as one run file per instance.

    The history's events are read as a shell agent's steps: run actions are commands (test runs
    and builds recognised as for swe-agent), edit and write actions are edits of their path; the
    software agent SDK's events (ActionEvent, ObservationEvent) are read alike. An
    iteration is one or more edits followed by a test run or a failed build; the last iteration
    carries test_result.git_patch and the held-back verdict. Lines are streamed; a malformed line
    is reported with its number and the others are imported. Completion logs
    (llm_completions/<instance>/<model>-<time>.json, or a SWE-bench submission's
    trajs/<instance>/*.json) are read from each instance's latest call, whose messages hold every
    turn: the tool calls execute_bash, str_replace_editor and execute_ipython_cell as steps.

    Example: procjudge import openhands evaluation/outputs/*/output.jsonl --out imported/

    Example: procjudge import openhands trajs/ --reports results/results.json --out imported/
    """
    from .openhands import import_files
    from .registry import is_openhands_file

    run_import(import_files, files, (".jsonl", ".json"), out, overwrite, "line", "openhands", agent=agent,
               reports=str(reports) if reports else None, unlisted=unlisted.value,
               jobs=jobs, engine=engine, scheduler=scheduler, keep=is_openhands_file)


@import_app.command("atif")
def import_atif(
    files: list[Path] = typer.Argument(..., metavar="TRAJECTORY.json...",
                                       help="ATIF trajectories (Harbor: TRIAL/agent/trajectory.json), Harbor trials' "
                                            "result.json, or folders holding them (a Harbor job folder)."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the trajectory's agent name and model)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import Agent Trajectory Interchange Format trajectories as one run file each.

    Tool calls are read as a shell agent's steps: shell commands (command, cmd, keystrokes),
    file edits (an editor's str_replace/create/insert, write and edit tools, apply_patch) and
    reads. In a Harbor trial folder the verifier's ctrf.json or reward.txt is the held-back suite,
    result.json's tokens and cost are kept and its exception is named (never charged to the agent);
    a trial without a trajectory is read from its agent's own log (a Claude Code session or
    stream-json, a Codex rollout or exec --json stream, mini-swe-agent's trajectory), else a note.

    Example: procjudge import atif jobs/*/*/agent/trajectory.json --out imported/
    """
    from .atif import import_files

    run_import(import_files, files, ("trajectory.json", "result.json"), out, overwrite, "file", "atif", agent=agent,
               jobs=jobs, engine=engine, scheduler=scheduler)


@import_app.command("claude-code")
def import_claude_code(
    files: list[Path] = typer.Argument(..., metavar="SESSION.jsonl...",
                                       help="Claude Code session files, or folders holding them (a project folder "
                                            "under ~/.claude/projects/, or the whole of it)."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the model the session's messages name)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import Claude Code sessions, and what `claude -p --output-format stream-json` printed, as one
    run file per session.

    The conversation the session ended on (its parentUuid chain, the chains before a /clear or a
    compaction, and its sub-agents' turns) is read as a shell agent's steps: Bash commands are the
    checks (a reproduction, a test run), Edit, MultiEdit and Write the edits, Read and the other
    tools reads. Tokens are kept in run.usage (and a stream's total_cost_usd); a line that is not
    JSON costs that line.

    Example: procjudge import claude-code ~/.claude/projects/-home-me-shop --out imported/
    """
    from .claude_code import import_files

    run_import(import_files, files, (".jsonl",), out, overwrite, "file", "claude-code", agent=agent,
               jobs=jobs, engine=engine, scheduler=scheduler)


@import_app.command("codex")
def import_codex(
    files: list[Path] = typer.Argument(..., metavar="ROLLOUT.jsonl...",
                                       help="Codex CLI rollouts, or folders holding them (~/.codex/sessions)."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: the model of the rollout's turns)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import Codex CLI rollouts, and what `codex exec --json` printed, as one run file each.

    Shell calls (shell, exec_command, local_shell) are the checks, with their exit status from
    exec_command_end, the output's metadata or its 'Process exited with code N'; apply_patch is
    the edits its patch names (a failed patch none); other tools are reads. A `codex exec --json`
    stream gives its commands, their output and exit codes, and the files each change names (not
    their text). Tokens are kept in run.usage; a line that is not JSON costs that line.

    Example: procjudge import codex ~/.codex/sessions/2026/11 --out imported/
    """
    from .codex import import_files

    run_import(import_files, files, (".jsonl",), out, overwrite, "file", "codex", agent=agent,
               jobs=jobs, engine=engine, scheduler=scheduler)


@import_app.command("terminal-bench")
def import_terminal_bench(
    files: list[Path] = typer.Argument(..., metavar="TRIAL...",
                                       help="Terminal-Bench 1 trial folders or their results.json, or folders holding "
                                            "them (a run folder, tb run's runs/)."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent",
                                     help="Agent name (default: run_metadata.json's agent_name and model_name)."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Import Terminal-Bench 1 trials as one run file per trial.

    The agent's commands are read from the trial's terminal (sessions/agent.log): the commands
    typed at the shell's prompt (Terminus and other keystroke agents), or the steps
    mini-swe-agent's console printed with their exit status. parser_results is the held-back
    suite, the tokens are kept, and failure_mode is named (never charged to the agent). A trial
    whose agent ran its commands inside its own process (OpenHands, ...) is a note.

    Example: procjudge import terminal-bench runs/2025-08-07__20-46-16 --out imported/
    """
    from .terminal_bench import import_files

    run_import(import_files, files, ("results.json",), out, overwrite, "file", "terminal-bench", agent=agent,
               jobs=jobs, engine=engine, scheduler=scheduler)


@import_app.command("list")
def import_list() -> None:
    """List the importers: the built-in ones and those other packages install (entry-point group
    procjudge.importers)."""
    from .registry import BUILTINS, registry

    importers, problems = registry()
    builtin = {b.name for b in BUILTINS}
    width = max(len(i.name) for i in importers)
    for importer in importers:
        origin = "" if importer.name in builtin else "  (plugin)"
        sys.stdout.write(f"{importer.name:<{width}}  {importer.summary}{origin}\n")
    for problem in problems:
        err(f"procjudge: warning: {problem}")


def import_inputs(targets: list[Path]) -> list[str]:
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
            err(f"procjudge: {target}: no such file or folder")
            raise typer.Exit(2)
    return found


def _passed_over_because(path: str) -> str:
    """Why no importer took a file, with what it begins with as the evidence."""
    from ..render.text import literal

    try:
        with open(path, "rb") as handle:
            head = handle.read(48)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if not head:
        return "empty"
    shown = literal(head.decode("utf-8", "replace"), 48)
    return f"no importer recognises its name and first bytes ({shown!r}; procjudge import list says what each reads)"


@import_app.command("auto")
def import_auto(
    targets: list[Path] = typer.Argument(..., metavar="PATH...", help="Log files, or folders to search for them."),
    out: Path = IMPORT_OUT_OPTION,
    overwrite: bool = OVERWRITE_OPTION,
    agent: str | None = typer.Option(None, "--agent", help="Agent name (default: each importer's own)."),
    using: str | None = typer.Option(None, "--using", metavar="IMPORTER",
                                     help="Read every file with this importer instead of recognising each (see import list)."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="List each file under the folders that was passed over, with its first bytes."),
    jobs: int = IMPORT_JOBS_OPTION,
    engine: str = IMPORT_ENGINE_OPTION,
    scheduler: str | None = IMPORT_SCHEDULER_OPTION,
) -> None:
    """Recognise each log's format and import it: swe-agent trajectories, OpenHands output,
    ATIF trajectories, Inspect logs, Reflexion-family logs, and any installed plugin's format.

    A file is recognised by its name and first bytes; in a folder, files no importer recognises
    are passed over (and counted), while a named file that is not recognised is an error.

    Example: procjudge import auto runs/ --out imported/
    """
    importers, chosen = _importers(using)
    folders = Folders(out)
    groups, passed_over, unknown = _recognised(targets, importers, chosen)
    with reading_on(engine, scheduler), folders.unless_refused():
        done = _import_groups(groups, importers, out, agent, jobs, overwrite)
    if passed_over:
        err(f"procjudge: {plural(len(passed_over), 'file')} under the folders recognised by no importer, passed over"
            + ("" if verbose else " (--verbose lists them)"))
        for path in passed_over if verbose else ():
            err(f"procjudge: passed over {path}: {_passed_over_because(path)}")
    if not groups and not unknown:
        folders.tidy()
        err(f"procjudge: no logs found in {' '.join(map(str, targets))} (procjudge import list names what each importer "
            "reads); nothing imported")
        raise typer.Exit(2)
    if unknown:
        from .base import ImportIssue

        done.issues += [ImportIssue(path, 1, "not a log any importer recognises (see procjudge import list; "
                                    "--using NAME forces one)") for path in unknown]
    import_report(done, out, "file", "note", using, folders)


def _importers(using: str | None) -> tuple[list[Any], Any]:
    """The importers (their problems warned of), and the one ``--using`` names (exit 2 when none
    is so named)."""
    from .registry import registry

    importers, problems = registry()
    for problem in problems:
        err(f"procjudge: warning: {problem}")
    if using is None:
        return importers, None
    chosen = next((i for i in importers if i.name == using), None)
    if chosen is None:
        err(f"procjudge: no importer named {using!r}; there are: {', '.join(i.name for i in importers)}")
        raise typer.Exit(2)
    return importers, chosen


def _recognised(targets: list[Path], importers: list[Any], chosen: Any) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """The files under ``targets`` by the importer that reads them (``chosen``, else the one that
    recognises each), the files under folders none recognises (passed over), and the named files
    none recognises (errors)."""
    from .registry import recognise

    named = {str(t) for t in targets if t.is_file()}
    groups: dict[str, list[str]] = {}
    passed_over: list[str] = []
    unknown: list[str] = []
    for path in import_inputs(list(targets)):
        importer = chosen or recognise(path, importers)
        if importer is None:
            (unknown if path in named else passed_over).append(path)
        else:
            groups.setdefault(importer.name, []).append(path)
    trials = [os.path.join(os.path.dirname(p), "agent", "") for p in groups.get("atif", ())
              if os.path.basename(p) == "result.json"]
    if trials and chosen is None:  # a Harbor trial's agent logs are the trial's: read once, with its verdict
        for name in [n for n in groups if n != "atif"]:
            groups[name] = [p for p in groups[name] if not p.startswith(tuple(trials))]
            if not groups[name]:
                del groups[name]
    return groups, passed_over, unknown


def _import_groups(groups: dict[str, list[str]], importers: list[Any], out: Path, agent: str | None, jobs: int,
                   overwrite: bool) -> Imported:
    """Each importer's files imported, one line each on stderr: how many files, how many runs."""
    from .driver import Imported
    from .registry import Builtin, takes

    by_name = {i.name: i for i in importers}
    done = Imported()
    result: Imported | tuple[int, list[Any]]
    for name, paths in groups.items():
        importer = by_name[name]
        if isinstance(importer, Builtin):
            result = importer.import_files(paths, str(out), agent=agent, jobs=_workers(jobs), overwrite=overwrite)
        else:  # a plug-in: --overwrite reaches it when its import_files takes it
            options = {"overwrite": overwrite} if takes(importer.import_files, "overwrite") else {}
            result = importer.import_files(paths, str(out), agent=agent, **options)
        count = done.written
        done.add(result)
        err(f"procjudge: {name}: {plural(len(paths), 'file')}, {plural(done.written - count, 'run')}")
    return done
