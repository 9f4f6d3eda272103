"""The shell importer in linear time on hostile trajectories: here-documents that never close, a
thousand ``cout <<`` in one line, ``sed`` on every line of a large file, a thousand replacements,
terminal hyperlinks, ``<output>`` tags that never close. Each shape is imported whole (a guard
against hangs only: speed is measured by ``benchmarks/bench_import_shapes.py``), and the pieces
that made them super-linear are checked for the results they must keep."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from procjudge.importers import edits, sed
from procjudge.importers.base import explicit
from procjudge.importers.edits import Views, changed_runs, heredoc_bodies
from procjudge.importers.swe_agent import _observation
from procjudge.importers.swe_agent import convert as _typed
from procjudge.importers.test_output import ANSI

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_import_shapes as shapes


def convert(trajectory: dict, agent: str) -> dict:  # type: ignore[type-arg]
    """The run the swe-agent importer makes of a trajectory, as its run file holds it."""
    return explicit(_typed(trajectory, agent))  # type: ignore[no-any-return]


def test_every_hostile_shape_imports_whole_beside_a_valid_file(tmp_path: Path) -> None:
    folder = tmp_path / "trajs"
    folder.mkdir()
    for number, (_name, document) in enumerate(shapes.shapes(1)):
        document["instance_id"] = f"shape-{number}"
        (folder / f"shape-{number}.traj.json").write_text(json.dumps(document))
    done = subprocess.run([sys.executable, "-m", "procjudge", "import", "swe-agent", str(folder), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    written = {p.stem for p in (tmp_path / "out").rglob("*.json")}
    assert written == {f"shape-{k}" for k in range(len(shapes.SHAPES))}


def test_the_shapes_edits_are_rebuilt_not_dropped() -> None:
    """Bounded is not lossy where it need not be: sed on every line of a 50,000-line file is
    50,000 rebuilt edits, the hyperlinks are stripped and the pytest summary under them read."""
    run = convert(shapes.SHAPES["sed on every line"](1), "a")
    changed = run["iterations"][0]["iteration_telemetry"]["changes"]["files"][0]
    assert changed["path"] == "m.py" and changed["edits"][0] == {"old": "line_1 = 1", "new": "L_1 = 1", "via": "sed"}
    views = Views()
    views.see("m.py", {k: f"line_{k} = {k}" for k in range(1, 50_001)})
    found, missed = sed.sed_edits(views, ["sed", "-i", "s/line_/L_/", "m.py"])
    assert len(found) == 50_000 and not missed
    assert (found[-1].removed, found[-1].added, found[-1].line) == (("line_50000 = 50000",), ("L_50000 = 50000",), 50_000)
    links = "".join(f"\x1b]8;;file:///t/test_{k}.py\x1b\\test_{k}.py\x1b]8;;\x1b\\ .\n" for k in range(2000))
    ran = shapes.trajectory(["sed -i 's/a/b/' m.py", "python -m pytest"], ["", links + "= 1 failed, 2 passed in 0.1s =\n"])
    linked = convert(ran, "a")
    results = linked["iterations"][0]["iteration_telemetry"]["test_results"]["post_iteration"]
    assert (results["passed"], results["failed"]) == (2, 1), results


def test_edits_past_the_work_bound_are_named_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edits, "MAX_REBUILD_WORK", 50_000)
    run = convert(shapes.SHAPES["editor replacements"](1), "a")
    notes = " ".join(run["run"]["notes"])
    assert "not replayed: the log's edits had searched or moved more than 50,000 lines" in notes, notes
    monkeypatch.setattr(edits, "MAX_REBUILD_WORK", 10_000_000)
    assert "not replayed" not in " ".join(convert(shapes.SHAPES["editor replacements"](1), "a")["run"]["notes"])


def test_a_view_charges_its_work_and_refuses_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edits, "MAX_REBUILD_WORK", 100)
    views = Views()
    views.spend(100)
    with pytest.raises(edits.Unrebuilt, match="more than 100 lines"):
        views.spend(1)


@pytest.mark.parametrize("command,expected", [
    ("cat > a.py <<'EOF'\nx = 1\nEOF", [("cat > a.py <<'EOF'", "x = 1")]),
    ("cat > a.py <<EOF\nEOF\necho done", [("cat > a.py <<EOF", "")]),  # an empty body ends at once
    ("cat <<-END > a.py\n\tx\n\tEND", [("cat <<-END > a.py", "\tx")]),  # <<- ends after tabs
    ("cat <<END > a.py\n\tEND\nEND", [("cat <<END > a.py", "\tEND")]),  # << does not
    ("cat <<A > a.py\nx\nA\ncat <<B > b.py\ny\nB", [("cat <<A > a.py", "x"), ("cat <<B > b.py", "y")]),
    ("grep x <<< 'EOF'\nEOF", []),  # a here-string opens nothing
    ("cat > a.py <<'EOF'\nx = 1\n", []),  # never closed: nothing is guessed
    ("printf 'cout << x << endl;' > m.cpp\nendl", [("printf 'cout << x << endl;' > m.cpp", "")]),
])
def test_heredoc_bodies(command: str, expected: list[tuple[str, str]]) -> None:
    assert heredoc_bodies(command) == expected


def test_a_heredoc_that_never_closes_costs_one_pass() -> None:
    """A thousand lines that each open a here-document that never closes: the old expression
    searched to the end from each opener on each line."""
    command = "cat > m.cpp <<'EOF'\n" + "".join(f"  cout << x{i} << endl;\n" for i in range(20_000))
    assert heredoc_bodies(command) == []


def test_changed_runs_agrees_with_difflib_and_caps_repeated_lines() -> None:
    before = [f"line {k}" for k in range(50)]
    after = before[:10] + ["new"] + before[12:40] + before[41:]
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    assert changed_runs(before, after) == [(a0, a1, b0, b1) for tag, a0, a1, b0, b1 in matcher.get_opcodes() if tag != "equal"]
    repeated = ["    pass"] * 5000
    assert changed_runs(repeated, repeated[:2500] + ["x = 1"] + repeated[2500:]) == [(2500, 2500, 2500, 2501)]
    odd = ["q"] + ["p"] * 3000 + ["q"]
    assert changed_runs(odd, ["r"] + ["p"] * 2999 + ["r", "s"]) == [(0, 3002, 0, 3002)]  # one run, every line


def test_output_tags_that_never_close_are_read_in_one_pass() -> None:
    assert _observation("<returncode>1</returncode>\n<output>\nboom\n</output>") == (1, "boom\n", False)
    head_tail = ("<output_head>\na\n</output_head>\n<elided_chars>\n9 characters elided\n</elided_chars>\n"
                 "<output_tail>\nb\n</output_tail>")
    assert _observation(head_tail)[1] == "a\n\nb\n"
    reply = "<returncode>0</returncode>" + "<output>" * 400_000
    assert _observation(reply) == (0, reply, False)  # no tag closes: the reply is the output


def test_terminal_hyperlinks_are_stripped_whatever_ends_them() -> None:
    text = "\x1b]8;;file:///a\x1b\\a.py\x1b]8;;\x1b\\ \x1b]0;title\x07\x1b[31mred\x1b[0m \x1b]8;;never ended"
    assert ANSI.sub("", text) == "a.py red \x1b]8;;never ended"


def test_the_real_logs_benchmark_measures_every_stage_of_a_corpus() -> None:
    """benchmarks/bench_real_logs.py on the fixture trajectories: both ratios and a stage table in
    which every stage is timed and none overlaps another (the figures themselves are not asserted)."""
    import bench_real_logs

    found = bench_real_logs.measure(ROOT / "tests" / "fixtures" / "mini_swe_agent_2" / "trajs", 1)
    assert found["files"] == 9 and set(found["best"]) == {"floor", "import", "run_floor", "load", "judge", "derive"}
    stages = found["stages"]
    assert set(stages) == set(bench_real_logs.STAGES)
    assert all(stages[stage] > 0 for stage in ("decode", "steps", "checks", "rebuild"))
    assert stages["convert (rest)"] >= 0  # the timed stages do not overlap: they fit inside the whole import
    text = bench_real_logs.page(found, Path("corpus"), 1)
    assert "| import: `swe_agent.convert` of each |" in text and "| judging them (`judge`) |" in text
    assert "| importing the trajectories, x `json.loads` of them | at most 3x |" in text
    assert "| test_chasing |" in text  # the per-detector profile of the same runs
    assert "| of which deriving the facts (`derive`, before any detector) |" in text  # the part no detector can save
    from procjudge.importers import shell

    assert shell.rebuild_steps.__module__ == "procjudge.importers.replay"  # the originals are back


def test_the_real_logs_benchmark_measures_import_jobs_end_to_end_and_compares_the_files() -> None:
    """The ``--jobs 2`` row: two copies of the fixture trajectories imported by fresh processes with
    one worker and with two, the files compared byte for byte (the timings are not asserted)."""
    import bench_real_logs

    jobs = bench_real_logs.measure_jobs(ROOT / "tests" / "fixtures" / "mini_swe_agent_2" / "trajs", 1, 2)
    assert jobs["runs"] == 18 and jobs["same"] is True and jobs["one"] > jobs["start"] > 0 and jobs["two"] > jobs["start"]
    found = {"files": 1, "bytes": 1, "run_bytes": 1, "stages": {}, "profile": {},
             "best": dict.fromkeys(("floor", "import", "run_floor", "load", "judge", "derive"), 1.0), "jobs": jobs}
    text = bench_real_logs.page(found, Path("corpus"), 1)
    assert "| `import --jobs 2` throughput against `--jobs 1`, the same files written | near 2x (at least 1.8x) |" in text
    assert "the corpus copied 2 times (18 runs)" in text and "the same, byte for byte" in text
    differing = bench_real_logs.page({**found, "jobs": {**jobs, "same": False, "start": 0.0, "two": jobs["one"] / 2}},
                                     Path("c"), 1)
    assert "| 2.00x | **not met** |" in differing and "**not the same**" in differing  # fast but wrong is not met


def test_the_real_logs_section_replaces_its_own_and_nothing_else(tmp_path: Path) -> None:
    """bench_real_logs.py --write rewrites its section of docs/performance.md in place (added at
    the end the first time), and bench_scale.py's page keeps it."""
    import bench_real_logs

    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nthe scale figures\n")
    first = f"{bench_real_logs.BEGIN}\n## Real logs\nold figures\n{bench_real_logs.END}\n"
    bench_real_logs.write_section(page, first)
    assert page.read_text() == "# Performance\n\nthe scale figures\n\n" + first
    page.write_text(page.read_text() + "\na note after it\n")
    bench_real_logs.write_section(page, first.replace("old", "new"))
    assert page.read_text() == ("# Performance\n\nthe scale figures\n\n" + first.replace("old", "new")
                                + "\na note after it\n")

