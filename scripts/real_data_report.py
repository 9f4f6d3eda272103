"""Write docs/real-data.md: procjudge's findings on every real log in shared/realdata.

    python scripts/real_data_report.py ../shared/realdata > docs/real-data.md

For each run log it imports the tasks (procjudge import reflexion), scores them (the batch
library), and reports runs, mean process score, tier distribution and the count of each finding;
then it compares models on the same tasks (procjudge compare, folder mode, seed 0).
"""

from __future__ import annotations

import collections
import sys
import tempfile
from pathlib import Path

from procjudge.batch import score_paths
from procjudge.compare import compare_folders
from procjudge.discovery import discover
from procjudge.importers.reflexion import import_files, is_run_log
from procjudge.policy import DEFAULT

TIERS = ["get_it_right_first_time", "systematic_refinement", "exploratory_converging",
         "thrashing_recovering", "persistent_thrashing", "regression_spiral"]
FINDINGS = ["identical_submission", "regression_blindness", "test_chasing", "checker_tampering", "hidden_suite_gap",
            "copy_paste_loop", "shotgun_debugging", "scope_creep", "wasted_iteration", "early_termination", "returned_worse",
            "late_pass"]
TIER_SHORT = {"get_it_right_first_time": "first", "systematic_refinement": "systematic",
              "exploratory_converging": "exploratory", "thrashing_recovering": "recovering",
              "persistent_thrashing": "thrashing", "regression_spiral": "spiral"}


def score_folder(folder: Path) -> tuple[list[dict], collections.Counter]:
    """Rows, and the number of items of each finding over all runs (from the JSON verdicts)."""
    rows, counts = [], collections.Counter()
    for result in score_paths(discover([str(folder)]), DEFAULT, jobs=2):
        verdict = result.verdict()
        if verdict is None or result.row is None:
            raise SystemExit(f"unexpected unreadable run: {result.error}")
        rows.append(result.row)
        for item in verdict.items:
            counts[item.id] += 1
    return rows, counts


