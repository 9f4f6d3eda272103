"""``procjudge drift`` as text: one line per source and window, then the alerts, wrapped to the
width given (test names are cut in the table; the alert that names one keeps it whole)."""

from __future__ import annotations

import textwrap

from ..results import DriftResult
from .text import one_line


def _cut(text: str, room: int) -> str:
    text = one_line(text)
    return text if len(text) <= room else text[: room - 1] + "…"


def table(result: DriftResult, width: int = 120) -> str:
    # the source column fits its longest segment ("broker-a · claim_form · verifier 3"), within reason
    room = max(20, min(max((len(one_line(e.segment)) for e in result.series), default=0), width - 50, 40))
    head = f"{'source':<{room}} {'window':<10} {'runs':>5} {'attempts':>8} {'pass':>5}  first failing test"
    lines = [head.rstrip()]
    for entry in result.series:
        first = entry.first_failing_test
        name = _cut(first.top or "", max(8, min(40, width - 39 - room)))  # the line fits the width
        top = f"{name} {first.top_share:.0%}" if first.top and first.top_share is not None else "-"
        lines.append(f"{_cut(entry.segment, room):<{room}} {entry.window:<10} {entry.runs:>5} "
                     f"{entry.mean_attempts:>8.2f} {entry.pass_rate:>5.0%}  {top}")
    lines += alerts(result, width).rstrip("\n").split("\n")
    if result.runs_without_time:
        lines.append(f"{result.runs_without_time} runs have no time (run.started_at or timestamp_start) and are left out")
    return "\n".join(lines) + "\n"


def alerts(result: DriftResult, width: int = 120) -> str:
    """Only the alerts (``drift -q``), wrapped to the width; "no alert" when there is none."""
    lines = [line for a in result.alerts
             for line in textwrap.wrap(f"ALERT {one_line(a.message, 300)}", width=width, subsequent_indent="      ")]
    return "\n".join(lines or ["no alert"]) + "\n"


def markdown(result: DriftResult, width: int = 120) -> str:
    return "```\n" + table(result, width) + "```\n"
