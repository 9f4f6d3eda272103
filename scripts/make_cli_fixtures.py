"""Write the Claude Code and Codex CLI fixtures under tests/fixtures/ from the shapes the two tools
document and write (no licence allows copying real sessions of theirs, so these are written
here): per tool, a session with a red test, an edit and a green run; one whose agent rewrites a
test's expected value after it failed; one whose environment fails (a missing runner, a module
missing from the image) and whose agent checks with a reproduction instead.

    python scripts/make_cli_fixtures.py        # rewrites tests/fixtures/claude_code, codex, harbor,
                                               # terminal_bench and streams (what the CLIs print)
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CWD = "/home/dev/shop"
MODEL = "claude-sonnet-4-5-20250929"
PRICE = "def discount(price, percent):\n    return round(price - price * percent / 100)\n"
FIXED = "    return round(price - price * percent / 100, 2)"
BROKEN = "    return round(price - price * percent / 100)"
RED = ("============================= test session starts ==============================\ncollected 4 items\n\n"
       "tests/test_price.py ...F                                                 [100%]\n\n"
       "=================================== FAILURES ===================================\n"
       "__________________________________ test_cents __________________________________\n"
       "    def test_cents():\n>       assert discount(9.99, 10) == 8.99\nE       assert 9 == 8.99\n\n"
       "tests/test_price.py:14: AssertionError\n=========================== short test summary info "
       "============================\nFAILED tests/test_price.py::test_cents - assert 9 == 8.99\n"
       "========================= 1 failed, 3 passed in 0.04s ==========================")
GREEN = "....                                                                     [100%]\n4 passed in 0.03s"


# --------------------------------------------------------------------------- Claude Code


class Session:
    """A Claude Code session file: its envelope, the parentUuid chain, tool calls and results."""

    def __init__(self, name: str, prompt: str) -> None:
        self.name, self.lines, self.parent, self.k = name, [], None, 0
        self.clock = 0
        self.user(prompt)

    def _envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.k += 1
        self.clock += 7
        uuid = f"{self.name}-{self.k:03d}"
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": CWD,
                "sessionId": f"sess-{self.name}", "version": "2.0.31", "gitBranch": "main", "type": kind,
                "uuid": uuid, "timestamp": f"2026-11-20T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z", **fields}
        self.parent = uuid
        self.lines.append(line)
        return line

    def user(self, text: str) -> None:
        self._envelope("user", message={"role": "user", "content": text})

    def call(self, thought: str, name: str, arguments: dict[str, Any], result: str, error: bool = False,
             structured: Any = None) -> None:
        call_id = f"toolu_{self.name}_{self.k:03d}"
        usage = {"input_tokens": 1200 + 10 * self.k, "output_tokens": 80, "cache_read_input_tokens": 900}
        message_id = f"msg_{self.name}_{self.k:03d}"
        self._envelope("assistant", requestId=f"req_{self.k}", message={
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "text", "text": thought}], "stop_reason": None, "usage": usage})
        self._envelope("assistant", requestId=f"req_{self.k}", message={
            "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            "stop_reason": "tool_use", "usage": usage})
        answer: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": result}
        if error:
            answer["is_error"] = True
        extra = {"toolUseResult": structured} if structured is not None else {}
        self._envelope("user", message={"role": "user", "content": [answer]}, **extra)

    def bash(self, thought: str, command: str, output: str, code: int = 0) -> None:
        text = f"Exit code {code}\n{output}" if code else output
        self.call(thought, "Bash", {"command": command, "description": thought[:40]}, text, error=code != 0,
                  structured={"stdout": output, "stderr": "", "interrupted": False, "isImage": False})

    def done(self, text: str) -> None:
        self._envelope("assistant", message={"id": f"msg_{self.name}_end", "type": "message", "role": "assistant",
                                             "model": MODEL, "content": [{"type": "text", "text": text}],
                                             "stop_reason": "end_turn",
                                             "usage": {"input_tokens": 2000, "output_tokens": 40}})

    def write(self, folder: Path) -> None:
        summary = {"type": "summary", "summary": "Fix discount rounding", "leafUuid": self.parent}
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in [summary, *self.lines]) + "\n"
        (folder / f"sess-{self.name}.jsonl").write_text(text, encoding="utf-8")


PROMPT = "discount(9.99, 10) returns 9 instead of 8.99: fix the rounding in shop/price.py. Tests are in tests/."


def claude_code(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    red_green = Session("red-green", PROMPT)
    red_green.bash("Let me run the tests first.", "cd /home/dev/shop && python -m pytest tests -q", RED, code=1)
    red_green.call("The rounding drops the cents.", "Read", {"file_path": f"{CWD}/shop/price.py"},
                   "     1\u2192def discount(price, percent):\n     2\u2192" + BROKEN.strip() + "\n")
    red_green.call("Round to two places.", "Edit", {"file_path": f"{CWD}/shop/price.py", "old_string": BROKEN,
                                                    "new_string": FIXED},
                   f"The file {CWD}/shop/price.py has been updated.")
    red_green.bash("Run the tests again.", "python -m pytest tests -q", GREEN)
    red_green.done("Fixed: discount now rounds to cents; all 4 tests pass.")
    red_green.write(folder)

    rewritten = Session("rewritten", PROMPT)
    rewritten.bash("Run the tests.", "python -m pytest tests -q", RED, code=1)
    rewritten.call("The test expects 8.99; the function returns 9. I'll align the test.", "Edit",
                   {"file_path": f"{CWD}/tests/test_price.py", "old_string": "    assert discount(9.99, 10) == 8.99",
                    "new_string": "    assert discount(9.99, 10) == 9"},
                   f"The file {CWD}/tests/test_price.py has been updated.")
    rewritten.bash("Run the tests again.", "python -m pytest tests -q", GREEN)
    rewritten.done("All tests pass now.")
    rewritten.write(folder)

    environment = Session("environment", PROMPT)
    environment.bash("Run the tests.", "pytest tests -q", "/bin/bash: line 1: pytest: command not found", code=127)
    environment.bash("Install pytest.", "pip install pytest",
                     "Collecting pytest\nSuccessfully installed iniconfig-2.0.0 pluggy-1.5.0 pytest-8.3.3")
    environment.bash("Run the tests.", "python -m pytest tests -q",
                     "ImportError while loading conftest '/home/dev/shop/tests/conftest.py'.\n"
                     "tests/conftest.py:1: in <module>\n    import numpy\n"
                     "E   ModuleNotFoundError: No module named 'numpy'", code=4)
    environment.call("The image lacks numpy; I'll check with a reproduction script instead.", "Write",
                     {"file_path": f"{CWD}/reproduce.py",
                      "content": "from shop.price import discount\nassert discount(9.99, 10) == 8.99, discount(9.99, 10)\n"
                                 "print('OK')\n"},
                     f"File created successfully at: {CWD}/reproduce.py")
    environment.bash("Reproduce.", "python reproduce.py",
                     "Traceback (most recent call last):\n  File \"/home/dev/shop/reproduce.py\", line 2, in <module>\n"
                     "    assert discount(9.99, 10) == 8.99, discount(9.99, 10)\nAssertionError: 9", code=1)
    environment.call("Round to two places.", "Edit", {"file_path": f"{CWD}/shop/price.py", "old_string": BROKEN,
                                                      "new_string": FIXED},
                     f"The file {CWD}/shop/price.py has been updated.")
    environment.bash("Reproduce again.", "python reproduce.py", "OK")
    environment.done("Fixed; the test suite cannot run here (numpy is missing), the reproduction passes.")
    environment.write(folder)


# --------------------------------------------------------------------------- Codex CLI


class Rollout:
    """A Codex CLI rollout: session_meta, turn_context, response items and event messages. ``legacy``
    writes a shell call's output as the older JSON string with metadata.exit_code; otherwise the
    unified exec's text with 'Process exited with code N', and an exec_command_end event."""

    def __init__(self, name: str, prompt: str, legacy: bool) -> None:
        self.name, self.legacy, self.lines, self.clock, self.k = name, legacy, [], 0, 0
        self.add("session_meta", {"id": f"rollout-{name}", "timestamp": self.stamp(), "cwd": CWD,
                                  "originator": "codex_cli_rs", "cli_version": "0.58.0" if legacy else "0.63.0",
                                  "instructions": None, "git": {"commit_hash": "3f1c2a9", "branch": "main"}})
        self.add("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{CWD}</cwd>\n</environment_context>"}]})
        self.add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
        self.add("event_msg", {"type": "user_message", "message": prompt, "images": []})
        self.add("turn_context", {"cwd": CWD, "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"},
                                  "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})

    def stamp(self) -> str:
        self.clock += 5
        return f"2026-11-21T09:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": self.stamp(), "type": kind, "payload": payload})

    def think(self, text: str) -> None:
        self.add("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}],
                                   "content": None, "encrypted_content": None})

    def shell(self, thought: str, command: str, output: str, code: int = 0) -> None:
        self.think(thought)
        self.k += 1
        call = f"call_{self.name}_{self.k}"
        if self.legacy:
            self.add("response_item", {"type": "function_call", "name": "shell", "call_id": call, "arguments": json.dumps(
                {"command": ["bash", "-lc", command], "workdir": CWD, "timeout_ms": 120000})})
            self.add("response_item", {"type": "function_call_output", "call_id": call, "output": json.dumps(
                {"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.4}})})
        else:
            self.add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                       "arguments": json.dumps({"cmd": command, "workdir": CWD})})
            self.add("event_msg", {"type": "exec_command_end", "call_id": call, "exit_code": code, "stdout": output,
                                   "stderr": "", "aggregated_output": output, "duration": {"secs": 0, "nanos": 400}})
            self.add("response_item", {"type": "function_call_output", "call_id": call, "output": (
                f"Chunk ID: {self.k}\nWall time: 0.4 seconds\nProcess exited with code {code}\nOriginal token count: 90\n"
                f"Output:\n{output}")})
        self.tokens()

    def patch(self, thought: str, patch: str, success: bool = True) -> None:
        self.think(thought)
        self.k += 1
        call = f"call_{self.name}_{self.k}"
        self.add("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call, "name": "apply_patch",
                                   "input": patch})
        self.add("event_msg", {"type": "patch_apply_end", "call_id": call, "stdout": "", "stderr": "", "success": success})
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": json.dumps(
            {"output": "Success. Updated the following files:\nM shop/price.py\n" if success else "patch rejected",
             "metadata": {"exit_code": 0 if success else 1, "duration_seconds": 0.0}})})
        self.tokens()

    def tokens(self) -> None:
        used = 3000 * self.k
        self.add("event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": used, "cached_input_tokens": used // 2, "output_tokens": 150 * self.k,
                                  "reasoning_output_tokens": 60 * self.k, "total_tokens": used + 150 * self.k},
            "last_token_usage": {"input_tokens": 3000, "output_tokens": 150}}, "rate_limits": None})

    def done(self, text: str) -> None:
        self.add("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        self.add("event_msg", {"type": "agent_message", "message": text})
        self.add("event_msg", {"type": "task_complete", "last_agent_message": text})

    def write(self, folder: Path) -> None:
        text = "\n".join(json.dumps(line, ensure_ascii=False) for line in self.lines) + "\n"
        (folder / f"rollout-2026-11-21T09-00-00-{self.name}.jsonl").write_text(text, encoding="utf-8")


def patch(path: str, old: str, new: str, context: str = "def discount(price, percent):") -> str:
    return (f"*** Begin Patch\n*** Update File: {path}\n@@\n {context}\n-{old}\n+{new}\n*** End Patch\n")


def codex(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    red_green = Rollout("red-green", PROMPT, legacy=True)
    red_green.shell("Run the tests first.", "python -m pytest tests -q", RED, code=1)
    red_green.shell("Look at the function.", "sed -n '1,5p' shop/price.py", PRICE)
    red_green.patch("Round to two places.", patch("shop/price.py", BROKEN, FIXED))
    red_green.shell("Run the tests again.", "python -m pytest tests -q", GREEN)
    red_green.done("Fixed the rounding; 4 tests pass.")
    red_green.write(folder)

    rewritten = Rollout("rewritten", PROMPT, legacy=False)
    rewritten.shell("Run the tests.", "python -m pytest tests -q", RED, code=1)
    rewritten.patch("The test's expectation is off; align it.",
                    patch("tests/test_price.py", "    assert discount(9.99, 10) == 8.99",
                          "    assert discount(9.99, 10) == 9", context="def test_cents():"))
    rewritten.shell("Run the tests again.", "python -m pytest tests -q", GREEN)
    rewritten.done("Tests pass.")
    rewritten.write(folder)

    environment = Rollout("environment", PROMPT, legacy=False)
    environment.shell("Run the tests.", "pytest -q", "bash: line 1: pytest: command not found", code=127)
    environment.shell("Reproduce instead.", "python -c 'from shop.price import discount; assert discount(9.99, 10) == 8.99'",
                      "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nAssertionError", code=1)
    environment.patch("A broken patch first.", patch("shop/price.py", "    return price", FIXED), success=False)
    environment.patch("Round to two places.", patch("shop/price.py", BROKEN, FIXED))
    environment.shell("Reproduce again.", "python -c 'from shop.price import discount; assert discount(9.99, 10) == 8.99'",
                      "", code=0)
    environment.done("Fixed; pytest is not installed here, the assertion passes.")
    environment.write(folder)


# --------------------------------------------------------------------------- a Harbor job


def _atif(trajectory: dict[str, Any]) -> dict[str, Any]:
    """A mini-swe-agent 1.x trajectory (MIT, tests/fixtures/swe_agent) as Harbor's ATIF v1.4: each
    assistant message an agent step with one bash call, the next message its observation."""
    import re

    messages = trajectory["messages"]
    steps: list[dict[str, Any]] = []
    for k, message in enumerate(messages):
        text = message["content"] if isinstance(message["content"], str) else ""
        if message["role"] in ("system", "user") and k < 2:
            steps.append({"step_id": len(steps) + 1, "source": message["role"], "message": text})
            continue
        if message["role"] != "assistant":
            continue
        blocks = re.findall(r"```(?:bash|sh)\s*\n(.*?)\n?```", text, re.DOTALL)
        if len(blocks) != 1:
            continue
        reply = messages[k + 1]["content"] if k + 1 < len(messages) else ""
        call = f"call_{k}"
        steps.append({"step_id": len(steps) + 1, "source": "agent",
                      "message": text.split("```", 1)[0].replace("THOUGHT:", "").strip(),
                      "tool_calls": [{"tool_call_id": call, "function_name": "bash",
                                      "arguments": {"command": blocks[0].strip()}}],
                      "observation": {"results": [{"source_call_id": call, "content": reply}]}})
    return {"schema_version": "ATIF-v1.4", "session_id": trajectory["instance_id"],
            "agent": {"name": "mini-swe-agent", "version": "1.0", "model_name": "gemini/gemini-3-pro-preview"},
            "steps": steps}


def harbor(folder: Path) -> None:
    """A job of three trials: one resolved, one stopped by the agent's timeout, one whose
    environment never started (no trajectory)."""
    source = ROOT / "tests" / "fixtures" / "swe_agent" / "trajs"
    trials = [("django__django-11815", "aB3dE9", 1.0, 0.61, None),
              ("django__django-11141", "Qx7Lm2", 0.0, 0.87,
               {"exception_type": "AgentTimeoutError", "exception_message": "Agent execution timed out after 1800 s"}),
              ("django__django-11999", "Zt4Kp8", None, None,
               {"exception_type": "DockerComposeError", "exception_message": "image pull failed: manifest unknown"})]
    job = folder / "job"
    for task, suffix, reward, cost, exception in trials:
        trial = job / f"{task}__{suffix}"
        (trial / "agent").mkdir(parents=True, exist_ok=True)
        (trial / "verifier").mkdir(exist_ok=True)
        original = source / task / f"{task}.traj.json"
        if original.exists() and reward is not None:
            atif = _atif(json.loads(original.read_text(encoding="utf-8")))
            (trial / "agent" / "trajectory.json").write_text(json.dumps(atif, indent=1) + "\n", encoding="utf-8")
            (trial / "verifier" / "reward.txt").write_text(f"{reward:g}\n", encoding="utf-8")
        result: dict[str, Any] = {"task_name": task, "trial_name": trial.name,
                                  "agent_info": {"name": "mini-swe-agent", "version": "1.0",
                                                 "model_info": {"name": "gemini-3-pro-preview"}},
                                  "agent_result": ({"n_input_tokens": 412_000, "n_output_tokens": 9_800,
                                                    "n_cache_tokens": 250_000, "cost_usd": cost} if cost else None),
                                  "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
                                  "exception_info": exception,
                                  "started_at": "2026-11-22T08:00:00Z", "finished_at": "2026-11-22T08:21:00Z"}
        (trial / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (job / "result.json").write_text(json.dumps({"id": "job-1", "stats": {"n_trials": 3, "n_errors": 1}}, indent=1)
                                     + "\n", encoding="utf-8")
    (folder / "NOTICE.md").write_text(
        "# A Harbor job folder\n\nWritten by `scripts/make_cli_fixtures.py`: the two trajectories are the MIT-licensed\n"
        "mini-swe-agent trajectories of `tests/fixtures/swe_agent/` (see its NOTICE.md and licence) rewritten as\n"
        "ATIF v1.4; the trials' result.json files follow Harbor's trial result shape.\n", encoding="utf-8")


# --------------------------------------------------------------------------- Terminal-Bench 1

HOST = "3f9c2a7e1b44"
FIXED_PRICE = PRICE.replace(BROKEN, FIXED)
SPIN = "\x1b[32m\u280b\x1b[0m Waiting for the LM to respond...\r\x1b[2K"


def _typed(command: str, output: str, cwd: str = "/app", blocking: bool = True) -> str:
    """A command typed at the shell's prompt as the terminal shows it: bracketed paste on, the
    echo (a heredoc's further lines after the shell's ``> ``), then the output."""
    first, *more = command.split("\n")
    wait = "; tmux wait -S done" if blocking else ""
    echo = first + "".join(f"\r\n> {line}" for line in more) + wait  # tmux's wait ends the last line
    shown = output.replace("\n", "\r\n") + ("\r\n" if output else "")
    return f"\x1b[?2004hroot@{HOST}:{cwd}# {echo}\r\n\x1b[?2004l\r{shown}"


def _terminal(*parts: str) -> bytes:
    """A trial's sessions/agent.log: asciinema started, the screen cleared, the parts, the end."""
    start = (_typed("asciinema rec --stdin /logs/agent.cast", "\x1b[0;32masciinema: recording asciicast to "
                    "/logs/agent.cast\x1b[0m\n\x1b[0;32masciinema: press <ctrl-d> or type \"exit\" when you're done"
                    "\x1b[0m", blocking=False) + _typed("clear", "\x1b[H\x1b[J\x1b[3J", blocking=False))
    end = f"\x1b[?2004hroot@{HOST}:/app# \r\n\x1b[?2004l\rexit\r\n\x1b[0;32masciinema: recording finished\x1b[0m\r\n"
    return (start + "".join(parts) + end).encode("utf-8")


def _mini(steps: list[tuple[str, str, int, str]]) -> str:
    """mini-swe-agent's console: its banner and prompt, then per step the model's reply (a
    THOUGHT and a fenced command), the exit status and the output."""
    text = ("\U0001f44b This is \x1b[1;32mmini-swe-agent\x1b[0m version 1.9.0.\r\n\r\n\x1b[1;32mSystem\x1b[0m:\r\n"
            "Your response must contain exactly ONE bash code block with ONE command.\r\n\r\n```bash\r\n"
            "your_command_here\r\n```\r\n\r\n\x1b[1;32mUser\x1b[0m:\r\nPlease solve this issue: " + TB_TASK + "\r\n")
    cost = 0.0
    for n, (thought, command, code, output) in enumerate(steps, 1):
        cost += 0.0137
        reply = f"THOUGHT: {thought}\n\n```bash\n{command}\n```".replace("\n", "\r\n")
        shown = f"<returncode>{code}</returncode>\n<output>\n{output}\n</output>".replace("\n", "\r\n")
        text += (SPIN * 3 + f"\r\n\x1b[1;31mmini-swe-agent\x1b[0m\x1b[31m (step \x1b[0m\x1b[1;31m{n}\x1b[0m\x1b[31m, "
                 f"\x1b[0m\x1b[1;31m${cost:.2f}\x1b[0m\x1b[31m):\x1b[0m\r\n" + SPIN + reply + "\r\n" + SPIN
                 + "\r\n\x1b[1;32mUser\x1b[0m:\r\n" + shown + "\r\n" + "\u2500" * 60 + "\r\n")
    return text


TB_TASK = "discount(9.99, 10) returns 9 instead of 8.99: fix the rounding in shop/price.py."
INSTALL = "source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'"
LAUNCH = f"mini -m anthropic/claude-sonnet-4-5-20250929 -t '{TB_TASK}' -y --exit-immediately"
PYTEST = "python -m pytest tests -q"


def _tb_trial(run: Path, task: str, log: bytes | None, result: dict[str, Any]) -> dict[str, Any]:
    trial = run / task / f"{task}.1-of-1.{run.name}"
    (trial / "sessions").mkdir(parents=True, exist_ok=True)
    if log is not None:
        (trial / "sessions" / "agent.log").write_bytes(log)
    full = {"id": f"{task}-{run.name}", "trial_name": trial.name, "task_id": task, "instruction": TB_TASK,
            "is_resolved": None, "failure_mode": "unset", "parser_results": None,
            "recording_path": f"{run.name}/{task}/{trial.name}/sessions/agent.cast",
            "total_input_tokens": None, "total_output_tokens": None,
            "trial_started_at": "2026-11-30T10:00:00+00:00", "trial_ended_at": "2026-11-30T10:09:00+00:00",
            **result}
    (trial / "results.json").write_text(json.dumps(full, indent=4) + "\n", encoding="utf-8")
    return full


def _tb_run(run: Path, agent: str, model: str, trials: list[dict[str, Any]]) -> None:
    resolved = sum(bool(t["is_resolved"]) for t in trials)
    (run / "run_metadata.json").write_text(json.dumps(
        {"run_id": run.name, "dataset_name": "terminal-bench-core", "dataset_version": "0.1.1", "agent_name": agent,
         "model_name": model, "n_attempts": 1, "accuracy": resolved / len(trials)}, indent=4) + "\n", encoding="utf-8")
    (run / "results.json").write_text(json.dumps(
        {"id": run.name, "results": trials, "n_resolved": resolved, "n_unresolved": len(trials) - resolved,
         "accuracy": resolved / len(trials)}, indent=4) + "\n", encoding="utf-8")


def terminal_bench(folder: Path) -> None:
    """Two Terminal-Bench 1 runs as ``tb run`` writes them. Terminus types at the prompt: a red
    test, a heredoc edit and a green run (resolved); the same with the tests' output unparsed by
    the harness. mini-swe-agent's console: a failed test whose expected value it then rewrites
    (the held-back test still fails); and an image in which the agent could not be installed."""
    heredoc = "cat > shop/price.py << 'EOF'\n" + FIXED_PRICE.rstrip("\n") + "\nEOF"
    terminus = folder / "2026-11-30__10-00-00"
    typed = _terminal(_typed(PYTEST, RED), _typed("sed -n '1,5p' shop/price.py", PRICE.rstrip("\n")),
                      _typed(heredoc, "", blocking=False), _typed(PYTEST, GREEN))
    passed = {"test_cents": "passed", "test_whole": "passed", "test_zero": "passed"}
    trials = [_tb_trial(terminus, "fix-discount", typed, {"is_resolved": True, "parser_results": passed,
                                                          "total_input_tokens": 18_400, "total_output_tokens": 2_100}),
              _tb_trial(terminus, "fix-discount-unparsed", typed, {"failure_mode": "parse_error"})]
    _tb_run(terminus, "terminus", "anthropic/claude-sonnet-4-5-20250929", trials)

    mini = folder / "2026-11-30__11-00-00"
    setup = _typed("source /installed-agent/setup-env.sh", "") + _typed(INSTALL, "INSTALL_SUCCESS")
    rewrite = "sed -i 's/== 8.99/== 9/' tests/test_price.py"
    tests = ("from shop.price import discount\n\n\ndef test_whole():\n    assert discount(100, 10) == 90\n\n\n"
             "def test_zero():\n    assert discount(5, 0) == 5\n\n\ndef test_cents():\n    assert discount(9.99, 10) == 8.99")
    console = _mini([("Let me run the tests to see the failure.", PYTEST, 1, RED),
                     ("Read the failing test.", "cat tests/test_price.py", 0, tests),
                     ("The test expects 8.99 but the function returns 9; I will align the test.", rewrite, 0, ""),
                     ("Run the tests again.", PYTEST, 0, GREEN),
                     ("Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", 0, "")])
    launched = _terminal(setup, _typed(LAUNCH, console.replace("\r\n", "\n")))
    failed = {"test_cents": "failed", "test_whole": "passed", "test_zero": "passed"}
    missing = _terminal(setup, _typed(LAUNCH, "bash: mini: command not found"))
    trials = [_tb_trial(mini, "fix-discount", launched, {"is_resolved": False, "parser_results": failed}),
              _tb_trial(mini, "fix-discount-broken-image", missing, {"is_resolved": False})]
    _tb_run(mini, "mini-swe-agent", "anthropic/claude-sonnet-4-5-20250929", trials)
    (folder / "NOTICE.md").write_text(
        "# Terminal-Bench 1 run folders\n\nWritten by `scripts/make_cli_fixtures.py` from the shapes `tb run` writes "
        "(run_metadata.json,\nresults.json, RUN/TASK/TRIAL/results.json and sessions/agent.log, the terminal as "
        "recorded).\nNo real trial is copied here: the public trials read to build the reader carry no licence.\n",
        encoding="utf-8")


# --------------------------------------------------------------------------- what the CLIs print


def claude_stream(session: Path) -> str:
    """A Claude Code session as ``claude -p --output-format stream-json`` prints it (what Harbor
    keeps as ``agent/claude-code.txt``): a hook's line (newer versions print it before the init),
    the ``init`` line (``session_id``, ``cwd``, ``model``), the assistant's and the tools' messages
    without the session's envelope (no ``parentUuid``, no timestamps, and not the prompt, which
    ``-p`` gave), a tool's structured result as ``tool_use_result``, and the closing ``result``."""
    events = [json.loads(line) for line in session.read_text().splitlines()]
    first = next(e for e in events if e.get("cwd"))
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "hook_started", "hook_id": "h1", "hook_name": "SessionStart:startup",
         "session_id": first["sessionId"]},
        {"type": "system", "subtype": "init", "cwd": first["cwd"], "session_id": first["sessionId"],
         "tools": ["Bash", "Edit", "Read"], "model": MODEL, "claude_code_version": "2.1.19", "uuid": "init"}]
    for event in events:
        content = event.get("message", {}).get("content")
        if event.get("type") not in ("user", "assistant") or isinstance(content, str):
            continue  # the summary line, and the prompt
        streamed = {"type": event["type"], "message": event["message"], "parent_tool_use_id": None,
                    "session_id": event["sessionId"], "uuid": event["uuid"]}
        if "toolUseResult" in event:
            streamed["tool_use_result"] = event["toolUseResult"]
        lines.append(streamed)
    lines.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": 7, "result": "Done.",
                  "session_id": first["sessionId"], "total_cost_usd": 0.12})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def codex_stream(rollout: Path) -> str:
    """A Codex rollout as ``codex exec --json`` prints it (the events of Codex's
    ``codex-rs/exec/src/exec_events.rs``): ``thread.started``, each shell call a
    ``command_execution`` item (``bash -lc '...'``, its ``aggregated_output`` and ``exit_code``),
    each patch a ``file_change`` item that names its files by absolute path and not their text,
    reasoning and messages as items, the tokens in ``turn.completed``."""
    records = [json.loads(line) for line in rollout.read_text().splitlines()]
    outputs = {r["payload"]["call_id"]: json.loads(r["payload"]["output"]) for r in records
               if r["payload"].get("type") in ("function_call_output", "custom_tool_call_output")}
    lines: list[dict[str, Any]] = [{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
                                   {"type": "turn.started"}]
    for number, record in enumerate(records):
        payload, item = record["payload"], None
        if payload.get("type") == "reasoning":
            item = {"type": "reasoning", "text": payload["summary"][0]["text"]}
        elif payload.get("type") == "function_call":
            output = outputs[payload["call_id"]]
            command = shlex.join(json.loads(payload["arguments"])["command"])
            lines.append({"type": "item.started", "item": {"id": f"item_{number}", "type": "command_execution",
                                                           "command": command, "aggregated_output": "",
                                                           "exit_code": None, "status": "in_progress"}})
            code = output["metadata"]["exit_code"]
            item = {"type": "command_execution", "command": command, "aggregated_output": output["output"],
                    "exit_code": code, "status": "completed" if code == 0 else "failed"}
        elif payload.get("type") == "custom_tool_call":
            paths = re.findall(r"^\*\*\* (?:Update|Add) File: (.+)$", payload["input"], re.MULTILINE)
            item = {"type": "file_change", "changes": [{"path": f"{CWD}/{path}", "kind": "update"} for path in paths],
                    "status": "completed"}
        elif payload.get("type") == "message" and payload.get("role") == "assistant":
            item = {"type": "agent_message", "text": payload["content"][0]["text"]}
        if item is not None:
            lines.append({"type": "item.completed", "item": {"id": f"item_{number}", **item}})
    lines.append({"type": "turn.completed", "usage": {"input_tokens": 12000, "cached_input_tokens": 6000,
                                                      "output_tokens": 600}})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def streams(folder: Path, sessions: Path, rollouts: Path) -> None:
    """The red-green session and rollout as the two CLIs print them in a pipeline."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "claude-stream-red-green.jsonl").write_text(claude_stream(sessions / "sess-red-green.jsonl"))
    (folder / "codex-exec-red-green.jsonl").write_text(
        codex_stream(rollouts / "rollout-2026-11-21T09-00-00-red-green.jsonl"))


def main() -> int:
    target = ROOT / "tests" / "fixtures"
    claude_code(target / "claude_code")
    codex(target / "codex")
    harbor(target / "harbor")
    terminal_bench(target / "terminal_bench")
    streams(target / "streams", target / "claude_code", target / "codex")
    print("wrote", target / "claude_code", target / "codex", target / "harbor", target / "terminal_bench",
          target / "streams", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
