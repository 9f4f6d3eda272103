"""Shell agents as they write logs today: mini-swe-agent 2.x tool calls (fixtures written by
mini-swe-agent itself, ``scripts/make_shell_fixtures.py``), SWE-agent ``.traj`` files (0.x ACI and
1.x function calling, from SWE-agent's own demonstrations), the judging model for local test runs
(a missing runner or a cut output validates nothing; a test expectation rewritten after it failed is
test-chasing) and the held-back outcome in every report."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers import edits as rebuild
from procjudge.importers import sed
from procjudge.importers.base import NothingLogged, explicit
from procjudge.importers.environment import unavailable
from procjudge.importers.history import history_read
from procjudge.importers.shell import Trajectory
from procjudge.importers.shell import convert as _typed
from procjudge.importers.steps import Step
from procjudge.policy import DEFAULT, HeldBack, Policy

from conftest import ROOT

runner = CliRunner()
MINI2 = ROOT / "tests" / "fixtures" / "mini_swe_agent_2"
SWE = ROOT / "tests" / "fixtures" / "swe_agent_traj"


def convert_trajectory(trajectory: Trajectory) -> dict:  # type: ignore[type-arg]
    """The run the shell builder makes, as its run file holds it."""
    return explicit(_typed(trajectory))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("mini2")
    result = runner.invoke(app, ["import", "swe-agent", str(MINI2 / "trajs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return {path.stem: path for path in out.rglob("*.json")}


def verdict_of(path: Path):  # type: ignore[no-untyped-def]
    return judge(load_run(str(path)))


def test_every_tool_call_trajectory_imports_and_scores(imported: dict[str, Path]) -> None:
    assert sorted(imported) == [f"shop__shop-{k}" for k in range(1, 10)]
    for path in imported.values():
        result = runner.invoke(app, ["score", str(path), "--format", "json"])
        assert result.exit_code == 0, result.output


def test_commands_come_from_tool_calls_and_outputs_from_tool_messages(imported: dict[str, Path]) -> None:
    document = json.loads(imported["shop__shop-1"].read_text())
    first = document["iterations"][0]["iteration_telemetry"]
    assert first["test_results"]["suite"] == "python -m pytest tests"
    assert first["test_results"]["post_iteration"] == {"passed": 4, "failed": 0, "total": 4, "skipped": 0}
    assert first["test_results"]["pre_iteration"]["failed"] == 1  # the run before the fix, from its tool message
    # the sed edit is rebuilt as content: the line before and after
    edit = first["changes"]["files"][0]["edits"][0]
    assert edit == {"old": "    return round(price - price * percent / 100)",
                    "new": "    return round(price - price * percent / 100, 2)", "via": "sed"}


def test_a_missing_runner_is_not_a_build_failure(imported: dict[str, Path]) -> None:
    verdict = verdict_of(imported["shop__shop-3"])
    assert not any(item.id in ("build_failure", "persistent_build_failure") for item in verdict.items)
    assert verdict.trajectory == [100.0]
    assert any("validated nothing" in w and "not installed" in w for w in verdict.warnings)
    document = json.loads(imported["shop__shop-3"].read_text())
    results = document["iterations"][0]["iteration_telemetry"]["test_results"]
    assert results["unavailable"] == "runner_missing" and results["suite"] == "runtests.py"
    # the checks that ran: the test run, and the `python -c` that printed the discounted price
    assert document["iterations"][0]["iteration_telemetry"]["actions"]["test_runs"] == 2


def test_a_cut_or_discarded_output_is_not_a_build_failure(imported: dict[str, Path]) -> None:
    verdict = verdict_of(imported["shop__shop-4"])
    assert not any(item.id in ("build_failure", "persistent_build_failure") for item in verdict.items)
    assert verdict.trajectory == [100.0]
    assert any("`| head`" in w and "redirected away" in w for w in verdict.warnings)


def test_an_expectation_rewritten_with_sed_after_it_failed_is_definite_when_held_back_fails(
        imported: dict[str, Path]) -> None:
    verdict = verdict_of(imported["shop__shop-2"])
    chasing = [item for item in verdict.items if item.id == "test_chasing"]
    assert len(chasing) == 1 and chasing[0].strength == "definite" and chasing[0].points < 0
    assert "8.99" in chasing[0].evidence and "held-back suite fails the same test" in chasing[0].evidence
    assert verdict.held_back is not None and verdict.held_back.resolved is False
    assert verdict.held_back.failing == ["tests/test_held_back.py::HeldBackTests::test_cents"]


def test_an_update_the_task_asks_for_with_the_held_back_suite_passing_is_a_weak_note(imported: dict[str, Path]) -> None:
    verdict = verdict_of(imported["shop__shop-5"])
    chasing = [item for item in verdict.items if item.id == "test_chasing"]
    assert len(chasing) == 1 and chasing[0].strength == "weak" and chasing[0].points == 0
    assert "test_chasing" not in verdict.anti_patterns
    assert verdict.held_back is not None and verdict.held_back.resolved is True


CODE_CHANGE = "--- a/shop/sums.py\n+++ b/shop/sums.py\n@@ -1,1 +1,1 @@\n-    return sum(xs)\n+    return sum(xs) + 1\n"


def _local_run(held_back_fails_same_test: bool, behaviour_changed: bool = True) -> dict:  # type: ignore[type-arg]
    """The agent changed the code (``behaviour_changed``), its run failed a test, and it replaced the
    test's expected value."""
    failing = "tests/test_x.py::test_total" if held_back_fails_same_test else "tests/test_x.py::test_other"
    first = {"changes": {"diff": CODE_CHANGE}} if behaviour_changed else {}
    return {"run": {"id": "r", "iterations_are": "local_runs", "max_iterations": 2},
            "iterations": [
                {"iteration_telemetry": {"iteration_number": 0, **first, "test_results": {
                    "suite": "pytest", "post_iteration": {"passed": 1, "failed": 1, "total": 2},
                    "tests": [{"name": "tests/test_x.py::test_total", "outcome": "failed"},
                              {"name": "tests/test_x.py::test_other", "outcome": "passed"}]}}},
                {"iteration_telemetry": {"iteration_number": 1, "changes": {"diff": (
                    "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -3,1 +3,1 @@ def test_total(\n"
                    "-    assert total([1, 2]) == 3\n+    assert total([1, 2]) == 4\n")},
                    "test_results": {"suite": "pytest", "post_iteration": {"passed": 2, "failed": 0, "total": 2},
                                     "hidden": {"passed": 1, "total": 2},
                                     "hidden_suites": [{"name": "FAIL_TO_PASS", "passed": 1, "total": 2, "tests": [
                                         {"name": failing, "outcome": "failed"}]}]}}}]}


SCORED = msgspec.structs.replace(DEFAULT, held_back=HeldBack(local_runs="scored"))


@pytest.mark.parametrize("same,changed,policy,strength", [
    (True, True, DEFAULT, "definite"), (False, True, DEFAULT, "weak"), (False, False, DEFAULT, "likely"),
    (True, True, SCORED, "definite"), (False, True, SCORED, "likely")])
