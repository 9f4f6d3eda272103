"""mini-swe-agent and SWE-agent trajectories (``*.traj.json``, ``*.traj``) as run files.

The agent works in a shell: each assistant message holds a THOUGHT and one bash command, the next
user message the command's ``<returncode>`` and ``<output>``. procjudge reads every command as a
step and classifies it:

- a **test run** is a command whose runner it recognises (Django's ``tests/runtests.py``,
  ``pytest`` / ``py.test`` / ``python -m pytest``, ``python -m unittest``, ``tox``, ``nox``) and
  whose output carries counts (unittest's ``Ran N tests`` with ``OK`` / ``FAILED (...)``, pytest's
  summary line); a recognised runner whose output has no counts (an import error, a system check
  that fails) is a run that did not build. Any other command, a reproduction script among them,
  is not a test run;
- an **edit** is a command that writes a file: ``sed -i``, ``perl -pi``, a redirection (``>``,
  ``>>``, ``tee``) of ``cat``/``echo``/``printf``, a Python script that opens a file for writing,
  ``cp``/``mv`` onto a path, ``rm``, ``patch`` and ``git apply``;
- every other command is a read or a search.

**An iteration is one or more edits followed by a test run** (test runs before any edit are the
baseline; a test run with no edit since the previous one is a re-run, counted in ``test_runs``).
Edits after the last test run belong to the final iteration: they were submitted untested, and a
note says so. Per iteration: the test command and its targets as the suite identity (counts from
different commands are never compared), the counts and the failing (and, in verbose output,
passing) tests by name, the files the commands wrote, marked ``scratch`` when the final diff does
not contain them or when they lie outside the repository (a throw-away script the agent keeps is in
the diff, and facts marks it by its name), the THOUGHT texts as the change summary, and the time of the first step with the duration. The final
iteration carries the submitted diff and, from ``report.json``, the held-back suites
``FAIL_TO_PASS`` and ``PASS_TO_PASS`` with every test's outcome. Iterations are not graded
submissions, so no submission time is recorded (the cooldown and double-submit rules are about
graded submissions) and the run's budget is the number of iterations it has.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from .reflexion import ImportIssue, NothingLogged, Writer, safe_name

REPO_ROOTS = ("/testbed", "/repo", "/workspace")
MAX_OUTPUT = 200_000


class Step:
    """One command and what it printed."""

    def __init__(self, thought: str, command: str, returncode: int | None, output: str, time: float | None) -> None:
        self.thought, self.command, self.returncode, self.output, self.time = thought, command, returncode, output, time
        self.test = test_command(command)
        self.writes = written_files(command)
        self.counts = parse_counts(output) if self.test else None


# --------------------------------------------------------------------------- commands


_RUNNER = re.compile(
    r"(?:^|[\s;&|(])(?:(?:python[\d.]*|coverage run)\s+(?:-(?!m\b)[a-zA-Z]+\s+)*)?"
    r"(?P<runner>(?:\S*/)?runtests\.py|-m\s+pytest|-m\s+unittest|py\.test|pytest|tox|nox)(?P<rest>[^;&|]*)")


def segments(command: str) -> list[str]:
    """The simple commands of a command line, split on ``&&``, ``||``, ``;``, ``|`` and newlines
    (heredoc bodies removed first, so that a script's text is not read as commands)."""
    body = re.sub(r"<<-?\s*'?\"?(\w+)'?\"?.*?\n.*?\n\1\s*(?:\n|$)", lambda m: m.group(0).split("\n", 1)[0] + "\n", command, flags=re.DOTALL)
    return [part.strip() for part in re.split(r"&&|\|\||;|\||\n", body) if part.strip()]


def test_command(command: str) -> str | None:
    """The suite identity of a test run (runner and targets), or None when no known runner runs."""
    for part in segments(command):
        if part.startswith(("echo", "cat", "grep", "sed", "#", "ls", "find", "head", "tail", "nl")):
            continue
        match = _RUNNER.search(" " + part)
        if not match:
            continue
        runner = match.group("runner")
        if runner.endswith("runtests.py"):
            runner = "runtests.py"
        try:
            words = shlex.split(match.group("rest"))
        except ValueError:
            words = match.group("rest").split()
        if "--help" in words or "-h" in words:
            return None
        targets, skip = [], False
        for word in words:
            if skip:
                skip = False
            elif word in _VALUED:
                skip = True
            elif not word.startswith("-") and "=" not in word and not word.isdigit():
                targets.append(word)
        if runner in ("tox", "nox"):
            targets = []  # environments, not test targets: the suite is the project's own
        return " ".join([re.sub(r"-m\s+", "python -m ", runner), *targets]).strip()
    return None


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


def written_files(command: str) -> list[tuple[str, str]]:
    """(path, how) for every file the command writes: 'sed', 'redirect', 'script', 'copy', 'delete',
    'patch'."""
    found: list[tuple[str, str]] = []
    for part in segments(command):
        try:
            words = shlex.split(part, posix=True)
        except ValueError:
            words = part.split()
        if not words:
            continue
        head = os.path.basename(words[0])
        if head == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]) or head == "perl" and any(w.startswith("-pi") or w == "-i" for w in words[1:]):
            found += [(w, "sed") for w in _operands(words[1:], skip_first_script=True)]
        elif head == "tee":
            found += [(w, "redirect") for w in words[1:] if not w.startswith("-")]
        elif head in ("cp", "mv") and len(words) >= 3:
            found.append((words[-1], "copy"))
        elif head == "rm":
            found += [(w, "delete") for w in words[1:] if not w.startswith("-")]
        elif head in ("patch",) or words[:2] == ["git", "apply"]:
            found.append(("", "patch"))
        for path in _redirects(part):
            if path not in ("/dev/null", "/dev/stdout", "/dev/stderr") and not path.startswith("&") and not path.isdigit():
                found.append((path, "redirect"))
    for match in re.finditer(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]", command):
        found.append((match.group(1), "script"))
    if re.search(r"\bpython[\d.]*\b", command) and re.search(r"\.write(?:_text)?\(|open\([^)]*['\"][wa]\+?['\"]", command):
        # a script that writes: the source files it names by a string literal (a path in a variable)
        found += [(m.group(1), "script") for m in re.finditer(r"['\"]([\w./-]+\.(?:py|txt|rst|cfg|toml|json|ya?ml))['\"]", command)]
    return [(os.path.normpath(path) if path else path, how) for path, how in dict.fromkeys(found)]


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
                             r"(?:, )?)+)(?: in [\d.]+s.*)?=*\s*$", re.MULTILINE)
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
    return None


