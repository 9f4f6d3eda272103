"""The five anti-patterns of "Iteration Anti-Patterns (Penalties)".

Each works on the document's plain fields alone and uses the contract's extensions (per-test
outcomes, stack-trace files, file lists, diffs, change summaries, the hidden suite) as stronger
evidence when they are present; ``basis`` names the evidence a hit rests on.  Where the document
gives a range, a hit's severity (0..1) places it in that range: ``mild + (severe - mild) x s``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Optional

from ..facts import Diff, IterationFacts, RunFacts, is_test_path
from ..policy import Policy
from .base import Hit, detector, fmt_num, plural

# --------------------------------------------------------------------------- shared helpers

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
_STOP = frozenset(
    "the and for with from into that this was were are use used using add added adds update updated "
    "updates fix fixed fixes change changed make made new test tests case cases code file files when "
    "not all any its now also out get set".split()
)


def vocabulary(texts: Iterable[str]) -> set[str]:
    """Content words of some texts: split on case and punctuation, lowercased, stop words out."""
    words = set()
    for text in texts:
        for word in _WORD.findall(text or ""):
            word = word.lower()
            if len(word) >= 3 and word not in _STOP:
                words.add(word[:-1] if word.endswith("s") and len(word) > 4 else word)
    return words


def failure_texts(it: Optional[IterationFacts]) -> list[str]:
    """Names, messages and categories of the tests failing after a submission."""
    if it is None:
        return []
    texts: list[str] = []
    results = it.entry.iteration_telemetry.test_results
    if results is not None and results.tests:
        for test in results.tests:
            if test.outcome in ("failed", "error"):
                texts += [test.name, test.message or "", test.category or ""]
    feedback = it.entry.iteration_feedback
    if feedback is not None and feedback.tests is not None and feedback.tests.failures:
        for failure in feedback.tests.failures:
            texts += [failure.name, failure.message or "", failure.category or ""]
    return texts


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


@detector("shotgun_debugging", "anti_pattern")
def shotgun_debugging(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-3 to -8: many files changed for few failures fixed. Fires when files changed per test
    fixed exceeds 3:1, when most changed files (at least 3) are named in no failing test's stack
    trace, or when files are renamed with no link to a failure. Severity: the ratio's distance
    from 3:1 towards 12:1, or the unrelated share's distance from one half towards all."""
    rule = policy.anti_patterns.shotgun_debugging
    for it in facts.iterations[1:]:
        if not _failing_before(it) or not it.files_changed:
            continue
        severities: list[float] = []
        evidence: list[str] = []
        bases: list[str] = []
        detail: dict = {}
        if it.tests_fixed is not None:
            ratio = it.files_changed / max(it.tests_fixed, 1)
            if ratio > rule.max_files_per_test_fixed:
                span = max(rule.severe_files_per_test_fixed - rule.max_files_per_test_fixed, 1e-9)
                severities.append((ratio - rule.max_files_per_test_fixed) / span)
                broken = f", {plural(it.tests_broken, 'test')} broken" if it.tests_broken else ""
                evidence.append(
                    f"{plural(it.files_changed, 'file')} changed for {plural(it.tests_fixed, 'test')} fixed "
                    f"({fmt_num(round(ratio, 1))}:1 > {fmt_num(rule.max_files_per_test_fixed)}:1){broken}"
                )
                bases.append(it.tests_basis)
        if it.stack_files_before and it.changed_paths:
            changes = it.entry.iteration_telemetry.changes
            renamed = {f.path for f in (changes.files or ()) if f.status == "renamed"} if changes else set()
            candidates = [p for p in it.changed_paths if not is_test_path(p)]
            unrelated = [p for p in candidates if not _path_matches(p, it.stack_files_before)]
            share = len(unrelated) / len(candidates) if candidates else 0.0
            if share > rule.max_unrelated_fraction and len(unrelated) >= rule.min_unrelated_files:
                severities.append((share - rule.max_unrelated_fraction) / (1 - rule.max_unrelated_fraction))
                evidence.append(
                    f"{len(unrelated)} of {plural(len(candidates), 'changed file')} appear in no failing "
                    f"test's stack trace: {', '.join(unrelated[:6])}{' ...' if len(unrelated) > 6 else ''}"
                )
                bases.append("stack traces")
                detail["unrelated_files"] = unrelated
            unlinked_renames = sorted(p for p in renamed if p in unrelated or not _path_matches(p, it.stack_files_before))
            if unlinked_renames:
                severities.append(0.0)
                evidence.append(f"renamed with no link to a failure: {', '.join(unlinked_renames[:6])}")
                bases.append("file list")
                detail["renames"] = unlinked_renames
        if severities:
            yield Hit(
                points=rule.range.place(max(severities)), iterations=(it.number,),
                evidence="; ".join(evidence), basis=", ".join(dict.fromkeys(bases)), detail=detail or None,
            )


