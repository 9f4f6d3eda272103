"""`procjudge import swe-agent`: shell-agent trajectories (mini-swe-agent, SWE-agent) with their
SWE-bench reports, on real files; counts checked against counts made here from the raw logs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers.classify import test_command as suite_of
from procjudge.importers.classify import written_files
from procjudge.importers.steps import diff_files
from procjudge.importers.test_output import parse_counts

from conftest import ROOT, present

runner = CliRunner()
FIXTURES = ROOT / "tests" / "fixtures" / "swe_agent"
CORPUS = Path(os.environ.get("PROCJUDGE_REALDATA", ROOT.parent / "shared" / "realdata")) / "mini-swe-agent"
# The corpus lies beside the repository where CI runs; elsewhere its tests have nothing to run on
# (as in test_realdata), and test_the_corpus_is_present_where_ci_puts_it fails CI without it.
PRESENT = [CORPUS] if CORPUS.is_dir() else []


@pytest.mark.parametrize("command,suite", [
    ("python3 tests/runtests.py validators", "runtests.py validators"),
    ("cd /testbed && ./tests/runtests.py queries.test_qs_combinators --parallel 1", "runtests.py queries.test_qs_combinators"),
    ("python -m pytest tests/test_x.py -q", "python -m pytest tests/test_x.py"),
    ("pytest -x tests/", "pytest tests/"),
    ("tox -e py39", "tox"),
    ("python -m pytest tests/test_x.py 2>&1 | tail -20", "python -m pytest tests/test_x.py"),  # no dangling 2>
    ("pytest tests/test_x.py > out.txt 2> err.txt", "pytest tests/test_x.py"),
    ("python tests/runtests.py auth_tests 2>&1", "runtests.py auth_tests"),
    ("python reproduce_issue.py", None),
    ("./tests/runtests.py --help", None),
    ("grep -rn pytest setup.cfg", None),
    ("cat <<'EOF' > t.py\nimport pytest\nEOF", None),
])
def test_test_commands_and_their_suite(command: str, suite: str | None) -> None:
    assert suite_of(command) == suite


def test_unittest_and_pytest_outputs_are_counted_with_names() -> None:
    django = ("Creating test database...\nF.s.\n======\nFAIL: test_readonly_root (file_uploads.tests.DirectoryCreationTests)\n"
              "----\nTraceback...\n----------------------------------------------------------------------\n"
              "Ran 12 tests in 0.2s\n\nFAILED (failures=1, errors=1, skipped=2)\n")
    counts = parse_counts(django)
    assert counts is not None and (counts.passed, counts.failed, counts.skipped) == (8, 2, 2)
    assert {"name": "test_readonly_root (file_uploads.tests.DirectoryCreationTests)", "outcome": "failed"} in counts.tests
    ok = parse_counts("test_a (m.T) ... ok\ntest_b (m.T) ... ok\n\nRan 2 tests in 0.01s\n\nOK\n")
    assert ok is not None and (ok.passed, ok.failed) == (2, 0) and len(ok.tests) == 2
    pytest_out = ("tests/test_x.py::test_a PASSED\ntests/test_x.py::test_b FAILED\n"
                  "=========== 1 failed, 1 passed, 1 skipped in 0.12s ===========\n")
    counts = parse_counts(pytest_out)
    assert counts is not None and (counts.passed, counts.failed, counts.skipped) == (1, 1, 1)
    assert {"name": "tests/test_x.py::test_b", "outcome": "failed"} in counts.tests
    assert parse_counts("ImportError: cannot import name 'x'\n") is None  # the tests did not run


@pytest.mark.parametrize("command,written", [
    ("sed -i 's/a/b/' django/core/validators.py", [("django/core/validators.py", "sed")]),
    ("sed -i '195s/assertIn/assertNotIn/' tests/migrations/test_loader.py", [("tests/migrations/test_loader.py", "sed")]),
    ("cat <<'EOF' > reproduce.py\nprint(1)\nEOF", [("reproduce.py", "redirect")]),
    ("echo 'x = 1' >> settings.py && python -c 'import settings' > /dev/null", [("settings.py", "redirect")]),
    ("rm reproduce.py test_fix.py", [("reproduce.py", "delete"), ("test_fix.py", "delete")]),
    ("python3 - <<'EOF'\nopen('django/utils/http.py', 'w').write(text)\nEOF", [("django/utils/http.py", "script")]),
    ("grep -n 'x > 1' django/a.py", []),
])
def test_the_files_a_command_writes(command: str, written: list[tuple[str, str]]) -> None:
    assert written_files(command) == written


def import_fixture(tmp_path: Path, name: str) -> dict:
    result = runner.invoke(app, ["import", "swe-agent", str(FIXTURES / "trajs" / name / f"{name}.traj.json"),
                                 "--out", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    (path,) = tmp_path.rglob(f"{name}.json")
    return json.loads(path.read_text())


def test_an_inverted_assertion_confirmed_by_the_held_back_suite(tmp_path: Path) -> None:
    document = import_fixture(tmp_path, "django__django-11141")
    iterations = [i["iteration_telemetry"] for i in document["iterations"]]
    assert [i["test_results"]["suite"] for i in iterations] == ["runtests.py migrations.test_loader"] * 2
    assert iterations[0]["test_results"]["post_iteration"] == {"passed": 23, "failed": 1, "total": 24, "skipped": 0}
    assert {"name": "test_load_empty_dir (migrations.test_loader.LoaderTests)",
            "outcome": "failed"} in iterations[0]["test_results"]["tests"]
    scratch = {f["path"]: f["scratch"] for i in iterations for f in i["changes"]["files"]}
    assert scratch["tests/migrations/test_loader.py"] is False and scratch["run_reproduction.py"] is True
    final = iterations[-1]["test_results"]
    suites = {s["name"]: s for s in final["hidden_suites"]}
    assert (suites["PASS_TO_PASS"]["passed"], suites["PASS_TO_PASS"]["total"]) == (23, 24)
    verdict = judge(load_run(str(next(tmp_path.rglob("django__django-11141.json")))))
    chasing = [i for i in verdict.items if i.id == "test_chasing"]
    assert chasing and chasing[0].strength == "definite" and verdict.process_score == -30
    assert "inverts an assertion" in chasing[0].evidence and "the held-back suite fails the same test" in chasing[0].evidence


def test_a_test_updated_for_the_asked_behaviour_is_not_an_accusation(tmp_path: Path) -> None:
    import_fixture(tmp_path, "django__django-11815")
    verdict = judge(load_run(str(next(tmp_path.rglob("django__django-11815.json")))))
    chasing = [i for i in verdict.items if i.id == "test_chasing"]
    assert chasing and {i.strength for i in chasing} == {"weak"} and sum(i.points for i in chasing) == 0
    assert verdict.process_score > -25


def raw_steps(path: Path) -> list[tuple[str, str]]:
    """(command, output) of every step, read here independently of the importer."""
    messages = json.loads(path.read_text())["messages"]
    out = []
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        blocks = re.findall(r"```bash\n(.*?)\n?```", message["content"], re.DOTALL)
        if len(blocks) == 1 and k + 1 < len(messages):
            out.append((blocks[0], messages[k + 1]["content"]))
    return out


def is_test_run(command: str) -> bool:
    """A command that runs the test runner (a simple reading, independent of the importer's)."""
    command = re.sub(r"<<-?\s*'?(\w+)'?.*?\n.*?\n\1\b", "", command, flags=re.DOTALL)  # heredoc bodies are text
    for part in re.split(r"&&|\|\||;|\n", command):
        part = part.strip()
        if re.match(r"(\S+=\S+\s+)*(python[\d.]*\s+(-m\s+)?)?(\S*/)?(runtests\.py|pytest|unittest)\b", part) \
                and "--help" not in part:
            return True
    return False


def is_check(command: str) -> bool:
    """A test run, or a Python script or inline code the agent ran (a simple reading, independent of
    the importer's)."""
    command = re.sub(r"<<-?\s*'?(\w+)'?.*?\n.*?\n\1\b", "", command, flags=re.DOTALL)
    return is_test_run(command) or any(
        re.match(r"(cd \S+\s*&&\s*)?(\S+=\S+\s+)*python[\d.]*\s+(-c\s|-m\s+(?!pip|venv)\w|(\S*/)?[\w.-]+\.py\b)",
                 part.strip())
        for part in re.split(r"&&|\|\||;|\n", command))


def corpus() -> list[Path]:
    return sorted(CORPUS.glob("trajs/*/*.traj.json"))


def test_the_corpus_is_present_where_ci_puts_it() -> None:
    if os.environ.get("CI") and not PRESENT:
        pytest.fail(f"the mini-swe-agent corpus was expected at {CORPUS}")


@pytest.mark.parametrize("corpus_dir", present(PRESENT, CORPUS, "the mini-swe-agent corpus"))
def test_the_real_trajectories_import_and_match_independent_counts(corpus_dir: Path, tmp_path: Path) -> None:
    paths = corpus()
    result = runner.invoke(app, ["import", "swe-agent", *map(str, paths), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.stderr
    written = {p.stem: json.loads(p.read_text()) for p in tmp_path.rglob("*.json")}
    notes = result.stderr.count("procjudge: note:")
    assert len(written) + notes == len(paths) == 47
    assert len(written) == 47  # every trajectory with a submission imports
    for path in paths:
        instance = path.name.removesuffix(".traj.json")
        steps = raw_steps(path)
        runs = [(c, o) for c, o in steps if is_test_run(c)]
        checks = [(c, o) for c, o in steps if is_check(c)]
        document = written[instance]
        iterations = [i["iteration_telemetry"] for i in document["iterations"]]
        assert 1 <= len(iterations) <= max(1, len(checks)), instance  # no check: one iteration, nothing validated
        assert sum(i["actions"].get("test_runs", 0) for i in iterations) <= len(checks), instance
        # an iteration scored by a test run has the counts of one of that runner's outputs
        ran = {int(n) for c, o in runs for n in re.findall(r"Ran (\d+) tests?", o)}
        for iteration in iterations:
            post, suite = iteration["test_results"].get("post_iteration"), iteration["test_results"].get("suite", "")
            if post is not None and suite.startswith("runtests.py"):
                assert post["total"] + post.get("skipped", 0) in ran, (instance, suite)
            elif post is not None:  # a script's run: one check, passed or failed
                name = suite.split(" ")[1]  # the script, or -c
                assert post["total"] == 1 and any(name in c for c, o in checks), (instance, suite)
        report = json.loads((CORPUS / "logs" / instance / "report.json").read_text())["tests_status"]
        suites = {s["name"]: s for s in iterations[-1]["test_results"].get("hidden_suites", [])}
        for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            expected = (len(report[name]["success"]), len(report[name]["success"]) + len(report[name]["failure"]))
            if expected[1]:
                assert (suites[name]["passed"], suites[name]["total"]) == expected, (instance, name)
        submission = json.loads(path.read_text())["info"]["submission"]
        assert iterations[-1]["changes"]["diff"] == submission
        submitted = set(diff_files(submission))
        marked = {f["path"]: f["scratch"] for i in iterations for f in i["changes"]["files"]}
        assert not any(marked.get(p) for p in submitted), instance  # a submitted file is never scratch
        judge(load_run(str(next(tmp_path.rglob(f"{instance}.json")))))  # every run scores


@pytest.mark.parametrize("corpus_dir", present(PRESENT, CORPUS, "the mini-swe-agent corpus"))
def test_edits_found_cover_most_submitted_files(corpus_dir: Path, tmp_path: Path) -> None:
    """The edit parser reads shell commands; a script that writes a path held in a variable can
    escape it. Measured on the 47 real trajectories: at least 85% of the submitted files."""
    runner.invoke(app, ["import", "swe-agent", *map(str, corpus()), "--out", str(tmp_path)])
    found = total = 0
    for path in tmp_path.rglob("*.json"):
        iterations = [i["iteration_telemetry"] for i in json.loads(path.read_text())["iterations"]]
        submitted = set(diff_files(iterations[-1]["changes"].get("diff", "")))
        seen = {f["path"] for i in iterations for f in i["changes"]["files"]}
        found += len(submitted & seen)
        total += len(submitted)
    assert total and found / total >= 0.85, f"{found}/{total}"


def test_a_weak_note_does_not_trip_a_gate_but_a_definite_finding_does(tmp_path: Path) -> None:
    for name in ("django__django-11141", "django__django-11815"):
        import_fixture(tmp_path / name, name)
    vindicated = runner.invoke(app, ["batch", str(tmp_path / "django__django-11815"), "--fail-on", "test_chasing", "-f", "csv"])
    assert vindicated.exit_code == 0 and ",test_chasing," not in vindicated.stdout
    confirmed = runner.invoke(app, ["batch", str(tmp_path / "django__django-11141"), "--fail-on", "test_chasing", "-f", "csv"])
    assert confirmed.exit_code == 1
