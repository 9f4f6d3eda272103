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
