"""Code read from fragments: a diff applied to the last whole program, a hunk parsed as a block."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge.detectors.fragments import apply_hunks, new_side, parse_block
from procjudge.facts import parse_diff

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
