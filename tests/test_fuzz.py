"""A fuzzing harness: mutated run files, policies and importer lines must never crash procjudge.

Every example checks: the exit code is 0, 1 or 2; no traceback and no "internal error"; the run
finishes within a deadline and the process's peak memory stays bounded; and what was printed is well formed for its format
(JSON parses, CSV
has one row per run, JUnit is XML, GitHub annotations are one per line).

Targets: run files, policies, importer lines, and (since the third hardening round) compressed
JSON lines (gzip and zstd, cut, flipped, doubled, spliced), configuration files, and Inspect
``.eval`` archives; since the fourth, shell agents' trajectories built from drawn commands (sed
expressions with backtracking traps and huge line numbers, here-documents closed or not, patches,
scripts' replacements, editor calls with values of any kind, test runs with odd counts) in both
of SWE-agent's forms, and procjudge's Inspect scorer on conversations of the same commands. A
short run is part of the normal suite (40 examples a target; 400 in CI, where ``CI`` is set). A longer one, for anyone to run:

    PROCJUDGE_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py -p no:cacheprovider
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procjudge.cli import main

from conftest import SAMPLES

# 40 examples a target in a local run; ten times that in CI (CI=true), where there is time for it
EXAMPLES = int(os.environ.get("PROCJUDGE_FUZZ_EXAMPLES", "400" if os.environ.get("CI") else "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="PROCJUDGE_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SECONDS = 20  # per invocation: the bound on time for one mutated file
PEAK_KIB = 1_500_000  # the bound on the test process's peak memory (ru_maxrss, KiB on Linux)

SAMPLE_TEXTS = sorted(p.read_text(encoding="utf-8") for p in SAMPLES.glob("*.y*ml"))
def _documents() -> list[object]:
    docs = []
    for text in SAMPLE_TEXTS:
        try:
            docs.append(yaml.safe_load(text))
        except yaml.YAMLError:  # a stream of records: mutated as a list of its documents
            docs.append(list(yaml.safe_load_all(text)))
    return docs


SAMPLE_DOCS = _documents()

# Values that have broken parsers and reports before: markup, escapes, control characters, huge
# and odd numbers, YAML tags.
NASTY = st.sampled_from([
    "", "\n", "\r", "\x1b[31m", "\x07", "::error::x", "[link](https://e.example)", "@someone", "=SUM(1)",
    "<script>", "\u202e", "0x" + "f" * 60, 1e308, -1, 0, 10**30, float("nan"), True, None, [], {},
    "!!int", "*alias", "&anchor", "~", "null", "- item", "key: value", "\t", "%", "é",
])
SCALARS = st.one_of(st.text(max_size=40), st.integers(-10**6, 10**12), st.floats(allow_nan=False), st.booleans(),
                    st.none(), NASTY)


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    started = time.monotonic()
    code = main(args)
    out, err = capsys.readouterr()
    assert time.monotonic() - started < SECONDS, f"took more than {SECONDS} s"
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak < PEAK_KIB, f"peak memory {peak / 1024:.0f} MiB"
    assert code in (0, 1, 2), code
    assert "Traceback" not in err, err[-2000:]  # a crash's (stdout may quote an agent's own traceback)
    for text in (out, err):
        assert "internal error" not in text, text[-2000:]
    return code, out, err


def mutate(value: object, data: st.DataObject, depth: int = 0) -> object:
    """The value with a few of its parts replaced, deleted or duplicated."""
    if isinstance(value, dict) and value:
        value = dict(value)
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        action = data.draw(st.sampled_from(["replace", "delete", "recurse", "recurse", "add"]))
        if action == "replace":
            value[key] = data.draw(SCALARS)
        elif action == "delete":
            del value[key]
        elif action == "add":
            value[data.draw(st.text(max_size=12))] = data.draw(SCALARS)
        else:
            value[key] = mutate(value[key], data, depth + 1)
        return value
    if isinstance(value, list) and value:
        value = list(value)
        index = data.draw(st.integers(0, len(value) - 1))
        action = data.draw(st.sampled_from(["replace", "delete", "duplicate", "recurse", "recurse"]))
        if action == "replace":
            value[index] = data.draw(SCALARS)
        elif action == "delete":
            del value[index]
        elif action == "duplicate":
            value.insert(index, value[index])
        else:
            value[index] = mutate(value[index], data, depth + 1)
        return value
    return data.draw(SCALARS)


def check_format(fmt: str, out: str, runs: int) -> None:
    """What was printed is well formed for its format."""
    if not out:
        return
    if fmt == "json":
        json.loads(out)
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert len(rows) == runs + 1, rows
    elif fmt == "junit":
        ElementTree.fromstring(out.encode("utf-8"))
    elif fmt == "github":
        assert all(line.startswith("::") for line in out.splitlines()), out


@FUZZ
@given(data=st.data())
def test_mutated_runs_never_crash_score(data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = mutate(data.draw(st.sampled_from(SAMPLE_DOCS)), data)
    for _ in range(data.draw(st.integers(0, 3))):
        doc = mutate(doc, data)
    suffix = data.draw(st.sampled_from([".yaml", ".json"]))
    path = tmp_path / f"run{suffix}"
    text = json.dumps(doc, default=str) if suffix == ".json" else yaml.safe_dump(doc, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    fmt = data.draw(st.sampled_from(["json", "table", "markdown"]))
    code, out, _ = run_cli(["score", str(path), "--format", fmt], capsys)
    if code == 0 and fmt == "json":
        json.loads(out)


@FUZZ
@given(data=st.data())
def test_mutated_bytes_never_crash_score(data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = bytearray(data.draw(st.sampled_from(SAMPLE_TEXTS)).encode("utf-8"))
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        action = data.draw(st.sampled_from(["flip", "insert", "delete", "cut"]))
        if action == "flip" and raw:
            raw[at] = data.draw(st.integers(0, 255))
        elif action == "insert":
            raw[at:at] = data.draw(st.sampled_from([b"&a ", b"*a", b"!!pairs ", b"{", b"]", b"\x00", b"\xff", b"---\n",
                                                    b": ", b"- ", b"<<: *a", b"!!binary ", b"'", b'"', b"\t"]))
        elif action == "delete" and raw:
            del raw[at:at + data.draw(st.integers(1, 20))]
        elif action == "cut":
            del raw[at:]
    path = tmp_path / "run.yaml"
    path.write_bytes(bytes(raw))
    run_cli(["score", str(path), "--format", "json"], capsys)


@FUZZ
@given(data=st.data())
def test_mutated_runs_in_a_batch_keep_every_format_well_formed(data: st.DataObject, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "runs"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    count = data.draw(st.integers(1, 3))
    for k in range(count):
        doc = mutate(data.draw(st.sampled_from(SAMPLE_DOCS)), data)
        (folder / f"r{k}.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    fmt = data.draw(st.sampled_from(["json", "csv", "markdown", "junit", "github", "table"]))
    gate = data.draw(st.sampled_from([[], ["--fail-under", "0"], ["--fail-on", "test_chasing,regression_blindness"]]))
    _code, out, _ = run_cli(["batch", str(folder), "--format", fmt, "--jobs", "1", *gate], capsys)
    check_format(fmt, out, count)


@FUZZ
@given(data=st.data())
def test_mutated_policies_are_accepted_or_refused_cleanly(data: st.DataObject, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from procjudge.policy import DEFAULT, policy_yaml

    policy = mutate(yaml.safe_load(policy_yaml(DEFAULT)), data)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy), encoding="utf-8")
    sample = str(SAMPLES / data.draw(st.sampled_from(["example1_good_standard.yaml", "marathon_phases.yaml",
                                                       "sprint_double_submit.yaml"])))
    code, _out, err = run_cli(["score", sample, "--format", "json", "--policy", str(path)], capsys)
    if code == 2:
        assert "policy error" in err


RECORD = {"task_id": "HumanEval/1", "given_tests": ["assert f(1) == 2", "assert f(4, 'ab') == 7"],
          "implementations": ["def f(x, y=0):\n    return x\n", "def f(x, y=0):\n    return x + 1\n"],
          "test_feedback": [["assert f(1) == 2 # Real Execution Output: 1"], []], "is_solved": True}


@FUZZ
@given(data=st.data())
def test_mutated_importer_lines_never_crash_import(data: st.DataObject, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    lines = []
    for _ in range(data.draw(st.integers(1, 3))):
        record = mutate(RECORD, data)
        line = json.dumps(record, default=str)
        if data.draw(st.booleans()):
            cut = data.draw(st.integers(0, len(line)))
            line = line[:cut]
        lines.append(line)
    example = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis reuses tmp_path: one folder an example
    log = example / "log.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = example / "out"
    _code, _, _ = run_cli(["import", "reflexion", str(log), "--out", str(out), "--agent", "fuzz"], capsys)
    for written in out.rglob("*.json"):
        run_cli(["score", str(written), "--format", "json"], capsys)


COMPLETION_LOG = json.loads(next((Path(__file__).parent / "fixtures" / "openhands_llm" / "llm_completions"
                                   / "shop__shop-1").glob("*1743405200.5.json")).read_text(encoding="utf-8"))


@FUZZ
@given(data=st.data())
def test_mutated_openhands_completion_logs_never_crash_import(data: st.DataObject, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """OpenHands' completion logs, mutated anywhere (a message's role, a tool call's arguments,
    its answer), or cut short: imported or refused with a message, never a crash."""
    document = COMPLETION_LOG
    for _ in range(data.draw(st.integers(1, 4))):
        document = mutate(document, data)  # type: ignore[assignment]
    text = json.dumps(document, default=str)
    if data.draw(st.booleans()):
        text = text[:data.draw(st.integers(0, len(text)))]
    example = Path(tempfile.mkdtemp(dir=tmp_path))
    log = example / "llm_completions" / "shop__shop-1" / "gpt-4o-1743405200.5.json"
    log.parent.mkdir(parents=True)
    log.write_text(text, encoding="utf-8")
    out = example / "out"
    run_cli(["import", "openhands", str(log), "--out", str(out)], capsys)
    for written in out.rglob("*.json"):
        run_cli(["score", str(written), "--format", "json"], capsys)


# --------------------------------------------------------------------------- the new surfaces

def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard", reason="the zstd targets need the zstandard package")
    return bytes(zstandard.ZstdCompressor().compress(data))


def _bytes_mutation(data: bytes, draw: st.DataObject) -> bytes:
    """Cut, flip, duplicate or splice the bytes of a compressed stream."""
    action = draw.draw(st.sampled_from(["cut", "flip", "double", "splice", "as_is"]))
    if action == "cut" and data:
        return data[:draw.draw(st.integers(0, len(data) - 1))]
    if action == "flip" and data:
        k = draw.draw(st.integers(0, len(data) - 1))
        return data[:k] + bytes([data[k] ^ draw.draw(st.integers(1, 255))]) + data[k + 1:]
    if action == "double":
        return data + data
    if action == "splice":
        return data + draw.draw(st.binary(max_size=64))
    return data


@FUZZ
@given(data=st.data())
def test_mutated_compressed_runs_are_read_or_refused_cleanly(data: st.DataObject, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON-lines file of mutated runs, gzip- or zstd-compressed, then cut, flipped, doubled or
    spliced: batch reads it or names the file; never a crash, a hang, or a short file read as whole."""
    import gzip

    lines = [json.dumps(mutate(data.draw(st.sampled_from(SAMPLE_DOCS)), data), default=str)
             for _ in range(data.draw(st.integers(1, 4)))]
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    codec = data.draw(st.sampled_from(["gz", "zst"]))
    packed = gzip.compress(raw) if codec == "gz" else _zstd(raw)
    mutated = _bytes_mutation(packed, data)
    path = tmp_path / f"runs.jsonl.{codec}"
    path.write_bytes(mutated)
    code, out, err = run_cli(["batch", str(path), "--format", "csv", "--jobs", "1"], capsys)
    if 0 < len(mutated) < len(packed):  # cut short: never read as complete
        assert code == 2, (code, err)
    check_format("csv", out, len(list(csv.reader(io.StringIO(out)))) - 1)


