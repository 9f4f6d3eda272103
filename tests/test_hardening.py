"""Hostile and unlucky input: every case here hung, crashed or cost without bound before.

Each test names the case; all must end quickly with exit 2 and a one-line message naming the file
(and the line where there is one), never a traceback or an "internal error"."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def deadline():
    """A case that hangs fails here after 60 s instead of stopping the suite."""
    def expire(signum, frame):
        raise TimeoutError("the case did not finish in 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


OK = ("iterations:\n  - iteration_telemetry: {score: {post_iteration: 50}}\n"
      "  - iteration_telemetry: {score: {post_iteration: 60}}\n")


def score(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["score", *args])
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result.exit_code, result.output


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "run.yaml"
    os.mkfifo(path)
    return str(path)


def test_a_fifo_is_refused_not_opened(fifo: str, tmp_path: Path) -> None:
    started = time.monotonic()
    code, output = score(fifo)
    assert code == 2 and "is a FIFO, not a regular file" in output
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", fifo)
    assert code == 2 and "is a FIFO" in output
    batch = runner.invoke(app, ["batch", str(tmp_path), "--format", "json", "--jobs", "1"])
    assert batch.exit_code == 2 and "is a FIFO" in batch.output
    assert time.monotonic() - started < 10


def test_a_device_is_refused() -> None:
    code, output = score("/dev/zero")
    assert code == 2 and "is a device" in output


@pytest.mark.parametrize("literal", ["0x" + "f" * 5000, "0b" + "1" * 20000])
def test_huge_integers_are_errors_at_their_line(tmp_path: Path, literal: str) -> None:
    path = write(tmp_path, "r.yaml",
                 f"iterations:\n  - iteration_telemetry: {{iteration_number: {literal}, score: {{post_iteration: 5}}}}\n")
    code, output = score(path)
    assert code == 2 and "r.yaml:2:" in output and "bits" in output


@pytest.mark.parametrize("value,expected", [("!!timestamp 2026-13-45", "as timestamp"), ("!!int ''", "as int")])
def test_malformed_tagged_values_are_errors_at_their_line(tmp_path: Path, value: str, expected: str) -> None:
    path = write(tmp_path, "r.yaml",
                 f"iterations:\n  - iteration_telemetry: {{timestamp_start: {value}, score: {{post_iteration: 5}}}}\n")
    code, output = score(path)
    assert code == 2 and "r.yaml:2:" in output and expected in output


def test_feedback_with_more_passes_than_tests_is_a_validation_error(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", "iterations:\n  - iteration_telemetry: {score: {post_iteration: 5}}\n"
                                     "    iteration_feedback: {tests: {passed: 30, total: 10}}\n")
    code, output = score(path)
    assert code == 2 and "iteration_feedback.tests.passed" in output and "cannot exceed total" in output


def test_duplicate_keys_are_errors_naming_both_lines(tmp_path: Path) -> None:
    code, output = score(write(tmp_path, "r.yaml", OK + OK))
    assert code == 2 and "twice (first on line 1, again on line 4)" in output
    text = '{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 5},\n "score": {"post_iteration": 9}}}]}\n'
    code, output = score(write(tmp_path, "r.json", text))
    assert code == 2 and "given twice" in output and "lines 1 and 2" in output
    policy = write(tmp_path, "p.yaml", "clamp: {min: -30}\nclamp: {max: 5}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "p.yaml:2:1" in output and "twice" in output


def test_a_policy_that_validates_but_divides_by_zero_is_refused(tmp_path: Path) -> None:
    policy = write(tmp_path, "p.yaml", "formats: {standard: {time_profile: [0, 0, 0, 0]}}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "formats.standard.time_profile" in output and "positive sum" in output
    policy = write(tmp_path, "q.yaml", "clamp: {min: 40, max: -25}\n")
    code, output = score(write(tmp_path, "ok.yaml", OK), "--policy", policy)
    assert code == 2 and "clamp.min" in output


def test_one_large_string_aliased_many_times_is_an_alias_bomb(tmp_path: Path) -> None:
    doc = "big: &b " + "x" * 1_300_000 + "\niterations:\n" + "".join(
        "  - iteration_telemetry: {score: {post_iteration: 5}, changes: {diff: *b}}\n" for _ in range(1000))
    started = time.monotonic()
    code, output = score(write(tmp_path, "r.yaml", doc))
    assert code == 2 and "alias bomb" in output
    assert time.monotonic() - started < 10


def test_pairs_are_counted_by_the_alias_check(tmp_path: Path) -> None:
    doc = "a: &a !!pairs [" + ", ".join(["{k: v}"] * 10) + "]\n"
    for k in range(1, 9):
        doc += f"n{k}: &n{k} !!pairs [" + ", ".join([f"{{k: *{'a' if k == 1 else f'n{k - 1}'}}}"] * 10) + "]\n"
    doc += "iterations: [{iteration_telemetry: {score: {post_iteration: 5}}}]\n"
    code, output = score(write(tmp_path, "r.yaml", doc))
    assert code == 2 and "alias bomb" in output


def test_a_huge_unknown_key_and_a_million_unknown_keys_cost_little(tmp_path: Path) -> None:
    started = time.monotonic()
    path = write(tmp_path, "k.json", json.dumps({"iterations": [{"iteration_telemetry": {
        "score": {"post_iteration": 5}, "k" * 5_000_000: 1}}]}))
    code, output = score(path)
    assert code == 0 and "(5,000,000 characters)" in output
    many = {f"k{i}": 1 for i in range(200_000)}
    path = write(tmp_path, "m.json", json.dumps({"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 5},
                                                                                         **many}}]}))
    result = runner.invoke(app, ["score", path, "--format", "json"])
    assert result.exit_code == 0 and "199,980 more unknown keys" in result.stderr
    assert result.stderr.count("unknown key `") == 20
    assert time.monotonic() - started < 30


def test_control_characters_in_an_unknown_key_stay_on_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", json.dumps({"iterations": [{"iteration_telemetry": {
        "score": {"post_iteration": 5}, "x\n::error::pwned": 1}}]}))
    code, output = score(path)
    assert code == 0 and "\n::error::" not in output and "\\n::error::pwned" in output


# --------------------------------------------------------------------------- safe writes


def record(task: str, solved: bool = True) -> str:
    return json.dumps({"task_id": task, "implementations": ["def f():\n    return 1\n"],
                       "test_feedback": [[]], "given_tests": ["assert f() == 1"], "is_solved": solved}) + "\n"


def test_batch_output_onto_a_hard_link_of_an_input_is_refused(tmp_path: Path) -> None:
    run = write(tmp_path, "run.yaml", OK)
    os.link(run, tmp_path / "report.json")
    result = runner.invoke(app, ["batch", run, "--format", "json", "--jobs", "1", "--output", str(tmp_path / "report.json")])
    assert result.exit_code == 2 and "is the input file" in result.output
    assert Path(run).read_text() == OK


def test_unwritable_output_targets_are_one_line_errors(tmp_path: Path) -> None:
    run = write(tmp_path, "run.yaml", OK)
    for target in (tmp_path / "missing" / "r.json", tmp_path):
        result = runner.invoke(app, ["batch", run, "--format", "json", "--jobs", "1", "--output", str(target)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert ("does not exist" in result.output) or ("is a folder" in result.output)


def test_import_never_follows_a_symlink_out_of_its_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").symlink_to(outside, target_is_directory=True)
    log = write(tmp_path, "log.jsonl", record("T/1"))
    result = runner.invoke(app, ["import", "reflexion", log, "--out", str(out), "--agent", "x"])
    assert result.exit_code == 2 and "leads outside --out" in result.output
    assert list(outside.iterdir()) == []


def test_import_never_overwrites_its_own_input(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "x").mkdir(parents=True)
    log = out / "x" / "T_1.json"  # the input sits where the output would go
    log.write_text(record("T/1"))
    result = runner.invoke(app, ["import", "reflexion", str(log), "--out", str(out), "--agent", "x"])
    assert result.exit_code == 2 and "is the input file" in result.output
    assert log.read_text() == record("T/1")


def test_colliding_and_long_task_ids_are_all_written(tmp_path: Path) -> None:
    long_id = "HumanEval/" + "x" * 300
    log = write(tmp_path, "log.jsonl", record("T/1") + record("T 1") + record(long_id) + record("after"))
    result = runner.invoke(app, ["import", "reflexion", log, "--out", str(tmp_path / "out"), "--agent", "x"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "out" / "x").iterdir())
    assert "T_1.json" in names and "T_1-2.json" in names and "after.json" in names
    assert any(len(n) <= 106 and n.startswith("HumanEval_xxx") for n in names)
    assert "imported 4 runs" in result.stdout and "T_1-2.json" in result.output


def test_an_import_line_over_the_limit_is_skipped_in_bounded_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from procjudge.importers import base, reflexion

    monkeypatch.setattr(base, "MAX_LINE_BYTES", 1000)
    log = write(tmp_path, "log.jsonl", '{"task_id": "' + "x" * 5000 + '"}\n' + record("after"))
    written, issues = reflexion.import_files([log], str(tmp_path / "out"), agent="x")
    assert written == 1 and [(i.line, "longer than" in i.reason) for i in issues] == [(1, True)]


# --------------------------------------------------------------------------- injection and gates


def test_newlines_from_input_never_start_a_workflow_command(tmp_path: Path) -> None:
    doc = {"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50},
                                                    "test_results": {"tests": [{"name": "a\n::error::pwned",
                                                                                "outcome": "passed"}]}}},
                          {"iteration_telemetry": {"score": {"post_iteration": 40},
                                                    "test_results": {"tests": [{"name": "a\n::error::pwned",
                                                                                "outcome": "failed"}]}}}]}
    run = write(tmp_path, "bad\x1b[31m.json", json.dumps(doc))
    result = runner.invoke(app, ["batch", run, "--format", "github", "--jobs", "1"])
    lines = result.output.splitlines()
    assert not any(line.startswith("::error::pwned") for line in lines)
    assert "\x1b" not in result.output
    result = runner.invoke(app, ["score", write(tmp_path, "k.json", json.dumps(
        {"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 5}, "x\n::add-mask::y": 1}}]}))])
    assert not any(line.startswith("::add-mask::") for line in result.output.splitlines())


def test_markdown_from_input_is_not_rendered(tmp_path: Path) -> None:
    doc = {"run": {"id": "[click](https://evil.example) ![img](https://evil.example/x.png) @octocat"},
           "iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50}}}]}
    run = write(tmp_path, "r.json", json.dumps(doc))
    for command in (["score", run, "--format", "markdown"], ["batch", run, "--format", "markdown", "--jobs", "1"]):
        output = runner.invoke(app, command).stdout
        assert "](https://" not in output and "![" not in output and "@octocat" not in output
        assert "evil.example" in output  # shown, as text


def test_csv_cells_cannot_split_a_row_or_start_a_formula(tmp_path: Path) -> None:
    doc = {"run": {"id": "x\r=HYPERLINK(\"http://e\")", "agent": "a\n@SUM(1)\x07"},
           "iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50}}}]}
    run = write(tmp_path, "r.json", json.dumps(doc))
    output = runner.invoke(app, ["batch", run, "--format", "csv", "--jobs", "1"]).stdout
    import csv as csv_module
    import io

    rows = list(csv_module.reader(io.StringIO(output)))
    assert len(rows) == 2 and "\r" not in output.replace("\r\n", "") and "\x07" not in output
    assert all(not cell.startswith(("=", "+", "@")) for cell in rows[1] if not cell.lstrip("-").replace(".", "").isdigit())


@pytest.mark.parametrize("command", [["batch", "--fail-under", "nan"], ["score", "--fail-under", "nan"],
                                     ["compare", "--fail-if-worse", "nan"], ["batch", "--jobs", "100000"]])
def test_nan_thresholds_and_absurd_jobs_are_usage_errors(tmp_path: Path, command: list[str]) -> None:
    run = write(tmp_path, "r.yaml", OK)
    args = [command[0], run] + ([run] if command[0] == "compare" else []) + command[1:]
    result = runner.invoke(app, args)
    assert result.exit_code == 2


def test_the_markdown_summary_never_says_passed_when_the_exit_code_is_2(tmp_path: Path) -> None:
    good = write(tmp_path, "good.yaml", OK)
    write(tmp_path, "bad.yaml", "iterations: 3\n")
    result = runner.invoke(app, ["batch", str(tmp_path), "--format", "markdown", "--jobs", "1"])
    assert result.exit_code == 2 and good
    assert "gate passed" not in result.stdout and "unreadable" in result.stdout


def test_json_and_html_never_say_the_gate_passed_when_a_file_was_unreadable(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", OK)
    write(tmp_path, "bad.yaml", "iterations: 3\n")
    result = runner.invoke(app, ["batch", str(tmp_path), "--format", "json", "--jobs", "1"])
    gate = json.loads(result.stdout)["summary"]["gate"]
    assert result.exit_code == 2
    assert (gate["passed"], gate["unreadable"], gate["failed_runs"]) == (False, 1, 0)
    page = runner.invoke(app, ["batch", str(tmp_path), "--format", "html", "--jobs", "1"]).stdout
    assert ">incomplete</b><span>gate (0 runs failed, 1 unreadable)" in page
    (tmp_path / "bad.yaml").unlink()
    clean = runner.invoke(app, ["batch", str(tmp_path), "--format", "json", "--jobs", "1"])
    assert clean.exit_code == 0 and json.loads(clean.stdout)["summary"]["gate"]["passed"] is True


@pytest.mark.parametrize("value", ["", ",", "test_chasing,", " , test_chasing"])
def test_an_empty_fail_on_name_is_refused_not_read_as_no_gate(tmp_path: Path, value: str) -> None:
    write(tmp_path, "good.yaml", OK)
    result = runner.invoke(app, ["batch", str(tmp_path), "--fail-on", value])
    assert result.exit_code == 2 and "--fail-on: an empty finding name" in result.stderr


def test_fail_on_none_turns_the_configured_finding_gate_off(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", OK)
    (tmp_path / "procjudge.toml").write_text('fail_on = ["test_chasing"]\n')
    on = runner.invoke(app, ["--config", str(tmp_path / "procjudge.toml"), "batch", str(tmp_path / "good.yaml"),
                             "-f", "json"])
    assert json.loads(on.stdout)["summary"]["gate"]["fail_on"] == ["test_chasing"]
    off = runner.invoke(app, ["--config", str(tmp_path / "procjudge.toml"), "batch", str(tmp_path / "good.yaml"),
                              "-f", "json", "--fail-on", "none"])
    assert off.exit_code == 0 and json.loads(off.stdout)["summary"]["gate"]["fail_on"] == []
    mixed = runner.invoke(app, ["batch", str(tmp_path / "good.yaml"), "--fail-on", "none,test_chasing"])
    assert mixed.exit_code == 2 and "cannot be given with rule ids" in mixed.stderr


def test_plot_targets_are_checked_and_written_whole(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    a = write(tmp_path, "a.yaml", OK)
    b = write(tmp_path, "b.yaml", OK)
    for target, expected in ((tmp_path / "nope" / "c.png", "does not exist"), (Path(a), "is the input file")):
        result = runner.invoke(app, ["compare", a, b, "--plot", str(target)])
        assert result.exit_code == 2 and expected in result.output and "Traceback" not in result.output
    assert Path(a).read_text() == OK
    result = runner.invoke(app, ["compare", a, b, "--plot", str(tmp_path / "c.png")])
    assert result.exit_code == 0 and (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_a_closed_stdout_is_exit_2_not_silence(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = write(tmp_path, "r.yaml", OK)
    for fmt in ("json", "table"):
        closed = subprocess.run(["bash", "-c", f'"{sys.executable}" -m procjudge score "{run}" --format {fmt} >&-'],
                                capture_output=True, text=True, timeout=60, check=False)
        assert closed.returncode == 2 and "standard output is closed" in closed.stderr



def test_a_full_stdout_is_exit_2_not_silence(tmp_path: Path) -> None:
    import stat
    import subprocess
    import sys

    try:
        device = stat.S_ISCHR(os.stat("/dev/full").st_mode)
    except OSError:
        device = False
    if not device:  # a container may have no /dev/full, or a plain file in its place
        pytest.skip("/dev/full is not the character device that refuses every write here")
    run = write(tmp_path, "r.yaml", OK)
    full = subprocess.run(["bash", "-c", f'"{sys.executable}" -m procjudge score "{run}" > /dev/full'],
                          capture_output=True, text=True, timeout=60, check=False)
    assert full.returncode == 2 and "No space left" in full.stderr and "Traceback" not in full.stderr


def test_repeated_fail_on_keeps_every_gate(tmp_path: Path) -> None:
    run = str(Path(__file__).parent.parent / "sample_telemetry" / "example2_bad_standard.yaml")
    # the run has shotgun_debugging: a second --fail-on must not replace the first
    result = runner.invoke(app, ["batch", run, "--jobs", "1", "--format", "csv",
                                 "--fail-on", "shotgun_debugging", "--fail-on", "test_chasing"])
    assert result.exit_code == 1


def test_a_written_report_gets_the_permissions_of_a_new_file_or_of_the_one_it_replaces(tmp_path: Path) -> None:
    import os

    from procjudge.safe_io import atomic_write

    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.html"
        with atomic_write(str(fresh)) as handle:
            handle.write("x")
        assert fresh.stat().st_mode & 0o777 == 0o644  # not the temporary file's private 0600
        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o640)
        with atomic_write(str(kept)) as handle:
            handle.write("new")
        assert kept.read_text() == "new" and kept.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


def test_a_second_import_counts_its_notes_as_notes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write(tmp_path, "one.jsonl", record("T/1") + record("T/2"))
    second = write(tmp_path, "two.jsonl", record("T/1", solved=False) + record("T/2", solved=False))
    assert runner.invoke(app, ["import", "reflexion", first, "--out", str(out), "--agent", "x"]).exit_code == 0
    again = runner.invoke(app, ["import", "reflexion", second, "--out", str(out), "--agent", "x"])
    assert again.exit_code == 0, again.output
    summary = again.stdout.strip().splitlines()[-1]
    assert "2 beside an earlier import's file of the same name" in summary and "2 notes" in summary, summary
    assert "nothing to judge" not in summary


def test_a_full_disk_during_import_is_named_as_such_not_as_unreadable_records(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from procjudge.importers import base
    from procjudge.safe_io import WriteError

    def full(path: str, data: bytes, replace: bool) -> str:
        raise WriteError(f"{path}: cannot write: No space left on device")

    monkeypatch.setattr(base, "_publish", full)
    log = write(tmp_path, "log.jsonl", "".join(record(f"T/{k}") for k in range(6)))
    result = runner.invoke(app, ["import", "reflexion", log, "--out", str(tmp_path / "out"), "--agent", "x"])
    assert result.exit_code == 2
    assert "6 runs were read but could not be written under --out" in result.stderr
    assert "No space left on device" in result.stderr and "could not be read" not in result.stderr
