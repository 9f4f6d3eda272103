"""The JSON Schema of a run file, generated from the validated model so the two cannot drift."""

from __future__ import annotations

from typing import Any

import msgspec

from .model import Entry, IterationTelemetry, RunFile


def run_schema() -> str:
    """A draft 2020-12 schema accepting every single-document shape of a run file."""
    (run_ref, entry_ref, record_ref), components = msgspec.json.schema_components(
        [RunFile, Entry, IterationTelemetry], ref_template="#/$defs/{name}"
    )
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://procjudge.dev/schema/run-1.json",
        "title": "procjudge run file",
        "description": (
            "One agent's attempt at one challenge, iteration by iteration: a mapping with "
            "`iterations:`, a list of iteration entries, or one entry. (A YAML stream holds one "
            "entry per document.)"
        ),
        # The shapes are told apart by their keys, so that a wrapped run is checked as a wrapped run:
        # a mapping with `iterations:` or `run:` is never also accepted as a bare record.
        "anyOf": [
            run_ref,
            {"type": "array", "items": {"anyOf": [entry_ref, _bare(record_ref, "iteration_telemetry")]}},
            {"allOf": [entry_ref, {"not": {"anyOf": [{"required": ["iterations"]}, {"required": ["run"]}]}}]},
            _bare(record_ref, "iteration_telemetry", "iterations", "run"),
        ],
        "$defs": components,
    }
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n"


def _bare(record_ref: dict[str, Any], *keys: str) -> dict[str, Any]:
    """A bare telemetry record that holds none of the keys of the wrapping shapes."""
    return {"allOf": [record_ref, {"type": "object"}, {"not": {"anyOf": [{"required": [k]} for k in keys]}}]}
