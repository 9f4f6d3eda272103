"""Two runs, or two agents' folders of runs, side by side.

Runs: every item with A's points, B's points and the difference, and a winner on the process
score with the items that decided it.  Folders: runs paired by ``run.challenge`` (else by file
name), a paired table, per-agent aggregates, paired wins/losses/ties and the mean paired
difference (B - A) with a seeded 95% bootstrap interval.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import msgspec

from .model import Run
from .policy import Policy
from .results import (
    COMPARE_SCHEMA as SCHEMA,
)
from .results import (
    Comparison,
    FoldersComparison,
    ItemDifference,
    Judged,
    Pair,
    Paired,
    PairedRun,
    Row,
    RunsComparison,
    Side,
    Unmatched,
    UnmatchedRun,
    Winner,
    most_different,
)
from .tally import WARNINGS_SHOWN, agent_summary, figures_of
from .verdict import Verdict


def winner_of(a: float, b: float) -> Winner:
    return "tie" if a == b else ("a" if a > b else "b")


def compare_runs(a: Verdict, b: Verdict) -> RunsComparison:
    """Two verdicts: per-item rows (points summed per id), the winner and the deciding items."""
    def totals(verdict: Verdict) -> dict[tuple[str, str], float]:
        out: dict[tuple[str, str], float] = {}
        for item in verdict.items:
            out[(item.id, item.kind)] = out.get((item.id, item.kind), 0.0) + item.points
        return out

    points_a, points_b = totals(a), totals(b)
    keys = list(dict.fromkeys(list(points_a) + list(points_b)))
    rows = []
    for item_id, kind in keys:
        pa, pb = points_a.get((item_id, kind)), points_b.get((item_id, kind))
        rows.append(ItemDifference(id=item_id, kind=kind, a=pa, b=pb, difference=round((pb or 0.0) - (pa or 0.0), 4)))
    winner = winner_of(a.process_score, b.process_score)
    deciding: list[ItemDifference] = []
    if winner != "tie":
        sign = 1 if winner == "b" else -1
        deciding = sorted((r for r in rows if r.difference * sign > 0), key=lambda r: (-abs(r.difference), r.id))[:3]
    return RunsComparison(
        schema=SCHEMA, mode="runs", a=a, b=b, rows=rows, winner=winner, deciding=[r.id for r in deciding],
        difference=round(b.process_score - a.process_score, 4),
    )


def match_key(row: Row) -> str:
    """Runs are paired by challenge, else by file name without extension (a record of a
    JSON-lines file, which shares its file with the others: by run id)."""
    if row.challenge:
        return row.challenge
    from .records import is_records

    file, _, line = row.path.rpartition(":")
    if line.isdigit() and is_records(file):
        return row.id
    return os.path.splitext(os.path.basename(row.path))[0]


def natural_key(text: str) -> tuple[tuple[int | str, ...], str]:
    """The order a reader expects of challenge names: ``HumanEval/2`` before ``HumanEval/10``,
    letters without regard to case, the text itself as the last word. ``re.split`` with a group
    alternates text and digits, so two keys always compare a string with a string and a number
    with a number."""
    parts = re.split(r"(\d+)", text)
    return tuple(int(part) if k % 2 else part.casefold() for k, part in enumerate(parts)), text


def bootstrap_interval(differences: list[float], seed: int, resamples: int = 10_000, level: float = 0.95) -> tuple[float,
                                                                                                                   float] | None:
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


def compare_folders(rows_a: list[Row], rows_b: list[Row], seed: int = 0,
                    label_a: str = "a", label_b: str = "b") -> FoldersComparison:
    """Pair two agents' runs and summarise the paired differences (B - A)."""

    def index(rows: list[Row]) -> tuple[dict[str, Row], list[Row]]:
        keyed: dict[str, Row] = {}
        extra = []
        for row in sorted(rows, key=lambda r: r.path):
            key = match_key(row)
            if key in keyed:
                extra.append(row)  # a second run of the same challenge has no partner
            else:
                keyed[key] = row
        return keyed, extra

    def paired(row: Row) -> PairedRun:
        return PairedRun(id=row.id, path=row.path, process_score=row.process_score, final_score=row.final_score,
                         tier=row.tier, anti_patterns=list(row.anti_patterns))

    keyed_a, extra_a = index(rows_a)
    keyed_b, extra_b = index(rows_b)
    pairs = []
    for key in sorted(set(keyed_a) & set(keyed_b)):
        ra, rb = keyed_a[key], keyed_b[key]
        pairs.append(Pair(challenge=key, a=paired(ra), b=paired(rb),
                          difference=round(rb.process_score - ra.process_score, 4),
                          winner=winner_of(ra.process_score, rb.process_score)))
    unmatched_a = [keyed_a[k] for k in sorted(set(keyed_a) - set(keyed_b), key=natural_key)] + extra_a
    unmatched_b = [keyed_b[k] for k in sorted(set(keyed_b) - set(keyed_a), key=natural_key)] + extra_b
    differences = [p.difference for p in pairs]
    mean = round(sum(differences) / len(differences), 4) if differences else None
    interval = bootstrap_interval(differences, seed)  # resampled in key order: the interval a seed gave stays
    pairs.sort(key=lambda pair: natural_key(pair.challenge))  # shown in natural order: /2 before /10

    def side(rows: list[Row], label: str) -> Side:
        summary = agent_summary(figures_of(r, label) for r in rows)
        agents = sorted({r.agent or "(none)" for r in rows})
        below = [r for r in rows if r.final_minus_best < 0]
        share = round(len(below) / len(rows), 4) if rows else None
        lost = round(-sum(r.final_minus_best for r in below), 4)
        if not summary:
            return Side(label=label, agents=agents, runs=0, share_below_best=share, points_lost_below_best=lost)
        s = summary[0]
        return Side(label=label, agents=agents, runs=s.runs, mean_process_score=s.mean_process_score,
                    median_process_score=s.median_process_score, mean_final_score=s.mean_final_score,
                    mean_iterations_used=s.mean_iterations_used, tiers=s.tiers, anti_pattern_share=s.anti_pattern_share,
                    share_below_best=share, points_lost_below_best=lost, cost_usd=s.cost_usd,
                    cost_per_resolved_run=s.cost_per_resolved_run)

    wins = sum(1 for p in pairs if p.winner == "b")
    losses = sum(1 for p in pairs if p.winner == "a")
    # The winner rests on the paired runs (like for like), not on side means over unmatched runs.
    overall: Winner = "tie" if not mean else ("b" if mean > 0 else "a")
    return FoldersComparison(
        schema=SCHEMA, mode="folders", a=side(rows_a, label_a), b=side(rows_b, label_b), rows=pairs, winner=overall,
        paired=Paired(pairs=len(pairs), b_wins=wins, b_losses=losses, ties=len(pairs) - wins - losses,
                      mean_difference=mean, ci95=list(interval) if interval else None, seed=seed, resamples=10_000),
        unmatched=Unmatched(a=[UnmatchedRun(path=r.path, key=match_key(r)) for r in unmatched_a],
                            b=[UnmatchedRun(path=r.path, key=match_key(r)) for r in unmatched_b]),
        clear=overall != "tie" and interval is not None and (interval[0] > 0 or interval[1] < 0),
    )


