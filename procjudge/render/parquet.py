"""``batch --format parquet``: the runs and their findings as two Parquet tables.

``-o DIR`` writes ``DIR/runs.parquet`` and ``DIR/items.parquet``; ``-o NAME.parquet`` writes
``NAME.parquet`` and ``NAME.items.parquet``. The runs table has one row per scored run (the
figures every report reads); the items table one row per item of a verdict (run, path, id, kind,
points, iterations, basis, strength, evidence), the shape DuckDB, pandas, Polars and Spark read
directly. Rows are written in row groups as runs stream in, so a million runs take flat memory;
both files appear only when the batch is complete (written beside their targets, then renamed).

Needs pyarrow: ``pip install 'procjudge[parquet]'``.
"""

from __future__ import annotations

import functools
import os
import tempfile
from typing import Any

RUNS_GROUP = 10_000  # rows of the runs table a row group holds (a run's row is wide: about 2 KB in memory)
GROUP = 50_000  # rows of the items table a row group holds


def targets(target: str) -> tuple[str, str]:
    """(runs file, items file) for an ``-o`` target."""
    if target.endswith(".parquet"):
        return target, target[: -len(".parquet")] + ".items.parquet"
    return os.path.join(target, "runs.parquet"), os.path.join(target, "items.parquet")


