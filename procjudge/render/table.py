"""The terminal breakdown of one run, drawn with rich.

Every string from the input file goes through ``Text`` objects (never markup) after
``literal()``, so neither rich markup nor escape sequences in names or messages take effect."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..numbers import fmt_num as num
from ..verdict import Verdict
from .text import (
    aggregate_line,
    held_back_line,
    iterations,
    literal,
    loop_line,
    not_checked,
    signed,
    sparkline,
)

KIND_STYLE = {"trajectory": "cyan", "anti_pattern": "red", "practice": "green", "rule": "yellow", "signal": "magenta"}


def points_text(value: float) -> Text:
    style = "green" if value > 0 else ("red" if value < 0 else "dim")
    return Text(signed(value), style=style)


def header(verdict: Verdict) -> Text:
    run = verdict.run
    text = Text()
    text.append("run ", style="dim")
    text.append(literal(run.id), style="bold")
    for label, value in (("agent", run.agent), ("challenge", run.challenge), ("format", run.format)):
        if value:
            text.append(f"  {label} ", style="dim")
            text.append(literal(value))
    text.append("\ntrajectory ", style="dim")
    text.append(sparkline(verdict.trajectory), style="bold cyan")
    text.append("  " + " → ".join(num(s) for s in verdict.trajectory))
    text.append(f"  ({verdict.iterations_used} of {run.budget} submissions)", style="dim")
    return text


def items_table(verdict: Verdict) -> Table:
    table = Table(show_edge=False, expand=False, pad_edge=False, header_style="bold")
    table.add_column("item", no_wrap=True)
    table.add_column("points", justify="right", no_wrap=True)
    table.add_column("iter", no_wrap=True)
    table.add_column("evidence", overflow="fold", ratio=1)
    for item in verdict.items:
        if item.per_iteration:
            continue  # in the per-iteration table
        name = Text(item.id, style=KIND_STYLE.get(item.kind, ""))
        name.append("\n" + item.kind.replace("_", "-"), style="dim")  # the kind in words, not only in colour
        evidence = Text(literal(item.evidence))
        evidence.append(f"  [{item.strength}; {literal(item.basis)}]", style="dim")
        table.add_row(name, points_text(item.points), iterations(item.iterations), evidence)
    return table


def signals_table(verdict: Verdict) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold", title="per-iteration signals", title_justify="left",
                  title_style="dim")
    table.add_column("iter", justify="right")
    table.add_column("score", justify="right")
    table.add_column("Δ", justify="right")
    table.add_column("signals", overflow="fold", ratio=1)
    polarity = {item.id: item.polarity for item in verdict.items if item.polarity}
    for row in verdict.iterations:
        marks = Text()
        for name in row.signals:
            if polarity.get(name) == "+":
                marks.append(f"+{name} ", style="green")
            elif polarity.get(name) == "-":
                marks.append(f"-{name} ", style="red")
        delta = "" if row.delta is None else signed(row.delta)
        table.add_row(str(row.iteration), num(row.score), delta, marks)
    return table


def phases_table(verdict: Verdict) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold", title="phases", title_justify="left", title_style="dim")
    table.add_column("phase")
    table.add_column("used", justify="right")
    table.add_column("trajectory")
    table.add_column("points", justify="right")
    table.add_column("items", overflow="fold", ratio=1)
    for phase in verdict.phases:
        budget = "" if phase.budget is None else f"/{phase.budget}"
        lost = f", {phase.unused_lost} lost" if phase.unused_lost else ""
        late = f", {phase.not_scored} not scored" if phase.not_scored else ""
        table.add_row(
            Text(literal(phase.name)), f"{phase.used}{budget}{lost}{late}",
            f"{sparkline(phase.trajectory)} {' → '.join(num(s) for s in phase.trajectory)}",
            points_text(phase.points), ", ".join(phase.items) or "-",
        )
    return table


def totals(verdict: Verdict) -> Text:
    text = Text()
    text.append("raw ", style="dim")
    text.append_text(points_text(verdict.raw_process_score))
    if verdict.raw_process_score != verdict.process_score:
        text.append("  clamped to ", style="dim")
    else:
        text.append("  process score ", style="dim")
    text.append_text(points_text(verdict.process_score))
    text.append("  on a 0-100 composite grade ", style="dim")
    text.append_text(points_text(verdict.composite_swing))
    text.append(" (composite_swing)", style="dim")
    text.append("\npattern ", style="dim")
    text.append(verdict.pattern, style="bold")
    text.append(f"  {literal(verdict.pattern_rule)}", style="dim")
    text.append("\ntier    ", style="dim")
    text.append(verdict.tier, style="bold")
    text.append(f"  {literal(verdict.tier_rule)}", style="dim")
    if verdict.process_score != verdict.raw_process_score or "cheating (" in verdict.process_rule:
        text.append("\nscore   ", style="dim")
        text.append(literal(verdict.process_rule), style="dim")
    if verdict.held_back is not None:
        text.append("\nheld-back ", style="dim")
        text.append(literal(held_back_line(verdict.held_back)),
                    style="green" if verdict.held_back.resolved else "red" if verdict.held_back.resolved is False else "")
    text.append("\naggregate ", style="dim")
    text.append(aggregate_line(verdict.aggregate))
    text.append("\nloop    ", style="dim")
    text.append(loop_line(verdict))
    if verdict.not_checked:
        text.append("\nnot checked ", style="dim")
        text.append(literal(not_checked(verdict.not_checked)), style="dim")
    for warning in verdict.warnings:
        text.append("\nwarning ", style="yellow")
        text.append(literal(warning))
    return text


def score(verdict: Verdict) -> Group:
    parts: list[RenderableType] = [header(verdict), Text(""), items_table(verdict), Text("")]
    if verdict.phases:
        parts += [phases_table(verdict), Text("")]
    parts += [signals_table(verdict), Text(""), totals(verdict)]
    return Group(*parts)


def summary(verdict: Verdict) -> Group:
    """``score --quiet``: the run's headline and totals, without the item and signal tables."""
    return Group(header(verdict), Text(""), totals(verdict))
