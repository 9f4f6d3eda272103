"""The fast YAML reader (yaml-rs) against libyaml: wherever the fast path accepts a text, the values
must be identical to libyaml's, types included (``True`` is not ``1``, ``1.0`` is not ``1``).

The corpus: every YAML file in the repository (samples, drift runs, rule cases, fixtures), every
JSON sample and real-data run written out as YAML, the fuzz harness's mutated runs, and a grammar of
scalars that YAML 1.1 and 1.2 read differently. Each construct that the fast path must leave to
libyaml has a case that checks it is refused, and that what libyaml then reads is what a run file
means.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge import fastyaml
from procjudge.loading import LoadError, _parse, load_run

from conftest import ROOT, SAMPLES


@pytest.fixture(autouse=True)
def _past_the_import_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests call the fast path directly: past the first texts that a process reads without it."""
    monkeypatch.setattr(fastyaml, "_texts_seen", fastyaml.MIN_TEXTS)


def test_yaml_rs_is_installed_with_the_test_extra() -> None:
    assert fastyaml.available()


def test_a_few_small_texts_are_read_without_importing_yaml_rs(monkeypatch: pytest.MonkeyPatch) -> None:
    """yaml-rs costs about 5 ms to import: ``score`` of one run does not pay it; ``batch`` does from
    its eighth file. A text over MAX_CHARS is libyaml's (the checks would cost more)."""
    monkeypatch.setattr(fastyaml, "_reader", [])
    monkeypatch.setattr(fastyaml, "_texts_seen", 0)
    results = [fastyaml.parse("a: 1\n") for _ in range(fastyaml.MIN_TEXTS)]
    assert results[:-1] == [None] * (fastyaml.MIN_TEXTS - 1) and results[-1] == [{"a": 1}]
    large = "a:\n" + "".join(f"- {k}\n" for k in range(fastyaml.MAX_CHARS // 4))
    assert len(large) > fastyaml.MAX_CHARS and fastyaml.parse(large) is None
    assert fastyaml.parse(large[:fastyaml.MAX_CHARS // 2].rsplit("\n", 1)[0] + "\n") is not None


def typed(value: Any) -> Any:
    """A value with every scalar's type made explicit, so that equality is exact."""
    if isinstance(value, dict):
        return {"map": [(typed(k), typed(v)) for k, v in value.items()]}
    if isinstance(value, list):
        return {"seq": [typed(v) for v in value]}
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def libyaml(text: str, monkeypatch: pytest.MonkeyPatch) -> list[Any] | str:
    """The documents libyaml reads (procjudge's own loader, fast path off), or the error."""
    with monkeypatch.context() as patch:
        patch.setenv("PROCJUDGE_YAML", "libyaml")
        try:
            return [d for d in _parse("x.yaml", text) if d is not None]
        except LoadError as exc:
            return f"error: {exc.reason}"


def check_same(text: str, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Assert the fast reader, where it accepts the text, agrees with libyaml; whether it did."""
    fast = fastyaml.parse(text)
    if fast is None:
        return False
    slow = libyaml(text, monkeypatch)
    assert not isinstance(slow, str), f"the fast path accepted a text libyaml refuses ({slow}):\n{text[:300]}"
    assert typed([d for d in fast if d is not None]) == typed(slow), text[:300]
    return True


REPO_YAML = sorted(p for pattern in ("*.yaml", "*.yml") for p in ROOT.rglob(pattern)
                   if ".venv" not in p.parts and "node_modules" not in p.parts and ".git" not in p.parts)


def test_every_yaml_file_in_the_repository_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    accepted = [p for p in REPO_YAML if check_same(p.read_text(encoding="utf-8"), monkeypatch)]
    # The fast path is not a no-op: most files take it (streams of several documents and files
    # with flow collections do not).
    assert len(REPO_YAML) > 100 and len(accepted) >= 0.5 * len(REPO_YAML), (len(accepted), len(REPO_YAML))


def _json_runs() -> list[Path]:
    paths = sorted(SAMPLES.rglob("*.json"))
    realdata = ROOT / "tests" / "fixtures" / "realdata"
    paths += sorted(realdata.rglob("*.json"))[:40]
    return paths


@pytest.mark.parametrize("dumper", ["block", "flow"])
def test_json_runs_written_as_yaml_read_the_same(dumper: str, monkeypatch: pytest.MonkeyPatch) -> None:
    accepted = 0
    for path in _json_runs():
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        text = yaml.dump(value, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True,
                         default_flow_style=dumper == "flow", width=100_000)
        accepted += check_same(text, monkeypatch)
    assert accepted > 0 if dumper == "block" else accepted == 0  # flow collections are libyaml's


# Scalars YAML 1.1 and 1.2 read differently, and their neighbours that they read alike.
ODD = [
    "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "n", "Y", "N",
    "true", "True", "TRUE", "false", "tRUE", "null", "Null", "NULL", "~", "nULL",
    "1e5", "1E5", "1.5e3", "1.5e+3", "1.e5", "-1e-5", "12E3", "012", "-012", "0o17", "0O17", "0x1F", "0b101",
    "1_000", "1_000.5", "1:30", "-1:30", "1:30.5", "190:20:30", ".5", "-.5", "+.5", "1.", "+1", "-0", "+0.5", "00.5",
    ".inf", "-.inf", "+.inf", ".Inf", ".NaN", ".nan", "0", "12", "-12.25", "24.0", "9223372036854775808",
    "123456789012345678901234567890", "0.1000000000000000055511151231257827",
    "2026-03-27", "2026-03-27T14:10:00Z", "2026-03-27 14:10:00", "2026-03-27t14:10:00.5+02:00", "14:10",
    "=", "<<", "-", "?", "a:b", "x * y", "!=", "3 != 4", "'yes'", '"012"', "'1:30'", "a # yes", "#", "",
    "--format", "+", "1ab7", "9f2c", "run-000001", "_1", "1__0", "0.", "-", "1-2", "v1.2.3", "1.2.3",
]


def _documents(scalar: str) -> list[str]:
    return [f"a: {scalar}\n", f"- {scalar}\n", f"{scalar}: x\n", f"a: [{scalar}, 1]\n", f"a: {{b: {scalar}}}\n",
            f"a:\n  {scalar}\n", f"a: [\n  {scalar}\n]\n", f'{{"a":{scalar}}}\n', f"a: x {scalar}\n",
            f"- - {scalar}\n", f"a: {scalar} # note\n", f"---\na: {scalar}\n", f"a: {{b:{scalar}}}\n",
            f"a: [x,{scalar},y]\n", f"{{'a':{scalar}}}\n"]


@pytest.mark.parametrize("scalar", ODD)
def test_odd_scalars_read_the_same_or_are_refused(scalar: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in _documents(scalar):
        check_same(text, monkeypatch)


@pytest.mark.parametrize("text", [
    "a: yes\n", "a: 1e5\n", "a: 012\n", "a: 0o17\n", "a: 1_000\n", "a: 1:30\n", "<<: {b: 1}\n", "a: =\n",
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: !foo 1\n", "a: 1\n---\nb: 2\n", "%YAML 1.1\n---\na: 1\n", "a: 1\n...\n",
    "a:\t1\n", "a: 1\r\nb: 2\r\n", "a: 1\u2028b: 2\n", "a: 1\nb: 'x'\x85\n", "a: '1:30'\n", "a: 'on'\n",
    "a: 1\na: 2\n", "a: [1, 2\n", "a: " + "9" * 5000 + "\n", "- " * 5000 + "x\n",
])
def test_what_the_fast_path_leaves_to_libyaml(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastyaml.parse(text) is None
    assert check_same(text, monkeypatch) is False


def test_deep_nesting_is_left_to_libyaml_without_crashing(tmp_path: Path) -> None:
    """yaml-rs recurses once per level: a line long enough to nest past its stack is refused before
    parsing (libyaml's own depth limit then gives the error)."""
    text = "a: 1\n" + "".join(" " * k + "- \n" for k in range(0, 9000, 2)) + "x: " + "y" * 20_000 + "\n"
    assert fastyaml.parse(text) is None
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    with pytest.raises(LoadError):
        load_run(path)


def test_turned_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastyaml.parse("a: 1\n") == [{"a": 1}]
    monkeypatch.setenv("PROCJUDGE_YAML", "libyaml")
    assert not fastyaml.enabled() and fastyaml.parse("a: 1\n") is None


SCALAR_PARTS = st.text(alphabet="0123456789eE+-._:xXoObByesnotrufalNOYS~<=!&*'\" #[]{},", min_size=0, max_size=8)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(SCALAR_PARTS, min_size=1, max_size=4), st.integers(0, 14))
def test_fuzzed_scalars_read_the_same_or_are_refused(parts: list[str], shape: int) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        for scalar in parts:
            check_same(_documents(scalar)[shape], monkeypatch)


def test_fuzz_harness_runs_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzz harness's sample documents, written out as YAML by PyYAML (which quotes what it must)."""
    from test_fuzz import SAMPLE_DOCS

    accepted = sum(check_same(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), monkeypatch)
                   for doc in SAMPLE_DOCS)
    assert accepted > 0


def test_a_run_scores_the_same_on_either_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from procjudge.judge import judge

    for path in sorted(SAMPLES.glob("*.yaml")):
        fast = judge(load_run(path))
        monkeypatch.setenv("PROCJUDGE_YAML", "libyaml")
        slow = judge(load_run(path))
        monkeypatch.delenv("PROCJUDGE_YAML")
        assert fast == slow, path


QUOTED_PIECES = st.sampled_from(["a", " ", "\\n", "\\t", "\\x41", "\\u00e9", "\\/", '\\"', "\\\\", "\\N", "\\_",
                                 "\\L", "\\0", "\\e", "''", "'", '"', "#", ": ", "- ", "\n", "\n  ", "\n\n  ", "é"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(QUOTED_PIECES, max_size=8), st.sampled_from(["'", '"', ""]), st.sampled_from(["", "- "]),
       st.sampled_from(["", "b: 1\n", "  c: 2\n", "- x\n"]))
def test_fuzzed_quoted_and_multiline_scalars(pieces: list[str], quote: str, lead: str, tail: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same(f"{lead}a: {quote}{''.join(pieces)}{quote}\n{tail}", monkeypatch)


BLOCK_LINES = st.sampled_from(["a", "b c", "", "x: 1", "- y", "#c", "'q'", '"d"', " lead", " ", "  "])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(["c: ", "- ", "c:\n  d: ", "- c: "]), st.sampled_from(["|", ">", "|-", ">-", "|+", ">+", "|2", ">1"]),
       st.lists(st.tuples(st.integers(0, 6), BLOCK_LINES), max_size=5), st.sampled_from(["", "e: 2\n", "- f\n", "\n"]))
def test_fuzzed_block_scalars(head: str, indicator: str, lines: list[tuple[int, str]], tail: str) -> None:
    """Block scalars: yaml-rs reads an empty one, or one with lines of only spaces, differently;
    the fast path must refuse exactly those."""
    text = head + indicator + "\n" + "".join(" " * indent + line + "\n" for indent, line in lines) + tail
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same(text, monkeypatch)


FLOW_WORDS = st.sampled_from(["a", "b c", "", " ", "1", "-1", "0.5", "1e5", "yes", "null", "~", "a-b", "-a", "a/b.py",
                              "x_y", "1_0", "(a)", "$x", "+", "-", "--x", "a~", "é"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(FLOW_WORDS, max_size=5), st.sampled_from([", ", ",", " , "]), st.booleans(),
       st.sampled_from(["a: ", "- ", "a:\n  - ", "- a: "]), st.sampled_from(["", "\nb: 1", "\n- x", " # c"]))
def test_fuzzed_one_line_flow_sequences(words: list[str], sep: str, trailing: bool, head: str, tail: str) -> None:
    """A one-line flow sequence of plain words takes the fast path; the rest of flow is libyaml's."""
    text = head + "[" + sep.join(words) + ("," if trailing else "") + "]" + tail + "\n"
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_same(text, monkeypatch)


def test_a_simple_flow_sequence_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastyaml.parse("files: [src/a.py, src/b.py]\nn: [1, 2]\n") == [{"files": ["src/a.py", "src/b.py"], "n": [1, 2]}]
    for text in ("a: [?, 1]\n", "a: [x: 1]\n", "a: [b, [c]]\n", "a: [\n  b]\n", "a: {b: 1}\n", "a: [b] c\n"):
        assert fastyaml.parse(text) is None, text


def test_without_yaml_rs_libyaml_reads_everything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The quick start installs no extras: without yaml-rs the fast path is off and runs load as before."""
    monkeypatch.setattr(fastyaml, "_reader", [None])
    assert not fastyaml.available() and fastyaml.parse("a: 1\n") is None
    for path in sorted(SAMPLES.glob("*.yaml"))[:3]:
        assert load_run(path).iterations


# The definition the str.find scan implements: a property, a bare = or a flow collection other than
# [] and {} (as one regular expression finds them, left to right), standing where a node begins.
_PROPERTY_DEFINITION = re.compile(r"[!&*=][^\s,\[\]{}]?|\[(?!\])|\{(?!\})")


def _starts_node_by_definition(text: str, at: int) -> bool:
    before = text[text.rfind("\n", 0, at) + 1: at].rstrip(" ")
    return not before or before[-1] in ":-?[{,"


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.text(alphabet="!&*=[]{}:-?, \n\tab1#'\"|>", max_size=16))
def test_the_node_start_scan_matches_its_definition(text: str) -> None:
    expected = any(_starts_node_by_definition(text, m.start()) and not fastyaml._SIMPLE_LIST.match(text, m.start())
                   for m in _PROPERTY_DEFINITION.finditer(text))
    assert fastyaml._property_starts_a_node(text) == expected
    for at in range(len(text)):
        assert fastyaml._starts_node(text, at) == _starts_node_by_definition(text, at)


def test_a_word_judged_risky_stays_risky_and_safe_words_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastyaml._has_risky_token("a: 1e5\n")
    assert "1e5" in fastyaml._RISKY_TOKENS
    assert not fastyaml._has_risky_token("a: 12\nb: -0.5\n")
    assert {"12", "-0.5"} <= fastyaml._SAFE_TOKENS

    def judged_again(word: str) -> bool:
        raise AssertionError(f"{word!r} was judged again")

    monkeypatch.setattr(fastyaml, "_risky_token", judged_again)  # remembered words are not looked at again
    assert fastyaml._has_risky_token("a: 1e5\n")  # found by the set of risky words
    assert not fastyaml._has_risky_token("b: 12\na: -0.5\n")  # every word in the set of safe ones
