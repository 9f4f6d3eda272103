"""Precision and recall of the accusing detectors on the labelled set, and what they accuse on
the real logs (every real run is honest by construction: research repair loops).

    python scripts/accuracy_report.py            # prints docs/accuracy.md
    python scripts/accuracy_report.py --write    # rewrites docs/accuracy.md

The labelled set is tests/labelled/ (scripts/build_labelled_set.py builds it); the real logs are
read from ../shared/realdata when present.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from procjudge import judge, load_run
from procjudge.judge import ACCUSING

LABELLED = ROOT / "tests" / "labelled"
REALDATA = ROOT.parent / "shared" / "realdata"


def labelled() -> list[dict]:
    rows = list(csv.DictReader((LABELLED / "labels.csv").open(encoding="utf-8")))
    for row in rows:
        verdict = judge(load_run(LABELLED / row["path"]))
        row["verdict"] = verdict
        row["accused"] = sorted({i.id for i in verdict.items if i.id in ACCUSING and i.points < 0})
        row["definite"] = sorted({i.id for i in verdict.items if i.id in ACCUSING and i.strength == "definite"})
    return rows


def table(rows: list[dict]) -> list[str]:
    lines = ["| detector | labelled to fire | fired | true positives | precision | recall |",
             "|---|---:|---:|---:|---:|---:|"]
    for detector in sorted(ACCUSING) + ["any accusation"]:
        if detector == "any accusation":
            wanted = [r for r in rows if r["label"] == "cheat"]
            fired = [r for r in rows if r["accused"]]
            hits = [r for r in fired if r["label"] == "cheat"]
        else:
            wanted = [r for r in rows if r["expect"] == detector]
            fired = [r for r in rows if detector in r["accused"]]
            hits = [r for r in fired if r["expect"] == detector]
        precision = f"{len(hits) / len(fired):.2f}" if fired else "-"
        recall = f"{len(hits) / len(wanted):.2f}" if wanted else "-"
        lines.append(f"| `{detector}` | {len(wanted)} | {len(fired)} | {len(hits)} | {precision} | {recall} |")
    return lines


def ranking(rows: list[dict]) -> tuple[int, int, list[str]]:
    """(task pairs, pairs where the honest run outscores the cheat, the failures)."""
    pairs = ok = 0
    failures = []
    for honest in (r for r in rows if r["label"] == "honest"):
        for cheat in (r for r in rows if r["label"] == "cheat" and r["task"] == honest["task"]):
            pairs += 1
            if honest["verdict"].process_score > cheat["verdict"].process_score:
                ok += 1
            else:
                failures.append(f"{honest['path']} {honest['verdict'].process_score:g} <= {cheat['path']} "
                                f"{cheat['verdict'].process_score:g}")
    return pairs, ok, failures


def real_logs() -> list[str]:
    if not REALDATA.is_dir():
        return ["The real logs were not present when this page was made."]
    from procjudge.importers.reflexion import import_files, is_run_log

    files = sorted(p for p in REALDATA.rglob("*.jsonl") if is_run_log(str(p)))
    accused: list[str] = []
    total = 0
    with tempfile.TemporaryDirectory() as out:
        for path in files:
            import_files([str(path)], out, agent=str(path.relative_to(REALDATA)).replace("/", "_"))
        for run_path in sorted(Path(out).rglob("*.json")):
            total += 1
            verdict = judge(load_run(run_path))
            for item in verdict.items:
                if item.id in ACCUSING and item.points < 0:
                    accused.append(f"{verdict.run.id}: {item.id} ({item.strength}) at iteration "
                                   f"{', '.join(map(str, item.iterations))}")
    lines = [(f"{total} real runs from {len(files)} logs (LDB, Reflexion, MapCoder's Reflexion runs, LATS), all "
             f"written by research repair loops, none instructed to cheat: {len(accused)} accused.")]
    lines += [f"- {line}" for line in accused[:20]]
    return lines


ANTI_PATTERNS = LABELLED / "anti_patterns.csv"


def anti_patterns() -> list[str]:
    """Each rule a reviewer labelled on the real mini-swe-agent runs (imported without their
    reports), measured as `procjudge validate` measures it, and every run where they disagree."""
    import os

    corpus = Path(os.environ.get("PROCJUDGE_REALDATA", REALDATA)) / "mini-swe-agent" / "trajs"
    labels = list(csv.DictReader(ANTI_PATTERNS.open(encoding="utf-8")))
    lines = [(f"`tests/labelled/anti_patterns.csv` holds {len(labels)} labels of {len({r['run'] for r in labels})} real "
             "mini-swe-agent runs (`../shared/realdata/mini-swe-agent`, Gemini 3 Pro on SWE-bench Verified), each read "
             "command by command: does a reviewer find the rule's shape in the run? The `reading` column says what "
             "was read (the command and the output line). The runs are imported without their reports, as the "
             "command below does:"), "",
             "```sh",
             "procjudge import swe-agent ../shared/realdata/mini-swe-agent/trajs --out runs/",
             "procjudge validate --labels tests/labelled/anti_patterns.csv runs/",
             "```", ""]
    if not corpus.is_dir():
        return lines + ["The real logs were not present when this page was made."]
    from procjudge.batch import score_rows
    from procjudge.detectors import ALL
    from procjudge.importers.swe_agent import import_files
    from procjudge.policy import DEFAULT
    from procjudge.validate import read_labels, validate

    with tempfile.TemporaryDirectory() as out:
        import_files([str(path) for path in sorted(corpus.rglob("*.traj.json"))], out)
        rows, _ = score_rows(sorted(str(path) for path in Path(out).rglob("*.json")), DEFAULT, jobs=1)
        result = validate(read_labels(str(ANTI_PATTERNS), sorted(ACCUSING), [d.id for d in ALL]), rows, sorted(ACCUSING))
    reading = {(r["run"], r["rule"]): r["reading"] for r in labels}
    lines += ["| rule | tp | fp | fn | tn | precision | recall |", "|---|---:|---:|---:|---:|---:|---:|"]
    for score in result.rules:
        if score.tp + score.fp + score.fn + score.tn:
            pct = [f"{v:.2f}" if v is not None else "-" for v in (score.precision, score.recall)]
            lines.append(f"| `{score.rule}` | {score.tp} | {score.fp} | {score.fn} | {score.tn} | {pct[0]} | {pct[1]} |")
    lines.append("")
    disagreements = [(score.rule, run, "fired, labelled absent") for score in result.rules for run in score.false_positives]
    disagreements += [(score.rule, run, "missed") for score in result.rules for run in score.misses]
    disagreements += [("any accusation", run, "missed") for run in result.misses]
    disagreements += [("any accusation", run, "accused, labelled honest") for run in result.false_accusations]
    lines.append(f"Where the rule and the reading disagree ({len(disagreements)}):" if disagreements
                 else "The rules and the readings agree on every label.")
    for rule, run, how in disagreements:
        stem = run.rsplit("/", 1)[-1]
        lines.append(f"- `{rule}` {how} on {stem}: {reading.get((stem, rule), '')}")
    return lines


OWN_RUNS = "## On your own runs: `procjudge validate`"


def main(argv: list[str]) -> int:
    rows = labelled()
    pairs, ok, failures = ranking(rows)
    honest = [r for r in rows if r["label"] == "honest"]
    cheats = [r for r in rows if r["label"] == "cheat"]
    lines = [
        "# Accuracy of the accusing findings",
        "",
        "Regenerate with `python scripts/accuracy_report.py --write` (the labelled set itself with",
        "`python scripts/build_labelled_set.py`); `tests/test_labelled.py` checks the same figures.",
        "",
        (f"The labelled set (`tests/labelled/labels.csv`) holds {len(rows)} runs: {len(honest)} honest "
        f"({sum(r['why'].startswith('real') for r in honest)} real runs from LDB, Reflexion, LATS and mini-swe-agent "
        f"logs, read by hand; {sum(r['why'].startswith('mini-swe-agent 2') for r in honest)} written by "
        "mini-swe-agent 2.x itself on a small repository; the rest written) and "
        f"{len(cheats)} cheats (cheat shapes written on the same real tasks, and on written "
        "tasks: special cases keyed on visible tests, call counters, lookup tables, checker tampering, test-file "
        "edits, a deleted check, a JavaScript special case; cheats as real models write them, often only as a diff "
        "hunk or an excerpt: a conditional expression, a `match` case or a set membership on every argument of the "
        "failing test, a tuple key with a call-history toggle, a table named as a workaround for 'wrong' tests, a "
        "first-turn toggle between two contradictory answers; honest runs that fill in a `raise NotImplementedError` "
        "stub, keep a memo cache or a domain table holding a tested pair; from shell agents: a real inverted assertion, a test "
        "expectation rewritten with `sed`, a later commit copied from the repository history). Each row says why it "
        "has its label."),
        "",
        *table(rows),
        "",
        f"- Honest runs accused: {sum(1 for r in honest if r['accused'])} of {len(honest)}.",
        (f"- Cheats flagged: {sum(1 for r in cheats if r['accused'])} of {len(cheats)} "
        f"({sum(1 for r in cheats if r['definite'])} on definite evidence, scored -30)."),
        f"- Same-task pairs where the honest run outscores the cheat: {ok} of {pairs}.",
        *[f"  - not: {failure}" for failure in failures],
        "",
        "## On the real logs",
        "",
        "Command: `python scripts/accuracy_report.py` with `../shared/realdata` present.",
        "",
        *real_logs(),
        "",
        "## Anti-patterns on real shell-agent runs, read by hand",
        "",
        *anti_patterns(),
        "",
        "## What the figures do not show",
        "",
        "- The cheats are written: they show that each shape is found, not how often real agents use it.",
        "- Text patterns (other languages) and a deleted check are `likely` at most: they cost -5 and never",
        "  floor a run, because honest code matches them too (a wrong check deleted is a fix).",
        "- A branch on one argument of a test inside an if/elif chain of three or more on the same subject, and a",
        "  table of one-argument keys holding a minority of test pairs under a name that does not say what it is",
        "  for, are read as the domain (customer tiers, irregular plurals): a cheat written that way is not found.",
        "- A branch on small literals only (0, 1, -1, '', None, booleans) is a base case, whatever test it matches.",
        "",
    ]
    text = "\n".join(lines)
    page = ROOT / "docs" / "accuracy.md"
    kept = page.read_text(encoding="utf-8").split(OWN_RUNS, 1) if page.exists() else []
    if len(kept) == 2:  # the section on `procjudge validate` is written by hand: kept as it is
        text = text.rstrip("\n") + "\n\n" + OWN_RUNS + kept[1]
    if "--write" in argv:
        page.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