# --------------------------------------------------------------------------- trajectories


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content or "")


def steps(messages: list[dict[str, Any]]) -> Iterator[Step]:
    """Every command of a trajectory with its output (the user message that answers it)."""
    for k, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        text = _text(message.get("content"))
        blocks = re.findall(r"```(?:bash|sh)\s*\n(.*?)\n?```", text, re.DOTALL)
        if len(blocks) != 1:  # the harness runs exactly one command block; anything else is refused
            continue
        thought = text.split("```", 1)[0].replace("THOUGHT:", "").strip()
        reply = _text(messages[k + 1].get("content")) if k + 1 < len(messages) else ""
        code = re.search(r"<returncode>(-?\d+)</returncode>", reply)
        output = "\n".join(re.findall(r"<output(?:_head|_tail)?>\n?(.*?)</output(?:_head|_tail)?>", reply, re.DOTALL)) or reply
        yield Step(thought, blocks[0].strip(), int(code.group(1)) if code else None, output[:MAX_OUTPUT], _time(message))


def _time(message: dict[str, Any]) -> float | None:
    extra = message.get("extra")
    if isinstance(extra, dict):
        response = extra.get("response")
        created = response.get("created") if isinstance(response, dict) else extra.get("timestamp")
        if isinstance(created, (int, float)) and created > 0:
            return float(created)
    return None


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def diff_files(diff: str) -> dict[str, str]:
    """path -> status of every file a unified diff touches."""
    files: dict[str, str] = {}
    for block in re.split(r"(?m)^diff --git ", diff)[1:]:
        match = re.match(r"a/(\S+) b/(\S+)", block)
        if not match:
            continue
        status = "created" if "\nnew file mode" in block[:300] else "deleted" if "\ndeleted file mode" in block[:300] else "modified"
        files[match.group(2)] = status
    return files


