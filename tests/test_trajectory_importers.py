"""`procjudge import openhands`, `import atif`, `import auto` and `import list`, the importer
plugins, and the runners and builds the shared shell reader knows.

OpenHands is tested on a real evaluation output (three ponyc instances from OpenHands' own
repository); ATIF, of which no public trajectory with a verifier result could be retrieved here,
on a real mini-swe-agent trajectory rewritten step by step into ATIF, whose run must match the
run the swe-agent importer makes of the same trajectory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers import atif, openhands, swe_agent
from procjudge.importers.base import Writer
from procjudge.importers.classify import build_command, written_files
from procjudge.importers.classify import test_command as suite_of
from procjudge.importers.registry import BUILTINS, recognise
from procjudge.importers.shell import _iso
from procjudge.importers.test_output import parse_counts

from conftest import ROOT

runner = CliRunner()
OPENHANDS = ROOT / "tests" / "fixtures" / "openhands" / "multi_swe_bench_output.jsonl"
SWE = ROOT / "tests" / "fixtures" / "swe_agent"
TRAJECTORY = SWE / "trajs" / "django__django-11141" / "django__django-11141.traj.json"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_files(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.rglob("*.json"))}


# --------------------------------------------------------------------------- OpenHands, real output


def test_an_editor_call_is_the_same_step_in_every_format() -> None:
    """One vocabulary (procjudge.importers.toolcalls): the same str_replace, refused or made, and the
    same view, read from SWE-agent, OpenHands and ATIF, are the same step."""
    from procjudge.importers import atif
    from procjudge.importers import swe_agent as swe

    made = {"command": "str_replace", "path": "/testbed/m.py", "old_str": "x = 1", "new_str": "x = 2"}
    refused = "ERROR:\nNo replacement was performed, old_str `x = 1` did not appear verbatim in /testbed/m.py."
    missing = "ERROR:\nParameter `old_str` is required for command: str_replace."

    def read(arguments: dict[str, object], output: str) -> list[tuple[str, bool, object, object]]:
        steps = [swe._tool_step("str_replace_editor", arguments, "", 0, output, False, None),
                 openhands.steps([{"id": 1, "action": "edit", "args": arguments},
                                  {"id": 2, "observation": "edit", "cause": 1, "content": output}])[0],
                 atif.call_step({"function_name": "str_replace_based_edit_tool", "arguments": arguments}, "", output, None)]
        return [(s.command, s.shell, s.writes, (s.editor or {}).get("new_str")) for s in steps if s is not None]

    for found in (read(made, "The file /testbed/m.py has been edited."), read(made, refused), read(made, missing),
                  read({"command": "view", "path": "/testbed/m.py"}, "     1\tx = 1\n")):
        assert len(found) == 3 and found[0] == found[1] == found[2], found
    assert read(made, "edited")[0] == ("str_replace /testbed/m.py", False, [("/testbed/m.py", "edit")], "x = 2")
    assert read(made, refused)[0][2] == [] and read(made, missing)[0][2] == []  # refused: nothing written
    assert read({"command": "write", "path": "/testbed/n.py", "content": "y = 1"}, "")[0][2] == [("/testbed/n.py", "edit")]


SDK_OUTPUT = ROOT / "tests" / "fixtures" / "openhands" / "sdk_output.jsonl"


def test_the_openhands_sdk_s_events_are_read_as_the_agent_ran_them(tmp_path: Path) -> None:
    """The software agent SDK's events (ActionEvent / ObservationEvent with kinds of their own):
    the terminal's commands with their exit codes, the file editor's edits, a failing inline check
    on a missing system library named as the environment's, and an instance that only chatted and
    downloaded a note."""
    written, issues = openhands.import_files([str(SDK_OUTPUT)], str(tmp_path))
    assert written == 2 and [(i.note, "safety-misconfig" in i.reason) for i in issues] == [(True, True)]
    runs = run_files(tmp_path)
    assert set(runs) == {"safety-migrate", "safety-qr-code"}
    migrate = runs["safety-migrate"]
    assert migrate["run"]["agent"] == "gpt-4o-2024-08-06" and migrate["run"]["source"] == "openhands"
    [only] = [it["iteration_telemetry"] for it in migrate["iterations"]]
    assert [f["path"] for f in only["changes"]["files"]] == ["migrate_compare.py"]  # in /workspace, the repository
    assert [(c["command"], c["outcome"]) for c in only["checks"]] == [("python /workspace/migrate_compare.py", "passed")]
    raw = {r["instance_id"]: r for r in lines(SDK_OUTPUT)}
    edits = [e for e in raw["safety-migrate"]["history"]
             if e.get("kind") == "ActionEvent" and e["action"]["kind"] == "FileEditorAction"]
    assert only["actions"]["file_edits"] == len(edits) == 2
    qr = [it["iteration_telemetry"] for it in runs["safety-qr-code"]["iterations"]]
    assert len(qr) == 1  # the retry after the missing library is not a second try of the code
    verdict = judge(load_run(str(tmp_path / "gpt-4o-2024-08-06" / "safety-qr-code.json")))
    assert any("a system library the environment lacks is missing (zbar)" in w for w in verdict.warnings)
    assert not [i for i in verdict.items if i.points < 0]  # nothing charged for the image's missing library


def test_the_real_openhands_output_imports_and_matches_the_raw_events(tmp_path: Path) -> None:
    written, issues = openhands.import_files([str(OPENHANDS)], str(tmp_path))
    assert written == 3 and not issues
    runs = run_files(tmp_path)
    assert set(runs) == {"ponylang__ponyc-4595", "ponylang__ponyc-4588", "ponylang__ponyc-4593"}
    # ponyc-4593 edits and finishes without ever building or testing: one iteration that nothing validated,
    # imported without a report as with one
    unchecked = runs.pop("ponylang__ponyc-4593")
    assert len(unchecked["iterations"]) == 1
    assert unchecked["iterations"][0]["iteration_telemetry"]["test_results"]["unavailable"] == "not_a_test_run"
    assert any("ran no check" in note for note in unchecked["run"]["notes"])
    raw = {r["instance_id"]: r for r in lines(OPENHANDS)}
    for instance, document in runs.items():
        record = raw[instance]
        events = record["history"]
        iterations = [e["iteration_telemetry"] for e in document["iterations"]]
        # counted here from the raw events: every edit the editor made (its observation is no error) is a file
        # edit of some iteration, and one it refused ("ERROR: No replacement was performed") is none
        answers = {e.get("cause"): str(e.get("content") or "") for e in events if e.get("observation")}
        edits = [e for e in events if e.get("action") == "edit" and e["args"].get("command") != "view"]
        made = sum(1 for e in edits if not answers.get(e.get("id"), "").startswith("ERROR:"))
        assert made < len(edits) and sum(t["actions"]["file_edits"] for t in iterations) >= made
        assert iterations[-1]["changes"]["diff"] == record["test_result"]["git_patch"].replace("\r\n", "\n")
        assert document["run"]["agent"] == "openrouter-llama-4-maverick" and document["run"]["source"] == "openhands"
        # every make failed with exit code 2: the iteration is a failed build, and make is not a test run
        assert iterations[-1]["build"]["status"] == "failure" and "make" in iterations[-1]["build"]["errors"][0]
        assert all(t["actions"]["test_runs"] == 0 for t in iterations)
        run = load_run(str(tmp_path / "openrouter-llama-4-maverick" / f"{instance}.json"))
        assert not [w for w in run.warnings if "unknown" in w]
        verdict = judge(run)
        assert [i.id for i in verdict.items if i.id == "no_local_validation"]
    files = {f["path"]: f for t in runs["ponylang__ponyc-4595"]["iterations"]
             for f in t["iteration_telemetry"]["changes"]["files"]}
    # the instruction names the repository: /workspace/test.c lies outside it, the parser is the fix
    assert files["src/libponyc/ast/parser.c"]["scratch"] is False
    assert files["/workspace/test.c"]["scratch"] is True
    assert any("maximum iteration" in n for n in runs["ponylang__ponyc-4588"]["run"]["notes"])


def test_the_older_pairs_history_reads_as_the_event_list(tmp_path: Path) -> None:
    records = lines(OPENHANDS)
    paired = []
    for record in records:
        events, pairs = record["history"], []
        for k, event in enumerate(events):
            if "action" in event and event["action"] not in ("system", "message", "recall") \
                    and k + 1 < len(events) and "observation" in events[k + 1]:
                answer = dict(events[k + 1])
                answer.pop("cause", None)
                pairs.append([event, answer])
        paired.append({**record, "history": pairs})
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in paired))
    openhands.import_files([str(OPENHANDS)], str(tmp_path / "events"))
    openhands.import_files([str(source)], str(tmp_path / "pairs"))
    for name, document in run_files(tmp_path / "events").items():
        other = run_files(tmp_path / "pairs")[name]
        strip = [{k: v for k, v in e["iteration_telemetry"].items()} for e in document["iterations"]]
        assert strip == [e["iteration_telemetry"] for e in other["iterations"]], name


def test_a_resolved_verdict_in_the_line_is_the_held_back_suite(tmp_path: Path) -> None:
    record = lines(OPENHANDS)[0]
    record["test_result"]["report"] = {"resolved": False, "empty_generation": False}
    source = tmp_path / "output.jsonl"
    source.write_text(json.dumps(record) + "\n{not json\n")
    written, issues = openhands.import_files([str(source)], str(tmp_path / "out"))
    assert written == 1 and [(i.line, i.note) for i in issues] == [(2, False)]
    (document,) = run_files(tmp_path / "out").values()
    final = document["iterations"][-1]["iteration_telemetry"]["test_results"]
    assert final["hidden"] == {"passed": 0, "total": 1} and final["hidden_suites"][0]["name"] == "resolved"


# --------------------------------------------------------------------------- ATIF


def to_atif(trajectory: dict[str, Any]) -> dict[str, Any]:
    """A mini-swe-agent trajectory rewritten into ATIF v1.4: each assistant message an agent step
    with one bash tool call, the next user message its observation."""
    messages = trajectory["messages"]
    steps: list[dict[str, Any]] = []
    for k, message in enumerate(messages):
        text = swe_agent._text(message.get("content"))
        stamp = swe_agent._time(message)
        base = {"step_id": len(steps) + 1}
        if stamp is not None:
            base["timestamp"] = _iso(stamp)
        if message["role"] in ("system", "user") and k < 2:
            steps.append({**base, "source": message["role"], "message": text})
            continue
        if message["role"] != "assistant":
            continue
        blocks = __import__("re").findall(r"```(?:bash|sh)\s*\n(.*?)\n?```", text, __import__("re").DOTALL)
        if len(blocks) != 1:
            steps.append({**base, "source": "agent", "message": text})
            continue
        reply = swe_agent._text(messages[k + 1]["content"]) if k + 1 < len(messages) else ""
        call = f"call_{k}"
        steps.append({**base, "source": "agent", "message": text.split("```", 1)[0].replace("THOUGHT:", "").strip(),
                      "tool_calls": [{"tool_call_id": call, "function_name": "bash",
                                      "arguments": {"command": blocks[0].strip()}}],
                      "observation": {"results": [{"source_call_id": call, "content": reply}]}})
    return {"schema_version": "ATIF-v1.4", "session_id": "s-1",
            "agent": {"name": "mini-swe-agent", "version": "1.0", "model_name": "gemini/gemini-3-pro-preview"},
            "steps": steps}


def harbor_trial(tmp_path: Path, trajectory: dict[str, Any], reward: str | None = None,
                 ctrf: dict[str, Any] | None = None) -> Path:
    trial = tmp_path / "job" / "django__django-11141__AbC123"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    path = trial / "agent" / "trajectory.json"
    path.write_text(json.dumps(trajectory))
    if reward is not None:
        (trial / "verifier" / "reward.txt").write_text(reward)
    if ctrf is not None:
        (trial / "verifier" / "ctrf.json").write_text(json.dumps(ctrf))
    return path


def test_an_atif_trajectory_makes_the_run_its_swe_agent_original_makes(tmp_path: Path) -> None:
    original = json.loads(TRAJECTORY.read_text())
    path = harbor_trial(tmp_path, to_atif(original), reward="1.0\n")
    written, issues = atif.import_files([str(path)], str(tmp_path / "atif"))
    assert written == 1 and not [i for i in issues if not i.note]
    swe_agent.import_files([str(TRAJECTORY)], str(tmp_path / "swe"))
    (mine,) = run_files(tmp_path / "atif").values()
    (theirs,) = run_files(tmp_path / "swe").values()
    assert mine["run"]["challenge"] == "django__django-11141" and mine["run"]["agent"] == "mini-swe-agent-gemini-3-pro-preview"
    assert len(mine["iterations"]) == len(theirs["iterations"]) >= 1
    for a, b in zip(mine["iterations"], theirs["iterations"], strict=True):
        a, b = a["iteration_telemetry"], b["iteration_telemetry"]
        assert a["test_results"]["suite"] == b["test_results"]["suite"]
        assert a["test_results"].get("post_iteration") == b["test_results"].get("post_iteration")
        assert a["actions"] == b["actions"]
        assert {f["path"] for f in a["changes"]["files"]} == {f["path"] for f in b["changes"]["files"]}
    final = mine["iterations"][-1]["iteration_telemetry"]["test_results"]
    assert final["hidden"] == {"passed": 1, "total": 1}
    verdict = judge(load_run(str(next((tmp_path / "atif").rglob("*.json")))))
    assert verdict.process_score is not None


def test_a_ctrf_report_gives_every_test_of_the_verifier(tmp_path: Path) -> None:
    ctrf = {"results": {"tool": {"name": "pytest"}, "tests": [
        {"name": "test_a", "status": "passed"}, {"name": "test_b", "status": "failed"}, {"name": "test_c", "status": "skipped"}]}}
    path = harbor_trial(tmp_path, to_atif(json.loads(TRAJECTORY.read_text())), reward="0", ctrf=ctrf)
    atif.import_files([str(path)], str(tmp_path / "out"))
    (document,) = run_files(tmp_path / "out").values()
    suite = document["iterations"][-1]["iteration_telemetry"]["test_results"]["hidden_suites"][0]
    assert (suite["name"], suite["passed"], suite["total"]) == ("verifier", 1, 2)
    assert [t["outcome"] for t in suite["tests"]] == ["passed", "failed", "skipped"]


@pytest.mark.parametrize("call,expected", [
    ({"function_name": "str_replace_based_edit_tool", "arguments": {"command": "str_replace", "path": "/app/x.py"}},
     [("/app/x.py", "edit")]),
    ({"function_name": "str_replace_based_edit_tool", "arguments": {"command": "view", "path": "/app/x.py"}}, []),
    ({"function_name": "write_file", "arguments": {"file_path": "/app/y.py", "content": "x"}}, [("/app/y.py", "edit")]),
    ({"function_name": "apply_patch",
      "arguments": {"input": "*** Begin Patch\n*** Update File: src/z.py\n@@\n-a\n+b\n*** End Patch"}},
     [("src/z.py", "edit")]),
    ({"function_name": "bash_command", "arguments": {"keystrokes": "sed -i 's/a/b/' /app/w.py\n"}}, [("/app/w.py", "sed")]),
    ({"function_name": "read_file", "arguments": {"path": "/app/x.py"}}, []),
])
def test_atif_tool_calls_become_edits_or_reads(call: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert atif.call_step(call, "", "", None).writes == expected


def test_a_file_that_is_not_atif_is_refused_at_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "trajectory.json"
    bad.write_text(json.dumps({"schema_version": "1.0", "steps": []}))
    written, issues = atif.import_files([str(bad)], str(tmp_path / "out"))
    assert written == 0 and "not ATIF" in issues[0].reason and issues[0].line == 1


# --------------------------------------------------------------------------- runners and builds


@pytest.mark.parametrize("command,suite", [
    ("go test ./pkg/...", "go test ./pkg/..."),
    ("CGO_ENABLED=0 go test -run TestX -v ./...", "go test TestX ./..."),
    ("cargo test parser", "cargo test parser"),
    ("npm test -- --watch=false", "npm test"),
    ("npx jest src/a.test.ts", "jest src/a.test.ts"),
    ("yarn vitest run", "vitest"),
    ("cd build && ctest --output-on-failure", "ctest"),
    ("make -j4 test", "make test"),
    ("cd core && mvn -q test -Dtest=JSONTest", "mvn test -Dtest=JSONTest"),
    ("./mvnw -pl core -am clean verify", "mvn core clean verify"),
    ("bin/test sympy/core/tests/test_sympify.py", "bin/test sympy/core/tests/test_sympify.py"),
    ("cd /testbed && ./bin/test sympy/core -k kernS 2>&1 | tail -20", "bin/test sympy/core -k kernS"),
    ("python bin/test sympy/matrices", "bin/test sympy/matrices"),
    ("ls bin/test", None),
    ("cat bin/test_import.py", None),
    ("mvn -DskipTests install", None),
    ("mvn compile", None),
    ("make", None),
    ("go build ./...", None),
])
def test_runners_of_other_languages(command: str, suite: str | None) -> None:
    assert suite_of(command) == suite


@pytest.mark.parametrize("output,counts", [
    ("test a::b ... ok\ntest a::c ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured\n", (1, 1, 0)),
    ("=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\n    --- FAIL: TestB/sub (0.00s)\nFAIL\n", (1, 1, 0)),
    ("ok  \texample.com/a\t0.01s\nFAIL\texample.com/b\t0.02s\n", (1, 1, 0)),
    ("Tests:       1 failed, 2 skipped, 4 passed, 7 total\n", (4, 1, 2)),
    (" Test Files  1 passed (1)\n      Tests  3 passed | 1 failed (4)\n", (3, 1, 0)),
    ("75% tests passed, 1 tests failed out of 4\n\nThe following tests FAILED:\n\t  3 - parser (Failed)\n", (3, 1, 0)),
    ("[==========] 5 tests ran.\n[  PASSED  ] 4 tests.\n[  FAILED  ] 1 test, listed below:\n[  FAILED  ] Lexer.Id\n", (4, 1, 0)),
    ("make: *** [all] Error 2\n", None),
    # Maven surefire: the module summaries summed, not the lines of each class
    (("[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s -- in a.BTest\n"
     "[INFO] Results:\n[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n"
     "[ERROR] Tests run: 4, Failures: 1, Errors: 1, Skipped: 1, Time elapsed: 0.2 s <<< FAILURE! -- in a.CTest\n"
     "[ERROR] a.CTest.testX -- Time elapsed: 0.01 s <<< FAILURE!\n"
     "[ERROR] Tests run: 4, Failures: 1, Errors: 1, Skipped: 1\n[INFO] BUILD FAILURE\n"), (4, 2, 1)),
    ("[INFO] BUILD FAILURE\n[ERROR] COMPILATION ERROR : \n", None),
    # SymPy's bin/test: its closing line, wrapped at 80 columns or not; exceptions fail, expected
    # failures are skipped and an unexpected pass passes
    (("sympy/core/tests/test_evalf.py[48] ......f.F...  [FAIL]\n\n"
      "=== tests finished: 99 passed, 1 failed, 4 expected to fail, in 5.03 seconds ===\nDO *NOT* COMMIT!\n"), (99, 1, 4)),
    (" tests finished: 216 passed, 3 skipped, 5 expected to fail, 14 exceptions, \nin 7.55 seconds \nDO *NOT* COMMIT!\n",
     (216, 14, 8)),
    ("= tests finished: 10 passed, 1 expected to fail but passed, in 0.20 seconds =\n", (11, 0, 0)),
    ("The run said `tests finished: 47 passed, 7 exceptions`.\n", None),  # quoted in prose: no summary line
])
def test_counts_of_other_runners(output: str, counts: tuple[int, int, int] | None) -> None:
    found = parse_counts(output)
    assert ((found.passed, found.failed, found.skipped) if found else None) == counts


def test_surefire_names_the_tests_that_failed() -> None:
    output = ("[ERROR] a.CTest.testX -- Time elapsed: 0.01 s <<< FAILURE!\n"
              "[ERROR] testY(a.DTest)  Time elapsed: 0.02 s  <<< ERROR!\n"
              "[ERROR] Tests run: 2, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 1 s <<< FAILURE! -- in a.CTest\n"
              "[ERROR] Tests run: 5, Failures: 1, Errors: 1, Skipped: 0\n")
    found = parse_counts(output)
    assert found is not None and (found.passed, found.failed) == (3, 2)
    assert [t["name"] for t in found.tests] == ["a.CTest.testX", "a.DTest.testY"]


def test_sympy_bin_test_names_the_tests_that_failed_or_raised() -> None:
    output = ("_" * 80 + "\n" + "_" * 12 + " sympy/matrices/tests/test_commonmatrix.py:test_refine " + "_" * 13 + "\n"
              "Traceback (most recent call last):\nValueError: Name node can't be used with 'False' constant\n"
              "________ sympy/core/tests/test_evalf.py:test_implemented_function_evalf ________\n"
              "AssertionError\n\n=== tests finished: 9 passed, 1 failed, 1 exceptions, in 0.50 seconds ===\n")
    found = parse_counts(output)
    assert found is not None and (found.passed, found.failed) == (9, 2)
    assert [t["name"] for t in found.tests] == ["sympy/matrices/tests/test_commonmatrix.py::test_refine",
                                                "sympy/core/tests/test_evalf.py::test_implemented_function_evalf"]


def test_java_runs_are_checks_and_javac_a_build() -> None:
    from procjudge.importers.checks import script_run
    from procjudge.importers.edits import words_of

    def run(command: str) -> str | None:
        found = script_run(command, words_of(command))
        return found.identity if found else None

    assert run("java -cp /home:/home/core/target/classes Repro arg") == "java Repro arg"
    assert run("java Repro.java") == "java Repro.java"
    assert run("java -ea -jar build/app.jar --check") == "java build/app.jar --check"
    assert run("java -version") is None and run("java --help") is None
    assert build_command("javac -d /home /home/Repro.java && java -cp /home Repro") == "javac -d /home /home/Repro.java"


def test_builds_and_build_output() -> None:
    assert build_command("cd /w/repo && make") == "make"
    assert build_command("export X=1 && cmake --build build") == "cmake --build build"
    assert build_command("make -n build") is None and build_command("python make.py") is None
    # cleaning build output is not an edit; removing a source file is
    assert written_files("rm -rf /w/repo/build && rm -f src/a.o") == []
    assert written_files("rm src/old.c") == [("src/old.c", "delete")]


# --------------------------------------------------------------------------- auto, list, plugins


def test_auto_recognises_every_format_and_names_what_it_cannot(tmp_path: Path) -> None:
    inspect_log = ROOT / "tests" / "fixtures" / "inspect" / "median-honest.eval"
    found = {BUILTIN.name: recognise(str(path), list(BUILTINS)) for BUILTIN, path in [
        (BUILTINS[0], TRAJECTORY), (BUILTINS[1], OPENHANDS), (BUILTINS[3], inspect_log),
        (BUILTINS[4], next((ROOT / "tests" / "fixtures" / "realdata").rglob("*.jsonl")))]}
    assert {name: (i.name if i else None) for name, i in found.items()} == {
        "swe-agent": "swe-agent", "openhands": "openhands", "inspect": "inspect", "reflexion": "reflexion"}
    atif_path = harbor_trial(tmp_path, to_atif(json.loads(TRAJECTORY.read_text())), reward="1")
    assert recognise(str(atif_path), list(BUILTINS)).name == "atif"
    stray = tmp_path / "notes.json"
    stray.write_text('{"hello": 1}')
    result = runner.invoke(app, ["import", "auto", str(OPENHANDS), str(tmp_path / "job"), str(stray), "--out",
                                 str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "notes.json:1: not a log any importer recognises" in result.stderr
    assert "openhands: 1 file, 3 runs" in result.stderr and "atif: 1 file, 1 run" in result.stderr
    assert "imported 4 runs" in result.stdout
    forced = runner.invoke(app, ["import", "auto", "--using", "nope", str(stray), "--out", str(tmp_path / "o2")])
    assert forced.exit_code == 2 and "no importer named 'nope'" in forced.stderr


PLUGIN = '''
import json, os
from procjudge.importers.base import Writer

class CsvImporter:
    name = "tiny"
    summary = "one score per line (a test plugin)"

    def detect(self, path, head):
        return path.endswith(".tiny")

    def import_files(self, paths, out, agent=None):
        writer, issues, written = Writer(out, paths), [], 0
        for path in paths:
            scores = [float(x) for x in open(path).read().split()]
            doc = {"run": {"id": os.path.basename(path)}, "iterations": [
                {"iteration_telemetry": {"score": {"post_iteration": s}}} for s in scores]}
            written += writer.put(path, 1, agent or "tiny", os.path.basename(path), doc, issues)
        return written, issues

importer = CsvImporter()
'''


def install_plugin(site: Path, module: str, source: str, entry_points: str) -> None:
    """A package of one module in ``site`` (put it on PYTHONPATH) declaring ``entry_points``
    (``name = module:object`` lines) in the group procjudge.importers."""
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(parents=True)
    (site / f"{module}.py").write_text(source)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[procjudge.importers]\n{entry_points}")


def test_a_plugin_importer_is_listed_and_used_by_auto(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_plugin(site, "tiny_plugin", PLUGIN, "tiny = tiny_plugin:importer\nbroken = tiny_plugin:missing\n")
    (tmp_path / "a.tiny").write_text("40 70 90\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    listed = subprocess.run([sys.executable, "-m", "procjudge", "import", "list"], check=False, capture_output=True, text=True,
                            env=env)
    assert listed.returncode == 0 and "tiny" in listed.stdout and "(plugin)" in listed.stdout
    assert "importer plugin broken (tiny_plugin:missing) cannot be loaded" in listed.stderr
    done = subprocess.run([sys.executable, "-m", "procjudge", "import", "auto", str(tmp_path / "a.tiny"), "--out",
                           str(tmp_path / "out")],
                          check=False, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "tiny: 1 file, 1 run" in done.stderr
    assert judge(load_run(str(tmp_path / "out" / "tiny" / "a.tiny.json"))).trajectory == [40.0, 70.0, 90.0]


def test_the_writer_never_writes_a_run_the_model_would_refuse(tmp_path: Path) -> None:
    """A value the model refuses is left out and named; what it requires refuses the run."""
    from procjudge import load_run

    writer = Writer(str(tmp_path), [])
    issues: list[Any] = []
    bad = {"iterations": [{"iteration_telemetry": {"test_results": {"post_iteration": {"passed": -1, "failed": 3}}}}]}
    assert writer.put("log.jsonl", 7, "a", "t", bad, issues)
    run = load_run(str(tmp_path / "a" / "t.json"))
    assert "post_iteration.passed: Expected `int` >= 0" in " ".join(run.info.notes)
    empty: dict[str, Any] = {"iterations": []}
    assert not writer.put("log.jsonl", 8, "a", "u", empty, issues)
    assert issues[-1].line == 8 and "does not fit the run model" in issues[-1].reason and "iterations" in issues[-1].reason
    assert not (tmp_path / "a" / "u.json").exists()


def test_a_repaired_regression_is_shown_but_is_not_an_anti_pattern_of_the_run() -> None:
    from conftest import run_from

    def step(outcomes: dict[str, str]) -> dict[str, Any]:
        return {"iteration_telemetry": {"test_results": {"tests": [{"name": n, "outcome": o} for n, o in outcomes.items()]}}}

    verdict = judge(run_from({"run": {"iterations_are": "local_runs"}, "iterations": [
        step({"a": "passed", "b": "failed"}), step({"a": "failed", "b": "passed"}), step({"a": "passed", "b": "passed"})]}))
    (item,) = [i for i in verdict.items if i.id == "regression_blindness"]
    assert item.points == 0 and item.detail["repaired_at"] == 2 and "repaired at iteration 2" in item.evidence
    assert "regression_blindness" not in verdict.anti_patterns and "regression_blindness" not in verdict.findings


def test_every_importer_takes_folders(tmp_path: Path) -> None:
    realdata = ROOT / "tests" / "fixtures" / "realdata"
    folder = tmp_path / "logs"
    (folder / "deeper").mkdir(parents=True)
    log = next(realdata.rglob("*.jsonl"))
    (folder / "deeper" / log.name).write_bytes(log.read_bytes())
    direct = runner.invoke(app, ["import", "reflexion", str(log), "--out", str(tmp_path / "a")])
    through = runner.invoke(app, ["import", "reflexion", str(folder), "--out", str(tmp_path / "b")])
    assert direct.exit_code == through.exit_code, through.stderr  # the fixture holds one broken line: 2 both
    assert direct.stdout.split()[1] == through.stdout.split()[1] != "0"  # the same number of runs
    openhands_folder = tmp_path / "oh"
    openhands_folder.mkdir()
    (openhands_folder / "output.jsonl").write_bytes(OPENHANDS.read_bytes())
    assert runner.invoke(app, ["import", "openhands", str(openhands_folder), "--out", str(tmp_path / "c")]).exit_code == 0
    inspect_folder = ROOT / "tests" / "fixtures" / "inspect"
    assert runner.invoke(app, ["import", "inspect", str(inspect_folder), "--out", str(tmp_path / "d")]).exit_code in (0, 2)
    assert list((tmp_path / "d").rglob("*.json"))
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = runner.invoke(app, ["import", "atif", str(empty), "--out", str(tmp_path / "e")])
    assert refused.exit_code == 2 and "no trajectory.json or result.json files in this folder" in refused.stderr


def test_the_wrong_importer_says_so_in_one_line_and_leaves_no_empty_folder(tmp_path: Path) -> None:
    log = next((ROOT / "tests" / "fixtures" / "realdata").rglob("*.jsonl"))
    records = sum(1 for line in log.read_text().splitlines() if line.strip())
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "openhands", str(log), "--out", str(out)])
    assert result.exit_code == 2 and records > 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{records} records could not be read as openhands logs" in lines[0]
    assert f"it looks like a reflexion log: procjudge import reflexion {log}" in lines[0]
    assert not out.exists()  # the import created it, wrote nothing and removed it again
    kept = tmp_path / "kept"
    (kept / "mine").mkdir(parents=True)
    runner.invoke(app, ["import", "openhands", str(log), "--out", str(kept)])
    assert (kept / "mine").is_dir()  # a folder the import did not create is left alone, empty or not


def test_auto_lists_each_file_it_passed_over_when_asked(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / TRAJECTORY.name).write_text(TRAJECTORY.read_text())
    (folder / "notes.json").write_text('{"hello": 1}')
    (folder / "empty.jsonl").write_text("")
    quiet = runner.invoke(app, ["import", "auto", str(folder), "--out", str(tmp_path / "out")])
    assert "2 files under the folders recognised by no importer, passed over (--verbose lists them)" in quiet.stderr
    assert "passed over " + str(folder) not in quiet.stderr
    listed = runner.invoke(app, ["import", "auto", str(folder), "--out", str(tmp_path / "out2"), "--verbose"])
    lines = [line for line in listed.stderr.splitlines() if line.startswith("procjudge: passed over ")]
    assert sorted(lines) == sorted([
        f"procjudge: passed over {folder / 'empty.jsonl'}: empty",
        (f"procjudge: passed over {folder / 'notes.json'}: no importer recognises its name and first bytes "
        "('{\"hello\": 1}'; procjudge import list says what each reads)")])


DRIVEN_PLUGIN = '''
import functools, os
from procjudge.importers.driver import Task, drive, named

def run_of(path):
    scores = [float(x) for x in open(path).read().split()]
    return {"run": {"id": os.path.basename(path)}, "iterations": [
        {"iteration_telemetry": {"score": {"post_iteration": s}}} for s in scores]}

class Driven:
    name = "driven"
    summary = "one score per line, through the driver (a test plugin)"

    def detect(self, path, head):
        return path.endswith(".driven")

    def import_files(self, paths, out, agent=None, overwrite=False):
        tasks = (Task(path, 1, named(agent or "driven", os.path.basename(path), functools.partial(run_of, path)),
                      label=os.path.basename(path), what="a score list") for path in paths)
        return drive(tasks, out, paths, overwrite)

importer = Driven()
'''


def test_a_plugin_on_the_driver_reports_what_became_of_each_file_and_takes_overwrite(tmp_path: Path) -> None:
    """The driver returns the import's tallies (no process-wide state), and --overwrite reaches a
    plug-in whose import_files takes it."""
    site = tmp_path / "site"
    install_plugin(site, "driven_plugin", DRIVEN_PLUGIN, "driven = driven_plugin:importer\n")
    log = tmp_path / "a.driven"
    log.write_text("40 70 90\n")
    (tmp_path / "bad.driven").write_text("40 x\n")
    env = {**os.environ, "PYTHONPATH": str(site)}

    def imported(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "procjudge", "import", "auto", str(log), str(tmp_path / "bad.driven"),
                               "--out", str(tmp_path / "out"), *extra], check=False, capture_output=True, text=True, env=env)

    first = imported()
    assert first.returncode == 2 and "driven: 2 files, 1 run" in first.stderr
    assert "bad.driven:1: bad.driven: not a score list: could not convert string to float: 'x'" in first.stderr
    assert imported().stdout.startswith("imported 1 run into") and "1 already there, unchanged" in imported().stdout
    log.write_text("40 80\n")
    assert "1 beside an earlier import's file of the same name" in imported().stdout
    log.write_text("50\n")
    assert "1 replacing an earlier import's file" in imported("--overwrite").stdout
    assert judge(load_run(str(tmp_path / "out" / "driven" / "a.driven.json"))).trajectory == [50.0]


def test_every_builtin_importer_is_one_call_of_the_driver() -> None:
    import importlib
    import inspect as pyinspect

    from procjudge.importers.registry import BUILTINS

    for builtin in BUILTINS:
        module = importlib.import_module(f"procjudge.importers.{builtin.module}")
        body = [line.strip() for line in pyinspect.getsource(module.import_files).split('"""')[-1].splitlines() if line.strip()]
        assert len(body) <= 2 and body[0].startswith("return drive("), (builtin.name, body)
        assert "overwrite" in pyinspect.signature(module.import_files).parameters, builtin.name


