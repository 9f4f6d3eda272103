"""Shared helpers: build runs in memory, and the switch that regenerates golden outputs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from procjudge import judge, load_run
from procjudge.policy import DEFAULT

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_telemetry"


def present(values: list[Any], where: Path, what: str) -> list[Any]:
    """Parameters of a test over a corpus kept outside the repository: the values, or, when there
    are none, one parameter that skips saying what is missing and where it was looked for (pytest
    would otherwise skip with a bare "got empty parameter set")."""
    if values:
        return values
    reason = f"{what} not found at {where} (PROCJUDGE_REALDATA names the folder of the real logs)"
    return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens", action="store_true", default=False,
        help="rewrite tests/golden/* from the current output (review the diff before committing)",
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def run_from(document: Any, name: str = "run.yaml"):
    """A validated Run from a Python document, through the real loader."""
    data = yaml.safe_dump(document, sort_keys=False).encode()
    return load_run(name, data)


def trajectory_run(scores: list[float], fmt: str = "standard", **run_info: Any) -> dict:
    """A run document whose iterations carry only their scores."""
    return {
        "run": {"format": fmt, **run_info},
        "iterations": [
            {"iteration_telemetry": {"iteration_number": k, "score": {"post_iteration": s}}}
            for k, s in enumerate(scores)
        ],
    }


def verdict_of(document: Any, policy=DEFAULT):
    return judge(run_from(document), policy)


def items_by_id(verdict) -> dict[str, list]:
    out: dict[str, list] = {}
    for item in verdict.items:
        out.setdefault(item.id, []).append(item)
    return out


def points(verdict, item_id: str) -> float:
    return sum(i.points for i in verdict.items if i.id == item_id)


def make_row(**fields: object) -> object:
    """A batch row with neutral defaults, for tests of what reads rows (summaries, review, drift)."""
    from procjudge.results import Row

    defaults: dict[str, object] = {
        "id": fields.get("path", "run"), "agent": "", "challenge": "", "format": "standard", "path": "run.yaml",
        "iterations_used": 1, "final_score": 0.0, "process_score": 0.0, "raw_process_score": 0.0,
        "tier": "systematic_refinement", "pattern": "linear_progress", "anti_patterns": (), "items": (), "warnings": 0,
        "final_minus_best": 0.0, "bucket": "1", "outcome": "stopped", "gate_rounds": None, "returned_round": None,
        "source": "", "started_at": "", "first_failing_test": "",
    }
    defaults.update(fields)
    for key in ("anti_patterns", "items"):
        defaults[key] = tuple(defaults[key])  # type: ignore[arg-type]
    return Row(**defaults)  # type: ignore[arg-type]


def optional_module(module: str, package: str, extra: str) -> Any:
    """An optional extra's module, imported; where it is missing the test is skipped with the
    reason, except in CI's first pass, where the test extra must have brought it (its second pass,
    on the lowest versions of the core's dependencies, leaves the extras' tests to the first)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") and os.environ.get("PROCJUDGE_BROWSER_TESTS") != "skip":
            pytest.fail(f"{package} is not installed: the test extra must bring it")
        pytest.skip(f"{package} is not installed (pip install -e '.[test]' or '.[{extra}]')")
