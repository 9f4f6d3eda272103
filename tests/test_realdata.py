"""The Reflexion-family importer on real records, and its findings over the whole real corpus.

Fixture records are copied verbatim from LDB (Apache-2.0) and MapCoder (MIT); see
tests/fixtures/realdata/NOTICE.md. The corpus test reads ../shared/realdata when it is present
and checks procjudge's findings against counts made independently here.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers.reflexion import import_files, is_run_log

from conftest import ROOT, present

FIXTURES = Path(__file__).parent / "fixtures" / "realdata"
REALDATA = Path(os.environ.get("PROCJUDGE_REALDATA", ROOT.parent / "shared" / "realdata"))
runner = CliRunner()


def imported(tmp_path: Path, *files: Path, **options) -> dict[str, object]:
    written, issues = import_files([str(f) for f in files], str(tmp_path), **options)
    verdicts = {}
    for path in sorted(tmp_path.rglob("*.json")):
        verdict = judge(load_run(path))
        verdicts[verdict.run.id] = verdict
    return {"written": written, "issues": issues, "verdicts": verdicts}


def items(verdict, item_id: str) -> list:
    return [i for i in verdict.items if i.id == item_id]


def test_ldb_records_import_with_a_malformed_line_reported(tmp_path: Path) -> None:
    out = imported(tmp_path, FIXTURES / "ldb_records.jsonl", agent="ldb")
    assert out["written"] == 4
    assert [(i.line, "not a JSON object" in i.reason) for i in out["issues"]] == [(4, True)]
    assert set(out["verdicts"]) == {"ldb/HumanEval/10", "ldb/HumanEval/76", "ldb/HumanEval/75", "ldb/HumanEval/97"}


def test_visible_tests_by_name_with_the_output_after_a_failure(tmp_path: Path) -> None:
    import_files([str(FIXTURES / "ldb_records.jsonl")], str(tmp_path), agent="ldb")
    doc = json.loads((tmp_path / "ldb" / "HumanEval_97.json").read_text())
    first = doc["iterations"][0]["iteration_telemetry"]
    tests = {t["name"]: t for t in first["test_results"]["tests"]}
    assert tests["assert multiply(148, 412) == 16"] == {"name": "assert multiply(148, 412) == 16", "outcome": "failed",
                                                        "message": "6"}
    assert tests["assert multiply(2020, 1851) == 0"]["outcome"] == "passed"
    assert first["test_results"]["post_iteration"] == {"passed": 1, "failed": 3, "total": 4}
    repeat = doc["iterations"][1]["iteration_telemetry"]["changes"]
    assert repeat["diff"] == "" and repeat["code_hash"] == first["changes"]["code_hash"]  # byte-identical in the data
    second = doc["iterations"][2]["iteration_telemetry"]["changes"]
    assert second["diff"].startswith("--- a/solution.py\n+++ b/solution.py\n")
    assert "import heapq" not in second["diff"]  # the repeated import header is set aside
    assert second["code"].startswith("from typing import *")
    assert len(second["code_hash"]) == 64
    last = doc["iterations"][-1]["iteration_telemetry"]["test_results"]
    assert last["hidden"] == {"passed": 1, "total": 1}


def test_findings_on_real_records(tmp_path: Path) -> None:
    verdicts = imported(tmp_path, FIXTURES / "ldb_records.jsonl", agent="ldb")["verdicts"]
    oscillating = verdicts["ldb/HumanEval/10"]
    broken = [i for i in items(oscillating, "regression_blindness")]
    assert [i.iterations for i in broken] == [[1], [3], [5], [7], [9]]
    assert all("assert make_palindrome('cat') == 'catac'" in i.evidence and i.basis == "per-test outcomes" for i in broken)
    assert "early_termination" not in {i.id for i in oscillating.items}  # it used the loop's whole budget
    repeated = verdicts["ldb/HumanEval/76"]
    assert len(items(repeated, "identical_submission")) >= 1
    # visible green, hidden red: the suite missed an error; not an accusation
    assert not items(verdicts["ldb/HumanEval/75"], "test_chasing")
    gap = items(verdicts["ldb/HumanEval/75"], "hidden_suite_gap")
    assert len(gap) == 1 and gap[0].points == -1 and "not evidence of cheating" in gap[0].evidence


def test_reflexion_text_layout_and_a_second_hidden_verdict(tmp_path: Path) -> None:
    out = imported(tmp_path, FIXTURES / "mapcoder_humaneval.jsonl", agent="mapcoder",
                   hidden_from=str(FIXTURES / "mapcoder_humanevalet.jsonl"))
    assert out["written"] == 2 and out["issues"] == []
    doc = json.loads((tmp_path / "mapcoder" / "HumanEval_2.json").read_text())
    last = doc["iterations"][-1]["iteration_telemetry"]["test_results"]
    assert last["hidden_suites"] == [{"name": "hidden", "passed": 1, "total": 1}, {"name": "extended", "passed": 0, "total": 1}]
    assert last["hidden"] == {"passed": 1, "total": 2}
    first = json.loads((tmp_path / "mapcoder" / "HumanEval_1.json").read_text())["iterations"]
    assert first[0]["iteration_telemetry"]["test_results"]["tests"] == [
        {"name": "assert separate_paren_groups('((()))') == ['((()))']", "outcome": "failed", "message": "['()']"}]
    assert first[-1]["iteration_telemetry"]["test_results"]["post_iteration"] == {"passed": 1, "failed": 0, "total": 1}
    assert not items(out["verdicts"]["mapcoder/HumanEval/1"], "test_chasing")
    assert items(out["verdicts"]["mapcoder/HumanEval/1"], "hidden_suite_gap")


def test_cli_import_then_batch_and_compare_unchanged(tmp_path: Path) -> None:
    result = runner.invoke(app, ["import", "reflexion", str(FIXTURES / "ldb_records.jsonl"), "--out", str(tmp_path / "a"),
                                 "--agent", "x"])
    assert result.exit_code == 2 and "ldb_records.jsonl:4:" in result.output  # the malformed line
    assert "imported 4 runs" in result.stdout
    runner.invoke(app, ["import", "reflexion", str(FIXTURES / "ldb_records.jsonl"), "--out", str(tmp_path / "b"), "--agent", "y"])
    batch = runner.invoke(app, ["batch", str(tmp_path / "a"), "--format", "json", "--jobs", "1"])
    assert batch.exit_code == 0 and len(json.loads(batch.stdout)["runs"]) == 4
    compare = runner.invoke(app, ["compare", str(tmp_path / "a" / "x"), str(tmp_path / "b" / "y"), "--format", "json", "--jobs",
                                  "1"])
    data = json.loads(compare.stdout)
    assert data["paired"]["pairs"] == 4 and data["paired"]["ties"] == 4


# --------------------------------------------------------------------------- the whole corpus


def corpus_files() -> list[Path]:
    if not REALDATA.is_dir():
        return []
    return sorted(p for p in REALDATA.rglob("*.jsonl") if is_run_log(str(p)))


def independent_counts(path: Path) -> dict[str, int]:
    """Counted here from the raw records, without procjudge's importer or detectors."""
    identical = regressed = hidden_fail = 0
    for line in path.open():
        record = json.loads(line)
        codes = record["implementations"]
        identical += sum(1 for a, b in itertools.pairwise(codes) if a == b)
        outcomes = []
        for entry in record["test_feedback"][: len(codes)]:
            if isinstance(entry, str):
                passed_text, _, failed_text = entry.partition("Tests failed:")
                passed = {l.strip() for l in passed_text.replace("Tested passed:", "").splitlines() if l.strip()}
                failed = {l.split(" # output:")[0].strip() for l in failed_text.splitlines() if l.strip()}
            else:
                failed = {str(e).split(" # Real Execution Output:")[0].strip() for e in entry}
                passed = {t.strip() for t in record.get("given_tests") or []} - failed
            outcomes.append((passed, failed))
        for (passed_before, _), (_, failed_after) in itertools.pairwise(outcomes):
            regressed += len(passed_before & failed_after)
        last_passed, last_failed = outcomes[-1]
        if last_passed and not last_failed and record.get("is_solved") is False:
            hidden_fail += 1
    return {"identical": identical, "regressed": regressed, "hidden_fail": hidden_fail}


