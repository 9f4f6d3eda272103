"""The loop a shell agent ran, as it lived it: every check it made (test runs, and the scripts and
inline code it ran to see what its code does), what each showed, and a process score that the
held-back suite does not move (``procjudge.importers.checks``; ``held_back.local_runs``)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge import judge, load_run
from procjudge.cli import app
from procjudge.importers.base import explicit
from procjudge.importers.checks import check_outcome, is_environment, script_run, script_targets
from procjudge.importers.classify import written_files
from procjudge.importers.environment import unavailable
from procjudge.importers.grammar import parseable, simple_commands
from procjudge.importers.shell import Trajectory, stash_move
from procjudge.importers.shell import convert as _typed
from procjudge.importers.steps import Step
from procjudge.policy import load_policy

from conftest import ROOT, present

runner = CliRunner()
REALDATA = Path(os.environ.get("PROCJUDGE_REALDATA", ROOT.parent / "shared" / "realdata")) / "mini-swe-agent"

TRACEBACK = ('Traceback (most recent call last):\n  File "/testbed/reproduce.py", line 3, in <module>\n    total([1])\n'
             '  File "/testbed/shop/sums.py", line 2, in total\n    return sum(xs) / 0\nZeroDivisionError: division by zero\n')


def convert_trajectory(trajectory: Trajectory) -> dict:  # type: ignore[type-arg]
    """The run the shell builder makes, as its run file holds it."""
    return explicit(_typed(trajectory))  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- what a check showed


@pytest.mark.parametrize("code,output,passed,how", [
    (1, TRACEBACK, False, "exit status 1"),
    (None, TRACEBACK, False, "traceback"),  # SWE-agent 0.x logs no exit status
    (0, "FAILURE: Migration NOT applied.\n", False, "printed"),
    (0, "Max with distinct=True SUCCEEDED (Unexpected)\n", False, "printed"),
    # astropy-14096 (OpenHands): the error its case asks for, once the fix names the right attribute
    (0, "ERROR (expected): 'custom_coord' object has no attribute 'nonexistent'\n", True, "printed"),
    (0, "Got expected error: TypeError\n", True, "printed"),
    (0, "Error: expected 3, got 4\n", False, "printed"),  # what was expected, not an expected error
    # astropy-13033 (OpenHands): the message a task about a misleading error prints is data, not a verdict
    (0, "Error message: TimeSeries object is invalid - missing required column: flux\n", True, "exit 0"),
    (0, "Total errors: 2\n", False, "printed"),
    (0, "Issue still reproduced: got 3\n", False, "printed"),
    (0, "SUCCESS: Migration applied.\n", True, "printed"),
    # sympy-13031: the verdict in capitals ending the line
    (0, "col_insert result: (0, 1)\ncol_insert FAILED\n", False, "printed"),
    (0, "row_insert result: (2, 0)\nrow_insert PASSED\n", True, "printed"),
    (0, "the failed count is 0\n", True, "exit 0"),  # a lower-case word ending no verdict
    (0, "Issue not reproduced: got (2,)\n", True, "printed"),
    (0, "No errors found.\n", True, "printed"),
    (0, "All 4 tests passed\n", True, "printed"),
    (0, "\u2713 Error handling is implemented correctly\n", True, "printed"),  # a check mark opens the line
    (0, "  \u274c expected 3, got 4\n", False, "printed"),
    (0, "Error handling works correctly: HTTPConnectionPool(host='x', port=8000): Max retries exceeded\n", True, "printed"),
    (0, "Error in query 2: 'list' object has no attribute 'filtered_relation'\n", False, "printed"),
    (0, '"error": "Transaction not found"\n', True, "exit 0"),  # a JSON body printed is data, not a verdict
    (0, 'Unexpected status code. Response: {\n  "error": "Failed to get block"\n}\n', False, "printed"),
    # a verdict stated as a label's value decides the line whatever the label says
    (0, "SUCCESS: False\n", False, "printed"),
    (0, "Match: False\n", False, "printed"),
    (0, "Match: True\n", True, "printed"),
    (0, "Accuracy requirement: FAILED\n", False, "printed"),
    (0, "Size requirement (<150MB): \u2713\nAccuracy requirement (>=0.62): \u2717\n", False, "printed"),
    (0, "FAILED: 3 tests; ok: true\n", False, "printed"),
    (0, '"success": false\n', True, "exit 0"),
    (0, "Query 1 order_by: ('order',)\n", True, "exit 0"),  # the weakest evidence, and said to be
    (None, "9 days, 22:58:59\n", True, "no error printed"),
])
def test_a_check_outcome_is_read_from_its_exit_status_traceback_and_printed_verdict(
        code: int | None, output: str, passed: bool, how: str) -> None:
    outcome = check_outcome(code, output)
    assert (outcome.passed, outcome.how, outcome.unavailable) == (passed, how, None)
    assert outcome.line in output


def test_a_check_failed_by_its_exit_status_shows_the_line_that_failed_not_a_later_pass() -> None:
    """pylint-6528 (mini-swe-agent): the script printed a verdict for each of four cases and exited 1
    when one failed; its last line was the fourth case's PASS. A neutral last line stays the one shown."""
    cases = "Running: a\nFAIL: .a/foo.py was not ignored\nRunning: b\nPASS: .a/foo.py was ignored\n"
    assert check_outcome(1, cases).line == "FAIL: .a/foo.py was not ignored"
    neutral = "DEBUG: line='', match=False\nDocinfo NOT found in index.html\n"
    assert check_outcome(1, neutral).line == "Docinfo NOT found in index.html"


def test_a_crash_names_its_exception_and_the_frames_it_passed_through() -> None:
    outcome = check_outcome(1, "some output\n" + TRACEBACK)
    assert outcome.line == "ZeroDivisionError: division by zero"
    assert outcome.frames == (("/testbed/reproduce.py", 3), ("/testbed/shop/sums.py", 2))


@pytest.mark.parametrize("code,output,why", [
    (2, "python3: can't open file '/testbed/reproduce_failure.py': [Errno 2] No such file or directory\n", "not found"),
    (127, "bash: node: command not found\n", "not found"),
    (1, "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'cupy'\n",
     "cupy"),
    (1, ("/usr/bin/python3: No module named django.test.__main__; 'django.test' is a package and cannot be directly "
         "executed\n"), "not found"),
    # the script caught the ImportError and printed it in its own words, exiting 1 or 0
    (1, "Loading dataset...\nError importing datasets: No module named 'numpy'\n", "numpy"),
    (0, "Reading data.pkl\nError reading data.pkl: No module named 'torch'\n", "torch"),
    # a distribution the image lacks, as importlib.metadata and pkg_resources say it
    (1, ("Traceback (most recent call last):\n  File \"count.py\", line 3, in <module>\n"
         "importlib.metadata.PackageNotFoundError: No package metadata was found for The 'safetensors>=0.4.3' "
         "distribution was not found and is required by this application\n"), "safetensors"),
    (1, "pkg_resources.DistributionNotFound: The 'foo-bar>=1.0' distribution was not found and is required by baz\n",
     "foo-bar"),
    # an optional dependency, in the words of the library that needs it (OpenHands sympy-21612, pandas)
    (1, ("Traceback (most recent call last):\n  File \"/w/sympy/parsing/latex/__init__.py\", line 35, in parse_latex\n"
         "ImportError: LaTeX parsing requires the antlr4 python package, provided by pip (antlr4-python2-runtime or "
         "antlr4-python3-runtime) or conda (antlr-python-runtime)\n"), "antlr4"),
    (1, "ImportError: Missing optional dependency 'openpyxl'.  Use pip or conda to install openpyxl.\n", "openpyxl"),
    (1, "ImportError: Matplotlib requires dateutil>=2.7; you have 2.6.1\n", "dateutil"),
    (1, "ImportError: to read netCDF files, please install h5netcdf\n", "h5netcdf"),
])
def test_a_check_that_could_not_run_validated_nothing(code: int, output: str, why: str) -> None:
    outcome = check_outcome(code, output)
    assert outcome.passed is None and outcome.unavailable is not None and why in outcome.unavailable + outcome.how


def test_a_missing_module_the_project_provides_is_the_agents_failure() -> None:
    output = "ModuleNotFoundError: No module named 'shop.sums'\n"
    assert check_outcome(1, output, frozenset({"shop"})).passed is False
    assert check_outcome(1, output).unavailable is not None
    assert check_outcome(1, "PackageNotFoundError: No package metadata was found for shop\n", frozenset({"shop"})).passed \
        is False  # the project's own distribution not installed: the agent's to install
    printed = "Error: No module named 'shop.sums'\n"  # caught and printed: still the agent's own module
    assert check_outcome(0, printed, frozenset({"shop"})).passed is False
    # a missing module earlier in the output, not the failure's own line, excuses nothing
    warned = "Warning: No module named 'numba', falling back to Python\nFAILURE: got 3, expected 4\n"
    assert check_outcome(0, warned).passed is False
    # the project's own package named as required, or the words outside an import error, excuse nothing
    assert check_outcome(1, "ImportError: shop requires the shop python package built\n", frozenset({"shop"})).passed \
        is False
    assert check_outcome(1, "AssertionError: the parser requires the antlr4 package to give 2\n").passed is False


# --------------------------------------------------------------------------- which commands are checks


@pytest.mark.parametrize("command,identity", [
    ("python3 reproduce_issue.py", "python reproduce_issue.py"),
    ("python /tmp/test_fix.py --fast", "python /tmp/test_fix.py --fast"),
    ('python -c "from shop import total; assert total([1, 2]) == 3"', "python -c from shop import total; assert total"),
    ("python3 -m py_compile django/core/management/__init__.py", "python -m py_compile"),
    ("node -e 'console.log(require(\"./lib\").f(1))'", "node -e"),
    ("./tests/run_checks.sh unit", "tests/run_checks.sh unit"),
    ("bash run_tests.sh", "bash run_tests.sh"),
])
def test_scripts_and_inline_code_the_agent_runs_are_checks(command: str, identity: str) -> None:
    found = script_run(command, shlex.split(command))
    assert found is not None and found.identity.startswith(identity)


@pytest.mark.parametrize("command", [
    "pip install pytest", "python -m pip install -e .", "uv pip install numpy", "npm install", "apt-get install -y gcc",
    "python3 --version", 'python -c "import django; print(django.get_version())"',
    "python -c \"print(open('django/db/models/query.py').read()[:200])\"", "python tests/runtests.py --help",
    "python3 setup.py develop", "conda install -y scipy", "which pytest",
])
def test_installs_queries_and_reads_are_never_checks(command: str) -> None:
    assert is_environment(command) or script_run(command, shlex.split(command)) is None
    assert Step("", command, 0, "Successfully installed pytest-8.0\n", None).test is None  # nor a test run


def test_a_script_that_rewrites_the_code_is_an_edit_not_a_check() -> None:
    text = ("file_path = 'django/contrib/admin/options.py'\nwith open(file_path) as f:\n    lines = f.readlines()\n"
            "with open(file_path, 'w') as f:\n    f.writelines(lines)\n")
    assert script_targets(text, "update_admin_options.py") == ["django/contrib/admin/options.py"]
    assert script_targets("print(open('x.py').read())\n") == []
    steps = [Step("", f"cat <<'EOF' > update_admin_options.py\n{text}EOF", 0, "", None),
             Step("", "python3 update_admin_options.py", 0, "Updated django/contrib/admin/options.py\n", None),
             Step("", "python3 reproduce.py", 0, "SUCCESS: no edit permission\n", None)]
    document = convert_trajectory(_trajectory(steps, "django/contrib/admin/options.py"))
    (iteration,) = [i["iteration_telemetry"] for i in document["iterations"]]
    from procjudge.importers.probes import find_checks

    found = find_checks(steps, None, ("/testbed",), frozenset())
    assert found[1].probe is None and ("django/contrib/admin/options.py", "script") in found[1].writes
    assert steps[1].writes == [] and found[2].probe == "python reproduce.py"  # the steps given are left as they were
    assert iteration["test_results"]["suite"] == "python reproduce.py"
    assert iteration["test_results"]["post_iteration"] == {"passed": 1, "failed": 0, "total": 1, "skipped": 0}


def test_a_script_that_writes_its_results_is_still_a_check() -> None:
    """A script whose writes are its output (``answer.txt``, ``results.json``) ran the agent's code
    and showed what it does: a check, with its writes kept; one that also rewrites a source file is
    an edit (a real Terminal-Bench run wrote a tokenizer estimate to answer.txt, and its passing
    run was read as no check at all)."""
    from procjudge.importers.probes import find_checks, output_file

    assert output_file("/app/answer.txt") and output_file("out/results.JSON") and not output_file("setup.cfg")
    assert not output_file("src/app.py") and not output_file("Makefile")
    writes_answer = ("cat <<'EOF' > estimate.py\nn = 3\nwith open('/app/answer.txt', 'w') as f:\n    f.write(str(n))\n"
                     "EOF\n\npython3 estimate.py")
    rewrites_code = ("cat <<'EOF' > patch_it.py\nwith open('app/core.py', 'w') as f:\n    f.write('x = 1')\n"
                     "with open('answer.txt', 'w') as f:\n    f.write('1')\nEOF\n\npython3 patch_it.py")
    found = find_checks([Step("", writes_answer, 0, "Answer written\n", None),
                         Step("", rewrites_code, 0, "done\n", None)], None, ("/app",), frozenset())
    assert found[0].probe == "python estimate.py" and found[0].counts is not None and found[0].counts.passed == 1
    assert any(path.endswith("answer.txt") for path, _ in found[0].writes)
    assert found[1].probe is None and ("app/core.py", "script") in found[1].writes


