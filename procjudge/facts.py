"""What each submission did, derived once from a validated Run.

Every detector reads these facts instead of the raw records, so a quantity such as "tests fixed in
iteration 2" is computed in one place, with one rule, and says what evidence it rests on
(``basis``): per-test outcomes by name when the run has them, the document's plain counts
otherwise.

The submission plan is settled here too, before anything is scored: in sprint format a submission
followed by another within the double-submit window does not count; submissions past the budget
(per format, per marathon phase, or ``run.max_iterations``) are not scored, and the last valid
submission is the final one.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

import msgspec

from . import outcome
from .diffs import header_path
from .model import Changes, Counts, Entry, FileChange, HistoryRead, LocalCheck, Run, TestResults
from .numbers import fmt_num
from .outcome import SCORE_NEEDED, held_back_only, hold_back_categories, test_counts
from .policy import Policy

_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$"
                        r"|(^|/)conftest\.py$")


_THROWAWAY = re.compile(
    r"^(?:reproduce|repro|debug|scratch|check|verify|try|tmp|temp|sanity|probe|demo|explore|investigate)"
    r"(?:[_-][^/]*)?\.(?:py|sh|js|ts|rb)$|^(?:reproduce|repro)[^/]*$",
    re.IGNORECASE,
)
_ROOT_TEST_SCRIPT = re.compile(r"^test_[^/]*\.py$")


def outside_repository(path: str) -> bool:
    """A path outside the repository: absolute, under the home folder, or climbing out with ``..``."""
    path = path.replace("\\", "/")
    return path.startswith(("/", "~", "../")) or bool(re.match(r"^[A-Za-z]:/", path))


def throwaway_name(path: str) -> bool:
    """A throw-away script by its name and place, for a file the agent created:
    ``reproduce_*.py``, ``check_*.py``, ``debug*.py`` anywhere, a ``test_*.py`` in the repository root."""
    path = path.replace("\\", "/")
    path = path.removeprefix("./")
    name = path.rsplit("/", 1)[-1]
    return bool(_THROWAWAY.match(name)) or ("/" not in path and bool(_ROOT_TEST_SCRIPT.match(name)))


_GENERATED = re.compile(r"(?:^|/)(?:build/(?:lib|bdist|scripts|temp)[^/]*/|dist/|node_modules/|__pycache__/|\.tox/|\.eggs/"
                        r"|\.venv/|venv/|site-packages/|[^/]+\.egg-info/)")
_CHECKER_HOOKS = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py", "setup.py", "__init__.py",
                            "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"})


def generated(path: str) -> bool:
    """Build output, installed or vendored environments (``build/lib*/``, ``dist/``, ``*.egg-info/``,
    ``node_modules/``, ``site-packages/``): a copy of code, not code the agent wrote."""
    return bool(_GENERATED.search(path.replace("\\", "/")))


# Files the test runner itself loads before any test runs, whatever the tests import.
_RUNNER_LOADS = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py"})
# Files run as programs that no test imports: a package's installer, its entry script, and the top-level
# folders of scripts, examples, documentation and benchmarks.
_PROGRAMS = frozenset({"setup.py", "__main__.py", "manage.py", "noxfile.py", "fabfile.py"})
_PROGRAM_FOLDERS = frozenset({"scripts", "bin", "examples", "example", "docs", "doc", "benchmarks", "asv_bench"})


def runner_reach(path: str) -> str:
    """Whether the test runner reaches a file: ``"runner"`` for what it loads itself
    (``conftest.py``, ``sitecustomize.py``), ``"never"`` for a program no test imports
    (``setup.py``, ``__main__.py``, ``scripts/``, ``docs/``, ``examples/`` at the top), else
    ``"imported"``: what the tests import decides, which a log does not show."""
    path = path.replace("\\", "/").removeprefix("./")
    name = path.rsplit("/", 1)[-1]
    if name in _RUNNER_LOADS:
        return "runner"
    if name in _PROGRAMS or ("/" in path and path.split("/", 1)[0] in _PROGRAM_FOLDERS):
        return "never"
    return "imported"


# The test frameworks' own packages: in their source, skipping, exiting and patching the framework is its machinery.
_FRAMEWORK_PACKAGES = frozenset({"_pytest", "pytest", "unittest", "nose", "nose2", "pluggy"})


def framework_source(path: str) -> bool:
    """Whether a file is the test framework's own source (``src/_pytest/unittest.py``,
    ``Lib/unittest/case.py``): the repository is the checker, and the task changes how it skips,
    exits or reports."""
    folders = path.replace("\\", "/").removeprefix("./").split("/")[:-1]
    return any(folder in _FRAMEWORK_PACKAGES for folder in folders)


def helper_script(path: str) -> bool:
    """A script the agent created in the repository's root (``update_x.py``, ``test_walk.py``): run
    by hand, imported by no checker; a file the checker does load (``conftest.py``,
    ``sitecustomize.py``, ``setup.py``) is not one."""
    path = path.replace("\\", "/").removeprefix("./")
    return "/" not in path and path.endswith(".py") and path not in _CHECKER_HOOKS


# Source files, by their extension: a write of one after the last check changed code nobody ran (a
# README, a summary, an answer or data file written then did not)
SOURCE_FILES = (".py", ".pyx", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".java",
                ".go", ".rs", ".rb", ".php", ".sh", ".bash", ".pl", ".kt", ".scala", ".cs", ".swift", ".r", ".R", ".jl",
                ".lua", ".sql")


@functools.lru_cache(maxsize=4096)
def is_test_path(path: str) -> bool:
    """Whether a path names a test file (tests/, test_x.py, x_test.go, x.spec.ts, conftest.py)."""
    return bool(_TEST_PATH.search(path.replace("\\", "/")))


class FileDiff(msgspec.Struct, frozen=True):
    """What a diff adds to and removes from one file."""

    path: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    is_test: bool
    added_text: str  # the added lines joined by newlines, built once for the detectors that scan it
    created: bool = False  # the diff creates the file (``--- /dev/null``)
    tests_touched: tuple[str, ...] = ()  # a test file: the test functions whose lines the diff changes
    # each hunk's lines as the diff writes them (`` ``, ``+``, ``-`` first; its ``@@`` header
    # first): the context the cheat shapes read a fragment in, and what rebuilds a whole file
    hunks: tuple[tuple[str, ...], ...] = ()


class Diff(msgspec.Struct, frozen=True):
    """A unified diff split per file into added and removed lines."""

    per_file: tuple[FileDiff, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.path for f in self.per_file if f.path))

    @property
    def empty(self) -> bool:
        return not any(f.added or f.removed for f in self.per_file)

    @property
    def size(self) -> int:
        """Characters added and removed."""
        return sum(len(f.added_text) for f in self.per_file) + sum(sum(map(len, f.removed)) for f in self.per_file)




def _file_chunks(text: str) -> list[str]:
    """Cut a diff where each file's ``--- `` / ``+++ `` header pair begins (found with str.find:
    C speed, no per-line Python); git's ``diff --git``/``index`` lines fall in the previous chunk
    and are ignored there, since they start with neither + nor -."""
    starts = [0]
    at = text.find("\n+++ ")
    while at != -1:
        line_start = text.rfind("\n", 0, at) + 1
        if line_start > 0 and text.startswith("--- ", line_start):
            starts.append(line_start)
        at = text.find("\n+++ ", at + 1)
    starts.append(len(text))
    return [text[a:b] for a, b in itertools.pairwise(starts) if b > a]


# A line of a diff that defines a test: ``def test_x`` (Python), ``it('...'`` / ``test('...'`` (JavaScript).
TEST_DEF = re.compile(r"^[ +\-@]?.*?\b(?:def\s+(test\w*)|(?:it|test)\(\s*['\"]([^'\"]{1,120}))")


def _tests_touched(body: list[str]) -> tuple[str, ...]:
    """The test functions (Python ``def test_*``, JavaScript ``it('...')``/``test('...')``) whose
    lines a test file's hunks change, from the hunk headers and context lines above each change."""
    current = ""
    touched: dict[str, None] = {}
    for line in body:
        # the pattern needs "def test..." or "it(" / "test(": most lines hold neither, unmatched
        match = TEST_DEF.match(line) if "test" in line or "it(" in line else None
        if match:
            current = match.group(1) or match.group(2) or current
        if line[:1] in "+-" and current:
            touched[current] = None
    return tuple(touched)


