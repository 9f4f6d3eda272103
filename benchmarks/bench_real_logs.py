"""What importing and judging real shell-agent logs cost, against parsing them: the two ratios of
the import-cost targets, and where the time goes.

    python benchmarks/bench_real_logs.py                          # ../shared/realdata/mini-swe-agent
    python benchmarks/bench_real_logs.py --corpus DIR --write docs/performance.md   # its section there

Then `import swe-agent` of `--copies` copies of the corpus, end to end in fresh processes, with
``--jobs 1`` and ``--jobs 2`` in turn: the throughput of two workers, and whether they wrote the
same files.

In one process, best of ``--repeat`` interleaved rounds: the floor is ``json.loads`` of every
trajectory's text; importing is ``swe_agent.convert`` of each trajectory read from its file (what
``import swe-agent`` does for it, the run file's writing aside), with the time of each stage
(decoding, reading the steps, finding the checks, rebuilding the edits, the rest of the
conversion) summed over the corpus; judging is ``judge`` of each run loaded from the run file
the import wrote, against ``json.loads`` of that run file; then each detector's share of judging
those runs. The caches of command words, of command lines read by the grammar and of sed
expressions are cleared before each import round, and the caches judging fills by content
(:func:`cold`) before each judging round and pass, as a fresh process has them empty.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = Path(os.environ.get("PROCJUDGE_REALDATA", ROOT.parent / "shared" / "realdata")) / "mini-swe-agent" / "trajs"
STAGES = ("decode", "steps", "checks", "rebuild", "convert (rest)")


def _timed(module: Any, name: str, stage: str, spent: dict[str, float], generator: bool = False) -> Callable[[], None]:
    """Wrap ``module.name`` so that its time is added to ``spent[stage]`` (a generator's, drawn
    whole inside the wrapper); returns what puts the original back."""
    original: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            result = original(*args, **kwargs)
            return iter(list(result)) if generator else result
        finally:
            spent[stage] += time.perf_counter() - start

    setattr(module, name, wrapper)
    return lambda: setattr(module, name, original)


def cold() -> None:
    """Empty the caches judging fills by content (the shapes of code, the normal form of a
    program, the words of a text, parsed diffs, test paths, the last run's shapes and the last
    block's tree), as a fresh process, or a batch of runs none of which repeats another, has them."""
    from procjudge import facts
    from procjudge.detectors import antipatterns, fragments, shapes

    for cached in (shapes.python_shapes, shapes.normal_form, shapes.cases_in, antipatterns._words_of,
                   facts.parse_diff_cached, facts.is_test_path, shapes.text_literals):
        getattr(cached, "cache_clear", lambda: None)()  # (an older checkout's text_literals keeps nothing)
    shapes._LAST[0] = (None, ())
    if hasattr(shapes, "_WALKED"):
        shapes._WALKED[0] = (None, ())
    if hasattr(fragments, "_LAST_TREE"):  # (an older checkout, measured for comparison, has none)
        fragments._LAST_TREE[0] = ("", None)


def measure(corpus: Path, repeat: int) -> dict[str, Any]:
    from procjudge.importers import base, shell, swe_agent

    files = sorted(corpus.rglob("*.traj.json"))
    if not files:
        raise SystemExit(f"no *.traj.json under {corpus}")
    texts = [path.read_bytes() for path in files]
    spent: dict[str, float] = defaultdict(float)
    restore = [_timed(base, "loads", "decode", spent),  # what read_json calls
               _timed(swe_agent, "steps", "steps", spent, generator=True),
               _timed(swe_agent, "aci_steps", "steps", spent, generator=True),
               _timed(shell, "find_checks", "checks", spent), _timed(shell, "rebuild_steps", "rebuild", spent)]
    try:
        return _measure(files, texts, spent, repeat)
    finally:
        for put_back in restore:
            put_back()


def _measure(files: list[Path], texts: list[bytes], spent: dict[str, float], repeat: int) -> dict[str, Any]:
    from procjudge import judge
    from procjudge.facts import derive
    from procjudge.importers import classify, edits, grammar, probes, sed, swe_agent
    from procjudge.importers.base import typed
    from procjudge.policy import DEFAULT
    from procjudge.records import load_record

    best: dict[str, float] = {}
    stages: dict[str, float] = {}
    documents: list[dict[str, Any]] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            json.loads(text)
        best["floor"] = min(best.get("floor", 1e9), time.perf_counter() - start)
        for cached in (edits._words, sed.compile_sed, grammar.simple_commands, getattr(classify, "_lexed", None),
                       getattr(probes, "script_of", None)):
            if cached is not None:  # (an older checkout, measured for comparison, may lack one)
                cached.cache_clear()
        spent.clear()
        start = time.perf_counter()
        documents = [swe_agent.convert(swe_agent.read_trajectory(str(path)), "bench") for path in files]
        took = time.perf_counter() - start
        if took < best.get("import", 1e9):
            best["import"] = took
            stages = dict(spent)
    stages["convert (rest)"] = best["import"] - sum(stages.get(s, 0.0) for s in STAGES[:-1])
    with tempfile.TemporaryDirectory() as folder:
        run_texts = []
        for k, document in enumerate(documents):
            path = Path(folder) / f"{k}.json"
            path.write_bytes(typed(document))
            run_texts.append(path.read_bytes())
    for _ in range(repeat):
        start = time.perf_counter()
        for text in run_texts:
            json.loads(text)
        best["run_floor"] = min(best.get("run_floor", 1e9), time.perf_counter() - start)
        start = time.perf_counter()
        runs = [load_record(text) for text in run_texts]
        best["load"] = min(best.get("load", 1e9), time.perf_counter() - start)
        cold()
        start = time.perf_counter()
        for run in runs:
            judge(run)
        best["judge"] = min(best.get("judge", 1e9), time.perf_counter() - start)
        cold()
        start = time.perf_counter()
        for run in runs:
            derive(run, DEFAULT)
        best["derive"] = min(best.get("derive", 1e9), time.perf_counter() - start)
    from bench_judge import detector_profile

    profile = detector_profile(runs, passes=repeat, before=cold)
    return {"files": len(files), "bytes": sum(len(t) for t in texts), "run_bytes": sum(len(t) for t in run_texts),
            "best": best, "stages": stages, "profile": profile}


def measure_jobs(corpus: Path, repeat: int, copies: int) -> dict[str, Any]:
    """``procjudge import swe-agent`` of ``copies`` copies of the corpus, end to end (a fresh
    process each, as a user runs it), with ``--jobs 1`` and ``--jobs 2`` in turn: the best
    wall-clock time of each over ``repeat`` rounds, and whether the two wrote the same files."""
    logs = sorted(path for path in corpus.iterdir() if not path.name.startswith("."))
    best: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "logs"
        for copy in range(copies):  # the same task in another folder: the importer names it <task>-2, ...
            for path in logs:
                target = source / f"copy{copy}" / path.name
                if path.is_dir():
                    shutil.copytree(path, target)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
        for _ in range(repeat):
            for jobs in (1, 2):
                out = Path(folder) / f"out{jobs}"
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "procjudge", "import", "swe-agent", str(source), "--out", str(out),
                                "--jobs", str(jobs)], check=True, capture_output=True, cwd=ROOT)
                best[jobs] = min(best.get(jobs, 1e9), time.perf_counter() - start)
        start_up = 1e9  # what every command pays before it reads a log: Python and procjudge started
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "procjudge", "--version"], check=True, capture_output=True, cwd=ROOT)
            start_up = min(start_up, time.perf_counter() - start)
        one, two = Path(folder) / "out1", Path(folder) / "out2"
        written = sorted(str(path.relative_to(one)) for path in one.rglob("*.json"))
        same = written == sorted(str(path.relative_to(two)) for path in two.rglob("*.json")) and all(
            filecmp.cmp(one / name, two / name, shallow=False) for name in written)
    return {"copies": copies, "runs": len(written), "one": best[1], "two": best[2], "same": same, "start": start_up}


