"""Two runs, or two agents' folders of runs, side by side.

Runs: every item with A's points, B's points and the difference, and a winner on the process
score with the items that decided it.  Folders: runs paired by ``run.challenge`` (else by file
name), a paired table, per-agent aggregates, paired wins/losses/ties and the mean paired
difference (B - A) with a seeded 95% bootstrap interval.
"""

from __future__ import annotations

import os
from typing import Any

SCHEMA = "procjudge.compare/1"


def winner_of(a: float, b: float) -> str:
    return "tie" if a == b else ("a" if a > b else "b")


def compare_runs(a: Any, b: Any) -> dict[str, Any]:
    """Two verdicts: per-item rows (points summed per id), the winner and the deciding items."""
    def totals(verdict: Any) -> dict[tuple[str, str], float]:
        out: dict[tuple[str, str], float] = {}
        for item in verdict.items:
            out[(item.id, item.kind)] = out.get((item.id, item.kind), 0.0) + item.points
        return out

    points_a, points_b = totals(a), totals(b)
    keys = list(dict.fromkeys(list(points_a) + list(points_b)))
    rows = []
    for item_id, kind in keys:
        pa, pb = points_a.get((item_id, kind)), points_b.get((item_id, kind))
        rows.append({"id": item_id, "kind": kind, "a": pa, "b": pb, "difference": round((pb or 0.0) - (pa or 0.0), 4)})
    winner = winner_of(a.process_score, b.process_score)
    deciding: list[dict[str, Any]] = []
    if winner != "tie":
        sign = 1 if winner == "b" else -1
        favour = [r for r in rows if r["difference"] * sign > 0]
        favour.sort(key=lambda r: (-abs(r["difference"]), r["id"]))
        deciding = favour[:3]
    return {
        "schema": SCHEMA, "mode": "runs", "a": a, "b": b, "rows": rows, "winner": winner,
        "deciding": [r["id"] for r in deciding],
        "difference": round(b.process_score - a.process_score, 4),
    }


def match_key(row: dict[str, Any]) -> str:
    """Runs are paired by challenge, else by file name without extension."""
    if row.get("challenge"):
        return str(row["challenge"])
    return os.path.splitext(os.path.basename(row["path"]))[0]


def bootstrap_interval(differences: list[float], seed: int, resamples: int = 10_000, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of paired differences, reproducible by seed."""
    if len(differences) < 2:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    values = np.asarray(differences, dtype=float)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // len(values))
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, len(values), size=(stop - start, len(values)))
        means[start:stop] = values[picks].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return round(float(low), 4), round(float(high), 4)


def compare_folders(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], seed: int = 0,
                    label_a: str = "a", label_b: str = "b") -> dict[str, Any]:
    """Pair two agents' runs and summarise the paired differences (B - A)."""
    from .batch import agent_summary

    def index(rows: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
        keyed: dict[str, dict[str, Any]] = {}
        extra = []
        for row in sorted(rows, key=lambda r: r["path"]):
            key = match_key(row)
            if key in keyed:
                extra.append(row)  # a second run of the same challenge has no partner
            else:
                keyed[key] = row
        return keyed, extra

    keyed_a, extra_a = index(rows_a)
    keyed_b, extra_b = index(rows_b)
    common = sorted(set(keyed_a) & set(keyed_b))
    pairs = []
    for key in common:
        ra, rb = keyed_a[key], keyed_b[key]
        pairs.append({
            "challenge": key,
            "a": {"id": ra["id"], "path": ra["path"], "process_score": ra["process_score"], "final_score": ra["final_score"],
                  "tier": ra["tier"], "anti_patterns": ra["anti_patterns"]},
            "b": {"id": rb["id"], "path": rb["path"], "process_score": rb["process_score"], "final_score": rb["final_score"],
                  "tier": rb["tier"], "anti_patterns": rb["anti_patterns"]},
            "difference": round(rb["process_score"] - ra["process_score"], 4),
            "winner": winner_of(ra["process_score"], rb["process_score"]),
        })
    unmatched_a = [keyed_a[k] for k in sorted(set(keyed_a) - set(keyed_b))] + extra_a
    unmatched_b = [keyed_b[k] for k in sorted(set(keyed_b) - set(keyed_a))] + extra_b
    differences = [p["difference"] for p in pairs]
    mean = round(sum(differences) / len(differences), 4) if differences else None
    interval = bootstrap_interval(differences, seed)

    def side(rows: list[dict[str, Any]], label: str) -> dict[str, Any]:
        relabelled = [{**r, "agent": label} for r in rows]
        summary = agent_summary(relabelled)
        agents = sorted({r["agent"] or "(none)" for r in rows})
        base = summary[0] if summary else {"runs": 0}
        below = [r for r in rows if r.get("final_minus_best", 0) < 0]
        loop = {"share_below_best": round(len(below) / len(rows), 4) if rows else None,
                "points_lost_below_best": round(-sum(r["final_minus_best"] for r in below), 4)}
        return {"label": label, "agents": agents, **{k: v for k, v in base.items() if k != "agent"}, **loop}

    wins = sum(1 for p in pairs if p["winner"] == "b")
    losses = sum(1 for p in pairs if p["winner"] == "a")
    summary_a, summary_b = side(rows_a, label_a), side(rows_b, label_b)
    # The winner rests on the paired runs (like for like), not on side means over unmatched runs.
    overall = "tie" if not mean else ("b" if mean > 0 else "a")
    return {
        "schema": SCHEMA, "mode": "folders", "a": summary_a, "b": summary_b, "rows": pairs, "winner": overall,
        "paired": {
            "pairs": len(pairs), "b_wins": wins, "b_losses": losses, "ties": len(pairs) - wins - losses,
            "mean_difference": mean, "ci95": list(interval) if interval else None, "seed": seed,
            "resamples": 10_000,
        },
        "unmatched": {"a": [{"path": r["path"], "key": match_key(r)} for r in unmatched_a],
                      "b": [{"path": r["path"], "key": match_key(r)} for r in unmatched_b]},
    }


def worse_by(result: dict[str, Any]) -> float | None:
    """How far B's (mean) process score falls below A's (positive when B is worse)."""
    if result["mode"] == "runs":
        return round(result["a"].process_score - result["b"].process_score, 4)
    a, b = result["a"].get("mean_process_score"), result["b"].get("mean_process_score")
    if a is None or b is None:
        return None
    return round(a - b, 4)
