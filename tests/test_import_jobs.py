"""``import --jobs N``: the logs read in worker processes, the run files written in input order,
byte for byte what one process writes; a worker that dies costs the file it held, named."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.importers.base import NothingLogged
from procjudge.importers.driver import drive, one_run_per_file

from conftest import ROOT

runner = CliRunner()
FIXTURES = ROOT / "tests" / "fixtures"
forks = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes are forked; this platform does not fork")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@forks
def test_two_workers_write_what_one_writes_byte_for_byte(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "mini_swe_agent_2" / "trajs", logs / "mini")
    shutil.copytree(FIXTURES / "swe_agent" / "trajs", logs / "swe")
    shutil.copytree(FIXTURES / "codex", logs / "codex")  # Codex rollouts, and what `codex exec --json` printed
    shutil.copy(FIXTURES / "streams" / "codex-exec-red-green.jsonl", logs / "codex")
    (logs / "mini" / "broken.traj.json").write_text("{not json")  # an error among the runs, in its place
    outputs = {}
    for jobs in ("1", "2"):
        done = runner.invoke(app, ["import", "auto", str(logs), str(FIXTURES / "harbor"),
                                   "--out", str(tmp_path / jobs), "--jobs", jobs])
        assert done.exit_code == 2 and "broken.traj.json" in done.output, done.output
        said = [text.replace(str(tmp_path / jobs), "OUT") for text in (done.stdout, done.stderr)]
        outputs[jobs] = (_tree(tmp_path / jobs), said)
    assert outputs["1"][0] and outputs["1"] == outputs["2"]


def test_jobs_zero_is_the_machines_cores_and_a_negative_count_is_refused(tmp_path: Path) -> None:
    done = runner.invoke(app, ["import", "swe-agent", str(FIXTURES / "swe_agent" / "trajs"), "--out", str(tmp_path / "o"),
                               "--jobs", "0"])
    assert done.exit_code == 0, done.output
    refused = runner.invoke(app, ["import", "swe-agent", str(FIXTURES / "swe_agent" / "trajs"), "--out",
                                  str(tmp_path / "p"), "--jobs", "-1"])
    assert refused.exit_code == 2 and "--jobs" in refused.output


@forks
def test_a_worker_that_dies_costs_the_file_it_held_and_the_rest_are_read(tmp_path: Path) -> None:
    paths = [str(tmp_path / f"{name}.json") for name in ("a", "b", "kill", "c", "d", "nothing")]
    parent = os.getpid()

    def produce(path: str) -> tuple[str, str, dict[str, Any]]:
        name = Path(path).stem
        if name == "kill" and os.getpid() != parent:
            os._exit(9)  # the worker dies as an out-of-memory kill would end it
        if name == "nothing":
            raise NothingLogged("no loop logged")
        document = {"run": {"id": f"x/{name}", "agent": "x", "challenge": name, "max_iterations": 1},
                    "iterations": [{"iteration_telemetry": {"iteration_number": 0}}]}
        return "x", name, document

    written, issues = drive(one_run_per_file(paths, produce, "a log", jobs=2), str(tmp_path / "out"), paths)
    died = [i for i in issues if "kill.json" in i.path]
    assert [i.reason for i in died] == ["not a log: the worker reading this file died (killed, or out of memory)"]
    assert written == 4 and sorted(p.stem for p in (tmp_path / "out" / "x").glob("*.json")) == ["a", "b", "c", "d"]
    assert any(i.note and "no loop logged" in i.reason for i in issues)
    assert json.loads((tmp_path / "out" / "x" / "d.json").read_text())["run"]["challenge"] == "d"


# --------------------------------------------------------------------------- the Dask engine


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed", reason="the Dask engine needs procjudge[dask]")
    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     silence_logs=40)
    yield local
    local.close()


def test_on_dask_the_files_are_read_by_the_cluster_and_written_here_in_order(tmp_path: Path, cluster: Any) -> None:
    from procjudge.importers.driver import Engine, engine

    paths = [str(tmp_path / f"{name}.json") for name in ("a", "b", "nothing", "c", "bad", "lost", "d")]
    parent = os.getpid()

    def produce(path: str) -> tuple[str, str, dict[str, Any]]:
        name = Path(path).stem
        if name == "nothing":
            raise NothingLogged("no loop logged")
        if name == "bad":
            raise ValueError("not the format")
        if name == "lost":  # what the cluster reports when it could not run the task
            raise RuntimeError("the worker left")
        document = {"run": {"id": f"x/{name}", "agent": "x", "challenge": f"read by {os.getpid()}", "max_iterations": 1},
                    "iterations": [{"iteration_telemetry": {"iteration_number": 0}}]}
        return "x", name, document

    with engine(Engine("dask", cluster.scheduler_address)):
        written, issues = drive(one_run_per_file(paths, produce, "a log", jobs=2), str(tmp_path / "out"), paths)
    assert written == 4, [i.reason for i in issues]
    assert [(Path(i.path).stem, i.note) for i in issues] == [("nothing", True), ("bad", False), ("lost", False)]
    assert "not a log: not the format" in issues[1].reason
    assert "the Dask task reading this file failed: RuntimeError: the worker left" in issues[2].reason
    readers = {json.loads((tmp_path / "out" / "x" / f"{name}.json").read_text())["run"]["challenge"] for name in "abcd"}
    assert readers and f"read by {parent}" not in readers  # read on the cluster's workers, not here


def test_import_on_dask_writes_what_one_process_writes(tmp_path: Path, cluster: Any) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "mini_swe_agent_2" / "trajs", logs / "mini")
    shutil.copytree(FIXTURES / "swe_agent" / "trajs", logs / "swe")
    (logs / "mini" / "broken.traj.json").write_text("{not json")
    outputs = {}
    for name, extra in (("one", []), ("dask", ["--engine", "dask", "--scheduler", cluster.scheduler_address])):
        done = runner.invoke(app, ["import", "auto", str(logs), str(FIXTURES / "terminal_bench"),
                                   "--out", str(tmp_path / name), *extra])
        assert done.exit_code == 2 and "broken.traj.json" in done.output, done.output
        said = [text.replace(str(tmp_path / name), "OUT") for text in (done.stdout, done.stderr)]
        outputs[name] = (_tree(tmp_path / name), said)
    assert len(outputs["one"][0]) > 5 and outputs["one"] == outputs["dask"]


def test_the_dask_engine_options_are_checked_before_anything_is_read(tmp_path: Path) -> None:
    source = str(FIXTURES / "swe_agent" / "trajs")
    alone = runner.invoke(app, ["import", "swe-agent", source, "--out", str(tmp_path / "a"), "--scheduler", "tcp://x:1"])
    assert alone.exit_code == 2 and "--scheduler needs --engine dask" in alone.output
    unknown = runner.invoke(app, ["import", "atif", source, "--out", str(tmp_path / "b"), "--engine", "spark"])
    assert unknown.exit_code == 2 and "expected local or dask" in unknown.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_scheduler_that_does_not_answer_is_named_and_nothing_is_left_behind(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the Dask engine needs procjudge[dask]")
    source = str(FIXTURES / "harbor")
    for command in (["import", "atif", source, "--out", str(tmp_path / "a")],
                    ["import", "auto", source, "--out", str(tmp_path / "b")]):
        done = runner.invoke(app, [*command, "--engine", "dask", "--scheduler", "bogus://nowhere"])
        assert done.exit_code == 2 and "--scheduler bogus://nowhere: no Dask scheduler answered there" in done.output
        assert "internal error" not in done.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    batch = runner.invoke(app, ["batch", str(ROOT / "samples"), "--engine", "dask", "--scheduler", "bogus://nowhere"])
    assert batch.exit_code == 2 and "no Dask scheduler answered there" in batch.output


def _halve(shared: int, item: int) -> int:
    if item == 3:
        raise RuntimeError("the worker left")
    return (item + shared) // 2


def test_a_dask_task_that_fails_costs_its_item_and_the_rest_come_in_order(cluster: Any) -> None:
    from procjudge.dask import map_ordered

    got = list(map_ordered(_halve, list(range(8)), cluster.scheduler_address, 2, shared=10))
    assert [value for ok, value in got if ok] == [5, 5, 6, 7, 7, 8, 8]
    failed = [value for ok, value in got if not ok]
    assert [ok for ok, _ in got] == [True, True, True, False, True, True, True, True]
    assert len(failed) == 1 and "the worker left" in str(failed[0])


@forks
def test_import_codex_reads_rollouts_and_streams_in_workers_byte_for_byte(tmp_path: Path) -> None:
    sources = [str(FIXTURES / "codex"), str(FIXTURES / "streams" / "codex-exec-red-green.jsonl")]
    for jobs in ("1", "2"):
        done = runner.invoke(app, ["import", "codex", *sources, "--out", str(tmp_path / jobs), "--jobs", jobs])
        assert done.exit_code == 0, done.output
    assert len(_tree(tmp_path / "1")) == 4 and _tree(tmp_path / "1") == _tree(tmp_path / "2")


# --------------------------------------------------------------------------- runs that share a file


@forks
@pytest.mark.parametrize("command, sources", [
    ("claude-code", ["claude_code", "streams/claude-stream-red-green.jsonl"]),  # sessions, sub-agents joined
    ("openhands", ["openhands"]),  # an instance a line
    ("inspect", ["inspect"]),  # a sample a log entry
    ("reflexion", ["realdata/ldb_records.jsonl", "realdata/mapcoder_humaneval.jsonl"]),  # a task a line
])
def test_runs_of_shared_files_are_made_in_workers_byte_for_byte(tmp_path: Path, command: str,
                                                                sources: list[str]) -> None:
    outputs = {}
    for jobs in ("1", "2"):
        done = runner.invoke(app, ["import", command, *(str(FIXTURES / s) for s in sources),
                                   "--out", str(tmp_path / jobs), "--jobs", jobs])
        said = [text.replace(str(tmp_path / jobs), "OUT") for text in (done.stdout, done.stderr)]
        outputs[jobs] = (done.exit_code, _tree(tmp_path / jobs), said)
    assert len(outputs["1"][1]) >= 3 and outputs["1"] == outputs["2"]


def _task_document(name: str) -> dict[str, Any]:
    return {"run": {"id": f"x/{name}", "agent": "x", "challenge": name, "max_iterations": 1},
            "iterations": [{"iteration_telemetry": {"iteration_number": 0}}]}


def _made_in_a_worker(parent: int, name: str) -> tuple[str, str, dict[str, Any]]:
    if name == "kill" and os.getpid() != parent:
        os._exit(9)  # the worker dies as an out-of-memory kill would end it
    if name == "nothing":
        raise NothingLogged("no loop logged")
    if name == "bad":
        raise ValueError("not the format")
    document = _task_document(name)
    document["run"]["challenge"] = f"{name} made by {'this process' if os.getpid() == parent else 'a worker'}"
    return "x", name, document


def _tasks(names: list[str], parent: int) -> list[Any]:
    import functools

    from procjudge.importers.base import ImportIssue
    from procjudge.importers.driver import Task

    made: list[Any] = []
    for number, name in enumerate(names, start=1):
        if name == "issue":
            made.append(ImportIssue("log.jsonl", number, "line 3 is not JSON"))
        elif name == "closure":  # a plug-in's lambda cannot be pickled: made here, in its place
            made.append(Task("log.jsonl", number, lambda: ("x", "closure", _task_document("closure")), label="closure"))
        else:
            made.append(Task("log.jsonl", number, functools.partial(_made_in_a_worker, parent, name), label=name,
                             what="a log"))
    return made


@forks
def test_tasks_are_made_in_workers_and_written_here_in_their_order(tmp_path: Path) -> None:
    names = ["a", "issue", "closure", "nothing", "bad", "b"] + [f"n{k}" for k in range(40)]
    written, issues = drive(_tasks(names, os.getpid()), str(tmp_path / "out"), [], jobs=2)
    assert written == 43
    assert [(i.line, i.note, i.reason) for i in issues] == [
        (2, False, "line 3 is not JSON"), (4, True, "nothing: no loop logged"), (5, False, "bad: not a log: not the format")]
    made = {p.stem: json.loads(p.read_text())["run"]["challenge"] for p in (tmp_path / "out" / "x").glob("*.json")}
    assert made["a"] == "a made by a worker" and made["n39"] == "n39 made by a worker"
    assert made["closure"] == "closure"


@forks
def test_a_worker_that_dies_making_runs_costs_only_the_run_it_died_on(tmp_path: Path) -> None:
    names = ["a", "kill", "b"] + [f"n{k}" for k in range(60)]  # "kill" shares its worker's task with others
    written, issues = drive(_tasks(names, os.getpid()), str(tmp_path / "out"), [], jobs=2)
    assert [(i.line, i.reason) for i in issues] == [
        (2, "kill: not a log: the worker making this run died (killed, or out of memory)")]
    made = {p.stem: json.loads(p.read_text())["run"]["challenge"] for p in (tmp_path / "out" / "x").glob("*.json")}
    assert written == len(names) - 1 and set(made) == set(names) - {"kill"}
    assert all(text.endswith("made by a worker") for text in made.values())  # never made here, where it would kill


def test_on_dask_tasks_are_made_by_the_cluster_and_written_here_in_order(tmp_path: Path, cluster: Any) -> None:
    from procjudge.importers.driver import Engine, engine

    names = ["a", "issue", "closure", "nothing", "bad"] + [f"n{k}" for k in range(20)]
    with engine(Engine("dask", cluster.scheduler_address)):
        written, issues = drive(_tasks(names, os.getpid()), str(tmp_path / "out"), [], jobs=2)
    assert written == 22
    assert [(i.line, i.note) for i in issues] == [(2, False), (4, True), (5, False)]
    made = {p.stem: json.loads(p.read_text())["run"]["challenge"] for p in (tmp_path / "out" / "x").glob("*.json")}
    assert made["n19"] == "n19 made by a worker" and made["closure"] == "closure"
