"""What a CI user leans on: --strict, targets from standard input, a JSON-lines file given to
score, globs that match nothing, global options after the command, and drift and compare taking
the options the other commands take."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from procjudge.cli import app, hoist_globals, main

from conftest import SAMPLES

runner = CliRunner()
GOOD = SAMPLES / "example1_good_standard.yaml"
TYPO = ("run: {id: typo}\niterations:\n- {scroe: {post_iteration: 50}, score: {post_iteration: 40}}\n"
        "- {score: {post_iteration: 60}}\n")


def test_strict_refuses_a_run_whose_input_drew_a_warning(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(TYPO)
    lenient = runner.invoke(app, ["--isolated", "score", str(typo)])
    assert lenient.exit_code == 0 and "unknown key" in lenient.stderr
    strict = runner.invoke(app, ["--isolated", "score", str(typo), "--strict"])
    assert strict.exit_code == 2 and "--strict: unknown key `iterations[0].scroe`" in strict.stderr and not strict.stdout
    batch = runner.invoke(app, ["--isolated", "batch", str(typo), str(GOOD), "--strict", "-f", "json", "-j", "1"])
    data = json.loads(batch.stdout)
    assert batch.exit_code == 2 and data["summary"]["runs_scored"] == 1
    assert "--strict: unknown key" in data["errors"][0]["message"]
    # the configuration turns it on; --no-strict turns it off again
    (tmp_path / "procjudge.toml").write_text("strict = true\n")
    configured = runner.invoke(app, ["--config", str(tmp_path / "procjudge.toml"), "score", str(typo)])
    assert configured.exit_code == 2
    assert runner.invoke(app, ["--config", str(tmp_path / "procjudge.toml"), "score", str(typo), "--no-strict"]).exit_code == 0
    # what an importer noticed about its log is a note, not an input warning
    noted = yaml.safe_load(GOOD.read_text())
    noted["run"]["notes"] = ["the log's last test run was cut"]
    (tmp_path / "noted.yaml").write_text(yaml.safe_dump(noted))
    assert runner.invoke(app, ["--isolated", "score", str(tmp_path / "noted.yaml"), "--strict", "-q"]).exit_code == 0


def test_batch_reads_targets_or_json_lines_from_standard_input(tmp_path: Path) -> None:
    listed = runner.invoke(app, ["--isolated", "batch", "-", "-f", "csv", "-j", "1"],
                           input=f"{GOOD}\n# a comment\n\n{SAMPLES / 'drift'}\n")
    expected = 1 + 1 + len(list((SAMPLES / "drift").glob("*.yaml")))  # the header, the file, the folder's runs
    assert listed.exit_code == 0 and len(listed.stdout.strip().splitlines()) == expected
    document = json.dumps(yaml.safe_load(GOOD.read_text()))
    streamed = runner.invoke(app, ["--isolated", "batch", "-", "-f", "json", "-j", "1"], input=f"{document}\n{document}\n")
    runs = json.loads(streamed.stdout)["runs"]
    assert streamed.exit_code == 0 and [r["run"]["path"].rsplit(":", 1)[1] for r in runs] == ["1", "2"]
    assert all(r["run"]["path"].endswith((".jsonl:1", ".jsonl:2")) for r in runs)


def test_score_on_a_json_lines_file_reads_one_run_and_points_at_batch_for_several(tmp_path: Path) -> None:
    document = json.dumps(yaml.safe_load(GOOD.read_text()))
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text(document + "\n")
    two.write_text(document + "\n" + document + "\n")
    assert runner.invoke(app, ["--isolated", "score", str(one), "-q"]).exit_code == 0
    several = runner.invoke(app, ["--isolated", "score", str(two)])
    assert several.exit_code == 2 and f"procjudge batch {two} scores each of them" in several.stderr


def test_a_glob_that_matches_nothing_is_a_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--isolated", "batch", str(GOOD), str(tmp_path / "nope" / "*.yaml"), "-q", "-j", "1"])
    assert result.exit_code == 0 and f"warning: {tmp_path / 'nope' / '*.yaml'} matches no file" in result.stderr


def test_global_options_work_after_the_command() -> None:
    assert hoist_globals(["batch", "runs", "--isolated", "-f", "csv"]) == ["--isolated", "batch", "runs", "-f", "csv"]
    assert hoist_globals(["score", "x.yaml", "--config", "ci.toml"]) == ["--config", "ci.toml", "score", "x.yaml"]
    assert hoist_globals(["score", "--", "--isolated"]) == ["score", "--", "--isolated"]
    done = subprocess.run([sys.executable, "-m", "procjudge", "score", str(GOOD), "-q", "--isolated"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert main(["score", str(GOOD), "--config", "/nonexistent/ci.toml"]) == 2  # read, as before the command


def test_drift_and_compare_take_quiet_output_and_exit_zero(tmp_path: Path) -> None:
    drift = SAMPLES / "drift"
    quiet = runner.invoke(app, ["--isolated", "drift", str(drift), "-q", "-j", "1"])
    assert quiet.exit_code == 1 and quiet.stdout.startswith("ALERT ") and "window" not in quiet.stdout
    report = tmp_path / "drift.json"
    written = runner.invoke(app, ["--isolated", "drift", str(drift), "-f", "json", "-o", str(report), "--exit-zero", "-j", "1"])
    assert written.exit_code == 0 and not written.stdout and json.loads(report.read_text())["alerts"]
    other = SAMPLES / "example2_bad_standard.yaml"
    line = runner.invoke(app, ["--isolated", "compare", str(GOOD), str(other), "-q", "-o", str(tmp_path / "c.txt")])
    assert line.exit_code == 0 and (tmp_path / "c.txt").read_text().startswith("winner: A by ")
    assert len((tmp_path / "c.txt").read_text().splitlines()) == 1
