"""compare output: table (with a terminal chart), markdown, and the text chart itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ..numbers import fmt_num as num
from .fit import Fitted, left_ellipsis, right_ellipsis, spare, whole
from .markdown import cell
from .text import literal, shares, signed, sparkline

if TYPE_CHECKING:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from ..results import Comparison, Pair, Side

A_MARK, B_MARK, BOTH_MARK = "A", "B", "*"



def below_best(side: Side) -> str:
    """'12% (-34 points)': the share of runs ending below their best, and the points lost so."""
    if side.share_below_best is None:
        return "-"
    return f"{side.share_below_best:.0%} ({signed(-side.points_lost_below_best)} points)"


def trajectory_chart(a: list[float], b: list[float], height: int = 10, step: int = 6) -> list[str]:
    """Both trajectories on one character grid (0..100 up the side, iterations along the bottom);
    ``A`` and ``B`` mark each score, ``*`` where they meet."""
    width = max(len(a), len(b))
    top = max(100.0, *a, *b)
    bottom = min(0.0, *a, *b)
    span = top - bottom or 1.0
    grid = [[" "] * (width * step) for _ in range(height + 1)]

    def place(values: list[float], mark: str) -> None:
        for k, value in enumerate(values):
            row = height - round((value - bottom) / span * height)
            col = k * step + step // 2
            grid[row][col] = BOTH_MARK if grid[row][col] not in (" ", mark) else mark

    place(a, A_MARK)
    place(b, B_MARK)
    lines = []
    for row in range(height + 1):
        label = bottom + span * (height - row) / height
        tick = f"{label:5.0f} ┤" if row % (height // 2 or 1) == 0 else "      │"
        lines.append(tick + "".join(grid[row]).rstrip())
    lines.append("      └" + "".join(f"{'it ' + str(k):^{step}}" for k in range(width)))
    return lines


def histogram_chart(a: list[float], b: list[float], low: float = -30, high: float = 20, step: float = 5,
                    width: int = 30) -> list[str]:
    """Two distributions of process scores as paired horizontal bars per bin."""
    edges = [low + step * k for k in range(int((high - low) / step) + 1)]
    counts = []
    for left in edges[:-1]:
        right = left + step
        last = right == edges[-1]
        counts.append((left, right,
                       sum(1 for v in a if left <= v < right or (last and v == right)),
                       sum(1 for v in b if left <= v < right or (last and v == right))))
    peak = max([1] + [max(ca, cb) for _, _, ca, cb in counts])
    lines = []
    for left, right, ca, cb in counts:
        bar_a = "█" * round(ca / peak * width)
        bar_b = "█" * round(cb / peak * width)
        lines.append(f"{num(left):>4}..{num(right):<4} A {bar_a:<{width}} {ca:>4}")
        lines.append(f"{'':10} B {bar_b:<{width}} {cb:>4}")
    return lines


def table(result: Comparison) -> Group:
    """A rich renderable for either mode."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []
    if result.mode == "runs":
        a, b = result.a, result.b
        head = Text()
        for label, verdict, style in (("A", a, "cyan"), ("B", b, "magenta")):
            head.append(f"{label} ", style=f"bold {style}")
            head.append(literal(verdict.run.id), style="bold")
            head.append(f"  {sparkline(verdict.trajectory)} ", style=style)
            head.append(" → ".join(num(s) for s in verdict.trajectory) + "\n")
        parts += [head, Text("\n".join(trajectory_chart(a.trajectory, b.trajectory))), Text("")]
        rows = Table(show_edge=False, pad_edge=False, header_style="bold")
        columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
            ("item", "left"), ("kind", "left"), ("A", "right"), ("B", "right"), ("B − A", "right"))
        for column, justify in columns:
            rows.add_column(column, justify=justify, no_wrap=True)
        for item in result.rows:
            if item.kind == "signal" and not item.a and not item.b:
                continue
            rows.add_row(item.id, item.kind, "-" if item.a is None else signed(item.a),
                         "-" if item.b is None else signed(item.b), signed(item.difference))
        rows.add_row("process score", "", signed(a.process_score), signed(b.process_score), signed(result.difference),
                     style="bold")
        parts += [rows, Text("")]
        for label, verdict in (("A", a), ("B", b)):
            parts.append(Text(f"{label}: pattern {verdict.pattern}, tier {verdict.tier}", style="dim"))
        parts.append(Text(verdict_line(result), style="bold"))
    else:
        sides = (("A", result.a), ("B", result.b))
        rows_ = result.rows
        parts += [Fitted(lambda: _sides_wide(sides), lambda width: _sides_narrow(sides, width),
                         identifiers=[literal(side.label) for _, side in sides]), Text("")]
        pairs = Fitted(lambda: _pairs_wide(rows_), lambda width: _pairs_narrow(rows_, width),
                       identifiers=[literal(pair.challenge) for pair in rows_])
        parts += [pairs, Text(""), Text("process score distributions (A above B in each bin)", style="dim"),
                  Text("\n".join(histogram_chart([p.a.process_score for p in result.rows],
                                                 [p.b.process_score for p in result.rows]))), Text("")]
        for missing, label in ((result.unmatched.a, "A"), (result.unmatched.b, "B")):
            for run in missing:
                parts.append(Text(f"unmatched in {label}: {literal(run.path)} (key {literal(run.key)})", style="yellow"))
        parts.append(Text(verdict_line(result), style="bold"))
    return Group(*parts)


