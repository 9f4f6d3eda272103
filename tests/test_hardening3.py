"""Hardening, round three: the new surfaces (JSON Lines, importers, configuration, reports).

Each test is one case that lost data, hung, crashed or misled before: it must now end with the
right result, or exit 2 with one line naming the file and what to do, in bounded time and memory.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from procjudge.batch import score_paths
from procjudge.bounded import Decompressed, InputLimit
from procjudge.importers.base import Writer
from procjudge.policy import DEFAULT, Limits

SAMPLES = Path(__file__).resolve().parent.parent / "sample_telemetry"


class _Zstd:
    """zstandard, imported when a case needs it (skipped with the reason where it is missing)."""

    def __getattr__(self, name: str) -> object:
        module = pytest.importorskip("zstandard", reason="the zstd cases need the zstandard package (the inspect extra)")
        return getattr(module, name)


zstandard = _Zstd()


def run(*args: str, cwd: Path | None = None, limit_bytes: int | None = None, stdin: bytes | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """procjudge in a child process (stdout is a real file descriptor there), optionally with a
    file-size limit on what it writes (a disk that fills up)."""
    def limited() -> None:
        if limit_bytes is not None:
            import signal

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "procjudge", *args], check=False, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limited, input=stdin.decode() if stdin else None,
                          env={**os.environ, "COLUMNS": "100"})


def runs_jsonl(count: int) -> bytes:
    return b"".join(json.dumps({"run": {"id": f"r{k}"}, "iterations": [
        {"iteration_telemetry": {"score": {"post_iteration": 40 + k % 50}}},
        {"iteration_telemetry": {"score": {"post_iteration": 60 + k % 40}}}]}).encode() + b"\n" for k in range(count))


def no_internal_error(done: subprocess.CompletedProcess[str]) -> None:
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


# --------------------------------------------------------------------------- 1, 5, 12: compressed input


@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_a_compressed_file_cut_short_is_an_error_not_a_shorter_file(tmp_path: Path, suffix: str) -> None:
    data = runs_jsonl(1000)
    whole = zstandard.ZstdCompressor().compress(data) if suffix == ".zst" else gzip.compress(data)
    cut = tmp_path / f"runs.jsonl{suffix}"
    cut.write_bytes(whole[:-30])
    for args in (["batch", str(cut), "-q"], ["batch", str(cut), "-q", "--jobs", "2"]):
        done = run(*args)
        no_internal_error(done)
        assert done.returncode == 2 and "cut short" in done.stderr, done.stderr
    results = list(score_paths([str(cut)]))
    assert results[-1].error is not None and "cut short" in results[-1].error


def test_several_zstd_frames_in_a_row_are_one_file(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor().compress(runs_jsonl(10))
    path = tmp_path / "two.jsonl.zst"
    path.write_bytes(frame + frame)
    assert sum(r.row is not None for r in score_paths([str(path)])) == 20


def test_a_corrupt_zstd_file_in_a_folder_loses_only_itself(tmp_path: Path) -> None:
    good = zstandard.ZstdCompressor().compress(runs_jsonl(50))
    (tmp_path / "a.jsonl.zst").write_bytes(good)
    (tmp_path / "b.jsonl.zst").write_bytes(good[:40] + b"\xff" * 40 + good[80:])
    (tmp_path / "c.jsonl.zst").write_bytes(good)
    for extra in ([], ["--jobs", "2"]):
        done = run("batch", str(tmp_path), "-f", "csv", *extra)
        no_internal_error(done)
        assert done.returncode == 2 and "b.jsonl.zst" in done.stderr and "corrupt" in done.stderr
        assert len([line for line in done.stdout.splitlines()[1:] if ",a.jsonl.zst" in line or "/a.jsonl.zst" in line]) == 50
        assert sum("c.jsonl.zst:" in line for line in done.stdout.splitlines()) == 50
    done = run("review", "sample", str(tmp_path), "--out", str(tmp_path / "queue"))
    no_internal_error(done)
    assert done.returncode == 2 and "b.jsonl.zst" in done.stderr


@pytest.mark.parametrize("codec", ["zst", "gz"])
def test_a_decompression_bomb_is_refused_at_once_naming_the_limit(tmp_path: Path, codec: str) -> None:
    newlines = b"\n" * (100 * 2**20)
    bomb = tmp_path / f"bomb.jsonl.{codec}"
    bomb.write_bytes(zstandard.ZstdCompressor(level=19).compress(newlines) if codec == "zst" else gzip.compress(newlines, 9))
    done = run("batch", str(bomb), "-q", timeout=30)
    no_internal_error(done)
    assert done.returncode == 2 and "limits.ratio" in done.stderr


def test_the_decompressed_size_limit_holds_in_bounded_memory() -> None:
    """Fed through the bounded reader, a 2 GiB zstd bomb stops at the limit; no single call
    expands beyond a small piece's worth."""
    bomb = zstandard.ZstdCompressor(level=3).compress(b"x" * (256 * 2**20))
    limits = Limits(decompressed_bytes=8 * 2**20, ratio=10**9)
    stream = Decompressed(io.BytesIO(bomb), "zst", limits)
    import tracemalloc

    tracemalloc.start()  # the peak of this read alone (the process's own peak may be higher already)
    try:
        with pytest.raises(InputLimit, match="limits.decompressed_bytes"):
            while stream.read(1 << 20):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20


