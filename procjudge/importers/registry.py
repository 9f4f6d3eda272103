"""The importers procjudge knows: the built-in ones (each module imported only when it runs, each
with a recogniser of its files' names and first bytes) and the plugins other packages declare in
the ``procjudge.importers`` entry-point group. ``import auto`` asks :func:`recognise` which one
reads a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .base import ImportIssue, head

if TYPE_CHECKING:
    from .driver import Imported

ENTRY_POINT_GROUP = "procjudge.importers"


class Importer(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def summary(self) -> str: ...

    def detect(self, path: str, head: bytes) -> bool: ...

    def import_files(self, paths: list[str], out: str,
                     agent: str | None = None) -> Imported | tuple[int, list[ImportIssue]]: ...


@dataclass(frozen=True)
class Builtin:
    """An importer that ships with procjudge: its module is imported only when it runs."""

    name: str
    summary: str
    module: str
    sniff: Callable[[str, bytes], bool]

    def detect(self, path: str, head: bytes) -> bool:
        return self.sniff(path, head)

    def import_files(self, paths: list[str], out: str, agent: str | None = None, jobs: int = 1,
                     overwrite: bool = False) -> Imported:
        import importlib

        module = importlib.import_module(f"procjudge.importers.{self.module}")
        result: Imported = module.import_files(paths, out, agent=agent, overwrite=overwrite, jobs=jobs)
        return result


def takes(function: Callable[..., object], name: str) -> bool:
    """Whether ``function`` accepts the keyword ``name`` (a plug-in's ``import_files`` may not)."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def _json_start(head: bytes) -> bytes:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")


def _is_swe_agent(path: str, head: bytes) -> bool:
    if path.endswith((".traj", ".traj.json")):
        return True
    start = _json_start(head)
    return start.startswith(b"{") and (b'"trajectory_format"' in head or (b'"messages"' in head and b'"info"' in head
                                                                          and b'"mini-swe-agent' in head))


def _is_inspect(path: str, head: bytes) -> bool:
    if path.endswith(".eval") and head.startswith(b"PK"):
        return True
    start = _json_start(head)
    return start.startswith(b"{") and b'"eval"' in head and (b'"samples"' in head or b'"plan"' in head) \
        and b'"task"' in head


def _is_atif(path: str, head: bytes) -> bool:
    if os.path.basename(path) == "result.json":  # a Harbor trial's result: read with its trial's trajectory
        return _json_start(head).startswith(b"{") and b'"trial_name"' in head
    return _json_start(head).startswith(b"{") and re.search(rb'"schema_version"\s*:\s*"ATIF', head) is not None


def _first_line(head: bytes) -> bytes:
    return _json_start(head).split(b"\n", 1)[0]


def _is_openhands(path: str, head: bytes) -> bool:
    line = _first_line(head)
    if path.endswith(".json"):  # a completion log: the messages sent, OpenHands' system prompt first
        return _json_start(head).startswith(b"{") and b'"messages"' in head and (
            b'"fncall_messages"' in head or b"You are OpenHands agent" in head)
    return line.startswith(b"{") and b'"instance_id"' in line and (b'"history"' in line or b'"test_result"' in line
                                                                  or b'"instruction"' in line)


def is_openhands_file(path: os.PathLike[str] | str) -> bool:
    """Whether a file found in a folder is OpenHands' to read: an output.jsonl, or a completion log
    (a folder of them also holds the evaluation's other JSON: results.json, reports)."""
    name = os.fspath(path)
    return name.endswith(".jsonl") or _is_openhands(name, head(name))


def _is_claude_code(path: str, head: bytes) -> bool:
    line = _first_line(head)
    if re.match(rb'\{\s*"type"\s*:\s*"system"', line) and b'"session_id"' in line \
            and re.search(rb'"subtype"\s*:\s*"init"', head):
        return True  # what `claude -p --output-format stream-json` printed (a hook's line may precede its init)
    return line.startswith(b"{") and b'"sessionId"' in head and (b'"parentUuid"' in head or b'"leafUuid"' in head)


def _is_codex(path: str, head: bytes) -> bool:
    line = _first_line(head)
    if line.startswith(b"{") and re.match(rb'\{\s*"type"\s*:\s*"thread\.started"', line):
        return True  # what `codex exec --json` printed
    return line.startswith(b"{") and b'"payload"' in line and re.search(
        rb'"type"\s*:\s*"(?:session_meta|turn_context|response_item|event_msg)"', line) is not None


def _is_terminal_bench(path: str, head: bytes) -> bool:
    """A Terminal-Bench 1 trial's (or run's) results.json."""
    return os.path.basename(path) == "results.json" and _json_start(head).startswith(b"{") \
        and b'"task_id"' in head and (b'"failure_mode"' in head or b'"is_resolved"' in head)


def _is_reflexion(path: str, head: bytes) -> bool:
    line = _first_line(head)
    return line.startswith(b"{") and (b'"implementations"' in line or b'"acc"' in line)


BUILTINS: tuple[Builtin, ...] = (
    Builtin("swe-agent", "mini-swe-agent and SWE-agent trajectories (.traj.json, .traj) with SWE-bench reports",
            "swe_agent", _is_swe_agent),
    Builtin("openhands", "OpenHands evaluation output (output.jsonl: one instance per line) and completion logs "
            "(llm_completions/<instance>/*.json)", "openhands", _is_openhands),
    Builtin("atif", "Agent Trajectory Interchange Format (ATIF trajectory.json, as Harbor writes it)", "atif", _is_atif),
    Builtin("inspect", "Inspect AI evaluation logs (.eval, .json)", "inspect", _is_inspect),
    Builtin("reflexion", "Reflexion-family repair logs (LDB, Reflexion, MapCoder; JSON lines)", "reflexion", _is_reflexion),
    Builtin("claude-code", "Claude Code sessions (~/.claude/projects/<project>/<session>.jsonl) and "
            "`--output-format stream-json` output", "claude_code", _is_claude_code),
    Builtin("codex", "Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) and `codex exec --json` output",
            "codex", _is_codex),
    Builtin("terminal-bench", "Terminal-Bench 1 trial folders (tb run's runs/RUN/TASK/TRIAL/results.json)",
            "terminal_bench", _is_terminal_bench),
)


def plugins() -> tuple[list[Importer], list[str]]:
    """(importers other packages declare in the ``procjudge.importers`` entry-point group, why
    each one that cannot be used was left out). A broken plugin never breaks procjudge."""
    from importlib.metadata import entry_points

    found: list[Importer] = []
    problems: list[str] = []
    taken = {b.name for b in BUILTINS}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = point.load()
            candidate = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:  # noqa: BLE001 - any failure of third-party code is reported, not raised
            problems.append(f"importer plugin {point.name} ({point.value}) cannot be loaded: {type(exc).__name__}: {exc}")
            continue
        missing = [a for a in ("name", "summary", "detect", "import_files") if not hasattr(candidate, a)]
        if missing:
            problems.append(f"importer plugin {point.name} ({point.value}) lacks {', '.join(missing)}")
        elif candidate.name in taken:
            problems.append(f"importer plugin {point.name} ({point.value}) is named {candidate.name!r}, "
                            "which is already taken")
        else:
            taken.add(candidate.name)
            found.append(candidate)
    return found, problems


def registry() -> tuple[list[Importer], list[str]]:
    """(every importer: the built-in ones first, then the plugins; problems with plugins)."""
    found, problems = plugins()
    return [*BUILTINS, *found], problems


def recognise(path: str, importers: list[Importer]) -> Importer | None:
    """The importer that reads ``path``, from its name and first bytes, or None."""
    start = head(path)
    if not start:
        return None
    for importer in importers:
        try:
            recognised = importer.detect(path, start)
        except Exception:  # noqa: BLE001 - a plugin's detect that fails says no
            recognised = False
        if recognised:
            return importer
    return None
