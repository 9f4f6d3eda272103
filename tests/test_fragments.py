"""Code read from fragments: a diff applied to the last whole program, a hunk parsed as a block."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge.detectors.fragments import apply_hunks, new_side, parse_block
from procjudge.facts import parse_diff

from conftest import ROOT

PROGRAM = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\ndef side(a):\n    return a * a\n"


def test_a_diff_applies_to_the_program_it_was_made_from_even_with_stale_line_numbers() -> None:
    diff = ("--- a/area.py\n+++ b/area.py\n@@ -40,2 +40,3 @@\n def side(a):\n-    return a * a\n"
            "+    if a < 0:\n+        raise ValueError(a)\n+    return a * a\n")
    rebuilt = apply_hunks(PROGRAM, parse_diff(diff).per_file[0].hunks)
    assert rebuilt is not None and "raise ValueError(a)" in rebuilt and rebuilt.count("def side") == 1
    assert ast.parse(rebuilt)  # still a whole program


def test_a_diff_of_another_version_does_not_apply() -> None:
    diff = "--- a/area.py\n+++ b/area.py\n@@ -1,2 +1,2 @@\n def perimeter(r):\n-    return 2 * r\n+    return 2 * math.pi * r\n"
    assert apply_hunks(PROGRAM, parse_diff(diff).per_file[0].hunks) is None


def test_a_pure_insertion_lands_after_the_line_its_header_names() -> None:
    diff = "--- a/area.py\n+++ b/area.py\n@@ -1,0 +2,1 @@\n+import functools\n"
    rebuilt = apply_hunks(PROGRAM, parse_diff(diff).per_file[0].hunks)
    assert rebuilt is not None and rebuilt.split("\n")[:2] == ["import math", "import functools"]


def test_a_hunk_cut_mid_block_with_elisions_parses_after_trimming() -> None:
    lines = ["        return total", "    else:", "        step = k", "    # ...", "    if a == 3 and n == 4:",
             "        step = k + 1", "    ... rest unchanged"]
    block = parse_block(lines)
    assert block is not None
    text, head = block
    tree = ast.parse(text)
    assert head >= 1 and any(isinstance(node, ast.If) for node in ast.walk(tree))
    assert "step = k + 1" in text


def test_the_new_side_keeps_context_and_numbers_the_added_lines() -> None:
    hunk = ("@@ -1,3 +1,3 @@", " def f(a):", "-    return a", "+    return a + 1", "\\ No newline at end of file")
    lines, added = new_side(hunk)
    assert lines == ["def f(a):", "    return a + 1"] and added == {2}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.lists(st.lists(st.text(max_size=40), max_size=6), max_size=4))
def test_fragments_never_raise_on_any_input(source: str, hunks: list[list[str]]) -> None:
    apply_hunks(source, hunks)
    parse_block(source.split("\n"))
    for hunk in hunks:
        new_side(hunk)


def test_a_large_integer_in_evidence_is_printed_with_every_digit() -> None:
    from procjudge.detectors.shapes import literal_key, show, text_literals

    big = 604486426115901697
    assert show(literal_key(big)) == "604486426115901697"  # not 604486426115901696, a float's neighbour
    assert literal_key(big) != literal_key(float(big)) and literal_key(4) == literal_key(4.0)
    assert ("n", big) in text_literals(f"assert f(x) == {big}")
    assert show(literal_key(10**400)) == "1" + "0" * 400  # beyond any float, still exact


def _reference_parse_block(lines: list[str]) -> tuple[str, int] | None:
    """parse_block as first written: each candidate joined, closed and dedented by textwrap."""
    import textwrap
    import warnings

    from procjudge.detectors.fragments import TRIM, _elided

    def closed(kept: list[str]) -> list[str]:
        last = next((line for line in reversed(kept) if line.strip()), "")
        if last.rstrip().endswith(":"):
            return [*kept, " " * (len(last) - len(last.lstrip()) + 4) + "pass"]
        return kept

    base = _elided(lines)
    for dropped in range(min(2 * TRIM, len(base) - 1) + 1):
        for head in range(min(dropped, TRIM) + 1):
            tail = dropped - head
            kept = base[head: len(base) - tail]
            if tail > TRIM or not any(line.strip() for line in kept):
                continue
            text = textwrap.dedent("\n".join(closed(kept)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ast.parse(text)
                except (SyntaxError, ValueError):
                    continue
            return text, head
    return None


def _cut_code() -> st.SearchStrategy[list[str]]:
    """Lines of code cut at either end, indented with spaces, tabs or both, with blank lines,
    lines of blanks alone, form feeds, comments, continuations, elisions and openers of bodies."""
    indent = st.sampled_from(["", "    ", "        ", "\t", "  \t", " \x0c"])
    body = st.sampled_from(["x = 1", "if x:", "else:", "return x", "    y(", ")", "pass", "...", "# ...", "",
                            "def f(a):", "for i in r:", '"""', "z = [1,", "2]", "\x0c", "  ", "s = '\\d'",
                            "# note:", "x = \\", "\\", "\r", "(a)", "@d", "'s'", "# c\rif x:", "y\r    z",
                            "elif y:", "except E:", "finally:", "and y", "or z", "not z", "]", "}", "orbit = 1",
                            "else_ = 2", "andé = 3", "if x: pass", "try:", "    x = 1"])
    return st.lists(st.tuples(indent, body).map(lambda pair: pair[0] + pair[1]), min_size=1, max_size=16)


