"""``procjudge validate``: how often each rule is right on the user's own labelled runs.

The labels are CSV: a column naming the run (``run``: its id, its file's name with or without the
extension, or a path ending in that name; ``path`` or ``id`` where there is no ``run``), ``label`` (``cheat`` or ``honest``;
``1``/``0``, ``yes``/``no``, ``true``/``false`` too) and, optionally, ``rule``: the accusing rule a
cheat should draw. An accusation is an item of an accusing rule (``test_chasing``,
``checker_tampering``, ``stand_in``, ``repository_history``) that the verdict counts as a finding (a
weak note is none).

A row whose ``rule`` is any other rule (an anti-pattern such as ``regression_blindness``, a
trajectory rule, a reward) labels that rule alone on that run: ``yes`` (``1``, ``true``,
``fires``) that a reviewer finds its shape there, ``no`` (``0``, ``false``, ``absent``) that they do
not; the rule fires where the verdict counts one of its items as a finding. Such rows are scored
for their rule only, never as cheat or honest runs.

Per accusing rule: true positives are the runs labelled cheat for that rule that it accused, and
the runs labelled cheat with no rule that it accused; false negatives the runs labelled cheat for
that rule that it did not accuse; false positives and true negatives the honest runs it did and did
not accuse. For "any accusation": every cheat against every honest run. Precision, recall and F1
where defined (None where a denominator is 0). The AUROC of the process score, a low score read as
predicting "cheat", with a seeded bootstrap 95% interval over the labelled runs. The misses (cheats
nobody accused) and false accusations are listed by run; labels that name no run, and runs no
label names, are counted and the first of them named.
"""

from __future__ import annotations

import csv
import difflib
import io
import os
import random
from collections.abc import Iterable, Sequence

import msgspec

from .render.text import literal
from .results import Row

SCHEMA = "procjudge.validate/1"
_CHEAT = {"cheat": True, "honest": False, "1": True, "0": False, "yes": True, "no": False, "true": True,
          "false": False}
_FIRES = {**_CHEAT, "fires": True, "absent": False}  # a label of another rule than an accusing one
NAMED = 50  # runs named at most in each list


class LabelError(ValueError):
    """A labels file that cannot be read: file, line, what is wrong and how to fix it."""


class Label(msgspec.Struct, frozen=True):
    run: str
    cheat: bool
    rule: str | None
    line: int


class RuleScore(msgspec.Struct, frozen=True, kw_only=True):
    rule: str
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    accuses: bool = True  # an accusing rule (cheat and honest runs), or another labelled on its own rows
    misses: list[str] = []  # the first runs labelled for it that it did not fire on
    false_positives: list[str] = []  # the first runs it fired on that were labelled against it


class Validation(msgspec.Struct, frozen=True, kw_only=True):
    schema: str = SCHEMA
    labelled_runs: int
    rules: list[RuleScore]
    any_accusation: RuleScore
    auroc: float | None
    auroc_interval: list[float] | None
    misses: list[str]
    false_accusations: list[str]
    unlabelled_runs: int
    labels_without_run: int
    unlabelled: list[str]  # the first runs no label names
    unmatched_labels: list[str]  # the first labels that name no run