def worse_by(result: Comparison) -> float | None:
    """How far B's (mean) process score falls below A's (positive when B is worse)."""
    if isinstance(result, RunsComparison):
        return round(result.a.process_score - result.b.process_score, 4)
    a, b = result.a.mean_process_score, result.b.mean_process_score
    if a is None or b is None:
        return None
    return round(a - b, 4)


def judge_most_different(result: FoldersComparison, policy: Policy) -> dict[str, Judged]:
    """The runs of the pairs a comparison page opens side by side (``most_different``), judged
    again under ``policy`` with their detail, by path; a run that can no longer be read is left
    out (the page then shows its summary)."""
    from .detail import run_detail
    from .judge import judge
    from .loading import LoadError, load_run

    judged: dict[str, Judged] = {}
    for pair in most_different(result):
        for path in (pair.a.path, pair.b.path):
            try:
                run = load_run(path)
            except LoadError:
                continue
            judged[path] = Judged(verdict=judge(run, policy), detail=run_detail(run))
    return judged


class Compared(msgspec.Struct, kw_only=True):
    """``procjudge compare`` done: the comparison (with the unreadable files as its errors), the
    runs a page opens judged whole, and each run's warnings as (path, warning) with their count."""

    result: Comparison
    judged: dict[str, Judged]
    warnings: list[tuple[str, str]]
    warning_count: int


