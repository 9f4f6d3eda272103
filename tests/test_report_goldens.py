"""Golden outputs of batch (every format) and compare (runs and folders, every format).
Regenerate with `pytest --update-goldens` and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app

from conftest import ROOT

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"
BATCH_INPUTS = ["sample_telemetry/example1_good_standard.yaml", "sample_telemetry/example2_bad_standard.yaml",
                "sample_telemetry/gate_replay.yaml", "sample_telemetry/sprint_double_submit.yaml"]
BATCH_FORMATS = {"table": "txt", "json": "json", "csv": "csv", "markdown": "md", "junit": "xml", "github": "github",
                 "sarif": "sarif", "gitlab": "gitlab.json"}
COMPARE_FORMATS = {"table": "txt", "json": "json", "markdown": "md"}
COMPARES = {
    "runs": ["sample_telemetry/example1_good_standard.yaml", "sample_telemetry/example2_bad_standard.yaml"],
    "folders": ["tests/fixtures/compare/a", "tests/fixtures/compare/b"],
}


def invoke(args: list[str], columns: int = 120) -> str:
    """Run from the repository root with relative paths, so goldens hold no machine paths."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        result = runner.invoke(app, args, env={"COLUMNS": str(columns)})
    finally:
        os.chdir(here)
    assert result.exit_code in (0, 1), result.output
    # SARIF names the project root it resolves relative paths against: a machine path
    return result.stdout.replace(ROOT.as_uri() + "/", "file:///PROJECT/")


def check(name: str, output: str, update: bool) -> None:
    golden = GOLDEN / name
    if update:
        golden.write_text(output, encoding="utf-8")
    assert golden.exists(), f"missing golden {name}: run pytest --update-goldens"
    assert output == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", list(BATCH_FORMATS))
def test_batch_golden(fmt: str, update_goldens: bool) -> None:
    output = invoke(["batch", *BATCH_INPUTS, "--format", fmt, "--jobs", "1", "--fail-on", "returned_worse"])
    check(f"batch.{BATCH_FORMATS[fmt]}", output, update_goldens)


@pytest.mark.parametrize("fmt", list(COMPARE_FORMATS))
@pytest.mark.parametrize("mode", list(COMPARES))
def test_compare_golden(mode: str, fmt: str, update_goldens: bool) -> None:
    output = invoke(["compare", *COMPARES[mode], "--format", fmt, "--jobs", "1", "--seed", "0"])
    check(f"compare_{mode}.{COMPARE_FORMATS[fmt]}", output, update_goldens)


