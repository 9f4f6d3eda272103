"""procjudge compare: two runs, two folders, the bootstrap interval, the gate and the picture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.compare import bootstrap_interval, compare_folders
from procjudge.render.compare import trajectory_chart

from conftest import SAMPLES, make_row

runner = CliRunner()
GOOD = str(SAMPLES / "example1_good_standard.yaml")
BAD = str(SAMPLES / "example2_bad_standard.yaml")


def compare_json(*args: str) -> dict:
    result = runner.invoke(app, ["compare", *args, "--format", "json", "--jobs", "1"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_clearly_better_run_wins_with_the_deciding_items() -> None:
    data = compare_json(BAD, GOOD)
    assert data["schema"] == "procjudge.compare/1" and data["mode"] == "runs"
    assert data["winner"] == "b"
    assert data["a"]["process_score"] == -18.0 and data["b"]["process_score"] == 16.0
    assert data["deciding"][0] == "regression_blindness"
    assert set(data["deciding"]) <= {r["id"] for r in data["rows"] if r["difference"] > 0}
    rows = {r["id"]: r for r in data["rows"]}
    assert rows["regression_blindness"] == {"id": "regression_blindness", "kind": "anti_pattern", "a": -9.0, "b": None,
                                            "difference": 9.0}
    assert rows["monotonic_improvement"]["difference"] == 5.0


def test_swapping_sides_swaps_the_winner() -> None:
    assert compare_json(GOOD, BAD)["winner"] == "a"


def test_tie_when_totals_are_equal() -> None:
    data = compare_json(GOOD, str(SAMPLES / "wrapped.json"))
    assert data["winner"] == "tie" and data["deciding"] == []
    table = runner.invoke(app, ["compare", GOOD, str(SAMPLES / "wrapped.json")])
    assert "tie: both score +16" in table.stdout


def test_terminal_chart_draws_both_trajectories() -> None:
    lines = trajectory_chart([62, 84, 93], [38, 51, 48, 71])
    drawn = "\n".join(lines)
    assert drawn.count("A") == 3 and drawn.count("B") == 4
    assert lines[-1].strip().startswith("└") and "it 3" in lines[-1]
    same = "\n".join(trajectory_chart([50, 60], [50, 70]))
    assert "*" in same  # where the two meet


def write_run(folder: Path, name: str, scores: list[float], agent: str, challenge: str | None) -> None:
    run = {"agent": agent, "id": f"{agent}/{name}"}
    if challenge:
        run["challenge"] = challenge
    doc = {"run": run, "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}} for s in scores]}
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc))


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "agent-a", tmp_path / "agent-b"
    a.mkdir(), b.mkdir()
    for k in range(6):
        write_run(a, f"t{k}", [40, 45, 44, 50], "agent-a", f"task-{k}")
        write_run(b, f"other-name-{k}", [40, 70, 85, 90], "agent-b", f"task-{k}")
    write_run(a, "only-a", [50, 60], "agent-a", "task-a")
    write_run(b, "only-b", [50, 60], "agent-b", "task-b")
    write_run(a, "by-name", [50, 50.5], "agent-a", None)   # no challenge: matched by file name
    write_run(b, "by-name", [50, 80], "agent-b", None)
    return a, b


def test_folders_are_paired_by_challenge_then_file_name(folders) -> None:
    a, b = folders
    data = compare_json(str(a), str(b))
    assert data["mode"] == "folders"
    assert [r["challenge"] for r in data["rows"]] == ["by-name"] + [f"task-{k}" for k in range(6)]
    assert data["paired"]["pairs"] == 7 and data["paired"]["b_wins"] == 7 and data["paired"]["ties"] == 0
    assert data["winner"] == "b"
    assert [Path(u["path"]).name for u in data["unmatched"]["a"]] == ["only-a.yaml"]
    assert [Path(u["path"]).name for u in data["unmatched"]["b"]] == ["only-b.yaml"]
    assert data["a"]["runs"] == 8 and data["a"]["label"] == "agent-a"
    low, high = data["paired"]["ci95"]
    assert low <= data["paired"]["mean_difference"] <= high


def test_unmatched_runs_are_listed_in_every_format(folders) -> None:
    a, b = folders
    table = runner.invoke(app, ["compare", str(a), str(b), "--jobs", "1"], env={"COLUMNS": "400"})
    assert "unmatched in A:" in table.stdout and "only-a.yaml" in table.stdout
    markdown = runner.invoke(app, ["compare", str(a), str(b), "--format", "markdown", "--jobs", "1"])
    assert "Unmatched: 1 in A, 1 in B." in markdown.stdout


def test_bootstrap_interval_is_reproducible_with_the_seed() -> None:
    differences = [3.1, -1.2, 4.7, 1.5, -2.3, 6.05, 0.4, 2.5, -0.7, 5.3, 1.1, 2.9]
    first = bootstrap_interval(differences, seed=7)
    assert first == bootstrap_interval(differences, seed=7)
    assert first != bootstrap_interval(differences, seed=8)
    mean = sum(differences) / len(differences)
    assert first[0] < mean < first[1]
    assert bootstrap_interval([1.0], seed=0) is None


def test_folder_json_is_reproducible(folders) -> None:
    a, b = folders
    assert compare_json(str(a), str(b)) == compare_json(str(a), str(b))


def test_fail_if_worse_gate(folders) -> None:
    a, b = folders
    assert runner.invoke(app, ["compare", str(b), str(a), "--fail-if-worse", "5", "--jobs", "1"]).exit_code == 1
    assert runner.invoke(app, ["compare", str(a), str(b), "--fail-if-worse", "5", "--jobs", "1"]).exit_code == 0
    assert runner.invoke(app, ["compare", GOOD, BAD, "--fail-if-worse", "40"]).exit_code == 0
    assert runner.invoke(app, ["compare", GOOD, BAD, "--fail-if-worse", "10"]).exit_code == 1


def test_usage_errors(folders) -> None:
    a, _ = folders
    assert runner.invoke(app, ["compare", GOOD, str(a)]).exit_code == 2
    assert runner.invoke(app, ["compare", GOOD, "missing.yaml"]).exit_code == 2


def test_unreadable_file_in_a_folder_exits_2_after_reporting(folders) -> None:
    a, b = folders
    (b / "broken.yaml").write_text("iterations: [\n")
    result = runner.invoke(app, ["compare", str(a), str(b), "--format", "json", "--jobs", "1"])
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert data["paired"]["pairs"] == 7 and any("broken.yaml" in e for e in data["errors"])


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_plot_is_a_valid_image(tmp_path: Path, folders, suffix: str) -> None:
    pytest.importorskip("matplotlib")
    runs_plot = tmp_path / f"runs.{suffix}"
    folders_plot = tmp_path / f"folders.{suffix}"
    assert runner.invoke(app, ["compare", GOOD, BAD, "--plot", str(runs_plot)]).exit_code == 0
    a, b = folders
    assert runner.invoke(app, ["compare", str(a), str(b), "--plot", str(folders_plot), "--jobs", "1"]).exit_code == 0
    for path in (runs_plot, folders_plot):
        data = path.read_bytes()
        if suffix == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        else:
            assert ET.fromstring(data).tag.endswith("svg")


def test_plot_rejects_other_file_types(tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", GOOD, BAD, "--plot", str(tmp_path / "x.gif")])
    assert result.exit_code == 2 and ".png or .svg" in result.output


def test_compare_folders_library_on_rows() -> None:
    base = {"id": "x", "agent": "a", "challenge": "c1", "path": "a/1.yaml", "process_score": 1.0, "final_score": 80.0,
            "iterations_used": 2, "tier": "systematic_refinement", "anti_patterns": []}
    rows_a = [make_row(**base)]
    rows_b = [make_row(**{**base, "agent": "b", "path": "b/1.yaml", "process_score": 1.0})]
    result = compare_folders(rows_a, rows_b)
    assert result.winner == "tie" and result.paired.ties == 1 and result.paired.ci95 is None


def test_no_clear_winner_when_the_interval_includes_zero() -> None:
    from procjudge.render.compare import verdict_line

    def rows(agent: str, scores: list[float]) -> list:
        return [make_row(id=f"r{k}", agent=agent, challenge=f"c{k}", path=f"{agent}/{k}.yaml", process_score=s)
                for k, s in enumerate(scores)]

    # B ahead on average (+1), but as often behind as ahead: the interval straddles 0
    mixed = compare_folders(rows("a", [0, 0, 0, 0, 0, 0]), rows("b", [8, -6, 5, -5, 7, -3]), seed=0)
    low, high = mixed.paired.ci95
    assert low < 0 < high and mixed.winner == "b" and not mixed.clear
    assert verdict_line(mixed).startswith("no clear winner (B ahead on average")
    # B ahead on every pair: a winner
    ahead = compare_folders(rows("a", [0, 0, 0, 0, 0, 0]), rows("b", [3, 4, 5, 3, 4, 5]), seed=0)
    assert ahead.clear and verdict_line(ahead).startswith("winner: B")


def numbered_folders(tmp_path: Path) -> tuple[Path, Path]:
    """Two agents' runs of HumanEval/0, /1, /10, /100, /2, /20 (written in string order)."""
    sides = []
    for side, lift in (("a", 0), ("b", 5)):
        folder = tmp_path / side
        folder.mkdir()
        for number in (0, 1, 10, 100, 2, 20):
            run = {"run": {"id": f"{side}-{number}", "agent": f"agent-{side}", "challenge": f"HumanEval/{number}"},
                   "iterations": [{"iteration_telemetry": {"score": {"post_iteration": s}}}
                                  for s in (40, 40 + (number + lift) % 50)]}
            (folder / f"r{number}.json").write_text(json.dumps(run))
        sides.append(folder)
    return sides[0], sides[1]


