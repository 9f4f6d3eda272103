"""Many runs per file: JSON Lines (plain, gzip, zstd) read by batch, compare and review, each run
named FILE:LINE; and score_record, the pure function every engine calls."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from typer.testing import CliRunner

from procjudge import load_run
from procjudge.batch import score_paths
from procjudge.cli import app
from procjudge.judge import judge
from procjudge.loading import LoadError
from procjudge.records import score_record

from conftest import ROOT

runner = CliRunner()
SAMPLES = sorted((ROOT / "sample_telemetry").glob("example*.yaml"))


def documents() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(yaml.safe_load(p.read_text()), default=str)) for p in SAMPLES]


def write_lines(path: Path, docs: list[Any], extra: str = "") -> Path:
    text = "".join(json.dumps(d) + "\n" for d in docs) + extra
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    elif path.suffix == ".zst":
        zstandard = pytest.importorskip("zstandard")
        path.write_bytes(zstandard.ZstdCompressor().compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_score_record_is_pure_picklable_and_equals_scoring_the_file(tmp_path: Path) -> None:
    for sample, doc in zip(SAMPLES, documents(), strict=True):
        by_file = judge(load_run(str(sample)))
        from_bytes = score_record(json.dumps(doc).encode(), source="s.jsonl", line=4)
        from_dict = score_record(doc)
        for verdict in (from_bytes, from_dict):
            assert verdict.process_score == by_file.process_score
            assert [(i.id, i.points) for i in verdict.items] == [(i.id, i.points) for i in by_file.items]
        assert from_bytes.run.path == "s.jsonl:4"
    assert pickle.loads(pickle.dumps(score_record)) is score_record
    with pytest.raises(LoadError) as caught:
        score_record(b'{"iterations": [{"iteration_telemetry": {"scroe": 1}}]}', source="x.jsonl", line=9)
    assert str(caught.value).startswith("x.jsonl:9:") and "did you mean `score`" in str(caught.value)


@pytest.mark.parametrize("name", ["runs.jsonl", "runs.jsonl.gz", "runs.jsonl.zst", "runs.ndjson"])
def test_batch_reads_every_line_as_a_run_named_by_its_line(tmp_path: Path, name: str) -> None:
    docs = documents()
    source = write_lines(tmp_path / name, docs,
                         extra='\n{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 120}}}]}\n')
    results = list(score_paths([str(source)], jobs=1))
    assert [r.path for r in results[:-1]] == [f"{source}:{k}" for k in range(1, len(docs) + 1)]
    expected = [judge(load_run(str(p))).process_score for p in SAMPLES]
    assert [r.row.process_score for r in results[:-1]] == expected
    bad = results[-1]
    assert bad.row is None and bad.error_line == len(docs) + 2 and bad.error.startswith(f"{source}:{len(docs) + 2}:")
    assert "post_iteration" in bad.error
    parallel = list(score_paths([str(source)], jobs=2))
    assert [msgspec.json.encode(r) for r in parallel] == [msgspec.json.encode(r) for r in results]


def test_annotations_point_at_the_file_and_the_records_line(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "runs.jsonl", documents())
    done = runner.invoke(app, ["batch", str(source), "-f", "github", "--exit-zero"])
    lines = [line for line in done.stdout.splitlines() if line.startswith("::warning")]
    assert lines and all(f"file={source}," in line for line in lines)
    bad_standard = SAMPLES.index(ROOT / "sample_telemetry" / "example2_bad_standard.yaml") + 1
    assert any(f",line={bad_standard},title=procjudge regression_blindness" in line for line in lines)


def test_a_file_of_other_records_is_one_error_and_a_corrupt_stream_stops_at_its_line(tmp_path: Path) -> None:
    other = tmp_path / "log.jsonl"
    other.write_text("".join(json.dumps({"task_id": k, "implementations": ["x"]}) + "\n" for k in range(500)))
    results = list(score_paths([str(other)]))
    assert len(results) == 1 and "not a file of runs" in results[0].error and results[0].error_line == 1
    whole = gzip.compress("".join(json.dumps(d) + "\n" for d in documents()).encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    results = list(score_paths([str(cut)]))
    assert results[-1].error and "cut short" in results[-1].error
    assert all(r.row is not None for r in results[:-1])


def test_a_record_over_the_limit_is_an_error_at_its_line_and_the_rest_is_read(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from procjudge import records

    monkeypatch.setattr(records, "MAX_RECORD_BYTES", 2000)
    docs = documents()[:2]
    small = {"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 50}}}]}
    source = write_lines(tmp_path / "r.jsonl", [small, {"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 1}},
                                                                        "pad": "x" * 5000}]}, small])
    results = list(score_paths([str(source)]))
    assert [r.row is not None for r in results] == [True, False, True]
    assert results[1].error_line == 2 and "longer than" in results[1].error
    del docs


def test_batch_discovers_jsonl_and_compare_and_review_read_it(tmp_path: Path) -> None:
    docs = documents()
    for doc in docs:
        doc.setdefault("run", {})["challenge"] = (doc.get("run") or {}).get("challenge") or "c"
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    write_lines(a / "runs.jsonl.gz", docs)
    write_lines(b / "runs.jsonl", list(reversed(docs)))
    listed = runner.invoke(app, ["batch", str(tmp_path), "--list-files"])
    assert "runs.jsonl.gz" in listed.stdout and "runs.jsonl" in listed.stdout
    compared = runner.invoke(app, ["compare", str(a), str(b), "--format", "json"])
    assert compared.exit_code in (0, 1), compared.output
    assert json.loads(compared.stdout)["paired"]["pairs"] >= 1
    queue = tmp_path / "queue"
    reviewed = runner.invoke(app, ["review", "sample", str(a), "--out", str(queue), "--per-stratum", "3"])
    assert reviewed.exit_code == 0, reviewed.output
    queued = json.loads((tmp_path / "queue.json").read_text())
    rows = queued["queue"] if isinstance(queued, dict) else queued
    assert rows and all(".jsonl.gz:" in row["path"] for row in rows)
