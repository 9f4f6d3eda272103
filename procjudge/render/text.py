"""Making text from input files safe to show: no terminal control sequences, no markup."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..numbers import fmt_num as num

if TYPE_CHECKING:
    from ..results import LoopSummary
    from ..verdict import Aggregate, HeldBack, NotChecked, Verdict

# Control characters (newlines included: text from input is shown on one line, so that no name
# starts a line of its own, such as a CI workflow command) and the Unicode bidirectional controls
# (a run named ``invoice\u202efdp.exe`` would read as ``invoiceexe.pdf``).
_BIDI = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
BIDI = re.compile(rf"[{_BIDI}]")


def bidi_visible(text: str) -> str:
    """The bidirectional controls of ``text`` shown as escapes (``\\u202e``); the rest as it is."""
    return BIDI.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


_PAGE_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")  # all but tab and newline


def page_text(text: str) -> str:
    """Text from input as an HTML page writes it, escaped: control characters (an ESC, a carriage
    return) and bidirectional controls shown as visible escapes as the other formats show them;
    tabs and line breaks kept (an evidence block keeps its lines), but a line never begins with
    ``::``, which a CI runner reading the page on standard output would take for a command."""
    from markupsafe import escape

    shown = _PAGE_CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
    return str(escape(shown)).replace("\n:", "\n&#58;")


def literal(value: object, limit: int = 2000) -> str:
    """A string safe for a terminal, on one line: control characters (newlines too) and
    bidirectional controls become visible escapes (``\\x1b``, ``\\n``, ``\\u202e``);
    over-long text is cut with a note of how much was left out."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit:,} more characters]"
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


Text = str | Callable[[], str]  # a text, or how to write it when a report reads it


def written(text: Text) -> str:
    """A text, written now if it was given as a function (a rule's evidence, a run's placement)."""
    return text if isinstance(text, str) else text()


def one_line(value: object, limit: int = 2000) -> str:
    text = str(value)
    if len(text) <= limit and _CONTROL.search(text) is None:  # nothing to replace or escape (the common case)
        return text
    return literal(text.replace("\r", " ").replace("\n", " "), limit)


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], top: float = 100.0) -> str:
    """Scores 0..top as block characters, one per iteration."""
    out = []
    for value in values:
        share = min(1.0, max(0.0, value / top if top else 0.0))
        out.append(SPARKS[min(len(SPARKS) - 1, int(share * (len(SPARKS) - 1) + 0.5))])
    return "".join(out)


def signed(value: float) -> str:
    return ("+" if value > 0 else "") + num(value) if value else "0"