NATURAL = [f"HumanEval/{n}" for n in (0, 1, 2, 10, 20, 100)]


def test_compare_lists_challenges_in_natural_order(tmp_path: Path) -> None:
    a, b = numbered_folders(tmp_path)
    result = runner.invoke(app, ["compare", str(a), str(b), "--format", "json"])
    assert [p["challenge"] for p in json.loads(result.stdout)["rows"]] == NATURAL
    terminal = runner.invoke(app, ["compare", str(a), str(b)]).stdout
    positions = [terminal.index(f"{name} ") for name in NATURAL]
    assert positions == sorted(positions), terminal
    page = runner.invoke(app, ["compare", str(a), str(b), "--format", "html"]).stdout
    table = page[page.index('<table class="sortable wide">'):]
    assert [table.index(f'data-challenge="{name}"') for name in NATURAL] == sorted(
        table.index(f'data-challenge="{name}"') for name in NATURAL)


def test_the_bootstrap_interval_does_not_depend_on_the_order_pairs_are_shown_in(tmp_path: Path) -> None:
    from procjudge.compare import natural_key

    a, b = numbered_folders(tmp_path)
    paired = json.loads(runner.invoke(app, ["compare", str(a), str(b), "--format", "json"]).stdout)
    by_key = sorted(paired["rows"], key=lambda p: p["challenge"])  # the order the pairs are resampled in
    assert paired["paired"]["ci95"] == list(bootstrap_interval([p["difference"] for p in by_key], 0) or [])
    assert sorted(["x10", "X9", "x9a", "x"], key=natural_key) == ["x", "X9", "x9a", "x10"]


