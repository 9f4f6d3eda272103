"""What a small run costs in machine instructions, counted by valgrind: a figure the machine's
other load does not move, for changes too small for the clock to show.

    python benchmarks/bench_instructions.py                    # this checkout
    python benchmarks/bench_instructions.py --base ../other    # and another checkout, side by side

Each figure is the instructions a run costs: a child Python under ``valgrind --tool=cachegrind
--cache-sim=no`` prepares the same synthetic runs (``bench_batch.run_document``, seed 3), then does
the step for N of them; the same child with none done is counted too, and the difference divided
by N. The steps: judging a loaded run without the texts (``explain=False``, as a CSV batch does)
and explained; loading one JSON line (``load_record``); and the libyaml floor (``yaml.load`` with
``CSafeLoader`` of the run as YAML), so the judge's share of the floor can be read without the
clock. Caches are warmed by one pass over every run first, as a batch has them warm. An
instruction of C is not an instruction of the interpreter's loop, so the ratio to the floor is
not the ratio of times (``bench_scale.py`` measures those); it is the figure to compare between
two checkouts. The children run with one hash seed, so that sets and dicts are walked in the
same order each time: the count then repeats to a few parts in ten thousand. About four minutes
a checkout on a 2-core machine. Needs valgrind on the PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = ("judge", "explain", "load", "libyaml")
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(valgrind_output: str) -> int:
    """The instruction count of cachegrind's summary (``==1== I   refs:      1,946,451,376``)."""
    match = _REFS.search(valgrind_output)
    if match is None:
        raise ValueError("no 'I refs' line in valgrind's output: " + valgrind_output[-300:])
    return int(match.group(1).replace(",", ""))


def child(step: str, count: int, runs: int) -> None:
    """Prepare ``runs`` runs, warm every cache, then do ``step`` for the first ``count``."""
    if str(HERE) not in sys.path:  # run as a script it is there already; from a test, once
        sys.path.insert(0, str(HERE))
    from bench_batch import run_document

    rng = random.Random(3)
    documents = [run_document(k, rng) for k in range(runs)]
    if step == "libyaml":
        import yaml

        texts = [yaml.dump(d, Dumper=yaml.CSafeDumper) for d in documents]
        for text in texts:
            yaml.load(text, Loader=yaml.CSafeLoader)
        for text in texts[:count]:
            yaml.load(text, Loader=yaml.CSafeLoader)
        return
    from procjudge import judge
    from procjudge.records import load_record

    lines = [json.dumps(d).encode() for d in documents]
    loaded = [load_record(line) for line in lines]
    explain = step == "explain"
    for run in loaded:
        judge(run, explain=explain)
    if step == "load":
        for line in lines[:count]:
            load_record(line)
    else:
        for run in loaded[:count]:
            judge(run, explain=explain)


def count_step(root: Path, step: str, count: int, runs: int) -> float:
    """Instructions a run for one step, with ``root``'s procjudge."""
    def counted(done: int) -> int:
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "PYTHONHASHSEED": "0",
                   "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
            result = subprocess.run(
                ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={scratch}/out",
                 sys.executable, str(Path(__file__).resolve()), "--child", step, str(done), str(runs)],
                capture_output=True, text=True, env=env, cwd=scratch, check=False)
        if result.returncode != 0:
            raise SystemExit(f"valgrind failed on {step} ({root}): {result.stderr[-500:]}")
        return instructions(result.stderr)

    return (counted(count) - counted(0)) / count


def available() -> bool:
    """Whether valgrind, which does the counting, is on the PATH."""
    return shutil.which("valgrind") is not None


def count_steps(root: Path = HERE.parent, runs: int = 600) -> dict[str, float]:
    """Instructions a run for every step (``STEPS``), with ``root``'s procjudge (this checkout's by
    default), each over ``runs`` runs."""
    return {step: count_step(root, step, runs, runs) for step in STEPS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, default=None, help="another checkout to count beside this one")
    parser.add_argument("--runs", type=int, default=600, help="runs each step is done for (default 600)")
    parser.add_argument("--child", nargs=3, metavar=("STEP", "COUNT", "RUNS"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        step, count, runs = options.child
        child(step, int(count), int(runs))
        return
    if not available():
        sys.exit("valgrind is not on the PATH (apt install valgrind)")
    roots = [("this checkout", HERE.parent)] + ([("base", options.base.resolve())] if options.base else [])
    counted = {name: count_steps(root, options.runs) for name, root in roots}
    print(f"instructions a run, {options.runs} synthetic small runs (valgrind, cachegrind)")
    print(f"{'':16}" + "".join(f"{step:>14}" for step in STEPS) + f"{'judge/libyaml':>15}")
    for name, figures in counted.items():
        print(f"{name:16}" + "".join(f"{figures[step]:>14,.0f}" for step in STEPS)
              + f"{figures['judge'] / figures['libyaml']:>15.3f}")
    if options.base:
        mine, theirs = counted["this checkout"], counted["base"]
        print(f"{'this / base':16}" + "".join(f"{mine[step] / theirs[step]:>14.3f}" for step in STEPS))


if __name__ == "__main__":
    main()