# --------------------------------------------------------------------------- test-chasing

_LITERAL = r"(-?\d+(?:\.\d+)?|\"[^\"\n]{1,80}\"|'[^'\n]{1,80}')"
_SPECIAL_CASE = re.compile(
    r"\b(?:if|elif|else if|when|case)\b.*?(?:==|===|\bis\b|\bin\b|\bequals\()\s*\(?\s*" + _LITERAL
    + r"|\bcase\s+" + _LITERAL
    + r"|" + _LITERAL + r"\s*(?:==|===)\s*[A-Za-z_]"
)
_ASSERT = re.compile(r"\bassert|\bexpect\(|\bassertEqual|\bassert_eq|\.toBe\(|\.toEqual\(|\bEXPECT_|\bASSERT_")
_SKIP = re.compile(
    r"@pytest\.mark\.(?:skip|xfail)|pytest\.skip\(|@unittest\.skip|\b(?:it|describe|test)\.skip\(|\bxit\(|"
    r"\bt\.Skip\(|@Disabled|@Ignore|#\[ignore\]"
)
_NUMBERS_AND_STRINGS = re.compile(r"-?\d+(?:\.\d+)?|\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'")


def _distinctive(literal: str) -> bool:
    """A literal specific enough to be lifted from a failing case (not 0, 1, -1, '', 'a')."""
    if literal[:1] in "\"'":
        return len(literal) - 2 >= 3
    try:
        return abs(float(literal)) >= 10 or "." in literal
    except ValueError:
        return False


def _literal_key(literal: str) -> str:
    if literal[:1] in "\"'":
        return literal[1:-1]
    try:
        return fmt_num(float(literal))
    except ValueError:
        return literal


def _lines_containing(text: str, needle: str, limit: int = 200) -> Iterable[str]:
    """Lines of text that contain needle, found with str.find (C speed)."""
    at = text.find(needle)
    while at != -1 and limit:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        yield text[start:end]
        limit -= 1
        at = text.find(needle, end)


def _special_cases(diff: Diff, feedback: str) -> list[tuple[str, str, list[str]]]:
    """Added, non-test lines that branch on a distinctive literal found in the previous feedback.

    Only the feedback's distinctive literals (numbers of two digits or more, decimals, quoted
    strings of 3+ characters) are searched for, so the cost is linear in the diff."""
    feedback_literals = {_literal_key(m) for m in _NUMBERS_AND_STRINGS.findall(feedback) if _distinctive(m)}
    if not feedback_literals:
        return []
    found = []
    for file in diff.per_file:
        if file.is_test or not file.added:
            continue
        text = file.added_text
        seen: set[str] = set()
        for needle in sorted(feedback_literals):
            for line in _lines_containing(text, needle):
                if line in seen or len(line) > 400:
                    continue
                seen.add(line)
                for match in _SPECIAL_CASE.finditer(line):
                    literal = next(g for g in match.groups() if g is not None)
                    if _distinctive(literal) and _literal_key(literal) in feedback_literals:
                        others = [_literal_key(x) for x in _NUMBERS_AND_STRINGS.findall(line)]
                        lifted = [x for x in dict.fromkeys(others) if x in feedback_literals]
                        found.append((file.path, line.strip(), lifted))
                        break
    return found