@FUZZ
@given(data=st.data())
def test_mutated_configurations_are_accepted_or_refused_cleanly(data: st.DataObject, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A procjudge.toml with mutated keys and values: batch runs with it, or exits 2 naming it."""
    keys = ["format", "fail_under", "fail_under_mean", "fail_on", "exclude", "include", "respect_gitignore", "jobs",
            "strict", "nonsense"]
    values = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                       st.text(max_size=20), st.lists(st.text(max_size=8), max_size=3),
                       st.sampled_from(["table", "json", "!", "\\", "[", "test_chasing", "nan"]))
    table = {key: data.draw(values) for key in data.draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4))}
    def toml_value(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return "nan" if math.isnan(value) else ("inf" if value == float("inf") else "-inf" if value == float("-inf")
                                                 else repr(value))
        if isinstance(value, int):
            return str(value) if -2**63 <= value < 2**63 else f'"{value}"'
        if isinstance(value, list):
            return "[" + ", ".join(toml_value(v) for v in value) + "]"
        return json.dumps(value)

    (tmp_path / "procjudge.toml").write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in table.items()))
    sample = tmp_path / "runs"
    sample.mkdir(exist_ok=True)
    (sample / "a.yaml").write_text(SAMPLE_TEXTS[0], encoding="utf-8")
    code, _out, err = run_cli(["--config", str(tmp_path / "procjudge.toml"), "batch", str(sample), "-q"], capsys)
    if code == 2:  # the configuration named, or the file, or its excludes left nothing to read
        assert "procjudge.toml" in err or "a.yaml" in err or "no run files" in err, err


@FUZZ
@given(data=st.data())
def test_mutated_inspect_archives_never_crash_import(data: st.DataObject, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """An Inspect .eval zip with a mutated header and samples, members stored, deflated or zstd,
    and the archive's bytes mutated: import writes runs or names the log."""
    import zipfile

    header = mutate({"eval": {"model": "m", "task": "t"}, "plan": {"steps": []}}, data)
    sample = mutate({"id": 1, "epoch": 1, "input": "x", "scores": {"s": {"value": 1.0, "answer": "def f(): pass"}},
                     "events": [{"event": "score", "score": {"value": 0.5}, "intermediate": True}]}, data)
    path = tmp_path / "log.eval"
    method = data.draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    with zipfile.ZipFile(path, "w", method) as archive:
        archive.writestr("header.json", json.dumps(header, default=str))
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample, default=str))
    path.write_bytes(_bytes_mutation(path.read_bytes(), data))
    run_cli(["import", "inspect", str(path), "--out", str(tmp_path / "out")], capsys)