def test_the_documented_example_importer_is_one_reader_that_imports_a_loop(tmp_path: Path) -> None:
    """docs/examples/steplog.py, the importer docs/development.md walks through, installed as a
    plug-in: import auto recognises its log, and the run is the red-green loop the log holds."""
    example = ROOT / "docs" / "examples" / "steplog.py"
    assert len(example.read_text().splitlines()) <= 150
    site = tmp_path / "site"
    install_plugin(site, "steplog", example.read_text(), "steplog = steplog:importer\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "calc-1.jsonl").write_text((ROOT / "tests" / "fixtures" / "steplog" / "calc-1.jsonl").read_text())
    (logs / "broken.jsonl").write_text('{"type": "task", "id": "b", "statement": "s"}\nnot json\n')
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "procjudge", "import", "auto", str(logs), "--out", str(tmp_path / "out")],
                          check=False, capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "steplog: 2 files, 1 run" in done.stderr
    assert "broken.jsonl:2: not a JSON object" in done.stderr  # the bad line, by its line
    assert "b: no command and no edit: nothing to judge" in done.stderr  # the rest of the file is read
    run = load_run(str(tmp_path / "out" / "my-agent" / "calc-1.json"))
    (entry,) = run.iterations
    telemetry = entry.iteration_telemetry
    assert run.info.iterations_are == "local_runs" and run.info.source == "steplog"
    assert telemetry.test_results is not None and telemetry.test_results.post_iteration is not None
    assert (telemetry.test_results.pre_iteration.failed, telemetry.test_results.post_iteration.passed) == (1, 2)
    assert telemetry.changes is not None and telemetry.changes.files[0].edits[0].new == "    return sum(xs)"
    assert [check.outcome for check in telemetry.checks or []] == ["passed"]


