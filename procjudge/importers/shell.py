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
import os
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from . import edits as rebuild
from . import grammar
from .base import NothingLogged
from .checks import Outcome, check_outcome, is_environment, script_run, script_targets
from .edits import Edit, words_of


def _outside_repo(path: str) -> bool:
    return os.path.isabs(path) or path.startswith(("..", "~"))

REPO_ROOTS = ("/testbed", "/repo", "/workspace")
MAX_OUTPUT = 200_000


class Step:
    """One action and what it printed. ``writes`` overrides what is read from the command (a
    structured edit names its file); ``kind`` is ``"read"`` for a structured read."""

    def __init__(self, thought: str, command: str, returncode: int | None, output: str, time: float | None,
                 writes: list[tuple[str, str]] | None = None, kind: str | None = None,
                 editor: dict[str, Any] | None = None, cut: bool = False) -> None:
        if "\x1b" in output:  # colour codes (pytest --color, a tty) would hide the summary lines
            output = _ANSI.sub("", output)
        self.thought, self.command, self.returncode = thought, command, returncode
        self.output, self.time = output[:MAX_OUTPUT], time
        shell = kind is None
        self.shell = shell  # a command the agent ran, not a structured edit or read
        self.test = test_command(command) if shell else None
        self.writes = writes if writes is not None else written_files(command) if shell else []
        self.counts = parse_counts(self.output) if self.test else None
        build = build_command(command) if shell and not self.test else None
        # the exit code is the last command's: a build is failed by it only when the build ran last
        self.failed_build = build if build and returncode not in (None, 0) and build_ran_last(command) else None
        self.editor = editor  # a structured edit or view: its command, path and texts (old_str/new_str, ...)
        self.cut = cut  # the harness elided part of the output
        # why a test run validated nothing (the runner is missing, its output was cut or discarded):
        # set by convert, which knows the repository; such a run is neither a check nor a build failure
        self.unavailable: str | None = None
        self.edits: list[Edit] = []  # what the step changed, rebuilt as diff lines (see procjudge.importers.edits)
        self.unrecovered: list[tuple[str, str]] = []  # (path, why) of writes whose change could not be rebuilt
        # a script the agent ran to see whether its code works (procjudge.importers.checks), and what it showed:
        # set by convert, which knows the scripts the agent wrote
        self.probe: str | None = None
        self.probe_outcome: Outcome | None = None
        self.probe_kind = "reproduction"  # inline, reproduction or project_script
        self.probe_code: int | None = None  # the script's own exit status, where the log has it
        self.frames: list[tuple[str, int]] = []  # the repository frames its traceback passed through
        self.code_edit = False  # it changed the code, not only throw-away files (set by convert)

    @property
    def check(self) -> str | None:
        """What this step checked, when it ends an iteration: a test run's suite, a script run, or a
        failed build."""
        if self.unavailable:
            return None
        return self.test or self.probe or self.failed_build


# --------------------------------------------------------------------------- commands


_RUNNER = re.compile(
    r"(?:^|[\s;&|(])(?:(?:python[\d.]*|coverage run)\s+(?:-(?!m\b)[a-zA-Z]+\s+)*)?"
    r"(?P<runner>(?:\S*/)?runtests\.py|-m\s+pytest|-m\s+unittest|py\.test|pytest|tox|nox)(?![\w.-])(?P<rest>[^;&|]*)")
# Options with which a runner runs no test: it prints its version, help, fixtures or what it would collect.
_NOT_A_RUN = frozenset({"--help", "-h", "--version", "-V", "--fixtures", "--funcargs", "--fixtures-per-test",
                        "--markers", "--collect-only", "--co", "--setup-plan"})
_TOX_NOT_A_RUN = frozenset({"-l", "-a", "--listenvs", "--listenvs-all", "--showconfig", "list", "config"})
# Runners of other languages: (pattern, the runner's name in the suite identity).
_OTHER_RUNNERS = (
    (re.compile(r"^(?:\S+=\S+\s+)*go\s+test\b(?P<rest>.*)"), "go test"),
    (re.compile(r"^(?:\S+=\S+\s+)*cargo\s+(?:\+\S+\s+)?(?:test|nextest\s+run)\b(?P<rest>.*)"), "cargo test"),
    (re.compile(r"^(?:npm|yarn|pnpm)\s+(?:run\s+)?test\b(?P<rest>.*)"), "npm test"),
    (re.compile(r"^(?:(?:npx|yarn|pnpm(?:\s+exec)?)\s+|\S*node_modules/\.bin/)?"
                r"(?P<name>jest|vitest)\b(?:\s+run\b)?(?P<rest>.*)"), ""),
    (re.compile(r"^ctest\b(?P<rest>.*)"), "ctest"),
    (re.compile(r"^(?:make|gmake)\b(?:\s+-\S+)*\s+(?:test|check|tests)\b(?P<rest>.*)"), "make test"),
)
_BUILD = re.compile(r"^(?:\S+=\S+\s+)*(?:make|gmake|ninja|cmake\s+--build|cargo\s+(?:\+\S+\s+)?(?:build|check)|go\s+(?:build|vet)"
                    r"|(?:npm|yarn|pnpm)\s+(?:run\s+)?build|tsc|gcc|g\+\+|cc|c\+\+|clang|clang\+\+|mvn\s+compile|gradle\s+build)\b")


def segments(command: str) -> list[str]:
    """The simple commands of a command line, as the shell reads it (``procjudge.importers.grammar``:
    pipelines, ``&&``/``||``/``;`` lists, subshells, loops and conditionals), each with its
    redirections and a here-document's opening line, its body left out (a script's text is not
    commands)."""
    return list(grammar.simple_commands(command))


def _plain(part: str) -> str:
    """A simple command without a leading ``cd DIR &&`` already split off, ``timeout N`` or ``env``."""
    return re.sub(r"^(?:(?:timeout\s+\S+|env|time|command)\s+)+", "", part.strip())


def test_command(command: str) -> str | None:
    """The suite identity of a test run (runner and targets), or None when no known runner runs."""
    for part in segments(command):
        if part.startswith(("echo", "cat", "grep", "sed", "#", "ls", "find", "head", "tail", "nl")):
            continue
        plain = _plain(part)
        if is_environment(plain) or is_environment(part.strip()):  # `pip install pytest` installs the runner
            continue
        for pattern, name in _OTHER_RUNNERS:
            other = pattern.match(plain)
            if other:
                words = words_of(other.group("rest"))
                if "--help" in words or "-h" in words:
                    return None
                runner = name or other.group("name")
                targets = [w for w in words if not w.startswith("-") and "=" not in w]
                if runner in ("make test", "ctest", "npm test"):
                    targets = []
                return " ".join([runner, *targets])
        match = _RUNNER.search(" " + part)
        if not match:
            continue
        runner = match.group("runner")
        if runner.endswith("runtests.py"):
            runner = "runtests.py"
        words = words_of(match.group("rest"))
        if _NOT_A_RUN & set(words) or runner in ("tox", "nox") and _TOX_NOT_A_RUN & set(words):
            return None
        targets, skip = [], False
        for k, word in enumerate(words):
            if skip:
                skip = False
            elif word in _SELECTING and k + 1 < len(words):  # a narrowed selection is another suite
                targets.append(f"{word} {words[k + 1]}")
                skip = True
            elif word.startswith(_SELECTING_JOINED) or word in ("--lf", "--last-failed"):
                targets.append(word)
            elif word in _VALUED:
                skip = True
            elif not word.startswith("-") and "=" not in word and not word.isdigit():
                targets.append(word)
        if runner in ("tox", "nox"):
            targets = []  # environments, not test targets: the suite is the project's own
        return " ".join([re.sub(r"-m\s+", "python -m ", runner), *targets]).strip()
    return None


def build_command(command: str) -> str | None:
    """The build a command runs (its last build step, as written), or None."""
    found = None
    for part in segments(command):
        plain = _plain(part)
        if _BUILD.match(plain) and "--help" not in plain and "-n" not in plain.split()[1:2]:
            found = plain[:200]
    return found


def build_ran_last(command: str) -> bool:
    """Whether a command line's exit code is its build's: the build is its last simple command
    (``make && grep x out.html`` exits with grep's code; ``make 2>&1 | tail`` with tail's)."""
    parts = [part for part in segments(command) if not re.match(r"^(?:echo|printf|true|:)\b", _plain(part))]
    return bool(parts) and build_command(parts[-1]) is not None and "|" not in command.split("\n")[-1].split("||")[0]


