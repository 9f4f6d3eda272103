"""SARIF 2.1.0 (validated against the official OASIS schema) and GitLab Code Quality (checked
against its documented fields) from batch: every finding located at its run file and line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from procjudge.catalogue import catalogue
from procjudge.cli import app

from conftest import ROOT, SAMPLES

runner = CliRunner()
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
CHEAT = ROOT / "tests" / "labelled"


def batch(fmt: str, *targets: str | Path) -> tuple[int, object]:
    result = runner.invoke(app, ["batch", *map(str, targets), "--format", fmt, "--jobs", "1"])
    return result.exit_code, json.loads(result.stdout)


def a_cheat() -> Path:
    import csv

    with (CHEAT / "labels.csv").open() as handle:
        return next(CHEAT / row["path"] for row in csv.DictReader(handle) if row["label"] == "cheat")


def test_sarif_validates_against_the_official_schema_and_locates_findings(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("iterations:\n  - score: {post_iteration: 500}\n")
    code, log = batch("sarif", SAMPLES, tmp_path)
    assert code == 2  # the unreadable file
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [entry.id for entry in catalogue()]
    assert run["results"], "the samples have findings"
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        path = ROOT / location["artifactLocation"]["uri"] if not location["artifactLocation"]["uri"].startswith("file:") else None
        assert path is None or path.exists()
        assert location["region"]["startLine"] >= 1
    notification = run["invocations"][0]["toolExecutionNotifications"][0]
    assert "broken.yaml" in notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_a_definite_accusation_is_an_error_in_sarif_and_critical_in_gitlab() -> None:
    cheat = a_cheat()
    _, log = batch("sarif", cheat)
    levels = {r["ruleId"]: r["level"] for r in log["runs"][0]["results"]}
    assert "error" in levels.values(), levels
    _, issues = batch("gitlab", cheat)
    assert any(i["severity"] == "critical" for i in issues)


def test_gitlab_code_quality_has_the_documented_fields() -> None:
    code, issues = batch("gitlab", SAMPLES)
    assert code == 0 and isinstance(issues, list) and issues
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(issue["location"]["path"], str) and issue["location"]["lines"]["begin"] >= 1
        assert (ROOT / issue["location"]["path"]).exists() or Path(issue["location"]["path"]).exists()
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == len(fingerprints)


@pytest.mark.parametrize("fmt", ["sarif", "gitlab"])
def test_an_empty_stream_is_still_valid(fmt: str, tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("iterations:\n  - score: {post_iteration: 100}\n")
    code, document = batch(fmt, tmp_path)
    assert code == 0
    if fmt == "sarif":
        jsonschema.Draft4Validator(SCHEMA).validate(document)
        assert document["runs"][0]["results"] == []
    else:
        assert document == []


def test_absolute_inputs_are_reported_relative_to_the_project_root(tmp_path: Path) -> None:
    """CI links an annotation only by a path relative to the repository: absolute inputs under the
    project root (the working folder here, or the folder of the configuration in force) are made
    relative in GitLab, SARIF (with originalUriBaseIds) and GitHub; a file outside stays absolute."""
    import os

    project = tmp_path / "project"
    (project / "runs").mkdir(parents=True)
    (project / "runs" / "bad.yaml").write_bytes((SAMPLES / "example2_bad_standard.yaml").read_bytes())
    outside = tmp_path / "elsewhere.yaml"
    outside.write_bytes((SAMPLES / "example2_bad_standard.yaml").read_bytes())
    here = os.getcwd()
    os.chdir(project)
    try:
        gitlab = batch("gitlab", project / "runs" / "bad.yaml", outside)[1]
        sarif = batch("sarif", project / "runs" / "bad.yaml")[1]
        github = runner.invoke(app, ["batch", str(project / "runs" / "bad.yaml"), "--format", "github", "--jobs", "1"]).stdout
    finally:
        os.chdir(here)
    paths = {issue["location"]["path"] for issue in gitlab}
    assert paths == {"runs/bad.yaml", str(outside)}
    run = sarif["runs"][0]
    assert run["originalUriBaseIds"]["PROJECTROOT"]["uri"] == project.as_uri() + "/"
    artifact = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "runs/bad.yaml", "uriBaseId": "PROJECTROOT"}
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(sarif)
    assert "::warning file=runs/bad.yaml," in github and str(project) not in github
