"""Test counts read from a runner's output: unittest, pytest, SymPy's ``bin/test``, Go, Cargo,
Jest and Vitest, CTest and GoogleTest, each test by name where the output lists it.
"""

from __future__ import annotations

import re

_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s", re.MULTILINE)
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.MULTILINE)
_PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
                             r"(?:, )?)+)(?: in [\d.]+\s*s.*)?=*\s*$", re.MULTILINE)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # CSI; OSC to BEL or ST
_UNITTEST_FAIL = re.compile(r"^(FAIL|ERROR): (\S+) \(([\w.]+)\)", re.MULTILINE)
_UNITTEST_OK = re.compile(r"^(\w+) \(([\w.]+)\)(?: .*)? \.\.\. (ok|FAIL|ERROR|skipped.*|expected failure)$", re.MULTILINE)
_PYTEST_LINE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", re.MULTILINE)
_PYTEST_SHORT = re.compile(r"^(FAILED|ERROR) (\S+::\S+)", re.MULTILINE)


class Counts:
    def __init__(self, passed: int, failed: int, skipped: int, tests: list[dict[str, str]]) -> None:
        self.passed, self.failed, self.skipped, self.tests = passed, failed, skipped, tests


def parse_counts(output: str) -> Counts | None:
    """Counts and per-test outcomes from a unittest/Django or pytest run's output (or cargo, go,
    jest/vitest, ctest, googletest, Maven surefire), or None when the output holds no summary (the
    tests did not run)."""
    if "tests finished:" in output:
        sympy = _sympy(output)
        if sympy is not None:
            return sympy
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
    for parser in (_cargo, _go, _jest, _ctest, _gtest, _surefire):
        counts = parser(output)
        if counts is not None:
            return counts
    return None


# SymPy's runner: its closing line (wrapped at 80 columns, so "in N seconds" may start the next
# line) and a header naming each test that failed or raised
_SYMPY_SUMMARY = re.compile(r"^=*\s*tests finished: ([^\n]*?),?\s*in\s+[\d.]+\s+seconds\s*=*\s*$", re.MULTILINE)
_SYMPY_FAILED = re.compile(r"^_{3,} (\S+\.py):(\w+) _{3,}\s*$", re.MULTILINE)
_SYMPY_COUNTED = {"passed": "passed", "failed": "failed", "skipped": "skipped", "expected to fail": "skipped",
                  "expected to fail but passed": "passed", "exceptions": "failed", "exception": "failed"}


def _sympy(output: str) -> Counts | None:
    found = _SYMPY_SUMMARY.findall(output)
    if not found:
        return None
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for number, word in re.findall(r"(\d+) ([a-z][a-z ]*[a-z])", found[-1]):
        if word not in _SYMPY_COUNTED:
            return None
        counts[_SYMPY_COUNTED[word]] += int(number)
    names = [(f"{path}::{name}", "failed") for path, name in _SYMPY_FAILED.findall(output)]
    return Counts(counts["passed"], counts["failed"], counts["skipped"], _outcomes(names))


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


# Maven surefire: each module's summary (a "Tests run" line that ends with its counts; the lines of
# one class go on with its time), and the tests that failed or erred, named in surefire 3's
# "Class.method -- Time elapsed" and surefire 2's "method(Class)  Time elapsed"
_SUREFIRE_SUMMARY = re.compile(r"^(?:\[(?:INFO|ERROR|WARNING)\]\s+)?Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
                               r"Skipped: (\d+)\s*$", re.MULTILINE)
_SUREFIRE_FAILED = re.compile(r"^\[ERROR\]\s+(?!Tests run:)([\w.$]+?)(?:\(([\w.$]+)\))?\s+(?:--\s+)?Time elapsed: "
                              r"[\d.,]+ s\s+<<< (?:FAILURE|ERROR)!", re.MULTILINE)


def _surefire(output: str) -> Counts | None:
    summaries = _SUREFIRE_SUMMARY.findall(output)
    if not summaries:
        return None
    ran, failures, errors, skipped = (sum(int(s[k]) for s in summaries) for k in range(4))
    names = [(f"{owner}.{name}" if owner else name, "failed") for name, owner in _SUREFIRE_FAILED.findall(output)]
    return Counts(max(0, ran - failures - errors - skipped), failures + errors, skipped, _outcomes(names))


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