def _relative(path: str) -> tuple[str, bool]:
    """(path relative to the repository, whether it lies outside it)."""
    for root in REPO_ROOTS:
        if path == root or path.startswith(root + "/"):
            return path[len(root) + 1:] or ".", False
    if os.path.isabs(path):
        return path, True
    return path.removeprefix("./"), False


def hidden_suites(report: dict[str, Any], instance: str) -> list[dict[str, Any]]:
    """FAIL_TO_PASS and PASS_TO_PASS of a SWE-bench report, with every test's outcome."""
    status = report.get(instance, report).get("tests_status", {})
    suites = []
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        part = status.get(name) or {}
        success, failure = list(part.get("success") or []), list(part.get("failure") or [])
        if not success and not failure:
            continue
        tests = [{"name": t, "outcome": "passed"} for t in success] + [{"name": t, "outcome": "failed"} for t in failure]
        suites.append({"name": name, "passed": len(success), "total": len(success) + len(failure), "tests": tests})
    return suites


def convert(trajectory: dict[str, Any], agent: str, report: dict[str, Any] | None = None) -> dict[str, Any]:
    """One trajectory (and its SWE-bench report) -> one run document."""
    instance = str(trajectory.get("instance_id") or trajectory.get("environment") or "run")
    messages = trajectory.get("messages") or trajectory.get("history") or []
    if not isinstance(messages, list):
        raise TypeError("no messages")
    info = trajectory.get("info") or {}
    submission = str(info.get("submission") or "")
    submitted = diff_files(submission)
    all_steps = list(steps(messages))
    if not any(step.test for step in all_steps):
        raise NothingLogged("the agent never ran a recognised test command: no loop to judge")
    groups: list[list[Step]] = []
    current: list[Step] = []
    baseline: Step | None = None
    edited = False
    for step in all_steps:
        current.append(step)
        if step.writes:
            edited = True
        if step.test:
            if edited:
                groups.append(current)
                current, edited = [], False
            elif not groups:
                baseline = step
    notes: list[str] = []
    trailing = [s for s in current if any(_relative(path)[0] in submitted for path, how in s.writes if how != "delete")]
    if groups:
        groups[-1].extend(current)
        if trailing:
            notes.append(f"{len(trailing)} edit command(s) to the submitted files came after the last test run: "
                         "submitted untested")
    else:
        raise NothingLogged("no edit was followed by a test run: no loop to judge")
    iterations = []
    seen_created: set[str] = set()
    for k, group in enumerate(groups):
        iterations.append({"iteration_telemetry": _iteration(k, group, baseline if k == 0 else None, submitted,
                                                               seen_created)})
    final = iterations[-1]["iteration_telemetry"]
    if submission:
        final.setdefault("changes", {})["diff"] = submission
    if report is not None:
        suites = hidden_suites(report, instance)
        if suites:
            final["test_results"]["hidden"] = {"passed": sum(s["passed"] for s in suites), "total": sum(s["total"] for s in suites)}
            final["test_results"]["hidden_suites"] = suites
    first_user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    statement = re.search(r"<pr_description>(.*?)</pr_description>", first_user, re.DOTALL)
    run = {
        "id": f"{agent}/{instance}", "agent": agent, "challenge": instance, "format": "standard",
        "max_iterations": max(1, len(iterations)), "source": "swe-agent",
        "task": {"statement": (statement.group(1) if statement else first_user)[:20_000].strip(), "language": "python"},
        "notes": notes,
    }
    started = _iso(next((s.time for s in all_steps if s.time), None))
    if started:
        run["started_at"] = started
    return {"run": run, "iterations": iterations}