def compare_targets(a: str, b: str, policy: Policy, *, read: Callable[[str], Run], find: Callable[[list[str]], list[str]],
                    seed: int = 0, jobs: int = 1, detail: bool = False) -> Compared:
    """Two run files (``read`` reads one, ``-`` included) or two folders of runs (``find`` lists
    a folder's run files), compared; ``detail`` judges the runs a page opens with their detail.
    UsageError for two things that cannot be compared."""
    from .results import UsageError

    if a == "-" and b == "-":
        raise UsageError("only one side of compare can be read from standard input")
    for target in (a, b):
        if target != "-" and not os.path.exists(target):
            raise UsageError(f"{target}: no such file or folder")
    many = [target != "-" and (os.path.isdir(target) or _several_records(target)) for target in (a, b)]
    if many[0] != many[1]:
        raise UsageError("compare takes two runs (two run files) or two agents' runs (two folders, or two JSON-lines "
                         "files of several runs), not one of each")
    if not many[0]:
        return _compare_files(a, b, policy, read)
    sides = [_side(target, policy, find, jobs) for target in (a, b)]
    for target, side in zip((a, b), sides, strict=True):
        if not side[2]:
            from .discovery import nothing_found

            raise UsageError(nothing_found([target]))
    (rows_a, errors_a, _, warned_a, count_a), (rows_b, errors_b, _, warned_b, count_b) = sides
    result = compare_folders(rows_a, rows_b, seed=seed, label_a=_label(a, rows_a), label_b=_label(b, rows_b))
    result = msgspec.structs.replace(result, errors=errors_a + errors_b)
    judged = judge_most_different(result, policy) if detail else {}
    return Compared(result=result, judged=judged, warnings=warned_a + warned_b, warning_count=count_a + count_b)


def _compare_files(a: str, b: str, policy: Policy, read: Callable[[str], Run]) -> Compared:
    from .detail import run_detail
    from .judge import judge

    verdicts, judged, warnings, count = [], {}, [], 0
    for target in (a, b):
        run = read(target)
        verdict = judge(run, policy)
        verdicts.append(verdict)
        judged[verdict.run.path] = Judged(verdict=verdict, detail=run_detail(run))
        warnings += [(target, w) for w in verdict.warnings[:WARNINGS_SHOWN]]
        count += len(verdict.warnings)
    return Compared(result=compare_runs(*verdicts), judged=judged, warnings=warnings, warning_count=count)



def _several_records(path: str) -> bool:
    """Whether a path is a JSON-lines file of more than one run (a side of many runs, as a folder
    is); one of a single run is a run file. Only the first two lines are read."""
    from .records import is_records, read_records

    if not is_records(path) or not os.path.isfile(path):
        return False
    from contextlib import closing

    try:
        with closing(read_records(path)) as records:
            for seen, _ in enumerate(records, start=1):
                if seen > 1:
                    return True
    except (OSError, ValueError):
        return False  # read again as one run, whose error names the file
    return False


def _side(target: str, policy: Policy, find: Callable[[list[str]], list[str]],
          jobs: int) -> tuple[list[Row], list[str], int, list[tuple[str, str]], int]:
    """Score one folder: its rows, its unreadable files, how many files were found, and the first
    warnings with their count."""
    from .batch import score_paths

    paths = find([target])
    rows: list[Row] = []
    errors: list[str] = []
    warnings: list[tuple[str, str]] = []
    count = 0
    for result in score_paths(paths, policy, jobs=jobs):
        if result.row is None:
            errors.append(result.error or f"{result.path}: not scored")
        else:
            rows.append(result.row)
            count += result.row.warnings
            warnings += [(result.path, w) for w in result.warnings][: max(0, WARNINGS_SHOWN - len(warnings))]
    return rows, errors, len(paths), warnings, count


def _label(target: str, rows: list[Row]) -> str:
    agents = sorted({r.agent for r in rows if r.agent})
    return agents[0] if len(agents) == 1 else os.path.basename(os.path.normpath(target))
