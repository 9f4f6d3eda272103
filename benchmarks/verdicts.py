"""Every run's result, verdict included, as JSON lines: to show that a change to the judge's speed
left its judgements byte for byte the same.

    git worktree add /tmp/before HEAD~1
    python benchmarks/verdicts.py --root /tmp/before before.jsonl tests/labelled/runs sample_telemetry tests/fixtures
    python benchmarks/verdicts.py after.jsonl tests/labelled/runs sample_telemetry tests/fixtures
    cmp before.jsonl after.jsonl

Each line is one ``Result`` as a batch worker makes it (the row, the encoded verdict, the line of
every iteration and the run's detail), for every run found under the folders, then for the
synthetic runs of ``bench_batch.run_document`` (half of them with diffs). ``--root`` scores with
the procjudge of another checkout.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="the JSON-lines file to write")
    parser.add_argument("folders", nargs="*", help="folders or files of runs (imported logs, the labelled set, ...)")
    parser.add_argument("--root", default=None, help="a checkout whose procjudge scores (default: this one)")
    parser.add_argument("--synthetic", type=int, default=3000, help="synthetic runs after the folders' (default 3,000)")
    options = parser.parse_args()
    root = Path(options.root or Path(__file__).parent.parent).resolve()
    sys.path.insert(0, str(root))
    sys.path.insert(1, str(Path(__file__).parent))
    import msgspec
    from bench_batch import run_document

    import procjudge
    from procjudge.batch import score_task, tasks
    from procjudge.discovery import Discovery
    from procjudge.policy import DEFAULT

    if not Path(procjudge.__file__).resolve().is_relative_to(root):
        sys.exit(f"procjudge was imported from {procjudge.__file__}, not from {root}")
    encode = msgspec.json.Encoder().encode
    count = 0
    with open(options.out, "wb") as out:
        for task in tasks(Discovery().files(options.folders)) if options.folders else ():
            out.write(encode(score_task(task, DEFAULT, want_lines=True, want_verdict=True, want_detail=True)) + b"\n")
            count += 1
        rng = random.Random(3)
        for k in range(options.synthetic):
            line = json.dumps(run_document(k, rng, diffs=k % 2 == 0)).encode()
            result = score_task(("synthetic.jsonl", k + 1, line), DEFAULT, want_lines=True, want_verdict=True,
                                want_detail=True)
            out.write(encode(result) + b"\n")
            count += 1
    print(f"{count:,} results from {root}")


if __name__ == "__main__":
    main()