BEGIN, END = "<!-- real-logs: begin -->", "<!-- real-logs: end -->"  # the section of docs/performance.md


def _verdict(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "**not met**"


def page(found: dict[str, Any], corpus: Path, repeat: int) -> str:
    """The figures as the real-logs section of docs/performance.md (between ``BEGIN`` and ``END``)."""
    best, stages, n = found["best"], found["stages"], found["files"]
    imported, judged = best["import"] / best["floor"], best["judge"] / best["run_floor"]
    lines = [BEGIN, "## Real shell-agent logs: importing and judging against parsing them", "",
             ("The figures of this section come from one command, run from the repository root (it rewrites this "
              "section alone, and `bench_scale.py` keeps it):"), "", "```sh",
             f"python benchmarks/bench_real_logs.py --corpus {corpus} --repeat {repeat} --write docs/performance.md",
             "```", "",
             (f"The corpus: {n} mini-swe-agent trajectories ({found['bytes'] / 1e6:.1f} MB), one process, best of "
              f"{repeat} interleaved rounds, the caches of command words, of command lines read by the grammar and "
              "of sed expressions emptied before each "
              "import round and the caches judging fills by content (the shapes of code, parsed diffs) before each "
              "judging round, as a fresh process has them."), "",
             "| what | target | measured | |", "|---|---:|---:|---|",
             f"| importing the trajectories, x `json.loads` of them | at most 3x | {imported:.1f}x | {_verdict(imported, 3)} |",
             f"| judging the runs, x `json.loads` of their run files | at most 2x | {judged:.1f}x | {_verdict(judged, 2)} |",
             *_jobs_rows(found.get("jobs")),
             "",
             "| step | seconds | per log | x its floor |", "|---|---:|---:|---:|",
             f"| `json.loads` of the trajectories (the floor) | {best['floor']:.3f} | {best['floor'] / n * 1e3:.2f} ms | 1.0 |",
             (f"| import: `swe_agent.convert` of each | {best['import']:.3f} | {best['import'] / n * 1e3:.2f} ms | "
              f"{imported:.1f} |"),
             (f"| `json.loads` of the run files ({found['run_bytes'] / 1e6:.1f} MB; the floor) | {best['run_floor']:.3f} | "
              f"{best['run_floor'] / n * 1e6:.0f} us | 1.0 |"),
             (f"| loading the runs (`load_record`) | {best['load']:.3f} | {best['load'] / n * 1e6:.0f} us | "
              f"{best['load'] / best['run_floor']:.1f} |"),
             (f"| judging them (`judge`) | {best['judge']:.3f} | {best['judge'] / n * 1e6:.0f} us | {judged:.1f} |"),
             (f"| of which deriving the facts (`derive`, before any detector) | {best['derive']:.3f} | "
              f"{best['derive'] / n * 1e6:.0f} us | {best['derive'] / best['run_floor']:.1f} |"), "",
             (f"Deriving the facts every detector reads costs {best['derive'] / best['run_floor']:.1f}x the floor on "
              "its own, before any rule runs: judging at 2x would need the facts built in a fraction of the time "
              "they take, besides detectors that cost next to nothing."), "",
             "Where importing spends its time (the round above):", "",
             "| stage | seconds | share |", "|---|---:|---:|"]
    for stage in STAGES:
        lines.append(f"| {stage} | {stages.get(stage, 0.0):.3f} | {stages.get(stage, 0.0) / best['import']:.0%} |")
    from bench_judge import profile_table

    lines += ["", ("Where judging spends its time: each detector's `needs` and check (its evidence written) on the "
                   f"same {n} runs, microseconds a run, best of {repeat} passes, the caches emptied before each:"), ""]
    lines += profile_table(found["profile"], n)
    jobs = found.get("jobs")
    if jobs:
        start = jobs["start"]
        lines += ["", (f"`import swe-agent --jobs 2` against `--jobs 1`: the corpus copied {jobs['copies']} times "
                       f"({jobs['runs']} runs), each command a fresh process from start to exit, best of {repeat} rounds "
                       f"in which they take turns: {jobs['one']:.2f} s with one worker, {jobs['two']:.2f} s with two "
                       f"({jobs['one'] / jobs['two']:.2f}x end to end). Both pay {start:.2f} s to start (`python -m "
                       "procjudge --version`, the same process with nothing to read) that no worker shares: "
                       f"without it, {jobs['one'] - start:.2f} s against {jobs['two'] - start:.2f} s, the throughput "
                       f"the row above states ({_net(jobs):.2f}x), which an archive larger than this one approaches. "
                       "The run files the two wrote are "
                       f"{'the same, byte for byte' if jobs['same'] else '**not the same**'}.")]
    return "\n".join([*lines, END]) + "\n"


def _net(jobs: dict[str, Any]) -> float:
    """Two workers' throughput against one: the commands' times less the start both pay alone."""
    return float((jobs["one"] - jobs["start"]) / max(jobs["two"] - jobs["start"], 1e-9))


def _jobs_rows(jobs: dict[str, Any] | None) -> list[str]:
    """The target row of ``import --jobs 2``, when it was measured: its throughput, the process's
    start (paid once, whatever the archive's size) set aside."""
    if not jobs:
        return []
    speedup = _net(jobs)
    met = "met" if speedup >= 1.8 and jobs["same"] else "**not met**"
    return [(f"| `import --jobs 2` throughput against `--jobs 1`, the same files written | near 2x (at least 1.8x) | "
             f"{speedup:.2f}x | {met} |")]


def write_section(target: Path, section: str) -> None:
    """``section`` in place of the one between the markers of ``target`` (added at its end when it
    has none); the rest of the page is kept as it is."""
    text = target.read_text() if target.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(END, 1)[1]
    else:
        text = (text.rstrip("\n") + "\n\n" if text else "") + section
    target.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="a folder of *.traj.json trajectories")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, best of (default 3)")
    parser.add_argument("--copies", type=int, default=8,
                        help="copies of the corpus that `import --jobs 1` and `--jobs 2` read, end to end (default 8; "
                             "0: not measured)")
    parser.add_argument("--write", type=Path, default=None,
                        help="write the figures as a section of this Markdown page (docs/performance.md), replacing "
                             "the one there")
    args = parser.parse_args()
    found = measure(args.corpus, args.repeat)
    if args.copies > 0:
        found["jobs"] = measure_jobs(args.corpus, args.repeat, args.copies)
    text = page(found, args.corpus, args.repeat)
    sys.stdout.write(text)
    if args.write:
        write_section(args.write, text)


if __name__ == "__main__":
    main()