def test_any_tool_call_is_one_step_by_its_name_and_arguments() -> None:
    """toolcalls.tool_call_step is the one reading of a tool call: the editor tool, apply_patch, a
    tool that writes the file it names, a shell command, else a read; ATIF's reader is that call."""
    from procjudge.importers.toolcalls import tool_call_step

    patch = "*** Begin Patch\n*** Update File: shop/sums.py\n@@\n-    return 1\n+    return 2\n*** End Patch\n"
    calls = [
        ("bash", {"command": "python -m pytest -q\r"}, "1 failed in 0.1s\nexit code 1", ("python -m pytest -q", [], 1)),
        ("apply_patch", {"input": patch}, "Done", ("apply_patch", [("shop/sums.py", "edit")], None)),
        ("write_file", {"path": "b.py", "content": "x = 1\n"}, "", ("write_file b.py", [("b.py", "edit")], None)),
        ("str_replace_based_edit_tool", {"command": "str_replace", "path": "c.py", "old_str": "a", "new_str": "b"},
         "The file c.py has been edited.", ("str_replace c.py", [("c.py", "edit")], None)),
        ("search", {"query": "total"}, "shop/sums.py", ("search", [], None)),
    ]
    for name, arguments, output, (command, writes, code) in calls:
        step = tool_call_step(name, arguments, "", output, None)
        assert (step.command, step.writes, step.returncode) == (command, writes, code), name
        same = atif.call_step({"function_name": name, "arguments": arguments}, "", output, None)
        assert (same.command, same.writes, same.returncode, same.editor, same.shell) == \
            (step.command, step.writes, step.returncode, step.editor, step.shell), name
    assert tool_call_step("bash", {"command": "python -m pytest -q"}, "", "1 failed in 0.1s", None).test