@pytest.mark.parametrize("path", present([p for p in corpus_files() if "lats" not in p.parts], REALDATA, "the real repair logs"),
                         ids=lambda p: str(p.relative_to(REALDATA)))
def test_findings_over_the_real_corpus_match_independent_counts(path: Path, tmp_path: Path) -> None:
    out = imported(tmp_path, path, agent="corpus")
    assert out["issues"] == []
    verdicts = out["verdicts"].values()
    found = {
        "identical": sum(len(items(v, "identical_submission")) - len(earlier(v)) for v in verdicts),
        "regressed": sum(len((i.detail or {}).get("broken", [])) for v in verdicts for i in items(v, "regression_blindness")),
        "hidden_fail": sum(1 for v in verdicts for i in items(v, "hidden_suite_gap")),
    }
    assert found == independent_counts(path)
    # every regression found rests on test names
    assert all(i.basis == "per-test outcomes" for v in verdicts for i in items(v, "regression_blindness"))
    # "visible green, hidden red" alone never accuses
    assert not any(i.basis == "hidden suite" for v in verdicts for i in items(v, "test_chasing"))


def earlier(verdict) -> list:
    """identical_submission items that are not about the previous submission (A, B, A; cosmetic)."""
    return [i for i in items(verdict, "identical_submission") if i.basis not in ("code_hash", "code", "diff")
            or "earlier submission" in i.evidence]


