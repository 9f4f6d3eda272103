"""The held-back verdict of a SWE-bench instance: where its report lies (``REPORTS/<id>/report.json``,
a results file listing instances by outcome, a report.json beside the trajectory), what it says
(the FAIL_TO_PASS and PASS_TO_PASS suites with every test's outcome, or only resolved or not), and
the harness's own test log beside it. The SWE-agent and OpenHands importers read reports here.
"""

from __future__ import annotations

import os
from typing import Any

from .base import ImportIssue, read_json

HARNESS_FAILED = ("the evaluation harness failed on this instance (error_ids): no held-back outcome, and nothing "
                  "charged to the agent")


def harness_failed(report: dict[str, Any] | None) -> bool:
    """Whether a results file says the harness, not the agent, failed on the instance (``error_ids``)."""
    return report is not None and report.get("harness_error") is True


def unlisted_note(reports: str | None, unknown: list[str]) -> ImportIssue | None:
    """The one note on the instances a results file lists nowhere, whose held-back outcome is
    unknown; None when it lists them all."""
    if not unknown:
        return None
    shown = ", ".join(unknown[:3]) + (f" (+{len(unknown) - 3} more)" if len(unknown) > 3 else "")
    return ImportIssue(str(reports), 1, f"{len(unknown)} instance(s) are in no list of this results file, so their "
                       f"held-back outcome is unknown: {shown}; --unlisted unresolved says the file lists every "
                       "resolved instance", note=True)


def hidden_suites(report: dict[str, Any], instance: str) -> list[dict[str, Any]]:
    """FAIL_TO_PASS and PASS_TO_PASS of a SWE-bench report, with every test's outcome."""
    entry = report.get(instance, report)
    entry = entry if isinstance(entry, dict) else {}
    status: dict[str, Any] = entry["tests_status"] if isinstance(entry.get("tests_status"), dict) else {}
    if not status and isinstance(entry.get("resolved"), bool):
        # only SWE-bench's verdict is known (a results file that lists resolved instances): one check
        return [{"name": "resolved", "passed": int(entry["resolved"]), "total": 1}]
    suites = []
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        part: dict[str, Any] = status[name] if isinstance(status.get(name), dict) else {}
        success, failure = list(part.get("success") or []), list(part.get("failure") or [])
        if not success and not failure:
            continue
        tests = [{"name": t, "outcome": "passed"} for t in success] + [{"name": t, "outcome": "failed"} for t in failure]
        suites.append({"name": name, "passed": len(success), "total": len(success) + len(failure), "tests": tests})
    return suites


MAX_LOG_BYTES = 4 * 1024 * 1024  # of the harness's test log, the end is read


def held_back_log(report_path: str | None) -> str | None:
    """The held-back run's output: the SWE-bench harness's ``test_output.txt`` beside an
    instance's report (its last 4 MiB), or None."""
    if not report_path:
        return None
    path = os.path.join(os.path.dirname(report_path), "test_output.txt")
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - MAX_LOG_BYTES))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


def find_report(reports: str | None, instance: str, path: str, unlisted: str = "unknown") -> dict[str, Any] | None:
    """The SWE-bench report of an instance (:func:`report_of`), without where it was found."""
    return report_of(reports, instance, path, unlisted)[0]


def report_of(reports: str | None, instance: str, path: str,
              unlisted: str = "unknown") -> tuple[dict[str, Any] | None, str | None]:
    """The SWE-bench report of an instance: REPORTS/<id>/report.json or REPORTS/<id>.json, a
    REPORTS file that lists instances by outcome (SWE-bench's ``results.json`` or the harness's
    summary: ``resolved_ids``, ``unresolved_ids``, ``error_ids``, ...; see :func:`listed`), or a
    report.json found beside the trajectory (in its own folder, as SWE-agent 1.x writes it, or
    logs/<id>/report.json in the trajectory's folder or up to two folders above it: logs/ next
    to trajs/<id>/ or trajs/), and the file it was read from (None for a listing)."""
    candidates = []
    if reports and os.path.isfile(reports):
        return listed(reports, instance, unlisted), None
    if reports:
        candidates += [os.path.join(reports, instance, "report.json"), os.path.join(reports, f"{instance}.json")]
    folder = os.path.dirname(os.path.abspath(path))
    candidates.append(os.path.join(folder, "report.json"))
    for _ in range(3):
        candidates.append(os.path.join(folder, "logs", instance, "report.json"))
        folder = os.path.dirname(folder)
    for candidate in candidates:
        if os.path.isfile(candidate):
            loaded = read_json(candidate, 64 * 1024 * 1024)
            if not isinstance(loaded, dict):
                raise ValueError(f"{candidate}: a report is a JSON object")
            if os.path.basename(os.path.dirname(candidate)) != instance and candidate.endswith("report.json") \
                    and instance not in loaded and "tests_status" not in loaded and "resolved" not in loaded:
                continue  # a report.json of something else beside the trajectory
            return loaded, candidate  # the harness's test log lies beside it (held_back_log)
    return None, None


_LISTS: dict[str, dict[str, Any]] = {}
# The harness summary's lists (SWE-bench's run_evaluation report), and what each says of an instance.
_UNRESOLVED_LISTS = ("unresolved_ids", "unresolved", "empty_patch_ids", "empty_patch", "incomplete_ids")
_ERROR_LISTS = ("error_ids", "error")


def listed(path: str, instance: str, unlisted: str = "unknown") -> dict[str, Any] | None:
    """An instance's verdict from a file that lists instances by outcome: resolved when in
    ``resolved`` / ``resolved_ids``; unresolved when in ``unresolved_ids``, ``empty_patch_ids``
    (or another list but the completed and submitted ones); ``{"harness_error": True}`` when in
    ``error_ids`` (the harness failed, not the agent); absent from every list, unknown (None), or
    unresolved with ``unlisted="unresolved"`` (the file is complete)."""
    if path not in _LISTS:
        loaded = read_json(path, 256 * 1024 * 1024)
        if not isinstance(loaded, dict):
            raise TypeError(f"{path}: a results file is a JSON object of instance lists")
        _LISTS.clear()
        _LISTS[path] = loaded
    listing = _LISTS[path]
    resolved = listing.get("resolved", listing.get("resolved_ids"))
    if not isinstance(resolved, list):
        raise TypeError(f"{path}: no 'resolved' (or 'resolved_ids') list of instance ids")
    if instance in resolved:
        return {"resolved": True}
    if any(isinstance(listing.get(key), list) and instance in listing[key] for key in _ERROR_LISTS):
        return {"harness_error": True}
    if any(isinstance(ids, list) and instance in ids for key, ids in listing.items()
           if key not in ("resolved", "resolved_ids", "completed_ids", "submitted_ids", *_ERROR_LISTS)):
        return {"resolved": False}
    return {"resolved": False} if unlisted == "unresolved" else None