# --------------------------------------------------------------------------- shell agents' commands

# Pieces of agents' commands: file names, regular-expression text (backtracking traps included),
# line numbers (huge ones too) and lines of code.
FILES = st.sampled_from(["m.py", "pkg/m.py", "tests/test_m.py", "/testbed/m.py", "../x.py", "a b.py", "m.cpp"])
REGEX_TEXT = st.text(alphabet="a()+*?|\\[]{}^$&./-1n \t'\"", max_size=24)
LINE_NUMBERS = st.one_of(st.integers(-3, 60), st.sampled_from([0, 10**11, 2**63, 99_999_999_999]))
CODE_LINES = st.lists(st.one_of(st.sampled_from(["def test_m():", "    assert m() == 1", "x = 1", "", "EOF", "    pass",
                                                 "  cout << x << endl;", "\x1b]8;;f\x1b\\", "<output>"]),
                                st.text(max_size=30)), max_size=12)


def _numbered(lines: list[str]) -> str:
    return "".join(f"{k:6d}\t{line}\n" for k, line in enumerate(lines, 1))


def _sed_script(data: st.DataObject) -> str:
    address = data.draw(st.sampled_from(["", "$", "1", "2,4", "/a/", "1,99999999999", "/(a+)+$/,$"]))
    verb = data.draw(st.sampled_from(["s", "s", "d", "i", "a", "c", "y", "p"]))
    if verb == "s":
        delimiter = data.draw(st.sampled_from(["/", "|", "#", ","]))
        pattern, replacement = data.draw(REGEX_TEXT), data.draw(REGEX_TEXT)
        flags = data.draw(st.sampled_from(["", "g", "I", "2", "gx"]))
        return f"{address}s{delimiter}{pattern}{delimiter}{replacement}{delimiter}{flags}"
    return f"{address}{verb}" + (f"\\{data.draw(REGEX_TEXT)}" if verb in "iac" else "")


