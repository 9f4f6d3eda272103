"""procjudge batch: discovery, every output format, gates, exit codes, broken files mixed in."""

from __future__ import annotations

import csv
import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.batch import score_paths
from procjudge.cli import app
from procjudge.render.batch import spreadsheet_safe
from procjudge.tally import agent_summary, figures_of

from conftest import SAMPLES, make_row

runner = CliRunner()
GOOD = ["example1_good_standard.yaml", "example2_bad_standard.yaml", "example3_sprint_one_shot.yaml",
        "marathon_phases.yaml", "bare_list.yml", "wrapped.json"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Six good runs in nested folders, two broken files, and a file that is not a run file."""
    root = tmp_path / "runs"
    (root / "nested" / "deeper").mkdir(parents=True)
    for k, name in enumerate(GOOD):
        target = root if k % 2 else root / "nested" / ("deeper" if k % 3 == 0 else "")
        shutil.copy(SAMPLES / name, target / name)
    (root / "nested" / "broken.yaml").write_text("iterations:\n- iteration_telemetry:\n    score: {post_iteration: oops}\n")
    (root / "bad_syntax.yml").write_text("iterations: [\n")
    (root / "notes.txt").write_text("not a run")
    return root


def invoke(*args: str):
    return runner.invoke(app, ["batch", *args, "--jobs", "1"])


def test_discovery_is_recursive_sorted_and_skips_other_files(corpus: Path) -> None:
    from procjudge.discovery import discover

    found = discover([str(corpus)])
    assert len(found) == 8 and found == sorted(found)
    assert not any(p.endswith(".txt") for p in found)
    assert [Path(p).name for p in discover([str(corpus / "**" / "*.json")])] == ["wrapped.json"]


def test_json_parses_back_with_every_run_and_error(corpus: Path) -> None:
    result = invoke(str(corpus), "--format", "json")
    assert result.exit_code == 2  # two unreadable files
    data = json.loads(result.stdout)
    assert data["schema"] == "procjudge.batch/1"
    assert len(data["runs"]) == 6 and len(data["errors"]) == 2
    assert all(run["schema"] == "procjudge.score/1" for run in data["runs"])
    assert {Path(e["path"]).name for e in data["errors"]} == {"broken.yaml", "bad_syntax.yml"}
    assert "broken.yaml:3:" in " ".join(e["message"] for e in data["errors"])
    summary = data["summary"]
    assert summary["runs_scored"] == 6 and summary["errors"] == 2
    agents = {a["agent"]: a for a in summary["agents"]}
    assert agents["agent-b"]["anti_pattern_share"] == {"regression_blindness": 1.0, "shotgun_debugging": 1.0}
    # every unreadable file is also named on stderr
    assert "broken.yaml" in result.stderr and "bad_syntax.yml" in result.stderr


def test_csv_parses_back_one_row_per_file(corpus: Path) -> None:
    result = invoke(str(corpus), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 8
    scored = [r for r in rows if not r["error"]]
    assert len(scored) == 6
    bad = next(r for r in rows if r["id"] == "user-registration/agent-b")
    assert float(bad["process_score"]) == -18.0
    assert bad["anti_patterns"] == "shotgun_debugging regression_blindness"


def test_csv_states_the_returned_score_beside_the_best(tmp_path: Path) -> None:
    # a 70 -> 40 regression spiral returned its 40: final_score is 40, the 70 stands beside it
    spiral = tmp_path / "spiral.yaml"
    spiral.write_text("iterations:\n" + "".join(f"- {{score: {{post_iteration: {s}}}}}\n" for s in (70, 55, 40)))
    rows = list(csv.DictReader(io.StringIO(invoke(str(spiral), "--format", "csv").stdout)))
    row = rows[0]
    assert (row["final_score"], row["best_score"], row["best_iteration"], row["final_minus_best"]) == \
        ("40.0", "70.0", "0", "-30.0")
    assert row["gated_final"] == ""  # no per-test outcomes: the gate could not be replayed
    broken = tmp_path / "broken.yaml"
    broken.write_text("iterations: [\n")
    error_row = list(csv.reader(io.StringIO(invoke(str(broken), "--format", "csv").stdout)))
    assert len(error_row[0]) == len(error_row[1])  # an unreadable file keeps every column


def test_csv_neutralises_formula_text(tmp_path: Path) -> None:
    run = tmp_path / "evil.yaml"
    run.write_text('run: {id: "=HYPERLINK(\\"http://x\\")", agent: "@agent"}\niterations:\n- {score: {post_iteration: 50}}\n')
    rows = list(csv.reader(io.StringIO(invoke(str(run), "--format", "csv").stdout)))
    assert rows[1][0].startswith("'=") and rows[1][1] == "'@agent"
    assert spreadsheet_safe(-18.0) == -18.0 and spreadsheet_safe("-x") == "'-x" and spreadsheet_safe("+1") == "'+1"


def test_junit_is_valid_xml_with_one_testcase_per_run(corpus: Path) -> None:
    result = invoke(str(corpus), "--format", "junit", "--fail-under", "0")
    root = ET.fromstring(result.stdout)
    cases = root.findall(".//testcase")
    assert len(cases) == 8
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [c for c in cases if c.find("error") is not None]
    assert [c.get("name") for c in failures] == ["user-registration/agent-b"]
    assert len(errors) == 2
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("8", "1", "2")


def test_github_annotations_name_file_and_line(corpus: Path) -> None:
    result = invoke(str(corpus), "--format", "github")
    lines = result.stdout.splitlines()
    shotgun = next(l for l in lines if "shotgun_debugging" in l)
    assert shotgun.startswith("::warning file=") and "example2_bad_standard.yaml,line=33," in shotgun
    text = (SAMPLES / "example2_bad_standard.yaml").read_text().splitlines()
    assert "iteration_telemetry" in text[32]  # line 33 is iteration 1's record
    errors = [l for l in lines if l.startswith("::error")]
    assert any("broken.yaml,line=3" in l for l in errors)
    assert lines[-1].startswith("::notice")


def test_markdown_summary(corpus: Path) -> None:
    result = invoke(str(corpus), "--format", "markdown", "--fail-under", "0")
    assert "gate failed" in result.stdout and "| agent-b | 1 |" in result.stdout
    assert "Unreadable files" in result.stdout


@pytest.mark.parametrize("args,code", [
    ([], 0),
    (["--fail-under", "-20"], 0),
    (["--fail-under", "0"], 1),
    (["--fail-on", "regression_blindness"], 1),
    (["--fail-on", "test_chasing,scope_creep"], 0),
    (["--fail-on", "no_local_validation"], 1),
])
def test_gates_and_exit_codes_on_good_files(args: list[str], code: int) -> None:
    files = [str(SAMPLES / name) for name in GOOD]
    assert invoke(*files, "--format", "json", *args).exit_code == code


def test_unreadable_file_wins_over_gate(corpus: Path) -> None:
    assert invoke(str(corpus), "--format", "csv", "--fail-under", "100").exit_code == 2


def test_usage_errors(tmp_path: Path) -> None:
    nothing = invoke(str(tmp_path), "--format", "json")
    assert nothing.exit_code == 2
    # names every suffix discovery reads, JSON lines included
    assert all(suffix in nothing.output for suffix in (".yaml", ".yml", ".json,", ".jsonl", ".ndjson", ".gz", ".zst"))
    compared = runner.invoke(app, ["compare", str(tmp_path), str(SAMPLES)])
    assert compared.exit_code == 2 and ".jsonl" in compared.output and str(tmp_path) in compared.output
    result = invoke(str(SAMPLES), "--fail-on", "shotgun")
    assert result.exit_code == 2 and "shotgun_debugging" in result.output
    assert invoke(str(SAMPLES), "--format", "xml").exit_code == 2


def test_output_never_overwrites_an_input(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    shutil.copy(SAMPLES / "wrapped.json", target)
    before = target.read_bytes()
    result = invoke(str(tmp_path), "--format", "json", "--output", str(target))
    assert result.exit_code == 2 and "refusing" in result.output
    assert target.read_bytes() == before


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    result = invoke(str(SAMPLES / "example1_good_standard.yaml"), "--format", "junit", "--output", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    assert ET.parse(out).getroot().tag == "testsuites"


def test_parallel_results_equal_serial(corpus: Path) -> None:
    from procjudge.discovery import discover

    paths = discover([str(corpus)])
    serial = [(r.path, r.verdict(), r.row, r.error) for r in score_paths(paths, jobs=1)]
    parallel = [(r.path, r.verdict(), r.row, r.error) for r in score_paths(paths, jobs=2)]
    assert serial == parallel


def test_agent_summary_figures() -> None:
    rows = [
        {"agent": "a", "process_score": 10.0, "final_score": 90.0, "iterations_used": 2, "tier": "systematic_refinement",
         "anti_patterns": []},
        {"agent": "a", "process_score": -2.0, "final_score": 70.0, "iterations_used": 4, "tier": "thrashing_recovering",
         "anti_patterns": ["scope_creep"]},
        {"agent": "a", "process_score": 4.0, "final_score": 80.0, "iterations_used": 3, "tier": "systematic_refinement",
         "anti_patterns": ["scope_creep", "test_chasing"]},
        {"agent": "b", "process_score": -20.0, "final_score": 40.0, "iterations_used": 4, "tier": "regression_spiral",
         "anti_patterns": ["copy_paste_loop"]},
    ]
    summary = {s.agent: s for s in agent_summary(figures_of(make_row(**r)) for r in rows)}
    assert summary["a"].runs == 3
    assert summary["a"].mean_process_score == 4.0 and summary["a"].median_process_score == 4.0
    assert summary["a"].tiers == {"systematic_refinement": 2, "thrashing_recovering": 1}
    assert summary["a"].anti_pattern_share == {"scope_creep": pytest.approx(2 / 3, abs=1e-4),
                                               "test_chasing": pytest.approx(1 / 3, abs=1e-4)}
    assert summary["b"].anti_pattern_share == {"copy_paste_loop": 1.0}


@pytest.mark.parametrize("args,code", [([], 0), (["--fail-under", "10"], 1)])
def test_reader_closing_the_pipe_early_keeps_the_gate_exit_code(args: list[str], code: int) -> None:
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "procjudge", "batch", str(SAMPLES), "--format", "csv", "--jobs", "1",
                                *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == code
    assert b"Traceback" not in stderr


def test_several_reports_from_one_scoring_pass(tmp_path: Path) -> None:
    """-o FORMAT=FILE, repeated: each report is the one --format would have written alone."""
    import json as json_module

    runs = [str(SAMPLES / name) for name in ("example1_good_standard.yaml", "example2_bad_standard.yaml")]
    result = runner.invoke(app, ["batch", *runs, "--jobs", "1", "--format", "csv",
                                 "-o", f"json={tmp_path / 'r.json'}", "-o", f"junit={tmp_path / 'r.xml'}",
                                 "-o", f"markdown={tmp_path / 'r.md'}", "-o", f"github={tmp_path / 'r.gh'}"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("id,agent,")  # no plain -o FILE: --format still goes to stdout
    for fmt, suffix in (("json", "json"), ("junit", "xml"), ("markdown", "md"), ("github", "gh")):
        alone = runner.invoke(app, ["batch", *runs, "--jobs", "1", "--format", fmt]).stdout
        assert (tmp_path / f"r.{suffix}").read_text() == alone, fmt
    assert len(json_module.loads((tmp_path / "r.json").read_text())["runs"]) == 2


def test_output_targets_must_be_distinct_and_formats_known(tmp_path: Path) -> None:
    run = str(SAMPLES / "example1_good_standard.yaml")
    same = runner.invoke(app, ["batch", run, "-o", f"json={tmp_path / 'x'}", "-o", f"csv={tmp_path / 'x'}"])
    assert same.exit_code == 2 and "same file" in same.output
    unknown = runner.invoke(app, ["batch", run, "-o", f"yaml={tmp_path / 'x'}"])
    assert unknown.exit_code == 2 and "unknown format 'yaml'" in unknown.output


def _half(value: int) -> float:
    return value / 2


def _cents(value: float) -> float:
    return round(value, 2)


# named functions, not lambdas: hypothesis before 6.10x reads a lambda's source on every draw to describe it
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "", "c"]), st.integers(-60, 40).map(_half),
                          st.floats(0, 100, allow_nan=False).map(_cents), st.integers(1, 9),
                          st.sampled_from(["systematic_refinement", "thrashing_recovering", "get_it_right_first_time"]),
                          st.lists(st.sampled_from(["scope_creep", "test_chasing", "shotgun_debugging"]), unique=True)
                          .map(tuple),
                          st.one_of(st.none(), st.sampled_from([0.0, 0.05, 0.25, 0.5, 1.25, 4.0])),
                          st.one_of(st.none(), st.booleans())), min_size=1, max_size=60))
def test_the_streaming_agent_tally_gives_the_summary_pandas_gives(figures: list) -> None:
    import pandas as pd

    frame = pd.DataFrame(figures, columns=["agent", "process", "final", "iterations", "tier", "patterns", "cost",
                                           "resolved"])
    frame["agent"] = frame["agent"].replace("", "(none)")
    got = agent_summary(figures)
    assert [s.agent for s in got] == sorted(frame["agent"].unique())
    for summary in got:
        rows = frame[frame["agent"] == summary.agent]
        shares = rows["patterns"].explode().dropna().value_counts() / len(rows)
        assert (summary.runs, summary.median_process_score) == (len(rows), pytest.approx(rows["process"].median(), abs=1e-4))
        assert summary.tiers == {t: int(n) for t, n in sorted(rows["tier"].value_counts().items())}
        assert summary.anti_pattern_share == {p: pytest.approx(v, abs=1e-4) for p, v in sorted(shares.items())}
        for field, column in (("mean_process_score", "process"), ("mean_final_score", "final"),
                              ("mean_iterations_used", "iterations")):
            assert getattr(summary, field) == pytest.approx(rows[column].mean(), abs=1e-4)
        costed = rows[rows["cost"].notna()]
        resolved = int(costed["resolved"].map(lambda value: value is True).sum())  # None is neither
        assert summary.runs_with_cost == len(costed)
        assert summary.cost_usd == (pytest.approx(costed["cost"].sum(), abs=1e-4) if len(costed) else None)
        assert summary.cost_per_resolved_run == (pytest.approx(costed["cost"].sum() / resolved, abs=1e-4) if resolved
                                                 else None)


def test_reports_that_read_rows_get_the_lighter_result() -> None:
    """csv, junit, markdown and table read only the row: the workers skip encoding the verdict,
    and the rows are the same as with it, in one process and across workers."""
    from procjudge.render import formats

    paths = sorted(str(p) for p in SAMPLES.glob("*.yaml"))
    for jobs in (1, 2):
        full = list(score_paths(paths, jobs=jobs))
        light = list(score_paths(paths, jobs=jobs, want_verdict=False))
        assert [r.row for r in light] == [r.row for r in full] and any(r.row for r in light)
        assert all(r.verdict_msgpack is None for r in light)
        assert all(r.verdict_msgpack is not None for r in full if r.error is None)
    needs = {name: formats.renderer("batch", name)().needs_verdict for name in formats.names("batch")}
    assert {name for name, need in needs.items() if not need} == {"csv", "junit", "markdown", "table"}


def test_frames_give_typed_tables_with_the_parquet_names(tmp_path: Path) -> None:
    import subprocess
    import sys

    import procjudge
    from procjudge.dataframes import COLUMNS
    from procjudge.render.parquet import _schemas

    runs, items, iterations = procjudge.frames([SAMPLES / "example2_bad_standard.yaml", SAMPLES / "drift"])
    parquet_runs, parquet_items = _schemas()
    # the Parquet names, but for the join keys: run_id in every table, rule in items
    renamed = {"id": "run_id", "run": "run_id"}
    assert list(runs.columns) == [renamed.get(c, c) for c in COLUMNS["runs"]] == [renamed.get(c, c)
                                                                                 for c in parquet_runs.names]
    assert list(items.columns) == [{"run": "run_id", "id": "rule"}.get(c, c) for c in parquet_items.names]
    assert "run_id" in iterations.columns and "run" not in iterations.columns
    assert str(runs.iterations_used.dtype) == "Int64" and str(runs.held_back_resolved.dtype) == "boolean"
    import pandas as pd

    assert isinstance(runs.started_at.dtype, pd.DatetimeTZDtype) and str(runs.started_at.dtype.tz) == "UTC"
    bad = runs[runs.run_id == "user-registration/agent-b"].iloc[0]
    assert bad.process_score == -18 and bad.anti_patterns == ["shotgun_debugging", "regression_blindness"]
    assert set(items[items.run_id == "user-registration/agent-b"].rule) >= {"shotgun_debugging", "regression_blindness"}
    assert list(iterations[iterations.run_id == "user-registration/agent-b"].score) == [38, 51, 48, 71]
    # the tables join on the run: every item finds its run
    joined = runs.merge(items, on=["run_id", "path"])
    assert len(joined) == len(items) > 0 and set(joined.rule) >= {"shotgun_debugging"}
    dated = runs.dropna(subset=["started_at"])
    assert len(dated) > 0 and dated.started_at.min().year >= 2000
    # verdicts already made are taken as they are
    from procjudge import judge, load_run

    verdict = judge(load_run(SAMPLES / "example1_good_standard.yaml"))
    assert procjudge.frames([verdict]).runs.process_score.tolist() == [verdict.process_score]
    # score never imports pandas
    code = "import sys, procjudge.cli as c; c.main(['score', sys.argv[1], '-q']); print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code, str(SAMPLES / "example1_good_standard.yaml")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip().endswith("False"), done.stdout


def test_frames_never_drop_input_silently(tmp_path: Path) -> None:
    import warnings

    import procjudge

    good = SAMPLES / "example1_good_standard.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("iterations: 3\n")
    corrupt = tmp_path / "runs.jsonl.zst"
    corrupt.write_bytes(b"\x28\xb5\x2f\xfd not zstd at all")
    for sources in ([good, tmp_path / "mistyped.yaml"], [good, bad], [good, corrupt], [good, str(tmp_path / "*.nothing")]):
        with pytest.raises(procjudge.FramesError) as caught:
            procjudge.frames(sources)
        assert len(caught.value.problems) == 1 and "could not be read" in str(caught.value)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            runs = procjudge.frames(sources, errors="warn").runs
        assert len(runs) == 1 and len(seen) == 1 and "procjudge.frames" in str(seen[0].message)
        assert len(procjudge.frames(sources, errors="ignore").runs) == 1
    # a path as bytes is a path
    assert procjudge.frames(bytes(good)).runs.process_score.tolist() == procjudge.frames(good).runs.process_score.tolist()
    with pytest.raises(TypeError, match="policy is a Policy"):
        procjudge.frames(good, policy="strict")  # type: ignore[arg-type]
    for jobs in (0, -1, 10**6, 1.5, True):
        with pytest.raises(ValueError, match="jobs is a whole number"):
            procjudge.frames(good, jobs=jobs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="errors is one of"):
        procjudge.frames(good, errors="skip")
    with pytest.raises(TypeError, match="a source is a path"):
        procjudge.frames([good, 42])  # type: ignore[list-item]


def test_a_step_shown_and_not_charged_trips_no_fail_on_gate(tmp_path: Path) -> None:
    """A shell agent's own check passing before a change and after it: `wasted_iteration` names the
    step at 0 on weak evidence (a confirmation, not a submission spent). A note is no finding, of
    whatever kind its rule: `--fail-on wasted_iteration` passes; a step charged -3 trips it."""
    def run(second: str) -> dict[str, object]:
        def step(code: str, passed: int) -> dict[str, object]:
            return {"iteration_telemetry": {"changes": {"code": code}, "test_results": {
                "suite": "pytest tests", "post_iteration": {"passed": passed, "failed": 3 - passed, "total": 3}}}}
        return {"run": {"id": "a/r", "agent": "a", "challenge": "r", "iterations_are": "local_runs"},
                "iterations": [step("x = 1\n", 3), step(second, 3)]}

    confirmed = tmp_path / "confirmed.json"
    confirmed.write_text(json.dumps(run("x = 2\n")))
    notes = [i for i in judge(load_run(str(confirmed))).items if i.id == "wasted_iteration"]
    assert [(i.points, i.strength) for i in notes] == [(0.0, "weak")]
    assert invoke(str(confirmed), "--format", "json", "--fail-on", "wasted_iteration").exit_code == 0
    charged = tmp_path / "charged.json"
    document = run("x = 2\n")
    document["iterations"][0]["iteration_telemetry"]["test_results"]["post_iteration"].update(passed=2, failed=1)
    document["iterations"][1]["iteration_telemetry"]["test_results"]["post_iteration"].update(passed=2, failed=1)
    charged.write_text(json.dumps(document))
    assert invoke(str(charged), "--format", "json", "--fail-on", "wasted_iteration").exit_code == 1
