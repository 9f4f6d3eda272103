"""The checks a shell agent makes beyond test runners (a reproduction script, ``python -c``, the
project's own runner script), and which of its writes are throw-away files rather than the code.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from ..facts import is_test_path
from ..model import CheckKind
from . import edits as rebuild
from .checks import KILLED_BY_HARNESS, Outcome, check_outcome, is_environment, script_run, script_targets
from .classify import OTHER_RUNNERS, RUNNER, redirect_targets, segments, without_prefixes
from .edits import words_of
from .steps import Step, is_scratch, repo_relative
from .test_output import Counts


def scratch_write(path: str, submitted: dict[str, str] | None, roots: tuple[str, ...],
                   tracked: frozenset[str] = frozenset(), discarded: frozenset[str] = frozenset()) -> bool:
    """Whether a write is to a throw-away file, not the code: outside the repository, or a file
    the agent made (not one of the repository's own, ``tracked``) that the submitted diff leaves
    out, or (with no diff to say) one it deleted again (``discarded``) or with a
    ``reproduce_*.py``-like name."""
    if not path:
        return False  # a patch that names its files only in its text
    relative, outside = repo_relative(os.path.normpath(path), roots)
    if outside or relative in tracked:
        return outside
    if submitted is not None:
        return is_scratch(relative, submitted)
    return made_for_itself(relative, discarded)


def made_for_itself(relative: str, discarded: frozenset[str]) -> bool:
    """Whether a file the agent made is its own throw-away, where no submitted diff says: a
    ``reproduce_*.py``-like name or folder (``reproduce_app/models.py``, the app a reproduction of a
    Django bug sets up), or in ``discarded`` (a file or folder deleted again before the end, a
    reproduction's project folder: :func:`scaffold_folders`), or in a folder there."""
    parts = relative.split("/")
    name = parts[-1]
    return _THROWAWAY.match(name) is not None or _RUNNER_SCRIPT.match(name) is not None \
        or (_WORKING_COPY.match(name) is not None and not is_test_path(relative.rsplit(".", 1)[0])) \
        or any(_THROWAWAY_FOLDER.match(part) for part in parts[:-1]) \
        or relative in discarded or any(relative.startswith(folder + "/") for folder in discarded)


_THROWAWAY_FOLDER = re.compile(r"^(?:reproduce|repro|debug|scratch|tmp|temp)(?:[_-][\w.-]*)?$", re.IGNORECASE)


# What a program writes as its output, not as code: text, data, logs, documents, images.
_OUTPUT_SUFFIXES = frozenset({"txt", "json", "jsonl", "csv", "tsv", "log", "out", "md", "html", "xml", "png", "jpg",
                              "jpeg", "gif", "svg", "pdf", "pkl", "pickle", "npy", "npz", "parquet", "db", "sqlite",
                              "dat", "bin"})


def output_file(path: str) -> bool:
    """Whether a file a script writes is its output (``answer.txt``, ``results.json``), so that
    running it still checks the code, rather than code or configuration it rewrites."""
    name = os.path.basename(path)
    return "." in name and name.rsplit(".", 1)[1].lower() in _OUTPUT_SUFFIXES


def discarded_files(steps: list[Step], roots: tuple[str, ...], tracked: frozenset[str]) -> frozenset[str]:
    """The files (and folders) the agent made and deleted again before the end: throw-away."""
    made: set[str] = set()
    gone: set[str] = set()
    for step in steps:
        for path, how in step.writes:
            if not path:
                continue
            relative, outside = repo_relative(os.path.normpath(path), roots)
            if outside or relative in tracked:
                continue
            if how == "delete":
                if relative in made or any(name.startswith(relative + "/") for name in made):
                    gone.add(relative)
            else:
                made.add(relative)
                gone.discard(relative)
    return frozenset(gone)


# A folder at the repository's root that a reproduction sets up, by its name: ``test_app/``,
# ``testapp/``, ``test_project/``, ``contenttypes_tests/`` (a test package copied out to run it
# alone); the repository's own ``tests/``, ``test/`` and ``testing/`` are not.
_SCAFFOLD_FOLDER = re.compile(r"^(?!(?:tests?|testing)$)(?:test[\w.-]*|[\w.-]+[_-]tests?)$", re.IGNORECASE)


def scaffold_folders(steps: list[Step], roots: tuple[str, ...], tracked: frozenset[str]) -> frozenset[str]:
    """The folders at the repository's root, named as a reproduction's (``_SCAFFOLD_FOLDER``), in
    which the agent made files and wrote none of the repository's own (``tracked``): the project a
    reproduction of a Django bug sets up, a Sphinx project built to show a rendering. Where no
    submitted diff says, their files are the agent's own, as a ``reproduce_app/`` is."""
    made: set[str] = set()
    for step in steps:
        for path, how in step.writes:
            if path and how != "delete":
                relative, outside = repo_relative(os.path.normpath(path), roots)
                if not outside and "/" in relative and _SCAFFOLD_FOLDER.match(relative.split("/", 1)[0]):
                    made.add(relative.split("/", 1)[0])
    return frozenset(folder for folder in made if not any(path.startswith(folder + "/") for path in tracked))


# A reproduction or debugging script by its name (a `test_*.py` may be the project's own test, so it is not one).
# (a copy being written to replace it, ``reproduce.py.new``, or kept aside, ``.bak``, is one too)
_THROWAWAY = re.compile(r"^(?:reproduce|repro|debug|scratch|tmp|temp)[\w.-]*\.(?:py|js|ts|sh|rb)(?:\.(?:new|bak|orig|old))?$",
                        re.IGNORECASE)
# Where no submitted diff says, a script named for running the tests or the reproduction
# (``run_tests.py``, ``runtests.py``, ``run_reproduce.py``), and a copy of a source file being written
# to replace it or kept aside (``stackplot.py.new``, ``.bak``) are the agent's own too; a test file's
# copy is not, since moved over the test it carries the test's edit (sphinx-7889's skip markers).
_RUNNER_SCRIPT = re.compile(r"^run_?(?:\w*[_-])?(?:tests?|repro\w*)(?:[_-]\w*)?\.(?:py|sh)$", re.IGNORECASE)
_WORKING_COPY = re.compile(r"^[\w.-]+\.(?:py|js|ts|sh|rb)\.(?:new|bak|orig|old)$", re.IGNORECASE)

# Writes that change a file in place: the file was there before the agent wrote it.
_IN_PLACE = frozenset({"sed", "edit", "patch", "restore"})


def tracked_files(steps: list[Step], submitted: dict[str, str] | None, roots: tuple[str, ...]) -> frozenset[str]:
    """The repository's own files among those the agent wrote: one whose first write changes it in
    place (``sed -i``, an editor's replace or insert, a patch's change of existing lines, a
    restore), and one the submitted diff modifies or deletes. Such a file is never "created" nor
    scratch, submitted or not: a test edited and then left out of the submission is still an
    edit of the project's tests."""
    first: dict[str, str] = {}
    for step in steps:
        for path, how in step.writes:
            if path:
                relative, outside = repo_relative(os.path.normpath(path), roots)
                if not outside:
                    first.setdefault(relative, how)
    tracked = {path for path, how in first.items() if how in _IN_PLACE}
    if submitted:
        tracked.update(path for path, status in submitted.items() if status != "created")
    return frozenset(tracked)


def find_checks(steps: list[Step], submitted: dict[str, str] | None, roots: tuple[str, ...],
                own: frozenset[str], statement: str = "") -> list[Step]:
    """The steps, each that runs a script to see what the code does (``python reproduce.py``,
    ``python -c``, ``./run.sh``: :mod:`procjudge.importers.checks`) made a check, with what it
    showed as one test named after it; a script the log showed writing the repository's files is
    an edit instead. Test runs, installs and structured edits are left as they are. A check run
    after the agent wrote its script again since the check last passed is ``rewritten``; one that
    stopped setting itself up (:data:`_SETUP_FAILED`) validated nothing, unless the task
    (``statement``) is about that error."""
    texts: dict[str, str] = {}  # the scripts the agent wrote, by path, as last written
    # each file's last write, by step, under its name (a script run as `cd /workspace && python x.py`
    # names it relative to a folder the log does not always say)
    written: dict[str, int] = {}
    passed: dict[str, int] = {}  # each check's last passing run, by step
    out = []
    for index, step in enumerate(steps):
        for path, _ in step.writes:
            if path:
                written[os.path.basename(path)] = index
        step = _checked(step, texts, submitted, roots, own)
        step = _setup_failed(step, statement)
        probe, outcome = step.probe, step.probe_outcome
        if probe is not None and outcome is not None and not step.test:
            script = script_of(probe) if probe in passed else None
            if script is not None and written.get(os.path.basename(script), -1) > passed[probe]:
                step = step.but(rewritten=True)  # what it shows now is not what passed
            if outcome.passed:
                passed[probe] = index
        out.append(step)
    return out


@functools.lru_cache(maxsize=1024)
def script_of(probe: str) -> str | None:
    """The file a check's command runs (``python reproduce.py`` -> ``reproduce.py``), or None."""
    found = script_run(without_prefixes(probe), words_of(probe))
    return found.script if found is not None else None


# A script that stopped setting itself up, before it reached the code it meant to run: Django's
# settings not configured, its app registry not ready, a model outside INSTALLED_APPS, a database
# alias the settings lack, settings configured twice, an empty SECRET_KEY, the SQLite schema editor
# opened inside a transaction (OpenHands runs hit these in 93 of 500 trajectories). Its words, for a
# task that is about the error itself.
_SETUP_FAILED = re.compile(
    r"(?P<settings>settings are not configured)|(?P<registry>AppRegistryNotReady)"
    r"|(?P<label>doesn't declare an explicit app_label and isn't in an application in INSTALLED_APPS)"
    r"|(?P<alias>ConnectionDoesNotExist)|(?P<twice>Settings already configured)|(?P<reentrant>populate\(\) isn't reentrant)"
    r"|(?P<secret>The SECRET_KEY setting must not be empty)"
    r"|(?P<sqlite>SQLite schema editor cannot be used while foreign key constraint checks are enabled)")


_DJANGO_TEST = re.compile(r"-m django test\s+((?:[\w.]+\s*)+)")


def _label_unimported(command: str, line: str) -> bool:
    """Whether ``python -m django test LABEL`` stopped because LABEL's module cannot be imported
    (``No module named 'admin_views'``: Django's test apps live in tests/, which is not on the path
    unless runtests.py puts it there): the run reached no test."""
    labels = _DJANGO_TEST.search(command)
    missing = re.search(r"No module named '([\w.]+)'", line)
    return labels is not None and missing is not None \
        and missing.group(1).split(".")[0] in {label.split(".")[0] for label in labels.group(1).split()}


def _setup_failed(step: Step, statement: str) -> Step:
    """The script check with "validated nothing" where it stopped setting itself up (``_SETUP_FAILED``)
    and the task's statement does not name that error."""
    outcome = step.probe_outcome
    if outcome is None or outcome.passed or step.test:
        return step
    match = _SETUP_FAILED.search(outcome.line)
    if match is None and _label_unimported(step.command, outcome.line):
        why = f"its test label names a module it cannot import (the tests' folder is not on the path): {outcome.line[:120]}"
    elif match is None or match.group(0) in statement or (match.lastgroup == "label" and "app_label" in statement) \
            or (match.lastgroup == "secret" and "SECRET_KEY" in statement):
        return step
    else:
        why = f"it stopped setting itself up, before it reached the code: {outcome.line[:160]}"
    return step.but(unavailable=why, counts=None, probe_outcome=Outcome(None, outcome.line, outcome.how, unavailable=why),
                    frames=[])


def _checked(step: Step, texts: dict[str, str], submitted: dict[str, str] | None, roots: tuple[str, ...],
             own: frozenset[str]) -> Step:
    """One step of :func:`find_checks`, after the scripts written before it (``texts``)."""
    _remember_scripts(step, texts, roots)
    if not step.shell or step.test:
        return step
    parts = segments(step.command)
    runs = []
    for k, part in enumerate(parts):
        plain = without_prefixes(part)
        if is_environment(plain) or re.match(r"^(?:cd|pushd|export|source|\.)(?:\s|$)", plain):
            continue
        if RUNNER.search(" " + part) or any(pattern.match(plain) for pattern, _ in OTHER_RUNNERS):
            continue  # a test runner asked for its help, version or collection: no check
        found = script_run(plain, words_of(plain))
        if found is not None:
            runs.append((k, found))
    if not runs:
        return step
    position, found = runs[-1]
    script_text = texts.get(repo_relative(os.path.normpath(found.script), roots)[0]) if found.script else None
    targets = script_targets(script_text, found.script) if script_text else []
    written = [path for path, how in step.writes if how == "script"] + targets
    if any(not scratch_write(path, submitted, roots) and not output_file(path) for path in written):
        # a script that rewrites the code: an edit (one that writes its results, answer.txt, is still a check)
        return step.but(writes=step.writes + [(os.path.normpath(path), "script") for path in targets
                                              if (os.path.normpath(path), "script") not in step.writes])
    # the exit status is the last simple command's: a script followed by `| tail` or `|| echo` has none
    code = step.returncode if position == len(parts) - 1 else None
    kind = _probe_kind(found, texts, roots)
    outcome = check_outcome(code, step.output, own)
    timed_out = _timed_out(parts[position], code, step.output)
    if timed_out:
        outcome = Outcome(None, outcome.line, "timed out", unavailable=timed_out)
    if outcome.unavailable:
        return step.but(probe_kind=kind, probe_code=code, unavailable=outcome.unavailable, probe=found.identity)
    frames = [(name, line) for (name, outside), (_, line) in
              ((repo_relative(os.path.normpath(path), roots), (path, line)) for path, line in outcome.frames)
              if not outside and not _library_path(name)][-20:]
    files = [name for name, _ in frames]
    test: dict[str, Any] = {"name": found.identity, "outcome": "passed" if outcome.passed else "failed",
                            "message": f"{outcome.line or 'printed nothing'} ({outcome.how})"}
    if files:
        test["files"] = list(dict.fromkeys(files))[-20:]
    return step.but(probe_kind=kind, probe_code=code, probe=found.identity, probe_outcome=outcome, frames=frames,
                    counts=Counts(int(bool(outcome.passed)), int(not outcome.passed), 0, [test]))


# A script the agent named as its reproduction of the bug: what it prints on the unchanged code is the bug.
_REPRODUCTION = re.compile(r"(?:^|[\s/])(?:reproduce|repro)[\w.-]*\.(?:py|sh|js|ts|rb)\b", re.IGNORECASE)
_UNVERDICTED = ("exit 0", "no error printed")  # passed only because nothing failed: no assert, no verdict printed


def same_as_unchanged(steps: list[Step]) -> list[Step]:
    """The steps, each run of the agent's reproduction (``reproduce*.py``, ``repro*.py``) that
    passed only by its exit status and printed, after the code changed, exactly what it printed on
    the unchanged code, made a failure: a reproduction is written to show the bug, and the same
    output shows the same behaviour (sympy-18763: 17 edits, each followed by the same wrong LaTeX).
    The comparison holds while the script itself is not written again; a run with the agent's
    changes set aside is no change of the code."""
    unchanged: dict[str, str] = {}  # the reproduction's command -> what it printed on the unchanged code
    changed = False
    out = []
    for step in steps:
        for path, _ in step.writes:  # the script rewritten: its later output compares with nothing before
            name = os.path.basename(path)
            for command in [c for c in unchanged if name and name in c]:
                del unchanged[command]
        changed = changed or step.code_edit
        outcome = step.probe_outcome
        if step.probe is None or outcome is None or not outcome.passed or outcome.how not in _UNVERDICTED \
                or step.set_aside or not _REPRODUCTION.search(step.probe):
            out.append(step)
            continue
        printed = step.output.strip()
        if not changed:
            unchanged[step.probe] = printed
        elif printed and unchanged.get(step.probe) == printed:
            line = next((text for text in reversed(printed.split("\n")) if text.strip()), "")[:200]
            same = Outcome(False, line, "the same output as on the unchanged code", outcome.frames)
            test = {"name": step.probe, "outcome": "failed",
                    "message": f"{line} (printed as on the unchanged code: the behaviour it reproduces did not change)"}
            step = step.but(probe_outcome=same, counts=Counts(0, 1, 0, [test]))
        out.append(step)
    return out


_TIMEOUT_PREFIX = re.compile(r"^\s*timeout\s")


def _timed_out(part: str, code: int | None, output: str) -> str | None:
    """Why a check could not finish, or None: ``timeout N`` ended it (its exit status 124), the
    harness killed it at its time limit, or it was still running when the log moved on (-1). A
    check that did not finish showed nothing of the code's outcome, as a test run that timed out
    shows none."""
    if code == 124 and _TIMEOUT_PREFIX.match(part):
        return "it timed out (timeout ended it: exit status 124)"
    if KILLED_BY_HARNESS in output[:2000]:
        return "the harness killed it at its time limit"
    if code == -1:  # OpenHands' code for a command still running at its soft timeout, never waited for
        return "it had not finished when the agent moved on (exit code -1)"
    return None


def _probe_kind(found: Any, texts: dict[str, str], roots: tuple[str, ...]) -> CheckKind:
    """A script check's kind: inline code, a reproduction the agent wrote (a script whose text the
    log showed it writing, or one outside the repository), or a script of the project's."""
    if found.script is None:
        return "inline" if " -c " in f" {found.identity} " or " -e " in f" {found.identity} " else "project_script"
    relative, outside = repo_relative(os.path.normpath(found.script), roots)
    return "reproduction" if outside or relative in texts or _THROWAWAY.match(relative.rsplit("/", 1)[-1]) \
        else "project_script"


def _library_path(path: str) -> bool:
    return "site-packages/" in path or "dist-packages/" in path or path.startswith(("<", "/usr/lib/python"))


def _remember_scripts(step: Step, texts: dict[str, str], roots: tuple[str, ...]) -> None:
    """Keep the text of every script a step writes whole (a heredoc into a file, an editor's create)."""
    if step.editor is not None:
        if step.editor.get("command") in ("create", "write"):
            text = step.editor.get("file_text") if step.editor.get("command") == "create" else step.editor.get("content")
            path = str(step.editor.get("path") or "")
            if path and isinstance(text, str):
                texts[repo_relative(os.path.normpath(path), roots)[0]] = text
        return
    if "<<" not in step.command:
        return
    for opener, body in rebuild.heredoc_bodies(step.command):
        for path in redirect_targets(opener):
            if path not in ("/dev/null",):
                texts[repo_relative(os.path.normpath(path), roots)[0]] = body