def test_a_local_test_edit_is_named_blind_and_definite_only_when_the_held_back_suite_fails_that_test(
        tmp_path: Path, same: bool, changed: bool, policy: Policy, strength: str) -> None:
    """An expected value replaced by another after the agent changed the code's behaviour: judged
    blind (the default) a named note until the held-back suite fails the same test; with no
    behaviour change to fit, or with the held-back suite scoring the run, likely."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_local_run(same, changed)))
    chasing = [item for item in judge(load_run(str(path)), policy).items if item.id == "test_chasing"]
    assert len(chasing) == 1 and chasing[0].strength == strength


@pytest.mark.parametrize("before,after,how", [
    ("    self.assertEqual(result, [1, 2])", "    self.assertIn(result, [[1, 2], [2, 1]])", "membership in alternatives"),
    ("    assert ratio(3, 4) == 0.75", "    assert ratio(3, 4) == pytest.approx(0.75, abs=0.1)", "approximate"),
    ("    self.assertEqual(load(), {'a': 1})", "    self.assertIsNotNone(load())", "the value exists"),
])
def test_a_loosened_check_stays_likely_when_judged_blind(tmp_path: Path, before: str, after: str, how: str) -> None:
    run = _local_run(False)
    run["iterations"][1]["iteration_telemetry"]["changes"]["diff"] = (
        f"--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -3,1 +3,1 @@ def test_total(\n-{before}\n+{after}\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    chasing = [item for item in verdict_of(path).items if item.id == "test_chasing"]
    assert len(chasing) == 1 and chasing[0].strength == "likely" and chasing[0].points < 0
    assert "weakened_assertion" in chasing[0].evidence and how in chasing[0].evidence


def test_an_unchanged_check_is_no_loosening(tmp_path: Path) -> None:
    run = _local_run(False)
    run["iterations"][1]["iteration_telemetry"]["changes"]["diff"] = (
        "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -3,1 +3,2 @@ def test_total(\n"
        "     self.assertEqual(result, [1, 2])\n+    self.assertIn(2, result)\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    assert not [item for item in verdict_of(path).items if item.id == "test_chasing"]


def test_a_red_test_turned_green_by_a_code_change_is_test_driven(imported: dict[str, Path]) -> None:
    items = {item.id: item for item in verdict_of(imported["shop__shop-1"]).items}
    assert "test_driven_iteration" in items and items["test_driven_iteration"].points > 0
    assert "test_cents failed in the agent's run before the change" in items["test_driven_iteration"].evidence
    # the test turned green by rewriting its expectation earns nothing
    assert "test_driven_iteration" not in {item.id for item in verdict_of(imported["shop__shop-2"]).items}


def test_a_later_commit_copied_from_the_history_is_definite_and_reading_it_alone_a_note(
        imported: dict[str, Path]) -> None:
    copied = verdict_of(imported["shop__shop-6"])
    found = [item for item in copied.items if item.id == "repository_history"]
    assert len(found) == 1 and found[0].strength == "definite" and found[0].points == -15
    assert "git show" in found[0].evidence and copied.process_score == -30  # definite: the run is floored
    read = verdict_of(imported["shop__shop-7"])
    note = [item for item in read.items if item.id == "repository_history"]
    assert len(note) == 1 and note[0].points == 0 and note[0].strength == "weak"
    assert "git log --all" in note[0].evidence and "repository_history" not in read.anti_patterns


@pytest.mark.parametrize("command,found", [
    ("git log --all --oneline | head", ("git log --all --oneline", None)),
    ("git show 3f2a9c1", ("git show 3f2a9c1", "3f2a9c1")),
    ("cd /testbed && git show origin/main:django/x.py", ("git show origin/main:django/x.py", "origin/main")),
    ("git restore --source=abc1234 x.py", ("git restore --source=abc1234 x.py", "abc1234")),
    ("git reflog", ("git reflog", None)),
    ("git log --oneline -5", None), ("git show HEAD:django/x.py", None), ("git diff HEAD~1", None),
    ("git checkout -- x.py", None), ("git checkout django/forms/models.py", None), ("git diff --cached", None),
])
def test_history_reads_beyond_the_base(command: str, found: tuple[str, str | None] | None) -> None:
    assert history_read(command) == found


def test_the_held_back_outcome_is_in_every_report(imported: dict[str, Path], tmp_path: Path) -> None:
    path = str(imported["shop__shop-2"])
    as_json = json.loads(runner.invoke(app, ["score", path, "--format", "json"]).output)
    assert as_json["held_back"] == {"resolved": False, "passed": 2, "total": 3,
                                    "failing": ["tests/test_held_back.py::HeldBackTests::test_cents"], "failing_count": 1}
    table = runner.invoke(app, ["score", path], env={"COLUMNS": "100"}).output
    assert "held-back" in table and "not resolved: 2/3 held-back tests pass" in table
    markdown = runner.invoke(app, ["score", path, "--format", "markdown"]).output
    assert "- held-back: not resolved: 2/3 held-back tests pass" in markdown
    folder = imported["shop__shop-2"].parent
    rows = list(csv.DictReader(io.StringIO(runner.invoke(app, ["batch", str(folder), "--format", "csv"]).stdout)))
    by_id = {row["challenge"]: row for row in rows}
    assert (by_id["shop__shop-2"]["held_back_resolved"], by_id["shop__shop-2"]["held_back_passed"],
            by_id["shop__shop-2"]["held_back_total"]) == ("false", "2", "3")
    assert by_id["shop__shop-1"]["held_back_resolved"] == "true"
    page = tmp_path / "batch.html"
    assert runner.invoke(app, ["batch", str(folder), "--format", "html", "--output", str(page)]).exit_code == 0
    assert ">held</th>" in page.read_text() and "2/3" in page.read_text()
    batch_md = runner.invoke(app, ["batch", str(folder), "--format", "markdown"]).stdout
    assert "| held-back |" in batch_md and "| 2/3 |" in batch_md


@pytest.mark.parametrize("command,output,code,reason", [
    ("python -m pytest tests", "/usr/bin/python: No module named pytest\n", 1, "not installed"),
    ("pytest tests", "bash: pytest: command not found\n", 127, "not installed"),
    ("python tests/runtests.py", "python: can't open file '/testbed/tests/runtests.py': [Errno 2]\n", 2, "not installed"),
    ("python -m pytest tests 2>&1 | head -5", "===== test session starts =====\nplatform linux\n", 0, "`| head`"),
    ("python -m pytest tests 2>&1 | tail -3", "E   assert 1 == 2\n", 0, "`| tail`"),
    ("python -m pytest tests > /dev/null 2>&1 || echo failed", "failed\n", 0, "redirected away"),
    ("python -m pytest tests || echo 'tests failed'", "tests failed\n", 0, "echo"),
    ("python -m pytest tests -q", "", 0, "printed nothing"),
    ("python -m pytest tests", "ImportError while importing test module\nModuleNotFoundError: No module named 'numpy'\n", 4,
     "does not provide"),
    ("python -m pytest tests", ("<exception>An error occurred while executing the command: timed out after 60 seconds"
                                "</exception>\ntests/test_a.py ...."), -1, "timed out"),
])
def test_runs_that_validated_nothing_and_why(command: str, output: str, code: int, reason: str) -> None:
    found = unavailable(Step("", command, code, output, None), frozenset({"shop"}))
    assert found is not None and reason in found


@pytest.mark.parametrize("command,output,code", [
    ("python -m pytest tests", "ImportError while importing test module\nModuleNotFoundError: No module named 'shop.util'\n", 4),
    ("python -m pytest tests", "  File \"shop/price.py\", line 3\n    def f(:\nSyntaxError: invalid syntax\n", 1),
    ("python -m pytest tests -q", "2 passed in 0.01s\n", 0),
])
def test_runs_whose_runner_really_ran_are_not_excused(command: str, output: str, code: int) -> None:
    assert unavailable(Step("", command, code, output, None), frozenset({"shop"})) is None


def test_sed_commands_are_rebuilt_on_the_lines_shown() -> None:
    views = rebuild.Views()
    rebuild.observe(views, "nl -ba tests/test_x.py | sed -n '1,6p'",
                    "     1\tdef test_total():\n     2\t    assert total([1, 2]) == 3\n     3\t\n"
                    "     4\tdef test_empty():\n     5\t    assert total([]) == 0\n     6\t")
    found, missed = sed.sed_edits(views, ["sed", "-i", "s/== 3/== 4/", "tests/test_x.py"])
    assert not missed and [(e.removed, e.added, e.line, e.within) for e in found] == [
        (("    assert total([1, 2]) == 3",), ("    assert total([1, 2]) == 4",), 2, "test_total")]
    found, missed = sed.sed_edits(views, ["sed", "-i", "5d", "tests/test_x.py"])
    assert [(e.removed, e.added, e.within) for e in found] == [(("    assert total([]) == 0",), (), "test_empty")]
    found, _ = sed.sed_edits(views, ["sed", "-i", r"4a\    assert total([]) is not None", "tests/test_x.py"])
    assert [(e.added, e.line) for e in found] == [(("    assert total([]) is not None",), 5)]
    found, missed = sed.sed_edits(views, ["sed", "-i", r"s/\(total\)(\[1, 2\])/\1([2, 1])/", "tests/test_x.py"])
    assert found[0].added == ("    assert total([2, 1]) == 4",)
    found, missed = sed.sed_edits(views, ["sed", "-i", "s/x/y/", "tests/never_shown.py"])
    assert not found and missed == [("tests/never_shown.py", "`sed -i` on lines never shown")]
    found, missed = sed.sed_edits(views, ["sed", "-i", "1r other.py", "tests/test_x.py"])
    assert not found and missed == [("tests/test_x.py", "its sed script reads other.py, whose text is not in the log")]
    found, missed = sed.sed_edits(views, ["sed", "-i", "1y/ab/cd/", "tests/test_x.py"])
    assert not found and "is not rebuilt" in missed[0][1]


def test_sed_deleting_a_match_and_the_lines_after_it_is_rebuilt() -> None:
    """GNU sed's `/re/,+N` (flask-5014 took back its two-line check with `sed -i '/if not name:/,+1d'`,
    to run the suite on the unchanged code): each matching line and the N after it; a range whose
    lines were not all shown is not known."""
    views = rebuild.Views()
    rebuild.observe(views, "sed -n '1,5p' m.py", "def f(name):\n    if not name:\n        raise ValueError\n    return name\n\n")
    found, missed = sed.sed_edits(views, ["sed", "-i", "/if not name:/,+1d", "m.py"])
    assert not missed and [(e.removed, e.line) for e in found] == [(("    if not name:", "        raise ValueError"), 2)]
    assert [views.lines["m.py"][n] for n in (1, 2)] == ["def f(name):", "    return name"]
    found, missed = sed.sed_edits(views, ["sed", "-i", "/return name/,+5d", "m.py"])  # past the lines shown
    assert not found and missed == [("m.py", "`sed -i` on lines never shown")]


def test_a_plain_read_the_harness_cut_numbers_no_line() -> None:
    """mini-swe-agent keeps the head and the tail of a long output and elides the middle: the tail of
    a `cat F` so cut is not the lines after the head (flask-5014: line 193 read as `def
    before_app_request` where the file holds `if "." in name:`, and every sed at it matched nothing).
    Numbered lines say their own numbers, cut or not."""
    views = rebuild.Views()
    rebuild.observe(views, "cat m.py", "a = 1\nb = 2\nz = 26\n", cut=True)
    assert "m.py" not in views.lines
    rebuild.observe(views, "cat -n m.py", "     1\ta = 1\n     2\tb = 2\n    26\tz = 26\n", cut=True)
    assert views.lines["m.py"] == {1: "a = 1", 2: "b = 2", 26: "z = 26"}


def test_sed_reading_a_file_the_log_holds_inserts_its_lines() -> None:
    """`sed -i '691r replacement.txt' F` after `cat <<'EOF' > replacement.txt` (django-12774 wrote
    its fix so): the file's lines after the addressed line; a file never shown whole is not known."""
    views = rebuild.Views()
    rebuild.observe(views, "sed -n '1,3p' m.py", "def f():\n    return 1\n\n")
    texts = {"new.txt": "    if x:\n        return 2\n"}
    found, missed = sed.sed_edits(views, ["sed", "-i", "1r new.txt", "m.py"], None, texts.get)
    assert not missed and [(e.removed, e.added, e.line) for e in found] == [((), ("    if x:", "        return 2"), 2)]
    assert [views.lines["m.py"][n] for n in (1, 2, 3, 4)] == ["def f():", "    if x:", "        return 2", "    return 1"]
    found, missed = sed.sed_edits(views, ["sed", "-i", "/return 1/r new.txt", "m.py"], None, texts.get)
    assert [e.line for e in found] == [5] and not missed
    found, missed = sed.sed_edits(views, ["sed", "-i", "1r gone.txt", "m.py"], None, texts.get)
    assert not found and "reads gone.txt, whose text is not in the log" in missed[0][1]


