"""Every accepted shape loads to the same run; every class of bad input is refused clearly."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from procjudge import LoadError, load_run
from procjudge.cli import app

from conftest import SAMPLES

runner = CliRunner()


@pytest.mark.parametrize("name", [
    "example1_good_standard.yaml", "stream_harness_append.yaml", "bare_list.yml", "wrapped.json",
])
def test_every_shape_loads_the_same_iterations(name: str) -> None:
    reference = load_run(SAMPLES / "example1_good_standard.yaml")
    run = load_run(SAMPLES / name)
    assert run.iterations == reference.iterations


def test_bare_record_is_a_single_iteration_run() -> None:
    run = load_run(SAMPLES / "bare_record.yaml")
    assert len(run.iterations) == 1
    assert run.id == "bare_record"
    assert run.info.format == "standard"


def test_stream_reads_run_and_aggregate_documents(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "run: {id: s1, format: sprint}\n---\niteration_number: 0\nscore: {post_iteration: 40}\n"
        "---\niteration_telemetry: {iteration_number: 1, score: {post_iteration: 90}}\n"
        "---\naggregate_telemetry: {total_iterations: 2}\n"
    )
    run = load_run(path)
    assert run.id == "s1" and run.info.format == "sprint"
    assert [e.iteration_telemetry.score.post_iteration for e in run.iterations] == [40, 90]
    assert run.aggregate.total_iterations == 2


def test_bare_list_of_bare_records(tmp_path: Path) -> None:
    path = tmp_path / "l.yaml"
    path.write_text("- {score: {post_iteration: 10}}\n- {score: {post_iteration: 20}}\n")
    assert len(load_run(path).iterations) == 2


def test_unquoted_timestamps_stay_text(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("iterations:\n- iteration_telemetry: {timestamp_start: 2026-03-27T14:28:00Z, score: {post_iteration: 1}}\n")
    assert load_run(path).iterations[0].iteration_telemetry.timestamp_start == "2026-03-27T14:28:00Z"


def test_unknown_keys_warn_with_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_text("iterations:\n- iteration_telemetry: {scroe: {post_iteration: 1}, score: {post_iteration: 2}}\n  "
                    "extra_thing: 1\n")
    run = load_run(path)
    assert any("`iterations[0].iteration_telemetry.scroe`" in w and "did you mean `score`" in w for w in run.warnings)
    assert any("extra_thing" in w for w in run.warnings)


# Each bad input: (file name, bytes, exit code, fragments the message must hold).
FIFTY_MB_STRING = b'"' + b"x" * 50_000_000 + b'"'
ALIAS_BOMB = b"\n".join(
    [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [".encode() + b",".join([f"*{chr(97 + i)}".encode()] * 9) + b"]" for i in range(9)]
    + [b"iterations: [{iteration_telemetry: {score: {post_iteration: 1}, phase: *j}}]"]
)
BAD = {
    "syntax error": ("s.yaml", b"iterations: [\n  {iteration_telemetry: {score: {post_iteration: 5}}\n", ["s.yaml:3:",
                                                                                                          "YAML syntax error"]),
    "wrong type": ("t.yaml", b"iterations:\n- iteration_telemetry:\n    score: {post_iteration: high}\n",
                   ["t.yaml:3:", "iterations[0].iteration_telemetry.score.post_iteration", "expected a number", "'high'"]),
    "negative count": ("n.yaml",
                       b"iterations:\n- iteration_telemetry:\n    test_results:\n      post_iteration: {passed: -3, total: 4}\n",
                       ["n.yaml:4:", "post_iteration.passed", ">= 0", "-3"]),
    "passed > total": ("p.yaml",
                       b"iterations:\n- iteration_telemetry:\n    test_results:\n      post_iteration: {passed: 7, total: 4}\n",
                       ["p.yaml:4:", "post_iteration.passed", "cannot exceed total"]),
    "NaN": ("nan.yaml", b"iterations:\n- iteration_telemetry: {score: {post_iteration: .nan}}\n", ["nan.yaml:2:", "NaN"]),
    "infinity": ("inf.yaml", b"iterations:\n- iteration_telemetry: {score: {post_iteration: -.inf}}\n", ["inf.yaml:2:",
                                                                                                         "infinity"]),
    "10^400": ("big.yaml",
               b"iterations:\n- iteration_telemetry: {test_results: {post_iteration: {passed: 1" + b"0" * 400 + b"}}}\n",
               ["big.yaml:2:", "passed", "<= 10000000"]),
    "1e400 in JSON": ("big.json", b'{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": 1e400}}}]}',
                      ["big.json", "out of range"]),
    "NaN in JSON": ("nan.json", b'{"iterations": [{"iteration_telemetry": {"score": {"post_iteration": NaN}}}]}', ["nan.json:1:",
                                                                                                                   ("JSON syntax "
                                                                                                                    "error")]),
    "non-UTF-8": ("l.yaml", b"iterations:\n- iteration_telemetry:\n    phase: caf\xe9\n", ["l.yaml:3:", "0xe9", "UTF-8"]),
    "alias bomb": ("bomb.yaml", ALIAS_BOMB, ["bomb.yaml", "alias"]),
    "deep nesting": ("deep.yaml", b"iterations: " + b"[" * 5000 + b"]" * 5000, ["deep.yaml:1:", "nesting"]),
    "deep JSON": ("deep.json", b'{"iterations": ' + b"[" * 100000 + b"]" * 100000 + b"}", ["deep.json", "too deep"]),
    "50 MB string": ("huge.yaml", b"iterations:\n- iteration_telemetry:\n    phase: " + FIFTY_MB_STRING + b"\n",
                     ["huge.yaml:3:", "phase", "50,000,000 characters"]),
    "missing iterations": ("m.yaml", b"run: {id: x}\n", ["m.yaml", "expected a run"]),
    "empty list": ("e.yaml", b"iterations: []\n", ["e.yaml", "no iterations"]),
    "empty file": ("z.yaml", b"", ["z.yaml", "empty"]),
    "scalar file": ("c.yaml", b"42\n", ["c.yaml", "got an integer"]),
    "no score at all": ("q.yaml", b"iterations:\n- iteration_telemetry: {iteration_number: 0}\n", ["q.yaml", "iterations[0]",
                                                                                                   "score.post_iteration"]),
    "bad format name": ("f.yaml", b"run: {format: ultra}\niterations:\n- {score: {post_iteration: 1}}\n", ["f.yaml:1:",
                                                                                                           "run.format",
                                                                                                           "ultra"]),
    "missing required name": ("r.yaml",
                              (b"iterations:\n- iteration_telemetry:\n    score: {post_iteration: 1}\n    test_results: {tests: "
                               b"[{outcome: passed}]}\n"),
                              ["r.yaml", "test_results.tests[0].name", "required"]),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_input_exits_2_with_one_clear_message(case: str, tmp_path: Path) -> None:
    name, data, fragments = BAD[case]
    path = tmp_path / name
    path.write_bytes(data)
    started = time.perf_counter()
    result = runner.invoke(app, ["score", str(path), "--format", "json"])
    elapsed = time.perf_counter() - started
    assert result.exit_code == 2, result.output
    message = result.stderr if hasattr(result, "stderr") else result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert message.count("\n") == 1, message
    assert elapsed < 30  # a guard against hangs only; speed is measured in benchmarks/


def test_load_error_fields() -> None:
    with pytest.raises(LoadError) as caught:
        load_run("x.yaml", b"iterations:\n- iteration_telemetry:\n    score: {post_iteration: []}\n")
    error = caught.value
    assert (error.path, error.line, error.column) == ("x.yaml", 3, 29)
    assert error.field == "iterations[0].iteration_telemetry.score.post_iteration"


def test_error_in_stream_points_at_the_right_document() -> None:
    data = b"run: {id: s}\n---\nscore: {post_iteration: 1}\n---\nscore: {post_iteration: bad}\n"
    with pytest.raises(LoadError) as caught:
        load_run("s.yaml", data)
    assert caught.value.line == 5
    assert caught.value.field == "iterations[1].iteration_telemetry.score.post_iteration"


def test_error_in_a_trailing_aggregate_document_points_at_it() -> None:
    data = b"run: {id: s}\n---\nscore: {post_iteration: 1}\n---\naggregate_telemetry:\n  regression_count: -1\n"
    with pytest.raises(LoadError) as caught:
        load_run("s.yaml", data)
    assert (caught.value.line, caught.value.field) == (6, "aggregate_telemetry.regression_count")


def test_missing_file_and_directory() -> None:
    assert runner.invoke(app, ["score", "does/not/exist.yaml"]).exit_code == 2
    result = runner.invoke(app, ["score", str(SAMPLES)])
    assert result.exit_code == 2 and "directory" in result.output


def test_json_output_is_valid_for_every_sample() -> None:
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".yaml", ".yml", ".json")):
        result = runner.invoke(app, ["score", str(path), "--format", "json"])
        assert result.exit_code == 0, (path, result.output)
        assert json.loads(result.stdout)["schema"] == "procjudge.score/1"


YAML_SEMANTICS = [
    ("a: 1\nb: -2\nc: 0x1F\nd: 012\ne: 1_000\nf: 1.5\ng: .inf\nh: -.nan\ni: yes\nj: No\nk: ~\nl: null\nn: 1e5\n"
     "o: 1.0e+5\np: '3'\nq: 190:20:30\nr: [1, {s: t}]\nu: !!str 5\nv: 0\nw: -0\nx: 007\ny: +5\nz: 3.\n"),
    "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  z: 3\nl: [*b, *b]\n",
    "a: !!binary aGVsbG8=\n",
    "- !!set {a, b}\n- !!omap [{a: 1}]\n",
    "? [1, 2]\n: x\n",
]


@pytest.mark.parametrize("text", YAML_SEMANTICS)
def test_fast_builder_matches_pyyaml_safe_load(text: str) -> None:
    """The loader's node builder must give what yaml.safe_load gives (timestamps aside)."""
    import math

    import yaml

    from procjudge.loading import _parse

    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(LoadError):
            _parse("t.yaml", text)
        return
    got = _parse("t.yaml", text)[0]

    def same(a, b) -> bool:
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
            return math.isnan(b)
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        return type(a) is type(b) and a == b

    assert same(expected, got), (expected, got)