@pytest.mark.parametrize(("command", "code", "output", "why"), [
    ("timeout 30 python maze.py 1", 124, "", "it timed out (timeout ended it: exit status 124)"),
    ("cd /app && timeout 5s python3 run.py", 124, "partial\n", "it timed out (timeout ended it: exit status 124)"),
    ("python maze.py 1", -1, "The last command <command>python maze.py 1</command> timed out and has been killed.",
     "the harness killed it at its time limit"),
    ("python maze.py 1", 124, "", None),  # no `timeout` ended it: the script's own exit status
    ("timeout 30 python maze.py 1", 1, "Traceback (most recent call last):\nValueError: bad\n", None),
])
def test_a_check_that_did_not_finish_validated_nothing(command: str, code: int, output: str, why: str | None) -> None:
    """A check ended by ``timeout`` (exit 124) or killed by the harness at its time limit showed
    nothing of the code's outcome, as a test run that timed out shows none: unavailable, not failed
    (a Terminal-Bench run was charged regression_blindness for a script it saw hang and replaced)."""
    from procjudge.importers.probes import find_checks

    (found,) = find_checks([Step("", command, code, output, None)], None, ("/app",), frozenset())
    assert found.probe is not None
    assert found.unavailable == why
    if why is None:
        assert found.counts is not None and found.counts.failed == 1


# --------------------------------------------------------------------------- the loop they make


SUBMISSION = ("diff --git a/shop/sums.py b/shop/sums.py\n--- a/shop/sums.py\n+++ b/shop/sums.py\n@@ -1,2 +1,2 @@\n"
              " def total(xs):\n-    return sum(xs) / 0\n+    return sum(xs)\n")


def _trajectory(steps: list[Step], path: str = "shop/sums.py", hidden: bool = True) -> Trajectory:
    suites = [{"name": "FAIL_TO_PASS", "passed": 0, "total": 1, "tests": [{"name": "test_total", "outcome": "failed"}]}]
    submission = SUBMISSION.replace("shop/sums.py", path)
    return Trajectory(instance="shop-1", agent="a", source="swe-agent", steps=steps, submission=submission,
                      hidden=suites if hidden else [])


def _red_green() -> list[Step]:
    return [Step("", "cat <<'EOF' > reproduce.py\nfrom shop.sums import total\ntotal([1])\nEOF", 0, "", None),
            Step("", "cd /testbed && python reproduce.py", 1, TRACEBACK, None),
            Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
            Step("", "python reproduce.py && echo fixed", 0, "fixed\n", None),
            Step("", "python reproduce.py", 0, "", None)]


def test_a_reproduction_that_goes_red_to_green_is_the_loop() -> None:
    document = convert_trajectory(_trajectory(_red_green()))
    (iteration,) = [i["iteration_telemetry"] for i in document["iterations"]]
    results = iteration["test_results"]
    # the failing run before the edit is the baseline, with the crash as its evidence
    (before,) = results["baseline_tests"]
    assert before["outcome"] == "failed" and before["message"].startswith("ZeroDivisionError")
    assert before["files"] == ["reproduce.py", "shop/sums.py"]  # the traceback's frames in the repository
    assert results["pre_iteration"] == {"passed": 0, "failed": 1, "total": 1}
    assert results["suite"] == "python reproduce.py" and results["post_iteration"]["passed"] == 1
    assert iteration["actions"]["test_runs"] == 3  # every run of the reproduction, the one before the edit too
    # writing the reproduction script is not an edit of the code: it opens no iteration of its own
    assert [f["path"] for f in iteration["changes"]["files"] if not f["scratch"]] == ["shop/sums.py"]


@pytest.mark.parametrize("command,code,output,why", [
    # the install before the runner failed (no network in the image): the runner never started (OpenHands sympy-22914)
    ("pip3 install pytest && python3 -m pytest sympy/printing/tests/test_pycode.py -v", 1,
     ("WARNING: Retrying (Retry(total=4)) after connection broken by 'ProxyError'\n"
     "ERROR: Could not find a version that satisfies the requirement pytest (from versions: none)\n"
     "ERROR: No matching distribution found for pytest\n"), "the install before it failed"),
    # pytest refused its command line (exit status 4): no test ran (OpenHands matplotlib-23412)
    ("python -m pytest lib/matplotlib/tests/test_patches.py -v --mpl-generate-path=out", 4,
     ("ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\n"
     "__main__.py: error: unrecognized arguments: --mpl-generate-path=out\n  rootdir: /w\n"), "usage error"),
    # the same failure text with no install in the command is the runner's own output, read as it is
    ("python -m pytest tests/test_x.py", 1, "ERROR: No matching distribution found for pytest\n", None),
])
def test_a_test_run_whose_runner_never_started_validated_nothing(command: str, code: int, output: str,
                                                                  why: str | None) -> None:
    step = Step("", command, code, output, None)
    assert step.test is not None
    reason = unavailable(step)
    assert (reason is None) if why is None else (reason is not None and why in reason)


DJANGO_UNCONFIGURED = ('Traceback (most recent call last):\n  File "/testbed/reproduce.py", line 3, in <module>\n'
                       '  File "/testbed/django/conf/__init__.py", line 63, in _setup\n'
                       "django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not "
                       "configured. You must either define the environment variable DJANGO_SETTINGS_MODULE or call "
                       "settings.configure() before accessing settings.\n")


@pytest.mark.parametrize("output", [
    DJANGO_UNCONFIGURED,
    "django.core.exceptions.AppRegistryNotReady: Apps aren't loaded yet.\n",
    ("RuntimeError: Model class __main__.Book doesn't declare an explicit app_label and isn't in an application in "
     "INSTALLED_APPS.\n"),
    "django.utils.connection.ConnectionDoesNotExist: The connection 'other' doesn't exist.\n",
    "RuntimeError: Settings already configured.\n",
    "RuntimeError: populate() isn't reentrant\n",
    "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be empty.\n",
])
def test_a_script_that_stopped_setting_itself_up_validated_nothing_unless_the_task_is_that_error(output: str) -> None:
    """OpenHands: 126 checks in 86 of 500 runs stopped before they reached the code (Django's
    settings not configured, its apps not loaded): the code was not exercised, so no failure of it,
    unless the task is about that very error, when the crash is the bug shown."""
    steps = [Step("", "cat <<'EOF' > reproduce.py\nimport django\nEOF", 0, "", None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python reproduce.py", 1, output, None)]
    document = convert_trajectory(_trajectory(steps))
    assert not [c for i in document["iterations"] for c in i["iteration_telemetry"].get("checks") or []
                if c["outcome"] in ("failed", "error")]
    assert any("validated nothing" in note and "setting itself up" in note for note in document["run"]["notes"])
    assert {i["iteration_telemetry"]["test_results"].get("unavailable") for i in document["iterations"]} == {"no_output"}
    about = dataclasses.replace(_trajectory(steps), statement=f"The script fails with {output}")
    (check,) = [c for i in convert_trajectory(about)["iterations"] for c in i["iteration_telemetry"].get("checks") or []]
    assert check["outcome"] in ("failed", "error")


def test_a_django_test_label_it_cannot_import_reached_no_test() -> None:
    """OpenHands django-13417, -14311, -16315 and 5 more ran `python -m django test queries.tests ...`
    outside runtests.py, where tests/ is not on the path: `No module named 'queries'` ran no test.
    A module missing that the label does not name is read as before."""
    def checks(command: str, output: str) -> list[dict]:  # type: ignore[type-arg]
        steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
                 Step("", "sed -i 's|== 3|== 4|' tests/queries/tests.py", 0, "", None),  # the label's module is the project's
                 Step("", command, 1, output, None)]
        document = convert_trajectory(_trajectory(steps))
        return [c for i in document["iterations"] for c in i["iteration_telemetry"].get("checks") or []]

    label = "python -m django test queries.tests.QuerySetTests -v 2"
    assert checks(label, "ModuleNotFoundError: No module named 'queries'\n") == []  # validated nothing
    (other,) = checks(label, "ModuleNotFoundError: No module named 'shop.helpers'\n")
    assert other["outcome"] in ("failed", "error")


def test_checks_of_the_unchanged_code_validate_no_change(tmp_path: Path) -> None:
    """OpenHands scikit-learn-25747 and 20 more runs wrote and ran only their own reproduction and were
    paid +6 (local_validation, test_driven_iteration) for runs that validated no change: there was
    none. A run whose only check came before its edit of the code validated nothing either
    (Terminal-Bench sanitize-git-repo): no_local_validation. A system file fixed in place outside the
    repository is a change: its checks count (Terminal-Bench's nginx configuration, site-packages)."""
    def judged(steps: list[Step]) -> tuple[dict, set[str], list[str]]:  # type: ignore[type-arg]
        trajectory = Trajectory(instance="shop-1", agent="a", source="openhands", steps=steps, submission=None)
        document = convert_trajectory(trajectory)
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps(document))
        items = {i.id for i in judge(load_run(str(path))).items if i.points}
        return document["iterations"][-1]["iteration_telemetry"]["actions"], items, document["run"]["notes"]

    fails = "FAIL: total([1]) gave an error\n"
    own = [Step("", "cat <<'EOF' > reproduce_issue.py\nprint('FAIL: total([1]) gave an error')\nEOF", 0, "", None),
           Step("", "python reproduce_issue.py", 1, fails, None), Step("", "python reproduce_issue.py", 1, fails, None),
           Step("", "python reproduce_issue.py", 1, fails, None)]
    actions, items, notes = judged(own)
    assert "test_runs" not in actions and not items & {"local_validation", "test_driven_iteration", "no_local_validation"}
    assert any("changed none of the repository's files" in note for note in notes)
    before = [*own, Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)]
    actions, items, _ = judged(before)
    assert actions["test_runs"] == 0 and "no_local_validation" in items and "local_validation" not in items
    system = [*own[1:], Step("", "sed -i 's|listen 80|listen 8080|' /etc/nginx/conf.d/site.conf", 0, "", None)]
    actions, items, _ = judged(system)
    assert actions["test_runs"] == 3  # the fix lies outside the repository: the runs before it are counted as before


def test_a_reproduction_rewritten_after_it_passed_is_another_check_and_its_failure_breaks_nothing(tmp_path: Path) -> None:
    """OpenHands sympy-13615 and five more runs: reproduce.py passed, the agent added a case to it,
    and the case failed. The script that passed did not run again, so nothing that passed broke;
    the same failure with only the code changed since the pass is a regression (named here, not
    charged: the submitted diff leaves the breaking edit out)."""
    fails = "FAIL: total([2]) gave 0\n"
    passing = _red_green()
    extended = [*passing, Step("", "cat <<'EOF' >> reproduce.py\nprint('FAIL: total([2]) gave 0')\nEOF", 0, "", None),
                Step("", "sed -i 's|sum(xs)|sum(xs) - 2|' shop/sums.py", 0, "", None),
                Step("", "python reproduce.py", 1, fails, None)]
    broken = [*passing, Step("", "sed -i 's|sum(xs)|sum(xs) - 2|' shop/sums.py", 0, "", None),
              Step("", "python reproduce.py", 1, fails, None)]

    def judged(steps: list[Step]) -> tuple[list[dict], list[str]]:  # type: ignore[type-arg]
        document = convert_trajectory(_trajectory(steps, hidden=False))
        checks = [c for i in document["iterations"] for c in i["iteration_telemetry"].get("checks") or []]
        path = tmp_path / f"{len(steps)}.json"
        path.write_text(json.dumps(document))
        verdict = judge(load_run(str(path)))
        return checks, [i.id for i in verdict.items if i.id == "regression_blindness"]

    checks, charged = judged(extended)
    assert checks[-1]["outcome"] == "failed" and checks[-1]["rewritten"] is True and charged == []
    checks, charged = judged(broken)
    assert checks[-1]["outcome"] == "failed" and "rewritten" not in checks[-1] and charged == ["regression_blindness"]


def test_an_edit_after_checks_starts_the_next_iteration_and_the_last_check_before_it_ends_the_one_before() -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs) / 1|' shop/sums.py", 0, "", None),
             Step("", "python reproduce.py", 0, "FAIL: got 1.0\n", None),
             Step("", "python -m pytest tests", 1, "tests/test_sums.py::test_total FAILED\n===== 1 failed, 3 passed in 0.1s "
                  "=====\n", None),
             Step("", "sed -i 's|sum(xs) / 1|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest tests", 0, "===== 4 passed in 0.1s =====\n", None)]
    document = convert_trajectory(_trajectory(steps))
    iterations = [i["iteration_telemetry"] for i in document["iterations"]]
    assert len(iterations) == 2
    # the first iteration saw two checks of the same code: the test run, the wider evidence, states it
    assert iterations[0]["test_results"]["suite"] == "python -m pytest tests"
    assert iterations[0]["test_results"]["post_iteration"]["failed"] == 1
    assert iterations[0]["actions"]["test_runs"] == 2 and iterations[1]["test_results"]["post_iteration"]["failed"] == 0


@pytest.mark.parametrize("wider,suite", [
    # the suite measured before ran again and passed; a wider run after it passed too: the same suite states it
    ("===== 9 passed in 0.1s =====\n", "python -m pytest tests/test_sums.py"),
    # the wider run failed more: it states the iteration, so that the score hides no failure
    ("tests/test_other.py::test_x FAILED\n===== 1 failed, 8 passed in 0.1s =====\n", "python -m pytest tests"),
])
def test_the_suite_that_stated_the_iteration_before_states_the_next_where_it_ran_again(wider: str, suite: str) -> None:
    """An iteration ran tests/test_sums.py (1 failing); the next ran it again (passing), then a
    wider run. Measured by the same suite, the two iterations compare: the fix shows."""
    edit = Step("", "sed -i 's|sum(xs) / 0|sum(xs) / 1|' shop/sums.py", 0, "", None)
    fix = Step("", "sed -i 's|sum(xs) / 1|sum(xs)|' shop/sums.py", 0, "", None)
    steps = [edit, Step("", "python -m pytest tests/test_sums.py", 1, FAILING_RUN, None), fix,
             Step("", "python -m pytest tests/test_sums.py", 0, "===== 2 passed in 0.1s =====\n", None),
             Step("", "python -m pytest tests", 1 if "FAILED" in wider else 0, wider, None)]
    iterations = [i["iteration_telemetry"] for i in convert_trajectory(_trajectory(steps))["iterations"]]
    assert [it["test_results"]["suite"] for it in iterations] == ["python -m pytest tests/test_sums.py", suite]


