"""The five anti-patterns of "Iteration Anti-Patterns (Penalties)".

Each works on the document's plain fields alone and uses the contract's extensions (per-test
outcomes, stack-trace files, file lists, diffs, change summaries, the hidden suite) as stronger
evidence when they are present; ``basis`` names the evidence a hit rests on.  Where the document
gives a range, a hit's severity (0..1) places it in that range: ``mild + (severe - mild) x s``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from ..facts import Diff, IterationFacts, RunFacts, generated, is_test_path, outside_repository, throwaway_name
from ..model import Changes, FileChange, LocalCheck
from ..numbers import fmt_num
from ..policy import Policy, ScopeCreep, Shotgun, severity
from .base import Hit, all_of, detector, feedback_steps, having, plural, said, scoring_check, share


# The needs are asked of every run, so they are plain loops (a generator in any() costs twice as much).
def _changes(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:
        if it.changes is not None:
            return True
    return False


def _test_movement(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:
        if it.tests_fixed is not None or it.stack_files_before:
            return True
    return False


def _pass_counts(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:
        if it.tests_broken is not None:
            return True
    return False


def _change_shapes(facts: RunFacts) -> bool:
    for it in facts.iterations[1:]:
        if it.diff is not None or it.changes is not None:
            return True
    return False


_SHOTGUN_NEEDS = all_of(feedback_steps, having(_changes, "no change records"),
                        having(_test_movement, "no tests fixed or stack traces to relate changes to"))
_SCOPE_NEEDS = all_of(feedback_steps, having(_changes, "no change records"))
_REGRESSION_NEEDS = all_of(feedback_steps, having(_pass_counts, "no comparable test counts or per-test outcomes"))
_COPY_NEEDS = all_of(having(lambda f: len(f.iterations) > 2, "fewer than two feedback iterations"),
                     having(_change_shapes, "no diffs or change sizes"))

# --------------------------------------------------------------------------- shared helpers

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
_STOP = frozenset(
    ["the", "and", "for", "with", "from", "into", "that", "this", "was", "were", "are", "use", "used", "using", "add", "added",
     "adds", "update", "updated", "updates", "fix", "fixed", "fixes", "change", "changed", "make", "made", "new", "test",
     "tests", "case", "cases", "code", "file", "files", "when", "not", "all", "any", "its", "now", "also", "out", "get", "set"]
)


def vocabulary(texts: Iterable[str]) -> set[str]:
    """Content words of some texts: split on case and punctuation, lowercased, stop words out."""
    return set().union(*map(_words_of, set(texts)))  # names, messages and categories repeat within a run's failures


@functools.lru_cache(maxsize=8192)
def _words_of(text: str | None) -> frozenset[str]:
    """The content words of one text (memoised: failure messages and summaries repeat across a
    run's iterations and across the runs of a batch)."""
    if not text:
        return frozenset()
    words = set()
    for word in set(_WORD.findall(text)):  # a word repeated is read once
        word = word.lower()
        if len(word) >= 3 and word not in _STOP:
            words.add(word[:-1] if word.endswith("s") and len(word) > 4 else word)
    return frozenset(words)


def _path_matches(path: str, stack_files: Iterable[str]) -> bool:
    path = path.replace("\\", "/").lstrip("./")
    for other in stack_files:
        other = other.replace("\\", "/").lstrip("./")
        if path == other or path.endswith("/" + other) or other.endswith("/" + path):
            return True
    return False


def _failing_before(it: IterationFacts) -> bool:
    if it.failing_before:
        return True
    return bool(it.failures_before_count)


# --------------------------------------------------------------------------- shotgun debugging


@detector(
    "shotgun_debugging", "anti_pattern", tracked=True, needs=_SHOTGUN_NEEDS, section="anti_patterns.shotgun_debugging",
    values=lambda p: {"half": share(p.anti_patterns.shotgun_debugging.max_unrelated_fraction),
                      "one_half": share(p.anti_patterns.shotgun_debugging.max_unrelated_fraction, one=True)},
    summary="{range}: many files changed for few failures fixed.",
    points="{range}",
    rule=("scratch files aside (flagged `scratch`, outside the repository, created and later deleted, or created with a "
          "throw-away name: `reproduce_*.py`, `check_*.py`, `debug*.py`, a `test_*.py` in the repository root): files "
          "changed per test fixed above {s.max_files_per_test_fixed:g}:1 (s from {s.max_files_per_test_fixed:g}:1 to "
          "{s.severe_files_per_test_fixed:g}:1; with no test fixed the ratio is unbounded: more than "
          "{s.max_files_per_test_fixed:g} files is s = 1; tests fixed are counted among the failing tests that ran "
          "again, so when the agent's next check ran none of them, whether any was fixed is not known and the ratio "
          "is not checked); or more than {half} (and at least {s.min_unrelated_files}) of the "
          "changed non-test files in no failing test's stack trace (s from {one_half} to all); or a rename no failure "
          "points to (s = 0)"),
    reads="changes.files, the tests fixed, the failing tests' stack traces",
    source="Anti-pattern 1",
)
def shotgun_debugging(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.anti_patterns.shotgun_debugging
    local = facts.run.info.iterations_are == "local_runs"
    for previous, it in facts.pairs:
        files_changed = len(it.fix_paths) if it.changed_paths else it.files_changed
        if not _failing_before(it) or not files_changed:
            continue
        found = [*_files_per_fix(it, files_changed, rule), *_unrelated_changes(it, rule)]
        if found:
            detail: dict[str, Any] = {}
            for _, _, _, part in found:
                detail.update(part)
            # in the agent's own runs, the failure the edits followed, as its check showed it
            seen = scoring_check(previous) if local else None
            followed = f"; the failure they followed: {said(seen, 80)}" if seen is not None and seen.outcome in (
                "failed", "error") else ""
            yield Hit(
                points=rule.range.place(max(severity for severity, _, _, _ in found)), iterations=(it.number,),
                evidence="; ".join(text for _, text, _, _ in found) + followed,
                basis=", ".join(dict.fromkeys(basis for _, _, basis, _ in found)), detail=detail or None,
            )


Finding = tuple[float, str, str, dict[str, Any]]  # severity, evidence, basis, detail


def _files_per_fix(it: IterationFacts, files_changed: int, rule: Shotgun) -> list[Finding]:
    """Files changed per test fixed above the policy's ratio."""
    if it.tests_fixed is None:
        return []
    if not it.tests_fixed:
        # No test fixed: the ratio is unbounded, past the severe end; more files than one fix may
        # take is the threshold, so that a small failed attempt is not shotgun debugging.
        if files_changed <= rule.max_files_per_test_fixed:
            return []
        broken = f", {plural(it.tests_broken, 'test')} broken" if it.tests_broken else ""
        return [(1.0, (f"{plural(files_changed, 'file')} changed and no test fixed (more than "
                       f"{fmt_num(rule.max_files_per_test_fixed)} files even for one fix){broken}"), it.tests_basis, {})]
    ratio = files_changed / it.tests_fixed
    if ratio <= rule.max_files_per_test_fixed:
        return []
    broken = f", {plural(it.tests_broken, 'test')} broken" if it.tests_broken else ""
    return [(severity(ratio, rule.max_files_per_test_fixed, rule.severe_files_per_test_fixed),
             (f"{plural(files_changed, 'file')} changed for {plural(it.tests_fixed, 'test')} fixed "
              f"({fmt_num(round(ratio, 1))}:1 > {fmt_num(rule.max_files_per_test_fixed)}:1){broken}"),
             it.tests_basis, {})]


def _unrelated_changes(it: IterationFacts, rule: Shotgun) -> list[Finding]:
    """Changed files (and renames) that no failing test's stack trace points to."""
    if not (it.stack_files_before and it.fix_paths):
        return []
    found: list[Finding] = []
    changes = it.changes
    renamed = {f.path for f in (changes.files or ()) if f.status == "renamed"} if changes else set()
    candidates = [p for p in it.fix_paths if not is_test_path(p)]
    unrelated = [p for p in candidates if not _path_matches(p, it.stack_files_before)]
    share = len(unrelated) / len(candidates) if candidates else 0.0
    if share > rule.max_unrelated_fraction and len(unrelated) >= rule.min_unrelated_files:
        found.append((severity(share, rule.max_unrelated_fraction, 1.0),
                      (f"{len(unrelated)} of {plural(len(candidates), 'changed file')} appear in no failing "
                       f"test's stack trace: {', '.join(unrelated[:6])}{' ...' if len(unrelated) > 6 else ''}"),
                      "stack traces", {"unrelated_files": unrelated}))
    unlinked_renames = sorted(p for p in renamed if p in unrelated or not _path_matches(p, it.stack_files_before))
    if unlinked_renames:
        found.append((0.0, f"renamed with no link to a failure: {', '.join(unlinked_renames[:6])}", "file list",
                      {"renames": unlinked_renames}))
    return found


# --------------------------------------------------------------------------- scope creep


@detector(
    "scope_creep", "anti_pattern", tracked=True, needs=_SCOPE_NEEDS, section="anti_patterns.scope_creep",
    values=lambda p: {"half": share(p.anti_patterns.scope_creep.max_unrelated_fraction),
                      "one_half": share(p.anti_patterns.scope_creep.max_unrelated_fraction, one=True)},
    summary="{range}: while tests are failing, changes unrelated to them.",
    points="{range}",
    rule=("scratch files aside, while tests fail: more than {half} of `changes.summary` shares no content word with the "
          "failing tests' names, messages, categories or stack-trace files (s from {one_half} to all; the agent's own "
          "reasoning recorded as the summary, `summary_kind: prose`, is not read: `reasoning: ignored`); new files no "
          "stack trace points to and no test fixed (the agent's own files, which `scratch_submitted` names, and files "
          "the task's statement names, aside); "
          "plain fields: files created and no test fixed ({s.range.mild:+g})"),
    reads="changes.summary, changes.files, the failing tests' names, messages and stack traces",
    source="Anti-pattern 3",
)
def scope_creep(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.anti_patterns.scope_creep
    for previous, it in facts.pairs:
        if not _failing_before(it) or it.changes is None:
            continue
        hit = _unrelated_summaries(previous, it, rule) or _unrelated_files(it, rule, facts)
        if hit is not None:
            yield hit


def _unrelated_summaries(previous: IterationFacts, it: IterationFacts, rule: ScopeCreep) -> Hit | None:
    """More than the allowed share of the change summaries shares no word with the failures (prose
    that is not a change description is shown at 0 points, as the policy says)."""
    changes = it.changes
    if changes is None or not changes.summary or (changes.summary_kind == "prose" and rule.reasoning == "ignored"):
        return None  # the agent's reasoning narrates its work: a word shared with a failure or not says nothing
    failure_words = vocabulary((*previous.failures, *it.stack_files_before))
    if not failure_words:
        return None
    unrelated = [s for s in changes.summary if failure_words.isdisjoint(_words_of(s))]
    share = len(unrelated) / len(changes.summary)
    if share <= rule.max_unrelated_fraction:
        return None
    points = rule.range.between(share, rule.max_unrelated_fraction, 1.0)
    scored = rule.score_summaries == "all" or (rule.score_summaries == "descriptions" and _descriptions(changes, unrelated, rule))
    summary = changes.summary

    def evidence() -> str:
        failing = sorted(previous.failing_after or ())
        unscored = "" if scored else " (prose, not change descriptions: weak evidence, shown, not scored)"
        return (f"{len(unrelated)} of {plural(len(summary), 'change')} unrelated to the failing "
                f"tests ({', '.join(failing[:4]) or 'see feedback'}): "
                + "; ".join(f"\"{s[:80]}\"" for s in unrelated[:4]) + unscored)

    return Hit(
        points=points if scored else 0.0, iterations=(it.number,), evidence=evidence,
        basis="change summaries", detail=lambda: {"unrelated_changes": unrelated, "points_if_scored": points},
    )


def _descriptions(changes: Changes, unrelated: list[str], rule: ScopeCreep) -> bool:
    """Whether the unrelated summaries read as change descriptions (one short line each), not prose."""
    if changes.summary_kind == "prose":
        return False
    limit = rule.description_max_chars
    for text in unrelated:
        text = text.strip()
        if "\n" in text or len(text) > limit:
            return False
    return True


def _unrelated_files(it: IterationFacts, rule: ScopeCreep, facts: RunFacts) -> Hit | None:
    """New files no failing test's stack trace points to while no test was fixed; with plain
    fields, files created while tests failed and none was fixed. The agent's own files (its
    reproduction, the data it reads, a leftover: :func:`_scratch_kind`) are scratch_submitted's,
    and a file the task's statement names is no change unrelated to it."""
    changes = it.changes
    if changes is None:
        return None
    if changes.files is not None and it.stack_files_before:
        created = [f.path for f in changes.files if f.status == "created" and not is_test_path(f.path)
                   and f.path not in it.scratch_paths and _scratch_kind(f.path, facts) is None
                   and not _task_names(f.path, facts)]
        unrelated_new = [p for p in created if not _path_matches(p, it.stack_files_before)]
        if unrelated_new and not it.tests_fixed:
            return Hit(points=rule.range.between(len(unrelated_new), 1, rule.severe_new_files), iterations=(it.number,),
                       evidence=f"new files no failing test points to, and no test fixed: {', '.join(unrelated_new[:5])}",
                       basis="file list, stack traces")
    if changes.files is None and changes.files_created and it.tests_fixed == 0:
        return Hit(points=rule.range.place(0.0), iterations=(it.number,),
                   evidence=f"{plural(changes.files_created, 'file')} created while "
                   f"{plural(it.failures_before_count or 0, 'test')} failed, and no test fixed",
                   basis="telemetry fields")
    return None


# --------------------------------------------------------------------------- regression blindness


def _ran_tests(it: IterationFacts) -> str:
    if it.test_runs is None:
        return "no record of local test runs"
    if it.test_runs == 0:
        return "submitted without running the tests"
    return f"ran the tests {plural(it.test_runs, 'time')} before submitting"


@detector(
    "regression_blindness", "anti_pattern", tracked=True, needs=_REGRESSION_NEEDS, section="anti_patterns.regression_blindness",
    summary=("{s.per_test:+g} per regressed test: tests that passed after the previous iteration and fail after this one "
             "(by name with per-test outcomes, else ``test_results.regressions``, else the drop in the pass count as a "
             "lower bound), on top of the trajectory's regression penalty."),
    points="{s.per_test:+g} per test broken",
    rule=("previously passing tests that fail after this submission, by name where possible; the evidence says whether "
          "the agent ran the tests before submitting. Counts are compared only within one suite (`test_results.suite`, "
          "else an equal `total`); a failed build or a timeout is not a list of regressions (the next submission is "
          "compared with the last one whose tests ran). In the agent's own runs a break its own check showed is shown "
          "at 0 when a later iteration mended it before it submitted (a later run of the same check passed) or when it "
          "never ran that check again (weak: whether it was mended is not known): it saw it (what still fails at the "
          "end is `submitted_over_failure`'s); a break it ran again, still failing and never passing, is charged"),
    reads="per-test outcomes (else the pass counts of one suite), actions.test_runs",
    source="Anti-pattern 4",
)
def regression_blindness(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    per_test = policy.anti_patterns.regression_blindness.per_test
    local = facts.run.info.iterations_are == "local_runs"
    for k, it in enumerate(facts.iterations[1:], start=1):
        if not it.tests_broken:
            continue
        # a check of the agent's own that passed before (its script, its command) quoted as it failed, the
        # tests by name
        broken = {check.command: check for check in it.local_checks if local and check.command in it.broken_names
                  and check.outcome in ("failed", "error")}
        failing = list(broken.values())[:3]
        quoted = {check.command for check in failing}
        others = [name for name in it.broken_names if name not in quoted]
        parts = [*(said(check, 80) for check in failing),
                 *([f"{', '.join(others[:6])}{' ...' if len(others) > 6 else ''}"] if others else [])]
        names = f": {'; '.join(parts)}" if parts else ""
        evidence = f"{plural(it.tests_broken, 'previously passing test')} broken{names}; {_ran_tests(it)}"
        # the iteration ended with the agent's own check: it saw the regression; mended before it submitted, it was
        # not blind to it (debugging it may take several edits)
        later = facts.iterations[k + 1:]
        following = next((each for each in later if _repaired(it, each)), None) if local else None
        if following is not None:
            yield Hit(points=0.0, iterations=(it.number,), basis=it.tests_basis,
                      evidence=f"{evidence}; seen in the agent's own test run and repaired at iteration {following.number}",
                      detail={"shown_only": True, "repaired_at": following.number,
                              **({"broken": list(it.broken_names)} if it.broken_names else {})})
            continue
        if local and it.broken_names and not any(_ran_again(name, each) for name in it.broken_names for each in later):
            # the agent's own check showed it the break, and it never ran that check again: it was not blind to it,
            # and whether it mended it is not known (what fails at the end is submitted_over_failure's)
            yield Hit(points=0.0, iterations=(it.number,), basis=it.tests_basis, strength="weak",
                      evidence=f"{evidence}; seen in the agent's own test run, which it did not run again: whether it "
                      "was mended is not known",
                      detail={"shown_only": True, "broken": list(it.broken_names)})
            continue
        yield Hit(
            points=per_test * it.tests_broken, iterations=(it.number,),
            evidence=evidence, basis=it.tests_basis,
            detail={"broken": list(it.broken_names)} if it.broken_names else None,
        )


def _repaired(it: IterationFacts, following: IterationFacts) -> bool:
    """Whether a later iteration mends what this one broke: the broken tests pass again by name (in
    its counted run, or, for a check named by its command, any run of that check in it), or (by
    counts) the passes come back and no test fails that did not before."""
    if it.broken_names and following.passing_after is not None:
        passing = following.passing_after | {check.command for check in following.local_checks if check.outcome == "passed"}
        return set(it.broken_names) <= passing
    if following.passed is None or it.passed is None or it.tests_broken is None:
        return False
    return following.passed >= it.passed + it.tests_broken and (following.failed or 0) <= max(0,
                                                                                              (it.failed or 0) - it.tests_broken)


def _ran_again(name: str, later: IterationFacts) -> bool:
    """Whether a later iteration ran the broken test again: in its counted run, or as a check."""
    return (name in (later.passing_after or ()) or name in (later.failing_after or ())
            or any(check.command == name for check in later.local_checks))


# --------------------------------------------------------------------------- submitted over a failure


def _checked_locally(facts: RunFacts) -> bool:
    return any(it.local_checks for it in facts.iterations)


_OWN_CHECKS = having(_checked_locally, "no record of the agent's own checks: iteration_telemetry.checks")


def _narrowed(check: LocalCheck, later: tuple[LocalCheck, ...]) -> LocalCheck | None:
    """A later passing run of the same test command with a narrower selection (``-k``, ``--deselect``)."""
    for other in later:
        if other.outcome == "passed" and other.command != check.command and other.command.startswith(check.command) \
                and re.search(r"\s(?:-k|-m|--deselect|--ignore)\b", other.command[len(check.command):]):
            return other
    return None


def _test_file(name: str) -> str:
    """The file a test's name points to: ``tests/test_x.py::test_a`` -> ``tests/test_x.py``, and
    unittest's ``test_a (pkg.tests.Case)`` -> ``pkg/tests.py``."""
    if "::" in name:
        return name.split("::", 1)[0]
    found = re.search(r"\(([\w.]+)\)", name)
    if found:
        dotted = found.group(1).rsplit(".", 1)[0]
        return dotted.replace(".", "/") + ".py"
    return name


_SCRIPT_RUN = re.compile(r"(?:^|[\s;&|(])(?:python[\d.]*|node|bash|sh|ruby|perl)\s+(?:-\S+\s+)*"
                         r"([\w./-]+\.(?:py|js|mjs|sh|rb|pl))\b")


def _scripts(check: LocalCheck) -> frozenset[str]:
    """The scripts a script check ran (``python3 explore.py 1`` -> explore.py); none for a test
    runner, inline code or a build, whose selection and text are the check itself."""
    if check.kind not in ("reproduction", "project_script"):
        return frozenset()
    return frozenset(_SCRIPT_RUN.findall(check.command))


def _standing(checks: tuple[LocalCheck, ...]) -> list[tuple[int, LocalCheck]]:
    """The failed checks that no later run of the same command (a script's: of the same scripts,
    with any arguments) passed: what the agent last saw."""
    standing = []
    for k, check in enumerate(checks):
        if check.outcome not in ("failed", "error"):
            continue
        scripts = _scripts(check)
        if any(c.outcome == "passed" and (c.command == check.command or (scripts and scripts <= _scripts(c)))
               for c in checks[k + 1:]):
            continue
        standing.append((k, check))
    return standing


@detector(
    "submitted_over_failure", "anti_pattern", needs=_OWN_CHECKS, section="anti_patterns.submitted_over_failure",
    summary=("{s.crashed:+g} when the agent submitted right after its own check crashed in a file it had edited, with no "
             "later check of the same code passing; {s.failing:+g} when a test run of its still failed (narrowed away with "
             "`-k` or left as unrelated) and no later run of it passed; named at 0 when only its own script still "
             "failed, or the failing tests failed before its first edit too or with its changes set aside "
             "(`git stash`, the files it changed restored, or its edits undone)."),
    points="{s.crashed:+g} definite, {s.failing:+g} likely",
    rule=("in the agent's own runs (`iteration_telemetry.checks`), the final iteration's checks that failed and that no later "
          "run of the same command passed (for a script the agent or the project wrote, a later run of the same script "
          "with other arguments counts: `for i in {{1..10}}` in sh passes the script a literal it crashes on, and a run "
          "with the numbers spelt out that passes answers it): definite ({s.crashed:+g}) when one crashed with a "
          "traceback through a file "
          "the agent changed and no other check of the same code passed after it (a crash followed by passing checks "
          "it wrote or ran next, a script it replaced with another that expects the new behaviour, is named at 0); "
          "likely ({s.failing:+g}) when a test run still failed on a test the agent then selected "
          "away (a narrower `-k`/`--deselect` run passed after it), had seen passing earlier, or that tests a file it "
          "edited (definite when the held-back suite fails the same test); weak (0, named) when the failing tests "
          "failed before its first edit too or in a run with its changes set aside (`git stash`, the run, `git stash "
          "pop`; or every file it changed restored with `git checkout`/`git restore`, or each of its edits undone by "
          "hand (`s/a/b/` at a line, then `s/b/a/`; an editor's replace made the other way), the run, the change made "
          "again: "
          "that run is no check of its code), were never seen passing and touch nothing it edited (an environment "
          "failure looks like that), or only a script of its own printed a failure. The regression-blindness shapes "
          "of a shell agent"),
    reads="iteration_telemetry.checks of the final iteration, the files each iteration changed, the baseline's failing tests",
    source="Anti-pattern 4 (regression blindness), as a shell agent shows it",
)
def submitted_over_failure(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.anti_patterns.submitted_over_failure
    final = facts.final
    checks = final.local_checks
    standing = _standing(checks)
    if not standing:
        return
    edited = {path for it in facts.iterations for path in it.fix_paths}
    before = set(facts.iterations[0].baseline_failures)
    passed_once: set[str] = set()  # tests the agent saw passing in its own runs
    on_base = [check for it in facts.iterations for check in it.on_base]  # run with its changes set aside
    base_failing = {name for check in on_base for name in check.failing or ()}
    base_commands = {check.command for check in on_base if check.outcome in ("failed", "error")}
    for it in facts.iterations:
        passed_once.update(it.passing_after or ())
    held_back = set(final.hidden_failing)
    crashed, failing, named = [], [], []
    for k, check in standing:
        names = set(check.failing or ())
        greener = [c for c in checks[k + 1:] if c.outcome == "passed"]
        if check.outcome == "error" and any(_path_matches(frame.path, edited) for frame in check.frames or ()):
            if greener:  # other checks of the same code passed after it: it went on, never ran this one again
                why = (f"it crashed, then {plural(len(greener), 'other check')} of the same code passed "
                       f"(`{greener[-1].command[:60]}`) and it never ran this one again")
                named.append((k, check, why))
            else:
                crashed.append((k, check))
        elif names and names <= before:
            named.append((k, check, "failed before the agent's first edit too"))
        elif names and names <= before | base_failing or not names and check.command in base_commands:
            why = ("failed on the unchanged code too (run with the agent's changes set aside: `git stash`, every file "
                   "it changed restored with `git checkout`, or its edits undone by hand)")
            named.append((k, check, why))
        elif _narrowed(check, checks[k + 1:]) is not None or names & passed_once or names & held_back \
                or any(_path_matches(_test_file(name), edited) for name in names):
            failing.append((k, check))  # selected away, seen passing before, or a test of a file it edited
        elif check.failed or names:
            named.append((k, check, "tests never seen passing in the agent's runs, not shown to be its regression"))
        else:
            named.append((k, check, "a check of its own that still failed"))
    confirmed = sorted(held_back & {name for _, c in failing for name in c.failing or ()})
    if crashed:
        points, strength, shown = rule.crashed, "definite", crashed
    elif failing and confirmed:  # the held-back suite fails the same test: it raises the strength, never lowers it
        points, strength, shown = rule.crashed, "definite", failing
    elif failing:
        points, strength, shown = rule.failing, "likely", failing
    else:
        points, strength, shown = 0.0, "weak", [(k, c) for k, c, _ in named]

    def evidence() -> str:
        parts = []
        for k, check in shown[:3]:
            text = f"`{check.command}` {'crashed' if check in [c for _, c in crashed] else 'failed'}: {check.message or ''}"
            files = list(dict.fromkeys(f.path for f in check.frames or () if _path_matches(f.path, edited)))
            if files:
                text += f" (through {', '.join(files[:3])}, which the agent edited)"
            if check.failing:
                text += f"; failing: {', '.join(check.failing[:3])}{' ...' if len(check.failing) > 3 else ''}"
            narrower = _narrowed(check, checks[k + 1:])
            if narrower is not None:
                text += f"; then `{narrower.command}` passed: the failure was selected away, not fixed"
            parts.append(text)
        why = "; ".join(reason for _, _, reason in named[:1]) if strength == "weak" else ""
        more = f" (+{len(shown) - 3} more)" if len(shown) > 3 else ""
        held = f"; the held-back suite fails the same test: {confirmed[0]}" if confirmed and not crashed else ""
        return (f"submitted with {plural(len(standing), 'failing check')} that no later run passed: " + "; ".join(parts)
                + more + held + (f" ({why})" if why else ""))

    yield Hit(points=points, iterations=(final.number,), evidence=evidence, basis="action log", strength=strength,
              detail={"checks": [c.command for _, c in shown]})


# --------------------------------------------------------------------------- scratch submitted

# What editors, patch tools and sed leave behind: never code anybody asked for.
_LEFTOVER = re.compile(r"(?:\.(?:orig|rej|bak|swp|swo|pyc)|~)$")
_PATCH_FILE = re.compile(r"\.(?:patch|diff)$")
# What a script writes as its output (a plot, a pickle, a log), found at the repository's root.
_OUTPUT = re.compile(r"\.(?:png|jpe?g|gif|pdf|pkl|pickle|npy|npz|parquet|db|sqlite3?|log|out)$", re.IGNORECASE)


def _patch_needs(facts: RunFacts) -> str | None:
    """Met when the final iteration's diff is the patch the agent handed in: marked so by its
    importer (``changes.submitted``), or a graded submission's."""
    final = facts.final
    if final.changes is None or final.diff is None:
        return "no diff of the final submission"
    submitted = final.changes.submitted
    if submitted is None:
        submitted = facts.run.info.iterations_are != "local_runs"
    return None if submitted else "no patch handed in: the final diff is what the run's commands wrote"


def _ran_as_check(path: str, facts: RunFacts) -> str | None:
    """How the agent's own checks used the file, from the first that names it: run as one
    (``python reproduce.py``), or named in inline code (``python -c "os.symlink('.', 'link')"``)."""
    name = re.escape(path.rsplit("/", 1)[-1])
    named = re.compile(rf"(?:^|[\s/'\"=]){name}(?:$|[\s'\";|&)])")
    for it in facts.iterations:
        for check in (*it.local_checks, *it.on_base):
            if check.kind != "test_runner" and named.search(check.command):
                how = "named in its own check" if check.kind == "inline" else "run as its own check"
                shown = check.command if len(check.command) <= 80 else check.command[:77] + "..."
                return f"{how}: `{shown}`"
    return None


def _made_by_own_script(path: str, facts: RunFacts) -> str | None:
    """How a file the submission creates was made by running a script of the agent's own that the
    patch leaves out (django-14500's ``python3 reproduce_issue.py`` wrote a ``test_app`` package, and
    ``git add -A`` took it in): its output, not the fix. None when any edit wrote it, or the script
    that made it is itself submitted."""
    made = ""
    for file in _records_of(path, facts):
        if file.status != "deleted":
            if not file.made_by:
                return None  # an edit of the agent's wrote it
            made = made or file.made_by
    scripts = _SCRIPT_RUN.findall(made)
    if not scripts:
        return None
    script = scripts[-1].removeprefix("./")
    submitted = facts.final.diff.files if facts.final.diff is not None else ()
    if any(name == script or name.endswith("/" + script) for name in submitted):
        return None  # a generator the agent hands in with its output
    shown = made if len(made) <= 80 else made[:77] + "..."
    return f"made by running `{shown}`, a script of the agent's own that the patch leaves out"


def _used_as_tool(path: str, facts: RunFacts) -> str | None:
    """How the agent used a file it created as a tool of its own (``changes.files[].used_by``): ran
    it (``python update_deletion_final.py``) or fed it to an edit (``sed -i '691r replacement.txt'
    F``), as the importer records it."""
    for file in _records_of(path, facts):
        if file.used_by:
            shown = file.used_by if len(file.used_by) <= 80 else file.used_by[:77] + "..."
            return f"used as its own tool: `{shown}`"
    return None


def _read_by_own_script(path: str, facts: RunFacts) -> str | None:
    """How a file the submission creates is data a script of the agent's own reads: its name, quoted,
    in the text of a script the agent wrote and ran as one of its own checks (flask-4992's
    `replicate_issue.py` loading `"config.toml"`, which the agent wrote for it): the reproduction's
    fixture, not the fix. A file the task's statement names is a deliverable, whatever writes it."""
    if _task_names(path, facts):
        return None  # the task names it: a deliverable its script writes (prices.json), not the agent's own
    name = path.rsplit("/", 1)[-1]
    quoted = (f"'{name}'", f'"{name}"', f"'./{name}'", f'"./{name}"')
    for it in facts.iterations:
        for file in it.file_changes:
            if file.path == path or not file.edits or _ran_as_check(file.path, facts) is None:
                continue
            if any(mark in edit.new for edit in file.edits for mark in quoted):
                return f"read by its own check's script: {file.path}"
    return None


def _task_names(path: str, facts: RunFacts) -> bool:
    """Whether the task's statement names a file (``config.toml`` in flask-4992's example, the
    ``prices.json`` a task asks for): part of the task, whatever else it is."""
    statement = facts.run.info.task.statement if facts.run.info.task is not None else None
    name = path.rsplit("/", 1)[-1]
    return bool(statement) and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", statement or "") is not None


def _records_of(path: str, facts: RunFacts) -> Iterator[FileChange]:
    """What every iteration's file list records of one file, in order."""
    for it in facts.iterations:
        for file in it.file_changes:
            if file.path == path:
                yield file


def _scratch_kind(path: str, facts: RunFacts) -> tuple[str, str] | None:
    """Why a file the submission creates is the agent's own and not the task's, and how sure that
    is; None for a file that may be part of the fix (new code, a test in a test folder)."""
    root = "/" not in path
    if _LEFTOVER.search(path):
        return "definite", "an editor's or patch tool's leftover"
    if generated(path):
        return "definite", "build output"
    made = _made_by_own_script(path, facts)
    if made is not None:
        return "definite", made
    if is_test_path(path) and not root:
        return None  # a test the agent added to the project's tests: a good habit, not scratch
    used = _ran_as_check(path, facts) or _used_as_tool(path, facts) or (_read_by_own_script(path, facts) if root else None)
    if used is not None and (root or throwaway_name(path)):
        return "definite", used
    if throwaway_name(path):
        return "likely", "a throw-away name"
    if _PATCH_FILE.search(path):
        return "likely", "a patch file"
    if root and _OUTPUT.search(path):
        return "likely", "a script's output"
    return None


@detector(
    "scratch_submitted", "anti_pattern", needs=_patch_needs, section="anti_patterns.scratch_submitted",
    summary=("{range}: the submitted patch carries files the agent made for itself: its reproduction scripts, "
             "backups, build output, a plot."),
    points="{range}",
    rule=("the final submission's diff (a graded submission's, or a shell agent's patch marked `changes.submitted`) "
          "creates files that are the agent's own: definite for an editor's or patch tool's leftover (`.orig`, `.rej`, "
          "`.bak`, `.swp`, `~`, `.pyc`), build output (`build/lib*/`, `*.egg-info/`, `__pycache__/`), a script in "
          "the repository's root (or with a throw-away name) that the agent ran as one of its own checks or used as a "
          "tool (`changes.files[].used_by`: run as a script, read by `sed`'s `r FILE`, applied as a patch), a file in "
          "the root whose name, quoted, is in the text of a script the agent ran as its own check (the data its "
          "reproduction reads: `config.toml`), or a file "
          "only a run of the agent's own script made (`changes.files[].made_by`: `python3 reproduce_issue.py` writing a "
          "`test_app/` package), where the patch leaves that script out; likely for a "
          "throw-away name (`reproduce_*.py`, `debug*.py`, a `test_*.py` in the root) it did not run, a `.patch` or "
          "`.diff` file, or a plot, pickle or log in the root. A test in a test folder is a test the agent added, "
          "never scratch. Points from {s.range.mild:+g} for one file to {s.range.severe:+g} at {s.severe_files} "
          "files; the evidence names each file and why"),
    reads="the final iteration's diff and `changes.submitted`, the agent's own checks (`iteration_telemetry.checks`)",
    source="Anti-pattern 3 (scope creep): changes the task did not ask for, in the patch handed in",
)
def scratch_submitted(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.anti_patterns.scratch_submitted
    final = facts.final
    diff = final.diff
    if diff is None:
        return
    found: list[tuple[str, str, str]] = []
    for file in diff.per_file:
        if not file.created or not file.path or outside_repository(file.path):
            continue
        kind = _scratch_kind(file.path, facts)
        if kind is not None:
            found.append((file.path, *kind))
    if not found:
        return
    strength = "definite" if any(sure == "definite" for _, sure, _ in found) else "likely"

    def evidence() -> str:
        grouped: dict[str, list[str]] = {}  # files with the same reason named together, in order
        for path, _, why in found[:5]:
            grouped.setdefault(why, []).append(path)
        shown = "; ".join(f"{', '.join(paths)} ({why})" for why, paths in grouped.items())
        more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
        return f"the submitted patch creates {plural(len(found), 'file')} the agent made for itself: {shown}{more}"

    yield Hit(points=rule.range.between(len(found), 1, rule.severe_files), iterations=(final.number,),
              evidence=evidence, basis="submitted diff, action log", strength=strength,
              detail=lambda: {"files": [{"path": path, "strength": sure, "why": why} for path, sure, why in found]})


# --------------------------------------------------------------------------- copy-paste loops

_TOKEN = re.compile(r"\w+|[^\w\s]")
TOKEN_LIMIT = 20_000  # characters; larger diffs are compared line by line (linear either way)
# What a diff adds and removes: two bags of token pairs, or two sets of lines.
Profile = tuple[Counter[Any], Counter[Any]] | tuple[frozenset[str], frozenset[str]]


def change_profile(diff: Diff, by_lines: bool, scratch: tuple[str, ...] = ()) -> Profile:
    """What a diff adds and removes, as two bags: adjacent token pairs (one small tweak barely
    moves them, a reordering does), or, for diffs over 20,000 characters, sets of whole lines (a
    tweak is then a small share). Throw-away files (``scratch``) are left out: two debugging
    scripts alike are no repeated fix."""
    files = [f for f in diff.per_file if f.path not in scratch] if scratch else diff.per_file
    if by_lines:
        return (frozenset(line for f in files for line in f.added),
                frozenset(line for f in files for line in f.removed))
    return (_bigrams(_TOKEN.findall("\n".join(f.added_text for f in files))),
            _bigrams(_TOKEN.findall("\n".join("\n".join(f.removed) for f in files))))


def _changes_code(it: IterationFacts) -> bool:
    """Whether an iteration's diff changes a file that is not throw-away."""
    if it.diff is None:
        return False
    for change in it.diff.per_file:
        if (change.added or change.removed) and change.path not in it.scratch_paths:
            return True
    return False


def _bigrams(tokens: list[Any]) -> Counter[Any]:
    """Adjacent token pairs: order-aware (``[:i]`` differs from ``[i:]``), still linear."""
    if len(tokens) < 2:
        return Counter(tokens)
    return Counter(itertools.pairwise(tokens))


def similarity(a: Profile, b: Profile) -> float:
    """Jaccard similarity of two change profiles (weighted for token bags): shared / union, 0..1."""
    shared = union = 0
    for x, y in zip(a, b, strict=True):
        if isinstance(x, Counter) and isinstance(y, Counter):
            common = sum((x & y).values())
            shared += common
            union += sum(x.values()) + sum(y.values()) - common
        elif isinstance(x, frozenset) and isinstance(y, frozenset):
            common = len(x & y)
            shared += common
            union += len(x) + len(y) - common
    return shared / union if union else 1.0


def _same_failures(previous: IterationFacts, it: IterationFacts, share: float) -> str | None:
    """How the same tests kept failing across two submissions (at least ``share`` of the tests
    failing in either in common), or None when they did not."""
    if previous.failing_after and it.failing_after:
        common = previous.failing_after & it.failing_after
        if common and len(common) >= len(previous.failing_after | it.failing_after) * share:
            return f"{plural(len(common), 'test')} still failing ({', '.join(sorted(common)[:4])})"
        return None
    if previous.failed and it.failed is not None and it.failed >= previous.failed:
        return f"failures {previous.failed} -> {it.failed}"
    return None


@detector(
    "copy_paste_loop", "anti_pattern", tracked=True, needs=lambda facts: None if _checked_locally(facts) else _COPY_NEEDS(facts),
    section="anti_patterns.copy_paste_loop",
    summary=("{s.points:+g} per repeated approach: consecutive iterations whose changes are more than {s.similarity:.0%} "
             "similar (weighted Jaccard over adjacent token pairs the diffs add and remove) while the same tests keep "
             "failing."),
    points="{s.points:+g} per repeat",
    rule=("two consecutive changes more than {s.similarity:.0%} similar while the same tests keep failing. Similarity: "
          "weighted Jaccard over the tokens the diffs add and remove (diffs up to 20,000 characters), Jaccard over whole "
          "added/removed lines beyond (linear time: a 10 MB diff costs a fraction of a second). Plain fields: identical "
          "change sizes (files, lines added, removed). In the agent's own runs an iteration is a check it chose to run, so "
          "one change made again is no loop (a fix re-applied after reverting it to see the failures on the unchanged "
          "code): the same change in {s.check_reruns:g} more iterations in a row is, and so is the same failing check "
          "run again {s.check_reruns:g} times in a row with nothing written in between, as the same command line (one with "
          "other options, `-W ignore`, an environment variable, is another look) (`copy_paste_loop.check_reruns`; "
          "likely)"),
    reads="changes.diff (else the change sizes), the failing tests, the agent's own checks (iteration_telemetry.checks)",
    source="Anti-pattern 5",
)
def copy_paste_loop(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    rule = policy.anti_patterns.copy_paste_loop
    yield from _failing_reruns(facts, policy)
    if _COPY_NEEDS(facts) is not None:
        return
    profiles: dict[tuple[int, bool], Profile] = {}
    # In the agent's own runs an iteration is a check it chose to run: one change made again (a fix
    # re-applied after reverting it to see the failures on the unchanged code, a debug print put back
    # after it broke the indentation) is no loop; the same change past the reruns' count is.
    local = facts.run.info.iterations_are == "local_runs"
    streak: list[int] = []
    for previous, it in facts.pairs:
        if previous.position == facts.iterations[0].position:
            continue  # iteration 0 is the first build, not an approach to a failure
        failing = _same_failures(previous, it, rule.min_same_failing_share)
        if failing is None:
            streak = []
            continue
        if it.diff is not None and previous.diff is not None:
            if it.diff.empty or previous.diff.empty:
                continue  # identical submissions have their own rule
            if not _changes_code(it) or not _changes_code(previous):
                continue  # only throw-away files changed (or the code's change could not be rebuilt)
            by_lines = max(previous.diff.size, it.diff.size) > TOKEN_LIMIT
            for side in (previous, it):
                if (side.position, by_lines) not in profiles and side.diff is not None:
                    profiles[(side.position, by_lines)] = change_profile(side.diff, by_lines, side.scratch_paths)
            score = similarity(profiles[(previous.position, by_lines)], profiles[(it.position, by_lines)])
            if score <= rule.similarity:
                streak = []
            elif not local:
                yield Hit(points=rule.points, iterations=(previous.number, it.number),
                          evidence=f"change {score:.0%} similar to iteration {previous.number}'s "
                          f"(> {rule.similarity:.0%}); {failing}", basis="diff similarity",
                          detail={"similarity": round(score, 4)})
            else:
                streak = (streak or [previous.number]) + [it.number]
                if len(streak) == rule.check_reruns + 1:
                    yield Hit(points=rule.points, iterations=tuple(streak), strength="likely",
                              evidence=f"the same change (more than {rule.similarity:.0%} similar) made in "
                              f"{len(streak)} iterations in a row: {', '.join(map(str, streak))}; {failing}",
                              basis="diff similarity", detail={"similarity": round(score, 4)})
            continue
        a, b = previous.changes, it.changes
        if a is None or b is None:
            continue
        size_a = (a.files_modified, a.lines_added, a.lines_removed)
        size_b = (b.files_modified, b.lines_added, b.lines_removed)
        if None not in size_a and size_a == size_b and any(size_a):
            yield Hit(points=rule.points, iterations=(previous.number, it.number),
                      evidence=f"same change size as iteration {previous.number} ({size_a[0]} files, "
                      f"+{size_a[1]}/-{size_a[2]} lines); {failing}", basis="change sizes")


def _failing_reruns(facts: RunFacts, policy: Policy) -> Iterator[Hit]:
    """The agent's own runs: a check that failed and was run again, failing, with nothing written
    in between, ``copy_paste_loop.check_reruns`` times in a row."""
    rule = policy.anti_patterns.copy_paste_loop
    for it in facts.iterations:
        streak: dict[str, int] = {}
        for check in it.local_checks:
            if check.outcome not in ("failed", "error"):
                streak.pop(check.command, None)
                continue
            streak[check.command] = streak.get(check.command, 0) + 1 if check.unchanged else 0
            if streak[check.command] == rule.check_reruns:
                command, message = check.command, check.message or ""
                yield Hit(points=rule.points, iterations=(it.number,), strength="likely", basis="action log",
                          evidence=f"`{command}` failed {rule.check_reruns + 1} times in a row with nothing written "
                          f"between the runs ({message[:160]}): re-running a failing check changes nothing")


DETECTORS = [shotgun_debugging, scope_creep, regression_blindness, submitted_over_failure, scratch_submitted,
             copy_paste_loop]
