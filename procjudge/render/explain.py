"""``procjudge explain`` as text: a rule's entry wrapped to the width given, its example run shown
as written (not wrapped), and the list of every rule with its kind and points."""

from __future__ import annotations

import textwrap

from ..results import Explanation, Rule
from .text import literal


def entry(explanation: Explanation, width: int = 96) -> str:
    rule, shown = explanation.rule, explanation.example

    def field(label: str, text: str) -> list[str]:
        return textwrap.wrap(text, width=width, initial_indent=f"{label:<9}", subsequent_indent=" " * 9) or [label]

    accuses = "; accuses: definite evidence scores the run at the floor" if rule.accuses else ""
    lines = [*textwrap.wrap(f"{rule.id}  ({rule.kind}{accuses})", width=width, subsequent_indent="  "), "",
             *field("points", rule.points), *field("rule", rule.rule),
             *field("reads", rule.reads), *field("source", rule.source)]
    if shown is not None:
        lines += ["", *field("example", shown.name), *("  | " + line for line in shown.run.rstrip().splitlines()[:40])]
        for points, iterations, strength, basis, evidence in shown.findings:
            lines += textwrap.wrap(f"-> {points:+g} at iteration {', '.join(map(str, iterations)) or '-'} "
                                   f"[{strength}; {basis}]: {literal(evidence, 600)}", width=width,
                                   initial_indent="  ", subsequent_indent="     ")
    return "\n".join(lines) + "\n"


def rules(entries: list[Rule], width: int = 120) -> str:
    """One rule a line start: id, kind and points, wrapped under the points."""
    name_width = max(len(e.id) for e in entries)
    indent = " " * (name_width + 16)
    width = max(width, len(indent) + 20)
    return "".join("\n".join(textwrap.wrap(f"{e.id:<{name_width}}  {e.kind:<12}  {e.points}", width=width,
                                           subsequent_indent=indent)) + "\n" for e in entries)
