"""procjudge review (stratified sample, reweighted estimate) and procjudge drift (attempts per
source and window), on synthetic data with known answers and on the drift sample."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from procjudge.cli import app
from procjudge.drift import drift, window_of
from procjudge.review import draw, estimate, wilson

from conftest import SAMPLES, make_row

runner = CliRunner()

# The chapter's shape: most traffic at one attempt with few defects, a rare tail that is mostly defective.
SHARES = {"1": 0.61, "2": 0.22, "3": 0.1, "4-6": 0.05, "7+": 0.02}
RATES = {"1": 0.06, "2": 0.12, "3": 0.25, "4-6": 0.56, "7+": 0.81}


def population(size: int, seed: int) -> tuple[list[dict], dict[str, bool]]:
    generator = random.Random(seed)
    rows, truth = [], {}
    for k in range(size):
        bucket = generator.choices(list(SHARES), weights=list(SHARES.values()))[0]
        path = f"run{k:06d}.yaml"
        rows.append(make_row(path=path, bucket=bucket, iterations_used=1, anti_patterns=[], process_score=0.0))
        truth[path] = generator.random() < RATES[bucket]
    return rows, truth


def test_the_reweighted_estimate_recovers_a_known_rate_and_the_plain_mean_does_not() -> None:
    rows, truth = population(20_000, seed=1)
    true_rate = sum(truth.values()) / len(truth)
    queue = draw(rows, per_stratum=200, seed=3)
    assert all(s.sampled == 200 for s in queue.strata.values())
    result = estimate(queue, [(q.path, truth[q.path]) for q in queue.queue])
    assert result.weighted_ci95 is not None and result.weighted_rate is not None
    low, high = result.weighted_ci95
    assert low <= true_rate <= high
    assert abs(result.weighted_rate - true_rate) < 0.03
    assert result.unweighted_mean_of_strata is not None
    assert result.unweighted_mean_of_strata > 2 * true_rate  # the rare, awful strata dominate the plain mean
    for name, stratum in result.strata.items():
        assert stratum.ci95 is not None and stratum.rate is not None
        assert stratum.ci95[0] <= RATES[name] <= stratum.ci95[1] or abs(stratum.rate - RATES[name]) < 0.1


def test_the_draw_is_reproducible_and_weights_invert_the_sampling() -> None:
    rows, _ = population(2_000, seed=2)
    first, second = draw(rows, 40, seed=9), draw(list(reversed(rows)), 40, seed=9)
    assert first.queue == second.queue
    weights = {q.stratum: q.weight for q in first.queue}
    for name, info in first.strata.items():
        assert weights[name] == pytest.approx(info.population / info.sampled)


def test_wilson_interval_bounds() -> None:
    assert wilson(0, 4)[0] == 0 and wilson(4, 4)[1] == pytest.approx(1.0)
    low, high = wilson(3, 4)
    assert low < 0.75 < high and high - low > 0.4  # four reviews cannot pin a rate down


def test_review_sample_and_estimate_from_the_command_line(tmp_path: Path) -> None:
    drift_runs = SAMPLES / "drift"
    result = runner.invoke(app, ["review", "sample", str(drift_runs), "--per-stratum", "3", "--seed", "1",
                                 "--out", str(tmp_path / "queue"), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / "queue.csv").open()))
    queue = json.loads((tmp_path / "queue.json").read_text())
    assert len(rows) == len(queue["queue"]) and {r["stratum"] for r in rows} == set(queue["strata"])
    with (tmp_path / "labels.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["path", "label"])
        for k, row in enumerate(rows):
            writer.writerow([row["path"], "defect" if row["bucket"] != "1" and k % 2 == 0 else "ok"])
    shown = runner.invoke(app, ["review", "estimate", str(tmp_path / "queue.json"), str(tmp_path / "labels.csv"), "--format",
                                "json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["labels_used"] == len(rows) and data["weighted_rate"] is not None
    table = runner.invoke(app, ["review", "estimate", str(tmp_path / "queue.json"), str(tmp_path / "labels.csv")])
    assert "weighted by share" in table.stdout and "do not report" in table.stdout


def test_drift_alerts_on_the_broker_whose_attempts_rose() -> None:
    result = runner.invoke(app, ["drift", str(SAMPLES / "drift"), "--format", "json", "--jobs", "1"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    kinds = {(a["source"], a["kind"]) for a in data["alerts"]}
    assert kinds == {("broker-a", "attempts"), ("broker-a", "first_failing_test")}
    assert all(a["window"] == "2026-03-30" for a in data["alerts"])
    weekly = runner.invoke(app, ["drift", str(SAMPLES / "drift"), "--window", "week", "--format", "json", "--jobs", "1"])
    weeks = json.loads(weekly.stdout)
    assert [e["window"] for e in weeks["series"] if e["source"] == "broker-a"] == ["2026-W13", "2026-W14"]
    assert weekly.exit_code == 1 and {a["window"] for a in weeks["alerts"]} == {"2026-W14"}


def test_drift_without_a_change_is_quiet_and_counts_runs_without_time() -> None:
    rows = [make_row(path=f"r{k}", source="s", started_at=f"2026-03-{10 + k // 5}T10:00:00Z", iterations_used=1 + k % 2,
                     outcome="passed", items=[], first_failing_test=["a", "b", "c"][k % 3]) for k in range(20)]
    rows.append(make_row(path="x", source="s", started_at="", iterations_used=9, outcome="passed", items=[]))
    result = drift(rows)
    assert result.alerts == [] and result.runs_without_time == 1 and len(result.series) == 4
    assert window_of("2026-03-27T23:30:00-05:00", "day") == "2026-03-28"  # windows are UTC


def test_batch_reports_the_loop_figures() -> None:
    result = runner.invoke(app, ["batch", str(SAMPLES / "gate_replay.yaml"), str(SAMPLES / "example2_bad_standard.yaml"),
                                 "--format", "json", "--jobs", "1"])
    loop = json.loads(result.stdout)["summary"]["loop"]
    assert loop["runs_below_best"] == 1 and loop["points_lost_below_best"] == pytest.approx(66.67 - 33.33, abs=0.01)
    assert loop["gate"]["replayed_runs"] == 1 and loop["gate"]["share_returned_round_1"] == 1
    assert loop["gate"]["rejection_rate_per_round"] == {"2": 1.0, "3": 1.0}
    assert loop["attempt_buckets"] == {"3": 1, "4-6": 1}
    assert loop["gate"]["share_returned_round"] == {"1": 1.0} and loop["gate"]["share_early_exit"] == 0


def test_the_loop_summary_states_every_returned_round_and_the_early_exit_share() -> None:
    from procjudge.tally import LoopTally

    tally = LoopTally()
    # the chapter's cross-check: early exits return round 1; other runs offered a revision and kept
    # or replaced their incumbent
    shapes = [(1, True, ("incumbent", "not_offered"))] * 6 + [(1, False, ("incumbent", "rejected"))] * 2 + \
        [(2, False, ("incumbent", "accepted"))] * 2
    for k, (returned, early, rounds) in enumerate(shapes):
        tally.add(make_row(path=f"r{k}", returned_round=returned, gate_early_exit=early, gate_rounds=rounds))
    gate = tally.summary().gate
    assert gate.share_returned_round == {"1": 0.8, "2": 0.2} and gate.share_early_exit == 0.6
    assert gate.share_returned_round_1 == 0.8 and gate.rejection_rate_per_round == {"2": 0.5}
    from procjudge.render.text import loop_summary

    assert ("returned round 1 80%, 2 20%; early exit 60% (before any second round 60%); rejected round 2 50%"
            in loop_summary(tally.summary()))


@pytest.mark.parametrize("columns", [72, 80, 100])
def test_drift_fits_the_terminal_and_names_tests_in_full_in_its_alerts(columns: int) -> None:
    result = runner.invoke(app, ["drift", str(SAMPLES)], env={"COLUMNS": str(columns)})
    assert result.exit_code == 1, result.output  # an alert
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= columns
    # a cut test name ends in an ellipsis in the table; the alert that names it keeps it whole
    assert "test_policy_number_format" in " ".join(line.strip() for line in lines if not line.startswith("broker"))


def test_drift_exit_zero_reports_the_alert_and_exits_0() -> None:
    result = runner.invoke(app, ["drift", str(SAMPLES / "drift"), "--exit-zero", "--jobs", "1"])
    assert result.exit_code == 0 and "ALERT" in result.stdout


def test_an_estimate_with_unlabelled_strata_says_it_is_renormalised_in_every_format(tmp_path: Path) -> None:
    result = runner.invoke(app, ["review", "sample", str(SAMPLES / "drift"), "--per-stratum", "3", "--seed", "1",
                                 "--out", str(tmp_path / "queue"), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / "queue.csv").open()))
    strata = sorted({r["stratum"] for r in rows})
    assert len(strata) >= 2
    with (tmp_path / "labels.csv").open("w", newline="") as handle:  # the first stratum only is reviewed
        writer = csv.writer(handle)
        writer.writerow(["path", "label"])
        for row in rows:
            writer.writerow([row["path"], "defect" if row["stratum"] == strata[0] else ""])
    args = ["review", "estimate", str(tmp_path / "queue.json"), str(tmp_path / "labels.csv")]
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "renormalised over the labelled strata" in table.stdout
    assert "renormalised over the labelled strata" in runner.invoke(app, [*args, "-f", "markdown"]).stdout
    data = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    assert data["unlabelled_strata"] == strata[1:] and data["weighted_rate"] == 1.0
    assert data["strata_covered_share"] < 1
    lines = list(csv.reader(runner.invoke(app, [*args, "-f", "csv"]).stdout.splitlines()))
    assert lines[0][:3] == ["stratum", "population", "share"] and len(lines) == len(data["strata"]) + 3
    overall = lines[-2]
    assert overall[0] == "overall (weighted by share)" and float(overall[2]) == data["strata_covered_share"]
    assert float(overall[5]) == 1.0


def test_the_documents_drift_alerts_with_the_daily_window() -> None:
    """004: mean attempts at one broker went from 1.1 to 2.6 over four days while the pass rate
    stayed at 97.4%, and no alert fired. Each day rises by 0.5 at most (never by more than 0.5 over
    the day before), yet the shift is sustained: against the baseline of the days before, the
    daily window alerts; the other broker, steady at 1.1, does not."""
    means = {"2026-03-23": 1.1, "2026-03-24": 1.6, "2026-03-25": 2.1, "2026-03-26": 2.6}
    rows = []
    for day, mean in means.items():
        for broker, target in (("broker-a", mean), ("broker-b", 1.1)):
            attempts = [2] * round((target - 1) * 10) + [1] * (10 - round((target - 1) * 10)) if target < 2 else \
                [3] * round((target - 2) * 10) + [2] * (10 - round((target - 2) * 10))
            for k, count in enumerate(attempts):
                rows.append(make_row(path=f"{broker}-{day}-{k}", source=broker, started_at=f"{day}T10:00:00Z",
                                     iterations_used=count, outcome="passed", items=[], first_failing_test=""))
    result = drift(rows)
    series = {(e.source, e.window): e.mean_attempts for e in result.series}
    assert [series[("broker-a", d)] for d in means] == [1.1, 1.6, 2.1, 2.6]
    assert all(b - a <= 0.5 + 1e-9 for a, b in zip(list(means.values()), list(means.values())[1:], strict=False))
    alerts = [a for a in result.alerts if a.kind == "attempts"]
    assert [(a.source, a.window) for a in alerts] == [("broker-a", "2026-03-25")]  # where the shift begins
    assert "2.10" in alerts[0].message and "(2026-03-23..2026-03-24)" in alerts[0].message
    # window over window (a baseline of one window) finds nothing, as in the chapter
    assert not [a for a in drift(rows, baseline_windows=1).alerts if a.kind == "attempts"]


def _attempts(mean: float, n: int = 10) -> list[int]:
    """n attempt counts whose mean is ``mean`` (1 to 3, in tenths)."""
    if mean < 2:
        return [2] * round((mean - 1) * n) + [1] * (n - round((mean - 1) * n))
    return [3] * round((mean - 2) * n) + [2] * (n - round((mean - 2) * n))


def test_drift_segments_a_source_by_document_type_and_verifier_version() -> None:
    """004 tags its attempt histogram with doc_type and verifier_version. The broker's claim forms
    go from 1.1 to 2.6 mean attempts while its invoices, four times as many, stay at 1.1: the
    source's mean moves by less than the threshold, the claim-form segment alerts."""
    days = {"2026-03-23": 1.1, "2026-03-24": 1.6, "2026-03-25": 2.1, "2026-03-26": 2.6}
    rows = []
    for day, mean in days.items():
        for doc_type, target, n in (("claim_form", mean, 10), ("invoice", 1.1, 40)):
            for k, count in enumerate(_attempts(target, n)):
                rows.append(make_row(path=f"{doc_type}-{day}-{k}", source="broker-a", doc_type=doc_type,
                                     verifier_version="3", started_at=f"{day}T10:00:00Z", iterations_used=count,
                                     outcome="passed", items=[], first_failing_test=""))
    mixed = drift([msgspec.structs.replace(r, doc_type="", verifier_version="") for r in rows])
    assert not [a for a in mixed.alerts if a.kind == "attempts"]  # 1.1 -> 1.4: the invoices hide it
    result = drift(rows)
    alerts = [a for a in result.alerts if a.kind == "attempts"]
    assert [(a.source, a.doc_type, a.verifier_version, a.window) for a in alerts] == \
        [("broker-a", "claim_form", "3", "2026-03-25")]
    assert alerts[0].message.startswith("broker-a · claim_form · verifier 3: mean attempts")
    assert {e.segment for e in result.series} == {"broker-a · claim_form · verifier 3", "broker-a · invoice · verifier 3"}


