"""The Spark recipe of docs/scale.md, run as written on a local Spark session: it scores a JSON-lines
file with mapInPandas over score_record and must agree with batch. Runs where pyspark (and Java) is
installed; elsewhere it is skipped with the reason."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from procjudge.batch import score_paths

from conftest import ROOT


def recipe() -> str:
    text = (ROOT / "docs" / "scale.md").read_text()
    match = re.search(r"<!-- spark-recipe -->\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "docs/scale.md has lost its Spark recipe"
    return match.group(1)


def test_the_recipe_is_valid_python() -> None:
    compile(recipe(), "docs/scale.md", "exec")


def test_the_spark_recipe_scores_what_batch_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed: the Spark recipe cannot run here")
    if shutil.which("java") is None:
        pytest.skip("no Java: Spark cannot start here")
    samples = sorted((ROOT / "sample_telemetry").glob("example*.yaml"))
    docs = [json.dumps(yaml.safe_load(p.read_text()), default=str) for p in samples]
    source = tmp_path / "rollouts.jsonl"
    source.write_text("\n".join(docs + ['{"iterations": [{"iteration_telemetry": {"scroe": 1}}]}']) + "\n")
    # the Python workers must be an interpreter with procjudge installed: this one
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    namespace: dict = {}
    exec(compile(recipe(), "docs/scale.md", "exec"), namespace)  # noqa: S102 - the documented recipe itself
    spark = namespace["SparkSession"].builder.master("local[2]").appName("procjudge-test") \
        .config("spark.ui.enabled", "false").getOrCreate()
    try:
        rows = sorted(namespace["score_lines"](spark, str(source)).collect(), key=lambda r: r["line"])
    finally:
        spark.stop()
    expected = list(score_paths([str(source)]))
    assert [r["process_score"] for r in rows[:-1]] == [e.row.process_score for e in expected[:-1]]
    assert rows[-1]["error"] and "did you mean `score`" in rows[-1]["error"] and rows[-1]["line"] == len(docs) + 1
