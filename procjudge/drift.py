"""Drift: attempt count per source and window, the earliest signal of an upstream change.

From "More attempts means more search for outputs that satisfy the check": a form redesign at one
broker moved mean attempts from 1.1 to 2.6 in four days while the pass rate stayed flat, because
the loop's job is to keep the pass rate flat. So, per source (``run.source``) and window (a day
or an ISO week of ``run.started_at``, else the first iteration's ``timestamp_start``): the runs,
mean attempts, the pass rate, the share of each finding, and the mix of the first failing test.
Two alerts: mean attempts above the source's baseline (the mean of up to ``baseline_windows``
windows before, 3 by default) by more than the threshold (0.5), at the window where the shift
begins, so that 1.1 -> 2.6 over four daily windows alerts although no day rises by 0.5 over the day
before; and the first-failing-test mix collapsing onto one test (the top test's share reaching
``collapse``, 0.6 by default, from below it: 71% on one constraint in the chapter).

Where runs carry ``run.doc_type`` or ``run.verifier_version`` (the chapter's other two tags), each
source is segmented by them: a segment has its own windows and its own baseline, so a shift on one
kind of document is not averaged away by the others, and a new verifier version starts a new
series instead of reading as drift.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .detectors import ALL
from .results import DriftAlert, DriftResult, DriftWindow, FirstFailing, Row

SCHEMA = "procjudge.drift/1"
NO_SOURCE = "(none)"


def window_of(stamp: str, window: str) -> str | None:
    """``2026-03-27`` (day) or ``2026-W13`` (week) for an ISO 8601 time; None when unreadable."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    if window == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return moment.date().isoformat()


# the findings whose share each window reports: the rules declared ``tracked``, in the catalogue's order
FINDINGS_TRACKED = tuple(det.id for det in ALL if det.tracked)


def drift(rows: list[Row], window: str = "day", threshold: float = 0.5, collapse: float = 0.6,
          baseline_windows: int = 3, segment_by: tuple[str, ...] = ("doc_type", "verifier_version")) -> DriftResult:
    """Per source and window, the figures and the alerts (see the module docstring)."""
    groups: dict[tuple[str, str, str, str], list[Row]] = {}
    untimed = 0
    for row in rows:
        key = window_of(row.started_at or "", window)
        if key is None:
            untimed += 1
            continue
        doc_type = row.doc_type if "doc_type" in segment_by else ""
        verifier = row.verifier_version if "verifier_version" in segment_by else ""
        groups.setdefault((row.source or NO_SOURCE, doc_type, verifier, key), []).append(row)
    series: list[DriftWindow] = []
    alerts: list[DriftAlert] = []
    history: dict[tuple[str, str, str], list[DriftWindow]] = {}
    shifted: set[tuple[str, str, str]] = set()  # segments whose last window was above its baseline
    for (source, doc_type, verifier, key) in sorted(groups):
        entry, failing_runs = _window(source, doc_type, verifier, key, groups[(source, doc_type, verifier, key)])
        earlier = history.setdefault((source, doc_type, verifier), [])
        if earlier:
            alerts += _alerts(earlier, entry, threshold, collapse, failing_runs, baseline_windows, shifted)
        earlier.append(entry)
        series.append(entry)
    return DriftResult(schema=SCHEMA, window=window, threshold=threshold, collapse=collapse,
                       runs=len(rows), runs_without_time=untimed, series=series, alerts=alerts)


def _window(source: str, doc_type: str, verifier: str, key: str, members: list[Row]) -> tuple[DriftWindow, int]:
    """One segment's figures over one window, and how many of its runs name a first failing test."""
    n = len(members)
    firsts: dict[str, int] = {}
    for row in members:
        if row.first_failing_test:
            firsts[row.first_failing_test] = firsts.get(row.first_failing_test, 0) + 1
    failing_runs = sum(firsts.values())
    top = max(firsts.items(), key=lambda kv: (kv[1], kv[0])) if firsts else None
    return DriftWindow(
        source=source, window=key, runs=n, doc_type=doc_type or None, verifier_version=verifier or None,
        mean_attempts=round(sum(r.iterations_used for r in members) / n, 4),
        pass_rate=round(sum(1 for r in members if r.outcome == "passed") / n, 4),
        finding_share={f: round(sum(1 for r in members if f in (r.items or ())) / n, 4)
                       for f in FINDINGS_TRACKED if any(f in (r.items or ()) for r in members)},
        first_failing_test=FirstFailing(top=top[0] if top else None,
                                        top_share=round(top[1] / failing_runs, 4) if top else None,
                                        distinct=len(firsts)),
    ), failing_runs


def _alerts(earlier: list[DriftWindow], entry: DriftWindow, threshold: float, collapse: float, failing_runs: int,
            baseline_windows: int, shifted: set[tuple[str, str, str]]) -> list[DriftAlert]:
    """The alerts of one window of a segment: mean attempts above the baseline of the windows before
    (where the shift begins: not again while the window before was above its own baseline too;
    ``shifted`` holds those segments), and the first failing tests collapsing onto one."""
    key = entry.window
    name = entry.segment
    which = (entry.source, entry.doc_type or "", entry.verifier_version or "")
    before = earlier[-1]
    alerts = []
    base = earlier[-baseline_windows:]
    baseline = sum(w.mean_attempts for w in base) / len(base)
    rise = entry.mean_attempts - baseline
    ongoing = which in shifted
    if rise > threshold:
        shifted.add(which)
    else:
        shifted.discard(which)
    if rise > threshold and not ongoing:
        since = base[0].window if len(base) == 1 else f"{base[0].window}..{base[-1].window}"
        alerts.append(DriftAlert(source=entry.source, doc_type=entry.doc_type, verifier_version=entry.verifier_version,
                                 window=key, kind="attempts",
                                 message=f"{name}: mean attempts {baseline:.2f} ({since}) -> {entry.mean_attempts:.2f} "
                                         f"in {key} (+{rise:.2f} > {threshold:g}); pass rate "
                                         f"{before.pass_rate:.0%} -> {entry.pass_rate:.0%}"))
    was = before.first_failing_test.top_share
    now = entry.first_failing_test.top_share
    if now is not None and now >= collapse and (was is None or was < collapse) and failing_runs >= 3:
        alerts.append(DriftAlert(source=entry.source, doc_type=entry.doc_type, verifier_version=entry.verifier_version,
                                 window=key, kind="first_failing_test",
                                 message=f"{name}: {now:.0%} of first failures in {key} are "
                                         f"{entry.first_failing_test.top} (was {was or 0:.0%} on its top test)"))
    return alerts
