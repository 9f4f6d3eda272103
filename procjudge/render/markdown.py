"""Markdown for a pull-request comment or a CI step summary."""

from __future__ import annotations

import re

from ..numbers import fmt_num as num
from ..verdict import Verdict
from .text import (
    aggregate_line,
    held_back_line,
    iterations,
    loop_line,
    not_checked,
    one_line,
    signed,
    sparkline,
)

_EMPHASIS = re.compile(r"[*_~]")


def cell(value: object, limit: int = 300) -> str:
    """Text safe inside a Markdown table cell: one line, pipes and HTML escaped."""
    text = one_line(value, limit)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")
    # links, images, autolinks and @mentions from input stay text
    text = (text.replace("[", "\\[").replace("]", "\\]").replace("!", "&#33;").replace("@", "&#64;")
            .replace("://", "&#58;//").replace("www.", "www&#46;"))
    # emphasis, strikethrough and headings stay text; "#1" is no issue reference (a word joiner
    # after the #, invisible, breaks the autolink)
    return _EMPHASIS.sub(r"\\\g<0>", text).replace("#", "#\u2060")


def score(verdict: Verdict) -> str:
    run = verdict.run
    lines = [
        f"### procjudge: {cell(run.id)}",
        "",
        (f"**{signed(verdict.process_score)}** process score (raw {signed(verdict.raw_process_score)}, "
         f"{signed(verdict.composite_swing)} on a 0-100 composite grade) · tier **{verdict.tier}** · "
        f"pattern **{verdict.pattern}**"),
        "",
        (f"agent {cell(run.agent or '-')} · format {run.format} · trajectory "
         f"`{sparkline(verdict.trajectory)}` {' → '.join(num(s) for s in verdict.trajectory)}"),
        "",
        "| item | kind | points | iterations | evidence | basis | strength |",
        "|---|---|---:|---|---|---|---|",
    ]
    for item in verdict.items:
        if item.per_iteration:
            continue  # listed under "signals per iteration"
        lines.append(
            f"| {item.id} | {item.kind} | {signed(item.points)} | {iterations(item.iterations)} | "
            f"{cell(item.evidence)} | {cell(item.basis)} | {item.strength} |"
        )
    if verdict.phases:
        lines += ["", "| phase | used | trajectory | points | items |", "|---|---|---|---:|---|"]
        for phase in verdict.phases:
            budget = "" if phase.budget is None else f"/{phase.budget}"
            lost = f", {phase.unused_lost} lost" if phase.unused_lost else ""
            lines.append(
                f"| {cell(phase.name)} | {phase.used}{budget}{lost} | {' → '.join(num(s) for s in phase.trajectory)} | "
                f"{signed(phase.points)} | {', '.join(phase.items) or '-'} |"
            )
    signal_rows = [f"{row.iteration}: {' '.join(row.signals)}" for row in verdict.iterations if row.signals]
    lines += [
        "",
        f"- signals per iteration: {cell('; '.join(signal_rows) or 'none')}",
        f"- pattern: {cell(verdict.pattern_rule)}",
        f"- tier: {cell(verdict.tier_rule)}",
        *([f"- held-back: {cell(held_back_line(verdict.held_back))}"] if verdict.held_back is not None else []),
        f"- aggregate: {aggregate_line(verdict.aggregate)}",
        f"- loop: {cell(loop_line(verdict), 2000)}",
    ]
    if verdict.raw_process_score != verdict.process_score:
        lines.append(f"- clamped from {signed(verdict.raw_process_score)} to {signed(verdict.process_score)}: "
                     f"{cell(verdict.process_rule)}")
    if verdict.not_checked:
        lines.append("- not checked: " + cell(not_checked(verdict.not_checked), 2000))
    for warning in verdict.warnings:
        lines.append(f"- warning: {cell(warning)}")
    return "\n".join(lines) + "\n"
