"""Reports over many runs, each a ``Reporter`` with one lifecycle: ``start``, ``each`` run as the
results stream in, ``finish`` with the finished batch (``results.BatchReport``). The CLI
writes as it goes, so a 100,000-run JSON report never sits in memory, and one scoring pass can
feed several reports at once (``procjudge batch -o json=out.json -o junit=out.xml``). Markdown
and the table need every run first: they render the finished batch's rows at the end."""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
from rich.console import Group
from rich.text import Text

from ..numbers import fmt_num as num
from ..results import AgentSummary, BatchReport, Result, Row, Rule, annotated
from .fit import AtWidth, left_ellipsis, right_ellipsis, whole
from .json import dumps
from .markdown import cell
from .text import (
    bidi_visible,
    counts,
    iterations,
    literal,
    loop_summary,
    one_line,
    plural,
    shares,
    signed,
    spreadsheet_safe,
)

CSV_FIELDS = ["id", "agent", "challenge", "format", "path", "iterations_used", "final_score", "process_score",
              "raw_process_score", "tier", "pattern", "anti_patterns", "gate", "error", "held_back_resolved",
              "held_back_passed", "held_back_total", "best_score", "best_iteration", "final_minus_best", "gated_final",
              "cost_usd", "tokens"]


MARKDOWN_RUN_ROWS = 50


def markdown_report(report: BatchReport, quiet: bool = False) -> Iterator[str]:
    """For a pull-request comment or $GITHUB_STEP_SUMMARY: verdict, per-agent table, the runs that
    failed a gate or scored lowest (at most 50 rows), and every unreadable file."""
    summary = report.summary
    gate = summary.gate
    status = "❌ gate failed" if gate.gate_failed else "✅ gate passed"
    if summary.errors:  # exit 2: the verdict is incomplete, whatever the gate says of the rest
        status = (f"❌ {summary.errors} unreadable file{'s' if summary.errors != 1 else ''} (exit 2)"
                  + (" · gate failed" if gate.gate_failed else ""))
    lines = [f"### procjudge batch: {plural(summary.runs_scored, 'run')} scored · {status}", ""]
    if summary.agents:
        lines += ["| agent | runs | mean process | median process | mean final | tiers | anti-patterns (share of runs) |",
                  "|---|---:|---:|---:|---:|---|---|"]
        for agent in summary.agents:
            tiers = counts(agent.tiers)
            patterns = shares(agent.anti_pattern_share)
            lines.append(f"| {cell(agent.agent)} | {agent.runs} | {signed(agent.mean_process_score)} | "
                         f"{signed(agent.median_process_score)} | {num(round(agent.mean_final_score, 1))} | {tiers} | {patterns} "
                         "|")
        lines.append("")
    shown = report.worst[:MARKDOWN_RUN_ROWS]
    if shown:
        held = any(row.held_back_total is not None for row in shown)
        lines += [f"| run | agent | process | final | tier |{' held-back |' if held else ''} anti-patterns | gate |",
                  f"|---|---|---:|---:|---|{'---:|' if held else ''}---|---|"]
        for row in shown:
            gate_text = cell("; ".join(row.gate_failures)) if row.gate_failures else "pass"
            lines.append(f"| {cell(row.id)} | {cell(row.agent or '-')} | {signed(row.process_score)} | "
                         f"{num(row.final_score)} | {row.tier} |{f' {held_cell(row)} |' if held else ''} "
                         f"{', '.join(row.anti_patterns) or '-'} | {gate_text} |")
        if summary.runs_scored > len(shown):
            lines.append(f"\n{summary.runs_scored - len(shown):,} more runs not shown (failing gates and lowest scores first).")
        lines.append("")
    if summary.runs_scored:
        lines += [f"Loop: {cell(loop_summary(summary.loop), 2000)}", ""]
    if report.errors:
        lines.append("**Unreadable files**")
        lines.append("")
        lines += [f"- `{cell(e.message, 500)}`" for e in report.errors[:100]]
        if summary.errors > 100:
            lines.append(f"- ... and {summary.errors - 100:,} more")
    yield "\n".join(lines).rstrip() + "\n"


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(value: Any) -> str:
    """Text safe in an XML attribute or element: escaped, characters XML 1.0 forbids removed."""
    text = bidi_visible(_XML_BAD.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(value)))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    # in an attribute a raw newline or tab is read back as a space: keep them as character references
    return text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")


