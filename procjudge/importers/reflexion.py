"""Import Reflexion-family code-repair logs (LDB, Reflexion, the Reflexion runs in MapCoder).

Each JSON line is one task: ``implementations`` (the code after each iteration), ``test_feedback``
(per iteration: LDB's list of failed asserts, or Reflexion's "Tested passed / Tests failed" text)
and ``is_solved`` (the hidden suite the agent never saw).  Each becomes one run file in the
contract's format: per iteration the visible tests by name (the assert text) with their outcome
and the output after a failure, the counts, the code, the unified diff from the previous
iteration (with the import header every implementation repeats set aside) and a code hash; the
hidden verdict as the held-back suite after the last iteration.

The task the agent was given goes to ``run.task``: the prompt as the statement and the visible
tests (LDB's ``given_tests``; Reflexion's tests as its first feedback lists them, which the model
wrote before its first program), so that literals of the specification are not taken for
special cases and a special case keyed on a visible test is found from the first submission on.

Tree searches (LATS, recognised by their ``acc`` field) are not repair loops: their
``implementations[1]`` is the search's best node while ``test_feedback[1]`` is the feedback of the
last node generated, and ``implementations[0]`` is often another task's program. Such a record is
imported as one submission (the best node) scored by the hidden verdict, without the visible
feedback, and the run says so in ``run.notes``; a record the search solved at once logs no
program and is skipped with a note, not an error.

Lines are streamed, so a file of any size imports in bounded memory, and a malformed line is
reported with its line number while every other line is still imported.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
from collections.abc import Iterator
from typing import Any, cast

from msgspec.structs import replace

from ..model import (
    Changes,
    Counts,
    Entry,
    FileChange,
    Format,
    IterationTelemetry,
    RunFile,
    RunInfo,
    ScoreRecord,
    TestOutcome,
    TestResults,
)
from ..model import Task as Given
from .base import (
    ImportIssue,
    NothingLogged,
    agent_names,
    benchmark_challenge,
    read_records,
    records_of,
)
from .build import held_back, submissions
from .driver import Imported, Made, Task, drive
from .values import kind

LDB_MARKER = " # Real Execution Output:"
REFLEXION_MARKER = " # output:"
DIFF_PATH = "solution.py"


TREE_SEARCH_NOTE = (
    "tree search (LATS): implementations[1] is the search's best node but test_feedback[1] is the "
    "feedback of the last node generated, so the logged feedback does not always belong to the logged "
    "code; imported as one submission (the best node) scored by the hidden verdict, not as a repair loop"
)


def _model(record: dict[str, Any]) -> str | None:
    """The model a record names itself (``model``, ``model_name``), if any."""
    value = record.get("model") or record.get("model_name")
    return value.strip()[:200] or None if isinstance(value, str) else None


def task_id(record: dict[str, Any]) -> str | None:
    value = record.get("task_id") or record.get("name")
    return str(value) if value is not None else None


def split_feedback(entry: str, marker: str) -> tuple[str, str]:
    """``assert f(1) == 2 # Real Execution Output: 3`` -> (``assert f(1) == 2``, ``3``)."""
    if marker in entry:
        name, _, output = entry.partition(marker)
        return name.strip(), output.strip()
    return entry.strip(), ""