def require() -> None:
    """ImportError with the fix when pyarrow is missing."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise ImportError("--format parquet needs pyarrow: pip install 'procjudge[parquet]'") from None


# Column -> pandas dtype (the Parquet tables' names; nullable where the value may be missing).
COLUMNS: dict[str, dict[str, str]] = {
    "runs": {"id": "string", "path": "string", "agent": "string", "challenge": "string", "format": "string",
             "iterations_used": "Int64", "final_score": "float64", "process_score": "float64",
             "raw_process_score": "float64", "tier": "string", "pattern": "string", "anti_patterns": "object",
             "findings": "object", "warnings": "Int64", "final_minus_best": "float64", "bucket": "string",
             "outcome": "string", "returned_round": "Int64", "source": "string", "started_at": "string",
             "first_failing_test": "string", "held_back_resolved": "boolean", "held_back_passed": "Int64",
             "held_back_total": "Int64", "best_score": "float64", "best_iteration": "Int64", "gated_final": "float64"},
    "items": {"run": "string", "path": "string", "id": "string", "kind": "string", "points": "float64",
              "iterations": "object", "basis": "string", "strength": "string", "evidence": "string"},
    "iterations": {"run": "string", "path": "string", "iteration": "Int64", "score": "float64",
                   "score_source": "string", "delta": "float64", "passed": "Int64", "total": "Int64",
                   "phase": "string", "duration_seconds": "float64", "signals": "object"},
}



@functools.cache
def _schemas() -> tuple[Any, Any]:
    import pyarrow as pa

    runs = pa.schema([
        ("id", pa.string()), ("path", pa.string()), ("agent", pa.string()), ("challenge", pa.string()),
        ("format", pa.string()), ("iterations_used", pa.int32()), ("final_score", pa.float64()),
        ("process_score", pa.float64()), ("raw_process_score", pa.float64()), ("tier", pa.string()),
        ("pattern", pa.string()), ("anti_patterns", pa.list_(pa.string())), ("findings", pa.list_(pa.string())),
        ("warnings", pa.int32()), ("final_minus_best", pa.float64()), ("bucket", pa.string()), ("outcome", pa.string()),
        ("returned_round", pa.int32()), ("source", pa.string()), ("started_at", pa.string()),
        ("first_failing_test", pa.string()), ("held_back_resolved", pa.bool_()), ("held_back_passed", pa.int32()),
        ("held_back_total", pa.int32()), ("best_score", pa.float64()), ("best_iteration", pa.int32()),
        ("gated_final", pa.float64()),
    ])
    items = pa.schema([
        ("run", pa.string()), ("path", pa.string()), ("id", pa.string()), ("kind", pa.string()), ("points", pa.float64()),
        ("iterations", pa.list_(pa.int32())), ("basis", pa.string()), ("strength", pa.string()), ("evidence", pa.string()),
    ])
    return runs, items


def run_row(row: Any) -> dict[str, Any]:
    return {"id": row.id, "path": row.path, "agent": row.agent, "challenge": row.challenge, "format": row.format,
            "iterations_used": row.iterations_used, "final_score": row.final_score, "process_score": row.process_score,
            "raw_process_score": row.raw_process_score, "tier": row.tier, "pattern": row.pattern,
            "anti_patterns": list(row.anti_patterns), "findings": list(row.items), "warnings": row.warnings,
            "final_minus_best": row.final_minus_best, "bucket": row.bucket, "outcome": row.outcome,
            "returned_round": row.returned_round, "source": row.source, "started_at": row.started_at,
            "first_failing_test": row.first_failing_test, "held_back_resolved": row.held_back_resolved,
            "held_back_passed": row.held_back_passed, "held_back_total": row.held_back_total,
            "best_score": row.best_score, "best_iteration": row.best_iteration, "gated_final": row.gated_final}


def item_rows(row: Any, verdict: Any) -> list[dict[str, Any]]:
    return [{"run": row.id, "path": row.path, "id": item.id, "kind": item.kind, "points": item.points,
             "iterations": list(item.iterations), "basis": item.basis, "strength": item.strength, "evidence": item.evidence}
            for item in verdict.items]


class ParquetReporter:
    """Writes its own files (``writes_files``): the CLI hands it the ``-o`` target."""

    needs_lines = False
    needs_verdict = True  # the items table
    needs_detail = False
    writes_files = True

    def __init__(self, quiet: bool = False) -> None:
        require()
        self.quiet = quiet
        self.target: str | None = None
        self.runs: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []
        self.writers: list[Any] = []
        self.temporary: list[str] = []

    def start(self) -> str:
        import pyarrow.parquet as pq

        if self.target is None:
            raise ValueError("--format parquet needs -o DIR or -o NAME.parquet")
        from ..safe_io import WriteError

        runs_path, items_path = targets(self.target)
        folder = os.path.dirname(os.path.abspath(runs_path))
        try:
            os.makedirs(folder, exist_ok=True)
            runs_schema, items_schema = _schemas()
            for final, schema in ((runs_path, runs_schema), (items_path, items_schema)):
                if os.path.isdir(final):
                    raise WriteError(f"--output {final} is a folder; give a file name or a folder for both tables")
                fd, temporary = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(final) + ".", suffix=".tmp")
                os.close(fd)
                self.temporary.append(temporary)
                self.writers.append(pq.ParquetWriter(temporary, schema, compression="zstd"))
        except OSError as exc:
            raise WriteError(f"--output {self.target}: cannot write the Parquet tables in {folder}: "
                             f"{exc.strerror or exc}") from None
        return ""

    def _flush(self, force: bool = False) -> None:
        import pyarrow as pa

        runs_schema, items_schema = _schemas()
        if self.runs and (force or len(self.runs) >= RUNS_GROUP):
            self.writers[0].write_table(pa.Table.from_pylist(self.runs, schema=runs_schema))
            self.runs = []
        if self.items and (force or len(self.items) >= GROUP):
            self.writers[1].write_table(pa.Table.from_pylist(self.items, schema=items_schema))
            self.items = []

    def each(self, result: Any, reasons: list[str] | None) -> str:
        if result.row is None:
            return ""
        self.runs.append(run_row(result.row))
        verdict = result.verdict()
        if verdict is not None:
            self.items += item_rows(result.row, verdict)
        self._flush()
        return ""

    def finish(self, report: Any) -> str:
        from ..safe_io import mode_for

        self._flush(force=True)
        for writer in self.writers:
            writer.close()
        from ..safe_io import WriteError

        assert self.target is not None
        for temporary, final in zip(self.temporary, targets(self.target), strict=True):
            try:
                os.chmod(temporary, mode_for(final))
                os.replace(temporary, final)
            except OSError as exc:
                raise WriteError(f"--output {final}: cannot write: {exc.strerror or exc}") from None
        self.temporary = []
        return ""

    def abandon(self) -> None:
        """Remove the partial files (an interrupted or failed batch writes nothing)."""
        for writer in self.writers:
            try:
                writer.close()
            except Exception:  # noqa: BLE001,S110 - best effort while failing anyway
                pass
        for temporary in self.temporary:
            try:
                os.unlink(temporary)
            except OSError:
                pass
