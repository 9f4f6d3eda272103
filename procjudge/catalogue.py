"""The rule catalogue: every detector's declaration (``@detector``) with its texts filled from the
policy in force, and an example scored live.

The catalogue is built from the detectors themselves, so adding a rule touches its own module and
its cases, nothing here. One catalogue feeds ``procjudge explain``, ``explain --list``, the SARIF rule list and the rules
table of ``docs/rules.md`` (``python scripts/docs.py --write`` regenerates it; a test checks that
it is current), so the three never disagree. The example of a rule is the first firing case of
``procjudge/cases/<id>.yaml``, the same cases the test suite runs, judged when asked for: what
``explain`` shows is what procjudge does.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from .detectors import ALL
from .detectors.base import Detector
from .policy import DEFAULT, Policy
from .results import Example, Explanation, Rule


def _detector(rule_id: str) -> Detector:
    return next(d for d in ALL if d.id == rule_id)


def rule(rule_id: str, policy: Policy = DEFAULT) -> Rule:
    """The catalogue entry of one detector, its texts filled from ``policy`` (StopIteration for an
    unknown id)."""
    det = _detector(rule_id)
    return Rule(id=det.id, kind=det.kind, points=det.text(det.points, policy), rule=det.text(det.rule, policy),
                reads=det.reads, source=det.source, summary=det.text(det.summary, policy), accuses=det.accuses)


def catalogue(policy: Policy = DEFAULT) -> list[Rule]:
    """Every detector's entry, in the order the verdict lists them."""
    return [rule(det.id, policy) for det in ALL]


def placements(policy: Policy = DEFAULT) -> list[Rule]:
    """The tiers and patterns every verdict names, as catalogue entries (``explain --list``)."""
    from .classify import PLACEMENTS

    return [explain(ident, policy).rule for ident, _, _ in PLACEMENTS if ident not in {det.id for det in ALL}]


def names() -> list[str]:
    """Every name ``explain`` knows: the rules, then the tiers and patterns."""
    from .classify import PLACEMENTS

    known = [det.id for det in ALL]
    return known + [ident for ident, _, _ in PLACEMENTS if ident not in known]


def cases(rule_id: str) -> list[dict[str, Any]]:
    """The named cases of a rule (procjudge/cases/<file>.yaml; signals share signals.yaml)."""
    import yaml

    det = _detector(rule_id)
    name = "signals.yaml" if det.per_iteration else f"{rule_id}.yaml"
    source = resources.files("procjudge") / "cases" / name
    spec = yaml.safe_load(source.read_text(encoding="utf-8"))
    return [case for case in spec["cases"] if case.get("item", spec["detector"]) == rule_id]


def _block_strings(dumper: Any, value: str) -> Any:
    """Multi-line strings (code, diffs) as YAML literal blocks, as a person writes them."""
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _dumper() -> Any:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _block_strings)
    return Dumper


def example(rule_id: str, policy: Policy = DEFAULT) -> Example | None:
    """The first case that fires for the rule, judged now with ``policy``."""
    import yaml

    from .judge import judge
    from .loading import load_run

    _Dumper = _dumper()
    for case in cases(rule_id):
        if not case.get("fires"):
            continue
        text = yaml.dump(case["run"], Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)
        verdict = judge(load_run(f"{rule_id}.yaml", text.encode("utf-8")), policy)
        found = [(i.points, i.iterations, i.strength, i.basis, i.evidence) for i in verdict.items if i.id == rule_id]
        # a case's name may state the rule's numbers as its texts do ({s...}, {p...})
        return Example(name=_detector(rule_id).text(case["name"], policy), run=text, findings=found)
    return None


def explain(rule_id: str, policy: Policy = DEFAULT) -> Explanation:
    """A rule's entry and its example under ``policy``; ValueError naming the closest rules for an
    unknown id."""
    import difflib

    from .classify import PLACEMENTS, placement

    placed = placement(rule_id, policy)
    if placed is not None and rule_id not in {det.id for det in ALL}:
        kind, text, source = placed
        first = "The tiers, best first, and the first that holds places the run" if kind == "tier" else \
            "The patterns, in the order they are tried; the first that holds names the trajectory"
        entry = Rule(id=rule_id, kind=kind, points="none: it names the run", rule=text,
                     reads="the scores of every submission" + (", the held-back suite, definite cheating findings"
                                                                if kind == "tier" else ""),
                     source=source, summary=f"{first}: {', '.join(i for i, k, _ in PLACEMENTS if k == kind)}.")
        return Explanation(rule=entry, example=None)
    known = [det.id for det in ALL] + [ident for ident, _, _ in PLACEMENTS]
    if rule_id not in known:
        close = list(dict.fromkeys([k for k in known if k.startswith(rule_id)]
                                   + difflib.get_close_matches(rule_id, known, n=3)))[:3]
        hint = f"; did you mean {' or '.join(close)}?" if close else "; procjudge explain --list shows them"
        raise ValueError(f"no rule {rule_id!r}{hint}")
    entry = rule(rule_id, policy)
    return Explanation(rule=entry, example=example(entry.id, policy))