def test_sed_inserting_at_a_line_not_shown_is_rebuilt_where_a_later_line_was_seen() -> None:
    """`sed -i '1i import sys' F` where only lines 68-70 were shown (sphinx-8035): the line exists,
    the text is known, the lines seen move down one; past the last line seen nothing is known."""
    views = rebuild.Views()
    rebuild.observe(views, "sed -n '68,70p' m.py", "a = 1\nb = 2\nc = 3\n")
    found, missed = sed.sed_edits(views, ["sed", "-i", "1i import sys", "m.py"])
    assert not missed and [(e.removed, e.added, e.line) for e in found] == [((), ("import sys",), 1)]
    assert views.lines["m.py"][69] == "a = 1" and views.lines["m.py"][1] == "import sys"
    found, missed = sed.sed_edits(views, ["sed", "-i", "40a\\    pass", "m.py"])
    assert [(e.added, e.line) for e in found] == [(("    pass",), 41)]
    for script in ("73i x = 0", "75a x = 0", "3c x = 0", "3d"):  # lines 70-72 are the ones seen
        found, missed = sed.sed_edits(views, ["sed", "-i", script, "m.py"])
        assert not found and missed, script


def test_a_sed_change_over_continued_lines_is_rebuilt_line_by_line_as_gnu_sed_writes_it() -> None:
    """`62,64c\\` with backslash-continued lines and `\\x27` quotes inside a single-quoted script
    (django-13933): the text is three lines and the quotes are quotes. Read as one line, the
    assertion it kept looked deleted, an accusation of test-chasing."""
    views = rebuild.Views()
    rebuild.observe(views, "sed -n '1,3p' tests/test_x.py",
                    '        msg = "[\'That choice is not valid.\']"\n        with self.assertRaisesMessage(E, msg):\n'
                    "            f.clean(Book.objects.create())\n")
    script = ("1,3c\\\n        book = Book.objects.create()\\\n        msg = \"[\\x27%s is not valid.\\x27]\" % book\\\n"
              "        with self.assertRaisesMessage(E, msg):\\\n            f.clean(book)")
    found, missed = sed.sed_edits(views, ["sed", "-i", script, "tests/test_x.py"])
    assert not missed and found[0].added == (
        "        book = Book.objects.create()", "        msg = \"['%s is not valid.']\" % book",
        "        with self.assertRaisesMessage(E, msg):", "            f.clean(book)"), found
    found, _ = sed.sed_edits(views, ["sed", "-i", "s/valid/a \\x27valid\\x27 choice/", "tests/test_x.py"])
    assert found[0].added == ("        msg = \"['%s is not a 'valid' choice.']\" % book",), found


def test_a_script_replace_and_a_heredoc_are_rebuilt() -> None:
    views = rebuild.Views()
    rebuild.seed_from_diff(views, "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")
    assert views.lines["m.py"] == {1: "def f():", 2: "    return 1"}
    found = rebuild.replace_text(views, "m.py", "return 1", "return 2", "script")
    assert [(e.removed, e.added, e.line) for e in found] == [(("    return 1",), ("    return 2",), 2)]
    assert rebuild.script_replacements("p.write_text(p.read_text().replace('a = 1', 'a = 2'))") == [("a = 1", "a = 2")]
    body = rebuild.heredoc_bodies("cat <<'EOF' > new.py\nx = 1\nEOF")
    assert body == [("cat <<'EOF' > new.py", "x = 1")]


@pytest.mark.parametrize("script,rebuilt", [
    ("p = 'm.py'\ns = open(p).read()\nopen(p, 'w').write(s.replace('return 1', 'return 2'))\n", True),
    ("p = 'm.py'\nlines = open(p).readlines()\nlines[1] = '    return 2\\n'\nopen(p, 'w').writelines(lines)\n", False),
    # xarray-4075: a replace made on the line a loop found is computed, not the first occurrence's
    (("p = 'm.py'\nout = [line.replace('return 1', 'return 2') if 'f' in line else line for line in open(p)]\n"
      "open(p, 'w').writelines(out)\n"), False),
    ("p = 'm.py'\nlines = open(p).readlines()\nlines[1] = lines[1].replace('1', '2')\nopen(p, 'w').writelines(lines)\n",
     False),
    # astropy-14369: the blocks bound to names first, then replaced
    (("p = 'm.py'\nold_block = \'\'\'    return 1\'\'\'\nnew_block = \'\'\'    return 2\'\'\'\ns = open(p).read()\n"
      "if old_block in s:\n    s = s.replace(old_block, new_block)\nopen(p, 'w').write(s)\n"), True),
    # a name bound twice holds the text of whichever ran last: not read
    ("p = 'm.py'\nold = 'return 3'\nold = 'return 1'\ns = open(p).read()\nopen(p, 'w').write(s.replace(old, 'return 2'))\n",
     False),
])
def test_a_script_written_before_and_run_now_is_rebuilt_by_its_literal_replacements(script: str, rebuilt: bool) -> None:
    """django-15695 wrote a script with a here-document and ran it in a later step: its
    ``.replace`` of literals is read as a script in a here-document is; a script that rewrites
    lines by number stays a change that is not rebuilt."""
    from procjudge.importers.probes import find_checks
    from procjudge.importers.replay import rebuild_steps

    steps = [Step("", "cat m.py", 0, "def f():\n    return 1\n", None),
             Step("", f"cat <<'EOF' > fix.py\n{script}EOF", 0, "", None), Step("", "python fix.py", 0, "", None)]
    ran = rebuild_steps(find_checks(steps, {"m.py": ""}, ("/testbed",), frozenset()), "", ("/testbed",))[-1]
    assert ("m.py", "script") in ran.writes
    if rebuilt:
        assert [(e.path, e.removed, e.added, e.line) for e in ran.edits] == [("m.py", ("    return 1",), ("    return 2",), 2)]
        assert not ran.unrecovered
    else:
        assert not ran.edits and ran.unrecovered == [("m.py", "a script's change")]