# Options that narrow which tests run: part of the suite's identity, so that a narrowed run's counts are
# never compared with the whole selection's.
_SELECTING = frozenset({"-k", "-m", "--deselect", "--ignore", "--ignore-glob"})
_SELECTING_JOINED = ("-k=", "-m=", "--deselect=", "--ignore=", "--ignore-glob=")
_VALUED = frozenset({"-e", "-k", "-m", "-p", "-c", "-n", "-o", "-W", "--settings", "--parallel", "--tb", "--deselect",
                     "--ignore", "--rootdir", "--verbosity", "-v2"})


def _redirects(part: str) -> list[str]:
    """The files a simple command redirects its output to (``>``, ``>>``, ``2>``), read with
    the shell's quoting: a ``>`` inside quotes is text."""
    try:
        lexer = shlex.shlex(part, posix=True, punctuation_chars="<>|&;()")
        tokens = list(lexer)
    except ValueError:
        return []
    paths = []
    for k, token in enumerate(tokens[:-1]):
        if token in (">", ">>", "&>", ">|") and tokens[k + 1] not in ("&", "<", ">"):
            paths.append(tokens[k + 1])
    return paths


_BUILD_OUTPUT = re.compile(r"(?:^|/)(?:build|dist|target|out|__pycache__|\.pytest_cache|\.mypy_cache|\.tox|node_modules"
                           r"|CMakeFiles|CMakeCache\.txt|[^/]*\.(?:pyc|o|a|so|egg-info))$")


def written_files(command: str) -> list[tuple[str, str]]:
    """(path, how) for every file the command writes: 'sed', 'redirect', 'script', 'copy', 'delete',
    'patch'."""
    found: list[tuple[str, str]] = []
    for part in segments(command):
        words = _without_redirections(words_of(part))
        if not words:
            continue
        found += _segment_writes(words)
        for path in _redirects(part):
            if path not in ("/dev/null", "/dev/stdout", "/dev/stderr") and not path.startswith("&") and not path.isdigit():
                found.append((path, "redirect"))
    for match in re.finditer(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]", command):
        found.append((match.group(1), "script"))
    if re.search(r"\bpython[\d.]*\b", command) and re.search(r"\.write(?:_text)?\(|open\([^)]*['\"][wa]\+?['\"]", command):
        # a script that writes: the source files it names by a string literal (a path in a variable)
        found += [(m.group(1), "script") for m in re.finditer(r"['\"]([\w./-]+\.(?:py|txt|rst|cfg|toml|json|ya?ml))['\"]",
                                                              command)]
    return [(os.path.normpath(path) if path else path, how) for path, how in dict.fromkeys(found)]


_REDIRECTION = re.compile(r"^(?:\d*|&)(?:>>?|<<?|>&|<&)(\S*)$")