@settings(max_examples=1500, deadline=None)
@given(_cut_code())
def test_parse_block_finds_what_the_first_reading_found(lines: list[str]) -> None:
    """The trimmed candidates read once per block give the very text and head the first reading
    (textwrap over each joined candidate) gave."""
    assert parse_block(lines) == _reference_parse_block(lines)


@settings(max_examples=3000, deadline=None)
@given(_cut_code())
def test_a_text_said_not_to_begin_a_module_does_not_parse(lines: list[str]) -> None:
    """The parses parse_block and parse_fragment skip are only those that surely fail."""
    from procjudge.detectors.fragments import cannot_begin

    text = "\n".join(lines)
    if cannot_begin(text):
        with pytest.raises((SyntaxError, ValueError)):
            ast.parse(text)


def test_the_first_statement_of_a_cut_block_says_when_it_cannot_begin_a_module() -> None:
    from procjudge.detectors.fragments import cannot_begin

    for cut in ("else:\n    x = 1", "  )", "except ValueError:", "# c\n\nelif x:", "and y == z", "]", "finally:"):
        assert cannot_begin(cut), cut
    for whole in ("x = 1", "else_ = 1", "order = 2", "not x", "# else:\nx = 1", "andé = 1", '"""\nelse:\n"""'):
        assert not cannot_begin(whole), whole


def test_the_shapes_walk_visits_what_ast_walk_visits_in_its_order() -> None:
    from procjudge.detectors import shapes

    sources = sorted((ROOT / "procjudge" / "detectors").glob("*.py"))
    assert sources
    for path in sources:
        tree = ast.parse(path.read_text())
        assert [id(node) for node in shapes.walk(tree)] == [id(node) for node in ast.walk(tree)], path
        assert [id(node) for node in shapes.walk(tree)] == [id(node) for node in ast.walk(tree)], path  # listed
    other = ast.parse('"""doc"""\nx = 1')
    assert [type(n).__name__ for n in shapes.walk(other)] == [type(n).__name__ for n in ast.walk(other)]
    assert shapes.normal_form('"""doc"""\nx = 1') == shapes.normal_form("x = 1")  # its own tree, changed
    odd = ast.parse("x = 1")
    del odd.body[0].type_comment  # a field the node does not carry: skipped, as ast.walk skips it
    assert [type(n).__name__ for n in shapes.walk(odd)] == [type(n).__name__ for n in ast.walk(odd)]


@settings(max_examples=600, deadline=None)
@given(_cut_code())
def test_a_fragment_reads_as_it_did_when_it_was_parsed_as_it_is_first(lines: list[str]) -> None:
    """parse_fragment skips the parse that surely fails (an indented first statement) and finds
    the tree the plain reading found: the text as it is, else dedented."""
    import textwrap

    from procjudge.detectors.shapes import parse_fragment, parse_python

    text = "\n".join(lines)
    first = parse_python(text) or parse_python(textwrap.dedent(text))
    found = parse_fragment(text)
    assert (first is None) == (found is None)
    assert first is None or found is None or ast.dump(first) == ast.dump(found)
