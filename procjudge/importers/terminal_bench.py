"""Terminal-Bench 1 trial folders as run files: one run per trial.

``tb run`` writes a run folder ``RUN/`` (``run_metadata.json`` with ``agent_name`` and
``model_name``; ``results.json`` summing its trials) and a folder per trial,
``RUN/TASK/TRIAL/``, holding:

- ``results.json``: ``trial_name``, ``task_id``, ``instruction``, ``is_resolved``,
  ``failure_mode`` (``unset`` when nothing went wrong, ``agent_timeout``, ``test_timeout``,
  ``parse_error``, ``agent_installation_failed``, ...), ``parser_results`` (each held-back test,
  ``passed`` or ``failed``), ``total_input_tokens`` and ``total_output_tokens``;
- ``sessions/agent.log``: everything the agent's terminal printed, as the terminal received it
  (colour codes, carriage returns);
- ``commands.txt``: the keystrokes sent to that terminal, the harness's and the agent's.

The agent's commands are read from the terminal, in one of two forms:

- **typed at the shell's prompt** (Terminus and every agent that drives the terminal with
  keystrokes): each prompt line ``user@host:dir# COMMAND`` is a command, the lines up to the
  next prompt its output, a heredoc's ``> `` lines part of the command. The harness's own lines
  (``asciinema rec``, ``clear``, the agent's installation and launch, the ``; tmux wait -S done``
  it appends) are not the agent's. A terminal records no exit status, so none is known.
- **printed by mini-swe-agent's console** (an agent installed and launched in the terminal):
  ``mini-swe-agent (step N, $COST):``, the model's reply with its fenced ``bash`` command, then
  ``<returncode>N</returncode>`` and ``<output>...</output>``. The console wraps long lines at the
  terminal's width: a command or output longer than a line is read as it was printed.

Another installed agent (OpenHands, Claude Code, ...) runs its commands inside its own process;
the trial folder does not record them, and such a trial is a note, as is a trial whose agent
could not be installed. ``parser_results`` is the held-back suite (``is_resolved`` alone a
one-test suite named ``resolved``); ``failure_mode`` is named in the run's notes: the agent's
time running out is the agent's, the tests' output that could not be parsed or timed out is no
held-back outcome, the installation and an unknown error the harness's; none is charged.
"""

from __future__ import annotations

import collections
import functools
import os
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ..model import RunFile, Usage
from .base import ImportIssue, NothingLogged, as_object, read_json
from .build import token_counts, with_usage
from .checks import killed_first
from .driver import Imported, Made, Task, drive, one_run_per_file
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import Step
from .test_output import ANSI

ROOTS = ("/app", "/testbed", "/workspace", "/repo")
MAX_LOG = 256 * 1024 * 1024
SOURCE = "terminal-bench"

# failure_mode -> (what it means, whether the held-back outcome stands)
FAILURE_MODES: dict[str, tuple[str, bool]] = {
    "agent_timeout": ("the agent ran out of its time: the run ends where the agent left it", True),
    "test_timeout": ("the held-back tests timed out: no held-back outcome", False),
    "parse_error": ("the harness could not parse the held-back tests' output: no held-back outcome", False),
    "agent_installation_failed": ("the harness could not install the agent: not the agent's", False),
    "unknown_agent_error": ("the harness stopped the agent with an unknown error: not charged to it", True),
    "fatal_llm_parse_error": ("the harness could not parse the model's reply: the run ends there", True),
    "context_length_exceeded": ("the model's context ran out: the run ends there", True),
    "output_length_exceeded": ("the model's reply was too long: the run ends there", True),
}
QUIET_MODES = ("unset", "none", "")

PROMPT = re.compile(r"^(?:\([^()\s]*\) )?(?P<user>[\w.-]+)@(?P<host>[\w.-]+):(?P<cwd>[^\s#$]*)[#$] ?(?P<command>.*)$")
HARNESS = re.compile(r"^(?:asciinema rec\b|clear$|exit$|source /installed-agent/|bash\s+/tests/run-tests\.sh)")
TMUX_WAIT = re.compile(r";\s*tmux wait -S done\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?[A-Za-z_][\w-]*['\"]?)")
SPINNER = re.compile(r"[\u2800-\u28ff] Waiting for the LM to respond\.\.\.")
MINI_STEP = re.compile(r"^mini-swe-agent \(step (\d+), \$([\d.]+)\):\s*$")
FENCE = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # mini-swe-agent 1.x's own reading of a reply
RETURN_CODE = re.compile(r"<returncode>(-?\d+)</returncode>")
OUTPUT = re.compile(r"<output(?:_head)?>\n?(.*?)\n?</output(?:_tail)?>", re.DOTALL)