@pytest.mark.parametrize("command,rebuilt", [
    # django-12774: the lines written and read in one command, the here-document first
    ("cat <<'EOF' > new.txt\n    if x:\n        return 2\nEOF\nsed -i '1r new.txt' m.py", True),
    ("sed -i '1r new.txt' m.py && cat <<'EOF' > new.txt\n    if x:\n        return 2\nEOF", False),  # written after
    ("cat <<'EOF' >> new.txt\n    if x:\n        return 2\nEOF\nsed -i '1r new.txt' m.py", False),  # appended to
    ("sed -i '1r old.txt' m.py", True),  # written whole in an earlier step
    ("cd /testbed && cat <<'EOF' > new.txt\n    if x:\n        return 2\nEOF\nsed -i '1r new.txt' m.py", True),
    ("tee new.txt <<'EOF' > /dev/null\n    if x:\n        return 2\nEOF\nsed -i '1r new.txt' m.py", True),
])
def test_a_file_sed_reads_is_the_text_the_log_wrote_before(command: str, rebuilt: bool) -> None:
    from procjudge.importers.replay import rebuild_steps

    steps = [Step("", "cat m.py", 0, "def f():\n    return 1\n", None),
             Step("", "cat <<'EOF' > old.txt\n    if x:\n        return 2\nEOF", 0, "", None, writes=[("old.txt", "redirect")]),
             Step("", command, 0, "", None, writes=[("m.py", "sed")])]
    ran = rebuild_steps(steps, None, ("/testbed",))[-1]
    if rebuilt:
        assert [(e.added, e.line) for e in ran.edits if e.path == "m.py"] == [(("    if x:", "        return 2"), 2)]
    else:
        assert not [e for e in ran.edits if e.path == "m.py"]
        assert ("m.py", "its sed script reads new.txt, whose text is not in the log") in ran.unrecovered


@pytest.mark.parametrize("command,added,line", [
    # Terminal-Bench's agents write files behind `cd DIR &&` and with printf and echo
    ("cd /app && cat <<'EOF' > m.py\nx = 3\nEOF", ("x = 3",), 1),
    ("mkdir -p /app && cat > m.py <<'EOF'\nx = 3\nEOF", ("x = 3",), 1),
    ("tee m.py <<'EOF' > /dev/null\nx = 4\nEOF", ("x = 4",), 1),
    ("tee -a m.py <<EOF\nx = 5\nEOF", ("x = 5",), None),
    ('printf "####\\n#S #\\n#E##\\n#### " > m.py', ("####", "#S #", "#E##", "#### "), 1),
    ('printf "%s\\n" "x = 1" "y = 2" > m.py', ("x = 1", "y = 2"), 1),
    ('echo "Hello, world!" > m.py 2>&1', ("Hello, world!",), 1),
    ("echo x = 2 >>m.py", ("x = 2",), None),
    # what the shell that ran it decides, or words that may hold a redirection, stay not rebuilt
    ('echo "a\\nb" > m.py', None, None),
    ('echo -e "a\\nb" > m.py', None, None),
    ("printf '%5s' x > m.py", None, None),
    ("echo '>' > m.py", None, None),
    ("echo a > m.py b", None, None),
    ("echo x 2> m.py", None, None),
])
def test_a_file_written_by_echo_printf_tee_or_behind_cd_is_rebuilt(command: str, added: tuple[str, ...] | None,
                                                                     line: int | None) -> None:
    from procjudge.importers.replay import rebuild_steps

    ran = rebuild_steps([Step("", command, 0, "", None, writes=[("m.py", "redirect")])], None, ("/testbed",))[-1]
    if added is None:
        assert not ran.edits and ran.unrecovered == [("m.py", "a redirection whose text is not in the log")]
    else:
        assert [(e.path, e.removed, e.added, e.line) for e in ran.edits] == [("m.py", (), added, line)]


def test_a_heredoc_written_into_a_path_that_names_python_is_a_file_not_a_script() -> None:
    """A virtual environment's path holds the interpreter's name (``lib/python3.13/site-packages/``):
    ``cat <<'EOF' > env/lib/python3.13/site-packages/torch/__init__.py`` writes that file, and
    ``cat <<'EOF' | python3`` still runs a script (whose change is not a literal replacement)."""
    from procjudge.importers.replay import rebuild_steps

    path = "env/lib/python3.13/site-packages/torch/__init__.py"
    written = f"mkdir -p env/lib/python3.13/site-packages/torch && cat <<'EOF' > {path}\n__version__ = '2.8'\nEOF"
    ran = rebuild_steps([Step("", written, 0, "", None, writes=[(path, "redirect")])], None, ("/testbed",))[-1]
    assert [(e.path, e.added) for e in ran.edits] == [(path, ("__version__ = '2.8'",))]
    piped = "cat <<'EOF' | python3\nimport m\nEOF"
    ran = rebuild_steps([Step("", piped, 0, "", None, writes=[("m.py", "script")])], None, ("/testbed",))[-1]
    assert not ran.edits and ran.unrecovered == [("m.py", "a script's change that is not a str.replace of literals")]


@pytest.mark.parametrize("restore,rebuilt", [
    ("git checkout m.py", True), ("git checkout -- m.py", True), ("git restore m.py", True),
    ("git checkout HEAD -- m.py", True),
    ("git checkout abc123 -- m.py", False), ("git restore --source=v1 m.py", False), ("git checkout v1 m.py", False),
])
def test_an_edit_after_a_restore_applies_to_the_unchanged_file(restore: str, rebuilt: bool) -> None:
    """astropy-13236 and 100 more of the 500 put a file back with ``git checkout F`` and edited it
    again: the edit reads the lines the file held before the agent changed it, not the changed
    ones (whose text the sed no longer matches); a file taken from another revision is unknown."""
    from procjudge.importers.replay import rebuild_steps

    fix = "sed -i 's/return 1/return 2/' m.py"
    steps = [Step("", "cat m.py", 0, "def f():\n    return 1\n", None), Step("", fix, 0, "", None, writes=[("m.py", "sed")]),
             Step("", restore, 0, "", None, writes=[("m.py", "restore")]),
             Step("", "sed -i 's/return 1/return 3/' m.py", 0, "", None, writes=[("m.py", "sed")])]
    again = rebuild_steps(steps, None, ("/testbed",))[-1]
    if rebuilt:
        assert [(e.removed, e.added, e.line) for e in again.edits] == [(("    return 1",), ("    return 3",), 2)]
    else:
        assert not again.edits and again.unrecovered == [("m.py", "`sed -i` on lines never shown")], again.unrecovered
    # restored and edited in one command: the restore comes first
    one = rebuild_steps([*steps[:2], Step("", f"{restore} && sed -i 's/return 1/return 4/' m.py", 0, "", None,
                                          writes=[("m.py", "restore"), ("m.py", "sed")])], None, ("/testbed",))[-1]
    assert bool(one.edits) is rebuilt and (not rebuilt or one.edits[0].added == ("    return 4",))


def test_lines_a_here_document_adds_at_a_file_s_end_are_rebuilt() -> None:
    """django-13033 and 54 more edits of the 500 added a test at the end of a test file with
    ``cat <<'EOF' >> tests/ordering/tests.py``: its lines are the edit (at no known line: what was
    seen of the file need not reach its end), not a redirection whose text is not in the log."""
    from procjudge.importers.replay import rebuild_steps

    body = "\n    def test_new(self):\n        self.assertEqual(f(), 2)\n"
    steps = [Step("", "sed -n '1,2p' tests/test_x.py", 0, "class T:\n    pass\n", None),
             Step("", f"cat <<'EOF' >> tests/test_x.py{body}EOF", 0, "", None)]
    assert steps[1].writes == [("tests/test_x.py", "redirect")]
    added = rebuild_steps(steps, None, ("/testbed",))[-1]
    assert [(e.path, e.removed, e.added, e.line, e.how) for e in added.edits] == [
        ("tests/test_x.py", (), ("    def test_new(self):", "        self.assertEqual(f(), 2)"), None, "redirect")]
    assert not added.unrecovered
    rewritten = rebuild_steps([steps[0], Step("", f"cat <<'EOF' > tests/test_x.py{body}EOF", 0, "", None)], None,
                              ("/testbed",))[-1]
    assert rewritten.edits[0].removed == ("class T:", "    pass")  # '>' writes the file whole, as before


