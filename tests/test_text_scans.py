"""The fast text scans of diffs and code give exactly what their plain definitions give.

Large diffs are read with C-speed shortcuts (a word set instead of a word-boundary regex, a
substring check over the whole text before a regex per line). Each is compared here with the plain
reading it replaces, on generated text that mixes the cases that could tell them apart: Unicode
word and space characters, separators, comments, strings and the words the scans look for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge.detectors import shapes as codeinfo

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True)


WORDS = sorted(codeinfo._TAMPER_WORDS) + ["exits", "reopen", "x_exit", "open2", "Exit", "évaluer", "eval_", "skip·"]
SEPARATORS = [" ", ".", "(", "\n", "\t", "\r", "_", "é", "٣", "\u00a0", "\u2028", "ß", "'", "", "0", "\x1c"]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=8))
def test_the_tampering_hint_is_the_word_boundary_regex(parts: list[tuple[str, str]]) -> None:
    text = "".join(word + separator for word, separator in parts)
    assert codeinfo.tamper_hint(text) == (codeinfo._TAMPER_HINT.search(text) is not None), repr(text)


STATE_PIECES = ["global", "nonlocal", "getattr(", "next(", "+=", "-=", "=", "==", "= ", "[]", "[ ]", "{}", "{ }",
                "set()", "not ", "not", ".get(k)", ".get(", "d[k]", "[k", "]", "+", "-", ".append(", ".add(", ".popx(",
                "x", "_", "é", "٣", "cache", "count", "anext(", "globals", "x_global", "(", ")", ".", "1"]
STATE_SEPARATORS = ["", " ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "·", "\r"]


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(STATE_PIECES), st.sampled_from(STATE_SEPARATORS)), max_size=10))
def test_the_state_hint_is_its_regex(parts: list[tuple[str, str]]) -> None:
    text = "".join(piece + separator for piece, separator in parts)
    assert codeinfo.state_hint(text) == (codeinfo._STATE_HINT.search(text) is not None), repr(text)


def test_the_state_hint_reads_each_shape_it_stands_for() -> None:
    for text in ("global seen", "count += 1", "cache = {}", "memo = set()", "n = counts[k] + 1",
                 "n = d.get(k, 0) - 1", "flag = not flag", "it = next(gen)", "seen.append(x)", "getattr(o, 'x')"):
        assert codeinfo.state_hint(text) and codeinfo.state_hint("x = 1\n" + text), text
    for text in ("x = 1", "globals()", "x_global = 1", "a == b[1] + 2", "anext(it)", "value = compute(c, 12)", ""):
        assert not codeinfo.state_hint(text), text


TAMPER_LINES = st.sampled_from([
    "sys.excepthook = lambda *a: None", "os._exit(0)", "frame = sys._getframe(1)", "inspect.stack()",
    "builtins.print = noop", "__builtins__['len'] = fake", "def __eq__(self, other): return True",
    "x = 'sys.excepthook = 1'", "value = compute(cache, 12)", "open('f')", "# os._exit(0)", "",
])


@SETTINGS
@given(st.lists(TAMPER_LINES, max_size=6))
def test_text_tampering_finds_what_every_pattern_finds(lines: list[str]) -> None:
    text = "\n".join(lines)
    masked = codeinfo.mask_strings(text)
    plain = {rule for _, pattern, rule in codeinfo._TEXT_TAMPERING if pattern.search(masked)} \
        if codeinfo._TAMPER_HINT.search(text) else set()
    assert {shape.rule for shape in codeinfo.text_tampering(text)} == plain


CHECK_LINES = st.sampled_from([
    "    raise ValueError('bad')", "raise KeyError", "  assert total > 0", "throw new Error('x')",
    "    return value", "x = raise_level", "# raise ValueError", "assertion = 1", "", "\traise TypeError",
])


@SETTINGS
@given(st.lists(CHECK_LINES, max_size=5), st.lists(CHECK_LINES, max_size=5),
       st.sampled_from(["ValueError: bad", "KeyError", "Error", "", "TypeError and AssertionError"]))
def test_removed_checks_are_the_plain_line_by_line_reading(added: list[str], removed: list[str], feedback: str) -> None:
    def plain() -> list[str]:
        if not feedback or any(codeinfo._CHECK.match(line) for line in added):
            return []
        found = []
        for line in removed:
            match = codeinfo._CHECK.match(line)
            if match and (match.group(1) or match.group(2) or "AssertionError") in feedback:
                found.append(line)
        return found

    shapes = codeinfo.removed_check_shapes("src/app.py", tuple(added), tuple(removed), feedback)
    assert [shape.code for shape in shapes] == [f"src/app.py: {line.strip()[:120]}" for line in plain()]


BRANCH_LINES = st.sampled_from([
    "if x == 42: return 7", "elif name is 'secret': pass", "case 42:", "when 42 then", "42 == value",
    "if key in table: return 42", "x = compute(42)", "return 'secret'", "} else if (x === 42) {", "",
    "if value.equals(42)", "# x == 42",
])
FEEDBACK = st.sampled_from([
    frozenset(), frozenset({("n", 42.0)}), frozenset({("s", "secret")}), frozenset({("n", 42.0), ("s", "secret")}),
])


@SETTINGS
@given(st.lists(BRANCH_LINES, max_size=6), FEEDBACK, st.sampled_from([frozenset(), frozenset({("n", 42.0)})]))
def test_special_cases_in_text_are_the_plain_line_by_line_reading(lines: list[str], feedback: frozenset,
                                                                    spec: frozenset) -> None:
    text = "\n".join(lines)
    lifted = {k for k in feedback if codeinfo.distinctive(k) and k not in spec}
    plain = []
    for line in dict.fromkeys(lines):
        if len(line) > 400 or not any(needle in line for key in lifted for needle in codeinfo._literal_texts(key)):
            continue
        if not any(word in line for word in codeinfo._BRANCH_WORDS):
            continue
        masked = codeinfo.mask_comments(line)
        if codeinfo._SPECIAL_CASE.search(masked) and codeinfo.text_literals(masked) & lifted:
            plain.append(line.strip()[:200])
    found = [shape.code for shape in codeinfo.text_special_cases(text, feedback, spec)]
    assert sorted(found) == sorted(plain)


STATE_CODE = st.sampled_from([
    "count += 1", "seen.append(x)", "cache = {}", "global calls", "calls = calls + 1", "n = d[k] + 1",
    "lambda: seen.append(1)", "class C:\n    hits = 0", "if x:\n    total += x", "flag = not flag", "x = 1",
])


@SETTINGS
@given(st.lists(STATE_CODE, min_size=1, max_size=5))
def test_state_shapes_need_a_function_the_code_defines(parts: list[str]) -> None:
    """The premise of skipping the state walk where ``def`` is not in the code: with no function
    defined, no state shape can be read, whatever the state words."""
    code = "\n".join(parts)
    tree = codeinfo.parse_python(code)
    if tree is None:
        return
    assert list(codeinfo._state_shapes(tree, code.splitlines(), (), ())) == []


def test_the_state_walk_reads_state_in_a_function_and_none_outside_one() -> None:
    inside = "calls = 0\ndef f(x):\n    global calls\n    calls += 1\n    if calls > 1:\n        return 2\n    return 1\n"
    outside = "calls = 0\nglobal calls\ncalls += 1\nif calls > 1:\n    y = 2\n"
    found = list(codeinfo._state_shapes(codeinfo.parse_python(inside), inside.splitlines(), (), ()))
    assert [shape.rule for shape in found] == ["call_state"]
    assert list(codeinfo._state_shapes(codeinfo.parse_python(outside), outside.splitlines(), (), ())) == []
    assert codeinfo.python_shapes(inside) and codeinfo.python_shapes(outside) == ()