def _test_edits(diff: Diff) -> list[str]:
    """Edits to test files that change an expected value, delete or weaken an assertion, or skip."""
    findings = []
    tests = [f for f in diff.per_file if f.is_test]
    removed = [(f.path, line.strip()) for f in tests for line in f.removed if _ASSERT.search(line)]
    added = [(f.path, line.strip()) for f in tests for line in f.added]
    added_asserts = [(p, l) for p, l in added if _ASSERT.search(l)]
    for path, line in added:
        if _SKIP.search(line):
            findings.append(f"{path}: skips a test: `{line[:100]}`")
    for path, line in removed:
        lead = re.split(r"==|!=|\(|,", line, maxsplit=1)[0]
        twin = next((a for p, a in added_asserts if p == path and a.startswith(lead) and a != line), None)
        if twin is not None:
            old = set(_NUMBERS_AND_STRINGS.findall(line))
            new = set(_NUMBERS_AND_STRINGS.findall(twin))
            if old != new:
                findings.append(f"{path}: changes an expected value: `{line[:80]}` -> `{twin[:80]}`")
            elif len(twin) < len(line) * 0.6 or re.search(r"assert\s+(True|1)\b|is not None", twin):
                findings.append(f"{path}: weakens an assertion: `{line[:80]}` -> `{twin[:80]}`")
        else:
            findings.append(f"{path}: deletes an assertion: `{line[:100]}`")
    return findings