def test_two_json_lines_files_of_runs_are_compared_as_two_agents(tmp_path: Path) -> None:
    import gzip

    a, b = numbered_folders(tmp_path)
    lines = {side: "".join(json.dumps(json.loads(p.read_text())) + "\n" for p in sorted(folder.iterdir()))
             for side, folder in (("a", a), ("b", b))}
    (tmp_path / "a.jsonl").write_text(lines["a"])
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(lines["b"].encode()))
    as_lines = runner.invoke(app, ["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl.gz"), "-f", "json"])
    as_folders = runner.invoke(app, ["compare", str(a), str(b), "-f", "json"])
    assert as_lines.exit_code == 0, as_lines.output
    got, expected = json.loads(as_lines.stdout), json.loads(as_folders.stdout)
    assert got["mode"] == "folders" and [p["challenge"] for p in got["rows"]] == NATURAL
    assert got["paired"] == expected["paired"]
    # one side of several runs, the other one run: refused, saying what compare takes
    mixed = runner.invoke(app, ["compare", str(tmp_path / "a.jsonl"), str(a / "r1.json")])
    assert mixed.exit_code == 2 and "not one of each" in mixed.stderr
    # a JSON-lines file of one run is still a run
    (tmp_path / "one.jsonl").write_text(lines["a"].splitlines()[0] + "\n")
    single = runner.invoke(app, ["compare", str(tmp_path / "one.jsonl"), str(a / "r1.json"), "-f", "json"])
    assert single.exit_code == 0 and json.loads(single.stdout)["mode"] == "runs"