def test_too_many_lines_is_one_error_naming_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(runs_jsonl(3) + b"\n" * 100)
    policy = tmp_path / "p.yaml"
    policy.write_text("limits:\n  lines: 50\n")
    done = run("batch", str(path), "-q", "--policy", str(policy))
    assert done.returncode == 2 and "more than 50 lines (limits.lines" in done.stderr
    assert "3 runs scored" in done.stdout


# --------------------------------------------------------------------------- 6, 13: Inspect archives


def eval_log(path: Path, header: object, samples: list[object]) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", header if isinstance(header, str) else json.dumps(header))
        for k, sample in enumerate(samples):
            archive.writestr(f"samples/{k}_epoch_1.json", sample if isinstance(sample, str) else json.dumps(sample))
    return str(path)


@pytest.mark.parametrize("header,samples,expected", [
    ([1, 2], [], "header.json holds list"),
    ("[" * 100_000 + "]" * 100_000, [], "header.json: not JSON"),
    ({"eval": {}}, [[1, 2]], "expected an object, got list"),
    ({"eval": {}}, ["[" * 100_000 + "]" * 100_000], "not JSON"),
    ({"eval": {}}, ["[" + "0," * (70 * 2**20) + "0]"], "limits.member_bytes"),
    ({"eval": {}}, ["[" + "[]," * (3 * 2**20) + "[]]"], "limits.member_containers"),
], ids=["header-list", "header-deep", "sample-list", "sample-deep", "member-bytes", "member-containers"])
# short ids: pytest puts the test id in PYTEST_CURRENT_TEST, and a 200,000-character id makes the
# child's environment too large to start (pytest 7.0, the lowest allowed, does not cut it)
def test_a_hostile_inspect_log_is_one_error_in_bounded_memory(tmp_path: Path, header: object, samples: list[object],
                                                              expected: str) -> None:
    log = eval_log(tmp_path / "log.eval", header, samples)
    done = run("import", "inspect", log, "--out", str(tmp_path / "out"))
    no_internal_error(done)
    assert done.returncode == 2 and expected in done.stderr, done.stderr


def test_one_corrupt_member_loses_only_its_sample(tmp_path: Path) -> None:
    log = tmp_path / "log.eval"
    eval_log(log, {"eval": {}}, [{"id": 1}, {"id": 2}])
    data = bytearray(log.read_bytes())
    start = data.index(b"samples/0_epoch_1.json") + len("samples/0_epoch_1.json")
    data[start:start + 4] = b"\x00\x01\x02\x03"  # the first member's deflate stream
    log.write_bytes(bytes(data))
    done = run("import", "inspect", str(log), "--out", str(tmp_path / "out"))
    no_internal_error(done)
    assert done.returncode == 2
    assert "sample 2" in done.stderr  # the second sample was read (nothing to judge in it: a note)


