"""Scale figures for docs/performance.md: runs per second and peak memory at 10k, 100k and 1M runs.

    python benchmarks/bench_scale.py --sizes 10000,100000,1000000 --write docs/performance.md

For each size, one JSON-lines file of synthetic standard runs (bench_batch's, about 5 KB each) is
scored by ``batch --jobs 1``, ``--jobs 2`` and ``--engine dask --jobs 2`` (a local cluster of two
worker processes), each writing CSV to a file; the wall time gives runs per second and the peak
RSS is the largest sum over the process and all its descendants (Dask's scheduler, nanny and
workers included), sampled every 20 ms. Beside them, the parse floors measured in the same run
on the first 10,000 runs: libyaml (``yaml.load`` with ``CSafeLoader`` of each run as YAML) and
msgspec (``msgspec.json.decode`` of each line). Then what judging one run costs, part by part and
detector by detector, and how it grows with the number of iterations of one run (10 to 5,000):
``bench_judge``'s figures, in process; and, where valgrind is on the PATH, what judging, loading
and the libyaml floor cost a run in instructions (``bench_instructions``: a figure the machine's
other load does not move, about four minutes). Last, peak memory of ``batch --jobs 1`` in every report
format at two corpus sizes (``--format-sizes``): flat means the larger costs what the smaller does.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_instructions
import bench_judge
from bench_batch import FLOOR, measure, run_document, write_corpus

# batch --jobs 1 against the libyaml parse floor; a small run judged in process; a long run per
# iteration; --jobs 2 and Dask throughput against --jobs 1 (issue "Judging cost per run")
TARGETS = {"json": 0.20, "yaml": 0.45, "judge_us": bench_judge.SMALL_RUN_US, "iteration_us": bench_judge.PER_ITERATION_US,
           "parallel": 1.8}
FORMATS = ["table", "json", "markdown", "html", "parquet", "csv", "junit", "github", "sarif", "gitlab"]


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
        for _, line in zip(range(sample), handle, strict=False):
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
    # interleaved, best of two rounds: a slow spell of a shared machine then slows the floor and
    # the commands alike, rather than making a ratio look better or worse than it is
    floor = fast = slow = float("inf")
    for _ in range(2):
        floor = min(floor, measure([sys.executable, "-c", FLOOR, str(root)])[0])
        fast = min(fast, measure(command)[0])
        os.environ["PROCJUDGE_YAML"] = "libyaml"
        try:
            slow = min(slow, measure(command)[0])
        finally:
            del os.environ["PROCJUDGE_YAML"]
    return [("`batch --jobs 1` (fast YAML reader)", fast, runs, floor),
            ("`batch --jobs 1`, `PROCJUDGE_YAML=libyaml`", slow, runs, floor)]


def breakdown(path: Path, sample: int = 3000) -> list[tuple[str, float]]:
    """Where a JSON-lines run's time goes, in process (microseconds, best of three): the decode
    alone, loading (decode and validation), judging as the CSV batch does (without the texts) and
    as an explained verdict, and the row and CSV line of the report."""
    import msgspec

    from procjudge import judge
    from procjudge.records import load_record
    from procjudge.render.batch import CsvReporter
    from procjudge.results import Result

    with path.open("rb") as handle:
        lines = [line for _, line in zip(range(sample), handle, strict=False)]
    runs = [load_record(line) for line in lines]
    verdicts = [judge(run) for run in runs]
    reporter = CsvReporter()
    steps = [("decode", lambda k: msgspec.json.decode(lines[k])), ("load", lambda k: load_record(lines[k])),
             ("judge (figures only, as a CSV batch judges)", lambda k: judge(runs[k], explain=False)),
             ("judge (explained)", lambda k: judge(runs[k])),
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


def format_memory(folder: Path, sizes: list[int]) -> list[tuple[str, list[tuple[int, float, int]]]]:
    """Peak memory (and seconds) of ``batch --jobs 1`` writing each report format to a file, at
    each corpus size."""
    rows = []
    for fmt in FORMATS:
        if fmt == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                continue
        measured = []
        for size in sizes:
            path = corpus(folder, size)
            target = folder / (f"out-{fmt}" if fmt == "parquet" else f"out.{fmt}")
            wall, peak = measure([sys.executable, "-m", "procjudge", "batch", str(path), "--jobs", "1", "-f", fmt,
                                  "-o", str(target), "--exit-zero", "-q"])
            measured.append((size, wall, peak))
        rows.append((fmt, measured))
        print(f"{fmt:<9} " + " | ".join(f"{size:>9,} runs {peak / 2**20:6.0f} MiB" for size, _, peak in measured), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--format-sizes", default="10000,50000", help="corpus sizes for the memory of each report format")
    parser.add_argument("--write", default=None, help="write the figures as a Markdown page")
    parser.add_argument("--keep", default=None, help="a folder to keep the corpora in between runs")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    format_sizes = [int(s) for s in options.format_sizes.split(",")]
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
    runs = bench_judge.synthetic_runs()
    judging = bench_judge.parts(runs)
    profile = bench_judge.detector_profile(runs)
    print(f"judge {judging['judge']:.0f} us a small run: derive {judging['derive']:.0f}, detectors "
          f"{judging['detectors']:.0f}, assembly {judging['assembly']:.0f}", flush=True)
    labelled = bench_judge.folder_runs(str(Path(__file__).parent.parent / "tests" / "labelled" / "runs"))
    labelled_judging = bench_judge.parts(labelled)
    labelled_profile = bench_judge.detector_profile(labelled)
    print(f"judge {labelled_judging['judge']:.0f} us a labelled run", flush=True)
    growth = bench_judge.long_runs()
    for count, seconds in growth:
        print(f"{count:>5} iterations: judge {seconds * 1000:.1f} ms ({seconds / count * 1e6:.0f} us an iteration)")
    instructions = bench_instructions.count_steps() if bench_instructions.available() else None
    if instructions:
        print("instructions a run: " + ", ".join(f"{step} {count:,.0f}" for step, count in instructions.items())
              + f"; judge / libyaml {instructions['judge'] / instructions['libyaml']:.3f}", flush=True)
    memory = format_memory(folder, format_sizes)
    if options.write:
        write_page(Path(options.write), Measured(rows=rows, growth=growth, yaml_floor=yaml_floor or 0.0,
                                                 json_floor=json_floor or 0.0, yaml_rows=yaml_rows, parts=parts,
                                                 judging=judging, profile=profile, memory=memory,
                                                 labelled=(len(labelled), labelled_judging, labelled_profile),
                                                 instructions=instructions),
                   f"--sizes {','.join(str(s) for s in sizes)} --format-sizes {','.join(str(s) for s in format_sizes)}")


@dataclass
class Measured:
    """Every figure of one run of this benchmark, as the page states them."""

    rows: list[tuple[int, str, float, int]]
    growth: list[tuple[int, float]]
    yaml_floor: float
    json_floor: float
    yaml_rows: list[tuple[str, float, int, float]]
    parts: list[tuple[str, float]]
    judging: dict[str, float]
    profile: list[tuple[str, float, float, int, int]]
    memory: list[tuple[str, list[tuple[int, float, int]]]]
    labelled: tuple[int, dict[str, float], list[tuple[str, float, float, int, int]]]
    instructions: dict[str, float] | None = None  # bench_instructions.count_steps; None without valgrind


def _met(measured: float, target: float, at_most: bool = True) -> str:
    return "met" if (measured <= target if at_most else measured >= target) else "**not met**"


def instructions_paragraph(counted: dict[str, float] | None, time_fraction: float) -> str:
    """The page's figures in instructions: each step's count, and judging's fraction of the
    libyaml floor beside the same fraction in time (``time_fraction``) and the target's."""
    if counted is None:
        return ("Not counted in instructions on this run: valgrind is not on the PATH (`apt install valgrind`, then "
                "`python benchmarks/bench_instructions.py`).")
    floor = counted["libyaml"]
    target = bench_judge.SMALL_RUN_US / bench_judge.FLOOR_WHEN_SET_US
    return (f"In instructions, counted by valgrind (`python benchmarks/bench_instructions.py`, the same synthetic runs, "
            f"a count this machine's other load does not move): judging a small run without the texts "
            f"{counted['judge']:,.0f} instructions, explained {counted['explain']:,.0f}, loading one JSON line "
            f"{counted['load']:,.0f}; the libyaml floor {floor:,.0f}. Judging without the texts is "
            f"{counted['judge'] / floor:.3f} of the floor in instructions and {time_fraction:.3f} of it in time on this "
            f"page (explained: {counted['explain'] / floor:.3f} in instructions); the small-run target is "
            f"{target:.3f} of the floor ({bench_judge.SMALL_RUN_US:.0f} us against "
            f"{bench_judge.FLOOR_WHEN_SET_US:,.0f} us). The two fractions differ because an instruction of the "
            "interpreter's loop takes longer than one of libyaml's C.")