def _iteration(k: int, group: list[Step], baseline: Step | None, submitted: dict[str, str],
               seen_created: set[str]) -> dict[str, Any]:
    tests = [s for s in group if s.test]
    last = tests[-1]
    files: dict[str, dict[str, Any]] = {}
    for step in group:
        for path, how in step.writes:
            if not path:
                continue
            relative, outside = _relative(path)
            status = "deleted" if how == "delete" else submitted.get(relative, "created")
            if status == "created" and relative in seen_created and relative not in submitted:
                status = "modified"  # a scratch file written again after the iteration that created it
            if status == "created":
                seen_created.add(relative)
            files[relative] = {"path": relative, "status": status, "scratch": outside or relative not in submitted}
    telemetry: dict[str, Any] = {"iteration_number": k}
    times = [s.time for s in group if s.time]
    if times:
        telemetry["timestamp_start"] = _iso(times[0])
        telemetry["duration_seconds"] = round(max(times) - times[0], 3)
    edits = [s for s in group if s.writes]
    telemetry["actions"] = {"tool_calls_total": len(group), "file_edits": len(edits), "test_runs": len(tests),
                            "file_reads": sum(1 for s in group if not s.writes and not s.test)}
    summary = [s.thought[:500] for s in edits if s.thought][:5]
    changes: dict[str, Any] = {"files": list(files.values())}
    if summary:
        changes["summary"] = summary
    telemetry["changes"] = changes
    results: dict[str, Any] = {"suite": last.test}
    if last.counts is None:
        telemetry["build"] = {"status": "failure", "errors": [last.output.strip()[-2000:] or "the test command printed no summary"]}
    else:
        counts = last.counts
        results["post_iteration"] = {"passed": counts.passed, "failed": counts.failed,
                                     "total": counts.passed + counts.failed, "skipped": counts.skipped}
        if counts.tests:
            results["tests"] = counts.tests[:5000]
    if baseline is not None and baseline.counts is not None and baseline.test == last.test:
        results["pre_iteration"] = {"passed": baseline.counts.passed, "failed": baseline.counts.failed,
                                    "total": baseline.counts.passed + baseline.counts.failed}
    telemetry["test_results"] = results
    return telemetry


# --------------------------------------------------------------------------- files


def read_trajectory(path: str) -> dict[str, Any]:
    from ..loading import read_regular

    data = read_regular(path, 256 * 1024 * 1024)
    document = json.loads(data.decode("utf-8"))
    if isinstance(document, list):  # SWE-agent's older .traj: the history alone
        document = {"messages": document}
    if not isinstance(document, dict):
        raise TypeError(f"expected a JSON object, got {type(document).__name__}")
    if "trajectory" in document and "messages" not in document and "history" in document:
        document["messages"] = document["history"]
    return document


def model_name(trajectory: dict[str, Any]) -> str | None:
    """The model the agent ran on, from the trajectory's configuration (its last path component)."""
    config = (trajectory.get("info") or {}).get("config") or {}
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return str(name).rsplit("/", 1)[-1] if name else None


def find_report(reports: str | None, instance: str, path: str) -> dict[str, Any] | None:
    """The SWE-bench report of an instance: REPORTS/<id>/report.json, REPORTS/<id>.json, or a
    report.json beside the trajectory's folder (logs/<id>/report.json next to trajs/<id>/)."""
    candidates = []
    if reports:
        candidates += [os.path.join(reports, instance, "report.json"), os.path.join(reports, f"{instance}.json")]
    folder = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    candidates.append(os.path.join(os.path.dirname(folder), "logs", instance, "report.json"))
    for candidate in candidates:
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as handle:
                loaded: dict[str, Any] = json.load(handle)
                return loaded
    return None


def import_files(paths: list[str], out: str, agent: str | None = None,
                 reports: str | None = None) -> tuple[int, list[ImportIssue]]:
    """Import trajectories; return (runs written, issues: errors and notes)."""
    writer = Writer(out, paths)
    written = 0
    issues: list[ImportIssue] = []
    for path in paths:
        try:
            trajectory = read_trajectory(path)
            name = agent or model_name(trajectory) or os.path.basename(os.path.dirname(os.path.abspath(path))) or "agent"
            instance = str(trajectory.get("instance_id") or os.path.basename(path).split(".traj")[0])
            trajectory.setdefault("instance_id", instance)
            document = convert(trajectory, name, find_report(reports, instance, path))
        except NothingLogged as exc:
            issues.append(ImportIssue(path, 1, str(exc), note=True))
            continue
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, OverflowError) as exc:
            issues.append(ImportIssue(path, 1, f"not a trajectory: {exc}"))
            continue
        folder = os.path.join(out, safe_name(name))
        try:
            os.makedirs(folder, exist_ok=True)
            target, note = writer.target(folder, safe_name(instance))
            writer.write(target, document)
        except (ValueError, OSError) as exc:
            issues.append(ImportIssue(path, 1, str(exc)))
            continue
        if note:
            issues.append(ImportIssue(path, 1, note, note=True))
        written += 1
    return written, issues