def _without_redirections(words: list[str]) -> list[str]:
    """A simple command's words without its redirections (``2>/dev/null``, ``> out.txt``, ``2>&1``):
    they are no operands (``git checkout F 2>/dev/null`` restores F alone)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        found = _REDIRECTION.match(word)
        if found:
            skip = not found.group(1)  # `> file`: the file is the next word
            continue
        kept.append(word)
    return kept


def _segment_writes(words: list[str]) -> list[tuple[str, str]]:
    """The files one simple command writes by its own arguments (its redirections aside)."""
    head = os.path.basename(words[0])
    in_place = (head == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:])
                or head == "perl" and any(w.startswith("-pi") or w == "-i" for w in words[1:]))
    if in_place:
        return [(w, "sed") for w in _operands(words[1:], skip_first_script=True)]
    if head == "tee":
        return [(w, "redirect") for w in words[1:] if not w.startswith("-")]
    if head in ("cp", "mv") and len(words) >= 3:
        return [(words[-1], "copy")]
    if head == "rm":  # removing build output (build/, __pycache__, *.o) is cleaning, not an edit
        return [(w, "delete") for w in words[1:] if not w.startswith("-") and not _BUILD_OUTPUT.search(w.rstrip("/"))]
    if words[:2] in (["git", "checkout"], ["git", "restore"]):
        return _restored(words)
    if head in ("patch",) or words[:2] == ["git", "apply"]:
        return [("", "patch")]
    return []


def _restored(words: list[str]) -> list[tuple[str, str]]:
    """The files a ``git checkout``/``git restore`` rewrites from the index or a commit; a branch
    switch, and a restore of the index alone, name no file."""
    if {"-b", "-B"} & set(words) or ("--staged" in words and "--worktree" not in words):
        return []
    operands = [w for w in words[2:] if not w.startswith("-")]
    if "--" in words:
        operands = words[words.index("--") + 1:]
    return [(w, "restore") for w in operands if "/" in w or os.path.splitext(w)[1]]


def _operands(words: list[str], skip_first_script: bool) -> list[str]:
    """The file operands of sed/perl: the arguments after the script that are not options."""
    operands, script_seen = [], not skip_first_script
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            script_seen = True
            continue
        if word in ("-e", "--expression", "-f"):
            skip_next = True
            continue
        if word.startswith("-"):
            continue
        if not script_seen:
            script_seen = True
            continue
        operands.append(word)
    return operands


# --------------------------------------------------------------------------- test output


_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.MULTILINE)
_PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
                             r"(?:, )?)+)(?: in [\d.]+\s*s.*)?=*\s*$", re.MULTILINE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # CSI; OSC to BEL or ST
_UNITTEST_FAIL = re.compile(r"^(FAIL|ERROR): (\S+) \(([\w.]+)\)", re.MULTILINE)
_UNITTEST_OK = re.compile(r"^(\w+) \(([\w.]+)\)(?: .*)? \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure)$", re.MULTILINE)
_PYTEST_LINE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", re.MULTILINE)
_PYTEST_SHORT = re.compile(r"^(FAILED|ERROR) (\S+::\S+)", re.MULTILINE)


class Counts:
    def __init__(self, passed: int, failed: int, skipped: int, tests: list[dict[str, str]]) -> None:
        self.passed, self.failed, self.skipped, self.tests = passed, failed, skipped, tests


def parse_counts(output: str) -> Counts | None:
    """Counts and per-test outcomes from a unittest/Django or pytest run's output, or None when
    the output holds no summary (the tests did not run)."""
    ran = _RAN.findall(output)
    if ran:
        total = int(ran[-1])
        ends = _UNITTEST_END.findall(output)
        detail = dict(re.findall(r"(\w+(?: \w+)?)=(\d+)", ends[-1][1])) if ends else {}
        failed = int(detail.get("failures", 0)) + int(detail.get("errors", 0)) + int(detail.get("unexpected successes", 0))
        skipped = int(detail.get("skipped", 0))
        tests = {f"{name} ({where})": "failed" for _, name, where in _UNITTEST_FAIL.findall(output)}
        for name, where, outcome in _UNITTEST_OK.findall(output):
            key = f"{name} ({where})"
            tests.setdefault(key, "passed" if outcome in ("ok", "expected failure") else
                             "skipped" if outcome.startswith("skipped") else "failed")
        if not ends:  # the summary line was cut off: trust what the names say
            failed = sum(1 for v in tests.values() if v == "failed")
        return Counts(max(0, total - failed - skipped), failed, skipped,
                      [{"name": k, "outcome": v} for k, v in tests.items()])
    summaries = _PYTEST_SUMMARY.findall(output)
    if summaries:
        numbers = {word.rstrip("s"): int(n) for n, word in re.findall(r"(\d+) (\w+)", summaries[-1])}
        passed = numbers.get("passed", 0) + numbers.get("xpassed", 0)
        failed = numbers.get("failed", 0) + numbers.get("error", 0)
        skipped = numbers.get("skipped", 0) + numbers.get("xfailed", 0)
        tests = {name: ("passed" if o in ("PASSED", "XPASS") else "skipped" if o in ("SKIPPED", "XFAIL") else "failed")
                 for name, o in _PYTEST_LINE.findall(output)}
        for _, name in _PYTEST_SHORT.findall(output):
            tests[name] = "failed"
        return Counts(passed, failed, skipped, [{"name": k, "outcome": v} for k, v in tests.items()])
    for parser in (_cargo, _go, _jest, _ctest, _gtest):
        counts = parser(output)
        if counts is not None:
            return counts
    return None


_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.MULTILINE)
_CARGO_LINE = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\s*$", re.MULTILINE)
_GO_LINE = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
_GO_PACKAGE = re.compile(r"^(ok|FAIL|---)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[)", re.MULTILINE)
_JEST = re.compile(r"^\s*Tests:?\s+((?:\d+ \w+(?:,\s*|\s*\|\s*)?)+)(?:\((\d+)\))?", re.MULTILINE)
_CTEST = re.compile(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
_CTEST_FAILED = re.compile(r"^\s*\d+ - (\S+) \((?:Failed|SEGFAULT|Timeout|Not Run|Subprocess aborted)\)", re.MULTILINE)
_GTEST_PASSED = re.compile(r"^\[  PASSED  \] (\d+) tests?", re.MULTILINE)
_GTEST_FAILED = re.compile(r"^\[  FAILED  \] (\d+) tests?, listed below", re.MULTILINE)
_GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\d+) tests?", re.MULTILINE)
_GTEST_NAME = re.compile(r"^\[  FAILED  \] ([\w/.]+)(?: \(\d+ ms\))?$", re.MULTILINE)


def _outcomes(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "outcome": outcome} for name, outcome in dict(pairs).items()]


def _cargo(output: str) -> Counts | None:
    results = _CARGO_RESULT.findall(output)
    if not results:
        return None
    passed, failed, ignored = (sum(int(r[k]) for r in results) for k in range(3))
    names = [(name, {"ok": "passed", "FAILED": "failed"}.get(o, "skipped")) for name, o in _CARGO_LINE.findall(output)]
    return Counts(passed, failed, ignored, _outcomes(names))


def _go(output: str) -> Counts | None:
    lines = [(name, {"PASS": "passed", "FAIL": "failed"}.get(o, "skipped")) for o, name in _GO_LINE.findall(output)
             if "/" not in name]
    if lines:
        tests = _outcomes(lines)
        return Counts(sum(t["outcome"] == "passed" for t in tests), sum(t["outcome"] == "failed" for t in tests),
                      sum(t["outcome"] == "skipped" for t in tests), tests)
    packages = [(name, "passed" if o == "ok" else "failed") for o, name in _GO_PACKAGE.findall(output) if o != "---"]
    if not packages:
        return None
    tests = _outcomes(packages)
    return Counts(sum(t["outcome"] == "passed" for t in tests), sum(t["outcome"] == "failed" for t in tests), 0, tests)


def _jest(output: str) -> Counts | None:
    found = _JEST.findall(output)
    if not found:
        return None
    numbers = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", found[-1][0])}
    if not {"passed", "failed", "total"} & numbers.keys():
        return None
    failed = numbers.get("failed", 0)
    skipped = numbers.get("skipped", 0) + numbers.get("todo", 0)
    passed = numbers.get("passed", max(0, numbers.get("total", 0) - failed - skipped))
    return Counts(passed, failed, skipped, [])


def _ctest(output: str) -> Counts | None:
    found = _CTEST.findall(output)
    if not found:
        return None
    _, failed, total = (int(v) for v in found[-1])
    return Counts(total - failed, failed, 0, _outcomes([(name, "failed") for name in _CTEST_FAILED.findall(output)]))


def _gtest(output: str) -> Counts | None:
    passed = _GTEST_PASSED.findall(output)
    failed = _GTEST_FAILED.findall(output)
    if not passed and not failed:
        return None
    skipped = _GTEST_SKIPPED.findall(output)
    return Counts(int(passed[-1]) if passed else 0, int(failed[-1]) if failed else 0, int(skipped[-1]) if skipped else 0,
                  _outcomes([(name, "failed") for name in _GTEST_NAME.findall(output)]))



def _iso(seconds: float | None) -> str | None:
    """An epoch time as ISO 8601; None for none, and for one no calendar holds (past year 9999)."""
    if seconds is None or not -62_135_596_800 <= seconds < 253_402_300_800:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def diff_files(diff: str) -> dict[str, str]:
    """path -> status of every file a unified diff touches."""
    files: dict[str, str] = {}
    for block in re.split(r"(?m)^diff --git ", diff)[1:]:
        match = re.match(r"a/(\S+) b/(\S+)", block)
        if not match:
            continue
        status = ("created" if "\nnew file mode" in block[:300]
                  else "deleted" if "\ndeleted file mode" in block[:300] else "modified")
        files[match.group(2)] = status
    return files


def _relative(path: str, roots: tuple[str, ...] = REPO_ROOTS) -> tuple[str, bool]:
    """(path relative to the repository, whether it lies outside it)."""
    for root in roots:
        if path == root or path.startswith(root + "/"):
            return path[len(root) + 1:] or ".", False
    if os.path.isabs(path):
        return path, True
    return path.removeprefix("./"), False


def hidden_suites(report: dict[str, Any], instance: str) -> list[dict[str, Any]]:
    """FAIL_TO_PASS and PASS_TO_PASS of a SWE-bench report, with every test's outcome."""
    entry = report.get(instance, report)
    entry = entry if isinstance(entry, dict) else {}
    status: dict[str, Any] = entry["tests_status"] if isinstance(entry.get("tests_status"), dict) else {}
    if not status and isinstance(entry.get("resolved"), bool):
        # only SWE-bench's verdict is known (a results file that lists resolved instances): one check
        return [{"name": "resolved", "passed": int(entry["resolved"]), "total": 1}]
    suites = []
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        part: dict[str, Any] = status[name] if isinstance(status.get(name), dict) else {}
        success, failure = list(part.get("success") or []), list(part.get("failure") or [])
        if not success and not failure:
            continue
        tests = [{"name": t, "outcome": "passed"} for t in success] + [{"name": t, "outcome": "failed"} for t in failure]
        suites.append({"name": name, "passed": len(success), "total": len(success) + len(failure), "tests": tests})
    return suites


# --------------------------------------------------------------------------- validation unavailable


_RUNNER_MISSING = re.compile(
    r"No module named '?(?:pytest|unittest|nose2?|tox|nox|coverage)'?\b"
    r"|(?:^|[\s:])(?:pytest|py\.test|tox|nox|python[\d.]*|go|cargo|npm|yarn|pnpm|npx|jest|vitest|ctest|make|node)"
    r"(?::\s*\d+)?:\s*(?:command\s+)?not found"
    r"|can't open file .*(?:runtests|manage)\.py"
    r"|(?:runtests|manage)\.py: No such file or directory", re.MULTILINE)
_MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
_COLLECTION_STOPPED = re.compile(r"errors? during collection|^_* ERROR collecting ", re.MULTILINE)
_CUTTERS = frozenset({"head", "tail", "grep", "egrep", "awk", "sed", "cut", "less", "more", "wc", "sort", "uniq"})


def _runner_piped_away(command: str) -> str | None:
    """How a command line cuts or discards its test runner's output, if it does: a pipe into
    ``head``/``tail``/``grep``, or a redirection to ``/dev/null`` or a file."""
    for line in command.split("\n"):
        if test_command(line) is None:
            continue
        pipeline = re.split(r"(?<![|])\|(?![|])", line)
        for k, part in enumerate(pipeline):
            if test_command(part) is None:
                continue
            after = [p.strip().split(" ", 1)[0] for p in pipeline[k + 1:]]
            cutter = next((word for word in after if os.path.basename(word) in _CUTTERS), None)
            if cutter:
                return f"the agent cut its output (`| {cutter}`)"
            if re.search(r"(?<![0-9&])>\s*/dev/null|(?:^|\s)(?:&>|>)\s*(?!&)\S", part.split("||")[0].split(";")[0]):
                return "its output was redirected away"
    return None


def _echo_only(command: str, output: str) -> bool:
    """The output is only the text of an ``echo``/``printf`` run after ``||`` or ``;``."""
    texts = [m.group(2) for m in re.finditer(r"(?:\|\||;|&&)\s*(echo|printf)\s+(?:-e\s+)?['\"]?([^'\"\n;|&]*)", command)]
    texts = [m for m in texts if m.strip()]
    remaining = output.strip()
    for text in texts:
        remaining = remaining.replace(text.strip(), "").strip()
    return bool(texts) and not remaining


