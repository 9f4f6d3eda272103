"""``procjudge review``: the queue as the CSV reviewers fill in, the line that says where it went,
and the estimate as a table (or markdown)."""

from __future__ import annotations

import csv
import io

from ..results import ReviewEstimate, ReviewQueue
from .text import spreadsheet_safe

QUEUE_COLUMNS = ["path", "stratum", "bucket", "attempts", "findings", "process_score", "weight", "label"]


def queue_csv(queue: ReviewQueue) -> str:
    """The queue with an empty label column, one run per row, safe to open in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(QUEUE_COLUMNS)
    for item in queue.queue:
        writer.writerow([spreadsheet_safe(v) for v in (item.path, item.stratum, item.bucket, item.attempts,
                                                       " ".join(item.findings), item.process_score, item.weight, "")])
    return buffer.getvalue()


def queue_note(queue: ReviewQueue, stem: str) -> str:
    strata = ", ".join(f"{name} {info.sampled}/{info.population}" for name, info in queue.strata.items())
    return (f"{len(queue.queue)} of {queue.runs} runs in {stem}.csv and {stem}.json (sampled/population: {strata})\n"
            f"fill in the label column (defect or ok) and run: procjudge review estimate {stem}.json {stem}.csv\n")


def table(result: ReviewEstimate) -> str:
    lines = [f"{'stratum':<24} {'share':>7} {'reviewed':>8} {'defects':>8} {'rate':>6}  95% interval"]
    for name, s in result.strata.items():
        rate = f"{s.rate:.0%}" if s.rate is not None else "-"
        ci = f"{s.ci95[0]:.0%}-{s.ci95[1]:.0%}" if s.ci95 else "-"
        lines.append(f"{name[:24]:<24} {s.share:>7.1%} {s.reviewed:>8} {s.defects:>8} {rate:>6}  {ci}")
    if result.weighted_rate is not None and result.weighted_ci95 is not None:
        low, high = result.weighted_ci95
        lines.append(f"overall, weighted by share: {result.weighted_rate:.1%} ({low:.1%}-{high:.1%})")
        lines.append(f"unweighted mean of stratum rates (do not report): {result.unweighted_mean_of_strata or 0:.1%}")
    if result.unlabelled_strata:
        lines.append(renormalised(result))
    return "\n".join(lines) + "\n"


def renormalised(result: ReviewEstimate) -> str:
    """What the overall rate leaves out when some strata have no label yet."""
    shown = ", ".join(result.unlabelled_strata[:10]) + (" ..." if len(result.unlabelled_strata) > 10 else "")
    return (f"no labels in {len(result.unlabelled_strata)} stratum(s) ({shown}): the overall rate is renormalised over "
            f"the labelled strata, {result.strata_covered_share:.1%} of the runs")


CSV_COLUMNS = ["stratum", "population", "share", "reviewed", "defects", "rate", "ci95_low", "ci95_high"]


def csv_report(result: ReviewEstimate) -> str:
    """One row per stratum, then the overall weighted rate (its share: the labelled strata's) and
    the unweighted mean of stratum rates, for a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for name, s in result.strata.items():
        low, high = s.ci95 if s.ci95 else ("", "")
        writer.writerow([spreadsheet_safe(name), s.population, s.share, s.reviewed, s.defects,
                         "" if s.rate is None else s.rate, low, high])
    low, high = result.weighted_ci95 if result.weighted_ci95 else ("", "")
    population = sum(s.population for s in result.strata.values())
    writer.writerow(["overall (weighted by share)", population, result.strata_covered_share, result.labels_used,
                     sum(s.defects for s in result.strata.values()),
                     "" if result.weighted_rate is None else result.weighted_rate, low, high])
    writer.writerow(["unweighted mean of stratum rates (do not report)", "", "", "", "",
                     "" if result.unweighted_mean_of_strata is None else result.unweighted_mean_of_strata, "", ""])
    return buffer.getvalue()


def markdown(result: ReviewEstimate) -> str:
    return "```\n" + table(result) + "```\n"