def _hunks(body: list[str], chunk: str, start: int) -> tuple[tuple[str, ...], ...]:
    """The body of one file's diff (its lines, from offset ``start`` of the ``chunk`` they were split
    from) cut at each ``@@`` header (lines before the first are dropped), and before the next
    file's ``diff --git`` header: git's ``diff --git``/``new file mode``/``index`` lines fall in
    the previous file's chunk (:func:`_file_chunks`), and read as the last hunk's context they put
    code at the module's level (pylint-6506's ``sys.exit(1)`` inside ``_config_initialization``
    read as run at import, a definite checker tampering)."""
    cut = chunk.find("\ndiff ", start)  # found in C, in the text the lines came from: no per-line Python
    if cut >= 0:
        body = body[:chunk.count("\n", start, cut) + 1]
    starts = [k for k, line in enumerate(body) if line.startswith("@@")]
    if not starts:
        return (tuple(body),) if any(line[:1] in "+-" for line in body) else ()
    starts.append(len(body))
    return tuple(tuple(body[a:b]) for a, b in itertools.pairwise(starts))


# A file git's header alone creates: ``new file mode``, then no ``--- ``/``+++ `` pair (a binary
# file is "Binary files /dev/null and b/x differ", an empty one has nothing more).
_HEADER_ONLY = re.compile(r'^diff --git (?:"a/.+"|a/\S+) (?:"b/(.+)"|b/(\S+))[ \t]*\nnew file mode [0-7]+\n'
                          r'(?!(?:index [^\n]*\n)?--- )', re.MULTILINE)


def parse_diff(text: str) -> Diff:
    """Split a unified diff per file into added and removed lines (linear, no per-line branching)."""
    per_file = []
    for chunk in _file_chunks(text):
        if not chunk:
            continue
        lines = chunk.split("\n")
        path = ""
        header = 0
        created = False
        for index, line in enumerate(lines[:6]):
            if line.startswith("@@"):
                break
            if line.startswith("+++ "):
                path = header_path(line)  # '' for /dev/null: a deleted file is named by no path
                header = index + 1
            elif line.startswith("--- ") and not path:
                path = header_path(line)
                created = path == ""
                header = index + 1
            elif line.startswith("diff --git "):
                header = index + 1
        body = lines[header:]
        start = sum(len(line) + 1 for line in lines[:header])  # where the body begins in the chunk
        added = tuple([line[1:] for line in body if line[:1] == "+"])
        removed = tuple([line[1:] for line in body if line[:1] == "-"])
        if path or added or removed:
            is_test = is_test_path(path) if path else False
            per_file.append(FileDiff(path, added, removed, is_test, "\n".join(added), created,
                                     _tests_touched(body) if is_test else (), _hunks(body, chunk, start)))
    if "\nnew file mode" in text or text.startswith("new file mode"):
        for match in _HEADER_ONLY.finditer(text):  # a binary or empty file created: no text, no ---/+++ pair
            path = match.group(1) or match.group(2)
            per_file.append(FileDiff(path, (), (), is_test_path(path), "", True))
    return Diff(tuple(per_file))


# A decimal number as text (``0.7456``; not the ``0.1`` of a version ``0.1.2``): what an importer and a
# rule read as numbers typed in by hand.
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
# A frame of a Python traceback (its file and line): the importers read checks' frames with it too.
TRACEBACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
# A line that says what went wrong; make's own "*** [target] Error 2" only says that something did.
_CAUSE = re.compile(r"(?i)\berror\b|\bfatal\b|no such file|not found|cannot|can't|undefined reference")
_MAKE_WRAPPER = re.compile(r"^g?make(?:\[\d+\])?: \*\*\*")


def failure_gist(text: str, limit: int = 160) -> str:
    """The line that says why a build or run failed: for a Python traceback (whole, or its head cut
    off) its exception line and innermost frame (``SyntaxError: invalid syntax (at
    /testbed/src/m.py:310)``); else the first line naming a cause (a compiler's ``error:``, a
    missing file), make's own ``*** Error 2`` aside; else the text's start."""
    start = text.rfind("Traceback (most recent call last):")
    frame = TRACEBACK_FRAME.search(text, max(start, 0))
    if frame is not None:
        tail = text[frame.start():]
        ending = [line.strip() for line in tail.split("\n") if line.strip() and not line[0].isspace()]
        frames = TRACEBACK_FRAME.findall(tail)
        if ending and not ending[-1].startswith("File "):
            where = f" (at {frames[-1][0]}:{frames[-1][1]})" if frames else ""
            return ending[-1][:max(40, limit - len(where))] + where
    for line in text.split("\n"):
        if _CAUSE.search(line) and not _MAKE_WRAPPER.match(line.strip()):
            return line.strip()[:limit]
    return text.strip()[:limit]


def iteration_number(entry: Entry, position: int) -> int:
    """The iteration number a record gives itself, else its position in the file."""
    recorded = entry.iteration_telemetry.iteration_number
    return recorded if recorded is not None else position