def unavailable(step: Step, own_modules: frozenset[str] = frozenset()) -> str | None:
    """Why a test run that printed no counts validated nothing, or None when its runner really ran
    and failed (an import error in the project, a syntax error: a build that did not build).

    Not the agent's fault, and not a failing build: the runner is not installed or not found (exit
    127, ``No module named pytest``, ``command not found``), a module the project does not own is
    missing (``own_modules``: top-level names of the files the agent wrote or submitted), the output
    was cut (by the harness or a pipe into ``head``/``tail``/``grep``) or discarded, it timed out,
    it printed nothing, or only an ``echo`` after ``||``; or it ran no test at all (0 collected), or
    its collection stopped on modules missing from the environment (pytest's ``errors during
    collection`` where every missing module is one the project does not provide)."""
    if step.test is None:
        return None
    if step.counts is not None:
        # a run that collected no test (a wrong target, a filter that matched nothing) checked nothing
        if step.counts.passed + step.counts.failed == 0:
            return "it ran no test"
        failing = [t["name"] for t in step.counts.tests if t["outcome"] == "failed"]
        if step.counts.passed == 0 and failing and all(name.endswith("(unittest.loader._FailedTest)") for name in failing):
            labels = {name.split(" ", 1)[0] for name in failing}
            if any(f"No module named '{label}" in step.output for label in labels):
                return "its test label names no test module"  # `runtests.py contenttypes` for `contenttypes_tests`
        if step.counts.passed == 0 and _COLLECTION_STOPPED.search(step.output):
            missing = _MISSING_MODULE.findall(step.output)
            foreign = [name for name in missing if name.split(".")[0] not in own_modules]
            if foreign and len(foreign) == len(missing):  # only the environment's modules are missing
                return f"collection stopped: a module the project does not provide is missing ({foreign[-1]})"
        return None
    output = step.output
    if re.search(r"^=*\s*no tests ran\b|^Ran 0 tests\b|^collected 0 items", output, re.MULTILINE):
        return "it ran no test"
    if step.returncode == 127 or _RUNNER_MISSING.search(output):
        return "the test runner is not installed or not found"
    missing = _MISSING_MODULE.findall(output)
    if missing and not any(name.split(".")[0] in own_modules for name in missing):
        return f"a module the project does not provide is missing ({missing[-1]})"
    if step.returncode == -1 and re.search(r"timed? ?out|TimeoutExpired", output[:2000] + output[-2000:], re.IGNORECASE):
        return "it timed out before printing a summary"
    piped = _runner_piped_away(step.command)
    if piped:
        return piped
    if step.cut:
        return "the harness cut its output"
    if not output.strip():
        return "it printed nothing"
    if _echo_only(step.command, output):
        return "it printed only the text of an `echo` after the runner"
    return None


def held_back_environment(suites: list[dict[str, Any]], log: str, own_modules: frozenset[str]) -> str | None:
    """Why a held-back run says nothing of the agent's code, or None: no held-back test passed and
    its log shows the collection stopped (pytest's ``errors during collection``, a conftest that
    would not load, unittest's ``Failed to import test module``) on modules the project does not
    provide only (``own_modules``), so every test failed on one import before any ran."""
    if not suites or not log or any(suite.get("passed") for suite in suites):
        return None
    if not (_COLLECTION_STOPPED.search(log) or _IMPORT_STOPPED.search(log)):
        return None
    missing = _MISSING_MODULE.findall(log)
    foreign = [name for name in missing if name.split(".")[0] not in own_modules]
    if not missing or len(foreign) != len(missing):
        return None
    return f"its tests stopped at import: a module the project does not provide is missing ({foreign[-1]})"


_IMPORT_STOPPED = re.compile(r"ImportError while loading conftest|Failed to import test module"
                             r"|ImportError while importing test module")


def unavailable_code(reason: str) -> str:
    """The run file's code for a reason :func:`unavailable` gave."""
    if "not installed" in reason or "missing" in reason:
        return "runner_missing"
    if "timed out" in reason:
        return "output_cut"
    if "nothing" in reason or "echo" in reason or "no test" in reason:
        return "no_output"
    return "output_cut"


def _own_modules(steps: list[Step], submission: str | None, roots: tuple[str, ...]) -> frozenset[str]:
    """The project's top-level module names: the first folder (or file stem) of every path the
    agent wrote or submitted, past ``src``/``lib``/``tests``."""
    names: set[str] = set()
    paths = list(diff_files(submission)) if submission else []
    paths += [_relative(path, roots)[0] for step in steps for path, _ in step.writes if path]
    for path in paths:
        parts = [p for p in path.replace("\\", "/").split("/") if p not in (".", "")]
        for part in parts[:-1] + [os.path.splitext(parts[-1])[0]] if parts else []:
            if part not in ("src", "lib", "tests", "test"):
                names.add(part)
                break
    return frozenset(names)


# --------------------------------------------------------------------------- edits as content


REJECTED = re.compile(r"has introduced new syntax error|have NOT been applied|No replacement was performed"
                      r"|did not appear verbatim|Error: (?:file|The path) .* does not exist")


def _rebuild(steps: list[Step], submission: str | None, roots: tuple[str, ...]) -> None:
    """Set each step's ``edits`` (and ``unrecovered``) from what had been seen of its files."""
    views = rebuild.Views()
    if submission:
        rebuild.seed_from_diff(views, submission)

    def rel(path: str) -> str:
        return _relative(os.path.normpath(path), roots)[0] if path else path

    for step in steps:
        editor = step.editor
        if editor is not None and REJECTED.search(step.output[:600]):
            continue  # the editor refused the edit: nothing changed
        if not step.writes and not step.test and editor is None:
            first = step.command.strip().split("\n", 1)[0]
            words = words_of(first)
            target = next((w for w in words[1:] if not w.startswith("-") and ("/" in w or "." in w)), None)
            rebuild.observe(views, step.command, step.output, rel(target) if target else None)
            continue
        try:
            if editor is not None:
                _editor_edit(step, editor, views, rel)
                continue
            _sed_edits(step, views, rel)
            _patch_edits(step, views, rel)
            _heredoc_edits(step, views, rel)
        except rebuild.Unrebuilt as why:
            step.edits = []
            written = [rel(str(editor.get("path") or views.open_file or ""))] if editor is not None else \
                [rel(path) for path, _ in step.writes if path] or [""]
            step.unrecovered = [(path, str(why)) for path in dict.fromkeys(written)]
            if editor is not None:
                continue
        _account(step, rel, roots)


def _sed_edits(step: Step, views: rebuild.Views, rel: Any) -> None:
    """Each ``sed -i`` of the step's command, rebuilt against the lines seen."""
    for part in segments(step.command):
        words = words_of(part)
        if words and os.path.basename(words[0]) == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            found, missed = rebuild.sed_edits(views, words, rel)
            step.edits += found
            step.unrecovered += missed


def _patch_edits(step: Step, views: rebuild.Views, rel: Any) -> None:
    """Each ``git apply`` or ``patch`` of a file whose text the log showed."""
    for part in segments(step.command):
        words = words_of(part)
        applied = (words[:2] == ["git", "apply"] or (words and words[0] == "patch")) and "<<" not in part
        if not applied:
            continue
        source = next((w for w in reversed(words[1:]) if not w.startswith("-") and w != "<"), None)
        if "-i" in words and words.index("-i") + 1 < len(words):
            source = words[words.index("-i") + 1]
        stdin = re.search(r"<\s*(\S+)", part)
        source = stdin.group(1) if stdin else source
        known = views.lines.get(rel(source)) if source else None
        if known:
            step.edits += rebuild.diff_edits(views, "\n".join(known[n] for n in sorted(known)), rel)
        else:  # which files it changed is not known either
            step.unrecovered.append(("", f"`{part.strip()[:60]}`: a patch whose text is not in the log"))