def screen(raw: bytes) -> list[str]:
    """A terminal's recorded bytes as the lines it showed: colour and cursor codes dropped, and a
    line rewritten after a carriage return (a progress bar, a spinner) kept as last written."""
    text = ANSI.sub("", raw.decode("utf-8", "replace")).replace("\x1b", "")
    lines = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if "\r" in line:
            line = line.rsplit("\r", 1)[1]
        lines.append(line)
    return lines


class Typed:
    """A command typed at the shell's prompt, and what the terminal printed after it."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.output: list[str] = []


def _open(command: str) -> bool:
    """Whether the shell still waits for more of a command (its ``> `` prompt): a heredoc not yet
    closed by its word, a quote not closed, a line ending in a backslash."""
    import shlex

    lines = command.split("\n")
    words = [(k, word.strip("'\"")) for k, line in enumerate(lines) for word in HEREDOC.findall(line)]
    if words:  # the body of a heredoc is not shell syntax: only its closing word counts
        return any(word not in (rest.strip() for rest in lines[k + 1:]) for k, word in words)
    if command.endswith("\\"):
        return True
    try:
        shlex.split(command)
    except ValueError:
        return True
    return False


def typed(lines: list[str]) -> list[Typed]:
    """Every command typed at the prompt of the terminal's shell (the host of its first prompt),
    with the lines up to the next prompt as its output; the shell's ``> `` lines (a heredoc, a
    quote not yet closed) join the command they continue."""
    found: list[Typed] = []
    host: str | None = None
    waiting = False
    for line in lines:
        match = PROMPT.match(line)
        if match and (host is None or match["host"] == host):
            host = match["host"]
            command = TMUX_WAIT.sub("", match["command"]).rstrip()
            found.append(Typed(command))
            waiting = _open(command)
            continue
        if not found:
            continue
        if waiting and (line.startswith("> ") or line == ">"):
            found[-1].command = TMUX_WAIT.sub("", found[-1].command + "\n" + line[2:]).rstrip(" ")
            waiting = _open(found[-1].command)
            continue
        waiting = False
        found[-1].output.append(line)
    return found


def mini_steps(lines: list[str]) -> tuple[list[Step], float | None]:
    """(the commands mini-swe-agent's console printed, each with its exit status and output; the
    cost of the last step, which the console sums)."""
    lines = [SPINNER.sub("", line) for line in lines]
    starts = [k for k, line in enumerate(lines) if MINI_STEP.match(line)]
    found: list[Step] = []
    cost: float | None = None
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        block = "\n".join(lines[start + 1:end])
        cost = float(MINI_STEP.match(lines[start])[2])  # type: ignore[index]
        reply, _, answer = block.partition("\nUser:\n")
        fences = FENCE.findall(reply)
        if len(fences) != 1:
            continue  # not one command: the agent ran none and printed its format error instead
        code = RETURN_CODE.search(answer)
        shown = OUTPUT.search(answer)
        output = shown[1] if shown else answer.split("\n───", 1)[0].strip()
        if shown:
            output = killed_first(answer[:shown.start()], output)
        thought = FENCE.split(reply, 1)[0].strip().removeprefix("THOUGHT:").strip()
        found.append(Step(thought, unwrapped(fences[0].strip()), int(code[1]) if code else None, output, None))
    return found, cost


# A line of a command that ends in a redirection without its target (``cat <<'EOF' > ``): the shell
# reads no newline there (it would be a syntax error), so the console's wrapping put it there.
_WRAPPED_REDIRECTION = re.compile(r"(?:^|\s)[\d&]?>>?[ \t]+$")


def unwrapped(command: str) -> str:
    """A command as the agent wrote it where the console wrapped a line after a redirection
    operator, leaving its target on the next line (``mkdir -p pkg && cat <<'EOF' > `` then
    ``pkg/__init__.py``): the two lines are one again. Here-document bodies are kept as printed (a
    line of HTML may end in ``> ``), and nothing else of a wrapped line is undone: elsewhere a
    newline may be the agent's own."""
    if ">" not in command:
        return command
    lines = command.split("\n")
    kept: list[str] = []
    closing: list[str] = []  # the words that close the here-documents still open, in order
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if closing:
            if line.strip() == closing[0]:
                closing.pop(0)
            kept.append(line)
            continue
        while k < len(lines) and _WRAPPED_REDIRECTION.search(line):
            line = line.rstrip() + " " + lines[k]
            k += 1
        closing = [word.strip("'\"") for word in HEREDOC.findall(line)]
        kept.append(line)
    return "\n".join(kept)


