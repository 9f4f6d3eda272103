"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``) as run files: one run per
session.

A session file holds one JSON object a line: ``type`` ``user``, ``assistant``, ``system`` (a
``compact_boundary`` when the conversation was compacted), ``summary`` and others, with the
envelope ``uuid``, ``parentUuid``, ``sessionId``, ``cwd``, ``timestamp`` and ``isSidechain`` (a
sub-agent's turn, started by the ``Task`` tool; newer versions also write a sub-agent's turns to
``agent-<id>.jsonl`` beside the session, under the same ``sessionId``). An assistant line's
``message.content`` holds ``tool_use`` blocks (``id``, ``name``, ``input``), the ``model`` and
``usage``; the user line after it holds the ``tool_result`` blocks (``tool_use_id``, ``content``,
``is_error``).

What counts is the conversation the session ended on: the chain of ``parentUuid`` links back from
its last message (a turn the user rewound and replaced is left out), the chains before a
``/clear`` or a compaction joined in order, and the sub-agents' turns by their time. Each tool call
becomes a step of :mod:`procjudge.importers.shell`:

- ``Bash``: a shell command; its result is its output, a failing command's exit status read from
  ``Exit code N`` (else 1 when the result is an error);
- ``Edit`` and ``MultiEdit`` (``old_string`` -> ``new_string``), ``Write`` (``content``) and
  ``NotebookEdit``: edits of ``file_path``, rebuilt as text;
- ``Read``: a view of the file (its numbered lines are what later edits are rebuilt against);
  ``Grep``, ``Glob``, ``LS``, ``Task``, ``TodoWrite``, ``WebFetch`` and the rest: reads.

The agent is the model the assistant messages name (``claude-opus-4-5-20251101``), the task the
session's first prompt, the repository the session's ``cwd``. Tokens (input, output, cache) are
summed once per assistant message into ``run.usage``. A session carries no submitted diff and no
held-back outcome: its files are throw-away only outside the repository, when deleted again, or by
their names, and it is judged from the checks the agent ran. A line that is not JSON costs that
line, named in the run's notes.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..model import RunFile, Usage
from .base import ImportIssue, as_object, epoch_seconds, read_records
from .build import cost_usd, token_counts, with_usage
from .driver import Imported, Task, drive, named
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import REPO_ROOTS, Step

TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")  # summed per message