def _shell_command(data: st.DataObject) -> tuple[str, str, int]:
    """(command, output, exit code) of one step: a read, a sed, a heredoc, a patch, a script, a test."""
    path = data.draw(FILES)
    lines = data.draw(CODE_LINES)
    kind = data.draw(st.sampled_from(["read", "sed", "heredoc", "patch", "script", "test", "test", "other"]))
    if kind == "read":
        return f"cat -n {path}", _numbered(lines), 0
    if kind == "sed":
        scripts = [_sed_script(data) for _ in range(data.draw(st.integers(1, 3)))]
        extended = data.draw(st.sampled_from(["", "-E ", "-r "]))
        return f"sed {extended}-i " + " ".join(f"-e {shlex.quote(s)}" for s in scripts) + f" {path}", "", 0
    if kind == "heredoc":
        delimiter = data.draw(st.sampled_from(["EOF", "'EOF'", "\"END\"", "-EOF"]))
        closed = data.draw(st.booleans())
        end = delimiter.strip("'\"-")
        body = "\n".join(lines)
        return f"cat <<{delimiter} > {path}\n{body}" + (f"\n{end}" if closed else ""), "", 0
    if kind == "patch":
        first, count = data.draw(LINE_NUMBERS), data.draw(st.integers(0, 5))
        hunk = "".join(data.draw(st.sampled_from(["-", "+", " ", "\\"])) + line + "\n" for line in lines)
        return f"git apply <<'EOF'\n--- a/{path}\n+++ b/{path}\n@@ -{first},{count} +{first},{count} @@\n{hunk}EOF", "", 0
    if kind == "script":
        pairs = data.draw(st.lists(st.tuples(st.text(max_size=10), st.text(max_size=10)), max_size=4))
        calls = "".join(f"s = s.replace({old!r}, {new!r})\n" for old, new in pairs)
        script = f"import pathlib\np = pathlib.Path({path!r})\ns = p.read_text()\n{calls}p.write_text(s)"
        return f"python - <<'EOF'\n{script}\nEOF", "", 0
    if kind == "test":
        summary = data.draw(st.sampled_from(["1 failed, 2 passed in 0.1s", "3 passed", "no tests ran", "ERROR collecting",
                                             "Ran 2 tests\n\nFAILED (failures=1)", "Traceback (most recent call last):",
                                             "-1 failed, 99999999999999999999 passed", ""]))
        runner = data.draw(st.sampled_from(["python -m pytest", "pytest -k m", "python reproduce.py", "python -c 'import m'",
                                            "./run_tests.sh", "go test ./...", "npm test"]))
        return runner, "\n".join(lines) + "\n" + summary + "\n", data.draw(st.sampled_from([0, 1, 2, 127]))
    return data.draw(st.sampled_from(["ls", "cd /testbed && git diff", "echo done", "pip install -e ."])), "\n".join(lines), 0