def test_a_check_piped_into_tail_has_no_exit_status_of_its_own() -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python reproduce.py 2>&1 | tail -5", 0, TRACEBACK, None)]
    document = convert_trajectory(_trajectory(steps))
    results = document["iterations"][0]["iteration_telemetry"]["test_results"]
    # tail exited 0; the traceback at the end is what the script did
    assert results["tests"][0]["outcome"] == "failed" and "traceback" in results["tests"][0]["message"]


def test_a_tracked_test_edited_and_left_out_of_the_submission_is_no_scratch_file() -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest tests", 1, "tests/test_sums.py::test_nan FAILED\n===== 1 failed, 3 passed in "
                  "0.1s =====\n", None),
             Step("", "sed -i 's/assert isnan(r)/assert r == 0/' tests/test_sums.py", 0, "", None),
             Step("", "python -m pytest tests", 0, "===== 4 passed in 0.1s =====\n", None)]
    document = convert_trajectory(_trajectory(steps))
    iterations = [i["iteration_telemetry"] for i in document["iterations"]]
    assert len(iterations) == 2  # the test edit is an edit of the project: it opens an iteration
    (test_file,) = [f for f in iterations[1]["changes"]["files"] if f["path"] == "tests/test_sums.py"]
    assert test_file["status"] == "modified" and test_file["scratch"] is False


def test_a_run_with_edits_and_no_check_imports_without_a_report() -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None), Step("", "cat shop/sums.py", 0, "", None)]
    document = convert_trajectory(_trajectory(steps, hidden=False))
    (iteration,) = [i["iteration_telemetry"] for i in document["iterations"]]
    assert iteration["test_results"]["unavailable"] == "not_a_test_run"
    assert any("ran no check" in note for note in document["run"]["notes"])


# --------------------------------------------------------------------------- blind to the held-back suite


def _process(document: dict, tmp_path: Path, name: str) -> tuple[float, dict[str, tuple[float, str]]]:  # type: ignore[type-arg]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    verdict = judge(load_run(str(path)))
    return verdict.process_score, {item.id: (item.points, item.strength) for item in verdict.items}


@pytest.mark.parametrize("steps", [
    _red_green(),
    [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)],  # nothing validated
    [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
     Step("", "python -m pytest tests", 0, "===== 4 passed in 0.1s =====\n", None)],  # green, held-back red
])
def test_the_held_back_suite_moves_no_process_score(steps: list[Step], tmp_path: Path) -> None:
    with_report = convert_trajectory(_trajectory([_copy(s) for s in steps]))
    without = convert_trajectory(_trajectory([_copy(s) for s in steps], hidden=False))
    assert "hidden" in json.dumps(with_report) and "hidden" not in json.dumps(without)
    score, items = _process(with_report, tmp_path, "with")
    blind_score, blind_items = _process(without, tmp_path, "without")
    assert score == blind_score
    assert {k: v for k, v in items.items() if v[0]} == {k: v for k, v in blind_items.items() if v[0]}


TEST_SHOWN = "     1\tfrom shop.sums import total\n     2\t\n     3\tdef test_total():\n     4\t    assert total([2]) == 1\n"


@pytest.mark.parametrize("put_back", [True, False])
def test_a_test_changed_in_the_final_iteration_and_left_out_of_the_submission_is_read(put_back: bool,
                                                                                      tmp_path: Path) -> None:
    """The last iteration's diff is the submission; a test the agent loosened there, ran green
    against and then put back (or that the harness does not submit) is read as in any iteration."""
    failed = "FAILED tests/test_sums.py::test_total\n1 failed in 0.1s\n"
    steps = [Step("", "cat -n tests/test_sums.py", 0, TEST_SHOWN, None),
             Step("", "python -m pytest tests/test_sums.py", 1, failed, None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs) / 1|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest tests/test_sums.py", 1, failed, None),
             Step("", "sed -i 's/== 1/in (1, 2)/' tests/test_sums.py", 0, "", None),
             Step("", "python -m pytest tests/test_sums.py", 0, "1 passed in 0.1s\n", None)]
    if put_back:
        steps.append(Step("", "git checkout tests/test_sums.py", 0, "", None))
    document = convert_trajectory(_trajectory(steps, hidden=False))
    final = document["iterations"][-1]["iteration_telemetry"]["changes"]["diff"]
    assert final.startswith(SUBMISSION) and "+++ b/tests/test_sums.py" in final and "+    assert total([2]) in (1, 2)" in final
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    chasing = [i for i in judge(load_run(str(path))).items if i.id == "test_chasing"]
    assert chasing and chasing[0].points < 0 and "tests/test_sums.py" in chasing[0].evidence, chasing


def _copy(step: Step) -> Step:
    return Step(step.thought, step.command, step.returncode, step.output, step.time)


@pytest.mark.parametrize("corpus_dir", present([REALDATA] if REALDATA.is_dir() else [], REALDATA,
                                                "the mini-swe-agent corpus"))
def test_real_logs_score_the_same_with_and_without_their_reports(corpus_dir: Path, tmp_path: Path) -> None:
    """Every trajectory imports blind, and its process score is what it is with the SWE-bench report,
    except where the held-back suite raised the strength of a test edit the run already shows."""
    blind_source = tmp_path / "trajs"
    shutil.copytree(corpus_dir / "trajs", blind_source)
    for name, source in (("with", corpus_dir / "trajs"), ("without", blind_source)):
        result = runner.invoke(app, ["import", "swe-agent", str(source), "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    scored = {}
    for name in ("with", "without"):
        scored[name] = {path.stem: judge(load_run(str(path))) for path in (tmp_path / name).rglob("*.json")}
    assert len(scored["with"]) == len(scored["without"]) == len(list(corpus_dir.glob("trajs/*/*.traj.json")))
    for run, verdict in scored["with"].items():
        blind = scored["without"][run]
        assert verdict.held_back is not None and blind.held_back is None
        if verdict.process_score != blind.process_score:
            raised = [i for i in verdict.items if i.id == "test_chasing" and "held-back suite fails" in i.evidence]
            assert raised, (run, verdict.process_score, blind.process_score)


COLLECTION = ("==================================== ERRORS ====================================\n"
              "_________________ ERROR collecting tests/test_gpu.py _________________\n"
              "ImportError while importing test module '/testbed/tests/test_gpu.py'.\n"
              "E   ModuleNotFoundError: No module named '{module}'\n"
              "!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!\n"
              "=============================== 1 error in 0.52s ===============================\n")


@pytest.mark.parametrize("module,environment", [("cupy", True), ("shop.gpu", False)])
def test_a_collection_stopped_by_a_module_missing_from_the_image_is_not_a_failure(module: str, environment: bool) -> None:
    step = Step("", "python -m pytest tests", 2, COLLECTION.format(module=module), None)
    reason = unavailable(step, frozenset({"shop"}))
    if environment:
        assert reason is not None and "cupy" in reason and "collection stopped" in reason
    else:  # the project's own module: the agent's import error, a failure
        assert reason is None


@pytest.mark.parametrize("command,identity", [
    ('pytest tests -k "not test_nan"', "pytest tests -k not test_nan"),
    ("python -m pytest tests --deselect tests/test_sums.py::test_nan",
     "python -m pytest tests --deselect tests/test_sums.py::test_nan"),
    ("python -m pytest tests -x -q", "python -m pytest tests"),
])
def test_a_narrowed_selection_is_a_suite_of_its_own(command: str, identity: str) -> None:
    assert Step("", command, 0, "===== 3 passed in 0.1s =====\n", None).test == identity


def test_a_test_label_that_names_no_module_ran_no_test() -> None:
    output = ("E\n======================================================================\n"
              "ERROR: contenttypes (unittest.loader._FailedTest)\n------------------------------------------------"
              "----------------------\nImportError: Failed to import test module: contenttypes\nTraceback (most recent "
              "call last):\nModuleNotFoundError: No module named 'contenttypes'\n\n\nRan 1 test in 0.000s\n\n"
              "FAILED (errors=1)\n")
    step = Step("", "python tests/runtests.py contenttypes", 1, output, None)
    assert unavailable(step) == "its test label names no test module"
    broken = output.replace("No module named 'contenttypes'", "ImportError: cannot import name 'x' from 'shop.sums'")
    assert unavailable(Step("", "python tests/runtests.py contenttypes", 1, broken, None)) is None  # the agent's break


SKIPPED_WITH_ERROR = ("collected 1 item\n\nrepro.py sE\n\nE       NameError: name 'xxx' is not defined\n\n"
                      "ERROR repro.py::MyTestCase::test_one - NameError: name 'xxx' is not defined\n"
                      "========================= 1 skipped, 1 error in 0.16s ==========================\n")
ALL_SKIPPED = "collected 1 item\n\nrepro.py s   [100%]\n\n============================== 1 skipped in 0.01s ===\n"


@pytest.mark.parametrize("statement,green", [
    # pytest-7236 and -10081: a skipped unittest class whose tearDown ran under --pdb; skipping is the behaviour asked for
    ("unittest.TestCase.tearDown executed on skipped tests when running --pdb", True),
    ("total() divides by zero on a one-item list", False),  # in another task a run that skipped every test ran none
])
def test_a_run_whose_every_test_skipped_is_the_outcome_of_a_task_about_skipping(statement: str, green: bool) -> None:
    steps = [Step("", "cat <<'EOF' > repro.py\nimport unittest\nEOF", 0, "", None),
             Step("", "pytest --pdb repro.py", 2, SKIPPED_WITH_ERROR, None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "pytest --pdb repro.py", 0, ALL_SKIPPED, None)]
    trajectory = dataclasses.replace(_trajectory(steps, hidden=False), statement=statement)
    (iteration,) = [i["iteration_telemetry"] for i in convert_trajectory(trajectory)["iterations"]]
    results = iteration["test_results"]
    assert results["pre_iteration"] == {"passed": 0, "failed": 1, "total": 1}
    if green:
        assert results["post_iteration"]["passed"] == 1 and results["post_iteration"]["failed"] == 0
        assert "unavailable" not in results
    else:
        assert results["unavailable"] and "post_iteration" not in results


def test_a_run_that_skipped_every_test_and_never_failed_ran_no_test_in_a_task_about_skipping() -> None:
    """pytest-7432 (SWE-agent 0.x): its reproduction is a skipped test and the bug is the location the
    report prints; "1 skipped" before the fix and after says nothing of it."""
    steps = [Step("", "cat <<'EOF' > repro.py\nimport unittest\nEOF", 0, "", None),
             Step("", "pytest --pdb repro.py", 0, ALL_SKIPPED, None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "pytest --pdb repro.py", 0, ALL_SKIPPED, None)]
    trajectory = dataclasses.replace(_trajectory(steps, hidden=False), statement="skip location reporting broken")
    (iteration,) = [i["iteration_telemetry"] for i in convert_trajectory(trajectory)["iterations"]]
    assert iteration["test_results"]["unavailable"] and "post_iteration" not in iteration["test_results"]


REPRO_ONLY = ("diff --git a/reproduce_bug.py b/reproduce_bug.py\nnew file mode 100644\n--- /dev/null\n"
              "+++ b/reproduce_bug.py\n@@ -0,0 +1,2 @@\n+from shop.sums import total\n+print(total([1]))\n")


@pytest.mark.parametrize("submission,own_only", [
    # SWE-agent 0.x (django-11019): the reproduction written, run, and submitted alone: no change of the code
    (REPRO_ONLY, True),
    # the same reproduction submitted beside a fix: the fix is judged as ever
    (REPRO_ONLY + SUBMISSION, False),
])
def test_a_submission_of_only_the_agents_own_files_changed_nothing_to_validate(submission: str, own_only: bool,
                                                                              tmp_path: Path) -> None:
    steps = [Step("", "cat <<'EOF' > reproduce_bug.py\nfrom shop.sums import total\nprint(total([1]))\nEOF", 0, "", None),
             Step("", "python reproduce_bug.py", 0, "1.0\n", None)]
    if not own_only:
        steps += [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
                  Step("", "python reproduce_bug.py", 0, "1\n", None)]
    trajectory = Trajectory(instance="shop-1", agent="a", source="swe-agent", steps=steps, submission=submission)
    document = convert_trajectory(trajectory)
    notes = document["run"].get("notes") or []
    assert any("submitted only files of its own (reproduce_bug.py)" in note for note in notes) == own_only, notes
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    items = {i.id: i.points for i in judge(load_run(str(path))).items if i.points}
    assert items.get("scratch_submitted", 0) < 0  # the reproduction in the patch is named either way
    if own_only:  # neither paid for converging on a check of its own script nor charged for validating nothing
        assert set(items) == {"scratch_submitted"}, items
    else:
        assert items.get("rapid_convergence", 0) > 0, items


# --------------------------------------------------------------------------- what the agent submitted over


FAILING_RUN = ("tests/test_sums.py::test_total PASSED\ntests/test_sums.py::test_nan FAILED\n"
               "===== 1 failed, 1 passed in 0.1s =====\n")


def _judged(steps: list[Step], tmp_path: Path, hidden: bool = False) -> dict[str, tuple[float, str, str]]:
    document = convert_trajectory(_trajectory(steps, hidden=hidden))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    return {i.id: (i.points, i.strength, i.evidence) for i in judge(load_run(str(path))).items}


def test_every_check_of_the_code_is_kept_in_order() -> None:
    document = convert_trajectory(_trajectory(_red_green()))
    checks = document["iterations"][0]["iteration_telemetry"]["checks"]
    assert [(c["command"], c["outcome"]) for c in checks] == [("python reproduce.py", "passed")] * 2
    assert checks[1]["message"] == "printed nothing (exit 0)"
    # the contract's shape: kind, exit status (none after `&& echo`: the last command's), frames of a crash
    assert [(c["kind"], c.get("exit_code")) for c in checks] == [("reproduction", None), ("reproduction", 0)]
    crash = convert_trajectory(_trajectory([Step("", "sed -i 's|0|1|' shop/sums.py", 0, "", None),
                                            Step("", "python reproduce.py", 1, TRACEBACK, None)]))
    (check,) = crash["iterations"][0]["iteration_telemetry"]["checks"]
    assert (check["outcome"], check["exit_code"]) == ("error", 1)
    assert check["frames"] == [{"path": "reproduce.py", "line": 3}, {"path": "shop/sums.py", "line": 2}]


def test_a_failure_narrowed_away_with_k_is_submitted_over(tmp_path: Path) -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None),
             Step("the nan test is unrelated", "python -m pytest tests/test_sums.py -k 'not test_nan'", 0,
                  "===== 1 passed, 1 deselected in 0.1s =====\n", None)]
    points, strength, evidence = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (-2.0, "likely")
    assert "test_nan" in evidence and "-k not test_nan` passed: the failure was selected away" in evidence
    # the held-back suite failing the same test confirms it: definite
    held = _trajectory([_copy(s) for s in steps])
    held.hidden[0]["tests"] = [{"name": "tests/test_sums.py::test_nan", "outcome": "failed"}]
    path = tmp_path / "held.json"
    path.write_text(json.dumps(convert_trajectory(held)))
    (item,) = [i for i in judge(load_run(str(path))).items if i.id == "submitted_over_failure"]
    assert item.strength == "definite" and "held-back suite fails the same test" in item.evidence


