"""Whether a check validated anything: a runner missing from the machine, a module the image
lacks, output cut or piped away, a collection stopped by the environment, a held-back run broken
by its image. Such a check is named, never charged to the agent.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..model import Unavailable
from .checks import KILLED_BY_HARNESS, MISSING_MODULE, is_environment, missing_dependency, module_missing
from .classify import segments, test_command, without_prefixes
from .steps import Step, diff_files, repo_relative

_RUNNER_MISSING = re.compile(
    r"No module named '?(?:pytest|unittest|nose2?|tox|nox|coverage)'?\b"
    r"|(?:^|[\s:])(?:pytest|py\.test|tox|nox|python[\d.]*|go|cargo|npm|yarn|pnpm|npx|jest|vitest|ctest|make|node)"
    r"(?::\s*\d+)?:\s*(?:command\s+)?not found"
    r"|can't open file .*(?:runtests|manage)\.py"
    r"|(?:runtests|manage)\.py: No such file or directory", re.MULTILINE)
# pip's own words for an install that failed (no network, no such version): the runner after `&&` never ran
_INSTALL_FAILED = re.compile(r"^ERROR: (?:No matching distribution found for|Could not find a version that satisfies) .+$",
                             re.MULTILINE)
# a runner that refused its command line (pytest's exit status 4): no test ran
_USAGE_ERROR = re.compile(r"^(?:ERROR: usage: |\S+: error: unrecognized arguments: )", re.MULTILINE)
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
            missing = MISSING_MODULE.findall(step.output)
            foreign = [name for name in missing if name.split(".")[0] not in own_modules]
            if foreign and len(foreign) == len(missing):  # only the environment's modules are missing
                return f"collection stopped: {module_missing(foreign[-1])}"
        return None
    output = step.output
    if KILLED_BY_HARNESS in output[:2000]:
        return "it timed out: the harness killed it at its time limit"
    if re.search(r"^=*\s*no tests ran\b|^Ran 0 tests\b|^collected 0 items", output, re.MULTILINE):
        return "it ran no test"
    if step.returncode == 127 or _RUNNER_MISSING.search(output):
        return "the test runner is not installed or not found"
    install = _INSTALL_FAILED.search(output)
    if install and any(is_environment(without_prefixes(part)) for part in segments(step.command)):
        return f"the test runner is not installed: the install before it failed ({install.group(0).strip()[:100]})"
    if _USAGE_ERROR.search(output):
        return "the runner refused its arguments (a usage error): it ran no test"
    dependency = missing_dependency(output, own_modules)
    if dependency is not None:
        return dependency[1]
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
    missing = MISSING_MODULE.findall(log)
    foreign = [name for name in missing if name.split(".")[0] not in own_modules]
    if not missing or len(foreign) != len(missing):
        return None
    return f"its tests stopped at import: {module_missing(foreign[-1])}"


_IMPORT_STOPPED = re.compile(r"ImportError while loading conftest|Failed to import test module"
                             r"|ImportError while importing test module")


def unavailable_code(reason: str) -> Unavailable:
    """The run file's code for a reason :func:`unavailable` gave."""
    if "not installed" in reason or "missing" in reason:
        return "runner_missing"
    if "timed out" in reason:
        return "output_cut"
    if "nothing" in reason or "echo" in reason or "no test" in reason or "setting itself up" in reason:
        return "no_output"  # (a script that stopped setting itself up gave no outcome of the code)
    return "output_cut"


def project_modules(steps: list[Step], submission: str | None, roots: tuple[str, ...]) -> frozenset[str]:
    """The project's top-level module names: the first folder (or file stem) of every path the
    agent wrote or submitted, past ``src``/``lib``/``tests``."""
    names: set[str] = set()
    paths = list(diff_files(submission)) if submission else []
    paths += [repo_relative(path, roots)[0] for step in steps for path, _ in step.writes if path]
    for path in paths:
        parts = [p for p in path.replace("\\", "/").split("/") if p not in (".", "")]
        for part in parts[:-1] + [os.path.splitext(parts[-1])[0]] if parts else []:
            if part not in ("src", "lib", "tests", "test"):
                names.add(part)
                break
    return frozenset(names)
