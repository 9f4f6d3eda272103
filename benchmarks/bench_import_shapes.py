"""What the shell importer costs a byte on hostile trajectories, at 1x and 10x their size.

    python benchmarks/bench_import_shapes.py            # every shape, 1x and 10x
    python benchmarks/bench_import_shapes.py --scale 30 # and a larger multiple

Each shape is a mini-swe-agent trajectory built to make a naive importer super-linear: a here-document
that never closes, thousands of ``cout <<`` in one ``printf``, ``sed`` changing every line of a large
file, a here-document rewriting it, a thousand ``.replace()`` calls in one ``python - <<EOF``, forty
thousand terminal hyperlinks (OSC 8) in one output, hundreds of thousands of ``<output>`` tags that
never close, a thousand ``-e`` scripts in one ``sed``, a file of one repeated line rewritten (difflib
is quadratic on repeated lines) and a long series of editor replacements. Each is converted in process
(``swe_agent.convert``: reading the steps, the checks, the rebuilt edits) and timed; the floor is
``json.loads`` of the same trajectory's text, measured in the same run. Printed per shape: its size,
the seconds, microseconds per byte, the ratio to the floor, and the growth of the cost per byte from
1x to the larger multiple: flat (about 1 or less) is linear. Above 3 is flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SUBMISSION = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\n"


def trajectory(commands: list[str], outputs: list[str]) -> dict[str, Any]:
    """A mini-swe-agent 1.x trajectory: each command in a bash block, its output observed."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "<pr_description>fix m</pr_description>"}]
    for command, output in zip(commands, outputs, strict=True):
        messages.append({"role": "assistant", "content": f"THOUGHT: x\n\n```bash\n{command}\n```"})
        messages.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{output}</output>"})
    return {"instance_id": "m-1", "info": {"submission": SUBMISSION}, "messages": messages}


def numbered(lines: int, text: str = "line_{i} = {i}") -> str:
    """What ``cat -n m.py`` prints of a file of ``lines`` lines."""
    return "".join(f"{i:6d}\t{text.format(i=i)}\n" for i in range(1, lines + 1))


def _unclosed_heredoc(n: int) -> dict[str, Any]:
    body = "".join(f"x{i} = {i}  # cout << x{i} << endl;\n" for i in range(1000 * n))
    return trajectory(["cat > m.py <<'EOF'\n" + body, "python m.py"], ["", "ok\n"])


def _printf_cout(n: int) -> dict[str, Any]:
    words = " ".join(f"'  cout << \"{i}\" << endl;'" for i in range(3000 * n))
    return trajectory([f"printf '%s\\n' {words} > m.cpp", "g++ m.cpp"], ["", ""])


def _sed_every_line(n: int) -> dict[str, Any]:
    return trajectory(["cat -n m.py", "sed -i 's/line_/L_/' m.py", "python m.py"], [numbered(50_000 * n), "", "ok\n"])


def _heredoc_rewrite(n: int) -> dict[str, Any]:
    text = "".join(f"L_{i} = {i}\n" for i in range(50_000 * n))
    return trajectory(["cat -n m.py", f"cat > m.py <<'EOF'\n{text}EOF", "python m.py"], [numbered(50_000 * n), "", "ok\n"])


def _python_replace(n: int) -> dict[str, Any]:
    calls = "".join(f"s = s.replace('line_{i} ', 'L_{i} ')\n" for i in range(1000 * n))
    script = f"python - <<'EOF'\nimport pathlib\np = pathlib.Path('m.py')\ns = p.read_text()\n{calls}p.write_text(s)\nEOF"
    return trajectory(["cat -n m.py", script, "python m.py"], [numbered(1000 * n), "", "ok\n"])


def _hyperlinks(n: int) -> dict[str, Any]:
    links = "".join(f"\x1b]8;;file:///x/{i}\x1b\\f{i}\x1b]8;;\x1b\\\n" for i in range(40_000 * n))
    return trajectory(["ls --hyperlink=always", "python -m pytest"], [links, links + "1 failed in 0.1s\n"])