def test_a_new_verifier_version_starts_a_new_series_instead_of_reading_as_drift() -> None:
    rows = [make_row(path=f"r{day}-{k}", source="s", verifier_version="1" if day < 25 else "2",
                     started_at=f"2026-03-{day}T10:00:00Z", iterations_used=1 if day < 25 else 3, outcome="passed",
                     items=[], first_failing_test="") for day in (22, 23, 24, 25, 26) for k in range(5)]
    assert not [a for a in drift(rows).alerts if a.kind == "attempts"]
    flat = [msgspec.structs.replace(r, verifier_version="") for r in rows]
    assert [a.window for a in drift(flat).alerts if a.kind == "attempts"] == ["2026-03-25"]
    # the policy can follow each source whole
    assert [a.window for a in drift(rows, segment_by=()).alerts if a.kind == "attempts"] == ["2026-03-25"]


def test_a_label_is_read_by_the_words_the_error_names_and_no_other() -> None:
    from procjudge.review import ACCEPTED, read_labels

    text = "path,label\na.yaml,Defective\nb.yaml,okay\nc.yaml,YES\nd.yaml,maybe\ne.yaml,\nf.yaml,OK\n"
    labels, problems = read_labels(text, "labels.csv")
    assert labels == [("a.yaml", True), ("b.yaml", False), ("c.yaml", True), ("f.yaml", False)]
    assert problems == [f"labels.csv:5: label 'maybe': expected {ACCEPTED}"]
    # every word the message names is read, as the side it names it on
    defect_words, ok_words = ACCEPTED.split(") or ok (")
    for word in defect_words.removeprefix("defect (or ").split(", "):
        assert read_labels(f"path,label\nx,{word}\n", "l")[0] == [("x", True)], word
    for word in ["ok", *ok_words.removeprefix("or ").split("), in any case")[0].split(", ")]:
        assert read_labels(f"path,label\nx,{word}\n", "l")[0] == [("x", False)], word


