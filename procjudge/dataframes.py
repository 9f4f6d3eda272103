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


MAX_JOBS = 256
ERRORS = ("raise", "warn", "ignore")


class FramesError(ValueError):
    """Files ``frames`` could not read (``errors="raise"``): ``problems`` lists one line each."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:5] + ([f"... and {len(problems) - 5:,} more"] if len(problems) > 5 else [])
        super().__init__(f"{len(problems):,} file{'s' if len(problems) != 1 else ''} could not be read "
                         f"(errors='warn' or 'ignore' to score the others):\n  " + "\n  ".join(shown))
        self.problems = problems


def _source(value: object) -> str | Verdict:
    """One source as ``frames`` reads it, or TypeError naming what was given."""
    import os

    if isinstance(value, Verdict):
        return value
    if isinstance(value, (str, Path)):
        return str(value)
    if isinstance(value, bytes):
        return os.fsdecode(value)
    raise TypeError(f"frames: a source is a path (str or Path), a glob or a Verdict; got {type(value).__name__}")


def _verdicts(sources: list[str | Verdict], policy: Policy, jobs: int, errors: str) -> Iterator[tuple[Row, Verdict]]:
    """Every verdict with its row: those given as they are, the run files under the paths scored.
    A path that names nothing and a file that cannot be read raise FramesError once every file
    was tried (``errors="raise"``), are warned of (``"warn"``) or left out (``"ignore"``)."""
    import warnings

    from .batch import score_paths
    from .discovery import discover, empty_globs

    for verdict in (s for s in sources if isinstance(s, Verdict)):
        yield Row.of(verdict, verdict.run.path), verdict
    paths = [s for s in sources if not isinstance(s, Verdict)]
    if not paths:
        return
    problems = [f"{glob}: no file matches this glob" for glob in empty_globs(paths)]
    for result in score_paths(discover(paths), policy, jobs=jobs):
        scored = result.verdict()
        if result.row is not None and scored is not None:
            yield result.row, scored
        else:
            problems.append(result.error or f"{result.path}: not scored")
    if problems and errors == "raise":
        raise FramesError(problems)
    if errors == "warn":
        for problem in problems:
            warnings.warn(f"procjudge.frames: {problem}", stacklevel=4)


def frames(sources: Iterable[str | Path | bytes | Verdict] | str | Path | bytes, policy: Policy = DEFAULT, jobs: int = 1,
           errors: str = "raise") -> Frames:
    """The runs, items and iterations of the sources (run files, folders, globs, or verdicts) as
    typed pandas DataFrames. A file that cannot be read, or a path or glob that names nothing,
    raises FramesError naming each (after every other file was scored); ``errors="warn"`` warns
    of each and ``"ignore"`` leaves them out. ``policy`` is a Policy (``procjudge.load_policy``),
    ``jobs`` worker processes from 1 to 256."""
    import pandas as pd

    from .render.parquet import item_rows, run_row

    if not isinstance(policy, Policy):
        raise TypeError(f"frames: policy is a Policy (procjudge.load_policy(PATH) or DEFAULT_POLICY); "
                        f"got {type(policy).__name__} {str(policy)[:40]!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ValueError(f"frames: jobs is a whole number of worker processes from 1 to {MAX_JOBS}; got {jobs!r}")
    if errors not in ERRORS:
        raise ValueError(f"frames: errors is one of {', '.join(ERRORS)}; got {errors!r}")
    if isinstance(sources, (str, Path, bytes)):
        sources = [sources]
    if not isinstance(sources, Iterable):
        raise TypeError(f"frames: sources is a path, a glob, a Verdict or a list of them; got {type(sources).__name__}")
    given = [_source(s) for s in sources]
    tables: dict[str, list[dict[str, Any]]] = {"runs": [], "items": [], "iterations": []}
    for row, verdict in _verdicts(given, policy, jobs, errors):
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