_EXIT_CODE = re.compile(r"^Exit code (-?\d+)\b", re.MULTILINE)
TOOLS = frozenset({"Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "Read"})  # and the reads below
READS = frozenset({"Read", "Grep", "Glob", "LS", "Task", "TodoWrite", "TodoRead", "WebFetch", "WebSearch", "ExitPlanMode",
                    "BashOutput", "KillShell", "KillBash", "SlashCommand", "Skill"})


def _text(content: Any) -> str:
    """A tool result's or a message's content as text (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
                       if not isinstance(part, dict) or part.get("type") in ("text", None))
    return "" if content is None else str(content)


def _conversation(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's conversation in order: the ``parentUuid`` chain back from its last message,
    preceded by the chains that end before it (a ``/clear`` or a compaction starts a new chain),
    and its sub-agents' turns placed by their time. Turns a rewind abandoned are left out."""
    main = [e for e in events if not e.get("isSidechain") and e.get("type") in ("user", "assistant", "system")]
    by_uuid = {str(e["uuid"]): e for e in main if isinstance(e.get("uuid"), str)}
    position = {id(e): k for k, e in enumerate(main)}
    chains: list[list[dict[str, Any]]] = []
    visited: set[int] = set()
    end = len(main)
    while end > 0:
        leaf = next((main[k] for k in range(end - 1, -1, -1) if id(main[k]) not in visited), None)
        if leaf is None:
            break
        chain = []
        node: dict[str, Any] | None = leaf
        while node is not None and id(node) not in visited:
            visited.add(id(node))
            chain.append(node)
            parent = node.get("parentUuid") or node.get("logicalParentUuid")
            node = by_uuid.get(str(parent)) if isinstance(parent, str) else None
        chains.append(chain[::-1])
        end = min(position[id(e)] for e in chain)
    ordered = [event for chain in reversed(chains) for event in chain]
    side = [e for e in events if e.get("isSidechain") and e.get("type") in ("user", "assistant")]
    if side:
        ordered = sorted(ordered + side, key=lambda e: epoch_seconds(e.get("timestamp")) or 0.0)
    return ordered


def _statement(events: list[dict[str, Any]]) -> str:
    """The session's first prompt: a user message in words, not a tool result, a command's echo or
    Claude Code's own meta lines."""
    for event in events:
        if event.get("type") != "user" or event.get("isMeta") or event.get("isSidechain"):
            continue
        content = as_object(event.get("message")).get("content")
        text = _text(content) if not (isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") == "tool_result" for p in content)) else ""
        if text.strip() and not text.lstrip().startswith(("<command-", "<local-command", "Caveat:")):
            return text
    return ""


def steps(events: list[dict[str, Any]]) -> list[Step]:
    """Every tool call of a conversation, in order, with the result that answered it."""
    results: dict[str, tuple[str, bool, Any]] = {}
    for event in events:
        if event.get("type") != "user":
            continue
        content = as_object(event.get("message")).get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_result" and isinstance(part.get("tool_use_id"), str):
                results[part["tool_use_id"]] = (_text(part.get("content")), part.get("is_error") is True,
                                                event.get("toolUseResult", event.get("tool_use_result")))
    found: list[Step] = []
    for event in events:
        if event.get("type") != "assistant":
            continue
        message = as_object(event.get("message"))
        content = message.get("content")
        blocks = [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []
        thought = " ".join(str(part.get("text", "")) for part in blocks if part.get("type") == "text").strip()
        time = epoch_seconds(event.get("timestamp"))
        for part in blocks:
            if part.get("type") != "tool_use" or not isinstance(part.get("name"), str):
                continue
            output, error, structured = results.get(str(part.get("id")), ("", False, None))
            found += tool_steps(part["name"], as_object(part.get("input")), output, error, structured, thought, time)
    return found


def tool_steps(name: str, arguments: dict[str, Any], output: str, error: bool, structured: Any, thought: str,
                time: float | None) -> list[Step]:
    """One Claude Code tool call as steps (``MultiEdit``: one a replacement): shared with the
    reading of Inspect logs, where Claude Code run by ``inspect_swe`` calls the same tools."""
    path = str(arguments.get("file_path") or arguments.get("notebook_path") or "")
    if name == "Bash" and isinstance(arguments.get("command"), str):
        detail = as_object(structured)
        if not output and (detail.get("stdout") or detail.get("stderr")):
            output = "\n".join(str(detail.get(key) or "") for key in ("stdout", "stderr")).strip("\n")
        exit_code = _EXIT_CODE.search(output[:200])
        code = int(exit_code.group(1)) if exit_code else (1 if error else 0)
        if detail.get("interrupted") is True or re.search(r"Command timed out", output[:300]):
            code = -1
        return [Step(thought, arguments["command"].strip(), code, output, time)]
    if error and name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        return [Step(thought, f"{name} {path}", 1, output, time, kind="read")]  # refused: nothing changed
    if name == "Edit" and path:
        return [_replace(path, arguments.get("old_string"), arguments.get("new_string"), thought, output, time)]
    if name == "MultiEdit" and path:
        edits = [as_object(edit) for edit in arguments.get("edits") or []]
        return [_replace(path, edit.get("old_string"), edit.get("new_string"), thought, output, time) for edit in edits]
    if name == "Write" and path:
        editor = {"command": "create", "path": path, "file_text": str(arguments.get("content") or "")}
        return [Step(thought, f"Write {path}", 0, output, time, writes=[(os.path.normpath(path), "create")], kind="edit",
                     editor=editor)]
    if name == "NotebookEdit" and path:
        return [Step(thought, f"NotebookEdit {path}", 0, output, time, writes=[(os.path.normpath(path), "edit")],
                     kind="edit")]
    if name == "Read" and path:
        return [Step(thought, f"view {path}", 0, output, time, kind="read", editor={"command": "view", "path": path})]
    shown = path or str(arguments.get("pattern") or arguments.get("description") or "")
    return [Step(thought, f"{name} {shown}".strip(), 0, output, time, kind="read")]


def _replace(path: str, old: Any, new: Any, thought: str, output: str, time: float | None) -> Step:
    editor = {"command": "str_replace", "path": path, "old_str": old if isinstance(old, str) else "",
              "new_str": new if isinstance(new, str) else ""}
    return Step(thought, f"Edit {path}", 0, output, time, writes=[(os.path.normpath(path), "edit")], kind="edit",
                editor=editor)


def model(events: list[dict[str, Any]]) -> str | None:
    """The model most of the assistant messages name."""
    names = Counter(str(as_object(e.get("message")).get("model")) for e in events if e.get("type") == "assistant"
                    and isinstance(as_object(e.get("message")).get("model"), str))
    names.pop("<synthetic>", None)
    return names.most_common(1)[0][0].rsplit("/", 1)[-1] if names else None


def usage(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens the session's assistant messages used, each message counted once (Claude Code writes
    a message's content blocks on several lines, each repeating its usage), and what it cost where
    the log says (``stream-json``'s closing ``result`` line: ``total_cost_usd``, summed over the
    invocations a resumed stream holds)."""
    totals: Counter[str] = Counter()
    seen: set[str] = set()
    cost = [price for e in events if e.get("type") == "result" and (price := cost_usd(e.get("total_cost_usd"))) is not None]
    for event in events:
        message = as_object(event.get("message"))
        if event.get("type") != "assistant" or not isinstance(message.get("usage"), dict):
            continue
        key = str(message.get("id") or event.get("uuid"))
        if key in seen:
            continue
        seen.add(key)
        for name, value in token_counts(message["usage"], ((n, n) for n in TOKENS)).items():
            totals[name] += value
    found: dict[str, Any] = dict(totals)
    if cost and totals:
        found["cost_usd"] = round(sum(cost), 6)
    return found


def convert(events: list[dict[str, Any]], agent: str, session: str, notes: list[str] | None = None,
            hidden: list[dict[str, Any]] | None = None, statement: str = "") -> RunFile:
    """One session's events -> one run (the typed model, from the shell builder); ``hidden``: the
    held-back suites where a harness ran them (a Harbor trial), ``statement``: the task where the
    session does not hold its first prompt (Claude Code's ``stream-json`` output)."""
    conversation = _conversation(events)
    cwd = next((str(e["cwd"]) for e in events if isinstance(e.get("cwd"), str) and e["cwd"].startswith("/")), None)
    roots = ((cwd.rstrip("/"),) if cwd else ()) + REPO_ROOTS
    document = convert_steps(Trajectory(instance=session, agent=agent, source="claude-code", steps=steps(conversation),
                                        submission=None, statement=_statement(conversation) or statement,
                                        roots=roots, hidden=hidden or [], notes=list(notes or [])))
    used = usage(events)
    return with_usage(document, Usage(**used)) if used else document


def sessions(paths: list[str], issues: list[ImportIssue]) -> dict[str, tuple[str, list[dict[str, Any]], list[str]]]:
    """Every session of the files, by id: (the file that holds its main conversation, its events in
    file order, notes on the lines that could not be read). A sub-agent's ``agent-*.jsonl`` joins
    the session it names."""
    events: dict[str, list[dict[str, Any]]] = {}
    files: dict[str, list[str]] = {}
    skipped: dict[str, list[str]] = {}
    for path in paths:
        for number, record in read_records(path):
            if not isinstance(record, dict):
                reason = record.reason if isinstance(record, ImportIssue) else "not a JSON object"
                skipped.setdefault(path, []).append(f"{os.path.basename(path)}:{number}: {reason}; the line was skipped")
                continue
            session = str(record.get("sessionId") or record.get("session_id")  # a stream-json line: session_id
                          or os.path.splitext(os.path.basename(path))[0])
            events.setdefault(session, []).append(record)
            if path not in files.setdefault(session, []):
                files[session].append(path)
    by_session = {}
    for session, found in events.items():
        owner = next((f for f in files[session] if not os.path.basename(f).startswith("agent-")), files[session][0])
        by_session[session] = (owner, found, [note for f in files[session] for note in skipped.get(f, [])])
    for path, notes in skipped.items():
        if not any(path in held for held in files.values()):
            issues += [ImportIssue(path, 1, note) for note in notes[:20]]
    return by_session


def import_files(paths: list[str], out: str, agent: str | None = None, jobs: int = 1,
                 overwrite: bool = False) -> Imported:
    """Import Claude Code session files (and their sub-agents' files); the sessions made in
    ``jobs`` worker processes."""
    return drive(tasks(paths, agent), out, paths, overwrite, jobs)


def tasks(paths: list[str], agent: str | None) -> Iterator[Task | ImportIssue]:
    """A run per session; lines that could not be read in a file that holds no session."""
    issues: list[ImportIssue] = []
    found = sessions(paths, issues)
    yield from issues
    for session, (path, events, notes) in found.items():
        name = agent or model(events) or "claude-code"
        yield Task(path, 1, named(name, session, functools.partial(convert, events, name, session, notes)),
                   label=session, what="a Claude Code session", records=events)
