"""What the Dask engine's local cluster costs besides the scoring: its workers quiet (as
``batch --engine dask`` starts them, ``procjudge.dask.QUIET``) against Dask's defaults.

    python benchmarks/bench_dask.py                          # idle, then 100,000 runs, 3 rounds
    python benchmarks/bench_dask.py --runs 20000 --rounds 5 --idle 10

Two figures, each taken in turn for the two configurations, round after round, so that the
machine's drift falls on both alike:

- idle: a cluster of two workers that is given nothing to do, as a share of one core (the CPU time
  of this process and every process it started, over ``--idle`` seconds, after three to settle);
- scoring: ``procjudge batch FILE --engine dask --jobs 2 -f csv`` over ``--runs`` synthetic runs in
  one JSON-lines file, wall seconds and the CPU seconds (user and system) of the command and every
  process it started. Dask's defaults are asked for through the ``DASK_...`` variables, which the
  engine keeps as the user's choice.

CPU time moves less than wall time with the shared machine's other load, but it moves too: read
the rounds, not one of them. Needs the dask extra.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script it is there already; imported by a test, once
    sys.path.insert(0, str(HERE))

from bench_batch import run_document


def defaults_env() -> dict[str, str]:
    """``DASK_...`` variables that set every ``QUIET`` setting to Dask's own default."""
    import dask.config
    import distributed  # noqa: F401 - registers its defaults

    from procjudge.dask import QUIET

    defaults = dask.config.merge(*dask.config.defaults)
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(dask.config.get(key, config=defaults))
            for key in QUIET}


def _cpu(processes: list[Any]) -> float:
    total = 0.0
    for process in processes:
        times = process.cpu_times()
        total += times.user + times.system
    return total


def idle_share(quiet: bool, seconds: float, settle: float = 3.0) -> float:
    """The share of one core that a cluster of two idle workers uses."""
    import psutil
    from distributed import Client

    from procjudge.dask import local_cluster

    cluster = local_cluster(2, quiet)
    try:
        with Client(cluster):
            time.sleep(settle)
            me = psutil.Process()
            processes = [me, *me.children(recursive=True)]
            before, start = _cpu(processes), time.perf_counter()
            time.sleep(seconds)
            return (_cpu(processes) - before) / (time.perf_counter() - start)
    finally:
        cluster.close()


def scoring(path: Path, quiet: bool) -> tuple[float, float]:
    """Wall and CPU seconds of ``batch --engine dask --jobs 2`` over ``path``."""
    defaults = defaults_env()
    env = {key: value for key, value in os.environ.items() if key not in defaults}  # a caller's would be kept
    if not quiet:
        env.update(defaults)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-m", "procjudge", "batch", str(path), "--engine", "dask", "--jobs", "2",
                               "-f", "csv", "-o", str(Path(out) / "runs.csv")],
                              check=False, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"batch exited {done.returncode}: {done.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000, help="synthetic runs to score (0: idle only)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds the idle cluster is watched")
    args = parser.parse_args(argv)

    print(f"idle cluster of two workers, share of one core ({args.idle:g} s each):")
    for k in range(args.rounds):
        shares = {quiet: idle_share(quiet, args.idle) for quiet in (False, True)}
        print(f"  round {k + 1}: Dask's defaults {shares[False]:.1%}, quiet {shares[True]:.1%}")
    if not args.runs:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.jsonl"
        rng = random.Random(3)
        with path.open("w") as handle:
            for k in range(args.runs):
                handle.write(json.dumps(run_document(k, rng)) + "\n")
        print(f"batch --engine dask --jobs 2 over {args.runs:,} runs (wall s, CPU s of every process):")
        for k in range(args.rounds):
            (wall_d, cpu_d), (wall_q, cpu_q) = scoring(path, False), scoring(path, True)
            print(f"  round {k + 1}: Dask's defaults {wall_d:.1f} / {cpu_d:.1f}, quiet {wall_q:.1f} / {cpu_q:.1f}; "
                  f"quiet against defaults: wall {wall_q / wall_d:.2f}x, CPU {cpu_q / cpu_d:.2f}x")


if __name__ == "__main__":
    main()