def _editor_call(data: st.DataObject) -> tuple[dict[str, object], str]:
    """(arguments, output) of a str_replace_editor call: view, str_replace, insert, create, undo."""
    command = data.draw(st.sampled_from(["view", "str_replace", "str_replace", "insert", "create", "undo_edit", "bogus"]))
    lines = data.draw(CODE_LINES)
    arguments: dict[str, object] = {"command": command, "path": data.draw(FILES)}
    if command == "str_replace":
        arguments["old_str"] = data.draw(st.one_of(st.sampled_from(lines or [""]), st.text(max_size=12), SCALARS))
        arguments["new_str"] = data.draw(st.one_of(st.text(max_size=20), SCALARS))
    elif command == "insert":
        arguments["insert_line"], arguments["new_str"] = data.draw(st.one_of(LINE_NUMBERS, SCALARS)), "\n".join(lines)
    elif command == "create":
        arguments["file_text"] = data.draw(st.one_of(st.just("\n".join(lines)), SCALARS))
    elif command == "view" and data.draw(st.booleans()):
        arguments["view_range"] = [data.draw(LINE_NUMBERS), data.draw(LINE_NUMBERS)]
    output = _numbered(lines) if command == "view" else data.draw(st.sampled_from(["edited", "", "ERROR: no match"]))
    return arguments, output