def test_a_crash_through_the_edited_file_is_submitted_over(tmp_path: Path) -> None:
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs) / n|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest tests", 0, "===== 2 passed in 0.1s =====\n", None),
             Step("", "python reproduce.py", 1, TRACEBACK.replace("ZeroDivisionError: division by zero",
                                                                "NameError: name 'n' is not defined"), None)]
    points, strength, evidence = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (-4.0, "definite")
    assert "`python reproduce.py` crashed: NameError" in evidence and "shop/sums.py, which the agent edited" in evidence


@pytest.mark.parametrize("later,fires", [
    ("python reproduce.py 1 && python reproduce.py 2", False),  # the same script, other arguments: answered
    ("python other_check.py", True),  # another script says nothing of the crash
])
def test_a_crashed_script_answered_by_a_later_run_of_the_same_script(later: str, fires: bool, tmp_path: Path) -> None:
    """`for i in {1..10}` in sh hands the script a literal it crashes on; the agent re-ran the same
    script with its arguments spelt out, and it passed: the crash was answered."""
    crash = TRACEBACK.replace("ZeroDivisionError: division by zero", "NameError: name 'n' is not defined")
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs) / n|' shop/sums.py", 0, "", None),
             Step("", "for i in {1..10}; do\n  python reproduce.py $i\ndone", 1, crash, None),
             Step("", later, 0, "SUCCESS\n", None)]
    assert ("submitted_over_failure" in _judged(steps, tmp_path)) is fires


@pytest.mark.parametrize("steps", [
    # the failing test failed before any edit too: not the agent's
    [Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None),
     Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
     Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)],
    # a failure never seen passing, in a test of nothing the agent edited (a locale error in the container)
    [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
     Step("", "python -m pytest tests/test_unicode.py -v", 1, FAILING_RUN.replace("test_sums", "test_unicode"), None)],
])
def test_a_failure_the_agent_did_not_cause_is_named_not_charged(steps: list[Step], tmp_path: Path) -> None:
    points, strength, _ = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (0.0, "weak")


@pytest.mark.parametrize("command,move", [
    ("git stash", "aside"), ("git stash -u", "aside"), ("git stash push -m wip", "aside"), ("git stash save wip", "aside"),
    ("git -C /testbed stash", "aside"), ("git --no-pager stash", "aside"), ("git stash pop", "back"),
    ("git stash apply stash@{0}", "back"), ("git stash list", None), ("git stash show -p", None), ("git status", None),
    ("echo git stash", None),
])
def test_git_stash_sets_the_changes_aside_and_pop_brings_them_back(command: str, move: str | None) -> None:
    assert stash_move(command) == move


_NAN_UNRELATED = Step("the nan test is unrelated", "python -m pytest tests/test_sums.py -k 'not test_nan'", 0,
                      "===== 1 passed, 1 deselected in 0.1s =====\n", None)


@pytest.mark.parametrize("on_base", [
    # one command: set the changes aside, run, bring them back
    [Step("", "git stash && python -m pytest tests/test_sums.py -v; git stash pop", 0, FAILING_RUN, None)],
    # across steps, with git's own option and a cd prefix
    [Step("", "cd /testbed && git -C /testbed stash", 0, "Saved working directory and index state WIP\n", None),
     Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None),
     Step("", "git stash pop", 0, "", None)],
])
def test_a_failure_the_agent_ran_on_the_unchanged_code_with_git_stash_is_named_not_charged(
        on_base: list[Step], tmp_path: Path) -> None:
    """The agent calls a failing test unrelated and checks it on the unchanged code: `git stash`,
    the run, `git stash pop`. The test fails there too: not its regression. That run is no check of
    its code: it ends no iteration and counts as no test run."""
    edit = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    assert _judged([edit, run, _NAN_UNRELATED], tmp_path)["submitted_over_failure"][:2] == (-2.0, "likely")
    steps = [edit, run, *on_base, _NAN_UNRELATED]
    points, strength, evidence = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (0.0, "weak") and "unchanged code too" in evidence and "git stash" in evidence
    (iteration,) = convert_trajectory(_trajectory(steps))["iterations"]
    telemetry = iteration["iteration_telemetry"]
    assert [c.get("on_base", False) for c in telemetry["checks"]] == [False, True, False]
    assert telemetry["actions"]["test_runs"] == 2


@pytest.mark.parametrize("revert", ["git checkout shop/sums.py", "git checkout -- .", "git restore shop/sums.py",
                                    "cd /testbed && git checkout shop/sums.py 2>/dev/null"])
def test_a_failure_the_agent_ran_after_restoring_the_files_it_changed_is_named_not_charged(
        revert: str, tmp_path: Path) -> None:
    """The same check made the other way agents make it: every file the agent changed restored
    (`git checkout F`, `git checkout .`, `git restore F`), the test run on the unchanged code, the
    change made again. The run between is the unchanged code's."""
    edit = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [edit, run, Step("", revert, 0, "Updated 1 path from the index\n", None), run, edit, run, _NAN_UNRELATED]
    points, strength, evidence = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (0.0, "weak") and "unchanged code too" in evidence, evidence
    checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
              for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, True, False, False], checks
    without = [edit, run, edit, run, _NAN_UNRELATED]  # never checked on the unchanged code: charged
    assert _judged(without, tmp_path)["submitted_over_failure"][:2] == (-2.0, "likely")


def test_the_agents_new_test_run_on_the_restored_code_is_the_unchanged_codes(tmp_path: Path) -> None:
    """django-11299: the fix made, a test added for it, then the fix taken back (the test kept) to
    see the new test fail without it, and made again. The code is the unchanged code while only
    the agent's tests hold its changes: that run is no check of its code (no regression of it). A
    restore that leaves a file of the code changed leaves its code in place."""
    fix = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    test = Step("", "sed -i 's|assert total(\\[1, 2\\]) == 3|assert total([1, 2, 3]) == 6|' tests/test_sums.py",
                0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 0, "===== 2 passed in 0.1s =====\n", None)
    red = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    for revert, on_base in (("git checkout shop/sums.py", True), ("git checkout tests/test_sums.py", False)):
        steps = [fix, test, run, Step("", revert, 0, "Updated 1 path from the index\n", None), red, fix, run]
        checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
                  for c in it["iteration_telemetry"].get("checks") or []]
        assert [c.get("on_base", False) for c in checks] == [False, on_base, False], (revert, checks)


@pytest.mark.parametrize("apply,undo", [
    # sed at a numbered line, and its inverse
    (Step("", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
     Step("", "sed -i '2s|sum(xs)|sum(xs) / 0|' shop/sums.py", 0, "", None)),
    # a line range changed, then changed back
    (Step("", "sed -i '2c\\    return sum(xs)' shop/sums.py", 0, "", None),
     Step("", "sed -i '2c\\    return sum(xs) / 0' shop/sums.py", 0, "", None)),
    # an editor's replace, then the replace the other way
    (Step("", "Edit shop/sums.py", 0, "", None, writes=[("shop/sums.py", "edit")], kind="edit",
          editor={"command": "str_replace", "path": "shop/sums.py", "old_str": "sum(xs) / 0", "new_str": "sum(xs)"}),
     Step("", "Edit shop/sums.py", 0, "", None, writes=[("shop/sums.py", "edit")], kind="edit",
          editor={"command": "str_replace", "path": "shop/sums.py", "old_str": "sum(xs)", "new_str": "sum(xs) / 0"})),
])
def test_a_failure_the_agent_ran_after_undoing_its_edit_by_hand_is_named_not_charged(
        apply: Step, undo: Step, tmp_path: Path) -> None:
    """Agents put the unchanged code back by hand as often as with git: the edit made the other
    way (``s/a/b/`` then ``s/b/a/`` at the same line), the test run, the edit made again. The run
    between is the unchanged code's, as after ``git checkout``."""
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [apply, run, undo, run, apply, run, _NAN_UNRELATED]
    points, strength, evidence = _judged(steps, tmp_path)["submitted_over_failure"]
    assert (points, strength) == (0.0, "weak") and "unchanged code too" in evidence, evidence
    checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
              for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, True, False, False], checks


_OWN_LINE = "    total = math.fsum(value for value in xs if value is not None)"


@pytest.mark.parametrize("undo,on_base", [
    # django-11880: its added line deleted by its whole text, to run the tests on the unchanged code
    (f"sed -i '/{_OWN_LINE.strip()}/d' shop/sums.py", True),
    (f"sed -i -e '/{_OWN_LINE.strip().replace('.', chr(92) + '.')}/d' shop/sums.py", True),  # escaped: still literal
    ("sed -i '/total = math.fsum/d' shop/sums.py", False),  # a short pattern may name lines of the code too
    ("sed -i '/total = math.fsum(value for value in xs if .*/d' shop/sums.py", False),  # .* matches lines never shown
    ("sed -i '/^    total = math.fsum(value for value in xs if value is not None)$/d' shop/sums.py", False),  # anchors
])
def test_a_line_the_agent_added_deleted_by_its_whole_text_undoes_its_edit(undo: str, on_base: bool,
                                                                          tmp_path: Path) -> None:
    apply = Step("", f"sed -i '2i\\{_OWN_LINE}' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [apply, run, Step("", undo, 0, "", None), run, apply, run, _NAN_UNRELATED]
    checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
              for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, on_base, False, False], (undo, checks)


@pytest.mark.parametrize("apply,undo,on_base", [
    # django-10914: the setting swapped by a sed over every line, swapped back, the tests run, swapped again
    ("s/FILE_UPLOAD_PERMISSIONS = None/FILE_UPLOAD_PERMISSIONS = 0o644/",
     "s/FILE_UPLOAD_PERMISSIONS = 0o644/FILE_UPLOAD_PERMISSIONS = None/", True),
    # shorter texts: swapped back, '= 0o644' may be on lines never shown, 'PERMISSIONS = 0o644' inside '0o6440'
    ("s/PERMISSIONS = None/PERMISSIONS = 0o644/", "s/PERMISSIONS = 0o644/PERMISSIONS = None/", False),
    ("s/= None/= 0o644/", "s/= 0o644/= None/", False),
    # psf/requests-1766: a text of 8 or more ending in no part of a name, swapped back as it was swapped
    ("s/PERMISSIONS = None/PERMISSIONS = (0o644)/", "s/PERMISSIONS = (0o644)/PERMISSIONS = None/", True),
    ("s/FILE_UPLOAD_PERMISSIONS = None/FILE_UPLOAD_PERMISSIONS = 0o644/",  # an expression: other lines may match
     "s/FILE_UPLOAD_PERMISSIONS = 0o6.*/FILE_UPLOAD_PERMISSIONS = None/", False),
    ("s/FILE_UPLOAD_PERMISSIONS = None/FILE_UPLOAD_PERMISSIONS = 0o644/I",  # any case: other lines may match
     "s/FILE_UPLOAD_PERMISSIONS = 0o644/FILE_UPLOAD_PERMISSIONS = None/I", False),
    ("s/FILE_UPLOAD_PERMISSIONS = None/FILE_UPLOAD_PERMISSIONS = 0o644/",  # & puts the matched text back
     "s/FILE_UPLOAD_PERMISSIONS = 0o644/& # FILE_UPLOAD_PERMISSIONS = None/", False),
])
def test_a_literal_text_swapped_by_sed_and_swapped_back_undoes_the_edit(apply: str, undo: str, on_base: bool,
                                                                        tmp_path: Path) -> None:
    show = Step("", "cat shop/settings.py", 0, "FILE_UPLOAD_PERMISSIONS = None\nDEBUG = False\n", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [show, Step("", f"sed -i '{apply}' shop/settings.py", 0, "", None), run,
             Step("", f"sed -i '{undo}' shop/settings.py", 0, "", None), run,
             Step("", f"sed -i '{apply}' shop/settings.py", 0, "", None), run, _NAN_UNRELATED]
    checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
              for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, on_base, False, False], (undo, checks)


