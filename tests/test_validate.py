"""``procjudge validate``: each accusing rule's precision and recall, and the process score's
AUROC, on the user's own labelled runs (here the project's labelled set, labelled as a user would)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.validate import auroc_of

from conftest import ROOT

runner = CliRunner()
LABELLED = ROOT / "tests" / "labelled"


def _labels(tmp_path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    path = tmp_path / "labels.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _set() -> list[dict[str, str]]:
    return list(csv.DictReader((LABELLED / "labels.csv").open()))


def test_a_user_labelled_set_gives_each_rules_precision_recall_and_the_auroc(tmp_path: Path) -> None:
    rows = [{"run": Path(r["path"]).name, "label": r["label"], "rule": r["expect"]} for r in _set()]
    labels = _labels(tmp_path, rows)
    result = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs"), "--format", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["schema"] == "procjudge.validate/1" and found["labelled_runs"] == len(rows)
    by_rule = {r["rule"]: r for r in found["rules"]}
    cheats = {r["rule"] for r in rows if r["label"] == "cheat" and r["rule"]}
    for rule in cheats:  # each rule's positives are the cheats labelled for it
        score = by_rule[rule]
        assert score["tp"] + score["fn"] == sum(1 for r in rows if r["rule"] == rule)
    every = found["any_accusation"]
    assert every["tp"] + every["fn"] == sum(1 for r in rows if r["label"] == "cheat")
    assert every["fp"] + every["tn"] == sum(1 for r in rows if r["label"] == "honest")
    assert 0.5 < found["auroc"] <= 1 and found["auroc_interval"][0] <= found["auroc"] <= found["auroc_interval"][1]
    assert found["unlabelled_runs"] == 0 and found["labels_without_run"] == 0


def test_a_false_accusation_and_a_miss_are_named_and_gate_on_precision(tmp_path: Path) -> None:
    rows = [{"run": Path(r["path"]).name, "label": r["label"]} for r in _set()]
    accused = next(r for r in rows if r["label"] == "cheat")
    honest = next(r for r in rows if r["label"] == "honest")
    accused["label"], honest["label"] = "honest", "cheat"  # the user disagrees with two verdicts
    rows.append({"run": "no-such-run", "label": "honest"})
    labels = _labels(tmp_path, rows)
    result = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs"), "-f", "json"])
    found = json.loads(result.stdout)
    from procjudge import load_run

    def run_id(name: str) -> str:
        return str(load_run(str(LABELLED / "runs" / name)).id)

    assert run_id(accused["run"]) in found["false_accusations"]  # accused, and labelled honest by the user
    assert run_id(honest["run"]) in found["misses"]  # labelled cheat, and nobody accused it
    assert found["labels_without_run"] == 1 and found["unmatched_labels"] == ["no-such-run"]
    gated = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs"),
                                "--fail-under-precision", "0.999"])
    assert gated.exit_code == 1 and "precision below 0.999: any accusation" in gated.stderr
    table = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs")])
    assert "false accusations:" in table.stdout and "1 labels name no run (first: no-such-run)" in table.stdout


def test_any_other_rule_is_measured_on_the_rows_that_label_it(tmp_path: Path) -> None:
    """A reviewer labels runs for rules that accuse nobody (is there a wasted iteration, a scratch
    file handed in?): each such rule gets its own precision and recall on its rows, with the runs it
    missed and those it fired on wrongly; those rows are neither cheats nor honest runs."""
    rows = [{"run": Path(r["path"]).name, "label": r["label"], "rule": r["expect"]} for r in _set()]
    names = [Path(p).name for p in sorted((LABELLED / "runs").glob("*"))]
    from procjudge import judge, load_run

    fired = {name: set(judge(load_run(str(LABELLED / "runs" / name))).findings) for name in names}
    having = [n for n in names if "local_validation" in fired[n]]
    lacking = [n for n in names if "local_validation" not in fired[n]]
    assert having and lacking
    extra = [{"run": having[0], "label": "yes", "rule": "local_validation"},  # found where labelled: tp
             {"run": lacking[0], "label": "fires", "rule": "local_validation"},  # missed: fn
             {"run": having[-1], "label": "no", "rule": "local_validation"}]  # found where labelled absent: fp
    labels = _labels(tmp_path, rows + extra)
    result = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs"), "-f", "json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    (score,) = [r for r in found["rules"] if r["rule"] == "local_validation"]
    assert (score["tp"], score["fn"], score["fp"], score["tn"], score["accuses"]) == (1, 1, 1, 0, False)
    assert score["precision"] == 0.5 and score["recall"] == 0.5
    assert score["misses"] and score["false_positives"] and score["misses"] != score["false_positives"]
    every = found["any_accusation"]  # the rule's rows are no cheat and no honest run
    assert every["tp"] + every["fn"] + every["fp"] + every["tn"] == len(rows)
    assert found["labelled_runs"] == len(rows) + 3
    table = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs")]).stdout
    assert "local_validation: missed " in table and "fired where labelled absent: " in table
    gated = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs"),
                                "--fail-under-precision", "0.6"])
    assert gated.exit_code == 1 and "precision below 0.6: local_validation 0.50" in gated.stderr


@pytest.mark.parametrize("content,message", [
    ("name,verdict\nx,cheat\n", "expected a header with a `run` column"),
    ("run,label\nx,maybe\n", "labels.csv:2: field label: expected cheat or honest"),
    ("run,label,rule\nx,cheat,scope_crep\n", ("labels.csv:2: field rule: 'scope_crep' is not a rule (did you mean "
                                               "scope_creep?)")),
    ("run,label,rule\nx,maybe,scope_creep\n", "labels.csv:2: field label: expected yes or no"),
    ("run,label\n,cheat\n", "labels.csv:2: field run: empty"),
])
def test_a_bad_labels_file_is_one_clear_error(content: str, message: str, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(content)
    result = runner.invoke(app, ["validate", "--labels", str(labels), str(LABELLED / "runs")])
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output


def test_the_csv_and_markdown_reports_and_the_seeded_interval(tmp_path: Path) -> None:
    rows = [{"run": Path(r["path"]).name, "label": r["label"]} for r in _set()]
    labels = _labels(tmp_path, rows)
    args = ["validate", "--labels", str(labels), str(LABELLED / "runs")]
    table = runner.invoke(app, [*args, "-f", "csv"]).stdout.splitlines()
    assert table[0] == "rule,tp,fp,fn,tn,precision,recall,f1" and table[-1].startswith("any accusation,")
    assert "| `any accusation` |" in runner.invoke(app, [*args, "-f", "markdown"]).stdout
    first = json.loads(runner.invoke(app, [*args, "-f", "json", "--seed", "7"]).stdout)["auroc_interval"]
    again = json.loads(runner.invoke(app, [*args, "-f", "json", "--seed", "7"]).stdout)["auroc_interval"]
    assert first == again


@pytest.mark.parametrize("pairs,expected", [
    ([(True, -30.0), (False, 10.0)], 1.0),  # the cheat scores lowest: ranked right
    ([(True, 10.0), (False, -30.0)], 0.0),
    ([(True, 5.0), (False, 5.0)], 0.5),  # a tie counts half
    ([(True, -30.0), (True, 5.0), (False, 5.0), (False, 9.0)], 0.875),
    ([(True, 1.0)], None),  # one kind only: undefined
])
def test_the_auroc_reads_a_low_score_as_predicting_cheat(pairs: list[tuple[bool, float]], expected: float | None) -> None:
    assert auroc_of(pairs) == expected