def _unclosed_output(n: int) -> dict[str, Any]:
    document = trajectory(["echo hi"], [""])
    document["messages"][-1]["content"] = "<returncode>0</returncode>" + "<output>" * (400_000 * n)
    return document


def _many_sed_scripts(n: int) -> dict[str, Any]:
    scripts = " ".join(f"-e 's/line_{i} /L_{i} /'" for i in range(1000 * n))
    return trajectory(["cat -n m.py", f"sed -i {scripts} m.py", "python m.py"], [numbered(1000 * n), "", "ok\n"])


def _repeated_lines(n: int) -> dict[str, Any]:
    half = "    pass\n" * (2500 * n)
    return trajectory(["cat -n m.py", f"cat > m.py <<'EOF'\n{half}x = 1\n{half}EOF", "python m.py"],
                      [numbered(5000 * n, "    pass"), "", "ok\n"])


def _editor_replacements(n: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix m"}]
    for i in range(1000 * n):
        arguments = {"command": "view"} if i == 0 else {"command": "str_replace", "old_str": f"line_{i} =",
                                                        "new_str": f"L_{i} =\nextra_{i} = 0"}
        call = {"id": f"c{i}", "type": "function",
                "function": {"name": "str_replace_editor", "arguments": json.dumps({"path": "/testbed/m.py", **arguments})}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": numbered(1000 * n) if i == 0 else "edited"})
    return {"instance_id": "m-1", "info": {"submission": SUBMISSION}, "messages": messages}


# name -> the trajectory at a multiple of its base size (1x: the sizes that once took minutes)
SHAPES: dict[str, Callable[[int], dict[str, Any]]] = {
    "heredoc never closed": _unclosed_heredoc,
    "printf of cout lines": _printf_cout,
    "sed on every line": _sed_every_line,
    "heredoc rewrite": _heredoc_rewrite,
    "python .replace() calls": _python_replace,
    "OSC 8 hyperlinks": _hyperlinks,
    "unclosed <output> tags": _unclosed_output,
    "sed -e scripts": _many_sed_scripts,
    "repeated lines rewritten": _repeated_lines,
    "editor replacements": _editor_replacements,
}


def shapes(multiple: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, build in SHAPES.items():
        yield name, build(multiple)


def best(seconds: Callable[[], float], repeat: int) -> float:
    return min(seconds() for _ in range(repeat))


def measure(document: dict[str, Any], repeat: int) -> tuple[int, float, float]:
    """(bytes, seconds to convert, seconds of the json.loads floor) of one trajectory."""
    from procjudge.importers import swe_agent

    text = json.dumps(document)

    def convert() -> float:
        start = time.perf_counter()
        swe_agent.convert(json.loads(text), "bench")
        return time.perf_counter() - start

    def floor() -> float:
        start = time.perf_counter()
        json.loads(text)
        return time.perf_counter() - start

    return len(text), best(convert, repeat), best(floor, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=10, help="the larger multiple (default 10)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many timings (default 3)")
    args = parser.parse_args()
    measure(trajectory(["ls"], ["x\n"]), 1)  # imports and caches warm
    print(f"{'shape':26s} {'x':>3s} {'bytes':>10s} {'seconds':>8s} {'us/B':>7s} {'/floor':>7s} {'growth':>7s}")
    for name, build in SHAPES.items():
        per_byte = []
        for multiple in (1, args.scale):
            size, seconds, floor = measure(build(multiple), args.repeat)
            per_byte.append(seconds / size)
            growth = per_byte[-1] / per_byte[0] if len(per_byte) == 2 else 1.0
            flag = "  <- super-linear" if growth > 3 else ""
            print(f"{name:26s} {multiple:3d} {size:10,d} {seconds:8.3f} {seconds / size * 1e6:7.2f} "
                  f"{seconds / max(floor, 1e-9):7.0f} {growth:7.2f}{flag}", flush=True)


if __name__ == "__main__":
    main()