def parse_time(value: str | None) -> float | None:
    """Seconds since the epoch for an ISO 8601 timestamp, or None when absent or unreadable."""
    if not value:
        return None
    return _parse_time(value)


@functools.lru_cache(maxsize=4096)
def _parse_time(value: str) -> float | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class OutcomeFacts(NamedTuple):
    """What a submission scored: counts, build, timeout, the score (``_outcome_facts``)."""

    score: float
    score_source: str
    passed: int | None
    failed: int | None
    total: int | None
    build_failed: bool
    timed_out: bool
    tests_not_run: int
    tests_completed: int | None
    recorded_delta: float | None  # score.delta as the harness recorded it
    score_samples: tuple[float, ...]  # the same submission scored repeatedly


class TestFacts(NamedTuple):
    """Its tests against the ones before (``_test_facts``)."""

    failing_before: frozenset[str] | None
    failing_after: frozenset[str] | None
    failures_before_count: int | None
    tests_fixed: int | None
    tests_broken: int | None
    broken_names: tuple[str, ...]
    tests_basis: str
    stack_files_before: frozenset[str]
    hidden: Counts | None
    hidden_failing: tuple[str, ...]  # held-back tests that failed, by name, where the suite names them
    tests_ran: bool  # False after a failed build or a timeout: no list of regressions
    suite: str | None
    failures: tuple[str, ...]  # names, messages and categories of the tests failing after it
    passing_after: frozenset[str] | None  # tests passing after it, by name
    regressions_ruled_out: bool  # the evidence excludes a broken test (not only a net gain)
    local_checks: tuple[LocalCheck, ...]  # every check the agent ran on this code, in order (local runs)
    # the tests failing in the agent's own run before its first edit (a shell log's baseline): what
    # the first iteration answers
    baseline_failures: tuple[str, ...]
    counted_before: bool  # the counts before it were recorded (test_results.pre_iteration): the baseline ran its suite
    # the checks run with the agent's changes set aside (``git stash``, or its files restored): what the unchanged
    # code does
    on_base: tuple[LocalCheck, ...]


class ChangeFacts(NamedTuple):
    """What it changed (``_change_facts``)."""

    files_changed: int | None
    changed_paths: tuple[str, ...]
    code_hash: str | None
    diff: Diff | None
    code: str | None  # the submitted program, where the run carries it
    history: tuple[HistoryRead, ...]  # reads of the repository history beyond the base (shell agents)
    fix_paths: tuple[str, ...]  # changed paths less scratch files: what the fix touched
    scratch_paths: tuple[str, ...]
    changes: Changes | None  # the change record (files, summary, sizes), as given


class ActionFacts(NamedTuple):
    """What the agent did and when (``_action_facts``)."""

    test_runs: int | None
    file_edits: int | None
    duration: float | None
    submitted_at: float | None
    seconds_before_first_edit: float | None
    read_feedback: bool | None
    failures_referenced: int | None
    action_tools: tuple[str, ...] | None  # the action log's tools, in order
    build_errors: tuple[str, ...]
    tool_calls: int | None
    timestamp_start: str | None
    untested_edits: int  # source files written after the last check (a shell log's final iteration)


class IterationFacts(msgspec.Struct, frozen=True):
    """One scored submission, as the detectors see it. Made by ``_iteration`` alone, which passes
    the fields positionally, family by family: the fields are declared in the families' order
    (``FAMILIES``: each family is a typed tuple, :class:`OutcomeFacts`, :class:`TestFacts`,
    :class:`ChangeFacts`, :class:`ActionFacts`), so the struct takes them spread, unmapped."""

    # the submission itself
    position: int  # index in the original file
    number: int  # iteration number as recorded (or the position)
    entry: Entry
    phase: str | None
    delta: float | None
    # outcome (``_outcome_facts``)
    score: float
    score_source: str
    passed: int | None
    failed: int | None
    total: int | None
    build_failed: bool
    timed_out: bool
    tests_not_run: int
    tests_completed: int | None
    recorded_delta: float | None  # score.delta as the harness recorded it
    score_samples: tuple[float, ...]  # the same submission scored repeatedly
    # tests against the ones before (``_test_facts``)
    failing_before: frozenset[str] | None
    failing_after: frozenset[str] | None
    failures_before_count: int | None
    tests_fixed: int | None
    tests_broken: int | None
    broken_names: tuple[str, ...]
    tests_basis: str
    stack_files_before: frozenset[str]
    hidden: Counts | None
    hidden_failing: tuple[str, ...]  # held-back tests that failed, by name, where the suite names them
    tests_ran: bool  # False after a failed build or a timeout: no list of regressions
    suite: str | None
    failures: tuple[str, ...]  # names, messages and categories of the tests failing after it
    passing_after: frozenset[str] | None  # tests passing after it, by name
    regressions_ruled_out: bool  # the evidence excludes a broken test (not only a net gain)
    local_checks: tuple[LocalCheck, ...]  # every check the agent ran on this code, in order (local runs)
    baseline_failures: tuple[str, ...]  # failing in the agent's own run before its first edit (a shell log)
    counted_before: bool  # the counts before it were recorded: the baseline ran its suite
    on_base: tuple[LocalCheck, ...]  # checks run with the agent's changes set aside (git stash, files restored)
    # changes (``_change_facts``)
    files_changed: int | None
    changed_paths: tuple[str, ...]
    code_hash: str | None
    diff: Diff | None
    code: str | None  # the submitted program, where the run carries it
    history: tuple[HistoryRead, ...]  # reads of the repository history beyond the base (shell agents)
    fix_paths: tuple[str, ...]  # changed paths less scratch files: what the fix touched
    scratch_paths: tuple[str, ...]
    changes: Changes | None  # the change record (files, summary, sizes), as given
    # actions and timing (``_action_facts``)
    test_runs: int | None
    file_edits: int | None
    duration: float | None
    submitted_at: float | None
    seconds_before_first_edit: float | None
    read_feedback: bool | None
    failures_referenced: int | None
    action_tools: tuple[str, ...] | None  # the action log's tools, in order
    build_errors: tuple[str, ...]
    tool_calls: int | None
    timestamp_start: str | None
    untested_edits: int  # source files written after the last check (a shell log's final iteration)

    @property
    def all_passing(self) -> bool:
        return self.total is not None and self.total > 0 and self.passed == self.total

    @property
    def file_changes(self) -> Sequence[FileChange]:
        """The files its change record lists, as given (none when it has no record)."""
        return (self.changes.files or ()) if self.changes is not None else ()


