"""Shell-agent trajectories as run files: what the swe-agent, OpenHands and ATIF importers share.

Each of those logs is, underneath, a list of steps: the agent's thought, one action (a shell
command, or a structured edit of a file) and what it printed. Each format's reader turns its log
into :class:`Step` objects and a :class:`Trajectory`; :func:`convert` turns that into a run.

- a **test run** is a command whose runner is recognised (Django's ``tests/runtests.py``,
  ``pytest`` / ``py.test`` / ``python -m pytest``, ``python -m unittest``, ``tox``, ``nox``,
  ``go test``, ``cargo test``, ``npm``/``yarn``/``pnpm test``, ``jest``, ``vitest``, ``ctest``,
  ``make test``/``check``) and whose output carries counts (unittest's ``Ran N tests``, pytest's
  summary line, Go's ``--- PASS``/``--- FAIL`` lines and package results, Cargo's ``test result:``,
  Jest's and Vitest's ``Tests:`` line, CTest's ``tests passed, N tests failed out of M``,
  GoogleTest's ``[  PASSED  ]``/``[  FAILED  ]``); a recognised runner whose output has no counts
  (an import error, a system check that fails, a compile error) is a run that did not build. Any
  other command, a reproduction script among them, is not a test run;
- a **build** (``make``, ``cmake --build``, ``cargo build``, ``go build``, ``npm run build``,
  ``tsc``, ``gcc``/``clang`` and their C++ forms) that exits non-zero is a failed build, which
  ends an iteration like a test run; a build that succeeds is an ordinary step (it has no counts
  to score);
- an **edit** is a command that writes a file (``sed -i``, ``perl -pi``, a redirection of
  ``cat``/``echo``/``printf``, ``tee``, a Python script that opens a file for writing,
  ``cp``/``mv`` onto a path, ``rm`` of anything but build output such as ``build/``,
  ``__pycache__`` or ``*.o``, ``git checkout``/``git restore`` of files, ``patch``,
  ``git apply``) or a structured edit the format records
  with its path;
- a check run while the agent's changes are set aside (``git stash``, the run, ``git stash pop``,
  in one command or across steps; or every file of the repository's own it changed restored with
  ``git checkout``/``git restore``, or each of its edits undone by hand: ``sed -i '5s/a/b/'``
  then ``sed -i '5s/b/a/'``, an editor's replace made the other way; until it changes one
  again) shows what the unchanged code
  does: it ends no iteration, is no test run of the agent's code, and is kept in ``checks``
  marked ``on_base``;
- every other step is a read or a search.

**An iteration is one or more edits followed by a test run or a failed build** (checks before
any edit are the baseline; a check with no edit since the previous one is a re-run; ``test_runs`` counts the test runs,
not the builds). Edits after the last check belong to the final iteration: they were submitted
untested, and a note says so. Per iteration: the test command and its targets as the suite
identity (counts from different commands are never compared), the counts and the tests by name,
the files written (marked ``scratch`` when the submitted diff does not contain them or when they
lie outside the repository; with no submitted diff only the second applies), the thoughts of the
edits as the change summary, and the time of the first step with the duration. The final
iteration carries the submitted diff (and after it its own edits of the repository's files that
the submission leaves out) and the held-back suites. Iterations are not graded
submissions, so no submission time is recorded and the run's budget is the number of iterations
it has.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, cast

from msgspec.structs import replace

from ..facts import DECIMAL, SOURCE_FILES, is_test_path
from ..model import (
    Actions,
    Build,
    Changes,
    CheckOutcome,
    Counts,
    EditText,
    EditVia,
    Entry,
    FileChange,
    FileStatus,
    Frame,
    IterationTelemetry,
    LocalCheck,
    RunFile,
    RunInfo,
    Task,
    TestOutcome,
    TestResults,
)
from . import edits as rebuild
from .base import NothingLogged
from .build import held_back, outcomes
from .checks import script_run
from .classify import build_command, copies, segments, test_command, without_prefixes, written_files
from .edits import words_of
from .environment import held_back_environment, project_modules, unavailable, unavailable_code
from .history import ancestors_shown, history_reads
from .probes import (
    discarded_files,
    find_checks,
    made_for_itself,
    same_as_unchanged,
    scaffold_folders,
    scratch_write,
    script_of,
    tracked_files,
)
from .replay import rebuild_steps
from .sed import parse_sed, sed_arguments
from .steps import REPO_ROOTS, Step, diff_files, is_scratch, outside_repo, repo_relative
from .test_output import Counts as TestCounts


def _iso(seconds: float | None) -> str | None:
    """An epoch time as ISO 8601; None for none, and for one no calendar holds (past year 9999)."""
    if seconds is None or not -62_135_596_800 <= seconds < 253_402_300_800:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Trajectory:
    """A shell agent's log, read by a format's reader: what :func:`convert` needs."""

    instance: str
    agent: str
    source: str
    steps: list[Step]
    submission: str | None = None  # the submitted diff; None when the log does not carry it
    statement: str = ""
    roots: tuple[str, ...] = REPO_ROOTS  # where the repository lies in the agent's machine
    hidden: list[dict[str, Any]] = field(default_factory=list)  # held-back suites, by name
    notes: list[str] = field(default_factory=list)
    language: str | None = None
    held_back_log: str | None = None  # the held-back run's own output (SWE-bench's test_output.txt), where found


def convert(trajectory: Trajectory) -> RunFile:
    """One trajectory -> one run, built as the typed model (the builder of ``local_runs`` runs)."""
    submitted = diff_files(trajectory.submission) if trajectory.submission is not None else None
    all_steps = trajectory.steps
    own = project_modules(all_steps, trajectory.submission, trajectory.roots)
    broken = held_back_environment(trajectory.hidden, trajectory.held_back_log or "", own)
    if broken:
        note = (f"held-back run broken by its environment: {broken}; its outcome is not the agent's, so it is left "
                "out and nothing is charged")
        trajectory = dataclasses.replace(trajectory, hidden=[], notes=[*trajectory.notes, note])
    all_steps = [_unavailable(step, own) for step in _skips_checked(all_steps, trajectory.statement)]
    all_steps = find_checks(all_steps, submitted, trajectory.roots, own, trajectory.statement)
    all_steps = rebuild_steps(all_steps, trajectory.submission, trajectory.roots)
    tracked = tracked_files(all_steps, submitted, trajectory.roots)
    all_steps = _set_aside(all_steps, tracked, trajectory.roots)
    discarded = discarded_files(all_steps, trajectory.roots, tracked)
    if submitted is None:  # no submitted diff to say which files are the code: a reproduction's project is not
        discarded |= scaffold_folders(all_steps, trajectory.roots, tracked)
    own = _own_submission(all_steps, submitted, tracked, trajectory.roots, discarded)
    all_steps = _code_edits(all_steps, lambda path: scratch_write(path, submitted, trajectory.roots, tracked, discarded)
                            or repo_relative(os.path.normpath(path), trajectory.roots)[0] in own)
    all_steps = same_as_unchanged(all_steps)
    trajectory = dataclasses.replace(trajectory, steps=all_steps)  # the steps as the passes found them
    groups, current, baseline = _groups(all_steps)
    notes = list(trajectory.notes) + _step_notes(all_steps, submitted)
    outcome_unknown = not groups
    if not groups:
        groups, current = [list(all_steps)], []
        notes.append(_unknown_outcome(trajectory, discarded, own))
    changed = _changed_since(all_steps[:len(all_steps) - len(current)], current, trajectory.roots)
    trailing = [path for s in current for path, how in s.writes
                if how != "delete" and (submitted is None or repo_relative(path, trajectory.roots)[0] in submitted)
                and not repo_relative(path, trajectory.roots)[1]
                and repo_relative(os.path.normpath(path), trajectory.roots)[0] in changed]
    groups[-1].extend(current)
    if trailing:
        where = "the submitted files" if submitted is not None else "the repository"
        notes.append(f"{len(trailing)} edit(s) to {where} came after the last check: submitted untested")
    iterations: list[IterationTelemetry] = []
    seen_created: set[str] = set()
    ancestors = ancestors_shown(all_steps)
    uses = _tool_uses(all_steps, trajectory.roots)
    typed = _typed_numbers(all_steps, trajectory.roots)
    for k, group in enumerate(groups):
        previous = iterations[-1].test_results.suite if iterations and iterations[-1].test_results else None
        iterations.append(_iteration(k, group, baseline if k == 0 else None, submitted, seen_created, trajectory.roots,
                                     trajectory.submission, unknown=outcome_unknown, tracked=tracked, ancestors=ancestors,
                                     previous=previous, uses=uses, typed=typed, discarded=discarded,
                                     own_only=bool(own)))
    final = _finish(iterations[-1], trajectory)
    if submitted is not None and trajectory.submission:
        final = _unsubmitted_edits(final, groups[-1], submitted, tracked, trajectory.roots)
    untested = [path for path in trailing if path.endswith(SOURCE_FILES)]  # none when the outcome is unknown
    if untested:  # the submitted code's last change was never run (a summary or an answer file written after is not code)
        files = list(dict.fromkeys(repo_relative(path, trajectory.roots)[0] for path in untested))
        last = next((check.command for check in reversed(final.checks or ()) if not check.on_base), None)
        final = replace(final, actions=replace(final.actions or Actions(), untested_edits=len(untested),
                                               untested_files=files, last_check=last))
    iterations[-1] = final
    return RunFile(run=_run_info(trajectory, notes, len(iterations)),
                   iterations=[Entry(iteration_telemetry=telemetry) for telemetry in iterations])


def _unsubmitted_edits(final: IterationTelemetry, group: list[Step], submitted: dict[str, str], tracked: frozenset[str],
                       roots: tuple[str, ...]) -> IterationTelemetry:
    """The final iteration's diff is the submission, plus the edits its steps made to the
    repository's own files that the submission leaves out (a test changed, run, and put back
    before submitting; a file the harness does not submit): the loop ran against them, so the
    rules that read test edits see them there as they do in every earlier iteration."""
    left_out = [edit for step in group for edit in step.edits
                if edit.path in tracked and edit.path not in submitted and not outside_repo(edit.path)
                and not repo_relative(edit.path, roots)[1]]
    if not left_out:
        return final
    changes = final.changes or Changes()
    return replace(final, changes=replace(changes, diff=(changes.diff or "") + rebuild.render(left_out)))


# A task about skipping tests (``unittest.skip`` run under ``--pdb``, ``skipif`` marks): its statement's words
_ABOUT_SKIPPING = re.compile(r"\bskip", re.IGNORECASE)


def _skips_checked(steps: list[Step], statement: str) -> list[Step]:
    """The steps, a test run that skipped every test counted as passed where the task is about
    skipping and the same command failed before: the failure gone and the skip left is the
    behaviour the agent checks for (pytest-7236 and -10081: a skipped unittest class whose
    ``tearDown`` ran under ``--pdb``, "1 skipped, 1 error" before the fix and "1 skipped" after).
    A run that skipped every test and never failed (pytest-7432's skipped test, whose bug is the
    location the report prints) ran no test, as in any other task."""
    if not _ABOUT_SKIPPING.search(statement):
        return steps
    failed: set[str] = set()
    out = []
    for step in steps:
        counts = step.counts
        if counts is not None and counts.failed:
            failed.add(step.command)
        elif counts is not None and not counts.passed and counts.skipped and step.command in failed:
            tests = [{**test, "outcome": "passed"} if test["outcome"] == "skipped" else test for test in counts.tests]
            step = step.but(counts=TestCounts(counts.skipped, 0, 0, tests))
        out.append(step)
    return out


def _unavailable(step: Step, own: frozenset[str]) -> Step:
    """The step with why it validated nothing, when it is a test run that could not run."""
    why = unavailable(step, own)
    return step if why is None else step.but(unavailable=why)


_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def stash_move(part: str) -> str | None:
    """``"aside"`` for a ``git stash`` that sets the working tree's changes aside (``push``,
    ``save``, or no subcommand), ``"back"`` for one that brings them back (``pop``, ``apply``);
    None for any other command (``git stash list``, ``show``, ``drop`` move nothing)."""
    words = words_of(without_prefixes(part))
    if not words or os.path.basename(words[0]) != "git":
        return None
    k = 1
    while k < len(words) and words[k].startswith("-"):  # git's own options: -C DIR, -c KEY=VALUE, --no-pager
        k += 2 if words[k] in _GIT_OPTIONS_WITH_VALUE else 1
    if k >= len(words) or words[k] != "stash":
        return None
    sub = next((w for w in words[k + 1:] if not w.startswith("-")), "push")
    return "aside" if sub in ("push", "save") else "back" if sub in ("pop", "apply") else None


def _set_aside(steps: list[Step], tracked: frozenset[str] = frozenset(), roots: tuple[str, ...] = ()) -> list[Step]:
    """The steps, each check run while the agent's changes were set aside marked ``set_aside``:
    after a ``git stash`` and before the ``git stash pop`` (or ``apply``) that brings them back,
    in the same command (``git stash && pytest -q t.py; git stash pop``) or across steps; and after
    a ``git checkout``/``git restore`` that puts back every file of the repository's own the agent
    had changed (``tracked``; its changes to test files may stay: its new test run on the unchanged
    code), until it changes one again. Such a run shows what the unchanged code
    does: the agent checking whether a failure was there before its change, which is no check of
    its code."""
    aside = False
    changed: set[str] = set()  # the repository's own files the agent changed and has not restored
    reverted = False  # every one of them restored: the code is the unchanged code until the next change
    undone = _Undo(roots)
    marked = []
    for step in steps:
        moves = step.shell and ("stash" in step.command or (reverted or changed) and _RESTORE.search(step.command))
        if not moves:
            base = aside or reverted
            marked.append(step.but(set_aside=True) if base and (step.test or step.probe) else step)
            writes = undone.writes(step, tracked)
            changed, reverted = _changed_after(writes, changed, reverted, tracked, roots)
            continue
        undone.forget()
        at_check = None
        for part in segments(step.command):
            move = stash_move(part)
            if move is not None:
                aside = move == "aside"
                continue
            if at_check is None and _runs_check(part):
                at_check = aside or reverted
            plain = without_prefixes(part)
            if _restores_all(plain) and changed:
                changed, reverted = set(), True
            else:
                changed, reverted = _changed_after(written_files(plain), changed, reverted, tracked, roots)
        at_check = (aside or reverted) if at_check is None else at_check
        marked.append(step.but(set_aside=True) if at_check and (step.test or step.probe or step.failed_build) else step)
    return marked


class _Undo:
    """The edits each of the repository's own files holds since the agent's first change, to see
    an edit that undoes the last ones made (``sed -i 's/A/B/'``, then ``sed -i 's/B/A/'``; an
    editor's replace of ``old`` by ``new``, then of ``new`` by ``old``): the agent putting the
    unchanged code back by hand, to see whether a failure was there before its change. A file
    whose every edit is undone is restored, as ``git checkout`` restores it."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        self.held: dict[str, tuple[_Change, ...] | None] = {}  # None: a change not rebuilt, which nothing undoes

    def forget(self) -> None:
        """A stash or a restore moved the files: what they hold is tracked as changed or restored."""
        self.held.clear()

    def writes(self, step: Step, tracked: frozenset[str]) -> list[tuple[str, str]]:
        """The step's writes, an edit that undoes every edit its file held made a ``restore``."""
        if not step.writes:
            return step.writes
        known = _known_edits(step, _added_lines(self.held.values()))
        writes = []
        for path, how in step.writes:
            relative, outside = repo_relative(os.path.normpath(path), self.roots) if path else ("", True)
            if outside or relative not in tracked:
                writes.append((path, how))
                continue
            if how in ("restore", "delete"):
                self.held.pop(relative, None)
                writes.append((path, how))
                continue
            held, edits = self.held.get(relative, ()), known.pop(relative, None)
            after = _after_edits(held, edits) if held is not None and edits else None
            self.held[relative] = after
            if held and after is not None and len(after) < len(held):  # it took back the last edits
                writes.append((path, "restore") if not after else (path, how))
            else:
                writes.append((path, how))
        return writes


_Change = tuple[int | None, tuple[str, ...], tuple[str, ...]]  # an edit's (line, removed, added)


def _added_lines(held: Iterable[tuple[_Change, ...] | None]) -> frozenset[str]:
    """The lines the agent's edits still held have added, stripped."""
    return frozenset(line.strip() for changes in held if changes for _, _, added in changes for line in added)


def _known_edits(step: Step, added: frozenset[str] = frozenset()) -> dict[str, list[_Change]]:
    """A step's edits by file, where they are all it changed (:func:`_exact`; ``added``: the lines
    the agent's held edits added), else none."""
    known: dict[str, list[_Change]] = {}
    if step.edits and _exact(step, added):
        for edit in step.edits:
            known.setdefault(edit.path, []).append((edit.line, edit.removed, edit.added))
    elif step.edits:
        return _literal_substitution(step)
    return known


def _sed_words(step: Step) -> list[list[str]]:
    """The words of each ``sed`` simple command of a step's command line."""
    return [words for words in (words_of(without_prefixes(part)) for part in segments(step.command))
            if words and words[0] == "sed"]


def _literal_substitution(step: Step) -> dict[str, list[_Change]]:
    """The change of a step that is one sed over every line of one file, swapping a literal text
    for another, each at least ``SWAP_CHARS`` long (``s/FILE_UPLOAD_PERMISSIONS = None/
    FILE_UPLOAD_PERMISSIONS = 0o644/``, ``s/qop=auth/qop="auth"/``), as the texts swapped, once
    for each line the log shows it changed, at no line (``SWAPPED``): what is known of it is that
    the same sed the other way takes it back, whichever lines it changed, where that one changes as
    many of the lines shown and its text cannot match inside other lines' (:func:`_takes_back`;
    psf/requests-1766 put ``qop=auth`` back to see a test fail on the unchanged code too, and made
    its fix again)."""
    seds = _sed_words(step)
    if len(seds) != 1:
        return {}
    scripts, files, extended = sed_arguments(seds[0])
    commands = parse_sed(scripts[0]) if len(scripts) == 1 else None
    names = {edit.path for edit in step.edits}
    if not commands or len(commands) != 1 or len(files) != 1 or len(names) != 1:
        return {}
    (command,) = commands
    if command.verb != "s" or command.first is not None or command.flags not in ("", "g"):
        return {}
    old, new = _literal(command.pattern, extended), _literal(command.replacement, False)
    if old is None or new is None or "&" in command.replacement or min(len(old), len(new)) < SWAP_CHARS:
        return {}
    return {names.pop(): [(SWAPPED, (old,), (new,))] * len(step.edits)}


def _after_edits(held: tuple[_Change, ...], made: list[_Change]) -> tuple[_Change, ...]:
    """The edits a file holds after ``made``: the last ones taken back where ``made`` undoes them
    (the lines they added removed, the ones they removed put back, at the same line where both
    name one), else ``made`` added to them."""
    if held and len(made) <= len(held) and all(
            _takes_back(edit, earlier) for edit, earlier in zip(made, held[-len(made):], strict=True)):
        return held[:-len(made)]
    return (*held, *made)


def _takes_back(edit: _Change, earlier: _Change) -> bool:
    line, removed, added = edit
    if line == SWAPPED:  # a swap over every line takes back only a swap, of a text it can find nowhere else
        return earlier[0] == SWAPPED and removed == earlier[2] and added == earlier[1] and _distinct(removed[0])
    # an edit known whole (every line it touched shown) takes back a swap at any line, as one at no known line
    return (removed == earlier[2] and added == earlier[1] and bool(removed or added)
            and (line is None or earlier[0] in (None, SWAPPED) or line == earlier[0]))


def _distinct(text: str) -> bool:
    """Whether a sed swapping ``text`` back over every line can only find it where the first swap
    put it: a text of ``OWN_LINE_CHARS`` or more, or of ``SWAP_CHARS`` or more ending in no part of
    a name (``qop="auth"``; ``return s`` is also the start of every ``return self``: pytest-6202's
    sed 's/return s/return s.replace(...)/' wrote that text into the next line, a syntax error,
    no unchanged code)."""
    return len(text) >= OWN_LINE_CHARS or (len(text) >= SWAP_CHARS and not (text[-1].isalnum() or text[-1] == "_"))


def _exact(step: Step, added: frozenset[str] = frozenset()) -> bool:
    """Whether the edits rebuilt of a step are all it changed: an editor's replace or insert, or
    sed commands each at numbered lines (``516s/a/b/``, ``58,60c\\ ...``), or touching only lines
    the agent had added, by a long literal text of them (``/result.x = copy.deepcopy(y, memo)/d``,
    ``s/SETTING = 0o644/SETTING = None/``: :func:`_own_line`). A sed over every line changes lines
    the log never showed, beyond the rebuilt edits."""
    if not step.shell:
        return step.editor is not None and step.editor.get("command") in ("str_replace", "insert")
    seds = _sed_words(step)
    if not seds:
        return False
    for words in seds:
        scripts, _, extended = sed_arguments(words)
        commands = [parse_sed(script) for script in scripts]
        if not scripts or any(c is None or not c or any((not (one.first or "").isdigit() or
                                                         not (one.last or "0").isdigit())
                                                        and not _own_line(one, added, extended)
                                                        for one in c)
                              for c in commands):
            return False
    return True


OWN_LINE_CHARS = 30  # the shortest literal text a sed may name as the agent's own (a shorter one may be the code's too)
SWAP_CHARS = 8  # the shortest literal texts a sed may swap and another sed swap back, taking the first back
SWAPPED = -1  # the line of a literal swap over every line (:func:`_literal_substitution`): no one line


def _own_line(command: Any, added: frozenset[str], extended: bool) -> bool:
    """Whether a sed command can only touch lines the agent itself added: a delete of the lines
    holding a pattern (``/result.x = copy.deepcopy(y, memo)/d``), or a substitution over every
    line (``s/FILE_UPLOAD_PERMISSIONS = 0o644/FILE_UPLOAD_PERMISSIONS = None/``), whose pattern has
    nothing but literal characters (a dot or an escaped character aside), is at least
    ``OWN_LINE_CHARS`` long and is part of a line the agent's held edits added. A line of the code
    the log never showed holding that very text is not to be expected, so the sed changes the
    agent's lines and nothing else."""
    if command.verb == "d" and command.last is None and len(command.first or "") > 2 \
            and command.first[0] == command.first[-1] == "/":
        pattern = command.first[1:-1]
    elif command.verb == "s" and command.first is None and command.flags in ("", "g"):
        pattern = command.pattern
    else:
        return False
    text = _literal(pattern, extended)
    return text is not None and len(text) >= OWN_LINE_CHARS and any(text in line for line in added)


def _literal(pattern: str, extended: bool) -> str | None:
    """The text a sed pattern matches when it holds no operator but ``.`` (which matches itself
    too), its escapes read; None otherwise."""
    special = "*[]^$" + ("()+?|{}" if extended else "")
    literal, escaped = [], False
    for char in pattern:
        if escaped:
            if char.isalnum() or (char in "(){}|+?" and not extended):
                return None  # \w, \b, \1 are operators, and \( \{ \| \+ in a basic expression
            literal.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in special:
            return None
        else:
            literal.append(char)
    return None if escaped else "".join(literal).strip()


_RESTORE = re.compile(r"\bgit\b.*\b(?:checkout|restore|reset)\b")


def _restores_all(part: str) -> bool:
    """Whether a command puts back every file of the working tree: ``git checkout .`` (``-- .``),
    ``git restore .``, ``git reset --hard``."""
    words = words_of(part)
    if len(words) < 2 or os.path.basename(words[0]) != "git":
        return False
    if words[1] == "reset":
        return "--hard" in words
    return words[1] in ("checkout", "restore") and words[-1] in (".", "./") and "--staged" not in words


def _changed_after(writes: list[tuple[str, str]], changed: set[str], reverted: bool, tracked: frozenset[str],
                   roots: tuple[str, ...]) -> tuple[set[str], bool]:
    """The repository's files changed and not restored after some writes, and whether the writes
    restored the last of them (a restore of a file never changed restores nothing)."""
    for path, how in writes:
        if not path:  # a patch that names its files only in its text: it changed the code
            if how == "patch":
                changed, reverted = changed | {""}, False
            continue
        relative, outside = repo_relative(os.path.normpath(path), roots)
        if outside or relative not in tracked:
            continue
        if how == "restore":
            if relative in changed:
                changed = changed - {relative}
                # the code is back as it was: only the agent's tests (if any) still hold its changes
                reverted = not any(not is_test_path(name) for name in changed)
        elif how != "delete":
            changed, reverted = changed | {relative}, False
    return changed, reverted


def _runs_check(part: str) -> bool:
    """Whether one segment of a command runs a test, a build or a script."""
    plain = without_prefixes(part)
    return bool(test_command(part) or build_command(part) or script_run(plain, words_of(plain)))


def _code_edits(steps: list[Step], scratch: Any) -> list[Step]:
    """The steps, each that changed the code marked ``code_edit`` (writing a throw-away script is
    not one: ``scratch(path)`` says which writes are)."""
    return [step.but(code_edit=True) if any(not scratch(path) for path, _ in step.writes) else step for step in steps]


def _changed_since(checked: list[Step], after: list[Step], roots: tuple[str, ...]) -> set[str]:
    """The files the steps ``after`` the last check leave holding something else than that check
    ran: each write gives its file new contents, unless it copies or moves another file's in
    (``cp utils.py utils.py.bak; git checkout utils.py; pytest; mv utils.py.bak utils.py`` puts
    back what was checked: no untested edit), or it is a ``git checkout``/``git restore`` of the
    file (the unchanged code), or its edits are known whole (:func:`_exact`) and take the file back
    to contents it held (a fix undone to run the unchanged code, then made again as it was
    checked)."""
    # what a file holds: ("base", name), ("new" | "gone", serial), or ("edits", what it held before
    # its known edits, the edits as (line, removed, added))
    versions: dict[str, tuple[Any, ...]] = {}
    fresh = itertools.count()

    def relative(path: str) -> str:
        return repo_relative(os.path.normpath(path), roots)[0]

    def edited(name: str, made: list[_Change]) -> tuple[Any, ...]:
        current = versions.get(name, ("base", name))
        start, held = (current[1], current[2]) if current[0] == "edits" else (current, ())
        after = _after_edits(held, made)
        return ("edits", start, after) if after else start

    def replay(step: Step) -> None:
        moves = step.shell and any(how == "copy" for _, how in step.writes)
        copied = {relative(target): (relative(source), moved)
                  for source, target, moved in (copies(step.command) if moves else [])}
        known = _known_edits(step, _added_lines(version[2] for version in versions.values() if version[0] == "edits"))
        for path, how in step.writes:
            name = relative(path)
            if how == "copy" and name in copied:
                source, moved = copied[name]
                versions[name] = versions.get(source, ("base", source))
                if moved:
                    versions[source] = ("gone", next(fresh))
            elif how == "restore":  # git checkout/restore: the unchanged code, as _set_aside reads it
                versions[name] = ("base", name)
            elif name in known and how != "delete":
                versions[name] = edited(name, known.pop(name))
            else:
                versions[name] = ("gone" if how == "delete" else "new", next(fresh))

    for step in checked:
        replay(step)
    before = dict(versions)
    for step in after:
        replay(step)
    # a file removed after the check (a backup moved back) is no code submitted
    return {name for name, version in versions.items()
            if before.get(name, ("base", name)) != version and version[0] != "gone"}


def _groups(steps: list[Step]) -> tuple[list[list[Step]], list[Step], Step | None]:
    """The iterations: each an edit of the code (``code_edit``) and every step up to the last check
    (a test run, a script run or a build) before the next edit of the code, so that an iteration's
    checks all saw the same code; the steps after the last such check (edits submitted untested);
    and the agent's last check before its first edit (a test run with counts before any other)."""
    groups: list[list[Step]] = []
    current: list[Step] = []
    before: list[Step] = []  # the checks before the first edit of the code
    edited = checked = False
    for step in steps:
        if step.code_edit and checked:  # the code changes again: the iteration before ends at its last check
            cut = max(k for k, s in enumerate(current) if s.check) + 1
            groups.append(current[:cut])
            current, checked = current[cut:], False
        current.append(step)
        edited = edited or step.code_edit
        if step.check:
            if edited:
                checked = True
            else:
                before.append(step)
    if checked:
        cut = max(k for k, s in enumerate(current) if s.check) + 1
        groups.append(current[:cut])
        current = current[cut:]
    return groups, current, scored_check(before)


def scored_check(checks: list[Step], previous: str | None = None) -> Step | None:
    """The check that states what a stretch of unchanged code did: its last test run with counts
    (the widest evidence), else its last check. Where the test suite that stated the iteration
    before (``previous``) ran again, its last run states this one, so that the two are measured
    alike, unless the last test run failed more tests: the score never hides a failure."""
    runs = [step for step in checks if step.test and step.counts is not None and not step.unavailable]
    if not runs:
        return checks[-1] if checks else None
    last = runs[-1]
    same = next((step for step in reversed(runs) if step.test == previous), None) if previous is not None else None
    # the suite measured before, unless a later run failed more: the score never hides failures
    return same if same is not None and _failed(last) <= _failed(same) else last


def _failed(step: Step) -> int:
    return step.counts.failed if step.counts is not None else 0


def _step_notes(steps: list[Step], submitted: dict[str, str] | None) -> list[str]:
    """The run's notes on test runs that validated nothing and edits that could not be rebuilt."""
    notes = []
    idle = [s for s in steps if s.unavailable]
    if idle:
        notes.append(f"{len(idle)} test run(s) validated nothing and are not scored as failures "
                     f"(validation unavailable): {_reasons(idle)}")
    missed = [m for s in steps for m in s.unrecovered if not m[0] or not is_scratch(m[0], submitted)]
    if missed:
        shown = "; ".join(f"{path} ({why})" if path else why for path, why in list(dict.fromkeys(missed))[:3])
        notes.append(f"{len(missed)} edit(s) of the submitted files could not be rebuilt, so the rules that read "
                     f"edits saw them only in the submitted diff: {shown}"
                     + (f" (+{len(missed) - 3} more)" if len(missed) > 3 else ""))
    return notes


def _unknown_outcome(trajectory: Trajectory, discarded: frozenset[str] = frozenset(),
                     own: frozenset[str] = frozenset()) -> str:
    """No edit was followed by a test run that validated anything: one iteration whose own outcome
    is unknown, graded by the held-back suite alone (NothingLogged without one: nothing to score).
    ``own``: the files of a submission that holds only the agent's own (:func:`_own_submission`)."""
    all_steps = trajectory.steps
    idle = [s for s in all_steps if s.unavailable]
    if own:
        shown = ", ".join(sorted(own)[:3]) + (", ..." if len(own) > 3 else "")
        why = f"the agent submitted only files of its own ({shown}), no change of the repository's files: no change to validate"
    elif not any(s.code_edit for s in all_steps) and not trajectory.submission \
            and _only_own_files(all_steps, trajectory.roots, discarded):
        why = "the agent changed none of the repository's files, only files of its own: no change to validate"
    elif idle:
        why = f"none of the agent's {len(idle)} check(s) after its edits validated anything ({_reasons(idle)})"
    elif any(s.check for s in all_steps):
        why = "the agent ran no check (a test run, a script, a build) after its edits"
    else:
        why = "the agent ran no check (a test run, a script, a build)"
    if not any(s.writes for s in all_steps) and not trajectory.submission:
        checked = "ran checks but " if any(s.check or s.unavailable for s in all_steps) else ""
        raise NothingLogged(f"the agent {checked}changed no file: nothing to judge{_held_back_text(trajectory.hidden)}")
    return f"{why}: one iteration that nothing validated (the held-back suite is shown, not scored)"


def _finish(final: IterationTelemetry, trajectory: Trajectory) -> IterationTelemetry:
    """The last iteration carries the submitted diff (the authority on what was submitted) and the
    held-back suites."""
    if trajectory.submission:
        final = replace(final, changes=replace(final.changes or Changes(), diff=trajectory.submission, submitted=True))
    if trajectory.hidden:
        hidden, suites = held_back(trajectory.hidden)
        final = replace(final, test_results=replace(final.test_results or TestResults(), hidden=hidden,
                                                    hidden_suites=suites))
    return final


def _run_info(trajectory: Trajectory, notes: list[str], iterations: int) -> RunInfo:
    started = _iso(next((s.time for s in trajectory.steps if s.time), None))
    return RunInfo(id=f"{trajectory.agent}/{trajectory.instance}", agent=trajectory.agent, challenge=trajectory.instance,
                   format="standard", max_iterations=max(1, iterations), source=trajectory.source,
                   started_at=started or None,
                   task=Task(statement=trajectory.statement[:20_000].strip(), language=trajectory.language or None),
                   notes=notes, iterations_are="local_runs")


def _held_back_text(suites: list[dict[str, Any]]) -> str:
    """'; held-back suite: resolved, 3/3' for a note about a run that is not imported."""
    if not suites:
        return ""
    passed, total = sum(s["passed"] for s in suites), sum(s["total"] for s in suites)
    return f"; held-back suite: {'resolved' if total and passed >= total else 'not resolved'}, {passed}/{total} pass"


def _reasons(steps: list[Step]) -> str:
    counted: dict[str, list[str]] = {}
    for step in steps:
        counted.setdefault(step.unavailable or "", []).append(step.command.strip().split("\n", 1)[0][:60])
    shown = [f"{reason} ({len(commands)}x, e.g. `{commands[0]}`)" for reason, commands in list(counted.items())[:3]]
    more = f" (+{len(counted) - 3} more reasons)" if len(counted) > 3 else ""  # a note stays a line or three
    return "; ".join(shown) + more


def _iteration(k: int, group: list[Step], baseline: Step | None, submitted: dict[str, str] | None,
               seen_created: set[str], roots: tuple[str, ...], submission: str | None = None,
               unknown: bool = False, tracked: frozenset[str] = frozenset(),
               ancestors: frozenset[str] = frozenset(), previous: str | None = None,
               uses: dict[str, str] | None = None,
               typed: dict[int, dict[str, list[str]]] | None = None,
               discarded: frozenset[str] = frozenset(), own_only: bool = False) -> IterationTelemetry:
    """One iteration's telemetry from its steps: timing, actions, the files written and their edits,
    the test results (or why none validated anything), and the reads of the repository's history.
    ``own_only``: the submission holds only the agent's own files (:func:`_own_submission`)."""
    files = _files_written(group, submitted, seen_created, roots, tracked, uses or {}, discarded)
    for step in group:  # the numbers it typed into a data file by hand
        for relative, numbers in (typed or {}).get(id(step), {}).items():
            if relative in files:
                files[relative] = replace(files[relative], typed_numbers=numbers)
    times = [s.time for s in group if s.time]
    results, build = _results(group, baseline, unknown, previous)
    reads = history_reads(group, submission, ancestors)
    first_edit = next((k for k, s in enumerate(group) if s.code_edit), 0)
    # a run on the unchanged code before this iteration's first edit (its files restored, the change
    # made again after): the record of what the agent checked, kept with the iteration it precedes
    checks = _check_records([s for s in group[:first_edit] if s.set_aside] + group[first_edit:])
    return IterationTelemetry(
        iteration_number=k,
        timestamp_start=_iso(times[0]) if times else None,
        duration_seconds=round(max(times) - times[0], 3) if times else None,
        build=build,
        actions=_actions(group, _validating_from(group, roots, discarded, own_only) if unknown else 0),
        changes=_changes(group, files, submitted),
        test_results=results,
        history=reads[:50] or None,
        checks=checks[-200:] if checks and not unknown else None,
    )


def _files_written(group: list[Step], submitted: dict[str, str] | None, seen_created: set[str],
                   roots: tuple[str, ...], tracked: frozenset[str] = frozenset(),
                   uses: dict[str, str] | None = None, discarded: frozenset[str] = frozenset()) -> dict[str, FileChange]:
    """The files an iteration's steps wrote, each with its status and whether it is scratch (a
    file of the repository's own, ``tracked``, is modified and never scratch; with no submitted
    diff to say, a file the agent made is scratch when it is its own throw-away, as for the code's
    edits: :func:`~procjudge.importers.probes.made_for_itself`); a created file with the command
    that made it by running a script, and the first that used it as a tool (``uses``). A file
    created and then edited within the iteration is created in it."""
    files: dict[str, FileChange] = {}
    for step in group:
        for path, how in step.writes:
            if not path:
                continue
            relative, outside = repo_relative(path, roots)
            known = submitted.get(relative) if submitted is not None else None
            status = "deleted" if how == "delete" else known or ("created" if how == "create" or submitted is not None
                                                                  else "modified")
            if submitted is None and how != "delete" and files.get(relative) is not None \
                    and files[relative].status == "created":
                status = "created"  # made earlier in this iteration, then edited
            elif status == "created" and relative in seen_created and (submitted is None or relative not in submitted):
                status = "modified"  # a scratch file written again after the iteration that created it
            if relative in tracked and not outside:
                status = "deleted" if how == "delete" else "modified"
            made_by = None
            if status == "created":
                seen_created.add(relative)
                if how == "script" and (relative not in files or files[relative].made_by):
                    made_by = _script_run_of(step.command)  # a script's run made it
            own = relative not in tracked and (relative not in submitted if submitted is not None
                                               else made_for_itself(relative, discarded))
            files[relative] = FileChange(path=relative, status=cast(FileStatus, status), scratch=outside or own,
                                         made_by=made_by,
                                         used_by=uses.get(relative) if uses and status == "created" else None)
    return files


# The text data files whose numbers are read: what a script would write, had the agent computed them.
_TEXT_DATA_SUFFIXES = (".json", ".csv", ".tsv", ".txt", ".yaml", ".yml", ".xml", ".dat")
# A number pinned as a version (``numpy=1.21``, ``scipy>=1.8``, ``python: "3.10"`` on a line naming a
# version), and a file of pins (``environment.yml``, ``requirements.txt``): chosen, not computed.
_PINNED = re.compile(r"[=<>~^!@]\s*['\"]?$|\bv$", re.IGNORECASE)
_MANIFEST = re.compile(r"(?:^|/)(?:environment[\w.-]*\.ya?ml|conda[\w.-]*\.ya?ml|requirements[\w.-]*\.txt|"
                       r"constraints[\w.-]*\.txt|[\w.-]*\.lock)$", re.IGNORECASE)


def _typed_decimals(text: str) -> list[str]:
    """The decimal numbers of a text, those pinned as versions left out."""
    found = []
    for line in text.split("\n"):
        if "." not in line:
            continue
        versions = "version" in line.lower() or "python" in line.lower()
        for match in DECIMAL.finditer(line):
            if not versions and not _PINNED.search(line[:match.start()]):
                found.append(match.group(0))
    return found


def _typed_numbers(steps: list[Step], roots: tuple[str, ...]) -> dict[int, dict[str, list[str]]]:
    """Per step (by ``id``), the data files it wrote by hand with three or more decimal numbers that
    no earlier command's output had shown (``cat <<'EOF' > results/STS12.json`` holding
    ``"cosine_spearman": 0.7456`` that no evaluation printed): numbers the agent typed in. A file a
    script's run wrote is not one (its numbers may be computed)."""
    found: dict[int, dict[str, list[str]]] = {}
    seen: set[str] = set()  # the numbers earlier outputs showed, read up to ``scanned`` when first needed:
    scanned = 0  # most runs write no data file, and then no output is read
    for k, step in enumerate(steps):
        for edit in step.edits:
            if edit.how == "script" or not edit.path.lower().endswith(_TEXT_DATA_SUFFIXES) or _MANIFEST.search(edit.path):
                continue
            before = set(DECIMAL.findall("\n".join(edit.removed)))
            numbers = [n for n in dict.fromkeys(_typed_decimals("\n".join(edit.added)))
                       if n not in before and float(n) not in (0.0, 1.0)]
            if len(numbers) < 3:
                continue
            for earlier in steps[scanned:k]:
                seen.update(DECIMAL.findall(earlier.output))
            scanned = max(scanned, k)
            numbers = [n for n in numbers if n not in seen]
            relative, outside = repo_relative(os.path.normpath(edit.path), roots)
            if len(numbers) >= 3 and relative and not outside:
                found.setdefault(id(step), {})[relative] = numbers[:20]
    return found


_TOOL_HINT = re.compile(r"\b(?:python[\d.]*|bash|sh|node|sed|patch|apply)\b|\./")


def _tool_uses(steps: list[Step], roots: tuple[str, ...]) -> dict[str, str]:
    """The files the agent used as tools, each with the first simple command that did: run as a
    script (``python update_deletion_final.py``, ``bash fix.sh``, ``./run.sh``), read by ``sed``'s
    ``r FILE``, applied as a patch (``git apply fix.patch``, ``patch -p1 < fix.patch``)."""
    uses: dict[str, str] = {}
    for step in steps:
        if not step.shell:
            continue
        for part in segments(step.command):  # here-document bodies left out: a script's text is no command
            if not _TOOL_HINT.search(part):
                continue  # most commands (reads, searches, git) use no file as a tool
            plain = without_prefixes(part)
            for used in _used_files(plain):
                relative, outside = repo_relative(os.path.normpath(used), roots)
                if relative and not outside:
                    uses.setdefault(relative, plain[:200])
    return uses


def _used_files(plain: str) -> list[str]:
    """The files one simple command uses as a tool (see :func:`_tool_uses`)."""
    words = words_of(plain)
    if not words:
        return []
    head = os.path.basename(words[0])
    if head == "sed":
        if "r " not in plain:
            return []
        scripts, _, _ = sed_arguments(words)
        return [c.text for script in scripts for c in parse_sed(script) or () if c.verb == "r"]
    if head == "git" and len(words) > 2 and words[1] == "apply":
        return [w for w in words[2:] if not w.startswith("-")]
    if head == "patch":
        named = [w for k, w in enumerate(words[1:], 1) if words[k - 1] in ("-i", "--input", "<")]
        return named + [w.removeprefix("<") for w in words[1:] if w.startswith("<") and len(w) > 1]
    run = script_run(plain, words)
    return [run.script] if run is not None and run.script else []


# An interpreter's run at the start of a simple command, or after `&&`, `;` or `||` on a here-document's
# opening line (which the grammar keeps whole: ``cat <<'EOF' > r.py && python r.py``).
_INTERPRETER = re.compile(r"(?:^|&&|;|\|\|)\s*((?:python[\d.]*|bash|sh|node)\b[^&;|]*)")


def _script_run_of(command: str) -> str | None:
    """The simple command of a command line that runs a script (``python3 reproduce_issue.py``,
    ``python - <<'EOF'``), or None: a file a ``sed`` script's text names is written by no run."""
    for part in segments(command):
        run = _INTERPRETER.search(without_prefixes(part))
        if run:
            return run.group(1).strip()[:200]
    return None


def _validating_from(group: list[Step], roots: tuple[str, ...], discarded: frozenset[str], own_only: bool) -> int | None:
    """Where an iteration no check after an edit of the code validated counts its runs from: its
    first edit of the code (the runs before were of the unchanged code); None where there was no
    change to validate (no edit of the code nor of any file that was there before, a system file
    fixed in place being a change; or a submission of only the agent's own files, whatever it
    changed of the code taken back), so that its runs are unknown, neither 0 nor paid."""
    if own_only:
        return None
    first = next((k for k, s in enumerate(group) if s.code_edit), None)
    if first is not None:
        return first
    return None if _only_own_files(group, roots, discarded) else 0


def _own_submission(steps: list[Step], submitted: dict[str, str] | None, tracked: frozenset[str],
                    roots: tuple[str, ...], discarded: frozenset[str]) -> frozenset[str]:
    """The submitted files, where every one is a file the agent made for itself (:func:`_only_own_files`:
    a script its checks ran, a throw-away by its name) and none is the repository's own: a
    submission with no change of the code in it (SWE-agent 0.x: 83 of 251 GPT-4 runs on SWE-bench
    Lite created `reproduce_bug.py`, ran it, and submitted it alone, django-11019 among them; most
    had been paid for converging on a check of its own script). Empty otherwise."""
    if not submitted or any(status != "created" or path in tracked for path, status in submitted.items()):
        return frozenset()
    written = {repo_relative(os.path.normpath(path), roots)[0] for step in steps for path, _ in step.writes if path}
    if not set(submitted) <= written or not _only_own_files(steps, roots, discarded, frozenset(submitted)):
        return frozenset()
    return frozenset(submitted)


def _only_own_files(steps: list[Step], roots: tuple[str, ...], discarded: frozenset[str],
                    among: frozenset[str] | None = None) -> bool:
    """Whether every file the steps wrote (of those ``among``, where given) is the agent's own: a
    script one of its checks ran, or a throw-away by its name or folder, or deleted again
    (:func:`made_for_itself`). A file fixed in place (a library's module in site-packages), a
    setting or a deliverable written is a change."""
    ran = {os.path.basename(script) for step in steps if step.probe and (script := script_of(step.probe))}
    for step in steps:
        for path, _ in step.writes:
            relative = repo_relative(os.path.normpath(path), roots)[0] if path else ""
            if path and (among is None or relative in among) and os.path.basename(path) not in ran \
                    and not made_for_itself(relative, discarded):
                return False
    return True


def _actions(group: list[Step], after: int | None = 0) -> Actions:
    """Tool calls, edits, reads, and the test runs that validated something from step ``after`` on
    (unknown, not 0, when test runs were attempted and none could run, or ``after`` is None: no
    change of the code to validate)."""
    runs = group[after:] if after is not None else []
    validated = sum(1 for s in runs if (s.test or s.probe) and not s.unavailable and not s.set_aside)
    attempted = after is None or any(s.unavailable for s in runs)
    return Actions(tool_calls_total=len(group), file_edits=sum(1 for s in group if s.writes),
                   file_reads=sum(1 for s in group if not s.writes and not s.check),
                   test_runs=validated if validated or not attempted else None)


def _changes(group: list[Step], files: dict[str, FileChange], submitted: dict[str, str] | None) -> Changes:
    """The files, the agent's reasoning as the summary, each edit rebuilt as text (and those that
    could not be), and the diff of what this iteration's steps changed."""
    summary = [s.thought[:500] for s in group if s.writes and s.thought][:5]
    missed = [f"{path}: {why}" if path else why for step in group for path, why in step.unrecovered
              if not path or not is_scratch(path, submitted)]
    rebuilt = [edit for step in group for edit in step.edits if not outside_repo(edit.path)]
    texts: dict[str, list[EditText]] = {}
    for edit in rebuilt:
        if edit.path in files and len(texts.setdefault(edit.path, [])) < 50:
            texts[edit.path].append(EditText(old="\n".join(edit.removed)[:20_000], new="\n".join(edit.added)[:20_000],
                                             via=cast(EditVia, "heredoc" if edit.how == "redirect" else edit.how)))
    return Changes(
        files=[replace(record, edits=texts[path]) if path in texts else record for path, record in files.items()],
        summary=summary or None,
        summary_kind="prose" if summary else None,  # the agent's reasoning, not a description of the change
        unrebuilt=list(dict.fromkeys(missed))[:50] or None,
        diff=rebuild.render(rebuilt) if rebuilt else None,  # what this iteration's steps changed (the final one: the submission)
    )


def _results(group: list[Step], baseline: Step | None, unknown: bool,
             previous: str | None = None) -> tuple[TestResults, Build | None]:
    """The test results of an iteration's last check (and the build that failed instead), against
    the agent's baseline run; why nothing was validated when no run after the edits ran."""
    first_edit = next((k for k, s in enumerate(group) if s.code_edit), 0)
    last = scored_check([s for s in group[first_edit:] if s.check], previous)
    results = TestResults()
    build = None
    if unknown or last is None:  # no run after the edits validated anything: the outcome is unknown
        idle_after = [s for s in group if s.unavailable]
        last = baseline
        results = TestResults(
            unavailable=unavailable_code(idle_after[0].unavailable or "") if idle_after else "not_a_test_run",
            suite=(baseline.test or baseline.probe) if baseline is not None and (baseline.test or baseline.probe) else None)
    elif last.counts is None:
        reason = "the build failed" if last.test is None else "the test command printed no summary"
        results = TestResults(suite=last.test or "build")
        build = Build(status="failure", errors=[last.output.strip()[-2000:] or reason])
    else:
        counts = last.counts
        results = TestResults(suite=last.test or last.probe,
                              post_iteration=Counts(passed=counts.passed, failed=counts.failed,
                                                    total=counts.passed + counts.failed, skipped=counts.skipped),
                              tests=outcomes(counts.tests[:5000]) if counts.tests else None)
    pre, baseline_tests = _baseline_results(baseline, last)
    results = replace(results, pre_iteration=pre or results.pre_iteration,
                      baseline_tests=baseline_tests or results.baseline_tests)
    idle = [s for s in group if s.unavailable]
    if idle and idle[0].unavailable and results.unavailable is None:
        results = replace(results, unavailable=unavailable_code(idle[0].unavailable))
    return results, build


_READS = frozenset({"cat", "grep", "egrep", "fgrep", "rg", "ls", "head", "tail", "nl", "find", "wc", "echo", "printf", "pwd",
                    "tree", "file", "stat", "less", "more", "diff", "awk", "sort", "uniq", "cut", "true", "cd", "which"})
_GIT_READS = frozenset({"diff", "status", "log", "show", "grep", "blame", "ls-files"})


def _changes_nothing(step: Step, check: bool = False) -> bool:
    """Whether a step only looked (a read, a search, a view), so that the same check run before
    and after it ran on the same code in the same environment. A check's own step may hold the
    check and reads; an install, a clean, a configure, an export or a mkdir change the next run."""
    if step.writes:
        return False
    if not step.shell:
        return step.editor is None or step.editor.get("command") == "view"
    for part in segments(step.command):
        words = words_of(without_prefixes(part))
        if not words:
            continue
        head = os.path.basename(words[0])
        if check and (test_command(part) or build_command(part) or script_run(without_prefixes(part), words)):
            continue
        if head in _READS or head == "git" and len(words) > 1 and words[1] in _GIT_READS:
            continue
        if head == "sed" and not any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            continue
        return False
    return True


def _check_records(steps: list[Step]) -> list[LocalCheck]:
    """The records of every check among ``steps``, in order; a check run again, as the same command
    line, with nothing done since its previous run but reading (no edit, not even of a throw-away
    file, no install, clean or configure; its own command the check alone) is marked
    ``unchanged``."""
    records: list[LocalCheck] = []
    last_run: dict[str, int] = {}
    last_write = -1
    for k, step in enumerate(steps):
        is_check = bool(step.test or step.probe or step.failed_build)
        if not _changes_nothing(step, check=is_check):
            last_write = k
        if not is_check:
            continue
        if step.set_aside:  # the unchanged code's run: kept for the record, no run of the agent's code
            records.append(replace(_check_record(step), on_base=True))
            continue
        record = _check_record(step)
        # the same command as the agent typed it: a run with other options (`-W ignore`, an environment
        # variable, `-v`) is another look at the code, not the same check again
        typed = " ".join(step.command.split())
        previous = last_run.get(typed)
        if previous is not None and last_write <= previous and last_write != k:
            record = replace(record, unchanged=True)
        last_run[typed] = k
        records.append(record)
    return records


def _check_record(step: Step) -> LocalCheck:
    """One check as the run file keeps it (``iteration_telemetry.checks``): its command and kind,
    its exit status, what it showed (``error``: a crash, or a runner that printed no summary), the
    repository frames of its traceback, why it could not run; the line that shows its outcome, a
    test run's counts and failing tests."""
    command = step.test or step.probe or step.failed_build or ""
    kind = "test_runner" if step.test else "build" if step.failed_build and not step.probe else step.probe_kind
    code = step.probe_code if step.probe and not step.test else step.returncode
    exit_code = code if code is not None and -(2**31) <= code < 2**31 else None
    last_line = next((line.strip() for line in reversed(step.output.strip().split("\n")) if line.strip()), "")
    if step.unavailable:
        return LocalCheck(command=command[:200], kind=kind, exit_code=exit_code, outcome="unavailable",
                          unavailable=step.unavailable[:300])
    if step.counts is None:
        return LocalCheck(command=command[:200], kind=kind, exit_code=exit_code, outcome="error",
                          message=(last_line or "it printed no summary")[:300])
    if step.probe and not step.test:
        (test,) = step.counts.tests
        crashed = step.probe_outcome is not None and step.probe_outcome.passed is False and bool(step.frames) \
            and not (step.probe_outcome.line or "").startswith("AssertionError")
        return LocalCheck(command=command[:200], kind=kind, exit_code=exit_code,
                          outcome="error" if crashed else cast(CheckOutcome, test["outcome"]), message=test["message"][:300],
                          frames=[Frame(path=path[:500], line=line) for path, line in step.frames] or None,
                          rewritten=True if step.rewritten else None)
    counts = step.counts
    failing = [t["name"] for t in counts.tests if t["outcome"] == "failed"]
    return LocalCheck(command=command[:200], kind=kind, exit_code=exit_code, outcome="failed" if counts.failed else "passed",
                      passed=counts.passed, failed=counts.failed, message=f"{counts.failed} failed, {counts.passed} passed",
                      failing=[name[:200] for name in failing[:20]] or None)


def _baseline_results(baseline: Step | None, last: Step | None) -> tuple[Counts | None, list[TestOutcome] | None]:
    """The agent's run before its first edit: its counts as the iteration's before (same suite
    only), and its tests by name, what the agent saw before its first edit."""
    if baseline is None or baseline.counts is None:
        return None, None
    counts = baseline.counts
    same = last is not None and (baseline.test or baseline.probe) == (last.test or last.probe)
    return (Counts(passed=counts.passed, failed=counts.failed, total=counts.passed + counts.failed) if same else None,
            outcomes(counts.tests[:5000]) if counts.tests else None)