def write_page(target: Path, m: Measured, arguments: str) -> None:
    import os
    import platform

    lines = [
        "# Performance at scale", "",
        "Every figure on this page comes from one command, run from the repository root:", "",
        "```sh", f"python benchmarks/bench_scale.py {arguments} --write docs/performance.md", "```", "",
        (f"Measured on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. The runs are "
        "synthetic standard runs (2 to 4 iterations with telemetry and feedback, about 5 KB each), one per line of a "
        "JSON-lines file; each command writes a CSV report to a file. Peak memory is the largest sum of resident memory "
        "over the command and every process it started (workers, Dask's scheduler and nannies), sampled every 20 ms. "
        "Each row is one run of the command on a shared virtual machine: the same command an hour apart has differed "
        "by up to a quarter at 10,000 runs, and the million-run rows are the steadiest. What real shell-agent logs "
        "cost to import and to judge, against parsing them, is the last section (`benchmarks/bench_real_logs.py`)."),
        "",
        (f"Parse floors per run, measured in the same run on 10,000 of the runs: libyaml (`yaml.load`, `CSafeLoader`, "
        f"the run as YAML) {m.yaml_floor * 1e6:.0f} us; msgspec (`msgspec.json.decode` of the line) "
        f"{m.json_floor * 1e6:.0f} us."),
        "", "| runs | command | seconds | runs per second | peak memory | x libyaml floor |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for size, name, wall, peak in m.rows:
        lines.append(f"| {size:,} | `batch {name}` | {wall:.1f} | {size / wall:,.0f} | {peak / 2**20:,.0f} MiB | "
                     f"{wall / size / m.yaml_floor:.2f} |")
    largest = max(r[0] for r in m.rows)
    wall_of = {name: wall for size, name, wall, _ in m.rows if size == largest}
    jsonl = wall_of["--jobs 1"] / largest / m.yaml_floor
    yaml_ratio = m.yaml_rows[0][1] / m.yaml_rows[0][3]
    jobs2, dask = wall_of["--jobs 1"] / wall_of["--jobs 2"], wall_of["--jobs 1"] / wall_of["--engine dask --jobs 2"]
    five_thousand = next(seconds / count for count, seconds in m.growth if count == max(c for c, _ in m.growth))
    growth_of = {fmt: measured[-1][2] / measured[0][2] for fmt, measured in m.memory}
    worst_growth = max(growth_of.values(), default=1.0)
    lines += ["", "## Run files (YAML)", "",
              (f"The same kind of runs, {m.yaml_rows[0][2]:,} of them, one YAML file each (written by PyYAML), scored "
               "by `batch --jobs 1 -f csv`, best of two rounds in which the floor and each command take turns; the "
               "floor is parsing the same files with libyaml alone "
               f"(`yaml.load`, `CSafeLoader`) in one process: {m.yaml_rows[0][3]:.1f} s."), "",
              "| command | seconds | x libyaml floor |", "|---|---:|---:|"]
    for name, wall, _, floor in m.yaml_rows:
        lines.append(f"| {name} | {wall:.1f} | {wall / floor:.2f} |")
    t = TARGETS
    # The judge's two targets were set in microseconds on a machine whose libyaml floor was
    # FLOOR_WHEN_SET_US; here they scale with this run's floor, as the batch ratios do.
    scale = m.yaml_floor * 1e6 / bench_judge.FLOOR_WHEN_SET_US
    judge_target, iteration_target = t["judge_us"] * scale, t["iteration_us"] * scale
    lines += ["", "## Against the targets", "",
              (f"The judge's targets were set in microseconds ({t['judge_us']:.0f} us a small run, {t['iteration_us']:.0f} us "
               f"an iteration) on a machine whose libyaml floor was {bench_judge.FLOOR_WHEN_SET_US:,.0f} us; this run's "
               f"floor is {m.yaml_floor * 1e6:,.0f} us, so here they are {judge_target:.0f} us and "
               f"{iteration_target:.1f} us (the same fraction of the floor, as the batch ratios are)."), "",
              "| what | target | measured | |", "|---|---:|---:|---|",
              (f"| `batch --jobs 1`, JSON lines ({largest:,} runs), x libyaml floor | at most {t['json']:.2f} | "
              f"{jsonl:.2f} | {_met(jsonl, t['json'])} |"),
              (f"| `batch --jobs 1`, YAML files ({m.yaml_rows[0][2]:,} runs), x libyaml floor | at most {t['yaml']:.2f} | "
              f"{yaml_ratio:.2f} | {_met(yaml_ratio, t['yaml'])} |"),
              (f"| judging a small run, in process, explained (score, json, html) | at most {judge_target:.0f} us | "
              f"{m.judging['judge']:.0f} us | {_met(m.judging['judge'], judge_target)} |"),
              (f"| judging a small run, in process, figures only (csv, junit, markdown, table batches) | at most "
              f"{judge_target:.0f} us | {m.judging['figures']:.0f} us | {_met(m.judging['figures'], judge_target)} |"),
              (f"| a {max(c for c, _ in m.growth):,}-iteration run, per iteration | at most {iteration_target:.1f} us | "
              f"{five_thousand * 1e6:.1f} us | {_met(five_thousand * 1e6, iteration_target)} |"),
              (f"| `--jobs 2` throughput against `--jobs 1` ({largest:,} runs) | near 2x (at least {t['parallel']:.1f}x) | "
              f"{jobs2:.2f}x | {_met(jobs2, t['parallel'], at_most=False)} |"),
              (f"| `--engine dask --jobs 2` throughput against `--jobs 1` | near 2x (at least {t['parallel']:.1f}x) | "
              f"{dask:.2f}x | {_met(dask, t['parallel'], at_most=False)} |"),
              (f"| peak memory, largest against smallest corpus, worst report format | flat (at most 1.10x) | "
              f"{worst_growth:.2f}x | {_met(worst_growth, 1.10)} |"), "",
              ("Where one JSON-lines run's time goes in a batch, in process (microseconds; best of three over 3,000 "
               "runs): " + ", ".join(f"{name} {us:.0f}" for name, us in m.parts) + "."), ""]
    lines += ["## Judging one run", "",
              (f"`judge` of 3,000 loaded synthetic runs, best of five passes: {m.judging['judge']:.0f} us a run, of "
               f"which deriving the facts {m.judging['derive']:.0f}, the detectors {m.judging['detectors']:.0f} and "
               f"assembling the verdict {m.judging['assembly']:.0f}; without the texts (`explain=False`, what a batch "
               f"whose reports read only rows does) {m.judging['figures']:.0f}. With every detector's check "
               f"replaced by one that finds nothing (each detector still asked, its needs too), judging without the "
               f"texts costs {m.judging['frame']:.0f} us: the facts, the needs, the loop over the detectors and the "
               "verdict, the part of judging that no rewrite of a rule lowers. A change too small for this "
               "machine's clock is measured in instructions instead: `python benchmarks/bench_instructions.py "
               "--base OTHER-CHECKOUT` counts what judging, loading and the libyaml floor cost a run under valgrind, "
               "for both checkouts (the count repeats to a few parts in ten thousand). "
               "The detectors one by one, writing their texts, in the judge's order "
               "over the same facts (each `needs` and check timed, the clock's own cost taken off; `python "
               "benchmarks/bench_judge.py --corpus DIR` profiles other runs):"), ""]
    lines += bench_judge.profile_table(m.profile, 3000)
    lines += ["", instructions_paragraph(m.instructions, m.judging["figures"] / (m.yaml_floor * 1e6))]
    count, split, rows = m.labelled
    lines += ["", (f"The same on the {count} runs of the labelled set (`tests/labelled/runs`: honest and cheating runs "
                   f"from real logs and from written shapes, most with code or diffs): {split['judge']:.0f} us a run, of which "
                   f"deriving {split['derive']:.0f}, the detectors {split['detectors']:.0f}, assembling "
                   f"{split['assembly']:.0f}; where runs carry code, reading it for the cheat shapes is most of the cost. "
                   "The ten costliest detectors:"), ""]
    lines += bench_judge.profile_table(rows, count)[:12]
    lines += ["", ("`judge` of one loaded marathon run of N iterations (test counts, changes and actions), in process, "
              "best of seven passes, each from a collected heap:"), "",
              "| iterations | milliseconds | microseconds an iteration |", "|---:|---:|---:|"]
    for count, seconds in m.growth:
        lines.append(f"| {count:,} | {seconds * 1000:.1f} | {seconds / count * 1e6:.1f} |")
    sizes = [size for size, _, _ in m.memory[0][1]] if m.memory else []
    lines += ["", "## Memory by report format", "",
              ("`batch --jobs 1` of the JSON-lines corpus writing each format to a file (`-q`), at "
               f"{' and '.join(f'{s:,}' for s in sizes)} runs: peak memory of the process."), "",
              "| format | " + " | ".join(f"{s:,} runs" for s in sizes) + " | largest / smallest |",
              "|---|" + "---:|" * (len(sizes) + 1)]
    for fmt, measured in m.memory:
        lines.append(f"| {fmt} | " + " | ".join(f"{peak / 2**20:,.0f} MiB" for _, _, peak in measured)
                     + f" | {growth_of[fmt]:.2f} |")
    lines.append("")
    from bench_real_logs import BEGIN, END

    kept = target.read_text() if target.exists() else ""
    if BEGIN in kept and END in kept:  # the real-logs section is bench_real_logs.py's: kept as it is
        lines += [BEGIN + kept.split(BEGIN, 1)[1].split(END, 1)[0] + END, ""]
    target.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
