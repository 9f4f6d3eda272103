"""What judging one run costs, part by part and rule by rule, in process.

    python benchmarks/bench_judge.py                      # the synthetic corpus (3,000 small runs)
    python benchmarks/bench_judge.py --corpus tests/labelled/runs

Judging is ``derive`` (the facts of every submission), the detectors (each asked ``needs``, then
run), and the verdict's assembly (pattern, tier, aggregate, gate replay, attempts). Each part is
timed over the same loaded runs, best of five passes; the per-detector profile times every
detector's ``needs`` and check in the order the judge runs them, over the same facts, with the
cost of reading the clock (measured in the same run) taken off, so the rows add up to the
detectors' share of a run. Then a long run: the microseconds an iteration at 10 to 5,000
iterations. Targets (issue "Judging cost per run"): a small run at most 90 us, at most 20 us an
iteration at 5,000 iterations. Figures are printed, never asserted: the machines are noisy.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_batch import run_document

SMALL_RUN_US = 90.0  # a small run (2-4 iterations), judged in process
PER_ITERATION_US = 20.0  # a 5,000-iteration run, per iteration
# The two figures above were set on a machine whose libyaml floor (bench_scale.floors: a small run
# parsed from YAML by libyaml) was 1,128 us; another machine's targets scale with its own floor,
# measured in the same run, as the batch ratios do.
FLOOR_WHEN_SET_US = 1128.0


def synthetic_runs(count: int = 3000, seed: int = 3) -> list[Any]:
    from procjudge.records import load_record

    rng = random.Random(seed)
    return [load_record(json.dumps(run_document(k, rng)).encode()) for k in range(count)]


def folder_runs(folder: str) -> list[Any]:
    """Every run under a folder that loads (run files and JSON-lines records alike)."""
    from procjudge.batch import tasks
    from procjudge.discovery import Discovery
    from procjudge.loading import LoadError, load_run
    from procjudge.records import load_record

    runs = []
    for task in tasks(Discovery().files([folder])):
        try:
            if isinstance(task, str):
                runs.append(load_run(task))
            elif isinstance(task[2], bytes):
                runs.append(load_record(task[2], task[0], task[1]))
        except LoadError:
            continue
    return runs


def best_per_item(step: Callable[[Any], Any], items: list[Any], passes: int = 5, collect: bool = False) -> float:
    """The best per-item seconds of ``step`` over ``items`` across passes (with ``collect``, each
    pass starts from a collected heap)."""
    best = float("inf")
    for _ in range(passes):
        if collect:
            gc.collect()
        start = time.perf_counter()
        for item in items:
            step(item)
        best = min(best, (time.perf_counter() - start) / len(items))
    return best


def parts(runs: list[Any]) -> dict[str, float]:
    """Microseconds a run: judge in all, derive, the detectors, and the rest (the assembly);
    ``figures``, judging without the texts (``explain=False``), as a batch whose reports read only
    rows judges; and ``frame``, judging without the texts when every detector's check finds
    nothing (each detector still asked, its needs too): what judging costs around the rules."""
    from procjudge import judge
    from procjudge.facts import derive
    from procjudge.judge import run_detectors
    from procjudge.policy import DEFAULT

    for run in runs:  # warm every cache a batch would have warm
        judge(run)
    total = best_per_item(judge, runs)
    figures = best_per_item(lambda run: judge(run, explain=False), runs)
    facts = [derive(run, DEFAULT) for run in runs]
    derived = best_per_item(lambda run: derive(run, DEFAULT), runs)
    detectors = best_per_item(lambda f: run_detectors(f, DEFAULT), facts)
    frame = _without_findings(lambda: best_per_item(lambda run: judge(run, explain=False), runs))
    return {"judge": total * 1e6, "derive": derived * 1e6, "detectors": detectors * 1e6,
            "assembly": max(0.0, total - derived - detectors) * 1e6, "figures": figures * 1e6, "frame": frame * 1e6}


def _without_findings(measure: Callable[[], float]) -> float:
    """``measure()`` while every detector's check returns at once with no finding (the judge's
    table of steps, swapped for the measurement and put back)."""
    import sys

    engine = sys.modules["procjudge.judge"]  # the module, not the judge() the package exports
    steps = engine._STEPS

    def nothing(facts: Any, policy: Any) -> tuple[()]:
        return ()

    engine._STEPS = [(ident, needs, nothing, *rest) for ident, needs, _, *rest in steps]
    try:
        return measure()
    finally:
        engine._STEPS = steps


def _clock_cost(samples: int = 200_000) -> float:
    """Seconds one pair of clock readings costs, as the profile below reads them."""
    clock = time.perf_counter
    start = clock()
    for _ in range(samples):
        a = clock()
        b = clock()
    del a, b
    return (clock() - start) / samples


def detector_profile(runs: list[Any], passes: int = 3,
                     before: Callable[[], None] | None = None) -> list[tuple[str, float, float, int, int]]:
    """(detector, needs us, check us, runs checked, runs with a finding) a run, in the judge's
    order, best of ``passes``; the clock's own cost is taken off each reading. ``before`` is
    called before each pass (to empty the caches a fresh process has empty)."""
    from procjudge.detectors import ALL
    from procjudge.detectors.base import written_detail
    from procjudge.facts import derive
    from procjudge.policy import DEFAULT
    from procjudge.render.text import written

    facts = [derive(run, DEFAULT) for run in runs]
    clock = time.perf_counter
    overhead = _clock_cost()
    best = {det.id: [float("inf"), float("inf")] for det in ALL}
    checked = {det.id: 0 for det in ALL}
    fired = {det.id: 0 for det in ALL}
    for number in range(passes):
        if before is not None:
            before()
        spent = {det.id: [0.0, 0.0] for det in ALL}
        for f in facts:
            for det in ALL:
                start = clock()
                reason = det.needs(f) if det.needs is not None else None
                middle = clock()
                hits = list(det.func(f, DEFAULT)) if reason is None else []
                for hit in hits:  # the texts an explained verdict writes
                    written(hit.evidence)
                    written_detail(hit.detail)
                end = clock()
                row = spent[det.id]
                row[0] += middle - start - overhead
                row[1] += (end - middle - overhead) if reason is None else 0.0
                if number == 0:
                    checked[det.id] += reason is None
                    fired[det.id] += bool(hits)
        for ident, (needs, check) in spent.items():
            best[ident][0] = min(best[ident][0], max(0.0, needs) / len(facts))
            best[ident][1] = min(best[ident][1], max(0.0, check) / len(facts))
    rows = [(ident, needs * 1e6, check * 1e6, checked[ident], fired[ident]) for ident, (needs, check) in best.items()]
    return sorted(rows, key=lambda row: -(row[1] + row[2]))


def long_runs(counts: tuple[int, ...] = (10, 100, 1000, 5000)) -> list[tuple[int, float]]:
    """(iterations, seconds to judge) of one loaded marathon run of that many iterations, best of
    seven passes, each from a collected heap: one pass is a single call of up to a tenth of a
    second, and a full collection of the garbage earlier passes left (the loaded run itself is
    some 100,000 objects at 5,000 iterations) falling inside it once moved the figure by half."""
    from procjudge import judge
    from procjudge.records import load_record

    rng = random.Random(5)
    out = []
    for count in counts:
        iterations = []
        for n in range(count):
            passed = rng.randrange(0, 25)
            iterations.append({"iteration_telemetry": {
                "iteration_number": n, "duration_seconds": 60,
                "test_results": {"post_iteration": {"passed": passed, "failed": 24 - min(passed, 24), "total": 24}},
                "changes": {"files_modified": 1, "lines_added": 3, "lines_removed": 1},
                "actions": {"tool_calls_total": 5, "file_edits": 1, "test_runs": 1}}})
        run = load_record(json.dumps({"run": {"format": "marathon", "max_iterations": count},
                                      "iterations": iterations}).encode())
        out.append((count, best_per_item(judge, [run], passes=7, collect=True)))
    return out


def profile_table(rows: list[tuple[str, float, float, int, int]], runs: int) -> list[str]:
    """The per-detector profile as Markdown rows."""
    lines = ["| detector | needs (us) | check (us) | share of the detectors | runs checked | runs with a finding |",
             "|---|---:|---:|---:|---:|---:|"]
    total = sum(needs + check for _, needs, check, _, _ in rows) or 1.0
    for ident, needs, check, checked, fired in rows:
        lines.append(f"| {ident} | {needs:.2f} | {check:.2f} | {(needs + check) / total:.0%} | "
                     f"{checked / runs:.0%} | {fired / runs:.0%} |")
    lines.append(f"| all | {sum(r[1] for r in rows):.1f} | {sum(r[2] for r in rows):.1f} | 100% | | |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=None, help="a folder of runs to profile instead of the synthetic corpus")
    parser.add_argument("--runs", type=int, default=3000, help="synthetic runs (default 3,000)")
    options = parser.parse_args()
    runs = folder_runs(options.corpus) if options.corpus else synthetic_runs(options.runs)
    if not runs:
        sys.exit(f"no runs load under {options.corpus}")
    where = options.corpus or f"{len(runs):,} synthetic small runs"
    split = parts(runs)
    print(f"{where}: judge {split['judge']:.0f} us a run (target {SMALL_RUN_US:.0f} on the synthetic corpus, on a "
          f"machine with a libyaml floor of {FLOOR_WHEN_SET_US:,.0f} us): derive {split['derive']:.0f}, detectors "
          f"{split['detectors']:.0f}, assembly {split['assembly']:.0f}; without the texts (explain=False) "
          f"{split['figures']:.0f}; with checks that find nothing {split['frame']:.0f}")
    for line in profile_table(detector_profile(runs), len(runs)):
        print(line)
    for count, seconds in long_runs():
        print(f"{count:>5} iterations: {seconds * 1000:.1f} ms, {seconds / count * 1e6:.1f} us an iteration "
              f"(target {PER_ITERATION_US:.0f} at 5,000)")


if __name__ == "__main__":
    main()
