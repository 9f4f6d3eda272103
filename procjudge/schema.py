"""The JSON Schema of a run file, generated from the validated model so the two cannot drift."""

from __future__ import annotations

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
        "anyOf": [
            run_ref,
            {"type": "array", "items": {"anyOf": [entry_ref, record_ref]}},
            entry_ref,
            record_ref,
        ],
        "$defs": components,
    }
    return msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n"
