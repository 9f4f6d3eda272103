"""Batch benchmark: a synthetic corpus of standard runs, procjudge batch against a libyaml floor.

    python benchmarks/bench_batch.py --runs 10000            # wall-time ratios and peak RSS
    python benchmarks/bench_batch.py --runs 100000 --rss-only

The floor is the time to only parse the same files with libyaml (read + yaml.load with
CSafeLoader) in one process, measured in the same run. Targets: --jobs 1 at most 0.35x the floor
(with the fast YAML reader, the [fast] extra; the same command with PROCJUDGE_YAML=libyaml is
printed beside it), --jobs 2 at most 0.7x.  Peak RSS is the largest sum of VmRSS over
the batch process and its workers, sampled from /proc every 20 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTS = ["agent-a", "agent-b", "agent-c", "agent-d"]


def run_document(k: int, rng: random.Random, diffs: bool = False) -> dict:
    """One standard run of about 5 KB: 2-4 iterations with telemetry and feedback."""
    total = 24
    passed = rng.randrange(8, 18)
    iterations = []
    for n in range(rng.randrange(2, 5)):
        pre = passed
        broken = rng.choice([0, 0, 0, 1, 2]) if n else 0
        passed = max(0, min(total, passed + rng.randrange(-2, 8)))
        failing = [f"test_case_{j}" for j in rng.sample(range(40), total - passed)][:6]
        telemetry = {
            "iteration_number": n,
            "timestamp_start": f"2026-03-27T14:{10 * n:02d}:00Z",
            "timestamp_submit": f"2026-03-27T14:{10 * n + 8:02d}:00Z",
            "duration_seconds": 480 + rng.randrange(0, 300),
            "actions": {"tool_calls_total": rng.randrange(5, 40), "file_reads": rng.randrange(1, 9),
                        "file_edits": rng.randrange(1, 12), "test_runs": rng.randrange(0, 4),
                        "search_operations": rng.randrange(0, 4), "other_tools": rng.randrange(0, 6)},
            "changes": {"files_modified": rng.randrange(1, 9), "files_created": rng.randrange(0, 2), "files_deleted": 0,
                        "lines_added": rng.randrange(2, 120), "lines_removed": rng.randrange(0, 60),
                        "net_lines_changed": rng.randrange(-20, 100),
                        "summary": [rng.choice(["Fix null check in validate_input", "Refactor logger",
                                                "Handle empty string", "Add retry to client"]) for _ in range(2)]},
            "test_results": {"pre_iteration": {"passed": pre, "failed": total - pre, "total": total},
                             "post_iteration": {"passed": passed, "failed": total - passed, "total": total},
                             "delta": passed - pre, "regressions": broken},
            "score": {"pre_iteration": round(100 * pre / total, 1), "post_iteration": round(100 * passed / total, 1)},
            "feedback_analysis": {"read_feedback": rng.random() > 0.2,
                                  "time_before_first_edit_seconds": rng.randrange(1, 200),
                                  "failure_messages_referenced": rng.randrange(0, 6)},
        }
        if diffs:
            telemetry["changes"]["diff"] = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        feedback = {"iteration": n, "build": {"status": "success"},
                    "tests": {"total": total, "passed": passed, "failed": total - passed,
                              "failures": [{"name": name, "message": "AssertionError: expected 10, got 8",
                                            "category": "edge_case"} for name in failing]}}
        iterations.append({"iteration_telemetry": telemetry, "iteration_feedback": feedback})
    return {"run": {"id": f"run-{k:06d}", "agent": AGENTS[k % len(AGENTS)], "challenge": f"challenge-{k % 500}",
                    "format": "standard"}, "iterations": iterations}


def write_corpus(root: Path, runs: int, seed: int = 1, diffs: bool = False) -> None:
    import yaml

    rng = random.Random(seed)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    for k in range(runs):
        folder = root / f"shard{k % 50:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"run-{k:06d}.yaml").write_text(yaml.dump(run_document(k, rng, diffs), Dumper=dumper, sort_keys=False))


FLOOR = """
import os, sys, yaml
loader = yaml.CSafeLoader
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        with open(os.path.join(root, name), "rb") as handle:
            yaml.load(handle.read(), Loader=loader)
"""


def tree_rss(pid: int) -> int:
    """VmRSS in bytes of a process and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            with open(f"/proc/{current}/task/{current}/children") as handle:
                stack.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def measure(command: list[str]) -> tuple[float, int]:
    """Wall time and peak tree RSS of a command (stdout discarded)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss(process.pid))
        time.sleep(0.02)
    return time.perf_counter() - started, peak


def bench_batch(runs: int, rss_only: bool = False, fmt: str = "csv", corpus: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(corpus) if corpus else Path(tmp) / "corpus"
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if len(list(root.glob("shard*/*.yaml"))) != runs:
            write_corpus(root, runs)
        size = sum(f.stat().st_size for f in root.rglob("*.yaml"))
        print(f"corpus: {runs:,} runs, {size / runs / 1000:.1f} KB each on average (written in "
              f"{time.perf_counter() - started:.0f}s)")
        batch = [sys.executable, "-m", "procjudge", "batch", str(root), "--format", fmt]
        if not rss_only:
            measure([sys.executable, "-c", FLOOR, str(root)])  # warm the page cache
        results = {}
        for jobs in (1, 2):
            if rss_only and jobs == 1:
                continue
            results[jobs] = measure(batch + ["--jobs", str(jobs)])
        libyaml = None
        if not rss_only:  # the same --jobs 1 with the fast YAML reader off, for comparison
            os.environ["PROCJUDGE_YAML"] = "libyaml"
            libyaml = measure(batch + ["--jobs", "1"])[0]
            del os.environ["PROCJUDGE_YAML"]
        if not rss_only:
            floor, _ = measure([sys.executable, "-c", FLOOR, str(root)])
            floor2, _ = measure([sys.executable, "-c", FLOOR, str(root)])
            floor = min(floor, floor2)
            print(f"floor (parse only, libyaml, one process): {floor:.2f}s")
            for jobs, target in ((1, 0.35), (2, 0.7)):
                wall, _ = results[jobs]
                ratio = wall / floor
                print(f"batch --jobs {jobs} --format {fmt}: {wall:.2f}s, ratio {ratio:.2f}x (target <= {target}x) "
                      f"{'OK' if ratio <= target else 'OVER TARGET'}")
            if libyaml is not None:
                print(f"batch --jobs 1 --format {fmt} with PROCJUDGE_YAML=libyaml: {libyaml:.2f}s, ratio {libyaml / floor:.2f}x")
        for jobs, (_, peak) in results.items():
            print(f"batch --jobs {jobs}: peak RSS {peak / 2**20:.0f} MB (target <= 250 MB) "
                  f"{'OK' if peak <= 250 * 2**20 else 'OVER TARGET'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rss-only", action="store_true", help="measure only --jobs 2 peak memory")
    parser.add_argument("--format", default="csv", choices=["csv", "json", "junit", "github", "markdown", "table"])
    parser.add_argument("--corpus", help="keep the corpus in this folder and reuse it when it has --runs files")
    args = parser.parse_args()
    bench_batch(args.runs, args.rss_only, args.format, args.corpus)


if __name__ == "__main__":
    os.chdir(Path(__file__).resolve().parent.parent)
    main()