def main(realdata: Path) -> None:
    out = sys.stdout.write
    work = Path(tempfile.mkdtemp(prefix="procjudge-realdata-"))
    logs = sorted(p for p in realdata.rglob("*.jsonl") if is_run_log(str(p)))
    others = sorted(p for p in realdata.rglob("*.jsonl") if p not in logs)
    out("# procjudge on real code-repair logs\n\n")
    out("Every figure on this page is produced by one command, from the repository root with the\n"
        "published logs beside it in `../shared/realdata/`:\n\n"
        "```sh\npython scripts/real_data_report.py ../shared/realdata > docs/real-data.md\n```\n\n"
        "The logs are third-party data: LDB (FloridSleeves/LLMDebugger, Apache-2.0), the Reflexion\n"
        "runs committed in MapCoder (Md-Ashraful-Pramanik/MapCoder, MIT) and the tree searches of LATS\n"
        "(lapisrocks/LanguageAgentTreeSearch, MIT). Each task of each file is\n"
        "imported with `procjudge import reflexion FILE --out DIR --agent NAME` (the MapCoder HumanEval\n"
        "and MBPP files also with `--hidden-from` their ET twin, which adds the extended hidden suite)\n"
        "and scored with the default policy, as `procjudge batch DIR --format json` does. The budget of\n"
        "each file is the most iterations any of its tasks used (the loop's own cap).\n\n"
        "The LATS files are tree searches, not repair loops: their `implementations[1]` is the search's\n"
        "best node while `test_feedback[1]` is the feedback of the last node generated, and\n"
        "`implementations[0]` is often another task's program. The importer recognises them (their\n"
        "`acc` field), imports each record as one submission (the best node) scored by the hidden\n"
        "verdict, and says so in the run's warnings; records the search solved at once log no program\n"
        "and are skipped with a note. Their rows below are one-shot runs by construction.\n\n"
        "`test_chasing` and `checker_tampering` accuse; none of these logs was written by an agent told\n"
        "to cheat, and `docs/accuracy.md` lists every accusation they draw. `hidden_suite_gap` is the\n"
        "visible suite green while the hidden suite fails: an edge-case bug the visible tests missed,\n"
        "never called test-chasing.\n\n")
    out("## Per file\n\n")
    out("Tiers: " + ", ".join(f"{short} = `{tier}`" for tier, short in TIER_SHORT.items()) + ".\n"
        "Findings: the number of items of each kind over all runs of the file.\n\n")
    out("| file | runs | mean process | median | mean final | tiers | " + " | ".join(f"`{f}`" for f in FINDINGS) + " |\n")
    out("|---|---:|---:|---:|---:|---|" + "---:|" * len(FINDINGS) + "\n")
    scored: dict[str, list[dict]] = {}
    for path in logs:
        relative = str(path.relative_to(realdata))
        name = relative.replace("/results.jsonl", "").replace(".jsonl", "").replace("/", "__")
        hidden_from = None
        if "/HumanEval/" in relative or "/MBPP/" in relative:
            twin = Path(str(path).replace("/HumanEval/", "/HumanEvalET/").replace("/MBPP/", "/MBPPET/"))
            hidden_from = str(twin) if twin.exists() else None
        _, issues = import_files([str(path)], str(work / name), agent=name, hidden_from=hidden_from)
        issues = [issue for issue in issues if not issue.note]
        if issues:
            raise SystemExit(f"{relative}: {issues[0]}")
        rows, counts = score_folder(work / name / name)
        scored[relative] = rows
        scores = sorted(r.process_score for r in rows)
        mean = sum(scores) / len(scores)
        median = (scores[len(scores) // 2] + scores[(len(scores) - 1) // 2]) / 2
        final = sum(r.final_score for r in rows) / len(rows)
        tiers = collections.Counter(r.tier for r in rows)
        tier_text = ", ".join(f"{TIER_SHORT[t]} {tiers[t]}" for t in TIERS if tiers[t])
        label = relative + (" (+ ET hidden suite)" if hidden_from else "")
        out(f"| `{label}` | {len(rows)} | {mean:+.2f} | {median:+g} | {final:.1f} | {tier_text} | "
            + " | ".join(str(counts[f]) for f in FINDINGS) + " |\n")
    out("\nNot run logs, so not imported: " + ", ".join(f"`{p.relative_to(realdata)}`" for p in others)
        + " (the extended hidden tests; their verdicts reach the runs through the ET result files).\n\n")

    out("## Models compared on the same tasks\n\n")
    out("`procjudge compare A B --format json --seed 0` on the imported folders; B − A is B's process\n"
        "score minus A's on the same task, with a 95% bootstrap interval of the mean (10,000 resamples).\n\n")
    out("| A | B | pairs | B wins | B loses | ties | mean B − A | 95% interval | mean process A | mean process B |\n")
    out("|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n")
    pairs = [
        ("ldb/humaneval/gpt-3.5-turbo-0613/results.jsonl", "ldb/humaneval/gpt-4-seed/results.jsonl"),
        ("ldb/humaneval/codellama/results.jsonl", "ldb/humaneval/starcoder/results.jsonl"),
        ("ldb/humaneval/reflexion/gpt-3.5-turbo-0613.jsonl", "ldb/humaneval/reflexion/gpt-4o-2024-05-13.jsonl"),
        ("ldb/humaneval/reflexion/gpt-3.5-turbo-0613.jsonl", "ldb/humaneval/gpt-3.5-turbo-0613/results.jsonl"),
        ("ldb/mbpp/codellama/results.jsonl", "ldb/mbpp/gpt-3.5-turbo-0613/results.jsonl"),
    ]
    for a, b in pairs:
        if a not in scored or b not in scored:
            continue
        result = compare_folders(scored[a], scored[b], seed=0, label_a=a, label_b=b)
        paired = result.paired
        low, high = paired.ci95 or (float("nan"), float("nan"))
        out(f"| `{a}` | `{b}` | {paired.pairs} | {paired.b_wins} | {paired.b_losses} | {paired.ties} | "
            f"{paired.mean_difference or 0:+.2f} | [{low:+.2f}, {high:+.2f}] | {result.a.mean_process_score or 0:+.2f} | "
            f"{result.b.mean_process_score or 0:+.2f} |\n")
    out("\nThe same comparison from the command line, for the first pair:\n\n```sh\n"
        "procjudge import reflexion ../shared/realdata/ldb/humaneval/gpt-3.5-turbo-0613/results.jsonl --out imported --agent gpt-3.5\n"
        "procjudge import reflexion ../shared/realdata/ldb/humaneval/gpt-4-seed/results.jsonl --out imported --agent gpt-4\n"
        "procjudge compare imported/gpt-3.5 imported/gpt-4 --seed 0\n```\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