@pytest.mark.parametrize("path", present([p for p in corpus_files() if "lats" in p.parts], REALDATA, "the LATS tree searches"),
                         ids=lambda p: str(p.relative_to(REALDATA)))
def test_tree_searches_are_not_scored_as_loops(path: Path, tmp_path: Path) -> None:
    out = imported(tmp_path, path, agent="lats")
    records = [json.loads(line) for line in path.open()]
    logged = [r for r in records if r.get("implementations")]
    assert [i for i in out["issues"] if not i.note] == []
    assert sum(1 for i in out["issues"] if i.note) == len(records) - len(logged)
    assert out["written"] == len(logged)
    for verdict in out["verdicts"].values():
        assert verdict.iterations_used == 1
        assert any("tree search (LATS)" in w for w in verdict.warnings)
        assert not items(verdict, "regression_blindness") and not items(verdict, "copy_paste_loop")


def test_corpus_is_present_where_ci_puts_it() -> None:
    if os.environ.get("CI") and not corpus_files():
        pytest.fail(f"the real corpus was expected at {REALDATA}")


@pytest.mark.parametrize("relative,agent", [
    ("ldb/humaneval/codellama/results.jsonl", "codellama"),
    ("ldb/mbpp/codellama/results.jsonl", "codellama"),
    ("ldb/humaneval/reflexion/gpt-4-1106-preview.jsonl", "reflexion/gpt-4-1106-preview"),
    ("final-results/ChatGPT/HumanEval/ChatGPT-Reflexion-10-Python3-0-1.jsonl", "ChatGPT/ChatGPT-Reflexion-10-Python3-0-1"),
    ("lats/test_dfs/humaneval-py._dfs_8_gpt-3.5-turbo_pass_at_k_1_py.jsonl",
     "test_dfs/humaneval-py._dfs_8_gpt-3.5-turbo_pass_at_k_1_py"),
    ("runs/data/results.jsonl", "benchmarks"),  # nothing tells: the nearest folder that does
])
def test_a_benchmark_tree_names_agents_not_benchmarks(tmp_path: Path, relative: str, agent: str) -> None:
    from procjudge.importers.base import agent_from_folders

    assert agent_from_folders(str(tmp_path / "benchmarks" / relative)) == agent


def test_an_agents_runs_on_a_benchmark_and_its_extended_suite_stay_apart(tmp_path: Path) -> None:
    """The same tasks under HumanEval/ and HumanEvalET/ are two challenges of one agent, not one
    challenge written twice; a record's own model field names its agent."""
    record = json.loads((FIXTURES / "mapcoder_humaneval.jsonl").read_text(encoding="utf-8").split("\n")[0])
    for benchmark in ("HumanEval", "HumanEvalET"):
        folder = tmp_path / "final-results" / "ChatGPT" / benchmark
        folder.mkdir(parents=True)
        (folder / "ChatGPT-Reflexion-10.jsonl").write_text(json.dumps(record) + "\n" + json.dumps({**record, "model": "gpt-x"}))
    done = runner.invoke(app, ["import", "auto", str(tmp_path / "final-results"), "--out", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    runs = sorted(json.loads(p.read_text())["run"]["id"] for p in (tmp_path / "out").rglob("*.json"))
    task = record["task_id"].split("/")[1]
    assert runs == [f"ChatGPT/ChatGPT-Reflexion-10/HumanEval/{task}", f"ChatGPT/ChatGPT-Reflexion-10/HumanEvalET/{task}",
                    f"gpt-x/HumanEval/{task}", f"gpt-x/HumanEvalET/{task}"]
    assert "beside" not in done.output