class Unjudged(NamedTuple):
    """Why a trial's terminal shows no command of the agent's: the environment's doing (the
    agent could not be installed or started) or the agent's own process hiding them."""

    why: str
    environment: bool


CRASH = re.compile(r"^[\w.]*(?:Error|Exception)\b(?::|$)")
NOT_FOUND = re.compile(r"^(?:bash: )?(\S+): (?:command not found|No such file or directory)$")


def _launch(launch: Typed | None) -> Unjudged:
    """Why an installed agent's launch shows no step."""
    if launch is None:
        return Unjudged("the harness's installation of the agent did not finish", True)
    shown = " ".join(launch.command.split())[:80]
    printed = [line for line in launch.output if line.strip()]
    missing = next((m for line in printed[:3] + printed[-3:] if (m := NOT_FOUND.match(line.strip()))), None)
    if missing:
        return Unjudged(f"the agent could not be started ({missing[0].strip()!r}): the harness's installation did "
                        "not give it", True)
    if printed and CRASH.match(printed[-1].strip()):
        return Unjudged(f"the agent's program stopped before its first step ({printed[-1].strip()[:120]!r})", True)
    return Unjudged(f"the agent ran them inside its own process ({shown!r}), and the trial folder does not record "
                    "them", False)


def terminal_steps(lines: list[str]) -> tuple[list[Step], float | None, Unjudged | None]:
    """(the agent's commands in a trial's terminal, mini-swe-agent's cost where its console
    printed one, why an installed agent's commands are not there, or None)."""
    commands = typed(lines)
    installed = next((k for k, c in enumerate(commands) if c.command.startswith("source /installed-agent/install")),
                     None)
    if installed is not None:
        launch = commands[installed + 1] if installed + 1 < len(commands) else None
        steps, cost = mini_steps(launch.output) if launch else ([], None)
        return steps, cost, None if steps else _launch(launch)
    steps = [Step("", c.command, None, "\n".join(c.output).strip("\n"), None)
             for c in commands if c.command and not HARNESS.match(c.command)]
    return steps, None, None