def test_batch_goldens_agree_with_each_other() -> None:
    """The formats are views of one result: the run count and the failed gate agree across them."""
    import csv
    import json
    from xml.etree import ElementTree

    data = json.loads((GOLDEN / "batch.json").read_text())
    rows = list(csv.DictReader((GOLDEN / "batch.csv").read_text().splitlines()))
    suite = ElementTree.fromstring((GOLDEN / "batch.xml").read_text())
    assert len(data["runs"]) == len(rows) == int(suite.get("tests")) == 4
    failed = [r["id"] for r in rows if r["gate"] == "fail"]
    assert failed == ["gate-replay"] and int(suite.get("failures")) == 1
    assert data["summary"]["gate"]["failed_runs"] == 1
    assert "gate-replay" in (GOLDEN / "batch.github").read_text()


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report read on a terminal (the runner's output is not one): identifiers may be cut."""
    from procjudge.render import fit

    monkeypatch.setattr(fit, "on_terminal", lambda console: True)


@pytest.mark.parametrize("command", ["batch", "compare_runs", "compare_folders"])
def test_tables_at_80_columns(command: str, update_goldens: bool, terminal: None) -> None:
    """What an 80-column terminal gets: no line wider than 80, and every run id whole on one line
    or shortened from the left with an ellipsis, never folded into pieces."""
    args = (["batch", *BATCH_INPUTS, "--jobs", "1"] if command == "batch"
            else ["compare", *COMPARES[command.split("_")[1]], "--jobs", "1", "--seed", "0"])
    output = invoke(args, columns=80)
    check(f"{command}.80.txt", output, update_goldens)
    assert max(len(line) for line in output.splitlines()) <= 80
    ids = (["user-registration/agent-a", "user-registration/agent-b", "gate-replay", "sprint/double-submit"]
           if command == "batch" else [])
    for run_id in ids:
        assert any(run_id in line for line in output.splitlines()), run_id


def test_a_long_id_is_shortened_from_the_left(tmp_path: Path, terminal: None) -> None:
    long_id = "ldb/humaneval/gpt-3.5-turbo-0613-function-level/HumanEval_123"
    (tmp_path / "run.yaml").write_text(f"run: {{id: {long_id}}}\niterations:\n  - score: {{post_iteration: 50}}\n")
    result = runner.invoke(app, ["batch", str(tmp_path)], env={"COLUMNS": "80"})
    line = next(line for line in result.stdout.splitlines() if "HumanEval_123" in line)
    cell = line.split("  ")[0].strip()
    assert cell.startswith("…") and long_id.endswith(cell[1:]) and len(line) <= 80


LONG_AGENT = "reflexion/gpt-3.5-turbo-0613-with-a-long-suffix"
LONG_CHALLENGE = "HumanEval/a-challenge-name-long-enough-to-be-cut-at-eighty-columns-{}"


def long_names(tmp_path: Path) -> tuple[Path, Path]:
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        for k in (1, 2):
            (tmp_path / side / f"r{k}.yaml").write_text(
                f"run: {{id: '{side}/{LONG_CHALLENGE.format(k)}', agent: '{LONG_AGENT}-{side}', "
                f"challenge: '{LONG_CHALLENGE.format(k)}'}}\niterations:\n  - score: {{post_iteration: 50}}\n"
                f"  - score: {{post_iteration: 70}}\n")
    return tmp_path / "a", tmp_path / "b"


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_off_a_terminal_no_identifier_is_cut(tmp_path: Path, columns: int) -> None:
    """A pipe, a file, a CI log: run ids, agents and challenges whole on one line each, whatever
    the width, where a terminal would shorten them with an ellipsis."""
    a, b = long_names(tmp_path)
    outputs = [runner.invoke(app, args, env={"COLUMNS": str(columns)}).stdout
               for args in (["batch", str(a), str(b)], ["compare", str(a), str(b)])]
    written = tmp_path / "report.txt"
    runner.invoke(app, ["batch", str(a), str(b), "-o", str(written)], env={"COLUMNS": str(columns)})
    outputs.append(written.read_text())
    for output in outputs:
        assert "…" not in output, output
        lines = output.splitlines()
        for name in [f"{LONG_AGENT}-a", f"{LONG_AGENT}-b", LONG_CHALLENGE.format(1), LONG_CHALLENGE.format(2)]:
            assert any(name in line for line in lines), (name, output)
    header = next(line for line in outputs[0].splitlines() if line.startswith("run "))
    assert header.split()[-1] == "anti-patterns"  # the last header on the header's line, not wrapped


@pytest.mark.parametrize("columns", [60, 80, 120, 200])
def test_the_batch_table_is_one_line_per_run_in_one_layout_at_any_width(columns: int, terminal: None) -> None:
    """On a terminal: the same columns in the same order at every width, one line per run, ids cut
    with an ellipsis and never split, and no line ending in a space."""
    output = invoke(["batch", "tests/labelled/runs", "--jobs", "1"], columns=columns)
    lines = output.splitlines()
    header = next(line for line in lines if line.startswith("run "))
    assert header.split()[:6] == ["run", "process", "final", "it", "tier", "held"]
    runs = lines[lines.index(header) + 1: lines.index(header) + 1 + 61]
    assert len(runs) == 61 and all(len(line) <= max(columns, 60) for line in runs)
    assert not any(line.startswith(" ") for line in runs)  # no id wrapped onto a second line
    assert not [line for line in lines if line != line.rstrip()]


@pytest.mark.parametrize("args", [["score", "sample_telemetry/example2_bad_standard.yaml"],
                                  ["compare", "sample_telemetry/example1_good_standard.yaml",
                                   "sample_telemetry/example2_bad_standard.yaml"],
                                  ["explain", "test_chasing"], ["explain", "--list"], ["drift", "sample_telemetry/drift"],
                                  ["policy", "show"], ["batch", "sample_telemetry", "-q"]])
def test_no_text_output_ends_a_line_with_whitespace(args: list[str]) -> None:
    for columns in (80, 120):
        here = os.getcwd()
        os.chdir(ROOT)
        try:
            output = runner.invoke(app, [*args, "--jobs", "1"] if args[0] in ("batch", "drift") else args,
                                   env={"COLUMNS": str(columns)}).stdout
        finally:
            os.chdir(here)
        assert output and not [line for line in output.splitlines() if line != line.rstrip()], (args, columns)
