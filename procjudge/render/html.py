"""``--format html``: one self-contained page for a run, a batch or a comparison.

The page opens offline from one file: styles, the script and the charts (inline SVG drawn here)
are in it, and its Content-Security-Policy allows nothing else (no network, no other script or
style than the two it carries, by hash). It reads without JavaScript (findings open as
``<details>``, the tables are complete); the script only sorts and filters the batch table and
opens a finding when its chart marker is clicked. Light and dark schemes follow the reader's
setting; printing opens every finding.

Every text from a run goes through Jinja2's autoescaping: these pages are opened by people who
did not write the runs. Templates live in ``procjudge/render/templates``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..diffs import in_header_pair
from ..policy import DEFAULT as DEFAULT_POLICY
from ..policy import Limits
from ..results import DIFF_MAX_LINES, BatchReport, Judged, RunDetail, most_different, worst_first
from ..verdict import Item, Verdict

DETAIL_CAP = int(os.environ.get("PROCJUDGE_HTML_DETAIL", "200"))  # runs of a batch shown with their detail
DIFF_FOLD_LINES = 200  # a longer diff is folded, and shown without colouring past this many lines
CHART_W, CHART_H, PAD = 860, 220, 34


# --------------------------------------------------------------------------- charts


@dataclass
class Marker:
    x: float
    y: float
    label: str
    href: str
    kind: str  # "gain", "loss", "note"


@dataclass
class Chart:
    """A score trajectory as SVG coordinates: the line, a dot per iteration, and a marker per
    finding at each of its iterations."""

    width: int
    height: int
    line: str
    dots: list[tuple[float, float, str]]
    markers: list[Marker]
    grid: list[tuple[float, str]]
    ticks: list[tuple[float, str]]


def _x(k: int, n: int) -> float:
    return PAD + (CHART_W - 2 * PAD) * (k / (n - 1) if n > 1 else 0.5)


def _y(score: float) -> float:
    clamped = max(0.0, min(100.0, score))
    return CHART_H - PAD + (2 * PAD - CHART_H) * clamped / 100


def trajectory_chart(verdict: Verdict, anchor: str) -> Chart:
    rows = verdict.iterations
    n = len(rows)
    where = {row.iteration: k for k, row in enumerate(rows)}
    dots = [(round(_x(k, n), 1), round(_y(row.score), 1), f"iteration {row.iteration}: {row.score:g}")
            for k, row in enumerate(rows)]
    markers: list[Marker] = []
    stacked: Counter[int] = Counter()
    for index, item in enumerate(verdict.items):
        pointed = item.kind in ("anti_pattern", "rule") and (item.points != 0 or item.kind == "anti_pattern")
        local = item.kind == "trajectory" and item.points < 0 and len(item.iterations) <= 2
        if not (pointed or local):
            continue
        for number in item.iterations:
            if number not in where:
                continue
            k = where[number]
            stacked[k] += 1
            markers.append(Marker(x=round(_x(k, n), 1), y=PAD / 2 + 2 + 9 * (stacked[k] - 1),
                                  label=f"{item.id} {item.points:+g} at iteration {number}: {item.evidence[:200]}",
                                  href=f"#{anchor}-item-{index}", kind=_kind(item)))
    grid = [(round(_y(v), 1), str(v)) for v in (0, 50, 100)]
    ticks = [(round(_x(k, n), 1), str(row.iteration)) for k, row in enumerate(rows)] if n <= 30 else \
        [(round(_x(k, n), 1), str(rows[k].iteration)) for k in range(0, n, max(1, n // 10))]
    line = " ".join(f"{x},{y}" for x, y, _ in dots)
    return Chart(width=CHART_W, height=CHART_H, line=line, dots=dots, markers=markers, grid=grid, ticks=ticks)


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    count: int


@dataclass
class Histogram:
    width: int
    height: int
    bars: list[Bar]
    ticks: list[tuple[float, str]]
    title: str


def histogram(values: Sequence[float] | Mapping[float, int], title: str, bins: int = 12, low: float | None = None,
              high: float | None = None) -> Histogram:
    """Counts of values in equal bins between low and high (the values' own range by default);
    the values may come counted (a mapping of value to how many runs have it)."""
    width, height, pad = 420, 160, 26
    counted = values if isinstance(values, Mapping) else Counter(values)
    if not counted:
        return Histogram(width=width, height=height, bars=[], ticks=[], title=title)
    low = min(counted) if low is None else low
    high = max(counted) if high is None else high
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    step = (high - low) / bins
    counts = [0] * bins
    for value, times in counted.items():
        counts[min(bins - 1, max(0, int((value - low) / step)))] += times
    top = max(counts) or 1
    inner = width - 2 * pad
    bars = []
    for k, count in enumerate(counts):
        h = (height - 2 * pad) * count / top
        start = low + k * step
        bars.append(Bar(x=round(pad + inner * k / bins + 1, 1), y=round(height - pad - h, 1), width=round(inner / bins - 2, 1),
                        height=round(h, 1), label=f"{start:+.3g} to {start + step:+.3g}: {count} runs", count=count))
    ticks = [(round(pad + inner * k / 4, 1), f"{low + (high - low) * k / 4:+.3g}") for k in range(5)]
    return Histogram(width=width, height=height, bars=bars, ticks=ticks, title=title)


# --------------------------------------------------------------------------- a run


def _kind(item: Item) -> str:
    return "gain" if item.points > 0 else "loss" if item.points < 0 else "note"


@dataclass
class DiffLine:
    kind: str  # "add", "del", "hunk", "head", "ctx"
    text: str


@dataclass
class IterationView:
    number: int
    score: float
    delta: float | None
    passed: int | None
    total: int | None
    duration: float | None
    started: str | None
    signals: list[str]
    fixed: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)
    diff: list[DiffLine] = field(default_factory=list)
    diff_lines: int = 0
    diff_cut: bool = False
    fold: bool = False
    files: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    build: str | None = None
    items: list[tuple[int, str, float, str]] = field(default_factory=list)

    @property
    def meta(self) -> list[str]:
        """The line under the iteration's heading: tests, start, duration, actions."""
        parts = [f"{self.passed} of {self.total} tests passed"] if self.total is not None else []
        parts += [f"started {self.started}"] if self.started else []
        parts += [f"{self.duration:g} s"] if self.duration is not None else []
        return parts + ([", ".join(self.actions)] if self.actions else [])


def _diff_lines(text: str) -> list[DiffLine]:
    """Each line of a diff with its kind; a ``--- ``/``+++ `` pair is a header, a lone one a line of
    the hunk (:func:`procjudge.diffs.in_header_pair`)."""
    lines = text.splitlines()[:DIFF_MAX_LINES]
    out = []
    for k, line in enumerate(lines):
        if in_header_pair(lines, k) or line.startswith(("diff --git", "index ")):
            kind = "head"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "ctx"
        out.append(DiffLine(kind=kind, text=line))
    return out


@dataclass
class RunView:
    anchor: str
    verdict: Verdict
    chart: Chart
    items: list[tuple[int, Item, str]]
    iterations: list[IterationView]
    detail: bool  # the run file was read again: diffs and test names are shown
    totals: dict[str, float]


def iteration_shares(item: Item) -> Callable[[int], tuple[float, str]]:
    """What an item shows at each iteration it concerns: its share there and, when the share is
    not all of it, what it is a share of. A signal pays the same at each iteration; an item that
    records its split (``detail.per_iteration``, the monotonic bonus) shows it; any other item
    spanning several iterations shows its total, said to be over them all."""
    count = len(item.iterations)
    split = (item.detail or {}).get("per_iteration") if isinstance(item.detail, dict) else None
    if count <= 1:
        return lambda number: (item.points, "")
    if isinstance(split, dict):
        return lambda number: (float(split.get(str(number), 0.0)), f"of {item.points:+g} over {count} iterations")
    if item.kind == "signal":
        return lambda number: (round(item.points / count, 4), f"of {item.points:+g} over {count} iterations")
    return lambda number: (item.points, f"the run's total, over {count} iterations")


def run_view(verdict: Verdict, detail: RunDetail | None = None, anchor: str = "r0") -> RunView:
    """A run's section of a page: its verdict, and the detail the worker read beside it (diffs,
    test names, actions; without it, the verdict alone)."""
    items = [(k, item, _kind(item)) for k, item in enumerate(verdict.items)]
    per_iteration: dict[int, list[tuple[int, str, float, str]]] = {}
    for k, item in enumerate(verdict.items):
        if item.per_iteration:
            continue
        shares = iteration_shares(item)
        for number in item.iterations:
            share, note = shares(number)
            per_iteration.setdefault(number, []).append((k, item.id, share, note))
    views = []
    details = {d.number: d for d in detail.iterations} if detail is not None else {}
    previous_names: tuple[set[str], set[str]] | None = None
    for row in verdict.iterations:
        view = IterationView(number=row.iteration, score=row.score, delta=row.delta, passed=row.passed, total=row.total,
                             duration=row.duration_seconds, started=None, signals=row.signals,
                             items=per_iteration.get(row.iteration, []))
        one = details.get(row.iteration)
        if one is not None:
            view.started = one.started
            if one.failing is not None and one.passing is not None:
                names = (set(one.failing), set(one.passing))
                view.failing = one.failing
                if previous_names is not None:
                    view.fixed = sorted(previous_names[0] & names[1])
                    view.broken = sorted(previous_names[1] & names[0])
                previous_names = names
            if one.diff:
                view.diff = _diff_lines(one.diff)
                view.diff_lines, view.diff_cut = one.diff_lines, one.diff_lines > DIFF_MAX_LINES
                view.fold = view.diff_lines > DIFF_FOLD_LINES
            view.files, view.summary, view.actions, view.log, view.build = (
                one.files, one.summary, one.actions, one.log, one.build)
        views.append(view)
    totals = {"raw": verdict.raw_process_score, "process": verdict.process_score}
    return RunView(anchor=anchor, verdict=verdict, chart=trajectory_chart(verdict, anchor), items=items, iterations=views,
                   detail=detail is not None, totals=totals)


# --------------------------------------------------------------------------- the page


def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
    from markupsafe import Markup

    from .text import page_text

    # every value a template writes passes here and is escaped: control and bidirectional
    # characters from input are shown as escapes (a run named invoice\u202efdp.exe does not read
    # as invoiceexe.pdf, an ESC byte never reaches a terminal showing the page), and no line of
    # the page begins with "::" (a CI runner's command)
    env = Environment(loader=PackageLoader("procjudge", "render/templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      finalize=lambda v: Markup(page_text(v)) if isinstance(v, str) and not isinstance(v, Markup) else v)
    env.filters["signed"] = lambda v: "" if v is None else f"{v:+g}"
    env.filters["num"] = lambda v: "" if v is None else f"{v:g}"
    env.filters["points"] = lambda v: "" if v is None else "0" if v == 0 else f"{v:+g}"
    env.filters["fixed"] = lambda v, digits=1, sign=False: "-" if v is None else f"{v:{'+' if sign else ''}.{digits}f}"
    env.filters["iters"] = lambda values: ", ".join(str(v) for v in values) or "-"
    env.filters["value"] = lambda v: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)[:1000]
    env.filters["slug"] = lambda text: re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-") or "x"
    return env


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def page(template: str, title: str, **context: Any) -> str:
    """A whole page: the template's body inside the shell, with the CSP naming the inline style
    and script by their hashes."""
    from markupsafe import Markup

    env = _environment()
    style = env.loader.get_source(env, "style.css")[0]
    script = env.loader.get_source(env, "script.js")[0]
    if "</" in style or "</" in script:
        raise ValueError("an inline style or script may not contain '</'")
    policy = (f"default-src 'none'; style-src '{_hash(style)}'; script-src '{_hash(script)}'; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    # The style and the script are this package's own files, inserted verbatim (their hashes are
    # in the policy); everything else the templates print is escaped.
    text: str = env.get_template(template).render(title=title, style=Markup(style), script=Markup(script),
                                                  policy=policy, **context)
    return text


def score(verdict: Verdict, detail: RunDetail | None = None) -> str:
    """``procjudge score --format html``."""
    return page("run.html", f"procjudge: {verdict.run.id}", run=run_view(verdict, detail))


# --------------------------------------------------------------------------- a batch


def _agent_rows(summary: Any) -> list[dict[str, Any]]:
    return [{"agent": a.agent, "runs": a.runs, "mean": a.mean_process_score, "median": a.median_process_score,
             "final": a.mean_final_score, "iterations": a.mean_iterations_used,
             "tiers": ", ".join(f"{t} {n}" for t, n in sorted(a.tiers.items(), key=lambda x: -x[1])),
             "shares": ", ".join(f"{k} {v:.0%}" for k, v in sorted(a.anti_pattern_share.items(), key=lambda x: -x[1])[:5])}
            for a in summary.agents]


def _shares(counts: Counter[str], total: int) -> list[tuple[str, int, float, float]]:
    """(finding, runs with it, share, bar width) over ``total`` runs, most common first, from how
    many runs have each finding."""
    total = total or 1
    top = max(counts.values(), default=1)
    return [(name, n, n / total, round(300 * n / top, 1)) for name, n in counts.most_common(12)]


def costliest(verdict: Verdict, count: int = 3) -> list[tuple[str, float]]:
    """The items that cost a run the most (points summed per id), worst first."""
    lost: dict[str, float] = {}
    for item in verdict.items:
        if item.points < 0:
            lost[item.id] = lost.get(item.id, 0.0) + item.points
    return sorted(lost.items(), key=lambda pair: (pair[1], pair[0]))[:count]


def _keep_worst(kept: list[Any], entry: tuple[Any, ...], cap: int) -> None:
    """Keep ``entry`` among at most about twice ``cap`` entries, ordered on their first two fields
    (:func:`worst_first`'s key, then arrival): cut back to the ``cap`` worst whenever it doubles."""
    if cap <= 0:
        return
    kept.append(entry)
    if len(kept) >= 2 * cap:
        kept.sort(key=lambda e: e[:2])
        del kept[cap:]


class HtmlReporter:
    """The batch page: runs stream in; the table lists the worst ``limits.rows_listed`` runs (a
    failed gate, then an accusation, then the lowest score), each with the items that cost it the
    most, and counts the rest; the ``DETAIL_CAP`` worst keep their verdict for a detailed section.
    Both are bounded lists and the charts read running counts, so memory stays flat however many
    runs stream past."""

    needs_lines = False
    needs_verdict = True  # the detailed runs, and the items that cost each run the most
    needs_detail = True  # and what the page shows of them beyond the verdict

    def __init__(self, quiet: bool = False, limits: Limits = DEFAULT_POLICY.limits) -> None:
        # --quiet is for the terminal: a page written to a file keeps every section it promises
        self.listed = limits.rows_listed
        self.count = 0
        self.listing: list[tuple[tuple[bool, bool, float, str], int, Any, bool, list[tuple[str, float]]]] = []
        self.kept: list[tuple[tuple[bool, bool, float, str], int, Any, Any]] = []  # the worst, for their sections
        self.scores: Counter[float] = Counter()
        self.findings: Counter[str] = Counter()
        self.agents: set[str] = set()
        self.tiers: set[str] = set()

    def start(self) -> str:
        return ""

    def each(self, result: Any, reasons: list[str] | None) -> str:
        row = result.row
        if row is None:
            return ""
        k = self.count
        self.count += 1
        self.scores[row.process_score] += 1
        self.findings.update(set(row.anti_patterns))
        self.agents.add(row.agent)
        self.tiers.add(row.tier)
        verdict = result.verdict()
        rank = worst_first(row, bool(reasons))
        listed = (rank, k, row, bool(reasons), costliest(verdict) if verdict is not None else [])
        _keep_worst(self.listing, listed, self.listed)
        if verdict is not None:
            _keep_worst(self.kept, (rank, k, verdict, result.detail), DETAIL_CAP)
        return ""

    def finish(self, report: BatchReport) -> str:
        summary = report.summary
        kept = sorted(self.kept, key=lambda e: e[:2])[:DETAIL_CAP]  # worst first
        self.detailed = [run_view(verdict, detail, anchor=f"run-{k}") for _, k, verdict, detail in kept]
        detailed = {view.anchor for view in self.detailed}
        listing = sorted(self.listing, key=lambda e: e[:2])[:self.listed]
        table = [{"k": k, "anchor": f"run-{k}" if f"run-{k}" in detailed else None, "row": row,
                  "failed": failed, "costs": costs} for _, k, row, failed, costs in listing]
        return page("batch.html", "procjudge: batch", summary=summary, agents=_agent_rows(summary), table=table,
                    agent_names=sorted(self.agents), tier_names=sorted(self.tiers),
                    finding_names=sorted(self.findings),
                    histogram=histogram(self.scores, "process score, all runs"), shares=_shares(self.findings, self.count),
                    runs=self.detailed, cap=DETAIL_CAP, left_out=sum(1 for t in table if t["anchor"] is None),
                    not_listed=self.count - len(table),
                    errors=report.errors[:200], error_count=report.summary.errors)


# --------------------------------------------------------------------------- a comparison


def _judged_view(judged: dict[str, Judged], path: str, anchor: str) -> RunView | None:
    one = judged.get(path)
    return run_view(one.verdict, one.detail, anchor=anchor) if one is not None else None


def compare(result: Any, judged: dict[str, Judged] | None = None) -> str:
    """``procjudge compare --format html``: two runs side by side, or two folders' distributions,
    the paired table and the pairs that differ most, each opening both runs side by side (the runs
    ``judged`` holds by path, with their detail; without them, their summaries)."""
    judged = judged or {}
    if result.mode == "runs":
        def detail_of(verdict: Verdict) -> RunDetail | None:
            one = judged.get(verdict.run.path)
            return one.detail if one is not None else None

        return page("compare_runs.html", "procjudge: compare", result=result, a=run_view(result.a, detail_of(result.a),
                                                                                         anchor="a"),
                    b=run_view(result.b, detail_of(result.b), anchor="b"))
    pairs = list(result.rows)
    scores_a = [p.a.process_score for p in pairs]
    scores_b = [p.b.process_score for p in pairs]
    everything = scores_a + scores_b
    low, high = (min(everything), max(everything)) if everything else (0.0, 1.0)
    most = most_different(result)
    detail = {k: (_judged_view(judged, pair.a.path, f"pair-{k}-a"), _judged_view(judged, pair.b.path, f"pair-{k}-b"))
              for k, pair in enumerate(most)}
    return page("compare_folders.html", "procjudge: compare", result=result, pairs=pairs, most=most, detail=detail,
                histogram_a=histogram(scores_a, f"A: {result.a.label}", low=low, high=high),
                histogram_b=histogram(scores_b, f"B: {result.b.label}", low=low, high=high),
                ci=result.paired.ci95)
