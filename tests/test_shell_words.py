"""The shell's words and tokens read without shlex's character-by-character lexer: the same
words and tokens as shlex gives, and ValueError exactly where shlex raises it."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from procjudge.importers.classify import _PUNCTUATION, redirect_targets, shell_tokens
from procjudge.importers.edits import _split, words_of

# quotes, escapes, comments, the shell's punctuation, blanks shlex splits on and blanks it does not,
# characters outside its word characters, and a letter beyond Latin-1
_CHARACTERS = st.sampled_from(list("ab1 _-./=>&<|;()\t\n\r,@%:+!{}[]$~*?é中\x0b\x0c'\"\\#"))


def _shlex_or_error(read: object) -> object:
    try:
        return read()  # type: ignore[operator]
    except ValueError:
        return ValueError


@settings(max_examples=3000, deadline=None)
@given(st.text(_CHARACTERS, max_size=30))
def test_split_reads_the_words_shlex_reads(text: str) -> None:
    assert _shlex_or_error(lambda: _split(text)) == _shlex_or_error(lambda: shlex.split(text))


@settings(max_examples=3000, deadline=None)
@given(st.text(_CHARACTERS, max_size=30))
def test_shell_tokens_are_shlex_s_tokens(text: str) -> None:
    lexed = _shlex_or_error(lambda: list(shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)))
    assert _shlex_or_error(lambda: shell_tokens(text)) == lexed


def test_the_words_and_redirections_of_real_commands() -> None:
    assert words_of("""python -c "import x; print('a b')" --flag 'two words'""") == [
        "python", "-c", "import x; print('a b')", "--flag", "two words"]
    assert words_of('echo "a\\"b" \'\' c\\ d') == ["echo", 'a"b', "", "c d"]
    assert words_of("echo 'unclosed") == ["echo", "'unclosed"]  # the shell's quotes do not close: blanks split
    assert redirect_targets("pytest -x tests/ 2>&1") == []
    assert redirect_targets("cat <<'EOF' > new.py") == ["new.py"]
    assert redirect_targets("""python -c "print(1 > 0)" >> log.txt""") == ["log.txt"]