def test_a_plain_document_with_a_misspelt_field_is_refused_where_it_is_written(tmp_path: Path) -> None:
    """A plug-in hands the writer a plain document: a field the run model does not know would be
    lost in the typed run file, so the run is refused, naming the field and the likely one."""
    writer = Writer(str(tmp_path), [])
    issues: list[Any] = []
    misspelt = {"iterations": [{"iteration_telemetry": {"test_result": {"post_iteration": {"passed": 1, "total": 2}}},
                                "scor": 3}]}
    assert not writer.put("log.jsonl", 4, "a", "t", misspelt, issues)
    (issue,) = issues
    assert issue.line == 4 and "does not know (misspelt?)" in issue.reason
    assert "iterations[0].iteration_telemetry.test_result (did you mean `test_results`?)" in issue.reason
    assert "iterations[0].scor" in issue.reason and not (tmp_path / "a" / "t.json").exists()
    spelt = {"iterations": [{"iteration_telemetry": {"test_results": {"post_iteration": {"passed": 1, "total": 2}}}}]}
    assert writer.put("log.jsonl", 5, "a", "t", spelt, issues) and len(issues) == 1


def _run(number: int, command: str, **args: Any) -> dict[str, Any]:
    return {"id": number, "action": "run", "source": "agent", "args": {"command": command, "thought": "", **args}}


