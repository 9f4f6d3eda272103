"""Inspect's chat messages as a shell agent's steps: each tool call the agent made (``bash``,
``python``, ``text_editor`` and other edit calls) with the output that answered it, read as
``procjudge import swe-agent`` reads a shell log. Shared by procjudge's Inspect scorer
(:mod:`procjudge.inspect`), which judges a sample live, and the Inspect log importer, so that a
sample imported from its log is the run the scorer judged. The messages are Inspect's own objects
or any with the same attributes (``role``, ``content``, ``tool_calls``, ``tool_call_id``,
``error``)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..model import RunFile
from . import claude_code, codex
from .build import with_notes
from .shell import Trajectory
from .shell import convert as convert_steps
from .steps import Step
from .toolcalls import tool_call_step

ROOTS = ("/app", "/testbed", "/workspace", "/repo")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Text with any lone surrogate (which no UTF-8 file can hold) shown as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _text(content: Any) -> str:
    """A message's content as text (a string, or a list of content parts)."""
    if isinstance(content, str):
        return _clean(content)
    if isinstance(content, list):
        return _clean("".join(str(getattr(part, "text", "") or "") for part in content))
    return "" if content is None else _clean(str(content))


def steps(messages: list[Any], origins: list[int] | None = None) -> tuple[list[Step], str | None]:
    """The agent's tool calls as a shell agent's steps, each with the output that answered it, and
    the answer it submitted last (a ``submit`` call), if any. ``origins``, when given, receives the
    index in ``messages`` of the message each step came from."""
    answers = {getattr(m, "tool_call_id", None): m for m in messages if getattr(m, "role", "") == "tool"}
    found: list[Step] = []
    submitted: str | None = None
    for index, message in enumerate(messages):
        if origins is not None:
            origins.extend([index - 1] * (len(found) - len(origins)))  # the steps of the message before
        if getattr(message, "role", "") != "assistant":
            continue
        thought = _text(getattr(message, "content", ""))
        for k, call in enumerate(getattr(message, "tool_calls", None) or []):
            name = str(getattr(call, "function", "") or "")
            arguments = {key: _clean(value) if isinstance(value, str) else value
                         for key, value in dict(getattr(call, "arguments", None) or {}).items()}
            if name == "submit":
                submitted = str(arguments.get("answer", ""))
                continue
            answer = answers.get(getattr(call, "id", None))
            output = _text(getattr(answer, "content", "")) if answer is not None else ""
            error = getattr(answer, "error", None) if answer is not None else None
            if getattr(error, "type", None) in _NOT_RUN:
                continue  # Inspect refused the call before it ran (its arguments, or an approver): nothing happened
            if error is not None:
                output += f"\n{getattr(error, 'message', error)}"
            said = thought if k == 0 else ""
            if name in claude_code.TOOLS or name in claude_code.READS:  # Claude Code run inside Inspect (inspect_swe)
                found += claude_code.tool_steps(name, arguments, output, error is not None, None, said, None)
                continue
            if not isinstance(arguments.get("command", ""), str) or name in ("apply_patch", "exec_command"):
                ran = codex.tool_steps(name, arguments, output, 1 if error is not None else 0, said, None)
                if ran is not None:  # Codex run inside Inspect: a shell argv, exec_command, apply_patch
                    found += ran
                    continue
            if name == "python" and isinstance(arguments.get("code"), str):
                # Inspect's python tool runs the code as `python -c` would: a check, or an edit when it writes files
                arguments = {"cmd": f"python -c {shlex.quote(arguments['code'])}"}
            step = tool_call_step(name, arguments, thought if k == 0 else "", output, None)
            if error is not None and step.shell and step.returncode is None:
                # Inspect's bash and python tools answer a non-zero exit with an error: the command failed
                step = Step(step.thought, step.command, 1, step.output, None)
            found.append(step)
    if origins is not None:
        origins.extend([len(messages) - 1] * (len(found) - len(origins)))
    return found, submitted


# ToolCallError types for calls that never ran.
_NOT_RUN = frozenset({"parsing", "approval"})


def run_document(messages: list[Any], sample: str = "sample", agent: str = "inspect",
                 statement: str = "", origins: list[int] | None = None) -> RunFile:
    """The run (the typed model) of a sample's messages (NothingLogged when the agent changed nothing);
    ``origins`` receives each step's message index, as :func:`steps` gives it."""
    found, submitted = steps(messages, origins)
    document = convert_steps(Trajectory(instance=sample, agent=agent, source="inspect", steps=found, submission=None,
                                        statement=statement, roots=ROOTS))
    return with_notes(document, [f"submitted an answer of {len(submitted):,} characters"]) if submitted else document