def iterations(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    if not numbers:
        return "-"
    parts, start, prev = [], numbers[0], numbers[0]
    for n in numbers[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}-{prev}" if prev > start + 1 else (f"{start}, {prev}" if prev == start + 1 else str(start)))
        if n is not None:
            start = prev = n
    return ", ".join(parts)


def aggregate_line(aggregate: Aggregate) -> str:
    """The document's aggregate telemetry figures in one line (only those that are known)."""
    parts = []
    if aggregate.improvement_rate is not None:
        parts.append(f"improvement {num(round(aggregate.improvement_rate, 2))}/iteration")
    parts.append(f"regressions {aggregate.regression_count}")
    parts.append(f"wasted {aggregate.wasted_iterations}")
    action, timing = aggregate.action_efficiency, aggregate.time_efficiency
    if action.total_tool_calls is not None:
        parts.append(f"tool calls {action.total_tool_calls}")
    if action.tool_calls_per_point_gained is not None:
        parts.append(f"{num(round(action.tool_calls_per_point_gained, 2))} calls/point")
    if action.file_edits_per_test_fixed is not None:
        parts.append(f"{num(round(action.file_edits_per_test_fixed, 2))} edits/test fixed")
    if timing.seconds_per_point_gained is not None:
        parts.append(f"{num(round(timing.seconds_per_point_gained, 1))} s/point")
    if timing.time_distribution:
        parts.append("time " + "/".join(f"{share:.0%}" for share in timing.time_distribution))
    if timing.front_loaded is not None:
        parts.append("front-loaded" if timing.front_loaded else "not front-loaded")
    return ", ".join(parts)


def plural(count: int, word: str) -> str:
    """'1 run', '3 runs'."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def shares(share: dict[str, float]) -> str:
    """{'scope_creep': 0.5} -> 'scope_creep 50%' (or '-')."""
    return ", ".join(f"{name} {value:.0%}" for name, value in share.items()) or "-"


def counts(counted: dict[str, int]) -> str:
    """{'systematic_refinement': 3} -> 'systematic_refinement 3'."""
    return ", ".join(f"{name} {count}" for name, count in counted.items())


def loop_line(verdict: Verdict) -> str:
    """Best-so-far, the gate replay and the attempt risk in one line."""
    attempts = verdict.attempts
    siblings = f", {attempts.siblings_failed} siblings failed" if attempts.siblings_failed is not None else ""
    parts = [(f"best {num(verdict.best_score)} at iteration {verdict.best_iteration}, last {num(verdict.last_score)}"
              f" (final − best {signed(verdict.final_minus_best)})"),
             f"attempts {attempts.count} (bucket {attempts.bucket}{siblings}), {attempts.outcome}"]
    gate = verdict.gate
    if gate.replayed:
        parts.append(f"gate: would return round {gate.returned_round} ({num(gate.gated_final or 0.0)}, "
                     f"{signed(gate.saved or 0.0)} against the actual final); {gate.revisions_offered} offered, "
                     f"{gate.revisions_rejected} rejected")
    else:
        parts.append(f"gate not replayed: {gate.reason or ''}")
    return "; ".join(parts)


def loop_summary(loop: LoopSummary) -> str:
    """The batch's loop-level figures in one line."""
    parts = []
    if loop.share_below_best is not None:
        parts.append(f"ended below their best: {loop.runs_below_best} ({loop.share_below_best:.0%}), "
                     f"{num(round(loop.points_lost_below_best, 1))} points lost")
    if loop.attempt_buckets:
        parts.append("attempts " + ", ".join(f"{k}: {v}" for k, v in loop.attempt_buckets.items()))
    if loop.outcomes:
        parts.append(", ".join(f"{k} {v}" for k, v in loop.outcomes.items()))
    gate = loop.gate
    if gate.replayed_runs:
        rates = ", ".join(f"round {k} {v:.0%}" for k, v in gate.rejection_rate_per_round.items()) or "none offered"
        returned = ", ".join(f"{k} {v:.0%}" for k, v in gate.share_returned_round.items()) or \
            f"1 {gate.share_returned_round_1 or 0:.0%}"
        parts.append(f"gate replayed on {plural(gate.replayed_runs, 'run')}: returned round {returned}; early exit "
                     f"{gate.share_early_exit or 0:.0%} (before any second round {gate.share_first_round_exit or 0:.0%}); "
                     f"rejected {rates}")
    return "; ".join(parts)


def not_checked(entries: list[NotChecked]) -> str:
    """Detectors that could not be evaluated, grouped by reason: 'a, b (reason); c (other)'."""
    by_reason: dict[str, list[str]] = {}
    for entry in entries:
        by_reason.setdefault(entry.reason, []).append(entry.detector)
    return "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())


def held_back_line(held: HeldBack) -> str:
    """The held-back outcome in one line: resolved or not, the counts, the first failing tests."""
    state = "resolved" if held.resolved else "not resolved" if held.resolved is False else "no test ran"
    line = f"{state}: {held.passed}/{held.total} held-back tests pass"
    if held.failing:
        shown = held.failing[:5]
        rest = held.failing_count - len(shown)
        line += f"; failing: {', '.join(shown)}" + (f" (+{rest} more)" if rest > 0 else "")
    return line


def warning_lines(shown: list[tuple[str, str]], total: int) -> list[str]:
    """The warnings for stderr grouped per file (a file's first warning names it, the rest are
    indented under it), one line each, with a count of those left out."""
    lines: list[str] = []
    previous = None
    for path, warning in shown:
        if path != previous:
            lines.append(f"procjudge: warning: {one_line(path, 500)}: {one_line(warning, 500)}")
            previous = path
        else:
            lines.append(f"  {one_line(warning, 500)}")
    if total > len(shown):
        lines.append(f"procjudge: {total - len(shown):,} more warnings not shown (every one is in --format json)")
    return lines


def spreadsheet_safe(value: Any) -> Any:
    """Text on one line (CR and LF would split a row in some readers), control characters
    escaped, and a leading quote where a spreadsheet would run it as a formula (=, +, -, @);
    numbers stay numbers."""
    if not isinstance(value, str):
        return value
    value = one_line(value, 10_000)
    if value.lstrip()[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value