def _heredoc_edits(step: Step, views: rebuild.Views, rel: Any) -> None:
    """Each heredoc of the command: a patch applied, a Python script's literal replacements, or a
    whole file written by ``cat``/``tee``."""
    for opener, body in rebuild.heredoc_bodies(step.command):
        if re.search(r"\bgit\s+apply\b|(?:^|[\s;&|])patch\b", opener):
            step.edits += rebuild.diff_edits(views, body, rel)
            continue
        if re.search(r"\bpython[\d.]*\b", opener):
            targets = [rel(p) for p, how in step.writes if how == "script" and p]
            pairs = rebuild.script_replacements(body)
            if len(set(targets)) == 1 and pairs:
                for old, new in pairs:
                    step.edits += rebuild.replace_text(views, targets[0], old, new, "script")
            else:
                step.unrecovered += [(target, "a script's change that is not a str.replace of literals")
                                     for target in dict.fromkeys(targets)]
            continue
        redirected = [p for p in _redirects(opener) if p not in ("/dev/null",)]
        if re.match(r"^\s*(?:cat|tee)\b", opener) and len(redirected) == 1 and ">>" not in opener:
            step.edits += rebuild.write_whole(views, rel(redirected[0]), body, "redirect")


def _account(step: Step, rel: Any, roots: tuple[str, ...]) -> None:
    """The files a patch names only in its text become the step's writes; a write no edit
    rebuilt is named as not rebuilt."""
    written = {rel(path) for path, _ in step.writes if path}
    for edit in step.edits:  # a patch names its files only in its text
        if edit.path not in written:
            written.add(edit.path)
            step.writes.append((edit.path, "create" if edit.created else "patch"))
    covered = {e.path for e in step.edits} | {path for path, _ in step.unrecovered}
    for path, how in step.writes:
        name = rel(path)
        if name and name not in covered and how in ("sed", "script", "redirect", "patch") \
                and not _relative(os.path.normpath(path), roots)[1]:
            step.unrecovered.append((name, "a script's change" if how == "script" else
                                     "a redirection whose text is not in the log" if how == "redirect" else
                                     "a patch" if how == "patch" else "an edit that is not rebuilt"))


def _editor_edit(step: Step, editor: dict[str, Any], views: rebuild.Views, rel: Any) -> None:
    command = str(editor.get("command") or "")
    path = rel(str(editor.get("path") or views.open_file or ""))
    if command in ("view", "open"):
        views.open_file = path
        rebuild.observe_window(views, path, step.output)
        return
    if not path:
        return
    views.open_file = path
    if command == "str_replace":
        old, new = editor.get("old_str"), editor.get("new_str")
        if isinstance(old, str) and isinstance(new, str):
            step.edits += rebuild.replace_text(views, path, old, new, "editor")
    elif command in ("create", "write"):
        text = editor.get("file_text") if command == "create" else editor.get("content")
        step.edits += rebuild.write_whole(views, path, str(text or ""), "editor")
    elif command == "insert":
        text, at = editor.get("new_str") or editor.get("text"), editor.get("insert_line")
        if isinstance(text, str) and isinstance(at, int):
            edits, missed = rebuild.line_edit(views, path, at + 1, at, text, "editor")
            step.edits += edits or [Edit(path, (), tuple(text.split("\n")), "editor", at + 1, views.enclosing_test(path, at))]
    elif command == "append":  # SWE-agent's windowed insert: where it lands is not recorded
        text = str(editor.get("text") or "")
        step.edits.append(Edit(path, (), tuple(text.split("\n")), "editor"))
    elif command == "line_edit":
        first, last, text = editor.get("first"), editor.get("last"), str(editor.get("text") or "")
        if isinstance(first, int) and isinstance(last, int):
            edits, missed = rebuild.line_edit(views, path, first, last, text, "editor")
            step.edits += edits
            if missed:
                step.unrecovered.append((path, missed))
    if command == "line_edit":
        rebuild.observe_window(views, path, step.output)  # the window the editor shows after the edit


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


def convert(trajectory: Trajectory) -> dict[str, Any]:
    """One trajectory -> one run document."""
    submitted = diff_files(trajectory.submission) if trajectory.submission is not None else None
    all_steps = trajectory.steps
    own = _own_modules(all_steps, trajectory.submission, trajectory.roots)
    broken = held_back_environment(trajectory.hidden, trajectory.held_back_log or "", own)
    if broken:
        note = (f"held-back run broken by its environment: {broken}; its outcome is not the agent's, so it is left "
                "out and nothing is charged")
        trajectory = dataclasses.replace(trajectory, hidden=[], notes=[*trajectory.notes, note])
    for step in all_steps:
        step.unavailable = unavailable(step, own)
    _find_checks(all_steps, submitted, trajectory.roots, own)
    _rebuild(all_steps, trajectory.submission, trajectory.roots)
    tracked = _tracked(all_steps, submitted, trajectory.roots)
    discarded = _discarded(all_steps, trajectory.roots, tracked)
    groups, current, baseline = _groups(all_steps, lambda path: _scratch_write(path, submitted, trajectory.roots, tracked,
                                                                               discarded))
    notes = list(trajectory.notes) + _step_notes(all_steps, submitted)
    outcome_unknown = not groups
    if not groups:
        groups, current = [list(all_steps)], []
        notes.append(_unknown_outcome(trajectory))
    trailing = [s for s in current for path, how in s.writes
                if how != "delete" and (submitted is None or _relative(path, trajectory.roots)[0] in submitted)
                and not _relative(path, trajectory.roots)[1]]
    groups[-1].extend(current)
    if trailing:
        where = "the submitted files" if submitted is not None else "the repository"
        notes.append(f"{len(trailing)} edit(s) to {where} came after the last check: submitted untested")
    iterations = []
    seen_created: set[str] = set()
    ancestors = _ancestors(all_steps)
    for k, group in enumerate(groups):
        iterations.append({"iteration_telemetry": _iteration(k, group, baseline if k == 0 else None, submitted,
                                                               seen_created, trajectory.roots, trajectory.submission,
                                                               unknown=outcome_unknown, tracked=tracked,
                                                               ancestors=ancestors)})
    _finish(iterations[-1]["iteration_telemetry"], trajectory)
    if submitted is not None and trajectory.submission:
        _unsubmitted_edits(iterations[-1]["iteration_telemetry"], groups[-1], submitted, tracked, trajectory.roots)
    return {"run": _run_info(trajectory, notes, len(iterations)), "iterations": iterations}


def _unsubmitted_edits(final: dict[str, Any], group: list[Step], submitted: dict[str, str], tracked: frozenset[str],
                       roots: tuple[str, ...]) -> None:
    """The final iteration's diff is the submission, plus the edits its steps made to the
    repository's own files that the submission leaves out (a test changed, run, and put back
    before submitting; a file the harness does not submit): the loop ran against them, so the
    rules that read test edits see them there as they do in every earlier iteration."""
    left_out = [edit for step in group for edit in step.edits
                if edit.path in tracked and edit.path not in submitted and not _outside_repo(edit.path)
                and not _relative(edit.path, roots)[1]]
    if left_out:
        final["changes"]["diff"] = final["changes"]["diff"] + rebuild.render(left_out)


def _groups(steps: list[Step], scratch: Any) -> tuple[list[list[Step]], list[Step], Step | None]:
    """The iterations: each an edit of the code (writing a throw-away script is not one:
    ``scratch(path)`` says which writes are) and every step up to the last check (a test run, a
    script run or a build) before the next edit of the code, so that an iteration's checks all saw
    the same code; the steps after the last such check (edits submitted untested); and the agent's
    last check before its first edit (a test run with counts before any other)."""
    groups: list[list[Step]] = []
    current: list[Step] = []
    before: list[Step] = []  # the checks before the first edit of the code
    edited = checked = False
    for step in steps:
        step.code_edit = any(not scratch(path) for path, _ in step.writes)
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


def scored_check(checks: list[Step]) -> Step | None:
    """The check that states what a stretch of unchanged code did: its last test run with counts
    (the widest evidence), else its last check."""
    for step in reversed(checks):
        if step.test and step.counts is not None and not step.unavailable:
            return step
    return checks[-1] if checks else None


def _scratch_write(path: str, submitted: dict[str, str] | None, roots: tuple[str, ...],
                   tracked: frozenset[str] = frozenset(), discarded: frozenset[str] = frozenset()) -> bool:
    """Whether a write is to a throw-away file, not the code: outside the repository, or a file
    the agent made (not one of the repository's own, ``tracked``) that the submitted diff leaves
    out, or (with no diff to say) one it deleted again (``discarded``) or with a
    ``reproduce_*.py``-like name."""
    if not path:
        return False  # a patch that names its files only in its text
    relative, outside = _relative(os.path.normpath(path), roots)
    if outside or relative in tracked:
        return outside
    if submitted is not None:
        return _scratch(relative, submitted)
    return _THROWAWAY.match(relative.rsplit("/", 1)[-1]) is not None or relative in discarded or any(
        relative.startswith(folder + "/") for folder in discarded)


