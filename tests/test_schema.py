"""`procjudge schema` constrains: every sample and labelled run validates, and every broken shape
the loader refuses (and every unknown key it warns about) fails validation too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.loading import LoadError, load_run

from conftest import ROOT, SAMPLES

runner = CliRunner()


def schema(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["schema", *args])
    assert result.exit_code == 0
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


STRICT = jsonschema.Draft202012Validator(schema())
LENIENT = jsonschema.Draft202012Validator(schema("--lenient"))


def single_documents() -> list[Path]:
    paths = [*SAMPLES.rglob("*.yaml"), *SAMPLES.rglob("*.json"), *(ROOT / "tests" / "labelled" / "runs").iterdir()]
    return sorted(p for p in paths if len([d for d in yaml.safe_load_all(p.read_text()) if d is not None]) == 1)


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(STRICT.schema)
    props = STRICT.schema["$defs"]["IterationTelemetry"]["properties"]
    assert {"iteration_number", "test_results", "changes", "actions", "score"} <= set(props)


@pytest.mark.parametrize("path", single_documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_sample_and_labelled_run_validates(path: Path) -> None:
    document = yaml.safe_load(path.read_text())
    errors = list(STRICT.iter_errors(document))
    assert not errors, jsonschema.exceptions.best_match(errors).message


RUN = {"run": {"id": "r", "format": "standard"}, "iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50}}}]}


def edit(path: str, value: Any) -> dict[str, Any]:
    document = json.loads(json.dumps(RUN))
    target: Any = document
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    target[parts[-1]] = value
    return document


BROKEN = {
    "a bare mapping of nothing known": {"foo": 1},
    "iterations not a list": {"iterations": "nope"},
    "a percentage as a score": edit("iterations.0.iteration_telemetry.score.post_iteration", "70%"),
    "a score above 100": edit("iterations.0.iteration_telemetry.score.post_iteration", 140),
    "an unknown format": edit("run.format", "Standard"),
    "a negative count": edit("iterations.0.iteration_telemetry.test_results", {"post_iteration": {"passed": -3, "total": 4}}),
    "an epoch timestamp": edit("iterations.0.iteration_telemetry.timestamp_start", 1700000000),
    "no score and no counts": edit("iterations.0.iteration_telemetry", {"iteration_number": 0}),
    "a misspelt score": edit("iterations.0.iteration_telemetry", {"scroe": {"post_iteration": 50}}),
    "a test outcome outside the enum": edit("iterations.0.iteration_telemetry.test_results",
                                            {"tests": [{"name": "t", "outcome": "green"}]}),
    "a list of non-records": [1, 2],
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_every_broken_shape_fails_validation_and_loading(name: str) -> None:
    document = BROKEN[name]
    assert list(STRICT.iter_errors(document)), f"the schema accepts {name}"
    with pytest.raises(LoadError):
        load_run("broken.yaml", yaml.safe_dump(document).encode())


def test_an_unknown_key_is_an_error_in_the_schema_and_a_warning_in_the_loader() -> None:
    document = edit("run.agnet", "x")
    assert list(STRICT.iter_errors(document)) and not list(LENIENT.iter_errors(document))
    run = load_run("typo.yaml", yaml.safe_dump(document).encode())
    assert any("did you mean `agent`" in w for w in run.warnings)


def test_the_shapes_a_run_may_take() -> None:
    record = {"score": {"post_iteration": 50}}
    for document in (RUN, [record, {"iteration_telemetry": record}], {"iteration_telemetry": record}, record,
                     {"iterations": [record]}):
        assert not list(STRICT.iter_errors(document)), document
        load_run("shape.yaml", yaml.safe_dump(document).encode())


@pytest.mark.parametrize("path", sorted(p for p in SAMPLES.rglob("*.yaml") if p not in single_documents()),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_document_of_a_yaml_stream_validates(path: Path) -> None:
    """An editor validates a YAML stream document by document: the `run:` head, each record and an
    `aggregate_telemetry:` tail are shapes of the schema."""
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert len(documents) > 1
    for document in [*documents, {"aggregate_telemetry": {"total_iterations": 3}}]:
        errors = list(STRICT.iter_errors(document))
        assert not errors, jsonschema.exceptions.best_match(errors).message
    assert list(STRICT.iter_errors({"run": {"id": "r", "formt": "standard"}}))  # a typo in the head still fails