@detector("test_chasing", "anti_pattern")
def test_chasing(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-5 to -15: changes aimed at the visible tests rather than the logic. Strongest evidence: added
    code that branches on a literal taken from the previous feedback (``if income == 50000:
    return 7500``) or test-file edits that change an expected value, delete or weaken an
    assertion, or skip a test (-10 each kind, more for several). Weaker: the held-back
    (adversarial) suite stays low or falls while the visible suite is green (severity: the
    hidden suite's failure share x 0.25, so -5 to -8); with plain fields, adversarial or hidden failures left in
    the feedback once the visible tests pass."""
    rule = policy.anti_patterns.test_chasing
    mild_to_severe = rule.range
    previous: Optional[IterationFacts] = None
    for it in facts.iterations:
        evidence: list[str] = []
        bases: list[str] = []
        severities: list[float] = []
        detail: dict = {}
        if it.diff is not None and previous is not None:
            feedback = "\n".join(failure_texts(previous))
            cases = _special_cases(it.diff, feedback) if feedback else []
            if cases:
                span = mild_to_severe.severe - mild_to_severe.mild
                base = (rule.literal_special_case - mild_to_severe.mild) / span if span else 1.0
                severities.append(base + 0.25 * (len(cases) - 1))
                shown = "; ".join(f"{p}: `{line[:90]}` (from the feedback: {', '.join(lits[:3])})" for p, line, lits in cases[:3])
                evidence.append(f"{plural(len(cases), 'special case')} on literals from the previous feedback: {shown}")
                bases.append("diff literals")
                detail["special_cases"] = [{"path": p, "line": line, "literals": lits} for p, line, lits in cases]
        if it.diff is not None:
            edits = _test_edits(it.diff)
            if edits:
                span = mild_to_severe.severe - mild_to_severe.mild
                base = (rule.weakened_test - mild_to_severe.mild) / span if span else 1.0
                severities.append(base + 0.25 * (len(edits) - 1))
                evidence.append("; ".join(edits[:3]) + (f" (+{len(edits) - 3} more)" if len(edits) > 3 else ""))
                bases.append("test-file diff")
                detail["test_edits"] = edits
        hidden = it.hidden
        if hidden is not None and hidden.total_or_sum > 0 and it.all_passing:
            rate = hidden.passed / hidden.total_or_sum
            fell = previous is not None and previous.hidden is not None and previous.hidden.total_or_sum > 0 and (
                previous.hidden.passed / previous.hidden.total_or_sum > rate
            )
            if 1 - rate >= rule.hidden_min_gap or (fell and rate < 1):
                severities.append((1 - rate) * rule.hidden_max_severity)
                trend = " and fell from the previous iteration" if fell else ""
                evidence.append(
                    f"visible suite green ({it.passed}/{it.total}) but the held-back suite passes "
                    f"{hidden.passed}/{hidden.total_or_sum}{trend}; weaker evidence than a literal special case"
                )
                bases.append("hidden suite")
        elif it.all_passing or (it is facts.final and it.failed == 0):
            feedback = it.entry.iteration_feedback
            failures = feedback.tests.failures if feedback and feedback.tests and feedback.tests.failures else []
            adversarial = [f.name for f in failures if (f.category or "").lower() in rule.hidden_categories]
            if adversarial and len(adversarial) == len(failures):
                severities.append(0.0)
                evidence.append(
                    f"visible tests pass but {plural(len(adversarial), 'adversarial test')} still fail: "
                    f"{', '.join(adversarial[:4])}"
                )
                bases.append("feedback categories")
        if severities:
            yield Hit(points=mild_to_severe.place(max(severities) + 0.25 * (len(severities) - 1)),
                      iterations=(it.number,), evidence="; ".join(evidence),
                      basis=", ".join(dict.fromkeys(bases)), detail=detail or None)
        previous = it


# --------------------------------------------------------------------------- scope creep


@detector("scope_creep", "anti_pattern")
def scope_creep(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-2 to -5: while tests are failing, changes unrelated to them. With change summaries: more
    than half of the listed changes share no content word with the failing tests' names,
    messages, categories or stack-trace files (severity: that share beyond one half). With file
    lists: new files that no failing test's stack trace names. With plain fields: files created
    in an iteration that fixed no test."""
    rule = policy.anti_patterns.scope_creep
    for previous, it in facts.pairs:
        if not _failing_before(it):
            continue
        changes = it.entry.iteration_telemetry.changes
        if changes is None:
            continue
        failure_words = vocabulary(failure_texts(previous) + sorted(it.stack_files_before))
        if changes.summary and failure_words:
            unrelated = [s for s in changes.summary if not vocabulary([s]) & failure_words]
            share = len(unrelated) / len(changes.summary)
            if share > rule.max_unrelated_fraction:
                severity = (share - rule.max_unrelated_fraction) / (1 - rule.max_unrelated_fraction)
                failing = sorted(previous.failing_after or ())
                yield Hit(
                    points=rule.range.place(severity), iterations=(it.number,),
                    evidence=f"{len(unrelated)} of {plural(len(changes.summary), 'change')} unrelated to the failing "
                    f"tests ({', '.join(failing[:4]) or 'see feedback'}): " + "; ".join(f"\"{s[:80]}\"" for s in unrelated[:4]),
                    basis="change summaries", detail={"unrelated_changes": unrelated},
                )
                continue
        if changes.files is not None and it.stack_files_before:
            created = [f.path for f in changes.files if f.status == "created" and not is_test_path(f.path)]
            unrelated_new = [p for p in created if not _path_matches(p, it.stack_files_before)]
            if unrelated_new and not it.tests_fixed:
                yield Hit(points=rule.range.place(min(1.0, (len(unrelated_new) - 1) / 3)), iterations=(it.number,),
                          evidence=f"new files no failing test points to, and no test fixed: {', '.join(unrelated_new[:5])}",
                          basis="file list, stack traces")
                continue
        if changes.files is None and changes.files_created and it.tests_fixed == 0:
            yield Hit(points=rule.range.place(0.0), iterations=(it.number,),
                      evidence=f"{plural(changes.files_created, 'file')} created while "
                      f"{plural(it.failures_before_count or 0, 'test')} failed, and no test fixed",
                      basis="seed fields")


# --------------------------------------------------------------------------- regression blindness


def _ran_tests(it: IterationFacts) -> str:
    if it.test_runs is None:
        return "no record of local test runs"
    if it.test_runs == 0:
        return "submitted without running the tests"
    return f"ran the tests {plural(it.test_runs, 'time')} before submitting"


@detector("regression_blindness", "anti_pattern")
def regression_blindness(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-3 per regressed test: tests that passed after the previous iteration and fail after this
    one (by name with per-test outcomes, else ``test_results.regressions``, else the drop in the
    pass count as a lower bound), on top of the trajectory's regression penalty."""
    per_test = policy.anti_patterns.regression_blindness.per_test
    for it in facts.iterations[1:]:
        if not it.tests_broken:
            continue
        names = f": {', '.join(it.broken_names[:6])}{' ...' if len(it.broken_names) > 6 else ''}" if it.broken_names else ""
        yield Hit(
            points=per_test * it.tests_broken, iterations=(it.number,),
            evidence=f"{plural(it.tests_broken, 'previously passing test')} broken{names}; {_ran_tests(it)}",
            basis=it.tests_basis, detail={"broken": list(it.broken_names)} if it.broken_names else None,
        )


# --------------------------------------------------------------------------- copy-paste loops

_TOKEN = re.compile(r"\w+|[^\w\s]")
TOKEN_LIMIT = 20_000  # characters; larger diffs are compared line by line (linear either way)


def change_profile(diff: Diff, by_lines: bool) -> tuple:
    """What a diff adds and removes, as two bags: adjacent token pairs (one small tweak barely
    moves them, a reordering does), or, for diffs over 20,000 characters, sets of whole lines (a
    tweak is then a small share)."""
    if by_lines:
        return (frozenset(line for f in diff.per_file for line in f.added),
                frozenset(line for f in diff.per_file for line in f.removed))
    return (_bigrams(_TOKEN.findall("\n".join(f.added_text for f in diff.per_file))),
            _bigrams(_TOKEN.findall("\n".join("\n".join(f.removed) for f in diff.per_file))))


def _bigrams(tokens: list[str]) -> Counter:
    """Adjacent token pairs: order-aware (``[:i]`` differs from ``[i:]``), still linear."""
    if len(tokens) < 2:
        return Counter(tokens)
    return Counter(zip(tokens, tokens[1:]))


def similarity(a: tuple, b: tuple) -> float:
    """Jaccard similarity of two change profiles (weighted for token bags): shared / union, 0..1."""
    shared = union = 0
    for x, y in zip(a, b):
        if isinstance(x, Counter):
            common = sum((x & y).values())
            shared += common
            union += sum(x.values()) + sum(y.values()) - common
        else:
            common = len(x & y)
            shared += common
            union += len(x) + len(y) - common
    return shared / union if union else 1.0


def _same_failures(previous: IterationFacts, it: IterationFacts) -> Optional[str]:
    """How the same tests kept failing across two submissions, or None when they did not."""
    if previous.failing_after and it.failing_after:
        common = previous.failing_after & it.failing_after
        if common and len(common) * 2 >= len(previous.failing_after | it.failing_after):
            return f"{plural(len(common), 'test')} still failing ({', '.join(sorted(common)[:4])})"
        return None
    if previous.failed and it.failed is not None and it.failed >= previous.failed:
        return f"failures {previous.failed} -> {it.failed}"
    return None


@detector("copy_paste_loop", "anti_pattern")
def copy_paste_loop(facts: RunFacts, policy: Policy) -> Iterable[Hit]:
    """-5 per repeated approach: consecutive iterations whose changes are more than 85% similar
    (weighted Jaccard over adjacent token pairs the diffs add and remove) while the same tests keep
    failing. With plain fields only: two consecutive changes of identical size (files, lines
    added, lines removed) while the failures stay."""
    rule = policy.anti_patterns.copy_paste_loop
    profiles: dict[tuple[int, bool], tuple] = {}
    for previous, it in facts.pairs:
        if previous.position == facts.iterations[0].position:
            continue  # iteration 0 is the first build, not an approach to a failure
        failing = _same_failures(previous, it)
        if failing is None:
            continue
        if it.diff is not None and previous.diff is not None:
            if it.diff.empty or previous.diff.empty:
                continue  # identical submissions have their own rule
            by_lines = max(previous.diff.size, it.diff.size) > TOKEN_LIMIT
            for side in (previous, it):
                if (side.position, by_lines) not in profiles:
                    profiles[(side.position, by_lines)] = change_profile(side.diff, by_lines)
            score = similarity(profiles[(previous.position, by_lines)], profiles[(it.position, by_lines)])
            if score > rule.similarity:
                yield Hit(points=rule.points, iterations=(previous.number, it.number),
                          evidence=f"change {score:.0%} similar to iteration {previous.number}'s "
                          f"(> {rule.similarity:.0%}); {failing}", basis="diff similarity",
                          detail={"similarity": round(score, 4)})
            continue
        a = previous.entry.iteration_telemetry.changes
        b = it.entry.iteration_telemetry.changes
        if a is None or b is None:
            continue
        size_a = (a.files_modified, a.lines_added, a.lines_removed)
        size_b = (b.files_modified, b.lines_added, b.lines_removed)
        if None not in size_a and size_a == size_b and any(size_a):
            yield Hit(points=rule.points, iterations=(previous.number, it.number),
                      evidence=f"same change size as iteration {previous.number} ({size_a[0]} files, "
                      f"+{size_a[1]}/-{size_a[2]} lines); {failing}", basis="seed fields (change sizes)")


DETECTORS = [shotgun_debugging, test_chasing, scope_creep, regression_blindness, copy_paste_loop]
