"""One bad value of a log costs that value, not the run (``procjudge.importers.values``): an
integer Python will not read, a lone surrogate, a number where the other steps hold a list, a time
no calendar holds. The run is imported with the value left out and named in its notes; where
nothing can be kept, the error is one line in procjudge's words."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge.importers.registry import recognise, registry
from procjudge.importers.values import fitted, loads, odd_ones
from procjudge.model import RunFile

from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"
LOGS = [
    FIXTURES / "mini_swe_agent_2" / "trajs" / "shop__shop-7" / "shop__shop-7.traj.json",
    FIXTURES / "swe_agent" / "trajs" / "django__django-11141" / "django__django-11141.traj.json",
    FIXTURES / "swe_agent_traj" / "marshmallow-code__marshmallow-1867.function_calling.traj",
    FIXTURES / "claude_code" / "sess-rewritten.jsonl",
    FIXTURES / "codex" / "rollout-2026-11-21T09-00-00-environment.jsonl",
    FIXTURES / "harbor" / "job" / "django__django-11141__Qx7Lm2" / "agent" / "trajectory.json",
    FIXTURES / "inspect" / "median-honest.json",
    FIXTURES / "openhands" / "multi_swe_bench_output.jsonl",
    FIXTURES / "streams" / "claude-stream-red-green.jsonl",
    FIXTURES / "streams" / "codex-exec-red-green.jsonl",
]
HUGE = "1" + "0" * 5000  # Python refuses to read an integer of more than 4,300 digits
HOSTILE = ["5", "-7", "[]", "{}", "null", '"x"', HUGE, "1e308", '"\\ud800x"', "true", "[5]"]
PYTHONS_WORDS = ("object is not", "unhashable", "NoneType", "set_int_max_str_digits", "surrogates not allowed",
                 "time_t", "has no attribute", "not subscriptable", "Traceback")


def _documents(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        found = []
        for line in text.split("\n"):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found
    return [json.loads(text)]


def _places(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at] if at else []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        found += _places(child, (*at, key))
    return found


def _mutated(path: Path, document: int, at: tuple[Any, ...], raw: str) -> str:
    documents = json.loads(json.dumps(_documents(path)))
    parent = documents[document]
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = "@@HOSTILE@@"
    texts = [json.dumps(d) for d in documents]
    return ("\n".join(texts) if path.suffix == ".jsonl" else texts[0]).replace('"@@HOSTILE@@"', raw)


def _import(path: Path, text: str, tmp_path: Path) -> tuple[int, list[Any], Path]:
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    target.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    importer = recognise(str(target), registry()[0])
    assert importer is not None, path
    written, issues = importer.import_files([str(target)], str(out))
    return written, issues, out


@pytest.mark.parametrize("log", LOGS, ids=[p.parent.name if p.name.endswith(".json") else p.stem for p in LOGS])
def test_any_one_hostile_value_keeps_the_run_or_is_one_line_in_our_words(log: Path, tmp_path: Path) -> None:
    documents = _documents(log)
    rng = random.Random(log.name)
    places = [(number, at) for number, document in enumerate(documents) for at in _places(document)]
    for number, at in rng.sample(places, min(6, len(places))):
        for raw in HOSTILE:
            written, issues, out = _import(log, _mutated(log, number, at, raw), tmp_path)
            errors = [issue for issue in issues if not issue.note]
            for issue in errors:
                reason = issue.reason
                assert "\n" not in reason and not any(words in reason for words in PYTHONS_WORDS), (at, raw, reason)
            assert written or errors, (at, raw)
            if written:
                for run in out.rglob("*.json"):
                    msgspec.convert(json.loads(run.read_text(encoding="utf-8")), RunFile, strict=False)


def _trajectory_with(tmp_path: Path, change: Any) -> tuple[int, list[Any], dict[str, Any]]:
    source = LOGS[0]
    document = json.loads(source.read_text(encoding="utf-8"))
    change(document)
    text = json.dumps(document).replace('"@@HUGE@@"', HUGE).replace('"@@SURROGATE@@"', '"model \\ud800"')
    written, issues, out = _import(source, text, tmp_path)
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in out.rglob("*.json")]
    return written, issues, runs[0] if runs else {}


def test_an_integer_python_will_not_read_is_infinite_and_the_run_kept(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        document["messages"][2]["extra"] = {"timestamp": "@@HUGE@@"}

    written, issues, run = _trajectory_with(tmp_path, change)
    assert written == 1, [str(i) for i in issues]
    assert run["run"]["id"].endswith("shop__shop-7")


def test_a_lone_surrogate_is_replacement_character_and_the_run_kept(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        document["info"]["config"] = {"model": {"model_name": "@@SURROGATE@@"}}

    written, issues, run = _trajectory_with(tmp_path, change)
    assert written == 1, [str(i) for i in issues]
    assert run["run"]["agent"] == "model \ufffd"


def test_a_value_of_the_wrong_kind_in_one_step_is_left_out_and_named(tmp_path: Path) -> None:
    source = LOGS[5]  # an ATIF trajectory: every step's observation.results is a list
    document = json.loads(source.read_text(encoding="utf-8"))
    step = next(k for k, s in enumerate(document["steps"]) if isinstance((s.get("observation") or {}).get("results"), list))
    document["steps"][step]["observation"]["results"] = 5
    written, issues, out = _import(source, json.dumps(document), tmp_path)
    assert written == 1, [str(i) for i in issues]
    notes = " ".join(json.loads(next(out.rglob("*.json")).read_text())["run"]["notes"])
    assert f"steps[{step}].observation.results: a number where the others hold a list" in notes, notes
    assert "were left out and the rest of the run kept" in notes


def test_a_time_no_calendar_holds_is_left_out_and_named(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        for message in document["messages"]:
            message.setdefault("extra", {})["timestamp"] = 1e308

    written, issues, run = _trajectory_with(tmp_path, change)
    assert written == 1, [str(i) for i in issues]
    assert run["run"].get("started_at") is None


def test_loads_reads_what_python_refuses() -> None:
    assert loads('{"a": ' + HUGE + ', "b": -' + HUGE + ', "c": 7}') == {"a": math.inf, "b": -math.inf, "c": 7}
    assert loads('["\\ud800", "\\ud83d\\ude00", "\\udc00x", "\\\\ud800"]') == ["\ufffd", "\U0001f600", "\ufffdx", "\\ud800"]
    with pytest.raises(ValueError):
        loads("{")


def test_odd_ones_takes_out_only_the_minority_kind_and_never_null() -> None:
    document = {"steps": [{"results": [1]}, {"results": [2]}, {"results": 5}, {"results": None}, {"results": [3]}],
                "calls": [{"id": "a"}, {"id": "b"}, 7, {"id": "c"}]}
    assert odd_ones(document) == ["steps[2].results: a number where the others hold a list",
                                  "calls[2]: a number where the others hold an object"]
    assert document == {"steps": [{"results": [1]}, {"results": [2]}, {}, {"results": None}, {"results": [3]}],
                        "calls": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}
    assert odd_ones({"a": [1, "x"], "b": {"c": 1}}) == []  # two of a kind is no majority


def test_fitted_leaves_out_what_the_model_refuses_unless_it_is_required() -> None:
    document = {"run": {"id": "r", "agent": "a", "challenge": "c", "max_iterations": 2},
                "iterations": [{"iteration_telemetry": {"iteration_number": 0, "duration_seconds": 1e308}}]}
    left = fitted(document, RunFile)
    assert left == ["iterations[0].iteration_telemetry.duration_seconds: Expected `float` <= 10000000.0"]
    assert document["iterations"][0]["iteration_telemetry"] == {"iteration_number": 0}
    with pytest.raises(ValueError, match=r"^the converted run does not fit the run model: Expected `array` of length >= 1 "
                                         r"- at `\$.iterations`$"):
        fitted({"run": {"agent": "a", "challenge": "c", "max_iterations": 2}, "iterations": []}, RunFile)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(['"', "\\ud83d", "\\ude00", "\\udc00", "\\ud800", "a", "\\\\", "\\u0041", ",", "[", "]",
                                 "1", "e400", "NaN", " ", '{"k":', "}", "9" * 30, "9" * 4400, "-"]), max_size=14))
def test_a_log_reads_the_same_whichever_decoder_reads_it(parts: list[str]) -> None:
    """``loads`` tries msgspec first and falls back to ``json`` for what msgspec refuses: the value,
    or the error, is the one the ``json`` reading gives, for text and for bytes."""
    from procjudge.importers import values

    def reading(read: Any, data: str | bytes) -> tuple[str, str]:
        try:
            return "value", repr(read(data))
        except (ValueError, RecursionError) as exc:
            return "error", type(exc).__name__

    text = "".join(parts)
    for data in (text, text.encode()):
        assert reading(values.loads, data) == reading(values._loads_slowly, data)
