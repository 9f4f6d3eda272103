"""Where the labelling budget goes: a stratified review sample, and the defect rate it estimates.

From "More attempts means more search for outputs that satisfy the check": sampling uniformly
from completed runs spends most reviews on the single-attempt runs, where defects are rare, and
a handful on the late passes, where they are common; stratifying by attempt bucket gives every
stratum enough reviews, and the overall rate is then rebuilt by weighting each stratum's rate by
its share of the runs. The plain average of the stratum rates, which forgets the weights, is
shown beside it because it is the mistake the chapter warns about (43% against 11.3% there).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

from .results import QueueEntry, ReviewEstimate, ReviewQueue, Row, StratumDraw, StratumEstimate

SCHEMA = "procjudge.review/1"
Z95 = 1.959964


def stratum_of(row: Row, by: str) -> str:
    """A run's stratum: its attempt bucket, or (``by="finding"``) its anti-patterns."""
    if by == "finding":
        return "+".join(sorted(row.anti_patterns or [])) or "none"
    return str(row.bucket or "?")


def draw(rows: list[Row], per_stratum: int, seed: int, by: str = "bucket") -> ReviewQueue:
    """A review queue: up to ``per_stratum`` runs drawn from each stratum with a seeded generator
    (in path order first, so the draw does not depend on the order files were found), each with
    its sampling weight (runs in its stratum / runs drawn from it)."""
    strata: dict[str, list[Row]] = {}
    for row in sorted(rows, key=lambda r: r.path):
        strata.setdefault(stratum_of(row, by), []).append(row)
    generator = random.Random(seed)
    queue = []
    summary = {}
    for name in sorted(strata):
        members = strata[name]
        chosen = generator.sample(members, min(per_stratum, len(members)))
        weight = len(members) / len(chosen) if chosen else 0.0
        summary[name] = StratumDraw(population=len(members), sampled=len(chosen))
        for row in sorted(chosen, key=lambda r: r.path):
            queue.append(QueueEntry(path=row.path, stratum=name, bucket=row.bucket,
                                    attempts=row.iterations_used, findings=list(row.anti_patterns or []),
                                    process_score=row.process_score, weight=round(weight, 6)))
    return ReviewQueue(schema=SCHEMA, by=by, seed=seed, per_stratum=per_stratum, runs=len(rows),
                       strata=summary, queue=queue)


DEFECT = {"defect", "defective", "bad", "1", "true", "yes", "fail", "not a fix", "wrong"}
OK = {"ok", "okay", "good", "0", "false", "no", "pass", "fix", "real fix", "correct"}
ACCEPTED = ("defect (or defective, bad, wrong, fail, not a fix, yes, true, 1) or ok (or okay, good, correct, pass, "
            "fix, real fix, no, false, 0), in any case")


def read_label(value: str) -> bool | None:
    """True for a defect, False for a sound run, None for a label that is neither."""
    text = value.strip().lower()
    if text in DEFECT:
        return True
    if text in OK:
        return False
    return None


def wilson(defects: int, n: int) -> tuple[float, float] | None:
    """The Wilson score interval (95%) of a proportion: sound for small n and rates near 0 or 1."""
    if n == 0:
        return None
    p = defects / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _stratum(population: int, share: float, reviewed: int, defects: int) -> StratumEstimate:
    rate = defects / reviewed if reviewed else None
    interval = wilson(defects, reviewed)
    return StratumEstimate(population=population, share=round(share, 6), reviewed=reviewed, defects=defects,
                           rate=round(rate, 6) if rate is not None else None,
                           ci95=[round(x, 6) for x in interval] if interval else None)


def estimate(queue: ReviewQueue, labels: Iterable[tuple[str, bool]]) -> ReviewEstimate:
    """Per stratum: reviewed runs, defects, the rate and its Wilson interval. Overall: the rate
    reweighted by each stratum's share of the runs, sum(share x rate), with a normal interval from
    sum(share^2 x rate (1 - rate) / n) with the finite-population correction; and, for contrast,
    the unweighted mean of the stratum rates."""
    labelled = dict(labels)
    total = sum(s.population for s in queue.strata.values())
    strata: dict[str, StratumEstimate] = {}
    weighted = variance = 0.0
    covered = 0.0
    for name, info in queue.strata.items():
        paths = [q.path for q in queue.queue if q.stratum == name and q.path in labelled]
        n = len(paths)
        defects = sum(1 for p in paths if labelled[p])
        share = info.population / total if total else 0.0
        rate = defects / n if n else None
        strata[name] = _stratum(info.population, share, n, defects)
        if rate is not None:
            weighted += share * rate
            covered += share
            fpc = (info.population - n) / (info.population - 1) if info.population > 1 else 0.0
            variance += share ** 2 * rate * (1 - rate) / n * fpc
    rates = [s.rate for s in strata.values() if s.rate is not None]
    overall = weighted / covered if covered else None
    half = Z95 * math.sqrt(variance) / covered if covered else None
    return ReviewEstimate(
        schema=SCHEMA, by=queue.by, labels_used=sum(s.reviewed for s in strata.values()),
        strata=strata,
        weighted_rate=round(overall, 6) if overall is not None else None,
        weighted_ci95=([round(max(0.0, overall - half), 6), round(min(1.0, overall + half), 6)]
                       if overall is not None and half is not None else None),
        strata_covered_share=round(covered, 6),
        unweighted_mean_of_strata=round(sum(rates) / len(rates), 6) if rates else None,
        note="the weighted rate is the estimate; the unweighted mean of stratum rates over-counts the rare strata",
        unlabelled_strata=[name for name, stratum in strata.items() if not stratum.reviewed],
    )


def read_queue(data: bytes) -> ReviewQueue:
    """A queue ``review sample`` wrote, read back; ValueError (saying what is wrong, or empty when
    it is another kind of file) for anything else."""
    import msgspec

    try:
        value = msgspec.json.decode(data.removeprefix(b"\xef\xbb\xbf"))
    except msgspec.DecodeError:
        raise ValueError("") from None
    if not isinstance(value, dict) or value.get("schema") != SCHEMA:
        raise ValueError("")
    try:
        return msgspec.convert(value, ReviewQueue)
    except msgspec.ValidationError as exc:
        raise ValueError(f" ({exc})") from None


def queue_stem(out: str) -> str:
    """Where ``review sample --out`` writes: OUT.csv and OUT.json (a given .csv or .json suffix is
    replaced)."""
    import os

    root, suffix = os.path.splitext(out)
    return root if suffix in (".csv", ".json") else out


def read_labels(text: str, name: str) -> tuple[list[tuple[str, bool]], list[str]]:
    """The (path, is a defect) labels of a reviewers' CSV (columns path and label; a blank label is
    not yet reviewed), and a message for each label that is neither; ValueError without the
    columns."""
    import csv

    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or "path" not in reader.fieldnames or "label" not in reader.fieldnames:
        raise ValueError(f"{name}: expected columns path and label")
    labels, problems = [], []
    for number, row in enumerate(reader, start=2):
        if not (row.get("label") or "").strip():
            continue
        value = read_label(row["label"])
        if value is None:
            problems.append(f"{name}:{number}: label {row['label'][:40]!r}: expected {ACCEPTED}")
            continue
        labels.append((row["path"].lstrip("'"), value))
    return labels, problems