def _sides_wide(sides: tuple[tuple[str, Side], ...]) -> Table:
    from rich.table import Table
    from rich.text import Text

    summary = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("", "runs", "mean process", "median process", "mean final", "mean iterations", "below best",
                   "anti-patterns (share of runs)"):  # off a terminal the agent's name is never folded
        summary.add_column(column, overflow="fold", no_wrap=not column and whole())
    for label, side in sides:
        summary.add_row(Text(f"{label} {literal(side.label)}"), str(side.runs),
                        signed(side.mean_process_score or 0), signed(side.median_process_score or 0),
                        num(round(side.mean_final_score or 0, 1)), num(round(side.mean_iterations_used or 0, 2)),
                        below_best(side), Text(shares(side.anti_pattern_share) + _cost(side).replace("\n  ", "; ")))
    return summary


def _sides_narrow(sides: tuple[tuple[str, Side], ...], width: int) -> Text:
    """Below 100 columns: each side's figures on a line, below-best and anti-patterns under it."""
    from rich.text import Text

    text = Text()
    for k, (label, side) in enumerate(sides):
        if k:
            text.append("\n")
        text.append(f"{label} ", style="bold")
        text.append(right_ellipsis(literal(side.label), max(12, width - 60)), style="bold")
        text.append(f"  {side.runs} runs  mean {signed(side.mean_process_score or 0)}  median "
                    f"{signed(side.median_process_score or 0)}")
        text.append(f"\n  final {num(round(side.mean_final_score or 0, 1))}, iterations "
                    f"{num(round(side.mean_iterations_used or 0, 2))}, below best {below_best(side)}", style="dim")
        text.append(f"\n  anti-patterns: {shares(side.anti_pattern_share)}", style="dim")
        text.append(_cost(side))
    return text


def _cost(side: Side) -> str:
    """'\n  cost $1.20, $0.60 a resolved run' where the side's logs say what its runs cost."""
    if side.cost_usd is None:
        return ""
    resolved = f", ${side.cost_per_resolved_run:,.2f} a resolved run" if side.cost_per_resolved_run is not None else ""
    return f"\n  cost ${side.cost_usd:,.2f}{resolved}"


def _pairs_wide(rows: list[Pair]) -> Table:
    from rich.table import Table
    from rich.text import Text

    pairs = Table(show_edge=False, pad_edge=False, header_style="bold", title="paired by challenge", title_justify="left",
                  title_style="dim")
    pair_columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("challenge", "left"), ("A", "right"), ("B", "right"), ("B − A", "right"), ("A tier", "left"), ("B tier", "left"))
    for column, justify in pair_columns:  # off a terminal a challenge is never folded into pieces
        pairs.add_column(column, justify=justify, overflow="fold", no_wrap=column == "challenge" and whole())
    for pair in rows:
        pairs.add_row(Text(literal(pair.challenge)), signed(pair.a.process_score), signed(pair.b.process_score),
                      signed(pair.difference), pair.a.tier, pair.b.tier)
    return pairs