# --------------------------------------------------------------------------- 2, 14: imports into one folder


def test_importing_twice_changes_nothing_and_another_run_is_kept_beside(tmp_path: Path) -> None:
    fixtures = Path(__file__).resolve().parent / "fixtures" / "swe_agent"
    out = tmp_path / "out"
    first = run("import", "auto", str(fixtures), "--out", str(out))
    assert first.returncode == 0 and "imported 2 runs" in first.stdout
    again = run("import", "auto", str(fixtures), "--out", str(out))
    assert "2 already there, unchanged" in again.stdout
    assert len(list(out.rglob("*.json"))) == 2
    victim = min(out.rglob("*.json"))
    victim.write_text('{"iterations": [{"score": {"post_iteration": 1}}]}\n')
    third = run("import", "auto", str(fixtures), "--out", str(out))
    assert "1 beside an earlier import's file of the same name" in third.stdout and "holds another run" in third.stderr
    assert victim.read_text().startswith('{"iterations"')  # the earlier file is kept
    assert len(list(out.rglob("*.json"))) == 3
    replaced = run("import", "auto", str(fixtures), "--out", str(out), "--overwrite")
    assert "replacing an earlier import's file" in replaced.stdout and not victim.read_text().startswith('{"iterations"')


def test_concurrent_writers_of_one_name_lose_no_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    barrier = threading.Barrier(4)

    def importer(k: int) -> None:
        writer = Writer(str(out), [])
        barrier.wait()
        for task in range(50):
            document = {"run": {"id": f"t{task}", "agent": f"agent{k}"},
                        "iterations": [{"iteration_telemetry": {"score": {"post_iteration": k}}}]}
            writer.write(str(out / f"task{task}.json"), document)
    threads = [threading.Thread(target=importer, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    files = list(out.glob("*.json"))
    assert len(files) == 200
    agents = {json.loads(f.read_text())["run"]["agent"] for f in files}
    assert agents == {"agent0", "agent1", "agent2", "agent3"}
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize("target", ["file", "file/sub"])
def test_import_out_onto_a_file_is_one_line(tmp_path: Path, target: str) -> None:
    (tmp_path / "file").write_text("keep me")
    done = run("import", "auto", str(Path(__file__).parent / "fixtures" / "swe_agent"), "--out", str(tmp_path / target))
    no_internal_error(done)
    assert done.returncode == 2 and "--out" in done.stderr
    assert (tmp_path / "file").read_text() == "keep me"


def test_import_of_a_fifo_says_fifo_and_of_nothing_exits_2(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    done = run("import", "swe-agent", str(tmp_path / "pipe"), "--out", str(tmp_path / "out"), timeout=20)
    assert done.returncode == 2 and "FIFO" in done.stderr
    (tmp_path / "empty").mkdir()
    done = run("import", "auto", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "no logs found" in done.stderr and not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- 3: a full disk


@pytest.mark.parametrize("args", [["schema"], ["policy", "show"], ["explain", "--list"],
                                  ["score", str(SAMPLES / "example1_good_standard.yaml")],
                                  ["batch", str(SAMPLES)], ["import", "list"]])
def test_output_the_disk_does_not_take_is_exit_2(tmp_path: Path, args: list[str]) -> None:
    whole = run(*args)
    assert len(whole.stdout.encode()) > 300
    target = tmp_path / "out"
    with target.open("w") as handle:
        done = subprocess.run([sys.executable, "-m", "procjudge", *args], check=False, stdout=handle, stderr=subprocess.PIPE,
                              text=True, timeout=120, env={**os.environ, "COLUMNS": "100"},
                              preexec_fn=lambda: (__import__("signal").signal(__import__("signal").SIGXFSZ,
                                                                               __import__("signal").SIG_IGN),
                                                  resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))))
    assert done.returncode == 2 and "cannot write to standard output" in done.stderr, done.stderr
    assert target.stat().st_size <= 256


# --------------------------------------------------------------------------- 4, 10, 13, 14: configuration


@pytest.mark.parametrize("line,expected", [
    ("jobs = 100000", "jobs: Expected int <= 256"),
    ("jobs = -5", "jobs: Expected int >= 0"),
    ("jobs = 9223372036854775807", "jobs: Expected int <= 256"),
    ("fail_under = nan", "fail_under: expected a finite number"),
    ("fail_under_mean = inf", "fail_under_mean: expected a finite number"),
    ('exclude = ["!"]', "is not a gitignore pattern"),
])
def test_every_option_is_checked_whatever_its_source(tmp_path: Path, line: str, expected: str) -> None:
    (tmp_path / "procjudge.toml").write_text(line + "\n")
    done = run("batch", str(SAMPLES), "-q", cwd=tmp_path, timeout=60)
    assert done.returncode == 2 and expected in done.stderr and "procjudge.toml" in done.stderr, done.stderr


def test_a_command_line_pattern_git_cannot_read_is_a_usage_error(tmp_path: Path) -> None:
    done = run("batch", str(SAMPLES), "--exclude", "!", "--isolated")
    assert done.returncode == 2 and "not a gitignore pattern" in done.stderr


def test_a_parent_pyproject_whose_tool_is_not_a_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("tool = 3\n")
    (tmp_path / "sub").mkdir()
    done = run("batch", str(SAMPLES), "-q", cwd=tmp_path / "sub")
    no_internal_error(done)
    assert done.returncode == 0
    done = run("--config", str(tmp_path / "pyproject.toml"), "batch", str(SAMPLES), "-q")
    assert done.returncode == 2 and "`tool` must be a table" in done.stderr


def test_a_gate_from_a_parent_configuration_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.procjudge]\nfail_under = 100\n")
    (tmp_path / "sub").mkdir()
    done = run("batch", str(SAMPLES), "-f", "csv", cwd=tmp_path / "sub")
    assert done.returncode == 1
    assert f"runs failed the gate (fail_under (from {tmp_path / 'pyproject.toml'}) 100)" in done.stderr
    done = run("score", str(SAMPLES / "example2_bad_standard.yaml"), "-q", cwd=tmp_path / "sub")
    assert done.returncode == 1 and f"fail_under (from {tmp_path / 'pyproject.toml'}) 100" in done.stderr


@pytest.mark.parametrize("text,expected", [("2024-01-01: 3\n", "a key must be a name"),
                                           ("clamp:\n  min: 2024-01-01\n", "clamp.min: expected a number, got date")])
def test_a_policy_with_a_timestamp_is_a_policy_error(tmp_path: Path, text: str, expected: str) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(text)
    done = run("policy", "show", "--policy", str(policy))
    no_internal_error(done)
    assert done.returncode == 2 and expected in done.stderr


def test_a_file_named_like_a_glob_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "we[ird].yaml"
    target.write_text((SAMPLES / "example1_good_standard.yaml").read_text())
    done = run("batch", str(target), "-q")
    assert done.returncode == 0 and "1 run scored" in done.stdout


# --------------------------------------------------------------------------- 7, 8: errors and rows kept


def test_a_million_broken_lines_keep_memory_and_stderr_bounded(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    with path.open("wb") as handle:
        handle.write(runs_jsonl(1))
        handle.write(b"{}\n" * 200_000)
    done = run("batch", str(path), "-f", "json", "-j", "1", timeout=300)
    assert done.returncode == 2
    assert len(done.stderr) < 50_000 and "200,000 more" not in done.stderr and "more unreadable runs" in done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["errors"] == 200_000 and len(report["errors"]) == DEFAULT.limits.errors_kept


def test_the_markdown_and_table_reports_keep_a_bounded_number_of_rows(tmp_path: Path) -> None:
    from procjudge.results import Result, Row
    from procjudge.tally import WORST_KEPT, Collector, Gates

    collector = Collector(Gates(fail_under=50), limits=Limits(rows_listed=100))
    for k in range(5000):
        row = Row(path=f"r{k:05}", id=f"r{k}", process_score=float(k % 97) - 30, final_score=50.0, iterations_used=2,
                  tier="systematic_refinement", pattern="healthy_progression", anti_patterns=(), agent="a",
                  challenge="c", format="standard", raw_process_score=0.0, items=(), warnings=0, final_minus_best=0.0,
                  bucket="2", outcome="passed", gate_rounds=None, returned_round=None, source="", started_at="",
                  first_failing_test="")
        collector.add(Result(path=row.path, row=row))
    report = collector.finish()
    assert len(report.rows) == 100 and report.rows_omitted == 4900
    assert len(report.worst) == WORST_KEPT
    assert report.worst[0].process_score == -30 and report.worst[0].path == "r00000"
    scores = [r.process_score for r in report.worst]
    assert scores == sorted(scores)
    failing = sum(float(k % 97) - 30 < 50 for k in range(5000))
    assert report.summary.gate.failed_runs == failing and len(report.failed) == DEFAULT.limits.errors_kept


# --------------------------------------------------------------------------- 9, 11: escaping


def hostile_run(tmp_path: Path) -> str:
    document = {"run": {"id": "evil\n::error file=x::pwned\n::add-mask::y\u202efdp.exe", "agent": "::stop-commands::tok"},
                "iterations": [{"iteration_telemetry": {"score": {"post_iteration": 40},
                                                        "test_results": {"post_iteration": {"passed": 1, "total": 2}}},
                                "iteration_feedback": {"tests": {"failures": [{"name": "t\n::error::x **b** ~~s~~ #1"}]}}},
                               {"iteration_telemetry": {"score": {"post_iteration": 80}}}]}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(document))
    other = dict(document, run={"id": "**bold** ~~strike~~ #1 _u_", "agent": "a"})
    (tmp_path / "other.json").write_text(json.dumps(other))
    return str(path)


@pytest.mark.parametrize("args", [["score", "{evil}"], ["batch", "{dir}"], ["compare", "{evil}", "{other}"],
                                  ["batch", "{dir}", "-f", "github"], ["score", "{evil}", "-f", "github"]])
def test_no_line_of_any_text_report_is_a_workflow_command_from_input(tmp_path: Path, args: list[str]) -> None:
    evil = hostile_run(tmp_path)
    done = run(*[a.format(evil=evil, dir=tmp_path, other=tmp_path / "other.json") for a in args])
    for line in (done.stdout + done.stderr).splitlines():
        assert not line.lstrip(" \x1b[0123456789;m").startswith(("::error file=x", "::add-mask", "::stop-commands")), line
        assert "\u202e" not in line


def test_junit_keeps_newlines_as_references_and_markdown_renders_no_formatting(tmp_path: Path) -> None:
    hostile_run(tmp_path)
    junit = run("batch", str(tmp_path), "-f", "junit").stdout
    assert "&#10;::error file=x::pwned" in junit and "\u202e" not in junit
    from xml.etree import ElementTree

    names = [case.get("name") for case in ElementTree.fromstring(junit).iter("testcase")]
    assert any(name and name.startswith("evil\n::error") for name in names)  # read back exactly
    markdown = run("batch", str(tmp_path), "-f", "markdown").stdout
    assert "**bold**" not in markdown and "~~strike~~" not in markdown and "#1" not in markdown
    assert "\\*\\*bold\\*\\*" in markdown and "\\~\\~strike\\~\\~" in markdown


def test_the_html_report_shows_bidirectional_overrides_as_escapes(tmp_path: Path) -> None:
    hostile_run(tmp_path)
    page = tmp_path / "report.html"
    assert run("batch", str(tmp_path), "-f", "html", "-o", str(page)).returncode == 0
    text = page.read_text()
    assert "\u202e" not in text and "\\u202efdp.exe" in text
