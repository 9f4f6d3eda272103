"""DataFrames for notebooks: the runs, their items and their iterations as pandas tables.

``frames(...)`` takes run files, folders and globs (found as ``procjudge batch`` finds them) or
verdicts already made, and returns three DataFrames whose columns carry the names of the
Parquet tables (``runs``, ``items``) and of the verdict's iteration rows, with typed columns
(nullable integers and booleans, strings, times as UTC datetimes), but for the keys: the run is
``run_id`` in all three tables and the rule ``rule`` in ``items``, so that ``runs.merge(items)``
joins on the run (the Parquet files say ``id``/``run`` and ``id``). pandas is imported here
only: ``procjudge score`` never loads it.

    import procjudge
    runs, items, iterations = procjudge.frames(["runs/"])
    runs.groupby(["agent", "held_back_resolved"]).process_score.mean()
    runs.merge(items, on=["run_id", "path"])  # one row per item, with its run's figures
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .policy import DEFAULT, Policy
from .render.parquet import COLUMNS
from .results import Row
from .verdict import Verdict


class Frames(NamedTuple):
    """The three tables; unpack them (``runs, items, iterations = frames(...)``)."""

    runs: Any
    items: Any
    iterations: Any


def iteration_rows(row: Row, verdict: Verdict) -> list[dict[str, Any]]:
    """One row per scored submission of a verdict (its per-iteration table)."""
    return [{"run": row.id, "path": row.path, "iteration": it.iteration, "score": it.score,
             "score_source": it.score_source, "delta": it.delta, "passed": it.passed, "total": it.total,
             "phase": it.phase, "duration_seconds": it.duration_seconds, "signals": list(it.signals)}
            for it in verdict.iterations]


def _verdicts(sources: Iterable[str | Path | Verdict], policy: Policy, jobs: int) -> Iterator[tuple[Row, Verdict]]:
    """Every verdict with its row: those given as they are, the run files under the paths scored
    (an unreadable file is left out; ``procjudge batch`` reports them)."""
    from .batch import score_paths
    from .discovery import discover

    given = list(sources)
    for verdict in (s for s in given if isinstance(s, Verdict)):
        yield Row.of(verdict, verdict.run.path), verdict
    paths = [str(s) for s in given if not isinstance(s, Verdict)]
    if not paths:
        return
    for result in score_paths(discover(paths), policy, jobs=jobs):
        scored = result.verdict()
        if result.row is not None and scored is not None:
            yield result.row, scored


def frames(sources: Iterable[str | Path | Verdict] | str | Path, policy: Policy = DEFAULT, jobs: int = 1) -> Frames:
    """The runs, items and iterations of the sources (run files, folders, globs, or verdicts) as
    typed pandas DataFrames."""
    import pandas as pd

    from .render.parquet import item_rows, run_row

    if isinstance(sources, (str, Path)):
        sources = [sources]
    tables: dict[str, list[dict[str, Any]]] = {"runs": [], "items": [], "iterations": []}
    for row, verdict in _verdicts(sources, policy, jobs):
        tables["runs"].append(run_row(row))
        tables["items"] += item_rows(row, verdict)
        tables["iterations"] += iteration_rows(row, verdict)
    built = []
    for name, rows in tables.items():
        columns = COLUMNS[name]
        frame = pd.DataFrame(rows, columns=list(columns)).astype(columns)
        if "started_at" in frame:  # ISO 8601 text in the files; a time a reader cannot parse is NaT
            frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True, errors="coerce", format="ISO8601")
        built.append(frame.rename(columns=KEYS[name]))
    return Frames(*built)


# The join keys of the frames: one name for the run in every table, and the rule by its name.
KEYS: dict[str, dict[str, str]] = {"runs": {"id": "run_id"}, "items": {"run": "run_id", "id": "rule"},
                                   "iterations": {"run": "run_id"}}