def hidden_suite(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The held-back suite of a trial's ``results.json``: ``parser_results`` by test, else
    ``is_resolved`` as one test; none when neither is there."""
    parsed = result.get("parser_results")
    if isinstance(parsed, dict) and parsed:
        tests = [{"name": str(name), "outcome": "passed" if str(status).lower() == "passed" else "failed"}
                 for name, status in parsed.items()]
        return [{"name": "tests", "passed": sum(t["outcome"] == "passed" for t in tests), "total": len(tests),
                 "tests": tests}]
    solved = result.get("is_resolved")
    if isinstance(solved, bool):
        return [{"name": "resolved", "passed": int(solved), "total": 1,
                 "tests": [{"name": "resolved", "outcome": "passed" if solved else "failed"}]}]
    return []


def failure_note(mode: str) -> tuple[str | None, bool]:
    """(the note a trial's ``failure_mode`` gives, whether its held-back outcome stands)."""
    if mode in QUIET_MODES:
        return None, True
    meaning, stands = FAILURE_MODES.get(mode, (f"the harness reported {mode}: not charged to the agent", True))
    return f"Terminal-Bench failure_mode {mode}: {meaning}", stands


def run_metadata(trial: str) -> dict[str, Any]:
    """The ``run_metadata.json`` of the run a trial folder belongs to (``RUN/TASK/TRIAL``), or {}."""
    path = os.path.join(os.path.dirname(os.path.dirname(trial)), "run_metadata.json")
    try:
        return as_object(read_json(path, 16 * 1024 * 1024)) if os.path.isfile(path) else {}
    except (OSError, ValueError):
        return {}


def agent_name(metadata: dict[str, Any]) -> str:
    name = str(metadata.get("agent_name") or "terminal-bench-agent")
    model = metadata.get("model_name")
    return f"{name}-{str(model).rsplit('/', 1)[-1]}" if model else name


def _usage(result: dict[str, Any], cost: float | None) -> Usage | None:
    found: dict[str, Any] = token_counts(result, (("total_input_tokens", "input_tokens"),
                                                  ("total_output_tokens", "output_tokens")))
    if cost is not None and cost >= 0:
        found["cost_usd"] = cost
    return Usage(**found) if found else None


def convert(trial: str, result: dict[str, Any], agent: str) -> RunFile:
    """One trial folder (its ``results.json`` already read) -> one run."""
    log = os.path.join(trial, "sessions", "agent.log")
    mode = str(result.get("failure_mode") or "")
    note, stands = failure_note(mode)
    if mode == "agent_installation_failed":
        raise NothingLogged(f"no agent commands to judge; {note}")
    if not os.path.isfile(log):
        raise NothingLogged("no agent commands to judge: the trial has no terminal log (sessions/agent.log)"
                            + (f"; {note}" if note else ""))
    from ..locate import read_regular

    steps, cost, unjudged = terminal_steps(screen(read_regular(log, MAX_LOG)))
    if unjudged is not None:
        blame = "; the environment's, not charged to the agent" if unjudged.environment else ""
        raise NothingLogged(f"no agent commands to judge: {unjudged.why}{blame}" + (f"; {note}" if note else ""))
    if not steps:
        raise NothingLogged("no agent commands to judge: none went through the trial's terminal (the agent ran "
                            "them another way)" + (f"; {note}" if note else ""))
    task = str(result.get("task_id") or os.path.basename(os.path.dirname(trial)))
    notes = [note] if note else []
    document = convert_steps(Trajectory(instance=task, agent=agent, source=SOURCE, steps=steps, submission=None,
                                        statement=str(result.get("instruction") or ""), roots=ROOTS,
                                        hidden=hidden_suite(result) if stands else [], notes=notes))
    usage = _usage(result, cost)
    return with_usage(document, usage) if usage else document


def is_trial(result: dict[str, Any]) -> bool:
    """Whether a ``results.json`` is a trial's (a run's sums its trials under ``results``)."""
    return "trial_name" in result and "task_id" in result and not isinstance(result.get("results"), list)


def import_files(paths: list[str], out: str, agent: str | None = None, overwrite: bool = False,
                 jobs: int = 1) -> Imported:
    """Import Terminal-Bench 1 trials, named by their ``results.json`` or their folder (in ``jobs``
    worker processes: the same files, byte for byte)."""
    return drive(tasks(paths, agent, jobs), out, paths, overwrite)


def _trials(path: str, result: dict[str, Any]) -> list[str]:
    """The trials' ``results.json`` a run's summary names (``RUN/TASK/TRIAL/results.json``)."""
    run = os.path.dirname(path)
    found = []
    for trial in result.get("results") or []:
        if not isinstance(trial, dict):
            continue
        task, name = str(trial.get("task_id") or ""), str(trial.get("trial_name") or "")
        if all(part and part not in (".", "..") and os.sep not in part for part in (task, name)):  # inside the run
            found.append(os.path.join(run, task, name, "results.json"))
    return found


def trial_files(paths: list[str]) -> tuple[dict[str, dict[str, Any]], list[ImportIssue]]:
    """(each trial's ``results.json`` once, however it was named: by its folder, itself or the
    run's ``results.json``, which names its trials, with what it holds; what is not a trial's or a
    run's results)."""
    seen: set[str] = set()
    found: dict[str, dict[str, Any]] = {}
    issues: list[ImportIssue] = []
    queue = collections.deque(os.path.join(p, "results.json") if os.path.isdir(p) else p for p in paths)
    while queue:
        path = queue.popleft()
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        try:
            result = read_json(path, 64 * 1024 * 1024)
        except (OSError, ValueError) as exc:
            issues.append(ImportIssue(path, 1, f"not a Terminal-Bench trial's results.json: {exc}"))
            continue
        if isinstance(result, dict) and isinstance(result.get("results"), list):
            queue.extendleft(reversed([t for t in _trials(path, result) if os.path.isfile(t)]))  # a run's: its trials
        elif isinstance(result, dict) and is_trial(result):
            found[path] = result
        else:
            issues.append(ImportIssue(path, 1, "not a Terminal-Bench trial's results.json: it has no trial_name and "
                                      "task_id (tb run writes RUN/TASK/TRIAL/results.json)"))
    return found, issues


def _produce(agent: str | None, results: dict[str, dict[str, Any]], path: str) -> Made:
    """One trial's run, from its ``results.json`` (read already) and its terminal."""
    result = results[path]
    trial = os.path.dirname(os.path.abspath(path))
    name = agent or agent_name(run_metadata(trial))
    label = str(result.get("trial_name") or os.path.basename(trial))
    try:
        document = convert(trial, result, name)
    except NothingLogged as exc:
        raise NothingLogged(f"trial {label}: {exc}") from None
    return name, str(result.get("task_id") or label), document


def tasks(paths: list[str], agent: str | None, jobs: int = 1) -> Iterator[Task | ImportIssue]:
    """A run per trial (in ``jobs`` worker processes), each read once however it was named."""
    found, issues = trial_files(paths)
    yield from issues
    yield from one_run_per_file(list(found), functools.partial(_produce, agent, found), "a Terminal-Bench trial", jobs)