def _discarded(steps: list[Step], roots: tuple[str, ...], tracked: frozenset[str]) -> frozenset[str]:
    """The files (and folders) the agent made and deleted again before the end: throw-away."""
    made: set[str] = set()
    gone: set[str] = set()
    for step in steps:
        for path, how in step.writes:
            if not path:
                continue
            relative, outside = _relative(os.path.normpath(path), roots)
            if outside or relative in tracked:
                continue
            if how == "delete":
                if relative in made or any(name.startswith(relative + "/") for name in made):
                    gone.add(relative)
            else:
                made.add(relative)
                gone.discard(relative)
    return frozenset(gone)


# A reproduction or debugging script by its name (a `test_*.py` may be the project's own test, so it is not one).
_THROWAWAY = re.compile(r"^(?:reproduce|repro|debug|scratch|tmp|temp)[\w.-]*\.(?:py|js|ts|sh|rb)$", re.IGNORECASE)

# Writes that change a file in place: the file was there before the agent wrote it.
_IN_PLACE = frozenset({"sed", "edit", "patch", "restore"})


def _tracked(steps: list[Step], submitted: dict[str, str] | None, roots: tuple[str, ...]) -> frozenset[str]:
    """The repository's own files among those the agent wrote: one whose first write changes it in
    place (``sed -i``, an editor's replace or insert, a patch's change of existing lines, a
    restore), and one the submitted diff modifies or deletes. Such a file is never "created" nor
    scratch, submitted or not: a test edited and then left out of the submission is still an
    edit of the project's tests."""
    first: dict[str, str] = {}
    for step in steps:
        for path, how in step.writes:
            if path:
                relative, outside = _relative(os.path.normpath(path), roots)
                if not outside:
                    first.setdefault(relative, how)
    tracked = {path for path, how in first.items() if how in _IN_PLACE}
    if submitted:
        tracked.update(path for path, status in submitted.items() if status != "created")
    return frozenset(tracked)


def _find_checks(steps: list[Step], submitted: dict[str, str] | None, roots: tuple[str, ...],
                 own: frozenset[str]) -> None:
    """Mark every step that runs a script to see what the code does (``python reproduce.py``,
    ``python -c``, ``./run.sh``: :mod:`procjudge.importers.checks`) as a check, with what it
    showed as one test named after it; a script the log showed writing the repository's files is
    an edit instead. Test runs, installs and structured edits are left as they are."""
    texts: dict[str, str] = {}  # the scripts the agent wrote, by path, as last written
    for step in steps:
        _remember_scripts(step, texts, roots)
        if not step.shell or step.test:
            continue
        parts = segments(step.command)
        runs = []
        for k, part in enumerate(parts):
            plain = _plain(part)
            if is_environment(plain) or re.match(r"^(?:cd|pushd|export|source|\.)(?:\s|$)", plain):
                continue
            if _RUNNER.search(" " + part) or any(pattern.match(plain) for pattern, _ in _OTHER_RUNNERS):
                continue  # a test runner asked for its help, version or collection: no check
            found = script_run(plain, words_of(plain))
            if found is not None:
                runs.append((k, found))
        if not runs:
            continue
        position, found = runs[-1]
        script_text = texts.get(_relative(os.path.normpath(found.script), roots)[0]) if found.script else None
        targets = script_targets(script_text, found.script) if script_text else []
        written = [path for path, how in step.writes if how == "script"] + targets
        if any(not _scratch_write(path, submitted, roots) for path in written):
            step.writes += [(os.path.normpath(path), "script") for path in targets
                            if (os.path.normpath(path), "script") not in step.writes]
            continue  # a script that rewrites the code is an edit
        # the exit status is the last simple command's: a script followed by `| tail` or `|| echo` has none
        code = step.returncode if position == len(parts) - 1 else None
        step.probe_kind = _probe_kind(found, texts, roots)
        step.probe_code = code
        outcome = check_outcome(code, step.output, own)
        if outcome.unavailable:
            step.unavailable = outcome.unavailable
            step.probe = found.identity
            continue
        step.probe, step.probe_outcome = found.identity, outcome
        step.frames = [(name, line) for (name, outside), (_, line) in
                       ((_relative(os.path.normpath(path), roots), (path, line)) for path, line in outcome.frames)
                       if not outside and not _library_path(name)][-20:]
        files = [name for name, _ in step.frames]
        test: dict[str, Any] = {"name": found.identity, "outcome": "passed" if outcome.passed else "failed",
                                "message": f"{outcome.line or 'printed nothing'} ({outcome.how})"}
        if files:
            test["files"] = list(dict.fromkeys(files))[-20:]
        step.counts = Counts(int(bool(outcome.passed)), int(not outcome.passed), 0, [test])


def _probe_kind(found: Any, texts: dict[str, str], roots: tuple[str, ...]) -> str:
    """A script check's kind: inline code, a reproduction the agent wrote (a script whose text the
    log showed it writing, or one outside the repository), or a script of the project's."""
    if found.script is None:
        return "inline" if " -c " in f" {found.identity} " or " -e " in f" {found.identity} " else "project_script"
    relative, outside = _relative(os.path.normpath(found.script), roots)
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
                texts[_relative(os.path.normpath(path), roots)[0]] = text
        return
    if "<<" not in step.command:
        return
    for opener, body in rebuild.heredoc_bodies(step.command):
        for path in _redirects(opener):
            if path not in ("/dev/null",):
                texts[_relative(os.path.normpath(path), roots)[0]] = body


def _step_notes(steps: list[Step], submitted: dict[str, str] | None) -> list[str]:
    """The run's notes on test runs that validated nothing and edits that could not be rebuilt."""
    notes = []
    idle = [s for s in steps if s.unavailable]
    if idle:
        notes.append(f"{len(idle)} test run(s) validated nothing and are not scored as failures "
                     f"(validation unavailable): {_reasons(idle)}")
    missed = [m for s in steps for m in s.unrecovered if not m[0] or not _scratch(m[0], submitted)]
    if missed:
        shown = "; ".join(f"{path} ({why})" if path else why for path, why in list(dict.fromkeys(missed))[:3])
        notes.append(f"{len(missed)} edit(s) of the submitted files could not be rebuilt, so the rules that read "
                     f"edits saw them only in the submitted diff: {shown}"
                     + (f" (+{len(missed) - 3} more)" if len(missed) > 3 else ""))
    return notes


def _unknown_outcome(trajectory: Trajectory) -> str:
    """No edit was followed by a test run that validated anything: one iteration whose own outcome
    is unknown, graded by the held-back suite alone (NothingLogged without one: nothing to score)."""
    all_steps = trajectory.steps
    idle = [s for s in all_steps if s.unavailable]
    why = (f"none of the agent's {len(idle)} check(s) after its edits validated anything ({_reasons(idle)})"
           if idle else "the agent ran no check (a test run, a script, a build) after its edits"
           if any(s.check for s in all_steps) else "the agent ran no check (a test run, a script, a build)")
    if not any(s.writes for s in all_steps) and not trajectory.submission:
        checked = "ran checks but " if any(s.check or s.unavailable for s in all_steps) else ""
        raise NothingLogged(f"the agent {checked}changed no file: nothing to judge{_held_back_text(trajectory.hidden)}")
    return f"{why}: one iteration that nothing validated (the held-back suite is shown, not scored)"


def _finish(final: dict[str, Any], trajectory: Trajectory) -> None:
    """The last iteration carries the submitted diff (the authority on what was submitted) and the
    held-back suites."""
    if trajectory.submission:
        final.setdefault("changes", {})["diff"] = trajectory.submission
    if trajectory.hidden:
        suites = trajectory.hidden
        final["test_results"]["hidden"] = {"passed": sum(s["passed"] for s in suites), "total": sum(s["total"] for s in suites)}
        final["test_results"]["hidden_suites"] = suites


def _run_info(trajectory: Trajectory, notes: list[str], iterations: int) -> dict[str, Any]:
    task: dict[str, Any] = {"statement": trajectory.statement[:20_000].strip()}
    if trajectory.language:
        task["language"] = trajectory.language
    run: dict[str, Any] = {
        "id": f"{trajectory.agent}/{trajectory.instance}", "agent": trajectory.agent, "challenge": trajectory.instance,
        "format": "standard", "max_iterations": max(1, iterations), "source": trajectory.source,
        "task": task, "notes": notes, "iterations_are": "local_runs",
    }
    started = _iso(next((s.time for s in trajectory.steps if s.time), None))
    if started:
        run["started_at"] = started
    return run


