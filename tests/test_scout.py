"""procjudge as an Inspect Scout scanner, in a real scan of real Inspect logs: Inspect's mock model
plays the scripted agents of tests/test_inspect_scorer.py (a red test, the code repaired, green; and
the same red test answered by rewriting the test), the local sandbox runs their commands, and
Scout scans the logs Inspect wrote.

Needs `inspect-scout` (the `scout` extra; the `test` extra brings it); skipped with the reason where
it is missing, except in CI's first pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_inspect_scorer import CHEAT, HONEST, evaluate

from conftest import optional_module


def _scout() -> Any:
    return optional_module("inspect_scout", "inspect-scout", "scout")


def _scan(tmp_path: Path, logs: Path) -> dict[str, dict[str, Any]]:
    scout = _scout()
    from procjudge.scout import process_scanner

    status = scout.scan(scanners=[process_scanner()], transcripts=scout.transcripts_from(str(logs)),
                        scans=str(tmp_path / "scans"), display="none")
    assert status.complete, status
    frame = scout.scan_results_df(status.location, scanner="process_scanner").scanners["process_scanner"]
    return {str(row["transcript_id"]): row for _, row in frame.iterrows()} | {
        "_frame": {"columns": list(frame.columns), "rows": len(frame)}}


def test_a_scan_of_real_inspect_logs_judges_each_transcript_and_cites_the_evidence(tmp_path: Path) -> None:
    _scout()
    evaluate(tmp_path / "logs" / "honest", HONEST)
    evaluate(tmp_path / "logs" / "cheat", CHEAT)
    found = _scan(tmp_path, tmp_path / "logs")
    assert found.pop("_frame")["rows"] == 2
    honest, cheat = sorted(found.values(), key=lambda row: -float(row["value"]))
    # the repair: red, code fixed, green; the rewritten test: test-chasing, ranked below
    assert float(honest["value"]) > float(cheat["value"])
    assert "test_chasing" in str(cheat["explanation"]) and "test_chasing" not in str(honest["explanation"])
    assert "process score" in str(honest["explanation"]) and honest["answer"] == "systematic_refinement"
    # the cheat's references are the messages of its evidence: the sed that rewrote the test, the test run after it
    import json

    references = json.loads(cheat["message_references"])
    cited = [r["cite"] for r in references]
    # messages: 1 system, 2 user, then the agent's calls at 3, 5, 7 and 9 (each answered by a tool message)
    assert cited == ["[M7]", "[M9]"]
    assert not json.loads(honest["message_references"] or "[]")  # nothing accused: nothing cited


def test_a_transcript_with_nothing_to_judge_is_named_not_scored(tmp_path: Path) -> None:
    _scout()
    from test_inspect_scorer import SETUP

    evaluate(tmp_path / "logs", [("bash", {"command": "ls"}), ("submit", {"answer": "done"})])
    evaluate(tmp_path / "logs2", [("bash", {"command": SETUP}), ("submit", {"answer": "done"})])
    idle = _scan(tmp_path / "a", tmp_path / "logs")
    idle.pop("_frame")
    (row,) = idle.values()
    assert row["answer"] == "not judged" and "nothing to judge" in str(row["explanation"])
    unchecked = _scan(tmp_path / "b", tmp_path / "logs2")
    unchecked.pop("_frame")
    (row,) = unchecked.values()
    assert float(row["value"]) == -2 and "no_local_validation" in str(row["explanation"])


def test_scout_scan_on_the_modules_path_gives_the_same_result(tmp_path: Path) -> None:
    """The shell's way: `scout scan <path of procjudge/scout.py> -T LOGS`."""
    _scout()
    import shutil
    import subprocess
    import sys

    import procjudge.scout

    evaluate(tmp_path / "logs", CHEAT)
    scout = shutil.which("scout") or str(Path(sys.executable).with_name("scout"))
    done = subprocess.run([scout, "scan", procjudge.scout.__file__, "-T", str(tmp_path / "logs"), "--scans",
                           str(tmp_path / "scans"), "--display", "none"], capture_output=True, text=True, timeout=600,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    import inspect_scout

    (location,) = (tmp_path / "scans").glob("scan_id=*")
    frame = inspect_scout.scan_results_df(str(location)).scanners["process_scanner"]
    assert len(frame) == 1 and "test_chasing" in str(frame.iloc[0]["explanation"])
    assert '"[M7]"' in str(frame.iloc[0]["message_references"])