def _ran(cause: int, code: int, content: str) -> dict[str, Any]:
    return {"id": cause + 1, "cause": cause, "observation": "run", "content": content,
            "extras": {"metadata": {"exit_code": code}}}


def test_a_command_waited_on_after_its_soft_timeout_is_one_command_with_its_real_end() -> None:
    """OpenHands answers a command still running at its soft timeout with exit code -1; the agent
    reads the rest with an empty command. The wait is no step: the command takes the rest of the
    output and the exit code it ended with (a real Java run did this: its Maven build read as failed
    with -1 before the wait showed BUILD SUCCESS). Keys that interrupt it (C-c) leave it unfinished,
    and a check never waited for is unavailable, not failed."""
    history = [_run(2, "bash run.sh"), _ran(2, -1, "[INFO] Running FooTest\n"),
               _run(4, ""), _ran(4, 0, "[INFO] Tests run: 2, Failures: 0\n[INFO] BUILD SUCCESS\n"),
               _run(6, "python repro.py"), _ran(6, -1, "working...\n"),
               _run(8, "C-c", is_input=True), _ran(8, 130, "^C\n"),
               _run(10, "ls"), _ran(10, 0, "a b\n")]
    found = openhands.steps(history)
    assert [(s.command, s.returncode) for s in found] == [("bash run.sh", 0), ("python repro.py", -1), ("ls", 0)]
    assert found[0].output.endswith("BUILD SUCCESS\n") and found[0].output.startswith("[INFO] Running FooTest")
    from procjudge.importers.probes import find_checks

    checked = find_checks(found, None, ("/workspace",), frozenset())
    assert checked[1].probe == "python repro.py" and checked[1].unavailable == (
        "it had not finished when the agent moved on (exit code -1)")
    # the software agent SDK's terminal waits the same way
    sdk = [{"kind": "ActionEvent", "id": "a", "action": {"kind": "TerminalAction", "command": "bash run.sh"}},
           {"kind": "ObservationEvent", "action_id": "a", "observation": {"kind": "TerminalObservation", "exit_code": -1,
                                                                          "content": [{"type": "text", "text": "start\n"}]}},
           {"kind": "ActionEvent", "id": "b", "action": {"kind": "TerminalAction", "command": ""}},
           {"kind": "ObservationEvent", "action_id": "b", "observation": {"kind": "TerminalObservation", "exit_code": 1,
                                                                          "content": [{"type": "text", "text": "FAILED\n"}]}}]
    (only,) = openhands.steps(sdk)
    assert (only.command, only.returncode, only.output) == ("bash run.sh", 1, "start\n\nFAILED\n")
    # a first command with an empty one before it is no wait, and a wait keeps the end of a long output
    assert [s.command for s in openhands.steps([_run(2, ""), _ran(2, 0, "")])] == [""]
    long = openhands.steps([_run(2, "make test"), _ran(2, -1, "x" * 300_000), _run(4, ""), _ran(4, 0, "ALL PASSED\n")])
    assert long[0].output.endswith("ALL PASSED\n") and len(long[0].output) <= 200_000