def test_a_fix_undone_by_hand_to_see_a_failure_on_the_unchanged_code_and_made_again_was_checked(
        tmp_path: Path) -> None:
    """psf/requests-1766: ``sed -i 's/qop=auth/qop="auth"/'``, the tests fail; the same sed the
    other way, the same failure (the unchanged code's: named, not the agent's); the fix made again
    as it was checked and submitted. The code submitted is the code its first run checked: nothing
    was submitted untested, and the run on the unchanged code ended no iteration."""
    show = Step("", "cat requests/auth.py", 0, "def build():\n    base = ', qop=auth, nc=%s'\n    return base\n", None)
    apply = Step("", "sed -i 's/qop=auth/qop=\"auth\"/' requests/auth.py", 0, "", None)
    undo = Step("", "sed -i 's/qop=\"auth\"/qop=auth/' requests/auth.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [show, apply, run, undo, run, apply]
    document = convert_trajectory(_trajectory(steps))
    checks = [c for it in document["iterations"] for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, True], checks
    assert len(document["iterations"]) == 1 and not document["iterations"][-1]["iteration_telemetry"]["actions"].get(
        "untested_edits"), document["iterations"][-1]["iteration_telemetry"]["actions"]
    assert "no_local_validation" not in _judged(steps, tmp_path)


@pytest.mark.parametrize("shown", [
    "def f(s):\n    return s.replace(\".[\", \"[\")\ndef g(self):\n    return self.x\n",  # it changed 2 lines shown, the fix 1
    "def f(s):\n    return s.replace(\".[\", \"[\")\n",  # 1 and 1: 'return s' starts names on lines never shown
])
def test_a_short_text_swapped_back_over_every_line_is_no_unchanged_code(shown: str, tmp_path: Path) -> None:
    """pytest-6202: its fix ``s/return s.replace(".[", "[")/return s/``, then, to see the unchanged
    code, ``s/return s/return s.replace(".[", "[")/``, which also rewrote the next line's ``return
    self`` (a syntax error): the text swapped back is the start of other lines' names, and swapping
    it back changed more of the lines shown than the fix did. Its crash is the agent's code, not
    the unchanged code's."""
    show = Step("", "cat src/python.py", 0, shown, None)
    fix = Step("", "sed -i 's/return s.replace(\".\\[\", \"\\[\")/return s/' src/python.py", 0, "", None)
    undo = Step("", "sed -i 's/return s/return s.replace(\".\\[\", \"\\[\")/' src/python.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    crash = Step("", "python -m pytest tests/test_sums.py -v", 2, "E   SyntaxError: invalid syntax\n", None)
    document = convert_trajectory(_trajectory([show, fix, run, undo, crash]))
    checks = [c for it in document["iterations"] for c in it["iteration_telemetry"].get("checks") or []]
    assert [c.get("on_base", False) for c in checks] == [False, False], checks


@pytest.mark.parametrize("other", [
    # not the inverse: the line changed a second time, another way
    Step("", "sed -i '2s|sum(xs)|sum(xs) + 0|' shop/sums.py", 0, "", None),
    # the inverse's text, but over every line: lines the log never showed may change too
    Step("", "sed -i 's|sum(xs)|sum(xs) / 0|' shop/sums.py", 0, "", None),
])
def test_an_edit_that_does_not_exactly_undo_the_last_leaves_the_agents_code_in_place(other: Step,
                                                                                     tmp_path: Path) -> None:
    apply = Step("", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    steps = [apply, run, other, run, _NAN_UNRELATED]
    assert _judged(steps, tmp_path)["submitted_over_failure"][:2] == (-2.0, "likely")
    checks = [c for it in convert_trajectory(_trajectory(steps))["iterations"]
              for c in it["iteration_telemetry"].get("checks") or []]
    assert not any(c.get("on_base") for c in checks), checks


def _scores(steps: list[Step], tmp_path: Path, policy: str = "", statement: str | None = None) -> list[float]:
    trajectory = _trajectory(steps, hidden=False)
    if statement is not None:
        trajectory = dataclasses.replace(trajectory, statement=statement)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(convert_trajectory(trajectory)))
    options = {}
    if policy:
        policy_file = tmp_path / "policy.yaml"
        policy_file.write_text(policy)
        options["policy"] = load_policy(str(policy_file))
    return list(judge(load_run(str(path)), **options).trajectory)


def test_tests_failing_on_the_unchanged_code_are_left_out_of_the_iterations_score(tmp_path: Path) -> None:
    """test_nan fails before the agent's first edit and after each: the environment's failure, or
    the project's, not its change's. It is left out of every iteration's score, so the change
    that fixes test_total is not a step that moved nothing; the policy's ``counted`` restores it."""
    failing_two = ("tests/test_sums.py::test_total FAILED\ntests/test_sums.py::test_nan FAILED\n"
                   "===== 2 failed, 3 passed in 0.1s =====\n")
    first = Step("", "python -m pytest tests/test_sums.py -v", 1, failing_two, None)
    fix = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    after = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN.replace("1 passed", "4 passed"), None)
    tidy = Step("", "sed -i 's|return sum(xs)|return sum(list(xs))|' shop/sums.py", 0, "", None)
    steps = [first, fix, after, tidy, after]
    assert _scores(steps, tmp_path) == [100.0, 100.0]
    assert _scores(steps, tmp_path, "rules:\n  failing_on_unchanged_code_in_local_runs: counted\n") == [80.0, 80.0]
    # a test the task names is its target, not the environment's: it stays counted
    assert _scores(steps, tmp_path, statement="Make test_nan pass: sum of NaN") == [80.0, 80.0]


def test_a_cut_output_counts_the_failures_its_unchanged_run_counted(tmp_path: Path) -> None:
    """An output cut short names 2 of its 14 failures. The same command on the unchanged code
    failed 14 too, naming the same two: the 14 are left out; a 15th, named or not, is the change's."""
    def sympy(failed: int, names: tuple[str, ...] = ("test_refine", "test_diff")) -> str:
        headers = "".join(f"____ sympy/matrices/tests/test_m.py:{name} ____\nValueError\n" for name in names)
        return f"{headers}... (output cut) ...\n tests finished: 216 passed, {failed} exceptions, in 7.55 seconds\n"
    apply = Step("", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    undo = Step("", "sed -i '2s|sum(xs)|sum(xs) / 0|' shop/sums.py", 0, "", None)
    run = "bin/test sympy/matrices/tests/test_m.py"
    steps = [apply, Step("", run, 1, sympy(14), None), undo, Step("", run, 1, sympy(14), None), apply,
             Step("", run, 1, sympy(15), None)]
    assert _scores(steps, tmp_path) == [100.0, round(100 * 216 / 217, 2)]
    new = Step("", run, 1, sympy(14, ("test_refine", "test_new")), None)  # test_new is not among the unchanged run's
    assert _scores([*steps[:5], new], tmp_path)[-1] == round(100 * 216 / 217, 2)


def test_restoring_a_file_the_agent_never_changed_leaves_its_code_in_place(tmp_path: Path) -> None:
    """`git checkout tests/test_sums.py` puts back a file the agent did not touch: shop/sums.py is
    still changed, so the next run is a check of its code and the narrowing is still charged."""
    edit = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    other = Step("", "git checkout tests/test_sums.py", 0, "Updated 1 path from the index\n", None)
    points, strength, _ = _judged([edit, run, other, run, _NAN_UNRELATED], tmp_path)["submitted_over_failure"]
    assert (points, strength) == (-2.0, "likely")


def test_a_test_that_passes_on_the_unchanged_code_is_still_charged(tmp_path: Path) -> None:
    """Set aside, the failing test passes: the break is the agent's, and the narrowed run hid it."""
    edit = Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    run = Step("", "python -m pytest tests/test_sums.py -v", 1, FAILING_RUN, None)
    passing = Step("", "git stash && python -m pytest tests/test_sums.py -v && git stash pop", 0,
                   FAILING_RUN.replace("test_nan FAILED", "test_nan PASSED").replace("1 failed, 1 passed", "2 passed"), None)
    points, strength, _ = _judged([edit, run, passing, _NAN_UNRELATED], tmp_path)["submitted_over_failure"]
    assert (points, strength) == (-2.0, "likely")


def test_a_note_names_three_reasons_a_check_validated_nothing_and_counts_the_rest() -> None:
    """An agent fighting an image without its dependencies meets a new missing module at every
    run: the note stays readable, three reasons and how many more."""
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             *[Step("", f"python -c 'import {name}'", 1, f"ModuleNotFoundError: No module named '{name}'\n", None)
               for name in ("numpy", "pandas", "zmq", "tornado", "six")]]
    notes = convert_trajectory(_trajectory(steps))["run"]["notes"]
    (note,) = [n for n in notes if n.startswith("5 test run(s) validated nothing")]
    assert "(numpy)" in note and "(zmq)" in note and "(tornado)" not in note and note.endswith("(+2 more reasons)")


@pytest.mark.parametrize("after,untested", [
    (Step("", "sed -i 's|sum(xs)|sum(xs) or 0|' shop/sums.py", 0, "", None), 1),  # the code changed, never run
    (Step("", "cat <<'EOF' > SUMMARY.md\nFixed the division.\nEOF", 0, "", None), 0),  # a summary is no code
])
def test_source_written_after_the_last_check_was_submitted_untested(after: Step, untested: int, tmp_path: Path) -> None:
    # no submitted diff (a Terminal-Bench trial): every file written counts, the summary too
    document = convert_trajectory(Trajectory(instance="t", agent="a", source="terminal-bench",
                                             steps=[*_red_green(), after]))
    final = document["iterations"][-1]["iteration_telemetry"]
    assert final["actions"].get("untested_edits", 0) == untested
    assert any("came after the last check: submitted untested" in n for n in document["run"]["notes"])
    judged = _judged([*_red_green(), after], tmp_path)
    assert ("no_local_validation" in judged) is bool(untested)
    if untested:
        points, _, evidence = judged["no_local_validation"]
        assert points == -2.0 and "submitted untested" in evidence
        # the evidence names the file and the check it came after, as the log shows them
        assert evidence.endswith("wrote shop/sums.py after `python reproduce.py`, and no check ran after"), evidence
        assert final["actions"]["untested_files"] == ["shop/sums.py"]


def _untested(steps: list[Step]) -> tuple[int, list[str]]:
    document = convert_trajectory(Trajectory(instance="t", agent="a", source="terminal-bench", steps=steps))
    notes = [n for n in document["run"]["notes"] if "came after the last check" in n]
    return document["iterations"][-1]["iteration_telemetry"]["actions"].get("untested_edits", 0), notes


def test_code_put_back_from_a_copy_after_the_last_check_is_the_code_that_check_ran() -> None:
    """A backup made after the last check and moved back (the agent looking at the unchanged
    code in between) leaves the code as that check ran it: nothing is submitted untested."""
    aside = [Step("", "cp shop/sums.py shop/sums.py.bak && git checkout shop/sums.py", 0, "", None),
             Step("", "python reproduce.py", 1, TRACEBACK, None)]
    assert _untested([*_red_green(), *aside, Step("", "mv shop/sums.py.bak shop/sums.py", 0, "", None)]) == (0, [])
    # copied back, the backup stays in the repository: a file written after the check, but no code
    count, notes = _untested([*_red_green(), *aside, Step("", "cp shop/sums.py.bak shop/sums.py", 0, "", None)])
    assert count == 0 and notes == ["1 edit(s) to the repository came after the last check: submitted untested"]


@pytest.mark.parametrize("again,untested", [
    ("sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0),  # the checked fix made again, as it was
    ("sed -i '2s|sum(xs) / 0|sum(xs) or 0|' shop/sums.py", 2),  # another fix: never run (the undo and it)
    ("sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 2),  # over every line: lines the log never showed may change
])
def test_a_fix_undone_after_the_last_check_and_made_again_is_the_code_that_check_ran(again: str,
                                                                                    untested: int) -> None:
    """xarray-4629 checked its fix, undid it by hand to run the failing test on the unchanged code,
    and made the fix again before submitting: the submitted code is what its last check ran."""
    seen = Step("", "cat shop/sums.py", 0, "def total(xs):\n    return sum(xs) / 0\n", None)
    fix = Step("", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    undo = Step("", "sed -i '2s|sum(xs)|sum(xs) / 0|' shop/sums.py", 0, "", None)
    steps = [seen, Step("", "python reproduce.py", 1, TRACEBACK, None), fix,
             Step("", "python reproduce.py", 0, "", None), undo, Step("", "python reproduce.py", 1, TRACEBACK, None),
             Step("", again, 0, "", None)]
    count, notes = _untested(steps)
    assert count == untested and bool(notes) is bool(untested), notes


@pytest.mark.parametrize("after,untested", [
    (["git checkout shop/sums.py", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py"], 0),  # the checked fix again
    (["git checkout shop/sums.py", "sed -i '2s|sum(xs) / 0|sum(xs) or 0|' shop/sums.py"], 2),  # another fix
    (["git checkout -- shop/sums.py", "git restore shop/sums.py", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py"], 0),
])
def test_a_fix_made_again_on_a_restored_file_is_the_code_the_last_check_ran(after: list[str], untested: int) -> None:
    """``git checkout F`` puts back the unchanged code, as reading the checks on it says: the same
    fix made on it again after the last check is what that check ran, another fix is untested."""
    seen = Step("", "cat shop/sums.py", 0, "def total(xs):\n    return sum(xs) / 0\n", None)
    fix = Step("", "sed -i '2s|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)
    steps = [seen, Step("", "python reproduce.py", 1, TRACEBACK, None), fix, Step("", "python reproduce.py", 0, "", None),
             *(Step("", command, 0, "", None) for command in after)]
    count, notes = _untested(steps)
    assert count == untested and bool(notes) is bool(untested), notes


def test_a_copy_that_brings_other_contents_into_the_code_is_untested() -> None:
    other = Step("", "cp shop/other.py shop/sums.py", 0, "", None)
    count, notes = _untested([*_red_green(), other])
    assert count == 1 and notes
    # a backup from before the last change brings back code the last check did not run
    steps = _red_green()
    early = [*steps[:3], Step("", "cp shop/sums.py /testbed/shop/sums.py.orig", 0, "", None),
             Step("", "sed -i 's|sum(xs)|sum(xs) or 0|' shop/sums.py", 0, "", None), *steps[3:],
             Step("", "mv shop/sums.py.orig shop/sums.py", 0, "", None)]
    count, notes = _untested(early)
    assert count == 1 and notes


def test_a_failure_fixed_before_submitting_is_not_submitted_over(tmp_path: Path) -> None:
    assert "submitted_over_failure" not in _judged(_red_green(), tmp_path)


# --------------------------------------------------------------------------- reports as published


MINI2 = ROOT / "tests" / "fixtures" / "mini_swe_agent_2" / "trajs"


def _import(tmp_path: Path, *options: str) -> tuple[dict[str, dict], str]:  # type: ignore[type-arg]
    trajs = tmp_path / "trajs"
    if not trajs.exists():
        trajs.mkdir()
        for name in ("shop__shop-1", "shop__shop-2", "shop__shop-3"):
            shutil.copy(MINI2 / name / f"{name}.traj.json", trajs / f"{name}.traj.json")
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    result = runner.invoke(app, ["import", "swe-agent", str(trajs), "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    return {p.stem: json.loads(p.read_text()) for p in out.rglob("*.json")}, result.stderr


def _held_back(document: dict) -> object:  # type: ignore[type-arg]
    return document["iterations"][-1]["iteration_telemetry"]["test_results"].get("hidden")


def test_a_harness_summary_is_read_in_full(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"completed_ids": ["shop__shop-1", "shop__shop-2", "shop__shop-3"],
                                   "resolved_ids": ["shop__shop-1"], "unresolved_ids": ["shop__shop-2"],
                                   "error_ids": ["shop__shop-3"], "empty_patch_ids": []}))
    runs, stderr = _import(tmp_path, "--reports", str(summary))
    assert _held_back(runs["shop__shop-1"]) == {"passed": 1, "total": 1}
    assert _held_back(runs["shop__shop-2"]) == {"passed": 0, "total": 1}
    # the harness failed on shop-3: no outcome, a note, nothing charged
    assert _held_back(runs["shop__shop-3"]) is None
    assert any("harness failed" in note for note in runs["shop__shop-3"]["run"]["notes"])
    assert "in no list" not in stderr


def test_a_file_of_resolved_ids_leaves_the_others_unknown_and_says_so_once(tmp_path: Path) -> None:
    resolved = tmp_path / "results.json"
    resolved.write_text(json.dumps({"resolved": ["shop__shop-1"]}))
    runs, stderr = _import(tmp_path, "--reports", str(resolved))
    assert _held_back(runs["shop__shop-1"]) == {"passed": 1, "total": 1} and _held_back(runs["shop__shop-2"]) is None
    (line,) = [line for line in stderr.splitlines() if "in no list" in line]
    assert "2 instance(s)" in line and "--unlisted unresolved" in line
    runs, stderr = _import(tmp_path, "--reports", str(resolved), "--unlisted", "unresolved")
    assert _held_back(runs["shop__shop-2"]) == {"passed": 0, "total": 1} and "in no list" not in stderr


def test_a_report_beside_the_trajectory_is_found_and_a_mistyped_one_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run" / "shop__shop-1"
    folder.mkdir(parents=True)
    shutil.copy(MINI2 / "shop__shop-1" / "shop__shop-1.traj.json", folder / "shop__shop-1.traj.json")
    (folder / "report.json").write_text(json.dumps({"shop__shop-1": {"resolved": True, "tests_status": {
        "FAIL_TO_PASS": {"success": ["tests/test_price.py::test_cents"], "failure": []}}}}))
    out = tmp_path / "out"
    result = runner.invoke(app, ["import", "swe-agent", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (document,) = [json.loads(p.read_text()) for p in out.rglob("*.json")]
    assert _held_back(document) == {"passed": 1, "total": 1}
    missing = runner.invoke(app, ["import", "swe-agent", str(folder), "--out", str(out), "--reports", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


_FIXTURE = "with open('test_app/__init__.py', 'w') as f:\n    pass\n"


@pytest.mark.parametrize("command,writes", [
    # django-14500: the script is written here and run later; the files it opens are written then
    (f"cat <<'EOF' > reproduce_issue.py\n{_FIXTURE}EOF", [("reproduce_issue.py", "redirect")]),
    (f"cd /testbed && tee reproduce_issue.py <<'EOF' > /dev/null\n{_FIXTURE}EOF", [("reproduce_issue.py", "redirect")]),
    # a script an interpreter reads, or one written and run in the same command, writes them now
    (f"python - <<'EOF'\n{_FIXTURE}EOF", [("test_app/__init__.py", "script")]),
    (f"cat <<'EOF' | python3\n{_FIXTURE}EOF", [("test_app/__init__.py", "script")]),
    (f"cat <<'EOF' > r.py && python3 r.py\n{_FIXTURE}EOF", [("r.py", "redirect"), ("test_app/__init__.py", "script")]),
])
def test_a_script_written_into_a_file_writes_nothing_until_it_runs(command: str, writes: list[tuple[str, str]]) -> None:
    assert written_files(command) == writes


@pytest.mark.parametrize("command,writes", [
    ("git checkout django/db/models.py 2>/dev/null || true", [("django/db/models.py", "restore")]),
    ("cp a.py b.py 2> /dev/null", [("b.py", "copy")]),
    ("sed -i 's/a/b/' m.py 2>&1", [("m.py", "sed")]),
])
def test_redirections_are_no_operands(command: str, writes: list[tuple[str, str]]) -> None:
    assert written_files(command) == writes


@pytest.mark.parametrize("command,writes", [
    # sphinx-7454 (OpenHands): a reproduction written outside the repository, then moved into it
    ("mv /workspace/reproduce_none.py /workspace/sphinx/", [("/workspace/sphinx/reproduce_none.py", "copy")]),
    ("mv x.py .", [("x.py", "copy")]),
    ("cp a.py b.py pkg", [("pkg/a.py", "copy"), ("pkg/b.py", "copy")]),  # several sources: a folder
    ("cp -r src/pkg build/", [("build/pkg", "copy")]),
    ("cp a.py b.py", [("b.py", "copy")]),
    ("mv -f old.py new.py", [("new.py", "copy")]),
])
def test_a_copy_into_a_folder_writes_each_source_there(command: str, writes: list[tuple[str, str]]) -> None:
    assert written_files(command) == writes


# --------------------------------------------------------------------------- the Inspect scorer reads the same checks


def _message(role: str, **fields: object) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(role=role, **fields)


def _call(call_id: str, function: str, **arguments: object) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(id=call_id, function=function, arguments=arguments)


def test_inspect_python_calls_are_checks_and_refused_calls_did_not_run() -> None:
    from types import SimpleNamespace

    from procjudge.inspect import steps as inspect_steps

    refused = SimpleNamespace(type="parsing", message="Found 1 validation errors parsing tool input arguments")
    failed = SimpleNamespace(type="unknown", message="Traceback (most recent call last):\nZeroDivisionError: boom")
    messages = [
        _message("assistant", content="", tool_calls=[_call("1", "bash", cmd="sed -i 's/0/1/' shop/sums.py"),
                                                      _call("2", "bash", cmd="make test"),
                                                      _call("3", "python", code="from shop.sums import total\nprint(total([1]))"),
                                                      _call("4", "python", code="open('shop/x.py', 'w').write('x = 1')"),
                                                      _call("5", "bash", cmd="python reproduce.py")]),
        _message("tool", tool_call_id="1", content="", error=None),
        _message("tool", tool_call_id="2", content="", error=refused),
        _message("tool", tool_call_id="3", content="1\n", error=None),
        _message("tool", tool_call_id="4", content="", error=None),
        _message("tool", tool_call_id="5", content="", error=failed),
    ]
    found, _ = inspect_steps(messages)
    assert [s.command.split(" ", 1)[0] for s in found] == ["sed", "python", "python", "python"]  # `make test` never ran
    assert found[1].shell and not found[1].writes  # code that reads: a check, once convert reads it
    assert ("shop/x.py", "script") in found[2].writes  # code that writes a file: an edit
    assert found[3].returncode == 1  # Inspect answered the failed command with an error
    document = convert_trajectory(Trajectory(instance="i", agent="a", source="inspect", steps=found, submission=None))
    checks = [c for entry in document["iterations"]
              for c in entry["iteration_telemetry"].get("checks", [])]
    assert [(c["command"].split(" ")[:2], c["outcome"]) for c in checks] == [
        (["python", "-c"], "passed"), (["python", "reproduce.py"], "failed")]


@pytest.mark.parametrize("command,expected", [
    ("cd /testbed && cat <<'EOF' > x.py\nprint('a && b; c')\nEOF\npython x.py | tail -3",
     ["cd /testbed", "cat <<'EOF' > x.py", "python x.py", "tail -3"]),
    ("if [ -f m.py ]; then sed -i 's/a/b/' m.py; fi", ["[ -f m.py ]", "sed -i 's/a/b/' m.py"]),
    ("for f in a.py b.py; do python $f; done", ["python $f"]),
    ('echo "a && b" > out.txt', ['echo "a && b" > out.txt']),
    ("(cd sub && make test) 2>&1", ["cd sub", "make test 2>&1"]),  # a redirection is the last command's
    ("python a.py \\\n  --fast; echo done", ["python a.py    --fast", "echo done"]),
    # inside single quotes a backslash-newline is text: sed's `c\\` writes the lines after it (django-13933)
    ("sed -i '3c\\\n    a = 1\\\n    b = 2' m.py && pytest \\\n  t.py",
     ["sed -i '3c\\\n    a = 1\\\n    b = 2' m.py", "pytest    t.py"]),
    ('python -c "import os;\\\nprint(1)" \\\n  && echo ok', ['python -c "import os;print(1)"', "echo ok"]),
    ("python -c 'import os\nprint(1)' \\\n  --x", ["python -c 'import os\nprint(1)'    --x"]),  # its lines kept
    ("cat <<EOF > a.py\nnever closed\nstill the body", ["cat <<EOF > a.py"]),  # cut short: split by hand
])
def test_commands_are_read_with_the_shells_grammar(command: str, expected: list[str]) -> None:
    assert list(simple_commands(command)) == expected


REFUSED = ("bash: -c: line 3: unexpected EOF while looking for matching `\"'\n"
           "bash: -c: line 4: syntax error: unexpected end of file\n")


@pytest.mark.parametrize("command,writes,test", [
    # django-15037: `\'` closed the single-quoted sed script and left a double quote open; bash ran nothing,
    # and the words after the quote had read as 30 files written ('if', 'is_relation:', ...)
    ("sed -i '3c\\\n    x = \"%s(\\'%s\\'\" % y' shop/sums.py", [], None),
    # the lines before the one the shell could not parse ran; nothing from that line on did
    ("sed -i 's/a/b/' shop/sums.py\npython -m pytest tests && echo \"done", [("shop/sums.py", "sed")], None),
    ("python -m pytest tests\nsed -i 's/a/b/' shop/sums.py && echo \"x", [], "python -m pytest tests"),
])
def test_a_command_line_the_shell_refused_ran_only_its_lines_before_the_refusal(
        command: str, writes: list[tuple[str, str]], test: str | None) -> None:
    step = Step("", command, 2, REFUSED, None)
    assert step.writes == writes and (step.test is not None) == (test is not None)
    assert Step("", command, 0, "", None).writes  # the same line, run: its writes are read as before


# A character after `{` (or `{1..`) that tree-sitter-bash's scanner hands to C's isdigit(): above 255 it is read
# out of the table's bounds, a crash at random (this one, from the fuzz targets, took a CI run down).
BRACE_HAZARDS = ["echo {\U00076f96,a}", "x {{\u00e9} && ls", "seq {1..2\U0001F600}", "{7\U0010FFFF", "{..\u4e2d}"]


@pytest.mark.parametrize("command", BRACE_HAZARDS)
def test_a_brace_never_hands_the_grammar_a_wide_character_where_it_reads_digits(command: str) -> None:
    handed = parseable(command)
    assert len(handed) == len(command.encode("utf-8"))  # every node's offsets still fit the command
    assert re.search(rb"\{[0-9]*(\.\.[0-9]*)?[\x80-\xff]", handed) is None, handed
    assert all(part in command for part in simple_commands(command))  # the text is the command's own


def test_the_grammar_reads_no_memory_out_of_bounds(tmp_path: Path) -> None:
    """The parser under valgrind on commands that once read past the isdigit() table: no invalid read."""
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (.ci/run installs it)")
    script = tmp_path / "parse.py"
    script.write_text("from procjudge.importers.grammar import simple_commands\n"
                      f"for command in {BRACE_HAZARDS!r}:\n    simple_commands(command)\nprint('parsed')\n")
    done = subprocess.run(["valgrind", "--error-exitcode=99", "--undef-value-errors=no", sys.executable, str(script)],
                          check=False, capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "PYTHONMALLOC": "malloc", "PYTHONPATH": str(ROOT)})
    invalid = [line for line in done.stderr.splitlines() if "Invalid read" in line or "Invalid write" in line]
    assert "parsed" in done.stdout and not invalid, done.stderr[-3000:]


def test_an_edit_inside_a_conditional_is_an_edit() -> None:
    assert written_files("if [ -f m.py ]; then sed -i 's/a/b/' m.py; fi") == [("m.py", "sed")]



def test_a_failing_check_re_run_with_only_reads_between_is_unchanged(tmp_path: Path) -> None:
    failing = Step("", "python -m pytest tests", 1, FAILING_RUN, None)
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None), failing,
             Step("", "cat shop/sums.py | grep -n total", 0, "1:def total(xs):\n", None), _copy(failing),
             Step("", "git diff", 0, "", None), _copy(failing)]
    document = convert_trajectory(_trajectory(steps))
    checks = document["iterations"][0]["iteration_telemetry"]["checks"]
    assert [c.get("unchanged", False) for c in checks] == [False, True, True]
    points, strength, evidence = _judged(steps, tmp_path)["copy_paste_loop"]
    assert (points, strength) == (-5.0, "likely") and "failed 3 times in a row with nothing written" in evidence


@pytest.mark.parametrize("between", ["pip install -e .", "make clean", "export LLVM_DIR=/usr/lib/llvm-14",
                                     "cat <<'EOF' > reproduce.py\nprint(1)\nEOF"])
def test_a_re_run_after_the_environment_or_a_script_changed_is_no_loop(between: str, tmp_path: Path) -> None:
    failing = Step("", "python -m pytest tests", 1, FAILING_RUN, None)
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None), failing,
             Step("", between, 0, "", None), _copy(failing), Step("", between, 0, "", None), _copy(failing)]
    document = convert_trajectory(_trajectory(steps))
    checks = document["iterations"][0]["iteration_telemetry"]["checks"]
    assert not any(c.get("unchanged") for c in checks)
    assert "copy_paste_loop" not in _judged(steps, tmp_path)


def test_a_re_run_with_other_options_is_another_look_not_the_same_check(tmp_path: Path) -> None:
    """astropy-8707 and -8872: the test file fails on the image's warnings turned into errors; the
    agent re-runs it with `-W ignore`, then with `PYTHONWARNINGS=...`, then with `-c /dev/null`.
    Each is the same suite, but not the same check run again: no copy-paste loop."""
    failing = Step("", "python -m pytest tests", 1, FAILING_RUN, None)
    steps = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None), failing,
             Step("", "python -m pytest -W ignore tests", 1, FAILING_RUN, None),
             Step("", "PYTHONWARNINGS=ignore python -m pytest tests", 1, FAILING_RUN, None),
             Step("", "python -m pytest -c /dev/null tests", 1, FAILING_RUN, None)]
    document = convert_trajectory(_trajectory(steps))
    checks = document["iterations"][0]["iteration_telemetry"]["checks"]
    assert len(checks) == 4 and not any(c.get("unchanged") for c in checks), checks
    assert "copy_paste_loop" not in _judged(steps, tmp_path)


def test_a_swe_agent_1_run_is_filed_under_the_model_of_its_own_configuration(tmp_path: Path) -> None:
    source = ROOT / "tests" / "fixtures" / "swe_agent_traj" / "marshmallow-code__marshmallow-1867.function_calling.traj"
    folder = tmp_path / "some-run-folder"
    folder.mkdir()
    shutil.copy(source, folder / source.name)
    result = runner.invoke(app, ["import", "swe-agent", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    (document,) = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("*.json")]
    assert document["run"]["agent"] == "gpt-4o"  # replay_config.agent.model.name, not the folder


def test_a_commit_the_log_showed_in_heads_history_is_not_beyond_the_base() -> None:
    log = ("commit 3f1c2a9b7e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b\nAuthor: Dev\n\n    Fix parser\n\n"
           "commit 9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b\nAuthor: Dev\n\n    Add parser\n")
    steps = [Step("", "git log -n 2 -- shop/sums.py", 0, log, None),
             Step("", "git show 9a8b7c6d -- shop/sums.py", 0, "+    return sum(xs)\n", None),
             Step("", "git show deadbeef1 -- shop/sums.py", 0, "+    return sum(xs)\n", None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python reproduce.py", 0, "SUCCESS\n", None)]
    document = convert_trajectory(_trajectory(steps))
    reads = [read for entry in document["iterations"] for read in entry["iteration_telemetry"].get("history", [])]
    assert [read["revision"] for read in reads] == ["deadbeef1"]  # the ancestor's read is the base's own past


@pytest.mark.parametrize("others,fires", [(("config", "db", "utils", "models"), True), ((), False)])
def test_shotgun_debugging_reads_the_frames_of_the_agents_own_crash(others: tuple[str, ...], fires: bool,
                                                                   tmp_path: Path) -> None:
    """The reproduction crashed through shop/sums.py; edits of files no traceback passed through,
    between two checks, are the shotgun."""
    names = ("sums", *others)
    steps = [Step("", "python reproduce.py", 1, TRACEBACK, None),
             Step("", "sed -i 's/a = 1/a = 2/' shop/sums.py", 0, "", None),
             Step("", "python reproduce.py", 1, TRACEBACK, None),
             *(Step("", f"sed -i 's/a = 1/a = 2/' shop/{name}.py", 0, "", None) for name in (others or ("sums",))),
             Step("", "python reproduce.py", 0, "SUCCESS\n", None)]
    trajectory = _trajectory(steps)
    trajectory.submission = "".join(f"diff --git a/shop/{n}.py b/shop/{n}.py\n--- a/shop/{n}.py\n+++ b/shop/{n}.py\n"
                                    "@@ -1 +1 @@\n-a = 1\n+a = 2\n" for n in names)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(convert_trajectory(trajectory)))
    items = {item.id: item for item in judge(load_run(str(path))).items}
    assert ("shotgun_debugging" in items) is fires
    if fires:
        evidence = items["shotgun_debugging"].evidence
        assert "appear in no failing test's stack trace: shop/config.py" in evidence
        # the failure the edits followed, as the agent's check showed it
        assert evidence.endswith("; the failure they followed: `python reproduce.py` crashed: ZeroDivisionError: division "
                                 "by zero (exit status 1)"), evidence


@pytest.mark.parametrize("rerun,fires", [(False, False), (True, True)])
def test_no_test_fixed_needs_the_failing_check_run_again(rerun: bool, fires: bool, tmp_path: Path) -> None:
    """Four files changed after an inline check failed: shotgun debugging only when that check ran
    again and still failed; when the agent's next check was another one, whether anything was fixed
    is not known (the log does not say), so the rule is not checked."""
    failing = Step("", "python -c 'from shop import sums; assert sums.total([1]) == 1'", 1, "AssertionError\n", None)
    other = Step("", "python -c 'from shop import db; print(db.ok())'", 0, "True\n", None)
    names = ("sums", "config", "db", "utils")
    steps = [Step("", "sed -i 's/a = 1/a = 2/' shop/main.py", 0, "", None), failing,
             *(Step("", f"sed -i 's/a = 1/a = 2/' shop/{name}.py", 0, "", None) for name in names),
             _copy(failing) if rerun else other]
    trajectory = _trajectory(steps)
    trajectory.submission = "".join(f"diff --git a/shop/{n}.py b/shop/{n}.py\n--- a/shop/{n}.py\n+++ b/shop/{n}.py\n"
                                    "@@ -1 +1 @@\n-a = 1\n+a = 2\n" for n in ("main", *names))
    path = tmp_path / "run.json"
    path.write_text(json.dumps(convert_trajectory(trajectory)))
    verdict = judge(load_run(str(path)))
    assert ("shotgun_debugging" in {item.id for item in verdict.items}) is fires
    if not fires:
        assert any(n.detector == "shotgun_debugging" for n in verdict.not_checked)


@pytest.mark.parametrize("rerun,paid", [(False, False), (True, True)])
def test_no_regression_needs_the_passing_check_run_again(rerun: bool, paid: bool, tmp_path: Path) -> None:
    """A check passed, the agent edited, then ran a check: no regression is ruled out only when the
    check that passed ran again; another script says nothing of the first one."""
    first = Step("", "python reproduce_alias.py", 0, "SUCCESS\n", None)
    other = Step("", "python reproduce_refcount.py", 0, "SUCCESS\n", None)
    steps = [Step("", "sed -i 's/a = 1/a = 2/' shop/sums.py", 0, "", None), first,
             Step("", "sed -i 's/b = 1/b = 2/' shop/sums.py", 0, "", None), _copy(first) if rerun else other]
    trajectory = _trajectory(steps)
    trajectory.submission = ("diff --git a/shop/sums.py b/shop/sums.py\n--- a/shop/sums.py\n+++ b/shop/sums.py\n"
                             "@@ -1,2 +1,2 @@\n-a = 1\n-b = 1\n+a = 2\n+b = 2\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(convert_trajectory(trajectory)))
    verdict = judge(load_run(str(path)))
    assert ("no_regressions" in {item.id for item in verdict.items}) is paid


# --------------------------------------------------------------------------- hostile commands, in bounded time


def _hostile(command: str) -> dict:  # type: ignore[type-arg]
    """A mini-swe-agent 1.x trajectory that shows m.py (a line of sixty a's) and runs ``command``."""
    shown = "     1\t" + "a" * 60 + "!\n     2\tx = 1\n"
    return {"instance_id": "m-1", "info": {"submission": SUBMISSION.replace("shop/sums.py", "m.py")},
            "messages": _messages(["cat -n m.py", command], [shown, ""])}


def _messages(commands: list[str], outputs: list[str]) -> list[dict]:  # type: ignore[type-arg]
    found: list[dict] = [{"role": "user", "content": "<pr_description>fix m</pr_description>"}]  # type: ignore[type-arg]
    for command, output in zip(commands, outputs, strict=True):
        found.append({"role": "assistant", "content": f"THOUGHT: x\n\n```bash\n{command}\n```"})
        found.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{output}</output>"})
    return found


@pytest.mark.parametrize("command,why", [
    ("sed -E -i 's/(a|aa)+$/x/' m.py", "took longer"),
    ("sed -i 's/\\(a\\|aa\\)\\+$/x/' m.py", "took longer"),
    ("sed -i '/\\(a\\|aa\\)\\+$/d' m.py", "took longer"),
    ("sed -E -i 's/(a+)+$/x/' m.py", "matched none"),  # the issue's own: no backtracking blow-up in this engine
    ("sed -i '1,99999999999d' m.py", "never shown"),
])
def test_an_agents_expression_or_line_range_is_replayed_in_bounded_time(command: str, why: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = tmp_path / "trajs"
    folder.mkdir()
    document = _hostile(command)
    (folder / "m-1.traj.json").write_text(json.dumps(document))
    shutil.copy(MINI2 / "shop__shop-1" / "shop__shop-1.traj.json", folder / "shop__shop-1.traj.json")
    done = subprocess.run([sys.executable, "-m", "procjudge", "import", "swe-agent", str(folder), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    runs = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out").rglob("*.json")}
    assert set(runs) == {"m-1", "shop__shop-1"}  # the valid file beside it is imported too
    notes = " ".join(runs["m-1"]["run"]["notes"])
    assert why in notes, notes


def test_an_editor_edit_of_a_huge_line_range_is_not_rebuilt() -> None:
    from procjudge.importers import edits as rebuild

    views = rebuild.Views()
    views.see("m.py", {1: "x = 1", 2: "y = 2"})
    found, missed = rebuild.line_edit(views, "m.py", 1, 99_999_999_999, "z = 3", "editor")
    assert found == [] and missed is not None and "more lines" in missed


@pytest.mark.parametrize("module,broken", [("cupy", True), ("shop", False)])
def test_a_held_back_run_broken_by_its_environment_is_named_and_never_charged(module: str, broken: bool,
                                                                               tmp_path: Path) -> None:
    """Every held-back test failed because the collection stopped on a module the image lacks (its
    log beside the report says so): a note, and the outcome left out. A module the project owns is
    the agent's own import error, and stands."""
    instance = "shop__shop-1"
    trajs = tmp_path / "trajs" / instance
    trajs.mkdir(parents=True)
    shutil.copy(MINI2 / instance / f"{instance}.traj.json", trajs / f"{instance}.traj.json")
    logs = tmp_path / "logs" / instance
    logs.mkdir(parents=True)
    status = {"FAIL_TO_PASS": {"success": [], "failure": ["tests/test_sums.py::test_total"]},
              "PASS_TO_PASS": {"success": [], "failure": ["tests/test_sums.py::test_empty"]}}
    (logs / "report.json").write_text(json.dumps({instance: {"tests_status": status, "resolved": False}}))
    (logs / "test_output.txt").write_text("+ git checkout abc tests/test_sums.py\n" + COLLECTION.format(module=module))
    result = runner.invoke(app, ["import", "swe-agent", str(tmp_path / "trajs"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    run = json.loads(next((tmp_path / "out").rglob("*.json")).read_text())
    notes = " ".join(run["run"]["notes"])
    final = run["iterations"][-1]["iteration_telemetry"]["test_results"]
    if broken:
        assert "held-back run broken by its environment" in notes and "(cupy)" in notes, notes
        assert "hidden" not in final and "hidden_suites" not in final
    else:
        assert "broken by its environment" not in notes
        assert final["hidden"] == {"passed": 0, "total": 2}


def test_a_step_is_frozen_and_what_a_pass_learns_makes_a_new_step() -> None:
    """A step's classification is read once, when it is made; a later pass (a check's outcome,
    rebuilt edits, a code edit) returns a new step and never changes the one it was given."""
    step = Step("", "python -m pytest -q tests", 1, "FAILED tests/test_a.py::test_x\n1 failed in 0.1s\n", None)
    assert step.test == "python -m pytest tests" and step.counts is not None and step.counts.failed == 1
    with pytest.raises(AttributeError, match="a Step is frozen"):
        step.unavailable = "the runner is missing"
    marked = step.but(code_edit=True, unavailable="the runner is missing")
    assert (marked.code_edit, marked.unavailable, marked.check) == (True, "the runner is missing", None)
    assert (step.code_edit, step.unavailable, step.check) == (False, None, "python -m pytest tests")
    assert marked.test == step.test and marked.counts is step.counts
    with pytest.raises(TypeError, match="no field 'nope'"):
        step.but(nope=1)


def test_a_system_library_the_image_lacks_is_the_environment_s_not_a_failure() -> None:
    from procjudge.importers.checks import check_outcome, missing_library

    for said, library in (
            ("ImportError: Unable to find zbar shared library", "zbar"),
            ("ImportError: libGL.so.1: cannot open shared object file: No such file or directory", "libGL.so.1"),
            ("./app: error while loading shared libraries: libssl.so.3: cannot open shared object file", "libssl.so.3"),
            ("OSError: cannot load library 'libcairo.so.2': error 0x7e", "libcairo.so.2")):
        outcome = check_outcome(1, f"Traceback (most recent call last):\n  File \"x.py\", line 1\n{said}")
        assert missing_library(said) == library
        assert outcome.passed is None and outcome.unavailable is not None and library in outcome.unavailable
    # the project's own extension, not built, is the agent's: its import error fails the check
    own = check_outcome(1, "Traceback (most recent call last):\nImportError: _speedups.so: cannot open shared object file",
                        frozenset({"_speedups"}))
    assert own.passed is False and own.unavailable is None
    # a run that exited 0 passed, whatever it printed on the way
    assert check_outcome(0, "warning: Unable to find zbar shared library, using the fallback").passed is True
    assert missing_library("ValueError: no such library as the user asked for") is None
    # a test runner stopped by one: validation unavailable, named
    stopped = "ImportError while loading conftest\nImportError: libGL.so.1: cannot open shared object file: No such file"
    assert unavailable(Step("", "python -m pytest tests/test_render.py", 4, stopped, None)) == \
        "a system library the environment lacks is missing (libGL.so.1)"


def test_a_failed_maven_build_is_named_by_its_cause_not_its_advice() -> None:
    """Maven ends a failed build with advice on re-running it; the check keeps the line that names
    the cause (a real run's Checkstyle violations), which the rules read as the feedback."""
    from procjudge.importers.checks import check_outcome

    output = ("[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-checkstyle-plugin:"
              "3.4.0:check (checkstyle) on project fastjson2: You have 28 Checkstyle violations. -> [Help 1]\n[ERROR]\n"
              "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
              "[ERROR] After correcting the problems, you can resume the build with the command\n"
              "[ERROR]   mvn <args> -rf :fastjson2\n")
    outcome = check_outcome(1, output)
    assert outcome.passed is False and "28 Checkstyle violations" in outcome.line
    plain = check_outcome(1, "make: *** [all] Error 2\n")
    assert plain.line == "make: *** [all] Error 2"


def test_a_test_run_mini_swe_agent_killed_at_its_time_limit_validated_nothing(tmp_path: Path) -> None:
    """mini-swe-agent 1.x writes "The last command <command>...</command> timed out and has been
    killed." before the output the command had printed: pytest's progress dots are no failure, and
    the narrower selection the agent ran next selected nothing away."""
    from procjudge.importers.swe_agent import _observation

    killed = ("The last command <command>pytest tests/test_sums.py</command> timed out and has been killed.\n"
              "The output of the command was:\n <output>\ncollected 832 items\n\ntests/test_sums.py .....s..s.. [  4%]\n"
              "</output>\nPlease try another command and make sure to avoid those requiring interactive input.")
    code, output, _ = _observation(killed)
    assert code is None and output.startswith("The command timed out and has been killed.\n"), output
    messages = _messages(["sed -i 's/xs\\[1:\\]/xs/' shop/sums.py", "pytest tests/test_sums.py",
                          "pytest tests/test_sums.py -k total"],
                         ["", "", ("collected 4 items / 2 deselected\n\ntests/test_sums.py ..\n\n"
                                   "2 passed, 2 deselected in 0.1s\n")])
    messages[4]["content"] = killed
    document = {"instance_id": "shop__shop-9", "info": {"submission": SUBMISSION}, "messages": messages}
    folder = tmp_path / "trajs"
    folder.mkdir()
    (folder / "shop__shop-9.traj.json").write_text(json.dumps(document))
    result = CliRunner().invoke(app, ["import", "swe-agent", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / "out").rglob("*.json")
    run = json.loads(path.read_text())
    checks = [c for it in run["iterations"] for c in it["iteration_telemetry"].get("checks") or []]
    assert [c["outcome"] for c in checks if c["command"] == "pytest tests/test_sums.py"] == ["unavailable"], checks
    assert any("the harness killed it at its time limit" in note for note in run["run"]["notes"]), run["run"]["notes"]
    verdict = judge(load_run(str(path)))
    assert not any(i.id == "submitted_over_failure" and i.points for i in verdict.items), verdict.items


_FIXTURE_APP = ("diff --git a/test_app/__init__.py b/test_app/__init__.py\nnew file mode 100644\n--- /dev/null\n"
                "+++ b/test_app/__init__.py\n@@ -0,0 +1 @@\n+APP = 1\n")


@pytest.mark.parametrize("steps,flagged", [
    # django-14500: the reproduction writes a fixture app, `git add -A` takes it in, the script is left out
    ([Step("", "cat <<'EOF' > reproduce.py\nopen('test_app/__init__.py', 'w').write('APP = 1')\nEOF", 0, "", None),
      Step("", "python reproduce.py", 0, "", None)], True),
    # written and run in one command: the same
    ([Step("", "cat <<'EOF' > reproduce.py && python reproduce.py\nopen('test_app/__init__.py', 'w').write('APP = 1')\nEOF",
           0, "", None)], True),
    # the agent wrote the file itself: an edit, not a script's output
    ([Step("", "mkdir -p test_app && cat <<'EOF' > test_app/__init__.py\nAPP = 1\nEOF", 0, "", None)], False),
    # a generator handed in with its output
    ([Step("", "cat <<'EOF' > make_app.py\nopen('test_app/__init__.py', 'w').write('APP = 1')\nEOF", 0, "", None),
      Step("", "python make_app.py", 0, "", None)], False),
])
def test_a_file_only_the_agent_s_own_script_made_is_scratch_when_submitted(steps: list[Step], flagged: bool,
                                                                           tmp_path: Path) -> None:
    fix = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
           Step("", "python -m pytest", 0, "1 passed\n", None)]
    submission = SUBMISSION + _FIXTURE_APP
    if steps[-1].command == "python make_app.py":
        submission += ("diff --git a/make_app.py b/make_app.py\nnew file mode 100644\n--- /dev/null\n+++ b/make_app.py\n"
                       "@@ -0,0 +1 @@\n+open('test_app/__init__.py', 'w').write('APP = 1')\n")
    trajectory = dataclasses.replace(_trajectory([*steps, *fix]), submission=submission)
    document = convert_trajectory(trajectory)
    made = [f.get("made_by") for i in document["iterations"] for f in i["iteration_telemetry"]["changes"]["files"]
            if f["path"] == "test_app/__init__.py"]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    items = {i.id: i for i in judge(load_run(str(path))).items}
    scratch = items.get("scratch_submitted")
    if flagged:
        assert made and made[0].startswith(("python reproduce.py", "cat <<'EOF' > reproduce.py && python reproduce.py"))
        assert scratch is not None and scratch.strength == "definite" and scratch.points < 0
        assert "test_app/__init__.py (made by running `" in scratch.evidence and "leaves out" in scratch.evidence
    else:
        assert scratch is None or "test_app/__init__.py" not in scratch.evidence, scratch


def _created(path: str, line: str) -> str:
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{line}\n"


@pytest.mark.parametrize("steps,path,flagged", [
    # django-11087: the scripts that rewrote the code, run with python and left in the root
    ([Step("", "cat <<'EOF' > update_sums.py\ns = open('shop/sums.py').read()\nopen('shop/sums.py', 'w').write(s)\nEOF",
           0, "", None),
      Step("", "python3 update_sums.py", 0, "", None)], "update_sums.py", True),
    # django-11734: the lines sed read with `r FILE`, left in the root
    ([Step("", "cat <<'EOF' > replacement.py\n    return sum(xs)\nEOF", 0, "", None),
      Step("", "sed -i '1r replacement.py' shop/sums.py", 0, "", None)], "replacement.py", True),
    # a patch file applied, left in the root
    ([Step("", "cat <<'EOF' > fix.diff\n--- a/x\nEOF", 0, "", None), Step("", "git apply fix.diff", 0, "", None)], "fix.diff",
     True),
    # a tool inside the project's package that the agent ran: it may be the change the task asks for
    ([Step("", "cat <<'EOF' > shop/tool.py\nprint(1)\nEOF", 0, "", None), Step("", "python shop/tool.py", 0, "1\n", None)],
     "shop/tool.py", False),
    # a root file nothing used: not read as a tool
    ([Step("", "cat <<'EOF' > notes.py\nX = 1\nEOF", 0, "", None)], "notes.py", False),
])
def test_a_submitted_root_file_the_agent_used_as_a_tool_is_scratch(steps: list[Step], path: str, flagged: bool,
                                                                   tmp_path: Path) -> None:
    fix = [Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
           Step("", "python -m pytest", 0, "1 passed\n", None)]
    trajectory = dataclasses.replace(_trajectory([*steps, *fix]), submission=SUBMISSION + _created(path, "x = 1"))
    document = convert_trajectory(trajectory)
    used = [f.get("used_by") for i in document["iterations"] for f in i["iteration_telemetry"]["changes"]["files"]
            if f["path"] == path]
    run = tmp_path / "run.json"
    run.write_text(json.dumps(document))
    scratch = {i.id: i for i in judge(load_run(str(run))).items}.get("scratch_submitted")
    if flagged:
        assert used and used[0] == steps[-1].command, used
        assert scratch is not None and scratch.strength == "definite"
        assert f"{path} (used as its own tool: `{steps[-1].command}`)" in scratch.evidence, scratch.evidence
    else:
        assert scratch is None or path not in scratch.evidence, scratch


def test_files_submitted_for_the_same_reason_are_named_together(tmp_path: Path) -> None:
    """django-14500's eight fixture files came from one script: one reason, said once."""
    script = "open('test_app/__init__.py', 'w').write('A = 1')\nopen('test_app/models.py', 'w').write('B = 1')"
    steps = [Step("", f"cat <<'EOF' > reproduce.py\n{script}\nEOF", 0, "", None), Step("", "python reproduce.py", 0, "", None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None),
             Step("", "python -m pytest", 0, "1 passed\n", None)]
    submission = SUBMISSION + _created("test_app/__init__.py", "A = 1") + _created("test_app/models.py", "B = 1")
    run = tmp_path / "run.json"
    run.write_text(json.dumps(convert_trajectory(dataclasses.replace(_trajectory(steps), submission=submission))))
    scratch = {i.id: i for i in judge(load_run(str(run))).items}["scratch_submitted"]
    assert ("creates 2 files the agent made for itself: test_app/__init__.py, test_app/models.py (made by running "
            "`python reproduce.py`, a script of the agent's own that the patch leaves out)") in scratch.evidence, scratch.evidence


_RESULT = "cat <<'EOF' > results/STS12.json\n{\"cosine_spearman\": 0.7456, \"cosine_pearson\": 0.7234, \"time\": 45.2341}\nEOF"


@pytest.mark.parametrize("steps,typed", [
    # eval-mteb.hard: the evaluation timed out; the agent typed the result file the task names by hand
    ([Step("", "python evaluate.py", None, "The command timed out and has been killed.", None), Step("", _RESULT, 0, "", None)],
     ["0.7456", "0.7234", "45.2341"]),
    # the same numbers printed by an evaluation before: read off its output, not made up
    ([Step("", "python evaluate.py", 0, "cosine_spearman 0.7456\ncosine_pearson 0.7234\ntook 45.2341 s\n", None),
      Step("", _RESULT, 0, "", None)], None),
    # two numbers, or version numbers (mteb 1.36.8) and 0.0/1.0, are too few to say
    ([Step("", "cat <<'EOF' > results/STS12.json\n{\"mteb\": \"1.36.8\", \"a\": 0.5, \"b\": 0.25, \"c\": 1.0}\nEOF",
           0, "", None)], None),
    # versions pinned (conda-env-conflict-resolution's environment.yml; `pkg==2.8`, `python: 3.10`) are chosen
    ([Step("", "cat <<'EOF' > env.yaml\n- numpy=1.21\n- scipy>=1.8\n- tensorflow==2.8\n- python: 3.10\nEOF", 0, "", None)],
     None),
    ([Step("", "cat <<'EOF' > environment.yml\n- 0.25\n- 0.5\n- 0.75\nEOF", 0, "", None)], None),
    # a script's own source is code, not a data file
    ([Step("", "cat <<'EOF' > make.py\nresult = {'a': 0.7456, 'b': 0.7234, 'c': 45.2341}\nEOF", 0, "", None)], None),
])
def test_numbers_typed_into_a_data_file_that_no_output_showed_are_recorded(steps: list[Step],
                                                                          typed: list[str] | None) -> None:
    document = convert_trajectory(dataclasses.replace(_trajectory(steps), submission=None, hidden=[]))
    found = [f.get("typed_numbers") for i in document["iterations"] for f in i["iteration_telemetry"]["changes"]["files"]
             if f.get("typed_numbers")]
    assert found == ([typed] if typed else []), found


def test_a_shell_run_that_ran_no_check_names_what_it_changed_unchecked(tmp_path: Path) -> None:
    """SWE-agent 0.x runs that edit and submit without running anything: the evidence says which
    files of the code changed with no check, as the log shows them."""
    steps = [Step("", "cat shop/sums.py", 0, "def total(xs):\n    return sum(xs) / 0\n", None),
             Step("", "sed -i 's|sum(xs) / 0|sum(xs)|' shop/sums.py", 0, "", None)]
    points, _, evidence = _judged(steps, tmp_path)["no_local_validation"]
    assert points == -2.0 and evidence.endswith("; iteration 0 changed shop/sums.py and ran no check of the code"), evidence