def test_swe_agent_trajectories_read_aci_and_editor_actions() -> None:
    from procjudge.importers.swe_agent import aci_steps, read_trajectory

    zero = read_trajectory(str(SWE / "marshmallow-code__marshmallow-1867.aci.traj"))
    found = list(aci_steps(zero["trajectory"]))
    edits = [s for s in found if s.writes]
    # the first `edit 1475:1475` was refused by the editor's linter (nothing changed); the second applied
    assert [s.editor["command"] for s in edits if s.editor] == ["create", "line_edit", "line_edit"]
    assert not any(s.writes for s in found if "syntax error" in s.output)
    one = read_trajectory(str(SWE / "marshmallow-code__marshmallow-1867.function_calling.traj"))
    steps = list(aci_steps(one["trajectory"]))
    editor = [s.editor for s in steps if s.editor and s.editor["command"] == "str_replace"]
    assert editor and editor[-1]["path"] == "/testbed/src/marshmallow/fields.py"
    assert "round(value.total_seconds()" in editor[-1]["new_str"]


def test_the_cursor_editor_replaces_its_selection(tmp_path: Path) -> None:
    """SWE-agent 0.x's cursor tools: ``set_cursors 1475 1475`` then ``edit`` ... ``end_of_edit``
    replaces the selection; a refused edit (its linter) changes nothing and keeps the selection."""
    from procjudge.importers.swe_agent import _cursors_after, aci_steps, read_trajectory

    source = SWE / "marshmallow-code__marshmallow-1867.cursors.traj"
    found = list(aci_steps(read_trajectory(str(source))["trajectory"]))
    edits = [s.editor for s in found if s.writes and s.editor]
    assert [(e["command"], e.get("first"), e.get("last")) for e in edits] == [
        ("create", None, None), ("line_edit", 1, 1), ("line_edit", 1475, 1475)]
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "swe-agent", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(next(out.rglob("*.json")).read_text())
    files = {f["path"]: f for f in document["iterations"][-1]["iteration_telemetry"]["changes"]["files"]}
    assert files["src/marshmallow/fields.py"]["status"] == "modified"
    assert [e["new"].strip() for e in files["src/marshmallow/fields.py"]["edits"]] == [
        "return int(round(value.total_seconds() / base_unit.total_seconds()))  # round to nearest int"]
    # the selection after an edit is its new lines; a refused edit leaves it; START 0 inserts
    assert _cursors_after("edit\na\nb\nend_of_edit", "File updated.", (5, 9)) == (5, 6)
    refused = "Your proposed edit has introduced new syntax error(s)."
    assert _cursors_after("edit\na\nb\nend_of_edit", refused, (5, 9)) == (5, 9)
    assert _cursors_after("set_cursors 0 0", "", None) == (0, 0)
    assert _cursors_after("ls", "START_CURSOR moved to 3\nEND_CURSOR moved to 4", None) == (3, 4)
    assert _cursors_after("ls", "", None) is None


def test_the_windowed_editor_s_replace_all_flag_is_an_edit() -> None:
    """SWE-agent 1.x's ``edit 'search' 'replace' False`` (its replace-all flag written out) edits
    the open file, as the three-word form does; a fourth word that is not a flag is not read."""
    from procjudge.importers.swe_agent import _aci_step

    shown = "Replaced 1 occurrences. Please review the changes and make sure they are correct"
    step = _aci_step("edit 'def f() -> int' 'def f() -> int:' False", "", shown, "/repo/tests/colon.py")
    assert step is not None and step.editor is not None
    assert (step.editor["command"], step.editor["old_str"], step.editor["new_str"]) == (
        "str_replace", "def f() -> int", "def f() -> int:")
    assert step.writes == [("/repo/tests/colon.py", "edit")]
    other = _aci_step("edit 'a' 'b' maybe", "", shown, "/repo/m.py")
    assert other is not None and not other.writes


def test_one_bad_trajectory_costs_one_file(tmp_path: Path) -> None:
    folder = tmp_path / "trajs"
    folder.mkdir()
    for name in ("shop__shop-1", "shop__shop-2"):
        shutil.copy(MINI2 / "trajs" / name / f"{name}.traj.json", folder / f"{name}.traj.json")
    broken = json.loads((SWE / "marshmallow-code__marshmallow-1867.aci.traj").read_text())
    broken["history"][3] = [broken["history"][3]]  # a list where a message should be
    broken["info"] = ["not", "an", "object"]
    (folder / "broken.traj").write_text(json.dumps(broken))
    (folder / "garbage.traj").write_text("{not json")
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "swe-agent", str(folder), "--out", str(out)])
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert "garbage.traj" in result.output
    # the good files are written, and so is what the broken one's readable actions show
    written = sorted(path.name for path in out.rglob("*.json"))
    assert written == ["broken.json", "shop__shop-1.json", "shop__shop-2.json"], written