# Each family's fields, in the order its typed tuple declares them.
FAMILIES: dict[str, tuple[str, ...]] = {
    "_iteration": ("position", "number", "entry", "phase", "delta"),
    "_outcome_facts": OutcomeFacts._fields,
    "_test_facts": TestFacts._fields,
    "_change_facts": ChangeFacts._fields,
    "_action_facts": ActionFacts._fields,
}
if tuple(name for names in FAMILIES.values() for name in names) != IterationFacts.__struct_fields__:
    raise AssertionError("IterationFacts declares its fields in the families' order")


class Exclusion(msgspec.Struct, frozen=True):
    """A submission that is not scored, and why (``rule`` is the rule item id)."""

    position: int
    number: int
    rule: str
    reason: str


class RunFacts(msgspec.Struct, frozen=True, kw_only=True):
    run: Run
    format: str
    budget: int
    iterations: tuple[IterationFacts, ...]
    excluded: tuple[Exclusion, ...]
    phases: tuple[str, ...]
    phase_budgets: dict[str, int]
    warnings: tuple[str, ...] = ()  # what is implausible in the run (scale, contradictions, order)
    submissions: tuple[tuple[int, str | None], ...] = ()  # (number, phase) of every submission, scored or not
    # Each scored submission with the one before it, (previous, current): read by many detectors, made once.
    pairs: tuple[tuple[IterationFacts, IterationFacts], ...] = ()

    @property
    def trajectory(self) -> list[float]:
        return [it.score for it in self.iterations]

    @property
    def final(self) -> IterationFacts:
        return self.iterations[-1]


Answer = TypeVar("Answer")


def last_run(func: Callable[[RunFacts, Policy], Answer]) -> Callable[[RunFacts, Policy], Answer]:
    """``func`` keeping its answer for the last (facts, policy) asked: the judge asks several rules
    about one run in turn, and they share what it computes. One tuple, read and replaced whole,
    so threads may share it; it holds the facts and policy, so their ids are not reused."""
    last: list[tuple[Any, Any, Any]] = [(None, None, None)]

    @functools.wraps(func)
    def remembered(facts: RunFacts, policy: Policy) -> Answer:
        last_facts, last_policy, answer = last[0]
        if last_facts is facts and last_policy is policy:
            return answer  # type: ignore[no-any-return]
        answer = func(facts, policy)
        last[0] = (facts, policy, answer)
        return answer

    return remembered