def _held_back_text(suites: list[dict[str, Any]]) -> str:
    """'; held-back suite: resolved, 3/3' for a note about a run that is not imported."""
    if not suites:
        return ""
    passed, total = sum(s["passed"] for s in suites), sum(s["total"] for s in suites)
    return f"; held-back suite: {'resolved' if total and passed >= total else 'not resolved'}, {passed}/{total} pass"


# --------------------------------------------------------------------------- repository history


_HEAD_RELATIVE = re.compile(r"^(?:HEAD|@)(?:[~^]\d*)*(?::.*)?$|^(?:HEAD|@)\{[^}]*\}$")
_HISTORY_FLAGS = ("--all", "--branches", "--remotes", "--tags", "--glob", "--reflog")


def history_read(command: str) -> tuple[str, str | None] | None:
    """(the simple command, the revision it names) when a command reads the repository history
    beyond the checked-out base: ``git log --all`` (or ``--branches``, ``--remotes``...), the
    reflog, ``git fetch``/``pull``, or ``git show``/``diff``/``checkout``/``restore --source``/
    ``cherry-pick``/``merge`` of a revision that is not HEAD or its ancestors. None otherwise."""
    for part in segments(command):
        words = words_of(_plain(part))
        if len(words) < 2 or words[0] != "git":
            continue
        verb, rest = words[1], [w for w in words[2:]]
        options = [w for w in rest if w.startswith("-")]
        operands = [w for w in rest if not w.startswith("-")]
        if verb == "reflog" or verb in ("fetch", "pull"):
            return part.strip()[:200], None
        if verb == "log" and any(o.split("=")[0] in _HISTORY_FLAGS for o in options):
            return part.strip()[:200], None
        if "--" in rest:
            operands = [w for w in rest[:rest.index("--")] if not w.startswith("-")]
        if verb == "restore":
            operands = _restore_source(rest, options)
        revision = _later_revision(operands) if verb in ("show", "diff", "checkout", "restore", "cherry-pick", "merge",
                                                         "log") else None
        if revision is not None:
            return part.strip()[:200], revision
    return None


def _restore_source(rest: list[str], options: list[str]) -> list[str]:
    """The revision ``git restore --source`` reads from, as the only operand."""
    source = next((o.split("=", 1)[1] for o in options if o.startswith("--source=")), None)
    if source is None and "--source" in rest and rest.index("--source") + 1 < len(rest):
        source = rest[rest.index("--source") + 1]
    return [source] if source else []


def _later_revision(operands: list[str]) -> str | None:
    """The first revision named (ranges and ``REV:path`` included) beyond the checked-out base."""
    for operand in operands:
        for revision in re.split(r"\.\.\.?", operand):
            revision = revision.split(":", 1)[0]
            if _revision_beyond_base(revision):
                return revision
    return None


def _revision_beyond_base(word: str) -> bool:
    """A word that names a commit that may lie beyond the base: a hash, or a remote branch or ref
    (a bare word may be a branch or a file, and is not taken for a revision)."""
    if not word or _HEAD_RELATIVE.match(word) or word in (".", "-"):
        return False
    if re.fullmatch(r"[0-9a-f]{7,40}", word):
        return True
    return word.startswith(("origin/", "upstream/", "refs/"))


def _added_lines(diff: str) -> dict[str, set[str]]:
    """path -> the non-trivial lines a diff adds (stripped, at least 12 characters)."""
    found: dict[str, set[str]] = {}
    path = ""
    for line in diff.split("\n"):
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
        elif line.startswith("+") and not line.startswith("+++"):
            text = line[1:].strip()
            if len(text) >= 12 and re.search(r"[A-Za-z]", text):
                found.setdefault(path, set()).add(text)
    return found


def history_evidence(step: Step, command: str, submission: str | None) -> int:
    """How many non-trivial lines the submitted diff adds that the history read printed: the added
    lines of a commit or diff it showed, or the lines of a file it showed at a revision
    (``git show REV:path``). Lines the submission also removes (moved code) do not count. A
    checkout prints nothing, so it is shown as a read and never counted as evidence."""
    if not submission:
        return 0
    submitted = set().union(*_added_lines(submission).values()) if submission else set()
    removed = {line[1:].strip() for line in submission.split("\n") if line.startswith("-") and not line.startswith("---")}
    whole_file = re.search(r"\bshow\s+\S+:\S", command) is not None
    shown = {(line if whole_file else line[1:]).strip() for line in step.output.split("\n")
             if whole_file or (line.startswith("+") and not line.startswith("+++"))}
    return len((shown & submitted) - removed)


def _scratch(path: str, submitted: dict[str, str] | None) -> bool:
    return _outside_repo(path) or (submitted is not None and path not in submitted)


def _reasons(steps: list[Step]) -> str:
    counted: dict[str, list[str]] = {}
    for step in steps:
        counted.setdefault(step.unavailable or "", []).append(step.command.strip().split("\n", 1)[0][:60])
    return "; ".join(f"{reason} ({len(commands)}x, e.g. `{commands[0]}`)" for reason, commands in counted.items())