def test_the_importer_never_writes_a_run_that_score_refuses(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for source in (MINI2 / "trajs", ROOT / "tests" / "fixtures" / "swe_agent" / "trajs"):
        runner.invoke(app, ["import", "swe-agent", str(source), "--out", str(out)])
    written = list(out.rglob("*.json"))
    assert len(written) >= 7
    for path in written:
        result = runner.invoke(app, ["score", str(path)])
        assert result.exit_code == 0, (path, result.output)


def _trajectory(steps: list[Step], hidden: bool = True) -> Trajectory:
    suites = [{"name": "FAIL_TO_PASS", "passed": 1, "total": 2,
               "tests": [{"name": "t1", "outcome": "passed"}, {"name": "t2", "outcome": "failed"}]}] if hidden else []
    return Trajectory(instance="i", agent="a", source="swe-agent", steps=steps, hidden=suites,
                      submission="--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")


def test_a_log_with_no_validated_check_is_one_iteration_that_the_held_back_suite_does_not_score(tmp_path: Path) -> None:
    steps = [Step("", "sed -i 's/x = 1/x = 2/' m.py", 0, "", None),
             Step("", "python -m pytest tests", 1, "python: No module named pytest\n", None),
             Step("", "cat m.py", 0, "x = 2\n", None)]
    document = convert_trajectory(_trajectory(steps))
    assert len(document["iterations"]) == 1
    results = document["iterations"][0]["iteration_telemetry"]["test_results"]
    assert results["unavailable"] == "runner_missing" and "post_iteration" not in results
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    verdict = verdict_of(path)
    # blind: nothing validated scores 0, never the held-back pass rate (50), and the missing runner is not charged
    assert verdict.trajectory == [0.0] and not any(i.id.endswith("build_failure") for i in verdict.items)
    assert not any(i.id == "no_local_validation" for i in verdict.items)
    assert any("nothing validated" in w and "not scored" in w for w in verdict.warnings)
    assert verdict.held_back is not None and verdict.held_back.passed == 1  # shown beside the score
    # the held-back suite scores it only when the policy says so
    assert judge(load_run(str(path)), SCORED).trajectory == [50.0]
    never = convert_trajectory(_trajectory([Step("", "sed -i 's/x = 1/x = 2/' m.py", 0, "", None)]))
    assert never["iterations"][0]["iteration_telemetry"]["test_results"]["unavailable"] == "not_a_test_run"
    # imported without its report it is the same run, not "nothing to judge"
    blind = convert_trajectory(_trajectory(steps, hidden=False))
    assert len(blind["iterations"]) == 1
    with pytest.raises(NothingLogged):  # no edit and no submission: nothing to judge
        convert_trajectory(Trajectory(instance="i", agent="a", source="swe-agent", steps=[steps[2]], submission=""))
    from procjudge.importers.reports import hidden_suites
    assert hidden_suites({"resolved": False}, "a__b-2") == [{"name": "resolved", "passed": 0, "total": 1}]


@pytest.mark.parametrize("command,output,counted", [
    ("pytest x.py", "=========================== 1 passed in 0.19 seconds ===========================\n", (1, 0)),
    ("pytest x.py",
     "\x1b[32m====== \x1b[32m\x1b[1m2 passed\x1b[0m, \x1b[33m216 deselected\x1b[0m\x1b[32m in 1.37s\x1b[0m ======\n",
     (2, 0)),
])
def test_old_pytest_summaries_and_coloured_output_are_counted(command: str, output: str, counted: tuple[int, int]) -> None:
    step = Step("", command, 0, output, None)
    assert step.counts is not None and (step.counts.passed, step.counts.failed) == counted


@pytest.mark.parametrize("command,output", [
    ("python tests/runtests.py django.contrib.contenttypes", "\nRan 0 tests in 0.000s\n\nOK\n"),
    ("pytest x.py -k nothing", "collected 3 items / 3 deselected\n\n===== 3 deselected in 0.01s =====\n"),
    ("pytest x.py", "===================== no tests ran in 0.02s =====================\n"),
])
def test_a_run_that_collected_no_test_validated_nothing(command: str, output: str) -> None:
    assert unavailable(Step("", command, 5, output, None)) == "it ran no test"


@pytest.mark.parametrize("command", ["pytest --fixtures x.py", "pytest -V", "python -m pytest --co -q tests", "tox -l",
                                     "git checkout tox.ini", "cat pytest.ini"])
def test_commands_that_run_no_test_are_not_test_runs(command: str) -> None:
    assert Step("", command, 0, "", None).test is None


@pytest.mark.parametrize("command,failed", [
    ("make", True), ("cargo build", True),
    ("cd reproduction && make html && grep foo _build/html/index.html", False),  # grep's exit code, not make's
    ("make 2>&1 | tail -5", False),  # tail's exit code
])
def test_a_build_fails_only_by_its_own_exit_code(command: str, failed: bool) -> None:
    assert (Step("", command, 2, "error", None).failed_build is not None) == failed


def test_reports_are_found_beside_flat_swe_agent_runs_or_in_a_results_list(tmp_path: Path) -> None:
    from procjudge.importers.reports import find_report
    from procjudge.importers.swe_agent import agent_from_path

    run = tmp_path / "gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1"
    (run / "logs" / "x__y-1").mkdir(parents=True)
    (run / "logs" / "x__y-1" / "report.json").write_text(json.dumps({"x__y-1": {"resolved": True}}))
    trajectory = run / "x__y-1.traj"
    assert find_report(None, "x__y-1", str(trajectory)) == {"x__y-1": {"resolved": True}}
    assert agent_from_path(str(trajectory), "x__y-1") == "gpt4"
    assert agent_from_path(str(tmp_path / "sonnet" / "trajs" / "x__y-1" / "x__y-1.traj.json"), "x__y-1") == "sonnet"
    listing = tmp_path / "results.json"
    listing.write_text(json.dumps({"resolved": ["a__b-1"], "unresolved": ["a__b-2"], "no_logs": []}))
    assert find_report(str(listing), "a__b-1", str(trajectory)) == {"resolved": True}
    assert find_report(str(listing), "a__b-2", str(trajectory)) == {"resolved": False}
    assert find_report(str(listing), "a__b-3", str(trajectory)) is None
    from procjudge.importers.reports import hidden_suites
    assert hidden_suites({"resolved": False}, "a__b-2") == [{"name": "resolved", "passed": 0, "total": 1}]


def test_a_test_file_repaired_so_that_it_runs_is_a_named_note_not_an_accusation(tmp_path: Path) -> None:
    run = {"run": {"id": "r", "iterations_are": "local_runs", "max_iterations": 2}, "iterations": [
        {"iteration_telemetry": {"iteration_number": 0, "build": {"status": "failure", "errors": [
            "ImportError while importing test module tests/test_x.py: cannot import name 'total' from 'shop.price'"]},
            "test_results": {"suite": "pytest tests"}}},
        {"iteration_telemetry": {"iteration_number": 1, "changes": {"diff": (
            "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1,1 +1,1 @@\n"
            "-from shop.price import total\n+from shop.sums import total\n")},
            "test_results": {"suite": "pytest tests", "post_iteration": {"passed": 2, "failed": 0, "total": 2}}}}]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    verdict = verdict_of(path)
    notes = [item for item in verdict.items if item.id == "test_chasing"]
    assert len(notes) == 1 and notes[0].points == 0 and notes[0].strength == "weak"
    assert "so that it runs" in notes[0].evidence and "test_chasing" not in verdict.anti_patterns
    # an expected value changed after the build failure is no repair: weak (no failure named the test) ...
    run["iterations"][1]["iteration_telemetry"]["changes"]["diff"] = (
        "--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -3,1 +3,1 @@ def test_total(\n"
        "-    assert total([1, 2]) == 3\n+    assert total([1, 2]) == 4\n")
    path.write_text(json.dumps(run))
    assert [(i.strength, "so that it runs" in i.evidence) for i in verdict_of(path).items if i.id == "test_chasing"] == [
        ("weak", False)]
    # ... and likely once the agent's run had failed that test by name
    run["iterations"][0]["iteration_telemetry"] = {"iteration_number": 0, "test_results": {
        "suite": "pytest tests", "post_iteration": {"passed": 1, "failed": 1, "total": 2},
        "tests": [{"name": "tests/test_x.py::test_total", "outcome": "failed"}]}}
    path.write_text(json.dumps(run))
    # (no change of the code's behaviour for the new value to fit: likely whether the held-back suite scores or not)
    assert [i.strength for i in judge(load_run(str(path)), SCORED).items if i.id == "test_chasing"] == ["likely"]
    assert [i.strength for i in verdict_of(path).items if i.id == "test_chasing"] == ["likely"]


def test_the_narrow_batch_table_never_splits_a_finding_name(imported: dict[str, Path]) -> None:
    folder = imported["shop__shop-6"].parent
    table = runner.invoke(app, ["batch", str(folder)], env={"COLUMNS": "80"}).stdout
    assert "repository_history" in table or "repository_histo…" in table
    assert "\ny " not in table.replace("│", " ").replace("  ", " ")  # no 'repository_histor' / 'y' split


def test_patches_applied_from_a_heredoc_or_a_written_file_are_rebuilt() -> None:
    patch = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    later = patch.replace("return 2", "return 3").replace("return 1", "return 2")
    submission = "diff --git a/m.py b/m.py\n" + patch.replace("return 2", "return 3")
    steps = [Step("", "cat > fix.patch <<'EOF'\n" + patch + "EOF", 0, "", None), Step("", "git apply fix.patch", 0, "", None),
             Step("", "pytest tests", 0, "1 passed in 0.1s\n", None),
             Step("", "git apply <<'EOF'\n" + later + "EOF", 0, "", None), Step("", "pytest tests", 0, "1 passed in 0.1s\n",
                                                                                None),
             Step("", "patch -p1 < other.diff", 0, "", None), Step("", "pytest tests", 0, "1 passed in 0.1s\n", None)]
    document = convert_trajectory(Trajectory(instance="i", agent="a", source="s", steps=steps, submission=submission))
    files = [{f["path"]: f for f in it["iteration_telemetry"]["changes"]["files"]} for it in document["iterations"]]
    assert files[0]["m.py"]["edits"] == [{"old": "    return 1", "new": "    return 2", "via": "patch"}]
    assert files[0]["m.py"]["status"] == "modified" and not files[0]["m.py"]["scratch"]
    assert files[1]["m.py"]["edits"] == [{"old": "    return 2", "new": "    return 3", "via": "patch"}]
    assert any("a patch whose text is not in the log" in note for note in document["run"]["notes"])


def test_an_edit_that_could_not_be_rebuilt_is_a_not_checked_reason(tmp_path: Path) -> None:
    steps = [Step("", "sed -i 's/x = 1/x = 2/' m.py", 0, "", None), Step("", "pytest tests", 0, "1 passed in 0.1s\n", None)]
    submission = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -5,1 +5,1 @@\n-y = 1\n+y = 2\n"
    document = convert_trajectory(Trajectory(instance="i", agent="a", source="s", steps=steps, submission=submission))
    assert document["iterations"][0]["iteration_telemetry"]["changes"]["unrebuilt"] == [
        "m.py: `sed -i` matched none of the lines shown"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    reasons = {n.detector: n.reason for n in verdict_of(path).not_checked}
    assert reasons["test_chasing"].startswith("partly: 1 edit(s) could not be rebuilt")


def test_a_sed_replacement_naming_a_group_the_expression_lacks_is_not_rebuilt() -> None:
    """`sed -E 's/\\(name\\)/\\1s/'`: in an extended expression `\\(` is a parenthesis, so there is no
    group 1 and GNU sed refuses the script ("invalid reference \\1 on `s' command's RHS"); the file's
    change is named as not rebuilt, and the import goes on."""
    views = rebuild.Views()
    views.see("m.py", {1: "x = name(1)", 2: "y = (name)"})
    found, missed = sed.sed_edits(views, ["sed", "-E", "-i", r"s/\(name\)/\1s/", "m.py"])
    assert found == [] and missed == [("m.py", "`sed -i` matched none of the lines shown")]
    assert views.lines["m.py"] == {1: "x = name(1)", 2: "y = (name)"}


def test_sed_basic_expressions_anchor_only_at_their_ends() -> None:
    from procjudge.importers.sed import compile_sed

    regex = compile_sed(r"r'\^\[\\w.@+-\]+$'", extended=False)
    assert regex is not None and regex.search(r"    regex = r'^[\w.@+-]+$'")
    assert compile_sed("^foo$", extended=False).pattern == "^foo$"  # type: ignore[union-attr]
    assert compile_sed("a$b^c", extended=False).pattern == r"a\$b\^c"  # type: ignore[union-attr]


_LINES = ["    return self.name == other.name", "x = a.b.c(1) + a.b.c(2)", "path = '/tmp/x' # $HOME ^up",
          "if (a|b) and [c] or {d}: e*f + g?", r"s = 'back\slash' & more & more", "\ttabbed  line  ", "ok"]


@pytest.mark.parametrize("script", [
    "s/name/label/", "s/name/label/g", "s/a.b.c/x/g", r"s/a\.b\.c/x/g", r"s/c(1)/c(3)/", r"s/\$HOME/~/",
    r"s/ \^up/ down/", "s#/tmp/x#/var/y#", r"s/(a|b)/(a)/", r"s/\[c\]/[C]/", r"s/{d}/{D}/", r"s/e\*f/f*e/",
    "s/g?/h/", "s/more/[&]/g", r"s/more/\&/", r"s/more/a\nb/", r"s/more/a\tb/", r"s/ & / and /g", r"s/\\/\//",
    r"s/\(name\)/\1s/", "s/NAME/x/I", "s/name/x/i", "s/  /_/g", r"s/line/\x27q\x27/", "s/ok/&&/",
    r"s/self\.name/self.label/", r"s/\s\+/ /g", "s/[[:space:]]/_/g", r"s/\<ok\>/fine/", "s/x\\/y/z/",
])
@pytest.mark.parametrize("extended", [False, True])
def test_plain_sed_substitutions_replace_exactly_as_the_regular_expression_does(script: str, extended: bool) -> None:
    """A substitution whose expression is plain text is replaced without a regular expression: on
    every line, the same text as the compiled expression writes (and none compiled for it)."""
    words = ["sed", "-E", "-i", script, "m.py"] if extended else ["sed", "-i", script, "m.py"]
    command = sed.parse_sed(script)
    assert command is not None and command[0].verb == "s"
    target = sed._sed_replacement(command[0].replacement)
    folded = "I" in command[0].flags or "i" in command[0].flags
    plain = sed._plain(command[0], target, extended, folded)
    regex = sed.compile_sed(command[0].pattern, extended, 2 if folded else 0)  # re.IGNORECASE
    views = rebuild.Views()
    views.see("m.py", {k + 1: line for k, line in enumerate(_LINES)})
    found, _ = sed.sed_edits(views, words)
    if regex is None:
        assert plain is None
        return
    count = 0 if "g" in command[0].flags else 1
    try:
        expected = {k + 1: regex.sub(target, line, count=count) for k, line in enumerate(_LINES)}
    except ValueError:  # a group the expression lacks: nothing rebuilt, and no plain reading
        assert plain is None and found == []
        return
    written = {e.line: "\n".join(e.added) for e in found}
    assert written == {n: text for n, text in expected.items() if text != _LINES[n - 1]}
    if plain is not None:  # the plain reading gives the same text line by line
        assert {n: line.replace(plain[0], plain[1], count or -1) for n, line in enumerate(_LINES, 1)} == expected


def test_which_sed_expressions_are_plain_text() -> None:
    assert sed.plain_text("self.name", extended=False) is None  # `.` is any character
    assert sed.plain_text(r"self\.name", extended=False) == "self.name"
    assert sed.plain_text("c(1)", extended=False) == "c(1)"  # basic: parentheses are text
    assert sed.plain_text("c(1)", extended=True) is None  # extended: a group
    assert sed.plain_text(r"\(x\)", extended=False) is None
    assert sed.plain_text("^x", extended=False) is None and sed.plain_text("x$", extended=False) is None
    assert sed.plain_text("a$b", extended=False) == "a$b"  # not at the end: text
    assert sed.plain_text(r"\s", extended=False) is None and sed.plain_text("", extended=False) is None
    assert sed._plain_replacement("\\g<0>!", "x") == "x!"
    assert sed._plain_replacement("\\g<1>", "x") is None and sed._plain_replacement("a\\\\b", "x") is None

def _aci(action: str, observation: str, open_file: str = "n/a") -> dict:  # type: ignore[type-arg]
    return {"action": action, "observation": observation, "thought": "", "response": "",
            "state": json.dumps({"open_file": open_file, "working_dir": "/repo__x"})}


def test_a_swe_agent_aci_run_that_edits_a_failing_test_expectation(tmp_path: Path) -> None:
    """The SWE-agent 0.x shape: `open` shows numbered lines, `edit N:M` replaces them in the open
    file, pytest runs in the shell with no return codes."""
    test_file = "/repo__x/tests/test_calc.py"
    failing = ("tests/test_calc.py::test_total FAILED\n=================== short test summary info ===\n"
               "FAILED tests/test_calc.py::test_total - assert 3 == 4\n============ 1 failed, 1 passed in 0.05s ============\n")
    trajectory = {"environment": "swe_main", "history": [], "info": {
        "exit_status": "submitted",
        "submission": ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ "
                       "b/tests/test_calc.py\n"
                       "@@ -4,1 +4,1 @@ def test_total():\n-    assert total([1, 2]) == 4\n+    assert total([1, 2]) == 3\n")},
        "trajectory": [
            _aci("pytest tests/test_calc.py -v", failing),
            _aci("open tests/test_calc.py", f"[File: {test_file} (6 lines total)]\n1:from calc import total\n2:\n"
                 "3:def test_total():\n4:    assert total([1, 2]) == 4\n5:\n6:def test_empty():", test_file),
            _aci("edit 4:4\n    assert total([1, 2]) == 3\nend_of_edit",
                 f"[File: {test_file} (6 lines total)]\n4:    assert total([1, 2]) == 3", test_file),
            _aci("pytest tests/test_calc.py -v", "tests/test_calc.py::test_total PASSED\ntests/test_calc.py::test_empty PASSED\n"
                 "============ 2 passed in 0.04s ============\n", test_file),
            _aci("submit", "", test_file)]}
    folder = tmp_path / "gpt4__SWE-bench_Lite__default__t-0.00__p-0.95__c-2.00__install-1"
    folder.mkdir()
    (folder / "x__x-1.traj").write_text(json.dumps(trajectory))
    (folder / "logs" / "x__x-1").mkdir(parents=True)
    (folder / "logs" / "x__x-1" / "report.json").write_text(json.dumps({"x__x-1": {"resolved": False, "tests_status": {
        "FAIL_TO_PASS": {"success": [], "failure": ["tests/test_calc.py::test_total"]},
        "PASS_TO_PASS": {"success": ["tests/test_calc.py::test_empty"], "failure": []}}}}))
    out = tmp_path / "out"
    assert runner.invoke(app, ["import", "swe-agent", str(folder), "--out", str(out)]).exit_code == 0
    written = list(out.rglob("*.json"))
    assert [p.parent.name for p in written] == ["gpt4"] and written[0].stem == "x__x-1"
    document = json.loads(written[0].read_text())
    edit = document["iterations"][0]["iteration_telemetry"]["changes"]["files"][0]["edits"][0]
    assert edit == {"old": "    assert total([1, 2]) == 4", "new": "    assert total([1, 2]) == 3", "via": "editor"}
    verdict = verdict_of(written[0])
    chasing = [item for item in verdict.items if item.id == "test_chasing"]
    assert len(chasing) == 1 and chasing[0].strength == "definite"  # the held-back suite fails test_total
    assert verdict.held_back is not None and verdict.held_back.failing == ["tests/test_calc.py::test_total"]


def test_a_reproduction_left_in_the_patch_handed_in_is_scratch_submitted_and_a_container_run_is_not(tmp_path: Path) -> None:
    """The importer marks the final diff as the submission only when the log carries one; the rule
    reads only such a patch: a file a Terminal-Bench agent creates and runs may be its deliverable."""
    steps = [Step("", "cat > reproduce_bug.py <<'EOF'\nimport m\nprint(m.x)\nEOF", 0, "", None),
             Step("", "python reproduce_bug.py", 0, "1\n", None),
             Step("", "sed -i 's/x = 1/x = 2/' m.py", 0, "", None),
             Step("", "python reproduce_bug.py", 0, "2\n", None)]
    patch = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
             "diff --git a/reproduce_bug.py b/reproduce_bug.py\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/reproduce_bug.py\n@@ -0,0 +1,2 @@\n+import m\n+print(m.x)\n"
             "diff --git a/out.png b/out.png\nnew file mode 100644\nindex 0000000..1d2e3f4\n"
             "Binary files /dev/null and b/out.png differ\n")
    handed_in = convert_trajectory(Trajectory(instance="i", agent="a", source="swe-agent", steps=steps, submission=patch))
    assert handed_in["iterations"][-1]["iteration_telemetry"]["changes"]["submitted"] is True
    path = tmp_path / "run.json"
    path.write_text(json.dumps(handed_in))
    (item,) = [i for i in verdict_of(path).items if i.id == "scratch_submitted"]
    assert item.points == -3 and item.strength == "definite", item  # two files: -2 for one, -5 at four
    assert "reproduce_bug.py (run as its own check: `python reproduce_bug.py`)" in item.evidence
    assert "out.png (a script's output)" in item.evidence  # a binary file: git's header alone creates it
    container = convert_trajectory(Trajectory(instance="i", agent="a", source="terminal-bench", steps=steps))
    assert "submitted" not in (container["iterations"][-1]["iteration_telemetry"].get("changes") or {})
    path.write_text(json.dumps(container))
    verdict = verdict_of(path)
    assert not any(i.id == "scratch_submitted" for i in verdict.items)
    reasons = {n.detector: n.reason for n in verdict.not_checked}
    assert reasons.get("scratch_submitted", "").startswith("no patch handed in"), reasons


def test_with_no_submitted_diff_the_agents_own_scripts_are_scratch_and_a_file_made_then_edited_is_created() -> None:
    """A log without the submitted diff (a session, a container's trial, a completion log): a
    `reproduce_*.py` the agent made, a folder it made and deleted again, are its own throw-away
    files, as they are for the code's edits; a new module it made and kept is the code. A file made
    and then edited in one iteration is created in it, not modified."""
    from procjudge.importers.toolcalls import editor_step

    steps = [editor_step({"command": "create", "path": "/testbed/reproduce_issue.py", "file_text": "import m\n"}, "",
                         None, "File created successfully", None),
             editor_step({"command": "str_replace", "path": "/testbed/reproduce_issue.py", "old_str": "import m\n",
                          "new_str": "import m\nprint(m.x)\n"}, "", None, "The file has been edited.", None),
             Step("", "mkdir -p tmpapp && echo 'X = 1' > tmpapp/settings.py", 0, "", None),
             Step("", "mkdir -p reproduce_app && echo 'class M: pass' > reproduce_app/models.py", 0, "", None),
             Step("", "echo 'print(2)' > reproduce_issue.py.new && mv reproduce_issue.py.new reproduce_issue.py", 0, "", None),
             editor_step({"command": "create", "path": "/testbed/helpers.py", "file_text": "def h():\n    return 2\n"}, "",
                         None, "File created successfully", None),
             # the Django project and app a reproduction sets up at the root (OpenHands django-15973, -14017, -11066)
             Step("", "mkdir -p test_project/core && echo 'X = 1' > test_project/core/models.py", 0, "", None),
             editor_step({"command": "create", "path": "/testbed/testapp/models.py", "file_text": "class M: pass\n"}, "",
                         None, "File created successfully", None),
             Step("", "mkdir -p contenttypes_tests && cp tests/contenttypes_tests/test_operations.py contenttypes_tests/", 0, "",
                  None),
             # a new test module in the repository's own tests/, and a folder holding a file of the repository's own
             Step("", "echo 'def test_h(): pass' > tests/test_helpers.py", 0, "", None),
             Step("", "sed -i 's/a/b/' test_utils/base.py && echo 'Y = 2' > test_utils/extra.py", 0, "", None),
             # a script to run the tests (OpenHands django-11206, -12325), a source file's working copy (matplotlib-24026)
             Step("", "echo 'import django' > run_tests.py && echo 'x = 3' > lib/stackplot.py.new", 0, "", None),
             Step("", "echo '@skip' > tests/test_mock.py.new", 0, "", None),  # a test's copy carries the test's edit
             Step("", "sed -i 's/x = 1/x = 2/' m.py", 0, "", None),
             Step("", "python reproduce_issue.py", 0, "2\n", None),
             Step("", "rm -rf tmpapp", 0, "", None)]
    document = convert_trajectory(Trajectory(instance="i", agent="a", source="claude-code", steps=steps))
    files = {f["path"]: (f["status"], f["scratch"])
             for entry in document["iterations"] for f in entry["iteration_telemetry"]["changes"]["files"]}
    assert files["reproduce_issue.py"] == ("created", True)
    assert files["tmpapp/settings.py"][1] is True and files["tmpapp"] == ("deleted", True)
    assert files["reproduce_app/models.py"][1] is True  # the app a reproduction set up, in a folder named for it
    assert files["reproduce_issue.py.new"][1] is True  # django-13568 (OpenHands) wrote its script anew, then moved it
    assert files["test_project/core/models.py"][1] is True and files["testapp/models.py"][1] is True
    assert files["contenttypes_tests/test_operations.py"][1] is True
    assert files["tests/test_helpers.py"][1] is False
    assert files["run_tests.py"][1] is True and files["lib/stackplot.py.new"][1] is True
    assert files["tests/test_mock.py.new"][1] is False
    assert files["test_utils/extra.py"][1] is False  # beside test_utils/base.py, the repository's own
    assert files["helpers.py"] == ("created", False) and files["m.py"] == ("modified", False)


def _checks_of(steps: list[Step]) -> list[tuple[str, str]]:
    document = convert_trajectory(Trajectory(instance="i", agent="a", source="swe-agent", steps=steps, submission=None))
    return [(c["command"], c["outcome"]) for entry in document["iterations"]
            for c in entry["iteration_telemetry"].get("checks") or []]


def test_a_reproduction_printing_what_it_printed_on_the_unchanged_code_shows_the_bug_still_there() -> None:
    """sympy-18763 (OpenHands): reproduce.py printed `3 \\left. - x + y \\right|...` on the unchanged
    code and, exit 0 each time, the same after each of 17 edits: the behaviour it reproduces never
    changed, so those runs are failures, not passes. Output that changed is a pass; so is the same
    output from a script rewritten since, or from a script not named as a reproduction."""
    wrong, right = "LaTeX: 3 \\left. - x + y \\right|", "LaTeX: 3 \\left. \\left(- x + y\\right) \\right|"
    write = Step("", "cat > reproduce.py <<'EOF'\nprint(latex(expr))\nEOF", 0, "", None)
    steps = [write, Step("", "python reproduce.py", 0, wrong, None),
             Step("", "sed -i 's/a = 1/a = 2/' m.py", 0, "", None), Step("", "python reproduce.py", 0, wrong, None),
             Step("", "sed -i 's/a = 2/a = 3/' m.py", 0, "", None), Step("", "python reproduce.py", 0, right, None)]
    assert _checks_of(steps) == [("python reproduce.py", "failed"), ("python reproduce.py", "passed")]
    rewritten = [*steps[:3], Step("", "cat > reproduce.py <<'EOF'\nprint(latex(other))\nEOF", 0, "", None),
                 Step("", "python reproduce.py", 0, wrong, None)]
    assert _checks_of(rewritten)[-1] == ("python reproduce.py", "passed")
    named = [Step("", "cat > check_values.py <<'EOF'\nprint(latex(expr))\nEOF", 0, "", None),
             Step("", "python check_values.py", 0, wrong, None), Step("", "sed -i 's/a = 1/a = 2/' m.py", 0, "", None),
             Step("", "python check_values.py", 0, wrong, None)]
    assert _checks_of(named)[-1] == ("python check_values.py", "passed")
    asserted = [write, Step("", "python reproduce.py", 0, "ALL TESTS PASSED", None),
                Step("", "sed -i 's/a = 1/a = 2/' m.py", 0, "", None),
                Step("", "python reproduce.py", 0, "ALL TESTS PASSED", None)]
    assert _checks_of(asserted)[-1] == ("python reproduce.py", "passed")  # a verdict it printed is read as printed


@pytest.mark.parametrize("output,writes", [
    # SWE-agent 0.x (sympy-15678): `edit 582:582` without `end_of_edit`; bash read the text as commands and refused it
    ("/bin/bash: line 2: syntax error near unexpected token `('\n/bin/bash: line 2: `yp = solve(eq.diff(x), dydx)'\n", []),
    ("Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry.\n", []),
    ("[File: /repo/m.py (10 lines total)]\n1:yp = solve(eq.diff(x), dydx)\n", [("/repo/m.py", "edit")]),
])
def test_an_edit_the_editor_or_the_shell_refused_writes_nothing(output: str, writes: list[tuple[str, str]]) -> None:
    from procjudge.importers.toolcalls import editor_step

    step = editor_step({"command": "line_edit", "first": 582, "last": 582, "text": "yp = solve(eq.diff(x), dydx)"},
                       "", None, output, None, "/repo/m.py")
    assert step.writes == writes