class FactsError(ValueError):
    """A ``Run`` built without ``load_run`` (which refuses such runs with a located message) that
    cannot be placed on a trajectory; carries the iteration position."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(message)
        self.position = position


def _names(entry: Entry) -> tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str]]:
    """(failing names, passing names, stack-trace files of the failing tests) after a submission."""
    return _read_tests(entry)[0]


def _read_tests(entry: Entry) -> tuple[Names, tuple[str, ...]]:
    """``_names`` of a submission, and the names, messages and categories of the tests failing
    after it (``IterationFacts.failures``), read in one pass over its tests."""
    results = entry.iteration_telemetry.test_results
    files: set[str] = set()
    failing: set[str] | None = None
    passing: set[str] | None = None
    texts: list[str] = []
    if results is not None and results.tests:
        failing, passing = set(), set()
        for test in results.tests:
            state = test.outcome
            if state == "passed":
                passing.add(test.name)
            elif state == "failed" or state == "error":
                name = test.name
                failing.add(name)
                if test.files:  # most tests have none: no update of an empty tuple
                    files.update(test.files)
                texts += (name, test.message or "", test.category or "")
    feedback = entry.iteration_feedback
    if feedback is not None and feedback.tests is not None and feedback.tests.failures is not None:
        if failing is None:
            failing = set()
        for failure in feedback.tests.failures:
            name = failure.name
            failing.add(name)
            if failure.files:
                files.update(failure.files)
            texts += (name, failure.message or "", failure.category or "")
    names = (
        frozenset(failing) if failing is not None else None,
        frozenset(passing) if passing is not None else None,
        frozenset(files),
    )
    return names, tuple(texts)


def _changed(entry: Entry, diff: Diff | None) -> tuple[int | None, tuple[str, ...]]:
    changes = entry.iteration_telemetry.changes
    if changes is None:
        return None, ()
    if changes.files is not None:
        return len(changes.files), tuple(f.path for f in changes.files)
    modified, created, deleted = changes.files_modified, changes.files_created, changes.files_deleted
    if modified is not None or created is not None or deleted is not None:
        return (modified or 0) + (created or 0) + (deleted or 0), diff.files if diff else ()
    if diff is not None:
        return len(diff.files), diff.files
    return None, ()


def _tests_fixed_broken(
    before: tuple[Any, Any], after: tuple[Any, Any], results: Any, pre_passed: int | None, passed: int | None,
    failed: int | None = None,
) -> tuple[int | None, int | None, tuple[str, ...], str]:
    """(tests fixed, tests broken, names broken, basis) for one submission.

    By name when both it and the previous one have per-test outcomes; else broken is
    ``test_results.regressions`` or, without it, the drop in passes (a lower bound), and fixed
    is the gain in passes plus the broken ones. A broken test fails afterwards, so the drop is
    capped by the failures after it: passes that vanish with no failure were tests removed.
    ``pre_passed`` is the passes before it (``_pre_passed``)."""
    failing_before, passing_before = before
    failing_after, passing_after = after
    if None not in (failing_before, passing_before, failing_after, passing_after):
        broken = tuple(sorted(passing_before & failing_after))
        if failing_before and not failing_before & (failing_after | passing_after):
            # none of the failing tests ran again (a shell agent's next check was another one): whether
            # any was fixed is not known, and "none fixed" would be a claim the log does not make
            return None, len(broken), broken, "per-test outcomes (the failing tests were not run again)"
        if passing_before and not passing_before & (failing_after | passing_after):
            # none of the tests that passed ran again: a regression among them is neither seen nor ruled out
            return len(failing_before & passing_after), None, (), "per-test outcomes (the passing tests were not run again)"
        return len(failing_before & passing_after), len(broken), broken, "per-test outcomes"
    broken_count = results.regressions if results and results.regressions is not None else None
    if pre_passed is None or passed is None:
        return None, broken_count, (), "test counts" if broken_count is not None else "none"
    gained = passed - pre_passed
    basis = "test counts"
    if broken_count is None:
        broken_count, basis = max(0, -gained), "pass counts (lower bound)"
        if failed is not None:
            broken_count = min(broken_count, failed)
    return max(0, gained + broken_count), broken_count, (), basis


def _plan(run: Run, policy: Policy) -> tuple[list[int], list[Exclusion], dict[str, int], int]:
    """Which submissions are scored: double submits merged (sprint), budgets applied."""
    info = run.info
    fmt = policy.format(info.format)
    entries = run.iterations
    excluded: list[Exclusion] = []
    positions = list(range(len(entries)))

    def number(position: int) -> int:
        return iteration_number(entries[position], position)

    if info.format == "sprint" and fmt.min_gap_seconds is not None:
        kept = []
        for position in positions:
            nxt = position + 1
            if nxt < len(entries):
                now = parse_time(entries[position].iteration_telemetry.timestamp_submit)
                later = parse_time(entries[nxt].iteration_telemetry.timestamp_submit)
                if now is not None and later is not None and 0 <= later - now < fmt.min_gap_seconds:
                    excluded.append(Exclusion(position, number(position), "double_submit",
                                              f"followed by iteration {number(nxt)} {later - now:.0f}s later "
                                              f"(< {fmt.min_gap_seconds:.0f}s): only the second counts"))
                    continue
            kept.append(position)
        positions = kept

    phase_budgets: dict[str, int] = {}
    if info.phases:
        mode = info.phase_budget or ("per_phase" if any(p.max_iterations for p in info.phases) else "global")
        if mode == "per_phase":
            phase_budgets = {p.name: p.max_iterations or fmt.budget for p in info.phases}
    budget = info.max_iterations or (sum(phase_budgets.values()) if phase_budgets else fmt.budget)

    kept = []
    used_in_phase: dict[str, int] = {}
    for position in positions:
        phase = entries[position].iteration_telemetry.phase
        if phase_budgets and phase in phase_budgets:
            used = used_in_phase.get(phase, 0)
            if used >= phase_budgets[phase]:
                excluded.append(Exclusion(position, number(position), "budget_exceeded",
                                          f"phase `{phase}` allows {phase_budgets[phase]} submissions"))
                continue
            used_in_phase[phase] = used + 1
        if len(kept) >= budget:
            excluded.append(Exclusion(position, number(position), "budget_exceeded",
                                      f"the {info.format} budget is {budget} submissions"))
            continue
        kept.append(position)
    excluded.sort(key=lambda e: e.position)
    return kept, excluded, phase_budgets, budget


def _scratch_paths(run: Run) -> frozenset[str]:
    """Files that are not part of the fix: flagged ``scratch``, outside the repository, created and
    later deleted within the run, or created with a throw-away name (``reproduce_*.py``, a
    ``test_*.py`` in the repository root)."""
    scratch: set[str] = set()
    created: set[str] = set()
    for entry in run.iterations:
        changes = entry.iteration_telemetry.changes
        if changes is None:
            continue
        scratch |= _scratch_in_files(changes, created)
        # Only a diff that creates a file or names one outside the repository can hold scratch.
        if changes.diff and changes.files is None and ("/dev/null" in changes.diff or "\n+++ /" in changes.diff
                                                       or "+++ b/.." in changes.diff):
            for file in parse_diff_cached(changes.diff).per_file:
                if file.path and (outside_repository(file.path) or (file.created and throwaway_name(file.path))):
                    scratch.add(file.path)
    # An explicit ``scratch: false`` wins over every inference.
    kept = {change.path for entry in run.iterations for change in (
        (entry.iteration_telemetry.changes.files or ()) if entry.iteration_telemetry.changes else ()
    ) if change.scratch is False}
    return frozenset(scratch - kept)


def _scratch_in_files(changes: Changes, created: set[str]) -> set[str]:
    """The scratch files of one change record: flagged, outside the repository, created with a
    throw-away name, or deleted after the run created them (``created`` is kept across records)."""
    scratch: set[str] = set()
    for change in changes.files or ():
        if change.scratch or outside_repository(change.path):
            scratch.add(change.path)
        if change.status == "created":
            created.add(change.path)
            if throwaway_name(change.path):
                scratch.add(change.path)
        elif change.status == "deleted" and change.path in created:
            scratch.add(change.path)
    return scratch


@functools.lru_cache(maxsize=256)
def parse_diff_cached(text: str) -> Diff:
    return parse_diff(text)


def _score(entry: Entry, position: int, build_failed: bool, zero_by_build: bool,
           passed: int | None, total: int | None, blind: bool = False, local: bool = False) -> tuple[float, str]:
    """An iteration's score and where it came from: 0 for a failed build (as the policy scopes
    it), else ``score.post_iteration``, else 100 x passed / total; an iteration of the agent's own
    runs that no check validated (``test_results.unavailable``, no counts) scores 0, nothing
    validated, when the held-back suite may not score the run (``blind``), else its held-back
    pass rate."""
    telemetry = entry.iteration_telemetry
    if zero_by_build:
        return 0.0, "build failure"
    if telemetry.score is not None and telemetry.score.post_iteration is not None:
        return float(telemetry.score.post_iteration), "score.post_iteration"
    if total:
        return round(100.0 * (passed or 0) / total, 2), "100 x passed / total"
    if build_failed:
        return 0.0, "build failure"
    results = entry.iteration_telemetry.test_results
    unvalidated = results is not None and results.unavailable is not None
    held_back = None if blind else held_back_only(entry)
    if held_back is not None:
        return held_back, "held-back suite (no local run validated anything)"
    if unvalidated and (blind or local):
        return 0.0, "nothing validated (no check of the agent's ran after its edits)"
    raise FactsError(position, SCORE_NEEDED)


def _comparable(previous: IterationFacts | None, suite: str | None, total: int | None) -> bool:
    """Whether pass counts can be compared with the previous run of the tests: the same declared
    suite, or, without declared suites, the same number of tests."""
    if previous is None:
        return True
    if suite is not None and previous.suite is not None:
        return suite == previous.suite
    if total is not None and previous.total is not None:
        return total == previous.total
    return True


def _duration(recorded: float | None, start: str | None, submitted: float | None) -> float | None:
    """An iteration's duration: as recorded, else from its start to its submission."""
    if recorded is not None or submitted is None:
        return recorded
    started = parse_time(start)
    return submitted - started if started is not None and submitted >= started else None


def _ruled_out(broken: int | None, basis: str, baseline_passed: int | None, passed: int | None,
               total: int | None, comparable: bool, explicit: int | None) -> bool:
    """Whether the evidence excludes a broken test (and something could have broken): per-test
    outcomes that show none, a harness's ``regressions: 0``, or every test passing on the same suite.
    A net gain in passes does not: 18/24 to 20/24 can hide two regressions."""
    if not baseline_passed:
        return False
    if basis == "per-test outcomes":
        return broken == 0
    if explicit is not None:
        return explicit == 0
    return comparable and total is not None and passed == total