def read_labels(path: str, rules: Iterable[str], others: Iterable[str] = ()) -> list[Label]:
    """The labels of a CSV file (see the module docstring), or LabelError naming the line. ``rules``
    are the accusing rules, ``others`` every other rule a row may label."""
    from .locate import read_regular

    try:
        text = read_regular(path, 64 * 1024 * 1024).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise LabelError(f"{path}: cannot be read: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    key = next((name for name in ("run", "path", "id") if name in fields), None)
    if key is None or "label" not in fields:
        raise LabelError(f"{path}:1: expected a header with a `run` column (its id or file name) and a `label` column "
                         f"(cheat or honest); found {', '.join(fields) or 'no header'}")
    accusing, other = set(rules), set(others) - set(rules)
    labels = []
    for number, raw in enumerate(reader, start=2):
        row = {str(k).strip().lower(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        rule = row.get("rule") or None
        if rule is not None and rule not in accusing | other:
            close = difflib.get_close_matches(rule, sorted(accusing | other), n=1)
            raise LabelError(f"{path}:{number}: field rule: {rule[:40]!r} is not a rule"
                             f"{f' (did you mean {close[0]}?)' if close else ''}; expected an accusing rule "
                             f"({', '.join(sorted(accusing))}), another rule's id (`procjudge rules` lists them), "
                             f"or empty")
        value = row.get("label", "").lower()
        vocabulary = _FIRES if rule in other else _CHEAT
        if value not in vocabulary:
            expected = "yes or no (or 1/0, fires/absent)" if rule in other else "cheat or honest (or 1/0, yes/no)"
            raise LabelError(f"{path}:{number}: field label: expected {expected}, got {row.get('label', '')[:40]!r}")
        if not row.get(key):
            raise LabelError(f"{path}:{number}: field {key}: empty; name the run by its id or file name")
        labels.append(Label(row[key], vocabulary[value], rule, number))
    return labels


def _names(row: Row) -> list[str]:
    """What a label may call a run: its id, its file's path as given, name and stem."""
    base = os.path.basename(row.path)
    stem = base
    for suffix in (".json", ".yaml", ".yml", ".jsonl"):
        stem = stem.removesuffix(suffix)
    return [row.id, row.path, base, stem]


def validate(labels: Sequence[Label], rows: Sequence[Row], rules: Sequence[str], seed: int = 0) -> Validation:
    """Each accusing rule's and the process score's performance on the labelled runs, and that of
    every other rule a label names, on the rows that label it."""
    by_name: dict[str, Row] = {}
    for row in rows:
        for name in _names(row):
            by_name.setdefault(name, row)
    matched: list[tuple[Label, Row]] = []
    unmatched: list[str] = []
    for label in labels:
        found = by_name.get(label.run)
        if found is None and "/" in label.run.replace("\\", "/"):  # a path relative to elsewhere: its file's name
            found = by_name.get(os.path.basename(label.run.replace("\\", "/")))
        if found is None:
            unmatched.append(label.run)
        else:
            matched.append((label, found))
    named = {id(row) for _, row in matched}
    unlabelled = [row.id for row in rows if id(row) not in named]
    accusing = set(rules)
    judged = [(label, row) for label, row in matched if label.rule is None or label.rule in accusing]
    accused = [(label, row, set(row.items) & accusing) for label, row in judged]
    scores = [_rule(rule, accused) for rule in rules]
    others = sorted({label.rule for label, _ in matched if label.rule is not None and label.rule not in accusing})
    scores += [_other(rule, [(label, row) for label, row in matched if label.rule == rule]) for rule in others]
    every = _score("any accusation", [(label.cheat, bool(fired), row.id) for label, row, fired in accused])
    auroc, interval = _auroc([(label.cheat, row.process_score) for label, row in judged], seed)
    return Validation(
        labelled_runs=len(matched), rules=scores, auroc=auroc, auroc_interval=interval,
        # the runs "any accusation" missed and accused wrongly are the report's own lists
        any_accusation=msgspec.structs.replace(every, misses=[], false_positives=[]),
        misses=every.misses, false_accusations=every.false_positives,
        unlabelled_runs=len(unlabelled), labels_without_run=len(unmatched),
        unlabelled=unlabelled[:NAMED], unmatched_labels=unmatched[:NAMED])


def _rule(rule: str, accused: list[tuple[Label, Row, set[str]]]) -> RuleScore:
    cases: list[tuple[bool, bool, str]] = []
    for label, row, fired in accused:
        if not label.cheat:
            cases.append((False, rule in fired, row.id))
        elif label.rule == rule or (label.rule is None and rule in fired):
            cases.append((True, rule in fired, row.id))  # a cheat of no named rule counts where this rule caught it
    return _score(rule, cases)


def _other(rule: str, labelled: list[tuple[Label, Row]]) -> RuleScore:
    """A rule that accuses nobody, on the rows that label it: does it fire where a reviewer finds its shape?"""
    return _score(rule, [(label.cheat, rule in row.items, row.id) for label, row in labelled], accuses=False)


def _score(rule: str, cases: Sequence[tuple[bool, bool, str]], accuses: bool = True) -> RuleScore:
    """A rule's figures from its cases: (labelled to fire, fired, the run's id) each."""
    tp = sum(1 for truth, fired, _ in cases if truth and fired)
    fp = sum(1 for truth, fired, _ in cases if not truth and fired)
    fn = sum(1 for truth, fired, _ in cases if truth and not fired)
    tn = sum(1 for truth, fired, _ in cases if not truth and not fired)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * precision * recall / (precision + recall) if precision is not None and recall is not None
          and precision + recall else None)
    return RuleScore(rule=rule, tp=tp, fp=fp, fn=fn, tn=tn, precision=_round(precision), recall=_round(recall),
                     f1=_round(f1), accuses=accuses,
                     misses=[run for truth, fired, run in cases if truth and not fired][:NAMED],
                     false_positives=[run for truth, fired, run in cases if not truth and fired][:NAMED])


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def auroc_of(pairs: Sequence[tuple[bool, float]]) -> float | None:
    """The AUROC of a low process score predicting "cheat": the chance that a cheat scores below an
    honest run (ties count half); None without both kinds."""
    cheats = sorted(score for cheat, score in pairs if cheat)
    honest = sorted(score for cheat, score in pairs if not cheat)
    if not cheats or not honest:
        return None
    import bisect

    wins = 0.0
    for score in cheats:
        below = bisect.bisect_left(honest, score)
        equal = bisect.bisect_right(honest, score) - below
        wins += (len(honest) - below - equal) + equal / 2  # honest runs scoring above the cheat
    return wins / (len(cheats) * len(honest))


def _auroc(pairs: list[tuple[bool, float]], seed: int, draws: int = 1000) -> tuple[float | None, list[float] | None]:
    value = auroc_of(pairs)
    if value is None:
        return None, None
    chance = random.Random(seed)
    found = []
    for _ in range(draws):
        sample = [pairs[chance.randrange(len(pairs))] for _ in pairs]
        drawn = auroc_of(sample)
        if drawn is not None:
            found.append(drawn)
    found.sort()
    if not found:
        return round(value, 4), None
    low, high = found[int(0.025 * (len(found) - 1))], found[int(0.975 * (len(found) - 1))]
    return round(value, 4), [round(low, 4), round(high, 4)]


# --------------------------------------------------------------------------- reports


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def as_table(result: Validation) -> str:
    """The terminal's report: a line a rule, then the score's AUROC and the runs to read."""
    width = max(20, *(len(score.rule) for score in result.rules))
    lines = [f"{result.labelled_runs} labelled runs", "",
             f"{'rule':<{width}} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'precision':>9} {'recall':>6} {'f1':>5}"]
    for score in [*result.rules, result.any_accusation]:
        lines.append(f"{score.rule:<{width}} {score.tp:>4} {score.fp:>4} {score.fn:>4} {score.tn:>4} "
                     f"{_pct(score.precision):>9} {_pct(score.recall):>6} {_pct(score.f1):>5}")
    interval = (f" (95% bootstrap interval {result.auroc_interval[0]:.2f}-{result.auroc_interval[1]:.2f})"
                if result.auroc_interval else "")
    lines += ["", f"AUROC of the process score (a low score predicting cheat): {_pct(result.auroc)}{interval}"]
    for title, names in (("missed cheats", result.misses), ("false accusations", result.false_accusations)):
        lines.append(f"{title}: {', '.join(map(literal, names)) if names else 'none'}")
    for score in result.rules:
        if not score.accuses:
            lines.append(f"{score.rule}: missed {', '.join(map(literal, score.misses)) or 'none'}; fired where "
                         f"labelled absent: {', '.join(map(literal, score.false_positives)) or 'none'}")
    if result.unlabelled_runs:
        lines.append(f"{result.unlabelled_runs} runs have no label (first: {', '.join(map(literal, result.unlabelled[:5]))})")
    if result.labels_without_run:
        lines.append(f"{result.labels_without_run} labels name no run (first: "
                     f"{', '.join(map(literal, result.unmatched_labels[:5]))})")
    return "\n".join(lines) + "\n"


def as_json(result: Validation) -> str:
    return msgspec.json.format(msgspec.json.encode(result), indent=2).decode() + "\n"


def as_csv(result: Validation) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rule", "tp", "fp", "fn", "tn", "precision", "recall", "f1"])
    for score in [*result.rules, result.any_accusation]:
        writer.writerow([score.rule, score.tp, score.fp, score.fn, score.tn,
                         *("" if v is None else v for v in (score.precision, score.recall, score.f1))])
    return out.getvalue()


def as_markdown(result: Validation) -> str:
    lines = ["| rule | tp | fp | fn | tn | precision | recall | F1 |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for score in [*result.rules, result.any_accusation]:
        lines.append(f"| `{score.rule}` | {score.tp} | {score.fp} | {score.fn} | {score.tn} | {_pct(score.precision)} | "
                     f"{_pct(score.recall)} | {_pct(score.f1)} |")
    lines.append(f"\nAUROC of the process score: {_pct(result.auroc)}"
                 + (f" (95% interval {result.auroc_interval[0]:.2f}-{result.auroc_interval[1]:.2f})"
                    if result.auroc_interval else ""))
    lines.append(f"\nMissed cheats: {', '.join(_code(n) for n in result.misses) or 'none'}. "
                 f"False accusations: {', '.join(_code(n) for n in result.false_accusations) or 'none'}.")
    for score in result.rules:
        if not score.accuses:
            lines.append(f"\n`{score.rule}` missed {', '.join(_code(n) for n in score.misses) or 'none'}, and fired "
                         f"where labelled absent on {', '.join(_code(n) for n in score.false_positives) or 'none'}.")
    return "\n".join(lines) + "\n"


def _code(name: str) -> str:
    """A run's name as Markdown code, whatever it holds."""
    return "`" + literal(name, 200).replace("`", "'").replace("|", "\\|") + "`"


def below(result: Validation, threshold: float) -> list[str]:
    """The rules (and "any accusation") whose precision is below ``threshold``."""
    return [f"{score.rule} {score.precision:.2f}" for score in [*result.rules, result.any_accusation]
            if score.precision is not None and score.precision < threshold]
