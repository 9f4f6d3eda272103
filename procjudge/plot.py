"""Pictures for ``procjudge compare --plot FILE`` (PNG or SVG, by the file's extension).

Runs: the two trajectories on one chart.  Folders: the two distributions of process scores and
the anti-pattern frequencies side by side.  matplotlib is an optional extra (``procjudge[plot]``),
imported only here, with the non-interactive Agg backend.
"""

from __future__ import annotations

from typing import Any

from .results import Comparison, RunsComparison


class PlotError(Exception):
    """The picture could not be drawn (matplotlib missing, or an unsupported file type)."""


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'procjudge[plot]'") from None
    return plt


def plot(result: Comparison, path: str) -> None:
    """Draw the comparison to ``path`` (.png or .svg)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix not in ("png", "svg"):
        raise PlotError(f"--plot {path}: the file must end in .png or .svg")
    plt = _pyplot()
    if isinstance(result, RunsComparison):
        figure, axis = plt.subplots(figsize=(7, 4))
        for side, verdict, color in (("A", result.a, "#1f77b4"), ("B", result.b, "#d62728")):
            axis.plot(range(len(verdict.trajectory)), verdict.trajectory, marker="o", color=color,
                      label=f"{side} {verdict.run.id} (process {verdict.process_score:+g}, {verdict.tier})")
        axis.set_xlabel("iteration")
        axis.set_ylabel("score")
        both = [*result.a.trajectory, *result.b.trajectory]
        axis.set_ylim(min(0, *both), max(100, *both) + 2)
        axis.set_xticks(range(max(len(result.a.trajectory), len(result.b.trajectory))))
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize=8)
        axis.set_title("score trajectories")
    else:
        figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        scores_a = [pair.a.process_score for pair in result.rows]
        scores_b = [pair.b.process_score for pair in result.rows]
        bins = list(range(-30, 25, 5))
        left.hist([scores_a, scores_b], bins=bins, label=[f"A {result.a.label}", f"B {result.b.label}"],
                  color=["#1f77b4", "#d62728"])
        left.set_xlabel("process score (paired runs)")
        left.set_ylabel("runs")
        left.legend(fontsize=8)
        left.set_title("process score distributions")
        names = sorted(set(result.a.anti_pattern_share) | set(result.b.anti_pattern_share))
        positions = range(len(names))
        share_a = [result.a.anti_pattern_share.get(n, 0) for n in names]
        share_b = [result.b.anti_pattern_share.get(n, 0) for n in names]
        right.barh([p - 0.2 for p in positions], share_a, height=0.4, color="#1f77b4", label="A")
        right.barh([p + 0.2 for p in positions], share_b, height=0.4, color="#d62728", label="B")
        right.set_yticks(list(positions))
        right.set_yticklabels(names or [], fontsize=8)
        right.set_xlabel("share of runs")
        right.set_xlim(0, 1)
        right.legend(fontsize=8)
        right.set_title("anti-pattern frequencies")
    figure.tight_layout()
    from .safe_io import WriteError, atomic_write

    try:
        with atomic_write(path, mode="wb") as handle:
            figure.savefig(handle, format=suffix, metadata={"Software": None} if suffix == "png" else {"Date": None})
    except WriteError as exc:
        raise PlotError(str(exc)) from None
    finally:
        plt.close(figure)