def _iteration(k: int, group: list[Step], baseline: Step | None, submitted: dict[str, str] | None,
               seen_created: set[str], roots: tuple[str, ...], submission: str | None = None,
               unknown: bool = False, tracked: frozenset[str] = frozenset(),
               ancestors: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One iteration's telemetry from its steps: timing, actions, the files written and their edits,
    the test results (or why none validated anything), and the reads of the repository's history."""
    files = _files_written(group, submitted, seen_created, roots, tracked)
    telemetry: dict[str, Any] = {"iteration_number": k}
    times = [s.time for s in group if s.time]
    if times:
        telemetry["timestamp_start"] = _iso(times[0])
        telemetry["duration_seconds"] = round(max(times) - times[0], 3)
    telemetry["actions"] = _actions(group)
    telemetry["changes"] = _changes(group, files, submitted)
    results, build = _results(group, baseline, unknown)
    if build is not None:
        telemetry["build"] = build
    reads = _history_reads(group, submission, ancestors)
    if reads:
        telemetry["history"] = reads[:50]
    telemetry["test_results"] = results
    first_edit = next((k for k, s in enumerate(group) if s.code_edit), 0)
    checks = _check_records(group[first_edit:])
    if checks and not unknown:
        telemetry["checks"] = checks[-200:]
    return telemetry


def _files_written(group: list[Step], submitted: dict[str, str] | None, seen_created: set[str],
                   roots: tuple[str, ...], tracked: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The files an iteration's steps wrote, each with its status and whether it is scratch (a
    file of the repository's own, ``tracked``, is modified and never scratch)."""
    files: dict[str, dict[str, Any]] = {}
    for step in group:
        for path, how in step.writes:
            if not path:
                continue
            relative, outside = _relative(path, roots)
            known = submitted.get(relative) if submitted is not None else None
            status = "deleted" if how == "delete" else known or ("created" if how == "create" or submitted is not None
                                                                  else "modified")
            if status == "created" and relative in seen_created and (submitted is None or relative not in submitted):
                status = "modified"  # a scratch file written again after the iteration that created it
            if relative in tracked and not outside:
                status = "deleted" if how == "delete" else "modified"
            if status == "created":
                seen_created.add(relative)
            files[relative] = {"path": relative, "status": status,
                               "scratch": outside or (relative not in tracked and submitted is not None
                                                      and relative not in submitted)}
    return files


def _actions(group: list[Step]) -> dict[str, Any]:
    """Tool calls, edits, reads, and the test runs that validated something (unknown, not 0, when
    test runs were attempted and none could run)."""
    validated = sum(1 for s in group if (s.test or s.probe) and not s.unavailable)
    attempted = any(s.unavailable for s in group)
    actions: dict[str, Any] = {"tool_calls_total": len(group), "file_edits": sum(1 for s in group if s.writes),
                               "file_reads": sum(1 for s in group if not s.writes and not s.check)}
    if validated or not attempted:
        actions["test_runs"] = validated
    return actions


def _changes(group: list[Step], files: dict[str, dict[str, Any]], submitted: dict[str, str] | None) -> dict[str, Any]:
    """The files, the agent's reasoning as the summary, each edit rebuilt as text (and those that
    could not be), and the diff of what this iteration's steps changed."""
    summary = [s.thought[:500] for s in group if s.writes and s.thought][:5]
    changes: dict[str, Any] = {"files": list(files.values())}
    if summary:
        changes["summary"] = summary
        changes["summary_kind"] = "prose"  # the agent's reasoning, not a description of the change
    missed = [f"{path}: {why}" if path else why for step in group for path, why in step.unrecovered
              if not path or not _scratch(path, submitted)]
    if missed:
        changes["unrebuilt"] = list(dict.fromkeys(missed))[:50]
    rebuilt = [edit for step in group for edit in step.edits if not _outside_repo(edit.path)]
    for edit in rebuilt:
        record = files.get(edit.path)
        if record is not None and len(record.setdefault("edits", [])) < 50:
            record["edits"].append({"old": "\n".join(edit.removed)[:20_000], "new": "\n".join(edit.added)[:20_000],
                                    "via": "heredoc" if edit.how == "redirect" else edit.how})
    if rebuilt:
        changes["diff"] = rebuild.render(rebuilt)  # what this iteration's steps changed (the final one: the submission)
    return changes


def _results(group: list[Step], baseline: Step | None, unknown: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The test results of an iteration's last check (and the build that failed instead), against
    the agent's baseline run; why nothing was validated when no run after the edits ran."""
    first_edit = next((k for k, s in enumerate(group) if s.code_edit), 0)
    last = scored_check([s for s in group[first_edit:] if s.check])
    results: dict[str, Any] = {}
    build = None
    if unknown or last is None:  # no run after the edits validated anything: the outcome is unknown
        idle_after = [s for s in group if s.unavailable]
        results["unavailable"] = unavailable_code(idle_after[0].unavailable or "") if idle_after else "not_a_test_run"
        last = baseline
        if baseline is not None and (baseline.test or baseline.probe):
            results["suite"] = baseline.test or baseline.probe
    elif last.counts is None:
        results["suite"] = last.test or "build"
        reason = "the build failed" if last.test is None else "the test command printed no summary"
        build = {"status": "failure", "errors": [last.output.strip()[-2000:] or reason]}
    else:
        counts = last.counts
        results["suite"] = last.test or last.probe
        results["post_iteration"] = {"passed": counts.passed, "failed": counts.failed,
                                     "total": counts.passed + counts.failed, "skipped": counts.skipped}
        if counts.tests:
            results["tests"] = counts.tests[:5000]
    results.update(_baseline_results(baseline, last))
    idle = [s for s in group if s.unavailable]
    if idle and idle[0].unavailable and "unavailable" not in results:
        results["unavailable"] = unavailable_code(idle[0].unavailable)
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
        words = words_of(_plain(part))
        if not words:
            continue
        head = os.path.basename(words[0])
        if check and (test_command(part) or build_command(part) or script_run(_plain(part), words)):
            continue
        if head in _READS or head == "git" and len(words) > 1 and words[1] in _GIT_READS:
            continue
        if head == "sed" and not any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            continue
        return False
    return True


def _check_records(steps: list[Step]) -> list[dict[str, Any]]:
    """The records of every check among ``steps``, in order; a check run again with nothing done
    since its previous run but reading (no edit, not even of a throw-away file, no install, clean
    or configure; its own command the check alone) is marked ``unchanged``."""
    records: list[dict[str, Any]] = []
    last_run: dict[str, int] = {}
    last_write = -1
    for k, step in enumerate(steps):
        is_check = bool(step.test or step.probe or step.failed_build)
        if not _changes_nothing(step, check=is_check):
            last_write = k
        if not is_check:
            continue
        record = _check_record(step)
        previous = last_run.get(record["command"])
        if previous is not None and last_write <= previous and last_write != k:
            record["unchanged"] = True
        last_run[record["command"]] = k
        records.append(record)
    return records


def _check_record(step: Step) -> dict[str, Any]:
    """One check as the run file keeps it (``iteration_telemetry.checks``): its command and kind,
    its exit status, what it showed (``error``: a crash, or a runner that printed no summary), the
    repository frames of its traceback, why it could not run; the line that shows its outcome, a
    test run's counts and failing tests."""
    command = step.test or step.probe or step.failed_build or ""
    kind = "test_runner" if step.test else "build" if step.failed_build and not step.probe else step.probe_kind
    record: dict[str, Any] = {"command": command[:200], "kind": kind}
    code = step.probe_code if step.probe and not step.test else step.returncode
    if code is not None and -(2**31) <= code < 2**31:
        record["exit_code"] = code
    last_line = next((line.strip() for line in reversed(step.output.strip().split("\n")) if line.strip()), "")
    if step.unavailable:
        record.update(outcome="unavailable", unavailable=step.unavailable[:300])
    elif step.counts is None:
        record.update(outcome="error", message=(last_line or "it printed no summary")[:300])
    elif step.probe and not step.test:
        (test,) = step.counts.tests
        crashed = step.probe_outcome is not None and step.probe_outcome.passed is False and bool(step.frames) \
            and not (step.probe_outcome.line or "").startswith("AssertionError")
        record.update(outcome="error" if crashed else test["outcome"], message=test["message"][:300])
        if step.frames:
            record["frames"] = [{"path": path[:500], "line": line} for path, line in step.frames]
    else:
        counts = step.counts
        failing = [t["name"] for t in counts.tests if t["outcome"] == "failed"]
        record.update(outcome="failed" if counts.failed else "passed", passed=counts.passed, failed=counts.failed,
                      message=f"{counts.failed} failed, {counts.passed} passed")
        if failing:
            record["failing"] = [name[:200] for name in failing[:20]]
    return record


def _baseline_results(baseline: Step | None, last: Step | None) -> dict[str, Any]:
    """The agent's run before its first edit: its counts as the iteration's before (same suite
    only), and its tests by name, what the agent saw before its first edit."""
    if baseline is None or baseline.counts is None:
        return {}
    found: dict[str, Any] = {}
    if last is not None and (baseline.test or baseline.probe) == (last.test or last.probe):
        found["pre_iteration"] = {"passed": baseline.counts.passed, "failed": baseline.counts.failed,
                                  "total": baseline.counts.passed + baseline.counts.failed}
    if baseline.counts.tests:
        found["baseline_tests"] = baseline.counts.tests[:5000]
    return found


_HASH = re.compile(r"\b[0-9a-f]{7,40}\b")


def _ancestors(steps: list[Step]) -> frozenset[str]:
    """The commits the log shows to be the checked-out base or its ancestors: the hashes a plain
    ``git log`` (HEAD's history, no ``--all``) or ``git blame`` printed."""
    found: set[str] = set()
    for step in steps:
        if not step.shell or "git" not in step.command:
            continue
        for part in segments(step.command):
            words = words_of(_plain(part))
            if len(words) < 2 or words[0] != "git" or words[1] not in ("log", "blame"):
                continue
            if words[1] == "log" and (any(w.split("=")[0] in _HISTORY_FLAGS for w in words[2:])
                                      or any(_revision_beyond_base(w) for w in words[2:] if not w.startswith("-"))):
                continue  # another branch's history, or from a named revision: not HEAD's ancestry
            found.update(_HASH.findall(step.output[:2_000_000]))
            break
    return frozenset(found)


def _is_ancestor(revision: str | None, ancestors: frozenset[str]) -> bool:
    if not revision or not re.fullmatch(r"[0-9a-f]{7,40}", revision):
        return False
    return any(known.startswith(revision) or revision.startswith(known) for known in ancestors)


def _history_reads(group: list[Step], submission: str | None,
                   ancestors: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The commands that read the repository's history beyond the task's base, each with how many
    lines it printed reached the submission; a commit the log showed in HEAD's own history
    (``ancestors``) is the base's past, not beyond it."""
    reads = []
    for step in group:
        found = history_read(step.command) if step.editor is None else None
        if found is not None and _is_ancestor(found[1], ancestors):
            continue
        if found is not None:
            command, revision = found
            reads.append({"command": command, "revision": revision,
                          "lines_in_submission": history_evidence(step, command, submission),
                          "submission_lines": len(set().union(*_added_lines(submission or "").values()))})
    return reads