def _tool_call_trajectory(data: st.DataObject) -> dict[str, object]:
    """A SWE-agent function-calling trajectory of drawn bash commands and editor calls."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "<pr_description>fix m</pr_description>"}]
    for k in range(data.draw(st.integers(1, 8))):
        if data.draw(st.booleans()):
            command, output, code = _shell_command(data)
            name, arguments = "bash", {"command": command}
            output = f"{output}\n[exit code {code}]" if code else output
        else:
            name, (arguments, output) = "str_replace_editor", _editor_call(data)
        call = {"id": f"c{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments, default=str)}}
        messages.append({"role": "assistant", "content": "THOUGHT", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": output})
    diff = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    submission = data.draw(st.sampled_from(["", diff]))
    return {"instance_id": "fuzz-1", "info": {"submission": submission}, "messages": messages}


def _bash_block_trajectory(data: st.DataObject) -> dict[str, object]:
    """A mini-swe-agent trajectory: each drawn command in a bash block, its output and exit code."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "<pr_description>fix m</pr_description>"}]
    for _ in range(data.draw(st.integers(1, 8))):
        command, output, code = _shell_command(data)
        messages.append({"role": "assistant", "content": f"THOUGHT: x\n\n```bash\n{command}\n```"})
        closed = data.draw(st.sampled_from(["</output>", "</output>", ""]))
        messages.append({"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\n{output}{closed}"})
    return {"instance_id": "fuzz-1", "info": {"submission": ""}, "messages": messages}


@FUZZ
@given(data=st.data())
def test_generated_shell_commands_never_crash_import(data: st.DataObject, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A shell agent's trajectory of drawn commands (sed expressions with backtracking traps and
    huge line numbers, here-documents closed or not, patches, scripts' replacements, editor calls
    with values of any kind, test runs with odd counts): import writes a run or names the file,
    in bounded time and memory, and the run it writes is scored."""
    build = data.draw(st.sampled_from([_tool_call_trajectory, _bash_block_trajectory]))
    example = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis reuses tmp_path: one folder an example
    folder = example / "trajs"
    folder.mkdir()
    (folder / "fuzz-1.traj.json").write_text(json.dumps(build(data), default=str), encoding="utf-8")
    out = example / "out"
    run_cli(["import", "swe-agent", str(folder), "--out", str(out)], capsys)
    for written in out.rglob("*.json"):
        run_cli(["score", str(written), "--format", "json"], capsys)


@FUZZ
@given(data=st.data())
def test_the_inspect_scorer_returns_a_score_for_any_conversation(data: st.DataObject) -> None:
    """procjudge's Inspect scorer on a conversation of drawn bash calls and their outputs: a score
    or "not judged", never an exception, in bounded time and memory."""
    pytest.importorskip("inspect_ai", reason="the scorer targets need inspect-ai (the test extra)")
    import asyncio
    import resource

    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    from procjudge.inspect import process_score

    messages: list[object] = [ChatMessageUser(content="fix m")]
    for k in range(data.draw(st.integers(0, 8))):
        command, output, _code = _shell_command(data)
        tool = data.draw(st.sampled_from(["bash", "bash", "python", "submit", "text_editor"]))
        arguments = {"command": command} if tool in ("bash", "text_editor") else \
            {"code": command} if tool == "python" else {"answer": output}
        messages.append(ChatMessageAssistant(content=data.draw(st.text(max_size=20)),
                                             tool_calls=[ToolCall(id=f"c{k}", function=tool, arguments=arguments)]))
        messages.append(ChatMessageTool(content=output, tool_call_id=f"c{k}", function=tool))

    class State:
        input, sample_id = "fix m", "s1"

    state = State()
    state.messages = messages  # type: ignore[attr-defined]
    started = time.monotonic()
    score = asyncio.run(process_score()(state, None))
    assert time.monotonic() - started < SECONDS, f"took more than {SECONDS} s"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < PEAK_KIB
    assert isinstance(score.value, float) and math.isfinite(score.value)
    assert score.answer == "not judged" or score.metadata["judged"] is True, score