def parse_feedback(feedback: Any, given: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(passed test names, [(failed test name, output)]) for one iteration, in either layout."""
    if isinstance(feedback, str):
        passed_part, _, failed_part = feedback.partition("Tests failed:")
        passed_part = passed_part.replace("Tested passed:", "", 1)
        passed = [line.strip() for line in passed_part.splitlines() if line.strip()]
        failed = [split_feedback(line, REFLEXION_MARKER) for line in failed_part.splitlines() if line.strip()]
        return passed, failed
    if isinstance(feedback, list):
        failed = [split_feedback(str(entry), LDB_MARKER) for entry in feedback]
        failing = {name for name, _ in failed}
        passed = [name.strip() for name in given if name.strip() not in failing]
        return passed, failed
    raise ValueError(f"a test_feedback entry is {kind(feedback)}, expected a list or text")


def common_header(implementations: list[str]) -> list[str]:
    """The leading lines every implementation repeats (LDB's fixed import header), set aside
    before diffing so that the diffs show the change, not the boilerplate."""
    if len(implementations) < 2:
        return []
    split = [code.splitlines() for code in implementations]
    header = []
    for lines in zip(*split, strict=False):
        first = lines[0]
        if all(line == first for line in lines) and (first.startswith(("import ", "from ", "_str=")) or not first.strip()):
            header.append(first)
        else:
            break
    return header


def unified_diff(before: str, after: str, header: list[str]) -> str:
    a = before.splitlines()[len(header):]
    b = after.splitlines()[len(header):]
    lines = difflib.unified_diff(a, b, f"a/{DIFF_PATH}", f"b/{DIFF_PATH}", lineterm="", n=2)
    return "\n".join(lines) + ("\n" if a != b else "")


def is_tree_search(record: dict[str, Any]) -> bool:
    """A LATS record: it carries the search's ``acc`` (and none of Reflexion's hallucination flags)."""
    return "acc" in record and "hallucination" not in record


def _task(record: dict[str, Any], given: list[str]) -> Given:
    prompt = record.get("prompt")
    return Given(language="python", statement=prompt[:100_000] if isinstance(prompt, str) else None,
                visible_tests=given or None)


def _code(code: str) -> Changes:
    return Changes(code_hash=hashlib.sha256(code.encode("utf-8")).hexdigest(), code=code)


def convert_tree_search(record: dict[str, Any], agent: str, fmt: str) -> RunFile:
    """A LATS record -> a one-submission run: the best node, scored by the hidden verdict."""
    name = task_id(record)
    implementations = record.get("implementations") or []
    code = implementations[-1] if implementations else record.get("solution")
    if not isinstance(code, str) or not code.strip():
        raise NothingLogged("tree search solved by its first node: no program logged to judge")
    solved = record.get("is_solved")
    if solved is None:
        solved = bool(record.get("acc"))
    hidden, suites = held_back([{"name": "hidden", "passed": int(bool(solved)), "total": 1}])
    telemetry = IterationTelemetry(iteration_number=0, changes=_code(code),
                                   score=ScoreRecord(post_iteration=100.0 if solved else 0.0),
                                   test_results=TestResults(hidden=hidden, hidden_suites=suites))
    return submissions(RunInfo(id=f"{agent}/{name}", agent=agent, challenge=name, format=cast(Format, fmt), max_iterations=1,
                               task=_task(record, []), notes=[TREE_SEARCH_NOTE]), [Entry(iteration_telemetry=telemetry)])


def convert(record: dict[str, Any], agent: str, max_iterations: int, fmt: str,
            second_hidden: bool | None = None, second_name: str = "extended") -> RunFile:
    """One task record -> one run, built as the typed model."""
    name = task_id(record)
    if name is None:
        raise ValueError("no task_id or name")
    if is_tree_search(record):
        return convert_tree_search(record, agent, fmt)
    implementations = record.get("implementations")
    feedback = record.get("test_feedback")
    if not isinstance(implementations, list) or not implementations:
        raise ValueError("no implementations")
    if not isinstance(feedback, list):
        raise ValueError("test_feedback is not a list")  # noqa: TRY004 (callers report a bad record as ValueError)
    if len(feedback) < len(implementations):
        raise ValueError(f"{len(implementations)} implementations but {len(feedback)} test_feedback entries")
    given_tests = record.get("given_tests") or []
    if not isinstance(given_tests, list):
        raise TypeError(f"given_tests is not a list (got {kind(given_tests)})")
    given = [str(t) for t in given_tests]
    if not given:  # Reflexion: the model's own tests, as its first feedback lists them
        passed0, failed0 = parse_feedback(feedback[0], [])
        given = passed0 + [test for test, _ in failed0]
    header = common_header([str(code) for code in implementations])
    iterations = []
    previous_code: str | None = None
    for k, code in enumerate(implementations):
        code = str(code)
        passed, failed = parse_feedback(feedback[k], given)
        tests = [TestOutcome(name=test, outcome="passed") for test in passed]
        tests += [TestOutcome(name=test, outcome="failed", message=output[:2000]) for test, output in failed]
        total = len(passed) + len(failed)
        changes = _code(code)
        if previous_code is not None:
            diff = unified_diff(previous_code, code, header)
            changes = replace(changes, diff=diff, files=[FileChange(path=DIFF_PATH, status="modified")] if diff else [])
        results = TestResults(post_iteration=Counts(passed=len(passed), failed=len(failed), total=total), tests=tests)
        if k == len(implementations) - 1 and record.get("is_solved") is not None:
            suites: list[dict[str, Any]] = [{"name": "hidden", "passed": int(bool(record["is_solved"])), "total": 1}]
            if second_hidden is not None:
                suites.append({"name": second_name, "passed": int(bool(second_hidden)), "total": 1})
            hidden, named = held_back(suites)
            results = replace(results, hidden=hidden, hidden_suites=named)
        iterations.append(Entry(iteration_telemetry=IterationTelemetry(
            iteration_number=k, changes=changes, test_results=results,
            score=ScoreRecord(post_iteration=0.0) if total == 0 else None)))
        previous_code = code
    return submissions(RunInfo(id=f"{agent}/{name}", agent=agent, challenge=name, format=cast(Format, fmt),
                               max_iterations=max(max_iterations, len(implementations)), task=_task(record, given)),
                       iterations)


def is_run_log(path: str, lines: int = 50) -> bool:
    """Whether a JSON-lines file is a run log: some record among its first lines has
    ``implementations`` (a repair loop) or ``acc`` (a tree search, whose solved records log none)."""
    with open(path, "rb") as handle:
        for _, raw in zip(range(lines), handle, strict=False):
            if b'"implementations"' in raw or b'"acc"' in raw:
                return True
    return False


def hidden_verdicts(path: str) -> tuple[dict[str, bool], list[ImportIssue]]:
    """task -> is_solved from another file of the same runs (e.g. HumanEvalET's verdicts)."""
    verdicts: dict[str, bool] = {}
    issues: list[ImportIssue] = []
    for number, record in read_records(path):
        if isinstance(record, ImportIssue):
            issues.append(record)
            continue
        key = task_id(record) if isinstance(record, dict) else None
        if not isinstance(record, dict) or key is None or "is_solved" not in record:
            issues.append(ImportIssue(path, number, "no task id with an is_solved verdict"))
            continue
        verdicts[key] = bool(record["is_solved"])
    return verdicts, issues


def loop_budget(path: str) -> int:
    """The largest number of implementations any task in the file has: the loop's own cap."""
    largest = 1
    for _, record in read_records(path):
        if isinstance(record, dict) and isinstance(record.get("implementations"), list):
            largest = max(largest, len(record["implementations"]))
    return largest


def import_files(paths: list[str], out: str, agent: str | None = None, hidden_from: str | None = None,
                 max_iterations: int | None = None, fmt: str = "standard", hidden_name: str = "extended",
                 jobs: int = 1, overwrite: bool = False) -> Imported:
    """Write one run file per task under ``out/<agent>/`` (made in ``jobs`` worker processes).

    The budget is ``max_iterations`` or, by default, the largest number of iterations any task
    in the same file used (the loop's cap: 11 in some LDB files, 10 in others)."""
    return drive(tasks(paths, agent, max_iterations, fmt, hidden_from, hidden_name), out,
                 paths + ([hidden_from] if hidden_from else []), overwrite, jobs)


def tasks(paths: list[str], agent: str | None, max_iterations: int | None, fmt: str, hidden_from: str | None,
          hidden_name: str) -> Iterator[Task | ImportIssue]:
    """A run per task (a line), with the held-back verdict ``hidden_from`` holds for it, when given."""
    second: dict[str, bool] | None = None
    if hidden_from:
        second, problems = hidden_verdicts(hidden_from)
        yield from problems
    names = agent_names(paths, agent)
    for path in paths:
        budget = max_iterations or loop_budget(path)
        issues: list[ImportIssue] = []
        for number, record in records_of(path, issues):
            yield from issues
            issues.clear()
            name = agent or _model(record) or names[path]
            # records=[]: read as it is, not again without odd values
            yield Task(path, number, functools.partial(_task_run, record, path, name, budget, fmt, second, hidden_name),
                       records=[])
        yield from issues


def _task_run(record: dict[str, Any], path: str, name: str, budget: int, fmt: str, second: dict[str, bool] | None,
              hidden_name: str) -> Made:
    task = task_id(record)
    if task is None:
        raise ValueError("no task_id or name")
    challenge = benchmark_challenge(path, task)
    document = convert({**record, "task_id": challenge} if challenge != task else record, name, budget, fmt,
                       second.get(task) if second is not None else None, hidden_name)
    return name, challenge, document