def _plausibility(run: Run, facts: list[IterationFacts], max_gap: float) -> list[str]:
    """Warnings for what a reader would doubt: a 0..1 scale, a score far from its own test counts,
    iteration numbers that repeat or go backwards."""
    warnings: list[str] = []
    scored = [it for it in facts if it.score_source == "score.post_iteration"]
    if scored and all(it.score <= 1.0 for it in scored) and any(
        it.score > 0 or (it.passed or 0) > 0 for it in scored
    ):
        shown = ", ".join(fmt_num(it.score) for it in scored[:6])
        warnings.append(f"the scores ({shown}) look like a 0..1 scale; procjudge reads scores on 0..100 "
                        "(multiply by 100 in the harness)")
    for it in scored:
        if it.total and not it.build_failed:
            from_counts = 100.0 * (it.passed or 0) / it.total
            if abs(from_counts - it.score) > max_gap:
                warnings.append(f"iteration {it.number}: score {fmt_num(it.score)} contradicts its test "
                                f"counts ({it.passed}/{it.total} = {fmt_num(round(from_counts, 1))}%)")
    warnings += _same_code_other_score(facts)
    numbers = [entry.iteration_telemetry.iteration_number for entry in run.iterations]
    # the common case: every number given, rising, none repeated
    if None not in numbers and numbers == sorted(set(numbers)):  # type: ignore[type-var]
        return warnings
    seen: set[int] = set()
    for position, (before, number) in enumerate(zip([None] + numbers, numbers, strict=False)):
        if number is None:
            continue
        if number in seen:
            warnings.append(f"iterations[{position}]: iteration number {number} repeats an earlier one")
        elif before is not None and number < before:
            warnings.append(f"iterations[{position}]: iteration number {number} comes after {before}")
        seen.add(number)
    return warnings


def _same_code_other_score(facts: list[IterationFacts]) -> list[str]:
    """The same code (equal ``code_hash``) scored differently by consecutive submissions: flaky
    tests, a changed suite, or a hash that is not of the code; identical_submission reads it as
    the same program either way."""
    warnings = []
    for previous, it in itertools.pairwise(facts):
        if (it.code_hash is not None and it.code_hash == previous.code_hash and it.score != previous.score
                and previous.suite == it.suite):
            warnings.append(f"iteration {it.number}: the same code_hash as iteration {previous.number} scored "
                            f"{fmt_num(it.score)} against {fmt_num(previous.score)} (flaky tests, or a hash that is "
                            "not of the code?)")
    return warnings


Names = tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str]]


def _iteration(run: Run, position: int, previous: IterationFacts | None, baseline: IterationFacts | None,
               names: Names, names_before: Names, first_of_phase: bool, policy: Policy,
               scratch: frozenset[str], failures: tuple[str, ...],
               unchanged_failing: Unchanged | None = None) -> IterationFacts:
    """The facts of one scored submission, family by family: its outcome (counts, build, score),
    its tests against the ones before, its changes, and its actions and timing. ``previous`` is
    the submission before it; ``baseline`` the last one whose tests ran (a failed build or a
    timeout is not a list of regressions); ``names`` and ``names_before`` are ``_names`` of this
    submission and of the baseline; ``failures`` its failing tests' texts (``_read_tests``);
    ``unchanged_failing`` the tests that failed on the unchanged code (``failing_on_unchanged_code``). Each family returns its
    fields as a tuple in the order ``FAMILIES`` names them, and the struct takes them positionally
    (no mapping, no keywords: a third of the cost)."""
    entry = run.iterations[position]
    number = iteration_number(entry, position)
    phase = entry.iteration_telemetry.phase
    local = run.info.iterations_are == "local_runs"
    outcome_facts = _outcome_facts(entry, position, first_of_phase, policy, local and not held_back_scores(run, policy),
                                   local, unchanged_failing)
    delta = None if previous is None else round(outcome_facts.score - previous.score, 6)
    # mypy does not map a spread tuple onto the fields; the module's check holds their order to FAMILIES
    return IterationFacts(position, number, entry, phase, delta, *outcome_facts,
                          *_test_facts(entry, previous, baseline, names, names_before, outcome_facts,  # type: ignore[arg-type]
                                       failures),
                          *_change_facts(entry, scratch), *_action_facts(entry))  # type: ignore[arg-type]


def _outcome_facts(entry: Entry, position: int, first_of_phase: bool, policy: Policy, blind: bool,
                   local: bool, unchanged_failing: Unchanged | None = None) -> OutcomeFacts:
    """Counts, build, timeout and the score: a timed-out submission's tests that did not run count as failed.
    ``blind``: the held-back suite may not score the run (``held_back_scores``); the failing
    tests among ``unchanged_failing`` (they failed on the unchanged code) are left out of the counts."""
    telemetry = entry.iteration_telemetry
    build_failed = outcome.build_failed(entry)
    passed, failed, total = test_counts(entry)
    results = telemetry.test_results
    left_out = 0
    if unchanged_failing is not None and total and results is not None and telemetry.score is None:
        left_out = unchanged_failing.left_out(results, failed or 0)
        if left_out and left_out < total:  # a run of none but those shows them failing still: it is kept
            failed, total = (failed or 0) - left_out, total - left_out
        else:
            left_out = 0
    timed_out = bool(telemetry.timed_out)
    tests_not_run = 0
    tests_completed = telemetry.tests_completed
    if timed_out and total is not None:
        tests_not_run = (max(0, total - tests_completed) if tests_completed is not None
                         else max(0, total - (passed or 0) - (failed or 0)))
        failed = total - (passed or 0)
    zero_by_build = build_failed and (policy.rules.build_failure.zero_score == "every_iteration" or first_of_phase)
    score, score_source = _score(entry, position, build_failed, zero_by_build, passed, total, blind, local)
    if left_out and score_source == "100 x passed / total":
        score_source += f" ({left_out} failing on the unchanged code too, left out)"
    recorded = telemetry.score
    recorded_delta = recorded.delta if recorded else None
    score_samples = tuple(recorded.samples or ()) if recorded else ()
    return OutcomeFacts(score, score_source, passed, failed, total, build_failed, timed_out, tests_not_run,
                        tests_completed, recorded_delta, score_samples)


