"""JSON output: deterministic (no timestamps, keys in a fixed order) and versioned by its `schema` field."""

from __future__ import annotations

from typing import Any

import msgspec


def dumps(value: Any, **options: Any) -> str:
    """``value`` as indented JSON; ``options`` (a text report's width) do not apply."""
    return msgspec.json.format(msgspec.json.encode(value), indent=2).decode("utf-8") + "\n"


def score(verdict: Any) -> str:
    return dumps(verdict)
