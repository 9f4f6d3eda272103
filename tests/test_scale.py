"""Scale: Parquet tables of runs and items, and the Dask engine on a local cluster of two workers,
whose results must be those of `--jobs`."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from procjudge.batch import score_paths
from procjudge.cli import app

from conftest import ROOT

runner = CliRunner()
SAMPLES = ROOT / "sample_telemetry"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run files, a plain JSON-lines file of 60 runs (with a broken line) and a gzip one."""
    folder = tmp_path_factory.mktemp("corpus")
    docs = [json.loads(json.dumps(yaml.safe_load(p.read_text()), default=str)) for p in sorted(SAMPLES.glob("example*.yaml"))]
    for k, path in enumerate(sorted(SAMPLES.glob("*.yaml"))[:5]):
        (folder / f"file{k}.yaml").write_text(path.read_text())
    lines = [json.dumps({**docs[k % len(docs)], "run": {**(docs[k % len(docs)].get("run") or {}), "id": f"line-{k}"}})
             for k in range(60)]
    lines.insert(30, '{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 101}}}]}')
    (folder / "many.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "packed.jsonl.gz").write_bytes(gzip.compress(("\n".join(lines[:10]) + "\n").encode()))
    return folder


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


# --------------------------------------------------------------------------- parquet


def test_parquet_tables_hold_every_run_and_item_of_the_batch(corpus: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "tables"
    done = cli("batch", str(corpus), "--format", "parquet", "-o", str(out), "--exit-zero")
    assert done.exit_code == 2  # the broken line is reported, every other run is written
    runs = pq.read_table(out / "runs.parquet").to_pylist()
    items = pq.read_table(out / "items.parquet").to_pylist()
    reference = [r for r in score_paths([str(p) for p in sorted(corpus.iterdir())]) if r.row is not None]
    assert [(r["path"], r["process_score"], r["tier"]) for r in runs] == \
        [(r.row.path, r.row.process_score, r.row.tier) for r in reference]
    expected_items = [(r.row.path, i.id, i.points, i.iterations) for r in reference for i in r.verdict().items]
    assert [(i["path"], i["id"], i["points"], i["iterations"]) for i in items] == expected_items
    assert any(i["strength"] == "definite" and i["evidence"] for i in items)
    named = cli("batch", str(SAMPLES), "-o", f"parquet={tmp_path / 'scored.parquet'}", "--exit-zero")
    assert named.exit_code == 0, named.output
    assert (tmp_path / "scored.parquet").is_file() and (tmp_path / "scored.items.parquet").is_file()


def test_parquet_into_a_folder_twice_replaces_the_tables_and_refuses_a_table_that_is_a_folder(tmp_path: Path) -> None:
    """-o DIR is made when missing and written again when there (a nightly job writes the same
    folder every night); a table name that is a folder, or an input, is refused before scoring."""
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "nightly"
    first = cli("batch", str(SAMPLES), "--format", "parquet", "-o", str(out), "--exit-zero")
    assert first.exit_code == 0, first.output
    (out / "runs.parquet").write_bytes(b"stale")
    again = cli("batch", str(SAMPLES / "example1_good_standard.yaml"), "--format", "parquet", "-o", str(out), "--exit-zero")
    assert again.exit_code == 0, again.output
    assert pq.read_table(out / "runs.parquet").num_rows == 1
    (tmp_path / "taken" / "runs.parquet").mkdir(parents=True)
    refused = cli("batch", str(SAMPLES), "--format", "parquet", "-o", str(tmp_path / "taken"), "--exit-zero")
    assert refused.exit_code == 2 and "runs.parquet is a folder" in refused.stderr
    run = tmp_path / "run.parquet"
    run.write_text((SAMPLES / "example1_good_standard.yaml").read_text())
    clash = cli("batch", str(run), str(SAMPLES / "example2_bad_standard.yaml"), "--format", "parquet", "-o", str(run))
    assert clash.exit_code == 2


def test_parquet_needs_a_target_and_says_what_is_missing(tmp_path: Path) -> None:
    done = cli("batch", str(SAMPLES), "--format", "parquet")
    assert done.exit_code == 2 and "give -o DIR" in done.stderr
    code = ("import sys; sys.modules['pyarrow'] = None; from procjudge.cli import run; "
            f"sys.argv = ['procjudge', 'batch', {str(SAMPLES)!r}, '--format', 'parquet', '-o', {str(tmp_path / 'x')!r}]; run()")
    missing = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and "pip install 'procjudge[parquet]'" in missing.stderr
    assert not (tmp_path / "x").exists()


def test_the_documented_queries_run_on_the_tables(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    cli("batch", str(SAMPLES), "--format", "parquet", "-o", str(tmp_path / "scored"), "--exit-zero")
    runs = pd.read_parquet(tmp_path / "scored" / "runs.parquet")
    items = pd.read_parquet(tmp_path / "scored" / "items.parquet")
    per_agent = runs.groupby("agent")["process_score"].mean()
    assert per_agent["agent-a"] == 16.0
    lost = items[items.kind == "anti_pattern"].groupby("id")["points"].sum()
    assert lost["regression_blindness"] < 0
    definite = items[(items.strength == "definite") & (items.points < 0)].merge(runs, left_on="path", right_on="path")
    assert set(definite["tier"]) <= set(runs["tier"])
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    agents = con.execute(f"select agent, avg(process_score) from read_parquet('{tmp_path}/scored/runs.parquet') "
                         "group by agent order by agent").fetchall()
    assert dict(agents)["agent-a"] == 16.0


# --------------------------------------------------------------------------- dask


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed")
    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                     silence_logs=40)
    yield local
    local.close()


def test_partitions_cut_json_lines_at_line_ends_and_keep_the_line_numbers(corpus: Path) -> None:
    from procjudge import dask as engine

    paths = [str(p) for p in sorted(corpus.iterdir())]
    parts = engine.partitions(paths, block=3000, files=2)
    assert sum(1 for p in parts if p.path.endswith("many.jsonl")) > 5
    lazily = engine.iter_partitions(paths, block=3000, files=2)
    assert next(lazily) == parts[0]  # made when asked for: a stream sends it before the rest is cut
    assert [parts[0], *lazily] == parts
    results = [r for part in parts for r in __import__("msgspec").msgpack.decode(
        engine.score_partition(part), type=list[__import__("procjudge.batch", fromlist=["Result"]).Result])]
    local = list(score_paths(paths))
    assert [(r.path, r.error_line, r.row.process_score if r.row else None) for r in results] == \
        [(r.path, r.error_line, r.row.process_score if r.row else None) for r in local]


def test_the_dask_dataframe_is_the_batch(corpus: Path, cluster: Any) -> None:
    distributed = pytest.importorskip("distributed")
    from procjudge import dask as engine

    with distributed.Client(cluster):
        runs = engine.score_paths([str(corpus)], block=4000).compute()
        items = engine.score_paths([str(corpus)], table="items", block=4000).compute()
        errors = engine.score_paths([str(corpus)], table="errors", block=4000).compute()
    local = list(score_paths([str(p) for p in sorted(corpus.iterdir())]))
    scored = [r for r in local if r.row is not None]
    assert list(runs["path"]) == [r.row.path for r in scored]
    assert list(runs["process_score"]) == [r.row.process_score for r in scored]
    assert len(items) == sum(len(r.verdict().items) for r in scored)
    assert list(errors["line"]) == [31.0] and "many.jsonl" in errors["path"][0]  # the broken line


def test_batch_on_dask_writes_what_jobs_writes(corpus: Path, cluster: Any) -> None:
    for fmt in ("csv", "json", "github"):
        local = cli("batch", str(corpus), "--jobs", "2", "-f", fmt)
        remote = cli("batch", str(corpus), "--engine", "dask", "--scheduler", cluster.scheduler_address, "-f", fmt)
        assert remote.exit_code == local.exit_code == 2
        assert remote.stdout == local.stdout, fmt
    spawned = cli("batch", str(SAMPLES), "--engine", "dask", "--jobs", "2", "-f", "csv")
    assert spawned.stdout == cli("batch", str(SAMPLES), "--jobs", "1", "-f", "csv").stdout
    wrong = cli("batch", str(SAMPLES), "--scheduler", "tcp://127.0.0.1:1")
    assert wrong.exit_code == 2 and "--scheduler needs --engine dask" in wrong.stderr


def test_the_local_cluster_runs_its_workers_quiet_and_keeps_what_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")
    import dask

    from procjudge import dask as engine

    keys = list(engine.QUIET)
    assert engine.quiet_settings() == engine.QUIET  # nothing set here: every setting applies
    monkeypatch.setenv("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL", "20ms")  # the default value, chosen by the user
    with dask.config.set({"distributed.admin.system-monitor.interval": "2s"}):  # and one set in the program
        kept = engine.quiet_settings()
        assert set(kept) == set(keys) - {"distributed.admin.tick.interval", "distributed.admin.system-monitor.interval"}
        cluster = engine.local_cluster(1)
    try:
        with distributed.Client(cluster) as client:
            seen = next(iter(client.run(lambda: [dask.config.get(key) for key in keys]).values()))
    finally:
        cluster.close()
    expected = {**engine.QUIET, "distributed.admin.tick.interval": "20ms", "distributed.admin.system-monitor.interval": "2s"}
    assert dict(zip(keys, seen, strict=True)) == expected  # what the worker process itself reads


def test_the_dask_benchmark_asks_for_the_defaults_as_the_user_would_and_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("distributed")
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_dask

    from procjudge import dask as engine

    for key, value in bench_dask.defaults_env().items():
        monkeypatch.setenv(key, value)
    assert engine.quiet_settings() == {}  # every variable names a setting, and the engine keeps it
    monkeypatch.undo()
    bench_dask.main(["--runs", "60", "--rounds", "1", "--idle", "0.5"])
    printed = capsys.readouterr().out
    assert re.search(r"round 1: Dask's defaults \d+\.\d%, quiet \d+\.\d%", printed)
    assert re.search(r"quiet against defaults: wall \d+\.\d\dx, CPU \d+\.\d\dx", printed)