def _pairs_narrow(rows: list[Pair], width: int) -> Table:
    """Below 100 columns: the challenge shortened from the left and the three scores; the tiers
    are in the wide layout and the JSON."""
    from rich.table import Table
    from rich.text import Text

    cells = [[signed(p.a.process_score) for p in rows] + ["A"], [signed(p.b.process_score) for p in rows] + ["B"],
             [signed(p.difference) for p in rows] + ["B − A"], [p.winner for p in rows] + ["winner"]]
    room = spare(width, cells)
    pairs = Table(show_edge=False, pad_edge=False, header_style="bold", title="paired by challenge", title_justify="left",
                  title_style="dim")
    pairs.add_column("challenge", no_wrap=True, overflow="ellipsis", max_width=None if whole() else room)
    for column in ("A", "B", "B − A"):
        pairs.add_column(column, justify="right", no_wrap=True)
    pairs.add_column("winner", no_wrap=True)
    for pair in rows:
        pairs.add_row(Text(left_ellipsis(literal(pair.challenge), room)), signed(pair.a.process_score),
                      signed(pair.b.process_score), signed(pair.difference),
                      pair.winner.upper() if pair.winner != "tie" else "tie")
    return pairs


def verdict_line(result: Comparison) -> str:
    """The winner in one sentence."""
    if result.mode == "runs":
        if result.winner == "tie":
            return f"tie: both score {signed(result.a.process_score)}"
        return (f"winner: {result.winner.upper()} by {num(abs(result.difference))} points; decided by "
                f"{', '.join(result.deciding) or 'the totals'}")
    paired = result.paired
    interval = paired.ci95
    shown = f"[{signed(interval[0])}, {signed(interval[1])}]" if interval else "n/a (fewer than 2 pairs)"
    mean = "n/a" if paired.mean_difference is None else signed(paired.mean_difference)
    if result.winner == "tie":
        head = "tie"
    elif not result.clear:
        head = f"no clear winner ({result.winner.upper()} ahead on average, but the interval includes 0)"
    else:
        head = f"winner: {result.winner.upper()}"
    return (f"{head} · {paired.pairs} pairs: B wins {paired.b_wins}, loses {paired.b_losses}, ties {paired.ties} · "
            f"mean paired difference B − A {mean}, 95% bootstrap interval {shown} (seed {paired.seed})")


def markdown(result: Comparison) -> str:
    lines = ["### procjudge compare", ""]
    if result.mode == "runs":
        a, b = result.a, result.b
        lines += [f"- **A** {cell(a.run.id)}: `{sparkline(a.trajectory)}` {' → '.join(num(s) for s in a.trajectory)}",
                  f"- **B** {cell(b.run.id)}: `{sparkline(b.trajectory)}` {' → '.join(num(s) for s in b.trajectory)}", "",
                  "| item | kind | A | B | B − A |", "|---|---|---:|---:|---:|"]
        for item in result.rows:
            lines.append(f"| {item.id} | {item.kind} | {'-' if item.a is None else signed(item.a)} | "
                         f"{'-' if item.b is None else signed(item.b)} | {signed(item.difference)} |")
        lines += [(f"| **process score** | | **{signed(a.process_score)}** | **{signed(b.process_score)}** | "
                   f"**{signed(result.difference)}** |"),
                  f"| pattern | | {a.pattern} | {b.pattern} | |", f"| tier | | {a.tier} | {b.tier} | |", ""]
    else:
        lines += ["| | runs | mean process | median process | mean final | below best | anti-patterns |",
                  "|---|---:|---:|---:|---:|---|---|"]
        for label, side in (("A", result.a), ("B", result.b)):
            lines.append(f"| {label} {cell(side.label)} | {side.runs} | {signed(side.mean_process_score or 0)} | "
                         f"{signed(side.median_process_score or 0)} | {num(round(side.mean_final_score or 0, 1))} | "
                         f"{below_best(side)} | {shares(side.anti_pattern_share)} |")
        lines += ["", "| challenge | A | B | B − A |", "|---|---:|---:|---:|"]
        for pair in result.rows[:100]:
            lines.append(f"| {cell(pair.challenge)} | {signed(pair.a.process_score)} | {signed(pair.b.process_score)} | "
                         f"{signed(pair.difference)} |")
        if len(result.rows) > 100:
            lines.append(f"\n{len(result.rows) - 100} more pairs not shown.")
        if result.unmatched.a or result.unmatched.b:
            lines += ["", f"Unmatched: {len(result.unmatched.a)} in A, {len(result.unmatched.b)} in B."]
        lines.append("")
    lines.append(f"**{cell(verdict_line(result))}**")
    return "\n".join(lines) + "\n"