def _test_facts(entry: Entry, previous: IterationFacts | None, baseline: IterationFacts | None, names: Names,
                names_before: Names, counts: OutcomeFacts, failures: tuple[str, ...]) -> TestFacts:
    """The tests against the ones before: fixed and broken (by name where the run names them),
    whether regressions are ruled out, the failures shown, and the held-back suites. ``counts``
    is the submission's ``_outcome_facts``."""
    passed, failed, total, build_failed, timed_out = counts.passed, counts.failed, counts.total, counts.build_failed, \
        counts.timed_out
    failing_after, passing_after, _ = names
    failing_before, passing_before, stack_files_before = names_before
    results = entry.iteration_telemetry.test_results
    suite = results.suite if results is not None else None
    comparable = _comparable(baseline, suite, total)
    pre = results.pre_iteration if results and results.pre_iteration else None  # the counts recorded before it
    tests_ran = not build_failed and not timed_out
    broken_names: tuple[str, ...]
    if not tests_ran:
        tests_fixed, tests_broken, broken_names, tests_basis = None, None, (), (
            "build failed: no list of regressions" if build_failed else "timed out: tests not run are not regressions")
    elif not comparable and None in (failing_before, passing_before, failing_after, passing_after):
        tests_fixed, tests_broken, broken_names, tests_basis = None, None, (), "not comparable: a different suite"
    else:
        tests_fixed, tests_broken, broken_names, tests_basis = _tests_fixed_broken(
            (failing_before, passing_before), (failing_after, passing_after), results, _pre_passed(pre, baseline),
            passed, failed)
    checks = entry.iteration_telemetry.checks
    if broken_names and checks and any(check.rewritten for check in checks):
        # a check whose script the agent wrote again after it passed is another check: its failure broke nothing
        last = {check.command: check for check in checks}
        kept = tuple(name for name in broken_names if not (name in last and last[name].rewritten))
        if len(kept) < len(broken_names):  # nor is a regression ruled out: the check that passed did not run again
            tests_broken, broken_names = len(kept), kept
            tests_basis = "per-test outcomes (a check whose script the agent rewrote after it passed compares with none)"
    failures_before_count = previous.failed if previous is not None else (
        (pre.failed if pre.failed is not None else pre.total_or_sum - pre.passed) if pre is not None else None
    )
    baseline_passed = baseline.passed if baseline is not None else (pre.passed if pre is not None else None)
    if baseline is None:
        failing_before = None
    hidden = results.hidden if results else None
    hidden_failing = _hidden_failing(results)
    regressions_ruled_out = tests_ran and _ruled_out(tests_broken, tests_basis, baseline_passed, passed, total,
                                                     comparable, results.regressions if results else None)
    local_checks = tuple(checks) if checks else ()
    on_base: tuple[LocalCheck, ...] = ()
    if any(check.on_base for check in local_checks):  # the unchanged code's runs are no checks of the agent's code
        on_base = tuple(check for check in local_checks if check.on_base)
        local_checks = tuple(check for check in local_checks if not check.on_base)
    baseline_tests = results.baseline_tests if results is not None else None
    baseline_failures = tuple([t.name for t in baseline_tests if t.outcome in ("failed", "error")]) if baseline_tests else ()
    counted_before = pre is not None
    return TestFacts(failing_before, failing_after, failures_before_count, tests_fixed, tests_broken, broken_names,
                     tests_basis, stack_files_before, hidden, hidden_failing, tests_ran, suite, failures, passing_after,
                     regressions_ruled_out, local_checks, baseline_failures, counted_before, on_base)


def _pre_passed(recorded: Counts | None, baseline: IterationFacts | None) -> int | None:
    """The passes before a submission: as recorded, else those of the last submission whose tests ran."""
    if recorded is not None:
        return recorded.passed
    return baseline.passed if baseline is not None else None


def _hidden_failing(results: TestResults | None) -> tuple[str, ...]:
    """The held-back tests that fail, by name."""
    if results is None or not results.hidden_suites:
        return ()
    return tuple(t.name for suite in results.hidden_suites for t in (suite.tests or ()) if t.outcome in ("failed", "error"))


def _change_facts(entry: Entry, scratch: frozenset[str]) -> ChangeFacts:
    """What the submission changed: its diff parsed, the files (scratch files apart), its code."""
    telemetry = entry.iteration_telemetry
    changes = telemetry.changes
    diff = parse_diff_cached(changes.diff) if changes and changes.diff is not None else None
    files_changed, changed_paths = _changed(entry, diff)
    fix_paths: tuple[str, ...] = changed_paths
    scratch_paths: tuple[str, ...] = ()
    if scratch and changed_paths:
        fix_paths = tuple(p for p in changed_paths if p not in scratch)
        scratch_paths = tuple(p for p in changed_paths if p in scratch)
    code_hash = changes.code_hash if changes else None
    code = changes.code if changes else None
    history = tuple(telemetry.history or ())
    return ChangeFacts(files_changed, changed_paths, code_hash, diff, code, history, fix_paths, scratch_paths,
                       changes)


def _action_facts(entry: Entry) -> ActionFacts:
    """What the agent did and when: local test runs, edits, reading and timing (counts, else the
    action log), its tools, the build's errors and its tool calls."""
    telemetry = entry.iteration_telemetry
    actions = telemetry.actions
    analysis = telemetry.feedback_analysis
    log = actions.log if actions else None
    test_runs = actions.test_runs if actions else None
    if log is not None and test_runs is None:
        test_runs = sum(1 for a in log if a.tool == "run_tests")
    file_edits = actions.file_edits if actions else None
    if log is not None and file_edits is None:
        file_edits = sum(1 for a in log if a.tool == "edit_file")
    submitted_at = parse_time(telemetry.timestamp_submit)
    timestamp_start = telemetry.timestamp_start
    duration = _duration(telemetry.duration_seconds, timestamp_start, submitted_at)
    seconds_before_first_edit = analysis.time_before_first_edit_seconds if analysis else None
    if seconds_before_first_edit is None and log:
        seconds_before_first_edit = next((a.at_seconds for a in log if a.tool == "edit_file" and a.at_seconds is not None),
                                         None)
    read_feedback = analysis.read_feedback if analysis else None
    if read_feedback is None and log is not None:
        read_feedback = any(a.tool == "read_feedback" for a in log)
    failures_referenced = analysis.failure_messages_referenced if analysis else None
    action_tools = tuple(a.tool for a in log) if log is not None else None
    build = telemetry.build or (entry.iteration_feedback.build if entry.iteration_feedback else None)
    build_errors = tuple(build.errors or ()) if build else ()
    tool_calls = actions.tool_calls_total if actions else None
    untested_edits = (actions.untested_edits or 0) if actions else 0
    return ActionFacts(test_runs, file_edits, duration, submitted_at, seconds_before_first_edit, read_feedback,
                       failures_referenced, action_tools, build_errors, tool_calls, timestamp_start, untested_edits)


def same_program(a: IterationFacts, b: IterationFacts) -> str | None:
    """How two submissions are byte for byte the same program, or None: the same ``code_hash``
    (when both are hashed the hash alone decides), else the same submitted code."""
    if a.code_hash is not None and b.code_hash is not None:
        return f"code_hash {b.code_hash[:16]}" if a.code_hash == b.code_hash else None
    if a.code is not None and b.code is not None:
        return "the same code" if a.code == b.code else None
    return None