def _junit_case(result: Result, reasons: list[str] | None) -> str:
    if result.error is not None:
        return (f'    <testcase classname="procjudge" name="{xml_text(result.path)}" file="{xml_text(result.path)}">\n'
                f'      <error type="unreadable" message="{xml_text(one_line(result.error, 1000))}"/>\n'
                f"    </testcase>")
    row = result.row
    assert row is not None
    props = (f"process score {row.process_score:g}, final {row.final_score:g}, tier {row.tier}, "
             f"pattern {row.pattern}, anti-patterns: {', '.join(row.anti_patterns) or 'none'}")
    body = f'      <system-out>{xml_text(props)}</system-out>\n'
    if reasons:
        body = f'      <failure type="gate" message="{xml_text("; ".join(reasons))}">{xml_text(props)}</failure>\n' + body
    return (f'    <testcase classname="{xml_text(row.agent or "procjudge")}" name="{xml_text(row.id)}" '
            f'file="{xml_text(row.path)}">\n{body}    </testcase>')


def junit_head(total: int, report: BatchReport) -> str:
    """The JUnit document up to its first test case: the totals."""
    failed = report.summary.gate.failed_runs
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="procjudge" tests="{total}" failures="{failed}" errors="{report.summary.errors}">\n'
            f'  <testsuite name="procjudge" tests="{total}" failures="{failed}" errors="{report.summary.errors}">\n')


JUNIT_TAIL = "  </testsuite>\n</testsuites>\n"


def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(value: str) -> str:
    return _gh_data(literal(value)).replace(":", "%3A").replace(",", "%2C")


