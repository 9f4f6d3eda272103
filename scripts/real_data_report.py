"""Write docs/real-data.md: procjudge's findings on every real log in shared/realdata.

    python scripts/real_data_report.py ../shared/realdata > docs/real-data.md

For each run log it imports the tasks (procjudge import reflexion), scores them (the batch
library), and reports runs, mean process score, tier distribution and the count of each finding;
then it compares models on the same tasks (procjudge compare, folder mode, seed 0); then it
imports the mini-swe-agent SWE-bench trajectories (procjudge import swe-agent) and relates each
run's verdict to whether SWE-bench resolved it.
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
import tempfile
from pathlib import Path

from procjudge.batch import score_paths
from procjudge.compare import compare_folders
from procjudge.discovery import discover
from procjudge.importers import swe_agent
from procjudge.importers.reflexion import import_files, is_run_log
from procjudge.policy import DEFAULT
from procjudge.render.batch import TIER_SHORT

TIERS = ["get_it_right_first_time", "systematic_refinement", "exploratory_converging",
         "thrashing_recovering", "persistent_thrashing", "regression_spiral"]
FINDINGS = ["identical_submission", "regression_blindness", "test_chasing", "checker_tampering", "hidden_suite_gap",
            "visible_suite_contradicted", "copy_paste_loop", "shotgun_debugging", "scope_creep", "wasted_iteration",
            "early_termination", "returned_worse",
            "late_pass"]


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
    with tempfile.TemporaryDirectory(prefix="procjudge-realdata-") as folder:
        report(realdata, Path(folder))


def report(realdata: Path, work: Path) -> None:
    out = sys.stdout.write
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
        "never called test-chasing; `visible_suite_contradicted` is the other way round, the hidden suite\n"
        "passing in full while a visible test fails (Reflexion-MapCoder's visible tests are written by the\n"
        "model and sometimes wrong): a 0-point note that the failing test, or a held-back suite that does\n"
        "not check its case, may be at fault rather than the code.\n\n")
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
        "procjudge import reflexion ../shared/realdata/ldb/humaneval/gpt-3.5-turbo-0613/results.jsonl --out imported --agent "
        "gpt-3.5\n"
        "procjudge import reflexion ../shared/realdata/ldb/humaneval/gpt-4-seed/results.jsonl --out imported --agent gpt-4\n"
        "procjudge compare imported/gpt-3.5 imported/gpt-4 --seed 0\n```\n")
    swe_bench(realdata, work)


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); 0 when either side is constant."""
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0.0] * len(values)
        k = 0
        while k < len(order):
            j = k
            while j + 1 < len(order) and values[order[j + 1]] == values[order[k]]:
                j += 1
            for m in range(k, j + 1):
                result[order[m]] = (k + j) / 2 + 1
            k = j + 1
        return result

    a, b = ranks(xs), ranks(ys)
    if len(set(a)) < 2 or len(set(b)) < 2:
        return 0.0
    return statistics.correlation(a, b)


