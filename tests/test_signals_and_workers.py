"""A batch under faults: a worker killed from outside, Ctrl-C and SIGTERM. Run as a real process
(these are about processes and signals), each bounded in time."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SAMPLES

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX signals", allow_module_level=True)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    samples = sorted(SAMPLES.glob("example*.yaml"))
    for k in range(1500):
        shutil.copy(samples[k % len(samples)], folder / f"run{k:05d}.yaml")
    return folder


@pytest.fixture(scope="module")
def heavy_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,500 runs of 300 iterations each: a batch that takes seconds however fast scoring gets, so
    that a signal always lands while it runs."""
    import json

    folder = tmp_path_factory.mktemp("heavy")
    text = json.dumps({"run": {"format": "marathon", "max_iterations": 300}, "iterations": [
        {"iteration_telemetry": {"test_results": {"post_iteration": {"passed": (n * 7) % 25, "total": 24}}}}
        for n in range(300)]})
    for k in range(1500):
        (folder / f"run{k:05d}.json").write_text(text)
    return folder


def start(*args: str) -> subprocess.Popen:
    """``procjudge ARGS`` in a session of its own, with Ctrl-C as a terminal gives it: a suite
    started as a shell's background job (``cmd &``) has SIGINT ignored, a child inherits that
    (a handler is reset at exec, an ignored signal is not), and Python then answers it with
    nothing."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return subprocess.Popen([sys.executable, "-m", "procjudge", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, text=True)


def workers(parent: int, wanted: int = 2, wait: float = 20.0) -> list[int]:
    """The parent's worker processes, once they have started."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        children = Path(f"/proc/{parent}/task/{parent}/children")
        pids = [int(p) for p in children.read_text().split()] if children.exists() else []
        if len(pids) >= wanted:
            return pids
        time.sleep(0.05)
    return []


def test_a_killed_worker_is_survived(corpus: Path, tmp_path: Path) -> None:
    output = tmp_path / "out.csv"
    process = start("batch", str(corpus), "--format", "csv", "--jobs", "2", "--output", str(output))
    pids = workers(process.pid)
    assert pids, "no worker started"
    os.kill(pids[0], signal.SIGKILL)
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the batch hung after a worker was killed")
    assert "Traceback" not in stderr
    rows = output.read_text().splitlines()[1:]
    assert len(rows) == 1500  # every file has its row: scored again, or an error naming it
    # said on stderr, with how many runs were scored again
    assert re.search(r"a worker process died .*; [\d,]+ runs it held were scored again", stderr), stderr
    assert process.returncode in (0, 2)


@pytest.mark.parametrize("signum,code,jobs,form", [
    (signal.SIGINT, 130, "2", "json"), (signal.SIGTERM, 143, "2", "json"),
    # one job: the parent scores every run itself, inside the handler that keeps one broken run
    # from stopping a batch; the signal must not be taken for that run's error
    (signal.SIGTERM, 143, "1", "json"), (signal.SIGTERM, 143, "1", "csv")])
def test_an_interrupt_stops_quickly_without_a_traceback_or_half_a_report(
        heavy_corpus: Path, tmp_path: Path, signum: int, code: int, jobs: str, form: str) -> None:
    output = tmp_path / f"out.{form}"
    output.write_text("the previous report\n")
    process = start("batch", str(heavy_corpus), "--format", form, "--jobs", jobs, "--output", str(output))
    if jobs != "1":
        assert workers(process.pid)
    time.sleep(0.3 if jobs != "1" else 1.5)
    sent = time.monotonic()
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)  # as a terminal's Ctrl-C does: the whole group
    else:
        os.kill(process.pid, signum)  # as a supervisor does: the parent only
    try:
        _, stderr = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the batch did not stop")
    assert time.monotonic() - sent < 5
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    assert output.read_text() == "the previous report\n"  # the old report, whole; no partial one
    assert "internal error" not in stderr  # never one run's error, then a report without it
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(f".out.{form}.")]  # no temporary left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_workers_die_with_a_killed_parent(heavy_corpus: Path, tmp_path: Path) -> None:
    """A parent killed outright (SIGKILL: no handler runs) leaves no worker behind: none keeps
    computing, and none holds the parent's stdout open (a pipe reader would wait forever)."""
    process = start("batch", str(heavy_corpus), "--format", "csv", "--jobs", "2", "--output", str(tmp_path / "out.csv"))
    pids = workers(process.pid)
    assert pids
    os.kill(process.pid, signal.SIGKILL)
    try:
        process.communicate(timeout=20)  # EOF on the pipes: every holder is gone
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("a worker outlived its parent")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and
                                              "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
                                              for pid in pids):
        time.sleep(0.05)
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists()
             and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()]
    assert not alive