def relative(path: str, root: str) -> str:
    """A path as CI links it: relative to the project root (forward slashes) when it lies under
    it, else absolute; unchanged without a root."""
    if not root:
        return path
    absolute = os.path.abspath(path)
    try:
        inside = os.path.commonpath([absolute, os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:  # another drive
        inside = False
    return os.path.relpath(absolute, root).replace(os.sep, "/") if inside else absolute


def _github_lines(result: Result, reasons: list[str] | None, root: str = "") -> Iterator[str]:
    where = _gh_property(relative(result.location, root))
    if result.error is not None:
        line = f",line={result.error_line}" if result.error_line else ""
        yield (f"::error file={where}{line},title=procjudge%3A unreadable run file::"
               f"{_gh_data(literal(result.error))}\n")
        return
    for finding in result.findings():
        line = f",line={finding.line}" if finding.line else ""
        title = f"procjudge {finding.id} ({signed(finding.points)})"
        yield (f"::warning file={where}{line},title={_gh_property(title)}::"
               f"{_gh_data(literal(f'iteration {finding.iteration}: {finding.evidence}'))}\n")
    if reasons:
        yield (f"::error file={where},title=procjudge gate::"
               f"{_gh_data(literal((result.row.id if result.row else result.path) + ': ' + '; '.join(reasons)))}\n")


def _github_notice(report: BatchReport) -> str:
    summary = report.summary
    return (f"::notice title=procjudge::{plural(summary.runs_scored, 'run')} scored, {summary.gate.failed_runs} failed the gate, "
            f"{summary.errors} unreadable\n")


def held_cell(row: Row) -> str:
    """The held-back outcome in a few characters: ``3/3`` resolved, ``2/3`` not; ``-`` when none ran."""
    return "-" if row.held_back_total is None else f"{row.held_back_passed}/{row.held_back_total}"


def held_text(row: Row) -> Text:
    return Text(held_cell(row), style="green" if row.held_back_resolved else "red" if row.held_back_resolved is False else "")


TIER_SHORT = {"get_it_right_first_time": "first", "systematic_refinement": "systematic",
              "exploratory_converging": "exploratory", "thrashing_recovering": "recovering",
              "persistent_thrashing": "thrashing", "regression_spiral": "spiral"}
GAP = "  "


def _findings_cell(found: Sequence[str], room: int) -> str:
    """The anti-patterns in ``room`` characters: all of them when they fit, else the first cut
    with an ellipsis and how many more there are (``shotgun_deb… +1``)."""
    joined = ", ".join(found) or "-"
    if len(joined) <= room or len(found) <= 1:
        return right_ellipsis(joined, room)
    more = f" +{len(found) - 1}"
    return right_ellipsis(found[0], room - len(more)) + more


def _cell_style(column: str, row: Row) -> str:
    if column == "gate":
        return "red" if row.gate_failures else "green"
    if column == "held" and row.held_back_resolved is not None:
        return "green" if row.held_back_resolved else "red"
    return ""


def _runs(rows: list[Row], width: int, omitted: int = 0) -> Text:
    """One line per run at any width, the same columns in the same order: the run id (cut from the
    left, so its distinctive end stays), process, final, iterations, tier (short name), the
    held-back outcome where a suite ran, the gate, and the anti-patterns in what room is left (cut
    with an ellipsis, never split mid-word). A legend names the short tiers."""
    held = any(row.held_back_total is not None for row in rows)
    figures = [("process", "right", [signed(r.process_score) for r in rows]),
               ("final", "right", [num(r.final_score) for r in rows]),
               ("it", "right", [str(r.iterations_used) for r in rows]),
               ("tier", "left", [TIER_SHORT.get(r.tier, r.tier) for r in rows]),
               *((("held", "right", [held_cell(r) for r in rows]),) if held else ()),
               ("gate", "left", ["FAIL" if r.gate_failures else "ok" for r in rows])]
    widths = [max([len(name), *(len(c) for c in cells)]) for name, _, cells in figures]
    fixed = sum(widths) + len(GAP) * (len(widths) + 1)
    ids = [literal(r.id) for r in rows]
    longest = max((len(i) for i in ids), default=3)
    room = max(12, longest if whole() else min(longest, width - fixed - 12))
    findings_room = max(0, width - fixed - room)
    if whole():  # off a terminal: every id and finding whole, however long the line
        findings_room = max([len("anti-patterns"), *(len(", ".join(r.anti_patterns)) for r in rows)])
    text = Text("runs", style="dim")
    head = [f"{'run':<{room}}"] + [f"{name:>{w}}" if justify == "right" else f"{name:<{w}}"
                                   for (name, justify, _), w in zip(figures, widths, strict=True)]
    label = "anti-patterns" if findings_room >= len("anti-patterns") else "findings"  # the header never wraps
    text.append("\n" + GAP.join(head) + (GAP + label if findings_room >= 8 else ""), style="bold")
    for k, row in enumerate(rows):
        text.append("\n" + f"{left_ellipsis(ids[k], room):<{room}}")
        for (name, justify, cells), w in zip(figures, widths, strict=True):
            cell_text = f"{cells[k]:>{w}}" if justify == "right" else f"{cells[k]:<{w}}"
            text.append(GAP)
            text.append(cell_text, style=_cell_style(name, row))
        if findings_room >= 8:
            text.append(GAP + _findings_cell(row.anti_patterns, findings_room), style="dim")
    if omitted:
        text.append(f"\n{omitted:,} more runs not listed (limits.rows_listed; csv and jsonl list every run)", style="dim")
    shown = [t for t in TIER_SHORT if any(r.tier == t for r in rows)]
    if shown:
        legend = "tiers: " + ", ".join(f"{TIER_SHORT[t]} = {t}" for t in shown)
        text.append("\n" + "\n".join(textwrap.wrap(legend, width=max(width, 40), break_on_hyphens=False)), style="dim")
    return text


def _agents(agents: list[AgentSummary], width: int) -> Text:
    """One line of figures per agent, its tiers and anti-patterns under it (at any width)."""
    text = Text("per agent", style="dim")
    for agent in agents:
        text.append("\n")
        text.append(right_ellipsis(literal(agent.agent), width - 40), style="bold")
        text.append(f"  {agent.runs} run{'s' if agent.runs != 1 else ''}  mean {signed(round(agent.mean_process_score, 2))}  "
                    f"median {signed(agent.median_process_score)}")
        text.append(f"\n  tiers: {counts(agent.tiers)}", style="dim")
        text.append(f"\n  anti-patterns: {shares(agent.anti_pattern_share)}", style="dim")
        if agent.cost_usd is not None:
            text.append(f"\n  {cost_line(agent.cost_usd, agent.runs_with_cost, agent.cost_per_resolved_run)}", style="dim")
    return text


def cost_line(total: float, runs: int, per_resolved: float | None) -> str:
    """'cost $1.26 over 3 runs, $0.63 a resolved run' (the runs whose logs say what they cost)."""
    resolved = f", ${per_resolved:,.2f} a resolved run" if per_resolved is not None else ", none resolved"
    return f"cost ${total:,.2f} over {plural(runs, 'run')}{resolved}"


ERRORS_LISTED = 20


def table_report(report: BatchReport, quiet: bool = False) -> Group:
    """A rich renderable: runs, per-agent summary, gate and errors; laid out for the width it is
    printed at (below 100 columns the narrow layout of ``render.fit``)."""
    summary = report.summary
    rows = report.rows
    runs = AtWidth(lambda width: _runs(rows, width, report.rows_omitted))
    agents = AtWidth(lambda width: _agents(summary.agents, width))
    footer = Text()
    footer.append(f"{plural(summary.runs_scored, 'run')} scored, {summary.gate.failed_runs} failed the gate, "
                  f"{summary.errors} unreadable")
    if summary.gate.mean_process_score is not None:
        footer.append(f"; mean process score {signed(summary.gate.mean_process_score)}")
    if summary.gate.fail_under_mean is not None:
        footer.append(f" ({'below' if not summary.gate.mean_passed else 'not below'} --fail-under-mean "
                      f"{num(summary.gate.fail_under_mean)})", style="red" if not summary.gate.mean_passed else "")
    if summary.runs_scored:
        footer.append("\nloop ", style="dim")
        footer.append(loop_summary(summary.loop))
    for error in report.errors[:ERRORS_LISTED]:
        footer.append("\nerror ", style="red")
        footer.append(literal(error.message))
    if summary.errors > ERRORS_LISTED:
        footer.append(f"\n{summary.errors - ERRORS_LISTED:,} more errors (json, csv and markdown list the first "
                      f"{len(report.errors):,})", style="red")
    if quiet:
        return Group(agents, Text(""), footer)
    return Group(runs, Text(""), agents, Text(""), footer)




# --------------------------------------------------------------------------- the lifecycle


class Reporter:
    """A report with a lifecycle: ``start`` once, ``each`` for every result as it streams in,
    ``finish`` with the finished batch (``BatchReport``) once every result is in. Each returns text to write (the table
    report's ``finish`` returns a rich renderable). ``needs_lines`` asks the workers for the line of
    each iteration (annotations point at it); ``needs_verdict`` for the whole verdict beside the
    row (a report that reads only rows lets the workers skip encoding it)."""

    needs_lines = False
    needs_verdict = True
    needs_detail = False  # a run's detail beside its verdict (what the HTML page shows of it)

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    def start(self) -> str:
        return ""

    def each(self, result: Result, reasons: list[str] | None) -> str:
        return ""

    def finish(self, report: BatchReport) -> Any:
        return ""


class _Deferred(Reporter):
    """A format whose text needs every result first (markdown, junit, table): it runs its
    generator over the finished batch's rows at the end."""

    needs_verdict = False

    def __init__(self, report: Any, quiet: bool = False) -> None:
        super().__init__(quiet)
        self.report = report

    def finish(self, report: BatchReport) -> Any:
        out = self.report(report, self.quiet)
        return out if not isinstance(out, Iterator) else "".join(out)


class JsonReporter(Reporter):
    def __init__(self, quiet: bool = False) -> None:
        super().__init__(quiet)
        self.first = True

    def start(self) -> str:
        return '{\n"schema": "procjudge.batch/1",\n"runs": ['

    def each(self, result: Result, reasons: list[str] | None) -> str:
        verdict = result.verdict()
        if verdict is None:
            return ""
        text = ("\n" if self.first else ",\n") + msgspec.json.encode(verdict).decode("utf-8")
        self.first = False
        return text

    def finish(self, report: BatchReport) -> str:
        errors = [{"path": e.path, "message": e.message} for e in report.errors]
        return "\n],\n\"errors\": " + dumps(errors).rstrip() + ",\n\"summary\": " + dumps(report.summary).rstrip() + "\n}\n"


class CsvReporter(Reporter):
    needs_verdict = False

    def __init__(self, quiet: bool = False) -> None:
        super().__init__(quiet)
        self.buffer = io.StringIO()  # one row at a time, emptied after each
        self.writer = csv.writer(self.buffer, lineterminator="\n")

    def start(self) -> str:
        return ",".join(CSV_FIELDS) + "\n"

    def each(self, result: Result, reasons: list[str] | None) -> str:
        # the run's own texts made safe; the rest are numbers and procjudge's own names
        if result.error is not None:
            values: list[object] = [*[""] * 4, spreadsheet_safe(result.path), *[""] * 8,
                                    spreadsheet_safe(one_line(result.error)), *[""] * 9]
        else:
            row = result.row
            assert row is not None
            values = [spreadsheet_safe(row.id), spreadsheet_safe(row.agent), spreadsheet_safe(row.challenge),
                      row.format, spreadsheet_safe(row.path), row.iterations_used,
                      row.final_score, row.process_score, row.raw_process_score, row.tier, row.pattern,
                      " ".join(row.anti_patterns), "fail" if reasons else "pass", "",
                      "" if row.held_back_resolved is None else str(row.held_back_resolved).lower(),
                      "" if row.held_back_passed is None else row.held_back_passed,
                      "" if row.held_back_total is None else row.held_back_total,
                      *("" if v is None else v for v in (row.best_score, row.best_iteration, row.final_minus_best,
                                                          row.gated_final, row.cost_usd, row.tokens))]
        self.writer.writerow(values)
        line = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return line


class JunitReporter(Reporter):
    """Its totals come first in the file, so the test cases wait until the end: in memory up to
    ``SPOOL_BYTES``, past that in an unnamed temporary file (deleted when it is closed), so memory
    stays flat however many runs there are. ``finish`` streams the document."""

    needs_verdict = False
    SPOOL_BYTES = 2**20

    def __init__(self, quiet: bool = False) -> None:
        super().__init__(quiet)
        # closed by the document's generator when it is written (or when the reporter is dropped)
        self.cases = tempfile.SpooledTemporaryFile(max_size=self.SPOOL_BYTES, mode="w+", encoding="utf-8",  # noqa: SIM115
                                                   newline="")
        self.count = 0

    def each(self, result: Result, reasons: list[str] | None) -> str:
        self.cases.write(_junit_case(result, reasons) + "\n")
        self.count += 1
        return ""

    def finish(self, report: BatchReport) -> Iterator[str]:
        with self.cases:
            yield junit_head(self.count, report)
            self.cases.seek(0)
            while chunk := self.cases.read(2**16):
                yield chunk
            yield JUNIT_TAIL


class GithubReporter(Reporter):
    """GitHub workflow commands: a file= relative to the project root links the annotation."""

    needs_lines = True

    def __init__(self, quiet: bool = False, root: str = "") -> None:
        super().__init__(quiet)
        self.root = root

    def each(self, result: Result, reasons: list[str] | None) -> str:
        return "".join(_github_lines(result, reasons, self.root))

    def finish(self, report: BatchReport) -> str:
        return _github_notice(report)


ROOT_ID = "PROJECTROOT"


def _location(path: str, root: str = "") -> dict[str, str]:
    """A SARIF artifactLocation for a run file: relative to the project root (``uriBaseId``, which
    ``originalUriBaseIds`` resolves) when it lies under it, else an absolute file URI; a relative
    path stays relative without a root (percent-encoded)."""
    from urllib.parse import quote

    shown = relative(path, root)
    if os.path.isabs(shown):
        return {"uri": "file://" + quote(shown.replace(os.sep, "/"))}
    return {"uri": quote(shown.replace(os.sep, "/")), **({"uriBaseId": ROOT_ID} if root else {})}


class SarifReporter(Reporter):
    """SARIF 2.1.0 (code scanning in GitHub, GitLab, Azure DevOps, VS Code's SARIF viewer): the
    rule catalogue as the driver's rules, and one result per finding worth an annotation (an
    anti-pattern, or a rule that cost points) located at its run file and the line where its
    iteration starts. A definite accusation is an error, any other finding a warning; unreadable
    files are tool execution notifications."""

    needs_lines = True

    def __init__(self, quiet: bool = False, rules: Sequence[Rule] = (), version: str = "", root: str = "") -> None:
        super().__init__(quiet)
        self.rules = list(rules)
        self.version = version
        self.root = root
        self.index = {rule.id: k for k, rule in enumerate(self.rules)}
        self.first = True

    def start(self) -> str:
        __version__ = self.version
        rules = [{
            "id": rule.id, "name": rule.id,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.rule},
            "help": {"text": f"{rule.rule}\nPoints: {rule.points}. Reads: {rule.reads}. Source: {rule.source}. "
                             f"`procjudge explain {rule.id}` shows an example."},
            "defaultConfiguration": {"level": "error" if rule.accuses else "warning"},
            "properties": {"kind": rule.kind, "points": rule.points, "tags": [rule.kind]},
        } for rule in self.rules]
        head = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0"}
        driver = {"name": "procjudge", "version": __version__, "semanticVersion": __version__, "rules": rules}
        text = dumps(head).rstrip()[:-2]  # the object left open
        base = ""
        if self.root:
            from urllib.parse import quote

            uri = "file://" + quote(os.path.abspath(self.root).replace(os.sep, "/").rstrip("/") + "/")
            base = '"originalUriBaseIds": ' + dumps({ROOT_ID: {"uri": uri}}).rstrip() + ",\n"
        return text + ',\n  "runs": [{\n"tool": {"driver": ' + dumps(driver).rstrip() + '},\n' + base + '"results": ['

    def each(self, result: Result, reasons: list[str] | None) -> str:
        verdict = result.verdict()
        if verdict is None:
            return ""
        run = verdict.run
        items = [i for i in verdict.items if annotated(i)]
        lines = result.lines or {}
        out = []
        for item in items:
            line = lines.get(item.iterations[-1]) if item.iterations else None
            location: dict[str, Any] = {"artifactLocation": _location(result.location, self.root)}
            if line:
                location["region"] = {"startLine": line}
            accusing = item.id in self.index and self.rules[self.index[item.id]].accuses and item.strength == "definite"
            record = {
                "ruleId": item.id, "ruleIndex": self.index.get(item.id, -1),
                "level": "error" if accusing else "warning",
                "message": {"text": f"{run.id}: iteration {iterations(item.iterations)}: {item.evidence} "
                                    f"({item.points:+g} points; {item.strength} evidence: {item.basis})"},
                "locations": [{"physicalLocation": location}],
                "partialFingerprints": {
                    "procjudgeFinding/v1": _fingerprint(relative(result.path, self.root), item.id, item.iterations)},
                "properties": {"run": run.id, "agent": run.agent, "points": item.points, "iterations": item.iterations,
                               "strength": item.strength, "basis": item.basis},
            }
            out.append(msgspec.json.encode(record).decode())
        if not out:
            return ""
        text = ("\n" if self.first else ",\n") + ",\n".join(out)
        self.first = False
        return text

    def finish(self, report: BatchReport) -> str:
        notifications = [{
            "level": "error", "message": {"text": one_line(error.message, 2000)},
            "locations": [{"physicalLocation": {"artifactLocation": _location(error.path, self.root),
                                                **({"region": {"startLine": error.line}} if error.line else {})}}],
        } for error in report.errors]
        invocation = {"executionSuccessful": not report.errors, "toolExecutionNotifications": notifications,
                      "exitCode": report.exit_code}
        return "\n],\n\"invocations\": [" + msgspec.json.encode(invocation).decode() + "]\n}]\n}\n"


def _fingerprint(path: str, rule_id: str, iterations: list[int]) -> str:
    import hashlib

    return hashlib.sha256(f"{path}\0{rule_id}\0{iterations}".encode()).hexdigest()[:32]


GITLAB_SEVERITY = {"definite": "major", "likely": "minor", "weak": "info"}


class GitlabReporter(Reporter):
    """GitLab Code Quality (a JSON array of issues: description, check_name, fingerprint,
    severity, location.path and location.lines.begin), shown in merge requests. A definite
    accusation is critical; other findings are major, minor or info by the strength of their
    evidence; an unreadable file is a blocker."""

    needs_lines = True

    def __init__(self, quiet: bool = False, rules: Sequence[Rule] = (), root: str = "") -> None:
        super().__init__(quiet)
        self.accusing = {rule.id for rule in rules if rule.accuses}
        self.first = True
        self.root = root

    def start(self) -> str:
        return "["

    def _issue(self, description: str, check: str, fingerprint: str, severity: str, path: str, line: int | None) -> str:
        issue = {"description": one_line(description, 2000), "check_name": check, "fingerprint": fingerprint,
                 "severity": severity, "location": {"path": relative(path, self.root), "lines": {"begin": line or 1}}}
        text = ("\n" if self.first else ",\n") + msgspec.json.encode(issue).decode()
        self.first = False
        return text

    def each(self, result: Result, reasons: list[str] | None) -> str:
        verdict = result.verdict()
        if verdict is None:
            return self._issue(result.error or "unreadable run file", "procjudge/unreadable",
                               _fingerprint(relative(result.path, self.root), "unreadable", []), "blocker", result.location,
                               result.error_line)
        run = verdict.run
        lines = result.lines or {}
        out = []
        for item in filter(annotated, verdict.items):
            severity = "critical" if item.id in self.accusing and item.strength == "definite" else GITLAB_SEVERITY[item.strength]
            out.append(self._issue(
                f"{run.id}: {item.id} at iteration {iterations(item.iterations)} ({item.points:+g}): {item.evidence}",
                f"procjudge/{item.id}", _fingerprint(relative(result.path, self.root), item.id, item.iterations), severity,
                result.location,
                lines.get(item.iterations[-1]) if item.iterations else None))
        return "".join(out)

    def finish(self, report: BatchReport) -> str:
        return "\n]\n"


REPORTERS: dict[str, Any] = {
    "json": JsonReporter, "csv": CsvReporter, "junit": JunitReporter, "github": GithubReporter,
    "sarif": SarifReporter, "gitlab": GitlabReporter,
    "markdown": lambda quiet=False: _Deferred(markdown_report, quiet),
    "table": lambda quiet=False: _Deferred(table_report, quiet),
}
