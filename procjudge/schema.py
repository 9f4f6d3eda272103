"""The JSON Schema of a run file, generated from the validated model so the two cannot drift.

It constrains what ``load_run`` checks: types, ranges and enums (from the model's annotations),
the shapes a run file may take, and that every iteration can be scored (a score, test counts or
a failed build). It is stricter than the loader in one way, on purpose: a key the contract does
not know is an error here (the loader keeps it with a warning), so that an editor flags the typo
as it is typed. ``procjudge schema --lenient`` allows unknown keys, as the loader does.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .model import Entry, IterationTelemetry, RunFile

SCOREABLE_RECORD: dict[str, Any] = {"anyOf": [
    {"required": ["score"], "properties": {"score": {"required": ["post_iteration"]}}},
    {"required": ["test_results"], "properties": {"test_results": {"required": ["post_iteration"]}}},
    {"required": ["test_results"], "properties": {"test_results": {"required": ["tests"],
                                                                   "properties": {"tests": {"minItems": 1}}}}},
    {"required": ["build"], "properties": {"build": {"required": ["status"], "properties": {"status": {"const": "failure"}}}}},
    {"required": ["test_results"], "properties": {"test_results": {"required": ["unavailable", "hidden"]}}},
    # in a run judged from the agent's own checks (run.iterations_are: local_runs): nothing validated, scored 0
    {"required": ["test_results"], "properties": {"test_results": {"required": ["unavailable"]}}},
]}
SCOREABLE_FEEDBACK: dict[str, Any] = {"anyOf": [
    {"required": ["tests"], "properties": {"tests": {"required": ["passed"]}}},
    {"required": ["build"], "properties": {"build": {"required": ["status"], "properties": {"status": {"const": "failure"}}}}},
]}
SCORE_NEEDED = ("every iteration needs score.post_iteration, test counts (test_results.post_iteration, "
                "test_results.tests or iteration_feedback.tests), a failed build, or test_results.unavailable "
                "with a held-back suite (test_results.hidden) or in a run of local checks (run.iterations_are: "
                "local_runs)")


def run_schema(lenient: bool = False) -> str:
    """A draft 2020-12 schema of every single-document shape of a run file."""
    (run_ref, entry_ref, record_ref), components = msgspec.json.schema_components(
        [RunFile, Entry, IterationTelemetry], ref_template="#/$defs/{name}"
    )
    if not lenient:
        for definition in components.values():
            if definition.get("type") == "object" and "properties" in definition:
                definition["additionalProperties"] = False
    bare_record = {"allOf": [record_ref, SCOREABLE_RECORD]}
    entry = {"allOf": [entry_ref, {"anyOf": [
        {"properties": {"iteration_telemetry": SCOREABLE_RECORD}},
        {"required": ["iteration_feedback"], "properties": {"iteration_feedback": SCOREABLE_FEEDBACK}},
    ]}], "description": SCORE_NEEDED}
    either = {"anyOf": [{"allOf": [{"required": ["iteration_telemetry"]}, entry]},
                        {"allOf": [{"not": {"required": ["iteration_telemetry"]}}, bare_record]}],
              "description": "an iteration: {iteration_telemetry: ..., iteration_feedback: ...}, or a bare telemetry record"}
    components["RunFile"]["properties"]["iterations"]["items"] = either
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://procjudge.dev/schema/run-1.json",
        "title": "procjudge run file",
        "description": (
            "One agent's attempt at one challenge, iteration by iteration: a mapping with "
            "`iterations:`, a list of iteration entries, or one entry. A YAML stream holds one "
            "entry per document, after an optional `run:` document and before an optional "
            "`aggregate_telemetry:` document; each document is one of these shapes."
        ),
        # The shapes are told apart by their keys, so that a wrapped run is checked as a wrapped run:
        # a mapping with `iterations:` or `run:` is never also accepted as a bare record.
        "anyOf": [
            {"allOf": [{"type": "object", "required": ["iterations"]}, run_ref]},
            {"type": "array", "items": either},
            {"allOf": [{"type": "object", "required": ["iteration_telemetry"]}, entry]},
            {"allOf": [{"type": "object", "not": {"anyOf": [{"required": [k]} for k in ("iterations", "run",
                                                                                        "iteration_telemetry",
                                                                                        "aggregate_telemetry")]}},
                       bare_record]},
            # the head and tail documents of a YAML stream
            {"type": "object", "required": ["run"], "not": {"required": ["iterations"]},
             "properties": {"run": components["RunFile"]["properties"]["run"],
                            "aggregate_telemetry": components["RunFile"]["properties"]["aggregate_telemetry"]},
             **({} if lenient else {"additionalProperties": False})},
            {"type": "object", "required": ["aggregate_telemetry"],
             "properties": {"aggregate_telemetry": components["RunFile"]["properties"]["aggregate_telemetry"]},
             **({} if lenient else {"additionalProperties": False})},
        ],
        "$defs": components,
    }
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n"
