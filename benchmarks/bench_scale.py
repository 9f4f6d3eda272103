"""Scale figures for docs/performance.md: runs per second and peak memory at 10k, 100k and 1M runs.

    python benchmarks/bench_scale.py --sizes 10000,100000,1000000 --write docs/performance.md

For each size, one JSON-lines file of synthetic standard runs (bench_batch's, about 5 KB each) is
scored by ``batch --jobs 1``, ``--jobs 2`` and ``--engine dask --jobs 2`` (a local cluster of two
worker processes), each writing CSV to a file; the wall time gives runs per second and the peak
RSS is the largest sum over the process and all its descendants (Dask's scheduler, nanny and
workers included), sampled every 20 ms. Beside them, the parse floors measured in the same run
on the first 10,000 runs: libyaml (``yaml.load`` with ``CSafeLoader`` of each run as YAML) and
msgspec (``msgspec.json.decode`` of each line). Then how time grows with the number of iterations
of one run (10 to 5,000): ``judge`` of one loaded run, in process, best of three.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_batch import FLOOR, measure, run_document, write_corpus

TARGETS = {"json": 0.10, "yaml": 0.35}  # batch --jobs 1 against the libyaml parse floor (issue 17)


def corpus(folder: Path, runs: int) -> Path:
    path = folder / f"runs-{runs}.jsonl"
    if path.exists():
        return path
    rng = random.Random(3)
    with path.open("w") as handle:
        for k in range(runs):
            handle.write(json.dumps(run_document(k, rng)) + "\n")
    return path


def floors(path: Path, sample: int = 10000) -> tuple[float, float]:
    """Per-run seconds to parse a run with libyaml (from YAML text) and with msgspec (the line)."""
    import msgspec
    import yaml

    lines = []
    with path.open("rb") as handle:
        for _, line in zip(range(sample), handle):
            lines.append(line)
    texts = [yaml.dump(json.loads(line), Dumper=yaml.CSafeDumper, sort_keys=False) for line in lines]
    best_yaml = best_json = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for text in texts:
            yaml.load(text, Loader=yaml.CSafeLoader)
        best_yaml = min(best_yaml, (time.perf_counter() - start) / len(texts))
        start = time.perf_counter()
        for line in lines:
            msgspec.json.decode(line)
        best_json = min(best_json, (time.perf_counter() - start) / len(lines))
    return best_yaml, best_json


def yaml_files(folder: Path, runs: int) -> list[tuple[str, float, int, float]]:
    """The same kind of runs as one YAML file each: ``batch --jobs 1`` with the fast YAML reader
    and with ``PROCJUDGE_YAML=libyaml``, against parsing the same files with libyaml alone."""
    import os

    root = folder / f"yaml-{runs}"
    if len(list(root.glob("shard*/*.yaml"))) != runs:
        root.mkdir(exist_ok=True)
        write_corpus(root, runs)
    command = [sys.executable, "-m", "procjudge", "batch", str(root), "--jobs", "1", "-f", "csv",
               "-o", str(folder / "out.csv"), "--exit-zero"]
    measure([sys.executable, "-c", FLOOR, str(root)])  # warm the page cache
    floor = min(measure([sys.executable, "-c", FLOOR, str(root)])[0] for _ in range(2))
    fast = min(measure(command)[0] for _ in range(2))
    os.environ["PROCJUDGE_YAML"] = "libyaml"
    try:
        slow = min(measure(command)[0] for _ in range(2))
    finally:
        del os.environ["PROCJUDGE_YAML"]
    return [("`batch --jobs 1` (fast YAML reader)", fast, runs, floor),
            ("`batch --jobs 1`, `PROCJUDGE_YAML=libyaml`", slow, runs, floor)]


def breakdown(path: Path, sample: int = 3000) -> list[tuple[str, float]]:
    """Where a JSON-lines run's time goes, in process (microseconds, best of three): the decode
    alone, loading (decode and validation), judging, and the row and CSV line of the report."""
    import msgspec

    from procjudge import judge
    from procjudge.records import load_record
    from procjudge.render.batch import CsvReporter
    from procjudge.results import Result

    with path.open("rb") as handle:
        lines = [line for _, line in zip(range(sample), handle)]
    runs = [load_record(line) for line in lines]
    verdicts = [judge(run) for run in runs]
    reporter = CsvReporter()
    steps = [("decode", lambda k: msgspec.json.decode(lines[k])), ("load", lambda k: load_record(lines[k])),
             ("judge", lambda k: judge(runs[k])),
             ("report", lambda k: reporter.each(Result.of("x", verdicts[k], with_verdict=False), None))]
    out = []
    for name, step in steps:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for k in range(len(lines)):
                step(k)
            best = min(best, (time.perf_counter() - start) / len(lines))
        out.append((name, best * 1e6))
    return out


def iterations_growth() -> list[tuple[int, float]]:
    from procjudge import judge
    from procjudge.records import load_record

    rng = random.Random(5)
    out = []
    for count in (10, 100, 1000, 5000):
        iterations = []
        for n in range(count):
            passed = rng.randrange(0, 25)
            iterations.append({"iteration_telemetry": {
                "iteration_number": n, "duration_seconds": 60,
                "test_results": {"post_iteration": {"passed": passed, "failed": 24 - min(passed, 24), "total": 24}},
                "changes": {"files_modified": 1, "lines_added": 3, "lines_removed": 1},
                "actions": {"tool_calls_total": 5, "file_edits": 1, "test_runs": 1}}})
        run = load_record(json.dumps({"run": {"format": "marathon", "max_iterations": count}, "iterations": iterations}).encode())
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            judge(run)
            best = min(best, time.perf_counter() - start)
        out.append((count, best))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--write", default=None, help="write the figures as a Markdown page")
    parser.add_argument("--keep", default=None, help="a folder to keep the corpora in between runs")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    folder = Path(options.keep or tempfile.mkdtemp(prefix="procjudge-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    yaml_floor = json_floor = None
    engines = [("--jobs 1", ["--jobs", "1"]), ("--jobs 2", ["--jobs", "2"]),
               ("--engine dask --jobs 2", ["--engine", "dask", "--jobs", "2"])]
    for size in sizes:
        path = corpus(folder, size)
        if yaml_floor is None:
            yaml_floor, json_floor = floors(path)
            print(f"floors per run: libyaml {yaml_floor * 1e6:.0f} us, msgspec {json_floor * 1e6:.0f} us", flush=True)
        for name, args in engines:
            wall, peak = measure([sys.executable, "-m", "procjudge", "batch", str(path), *args, "-f", "csv",
                                  "-o", str(folder / "out.csv"), "--exit-zero"])
            rows.append((size, name, wall, peak))
            print(f"{size:>9,} runs  {name:<24} {wall:8.1f} s  {size / wall:8,.0f} runs/s  peak {peak / 2**20:6.0f} MiB  "
                  f"({wall / size / yaml_floor:.2f}x the libyaml floor)", flush=True)
    yaml_rows = yaml_files(folder, min(sizes[0], 10_000))
    for name, wall, size, floor in yaml_rows:
        print(f"{size:>9,} YAML files  {name:<44} {wall:8.1f} s  ({wall / floor:.2f}x the libyaml floor of {floor:.1f} s)",
              flush=True)
    parts = breakdown(path if len(sizes) == 1 else corpus(folder, sizes[0]))
    print("per run, in process: " + ", ".join(f"{name} {us:.0f} us" for name, us in parts), flush=True)
    growth = iterations_growth()
    for count, seconds in growth:
        print(f"{count:>5} iterations: judge {seconds * 1000:.1f} ms ({seconds / count * 1e6:.0f} us an iteration)")
    if options.write:
        write_page(Path(options.write), rows, growth, yaml_floor or 0.0, json_floor or 0.0, yaml_rows, parts)


def write_page(target: Path, rows: list[tuple[int, str, float, int]], growth: list[tuple[int, float]],
               yaml_floor: float, json_floor: float, yaml_rows: list[tuple[str, float, int, float]],
               parts: list[tuple[str, float]]) -> None:
    import os
    import platform

    lines = [
        "# Performance at scale", "",
        "Every figure on this page comes from one command, run from the repository root:", "",
        "```sh", (f"python benchmarks/bench_scale.py --sizes {','.join(str(s) for s in sorted({r[0] for r in rows}))} "
        "--write docs/performance.md"), "```", "",
        (f"Measured on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. The runs are "
        "synthetic standard runs (2 to 4 iterations with telemetry and feedback, about 5 KB each), one per line of a "
        "JSON-lines file; each command writes a CSV report to a file. Peak memory is the largest sum of resident memory "
        "over the command and every process it started (workers, Dask's scheduler and nannies), sampled every 20 ms. "
        "Each row is one run of the command on a shared virtual machine: the same command an hour apart has differed "
        "by up to a quarter at 10,000 runs, and the million-run rows are the steadiest."), "",
        (f"Parse floors per run, measured in the same run on 10,000 of the runs: libyaml (`yaml.load`, `CSafeLoader`, "
        f"the run as YAML) {yaml_floor * 1e6:.0f} us; msgspec (`msgspec.json.decode` of the line) {json_floor * 1e6:.0f} us."),
        "", "| runs | command | seconds | runs per second | peak memory | x libyaml floor |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for size, name, wall, peak in rows:
        lines.append(f"| {size:,} | `batch {name}` | {wall:.1f} | {size / wall:,.0f} | {peak / 2**20:,.0f} MiB | "
                     f"{wall / size / yaml_floor:.2f} |")
    largest = max(r[0] for r in rows)
    jsonl = next(wall / size / yaml_floor for size, name, wall, _ in rows if size == largest and name == "--jobs 1")
    yaml_ratio = yaml_rows[0][1] / yaml_rows[0][3]
    lines += ["", "## Run files (YAML)", "",
              (f"The same kind of runs, {yaml_rows[0][2]:,} of them, one YAML file each (written by PyYAML), scored by "
               "`batch --jobs 1 -f csv`, best of two; the floor is parsing the same files with libyaml alone "
               f"(`yaml.load`, `CSafeLoader`) in one process: {yaml_rows[0][3]:.1f} s."), "",
              "| command | seconds | x libyaml floor |", "|---|---:|---:|"]
    for name, wall, _, floor in yaml_rows:
        lines.append(f"| {name} | {wall:.1f} | {wall / floor:.2f} |")
    from procjudge.detectors import ALL

    lines += ["", "## Against the targets", "",
              "`batch --jobs 1` against the libyaml parse floor of the same runs:", "",
              "| input | target | measured |", "|---|---:|---:|",
              f"| JSON lines ({largest:,} runs) | {TARGETS['json']:.2f} | {jsonl:.2f} |",
              f"| YAML files ({yaml_rows[0][2]:,} runs) | {TARGETS['yaml']:.2f} | {yaml_ratio:.2f} |", "",
              ("Where one JSON-lines run's time goes, in process (microseconds; best of three over 3,000 runs): "
               + ", ".join(f"{name} {us:.0f}" for name, us in parts) + f". Judging ({len(ALL)} detectors over facts derived "
               "for each submission) is most of it: at the JSON target a run would have "
               f"{TARGETS['json'] * yaml_floor * 1e6:.0f} us in all."), ""]
    lines += ["## Iterations per run", "",
              ("`judge` of one loaded run (a marathon run of N iterations with test counts, changes and actions), in "
              "process, best of three:"), "", "| iterations | milliseconds | microseconds an iteration |", "|---:|---:|---:|"]
    for count, seconds in growth:
        lines.append(f"| {count:,} | {seconds * 1000:.1f} | {seconds / count * 1e6:.0f} |")
    lines.append("")
    target.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