def test_the_seeds_early_exit_share_counts_runs_that_never_ran_a_second_round() -> None:
    """Seed 003: on the policy assistant's traffic 58% of questions never ran a second round, 71%
    of answers came from round 1, and the gap (a further tenth or so) ran a second round and had
    its revision rejected. An early exit after a revision was accepted is still an early exit,
    but not the seed's: the subtraction uses the share that never ran a second round."""
    from procjudge.tally import LoopTally

    tally = LoopTally()
    shapes = ([(1, True, ("incumbent", "not_offered"))] * 58 + [(1, False, ("incumbent", "rejected", "rejected"))] * 13
              + [(2, True, ("incumbent", "accepted", "not_offered"))] * 25
              + [(3, True, ("incumbent", "rejected", "accepted"))] * 4)
    for k, (returned, early, rounds) in enumerate(shapes):
        tally.add(make_row(path=f"r{k}", returned_round=returned, gate_early_exit=early, gate_rounds=rounds))
    gate = tally.summary().gate
    assert gate.share_first_round_exit == 0.58 and gate.share_early_exit == 0.87  # any round: not the seed's figure
    assert gate.share_returned_round_1 == 0.71
    assert round(gate.share_returned_round_1 - gate.share_first_round_exit, 2) == 0.13  # ran a second round, rejected