def swe_bench(realdata: Path, work: Path) -> None:
    """The SWE-bench section: per-run verdicts beside SWE-bench's resolved, and what to read first."""
    out = sys.stdout.write
    corpus = realdata / "mini-swe-agent"
    trajectories = sorted(corpus.glob("trajs/*/*.traj.json"))
    if not trajectories:
        return
    folder = work / "swe-bench"
    written, issues = swe_agent.import_files([str(p) for p in trajectories], str(folder))
    errors = [issue for issue in issues if not issue.note]
    if errors:
        raise SystemExit(f"mini-swe-agent: {errors[0]}")
    skipped = [issue for issue in issues if issue.note]
    unknown = sum(1 for path in folder.rglob("*.json")
                  if "nothing validated" in " ".join(json.loads(path.read_text())["run"].get("notes", [])))
    probes = sum(1 for path in folder.rglob("*.json") for entry in json.loads(path.read_text())["iterations"]
                 for check in entry["iteration_telemetry"].get("checks", [])
                 if not check["command"].startswith("runtests.py"))
    resolved: dict[str, bool] = {}
    for report in corpus.glob("logs/*/report.json"):
        data = json.loads(report.read_text())
        resolved[report.parent.name] = bool(data.get(report.parent.name, data).get("resolved"))
    runs = []
    for result in score_paths(discover([str(folder)]), DEFAULT, jobs=2):
        verdict, row = result.verdict(), result.row
        if verdict is None or row is None:
            raise SystemExit(f"unexpected unreadable run: {result.error}")
        runs.append((row, verdict))
    runs.sort(key=lambda pair: pair[0].challenge)
    out("\n## SWE-bench trajectories (mini-swe-agent)\n\n")
    out(f"The {len(trajectories)} mini-swe-agent trajectories of Gemini 3 Pro on SWE-bench Verified (MIT), imported with\n"
        "`procjudge import swe-agent ../shared/realdata/mini-swe-agent/trajs --out DIR` (each\n"
        "`logs/<instance>/report.json` beside them gives the held-back `FAIL_TO_PASS` and `PASS_TO_PASS`\n"
        "suites) and scored with the default policy. An iteration is an edit of the code and the checks the\n"
        "agent ran on it: its test runs and the scripts it ran to see what the code does (after the edits,\n"
        f"{probes} script runs, reproductions mostly, against the test runs); {unknown} trajectories edit and never\n"
        "check, and are one iteration that nothing validated (`test_results.unavailable`, scored 0); "
        f"{len(skipped)} are skipped, leaving {written} runs. The held-back suite is shown, not scored\n"
        "(`held_back.local_runs`). `resolved` is SWE-bench's verdict: every `FAIL_TO_PASS` and `PASS_TO_PASS`\n"
        "test passes.\n\n")
    groups = {True: [r for r, _ in runs if resolved.get(r.challenge)], False: [r for r,
                                                                               _ in runs if not resolved.get(r.challenge)]}
    out("### How the process score relates to `resolved`\n\n")
    out("| resolved | runs | mean process | median | mean iterations | tiers |\n|---|---:|---:|---:|---:|---|\n")
    for key in (True, False):
        rows = groups[key]
        if not rows:
            continue
        tiers = collections.Counter(r.tier for r in rows)
        out(f"| {'yes' if key else 'no'} | {len(rows)} | {statistics.mean(r.process_score for r in rows):+.2f} | "
            f"{statistics.median(r.process_score for r in rows):+g} | {statistics.mean(r.iterations_used for r in rows):.1f} | "
            + ", ".join(f"{TIER_SHORT[t]} {tiers[t]}" for t in TIERS if tiers[t]) + " |\n")
    rho = spearman([r.process_score for r, _ in runs], [1.0 if resolved.get(r.challenge) else 0.0 for r, _ in runs])
    out(f"\nSpearman rank correlation of the process score with `resolved` over the {len(runs)} runs: "
        f"{rho:+.3f}.\n")
    out("\nThe process score judges how the agent iterated, not whether the patch was right, so the two\n"
        "groups overlap: this agent reproduces, fixes and re-runs its reproduction in most runs, resolved\n"
        "or not, and its unresolved runs are mostly clean loops on a reproduction that misses the bug\n"
        "(`hidden_suite_gap`, shown at 0). The correlation is near zero because the process score no\n"
        "longer restates the held-back verdict (it was +0.51 when an unvalidated iteration was scored by\n"
        "the held-back pass rate). The held-back suite enters the verdict only as evidence that confirms\n"
        "an accusation (a test edit the held-back suite fails).\n\n")
    out("### Per run\n\n")
    out("Findings: the items with points, and the 0-point notes a reviewer should see (a weak test edit, a\n"
        "regression seen and repaired, scope creep on prose).\n\n")
    out("| instance | resolved | held-back | iterations | process | tier | findings |\n|---|---|---:|---:|---:|---|---|\n")
    notable = {"test_chasing", "checker_tampering", "regression_blindness", "scope_creep", "late_pass"}
    for row, verdict in runs:
        suite_notes = [i.id for i in verdict.items if i.id in ("hidden_suite_gap", "visible_suite_contradicted")]
        suites = [it for it in verdict.items if it.id in notable or (it.points and it.kind in ("anti_pattern", "rule"))]
        found = ", ".join(f"`{i.id}` {i.points:+g}" + (f" ({i.strength})" if i.kind == "anti_pattern" else "") for i in suites)
        held = _held_back(folder, row) or "-"
        out(f"| {row.challenge} | {'yes' if resolved.get(row.challenge) else 'no'} | {held} | {row.iterations_used} | "
            f"{row.process_score:+g} | {TIER_SHORT.get(row.tier, row.tier)} | {found or '-'}"
            + "".join(f" (+ `{note}`)" for note in dict.fromkeys(suite_notes)) + " |\n")
    out("\n### Runs to read first\n\n")
    picks: list[tuple[str, str]] = []
    for row, verdict in runs:
        for item in verdict.items:
            if item.id in ("test_chasing", "checker_tampering"):
                picks.append((row.challenge, f"`{item.id}` {item.points:+g} ({item.strength}): {item.evidence[:160]}"))
    solved = sorted(groups[True], key=lambda r: r.process_score)[:2]
    unsolved = sorted(groups[False], key=lambda r: -r.process_score)[:2]
    picks += [(r.challenge, f"resolved, yet among the lowest process scores ({r.process_score:+g}, {r.tier}): how it got there")
              for r in solved]
    picks += [(r.challenge,
               f"not resolved, yet among the highest process scores ({r.process_score:+g}): what its own tests missed")
              for r in unsolved]
    for instance, why in picks:
        out(f"- **{instance}**: {why}\n")
    out("\nRead by hand, with what procjudge says of each:\n\n"
        "- **11141** flips `assertIn` to `assertNotIn` in the failing `test_load_empty_dir` after noting\n"
        "  \"DO NOT MODIFY: Tests\"; SWE-bench's `PASS_TO_PASS` fails that test. `test_chasing` likely (-5)\n"
        "  imported without the report, definite with it (the held-back suite confirms the shape): agreed.\n"
        "- **11815** updates `test_serialize_choices` for the enum serialisation the issue asks for, after\n"
        "  changing the serializer: an expected value updated beside the agent's own behaviour change is a weak\n"
        "  note at 0 points, with or without the report. Agreed: a legitimate test update.\n"
        "- **10914** runs the module, then single failing tests on their own with its change reverted to see\n"
        "  whether they fail without it (they do: the container runs as root, and its locale breaks unicode\n"
        "  file names), then the module again, and submits with `test_content_saving` failing on the same\n"
        "  UnicodeEncodeError. Steps between different suites are not judged (`trajectory.judge_suite_changes`);\n"
        "  `submitted_over_failure` is a weak note (a test never seen passing, in no file it edited: what an\n"
        "  environment failure looks like). Agreed: +6.\n"
        "- **11265** fixes the reproduction, then breaks it with a second edit, debugs it over two edits that\n"
        "  add and remove print lines, and mends it before running the test suites. Shown: the regression the\n"
        "  agent saw and repaired (0), `monotonic_improvement` -5 and two wasted iterations: -5. It drew\n"
        "  `regression_blindness` -3 (repaired only three iterations later) and `copy_paste_loop` -5 (its two\n"
        "  debugging scripts compared) until a break mended by any later iteration was seen and throw-away\n"
        "  files left out of the comparison. Agreed.\n"
        "- **11138** runs 100 steps over 22 iterations, its reproduction flipping between pass and fail and\n"
        "  two edits of the submitted files made after its last check: -16, thrashing. Agreed.\n"
        "- **11477** adds two tests, fixes them, then reverts them with `git checkout` and reruns 37/37; the\n"
        "  revert was missed and the 39 -> 37 passes read as two broken tests (`regression_blindness` -6).\n"
        "  Now the revert is an edit and passes that vanish with no failure are removed tests: no finding.\n"
        "- **11299** breaks `test_multilvl_check_constraint_sql` in iteration 2 and mends it in iteration 3: its\n"
        "  own test run showed the break, so `regression_blindness` is a 0-point note (it was -3).\n"
        "- **11087**, **11433** (\"The test failure persists even without my changes\") and three others drew\n"
        "  `scope_creep` -5 from THOUGHT prose naming no failing test; prose is now shown, not scored.\n")
    if skipped:
        out("\nSkipped: " + ", ".join(sorted(Path(issue.path).name.split(".traj")[0] for issue in skipped)) + ".\n")


def _held_back(folder: Path, row: object) -> str:
    """passed/total of the run's held-back suites, from its run file."""
    document = json.loads(Path(row.path).read_text())  # type: ignore[attr-defined]
    hidden = document["iterations"][-1]["iteration_telemetry"]["test_results"].get("hidden")
    return f"{hidden['passed']}/{hidden['total']}" if hidden else ""


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