def changed_nothing(previous: IterationFacts, it: IterationFacts) -> bool:
    """Whether a submission changed nothing: the previous one's program again, or an empty diff
    with no code to say otherwise. Such a step is no progress and rules out no regression."""
    if same_program(previous, it) is not None:
        return True
    return it.code_hash is None and it.code is None and it.diff is not None and it.diff.empty


def held_back_scores(run: Run, policy: Policy) -> bool:
    """Whether the held-back suite may move this run's process score: always for graded
    submissions; for a run judged from the agent's own checks (``iterations_are: local_runs``) only
    under ``held_back.local_runs: scored`` (by default it is shown, and may only confirm an
    accusation)."""
    return run.info.iterations_are != "local_runs" or policy.held_back.local_runs == "scored"


def held_back_fails(it: IterationFacts, policy: Policy) -> bool:
    """Whether a held-back suite with tests ran at this submission and fails, by at least
    ``hidden_suite_gap.min_failing_share`` of its tests (``hidden_suite_gap``, the first tier and
    ``rapid_convergence`` read it)."""
    hidden = it.hidden
    if hidden is None or not hidden.total_or_sum:
        return False
    failing = hidden.total_or_sum - hidden.passed
    return failing > 0 and failing / hidden.total_or_sum >= policy.hidden_suite_gap.min_failing_share


def test_texts(run: Run) -> tuple[str, ...]:
    """Every test the task and the run's feedback name, once each, in order: the task's given
    tests, then each iteration's tests (the name, and the name with its message) and the
    feedback's failures (the name with its message)."""
    task = run.info.task
    names: dict[str, None] = dict.fromkeys(task.visible_tests or () if task else ())
    for entry in run.iterations:
        results = entry.iteration_telemetry.test_results
        for test in (results.tests or ()) if results else ():
            names.setdefault(test.name)
            if test.message:
                names.setdefault(f"{test.name}: {test.message}")
        feedback = entry.iteration_feedback
        for failure in (feedback.tests.failures or ()) if feedback and feedback.tests else ():
            names.setdefault(f"{failure.name}: {failure.message or ''}")
    return tuple(names)


class Unchanged:
    """What a run of the agent's own checks saw fail on the unchanged code: the tests by name (in
    its run before its first edit, ``baseline_tests``, or in a run with its changes set aside or
    undone, a check ``on_base``), and each such run's command with its count of failures and the
    failing tests it named (an output cut short names fewer than it counts). A test the task's
    statement names is left out of both: a test the task asks to make pass is its target, not the
    environment's."""

    __slots__ = ("names", "runs")

    def __init__(self, names: frozenset[str], runs: dict[str, tuple[int, frozenset[str]]]) -> None:
        self.names, self.runs = names, runs

    def left_out(self, results: TestResults, failed: int) -> int:
        """How many of a test run's failures were failures on the unchanged code: those it names
        that the unchanged code failed, or, for a run of the same command on the unchanged code,
        as many as that run counted, less the failures named here that it did not name."""
        failing = [test.name for test in results.tests or () if test.outcome in ("failed", "error")]
        named = sum(1 for name in failing if name in self.names)
        same = self.runs.get(results.suite or "")
        if same is None:
            return min(failed, named)
        base_failed, base_names = same
        new = sum(1 for name in failing if name not in base_names)
        return min(failed, max(named, min(failed - new, base_failed)))


def failing_on_unchanged_code(run: Run) -> Unchanged | None:
    """The tests a run of the agent's own checks saw fail on the unchanged code (:class:`Unchanged`),
    or None when it saw none."""
    names: set[str] = set()
    runs: dict[str, tuple[int, frozenset[str]]] = {}
    for entry in run.iterations:
        telemetry = entry.iteration_telemetry
        results = telemetry.test_results
        if results is not None and results.baseline_tests:
            names.update(test.name for test in results.baseline_tests if test.outcome in ("failed", "error"))
        for check in telemetry.checks or ():
            if check.on_base and check.failed:
                failing = frozenset(check.failing or ())
                names.update(failing)
                runs[check.command] = (check.failed, failing)
    if not names and not runs:
        return None
    statement = run.info.task.statement or "" if run.info.task else ""
    if statement:
        names = {name for name in names if not _named_in(name, statement)}
        runs = {command: (count, failing) for command, (count, failing) in runs.items()
                if not any(_named_in(name, statement) for name in failing)}
    return Unchanged(frozenset(names), runs)


def _named_in(test: str, statement: str) -> bool:
    """Whether a statement names a test by its function's name (``path::test_x[1]``, ``test_x
    (module.Class)``, ``module.Class.test_x``)."""
    function = test.split(" (")[0].rsplit("::", 1)[-1].split("[")[0].rsplit(".", 1)[-1]
    return bool(function) and re.search(rf"\b{re.escape(function)}\b", statement) is not None


def derive(run: Run, policy: Policy) -> RunFacts:
    """Facts for every scored submission of a run, in order: the plan, then each submission
    against the one before it and against the last one whose tests ran."""
    run = hold_back_categories(run, frozenset(policy.anti_patterns.test_chasing.hidden_categories))
    positions, excluded, phase_budgets, budget = _plan(run, policy)
    scratch = _scratch_paths(run)
    facts: list[IterationFacts] = []
    baseline: IterationFacts | None = None
    baseline_names: Names = (None, None, frozenset())
    unchanged_failing = failing_on_unchanged_code(run) if run.info.iterations_are == "local_runs" and \
        policy.rules.failing_on_unchanged_code_in_local_runs == "left_out" else None
    for position in positions:
        phase = run.iterations[position].iteration_telemetry.phase
        first_of_phase = not facts or (phase is not None and facts[-1].phase != phase)
        names, failures = _read_tests(run.iterations[position])
        current = _iteration(run, position, facts[-1] if facts else None, baseline, names, baseline_names,
                             first_of_phase, policy, scratch, failures, unchanged_failing)
        facts.append(current)
        if current.tests_ran:
            baseline, baseline_names = current, names
    return RunFacts(
        run=run, format=run.info.format, budget=budget, iterations=tuple(facts), excluded=tuple(excluded),
        pairs=tuple(itertools.pairwise(facts)),
        phases=tuple(p.name for p in run.info.phases or ()), phase_budgets=phase_budgets,
        warnings=tuple(_plausibility(run, facts, policy.plausibility.max_score_gap)),
        submissions=tuple((iteration_number(e, k), e.iteration_telemetry.phase) for k, e in enumerate(run.iterations)),
    )
