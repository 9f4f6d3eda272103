"""What a shell agent's command is: a test run (its runner and targets, the suite's identity), a
build, or an edit (the files it writes); every other command is a read or a search. Commands are
read with the shell's grammar (:mod:`.grammar`), one simple command at a time.
"""

from __future__ import annotations

import functools
import os
import re
import shlex

from . import grammar
from .checks import is_environment
from .edits import heredoc_bodies, words_of

RUNNER = re.compile(
    r"(?:^|[\s;&|(])(?:(?:python[\d.]*|coverage run)\s+(?:-(?!m\b)[a-zA-Z]+\s+)*)?"
    r"(?P<runner>(?:\S*/)?runtests\.py|-m\s+pytest|-m\s+unittest|py\.test|pytest|tox|nox)(?![\w.-])(?P<rest>[^;&|]*)")
# Options with which a runner runs no test: it prints its version, help, fixtures or what it would collect.
_NOT_A_RUN = frozenset({"--help", "-h", "--version", "-V", "--fixtures", "--funcargs", "--fixtures-per-test",
                        "--markers", "--collect-only", "--co", "--setup-plan"})
_TOX_NOT_A_RUN = frozenset({"-l", "-a", "--listenvs", "--listenvs-all", "--showconfig", "list", "config"})
# Runners of other languages: (pattern, the runner's name in the suite identity).
OTHER_RUNNERS = (
    (re.compile(r"^(?:\S+=\S+\s+)*go\s+test\b(?P<rest>.*)"), "go test"),
    (re.compile(r"^(?:\S+=\S+\s+)*cargo\s+(?:\+\S+\s+)?(?:test|nextest\s+run)\b(?P<rest>.*)"), "cargo test"),
    (re.compile(r"^(?:npm|yarn|pnpm)\s+(?:run\s+)?test\b(?P<rest>.*)"), "npm test"),
    (re.compile(r"^(?:(?:npx|yarn|pnpm(?:\s+exec)?)\s+|\S*node_modules/\.bin/)?"
                r"(?P<name>jest|vitest)\b(?:\s+run\b)?(?P<rest>.*)"), ""),
    (re.compile(r"^ctest\b(?P<rest>.*)"), "ctest"),
    # SymPy's own runner (``bin/test sympy/core``), run as a program or by Python
    (re.compile(r"^(?:python[\d.]*\s+(?:-\S+\s+)*)?(?:\./)?bin/test(?![\w.-])(?P<rest>[^;&|]*)"), "bin/test"),
    (re.compile(r"^(?:make|gmake)\b(?:\s+-\S+)*\s+(?:test|check|tests)\b(?P<rest>.*)"), "make test"),
    # Maven's goals that run the tests (surefire), unless they are skipped
    (re.compile(r"^(?:\S+=\S+\s+)*(?:\S*/)?mvnw?\b(?!.*-D(?:skipTests|maven\.test\.skip)\b)"
                r"(?=.*\s(?:test|verify|install|package)(?:\s|$))(?P<rest>.*)"), "mvn"),
)
_BUILD = re.compile(r"^(?:\S+=\S+\s+)*(?:make|gmake|ninja|cmake\s+--build|cargo\s+(?:\+\S+\s+)?(?:build|check)|go\s+(?:build|vet)"
                    r"|(?:npm|yarn|pnpm)\s+(?:run\s+)?build|tsc|gcc|g\+\+|cc|c\+\+|clang|clang\+\+|javac|mvn\s+compile|gradle\s+build)\b")


def segments(command: str) -> list[str]:
    """The simple commands of a command line, as the shell reads it (``procjudge.importers.grammar``:
    pipelines, ``&&``/``||``/``;`` lists, subshells, loops and conditionals), each with its
    redirections and a here-document's opening line, its body left out (a script's text is not
    commands)."""
    return list(grammar.simple_commands(command))


_PREFIXES = re.compile(r"^(?:(?:timeout\s+\S+|env|time|command)\s+)+")


def without_prefixes(part: str) -> str:
    """A simple command without a leading ``cd DIR &&`` already split off, ``timeout N`` or ``env``."""
    return _PREFIXES.sub("", part.strip())


def test_command(command: str) -> str | None:
    """The suite identity of a test run (runner and targets), or None when no known runner runs."""
    for part in segments(command):
        if part.startswith(("echo", "cat", "grep", "sed", "#", "ls", "find", "head", "tail", "nl")):
            continue
        plain = without_prefixes(part)
        if is_environment(plain) or is_environment(part.strip()):  # `pip install pytest` installs the runner
            continue
        for pattern, name in OTHER_RUNNERS:
            other = pattern.match(plain)
            if other:
                words = _without_redirections(words_of(other.group("rest")))
                if "--help" in words or "-h" in words:
                    return None
                runner = name or other.group("name")
                targets = [w for w in words if not w.startswith("-") and "=" not in w]
                if runner == "mvn":  # a -Dtest= selection narrows the suite
                    targets = [w for w in words if not w.startswith("-") or w.startswith(("-Dtest=", "-Dit.test="))]
                if runner in ("make test", "ctest", "npm test"):
                    targets = []
                if runner == "bin/test":  # SymPy's runner selects as pytest does (-k)
                    targets = _selection(words)
                return " ".join([runner, *targets])
        match = RUNNER.search(" " + part)
        if not match:
            continue
        runner = match.group("runner")
        if runner.endswith("runtests.py"):
            runner = "runtests.py"
        # its redirections are no targets (``2>&1`` is cut at the ``&`` into a dangling ``2>``)
        words = _without_redirections(words_of(match.group("rest")))
        if _NOT_A_RUN & set(words) or runner in ("tox", "nox") and _TOX_NOT_A_RUN & set(words):
            return None
        targets = _selection(words)
        if runner in ("tox", "nox"):
            targets = []  # environments, not test targets: the suite is the project's own
        return " ".join([re.sub(r"-m\s+", "python -m ", runner), *targets]).strip()
    return None


def _selection(words: list[str]) -> list[str]:
    """The targets of a Python test run, a narrowed selection with them (``-k EXPR``,
    ``--deselect T``: another suite); its other options and their values left out."""
    targets, skip = [], False
    for k, word in enumerate(words):
        if skip:
            skip = False
        elif word in _SELECTING and k + 1 < len(words):  # a narrowed selection is another suite
            targets.append(f"{word} {words[k + 1]}")
            skip = True
        elif word.startswith(_SELECTING_JOINED) or word in ("--lf", "--last-failed"):
            targets.append(word)
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-") and "=" not in word and not word.isdigit():
            targets.append(word)
    return targets


def build_command(command: str) -> str | None:
    """The build a command runs (its last build step, as written), or None."""
    found = None
    for part in segments(command):
        plain = without_prefixes(part)
        if _BUILD.match(plain) and "--help" not in plain and "-n" not in plain.split()[1:2]:
            found = plain[:200]
    return found


def build_ran_last(command: str) -> bool:
    """Whether a command line's exit code is its build's: the build is its last simple command
    (``make && grep x out.html`` exits with grep's code; ``make 2>&1 | tail`` with tail's)."""
    parts = [part for part in segments(command) if not re.match(r"^(?:echo|printf|true|:)\b", without_prefixes(part))]
    return bool(parts) and build_command(parts[-1]) is not None and "|" not in command.split("\n")[-1].split("||")[0]


# Options that narrow which tests run: part of the suite's identity, so that a narrowed run's counts are
# never compared with the whole selection's.
_SELECTING = frozenset({"-k", "-m", "--deselect", "--ignore", "--ignore-glob"})
_SELECTING_JOINED = ("-k=", "-m=", "--deselect=", "--ignore=", "--ignore-glob=")
_VALUED = frozenset({"-e", "-k", "-m", "-p", "-c", "-n", "-o", "-W", "--settings", "--parallel", "--tb", "--deselect",
                     "--ignore", "--rootdir", "--verbosity", "-v2"})


_PUNCTUATION = "<>|&;()"
# shlex's tokens of text without quotes, backslashes or comments, as its lexer reads them: runs of
# punctuation, runs of word characters, and any other character alone
_WORD_CHARS = shlex.shlex(posix=True, punctuation_chars=_PUNCTUATION).wordchars
_TOKENS = re.compile(f"[{re.escape(_PUNCTUATION)}]+|[{re.escape(_WORD_CHARS)}]+|[^ \t\r\n]")
_LEXED = frozenset("'\"\\#")  # what only shlex's own lexer reads right


def shell_tokens(part: str) -> list[str]:
    """A simple command's tokens as ``shlex`` reads them with the shell's punctuation (``>`` and
    ``2>&1`` apart from the words): by its lexer where quotes, backslashes or comments need it,
    else by one regular expression that gives the same tokens; raises ValueError where shlex does
    (a quote that does not close)."""
    if _LEXED.isdisjoint(part):
        return _TOKENS.findall(part)
    return list(_lexed(part))


@functools.lru_cache(maxsize=4096)
def _lexed(part: str) -> tuple[str, ...]:
    """shlex's tokens of a part it must lex itself: an agent writes the same here-document opener
    (``cat <<'EOF' > reproduce.py``) again and again, and shlex reads a character at a time."""
    return tuple(shlex.shlex(part, posix=True, punctuation_chars=_PUNCTUATION))


def redirect_targets(part: str) -> list[str]:
    """The files a simple command redirects its output to (``>``, ``>>``, ``2>``), read with
    the shell's quoting: a ``>`` inside quotes is text."""
    if ">" not in part:
        return []
    try:
        tokens = shell_tokens(part)
    except ValueError:
        return []
    paths = []
    for k, token in enumerate(tokens[:-1]):
        if token in (">", ">>", "&>", ">|") and tokens[k + 1] not in ("&", "<", ">"):
            paths.append(tokens[k + 1])
    return paths


_BUILD_OUTPUT = re.compile(r"(?:^|/)(?:build|dist|target|out|__pycache__|\.pytest_cache|\.mypy_cache|\.tox|node_modules"
                           r"|CMakeFiles|CMakeCache\.txt|[^/]*\.(?:pyc|o|a|so|egg-info))$")


_OPENED = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")
_PYTHON = re.compile(r"\bpython[\d.]*\b")
_WRITES = re.compile(r"\.write(?:_text)?\(|open\([^)]*['\"][wa]\+?['\"]")
_NAMED_SOURCE = re.compile(r"['\"]([\w./-]+\.(?:py|txt|rst|cfg|toml|json|ya?ml))['\"]")


def written_files(command: str) -> list[tuple[str, str]]:
    """(path, how) for every file the command writes: 'sed', 'redirect', 'script', 'copy', 'delete',
    'patch'."""
    found: list[tuple[str, str]] = []
    for part in segments(command):
        words = _without_redirections(words_of(part))
        if not words:
            continue
        found += _segment_writes(words)
        for path in redirect_targets(part):
            if path not in ("/dev/null", "/dev/stdout", "/dev/stderr") and not path.startswith("&") and not path.isdigit():
                found.append((path, "redirect"))
    # only where a script's text could be read as writing (most commands hold no `open(` at all)
    run = _without_written_scripts(command) if "<<" in command and (
        _OPENED.search(command) or _PYTHON.search(command) and _WRITES.search(command)) else command
    for match in _OPENED.finditer(run):
        found.append((match.group(1), "script"))
    if _PYTHON.search(run) and _WRITES.search(run):
        # a script that writes: the source files it names by a string literal (a path in a variable)
        found += [(m.group(1), "script") for m in _NAMED_SOURCE.finditer(run)]
    return [(os.path.normpath(path) if path else path, how) for path, how in dict.fromkeys(found)]


_LIST_OPERATOR = re.compile(r"&&|\|\||;|\|")


def _without_written_scripts(command: str) -> str:
    """A command without the bodies of the here-documents it only writes into files (``cat <<'EOF'
    > reproduce.py``, ``tee``): a script written is not run, so the files it opens for writing are
    written when it runs, not by this command."""
    for opener, body in heredoc_bodies(command):
        # the simple command that reads it, cut from its opening line at the list operators
        reader = next((part for part in _LIST_OPERATOR.split(opener) if "<<" in part), opener).strip()
        before, _, after = reader.partition("<<")
        tee = reader.startswith("tee")
        if not tee and not (reader.startswith("cat") and ">" in before + after):
            continue  # read by an interpreter (`python - <<EOF`), or piped on: run
        if _PYTHON.search(command):
            names = [os.path.basename(target) for target in redirect_targets(reader)]
            if tee:
                names += [os.path.basename(word) for word in words_of(before)[1:] if not word.startswith("-")]
            if any(re.search(rf"\bpython[\d.]*\s+(?:-\S+\s+)*\S*{re.escape(name)}\b", command) for name in names):
                continue  # written and run in the same command (`cat <<'EOF' > fix.py && python fix.py`)
        command = command.replace(body, "", 1)
    return command


def copies(command: str) -> list[tuple[str, str, bool]]:
    """(source, destination, whether the source is moved) of every ``cp``/``mv`` of one file to
    another in a command (``cp utils.py utils.py.bak``, ``mv utils.py.bak utils.py``): what the
    destination then holds is what the source held. Copies of several files, or into a folder
    (``cp -r a b dir/``), are not listed."""
    found = []
    for part in segments(command):
        words = _without_redirections(words_of(part))
        if not words or os.path.basename(words[0]) not in ("cp", "mv"):
            continue
        operands = [word for word in words[1:] if not word.startswith("-")]
        if len(operands) == 2 and not operands[1].endswith("/"):
            found.append((os.path.normpath(operands[0]), os.path.normpath(operands[1]), os.path.basename(words[0]) == "mv"))
    return found


_REDIRECTION = re.compile(r"^(?:\d*|&)(?:>>?|<<?|>&|<&)(\S*)$")


def _without_redirections(words: list[str]) -> list[str]:
    """A simple command's words without its redirections (``2>/dev/null``, ``> out.txt``, ``2>&1``):
    they are no operands (``git checkout F 2>/dev/null`` restores F alone)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        found = _REDIRECTION.match(word)
        if found:
            skip = not found.group(1)  # `> file`: the file is the next word
            continue
        kept.append(word)
    return kept


def _segment_writes(words: list[str]) -> list[tuple[str, str]]:
    """The files one simple command writes by its own arguments (its redirections aside)."""
    head = os.path.basename(words[0])
    in_place = (head == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:])
                or head == "perl" and any(w.startswith("-pi") or w == "-i" for w in words[1:]))
    if in_place:
        return [(w, "sed") for w in _operands(words[1:], skip_first_script=True)]
    if head == "tee":
        return [(w, "redirect") for w in words[1:] if not w.startswith("-")]
    if head in ("cp", "mv") and len(words) >= 3:
        return _copied(words)
    if head == "rm":  # removing build output (build/, __pycache__, *.o) is cleaning, not an edit
        return [(w, "delete") for w in words[1:] if not w.startswith("-") and not _BUILD_OUTPUT.search(w.rstrip("/"))]
    if words[:2] in (["git", "checkout"], ["git", "restore"]):
        return _restored(words)
    if head in ("patch",) or words[:2] == ["git", "apply"]:
        return [("", "patch")]
    return []


def _copied(words: list[str]) -> list[tuple[str, str]]:
    """The files ``cp``/``mv`` writes: its last operand, or, where that is a folder (``dir/``,
    ``.``, or the target of several sources), each source's name in it."""
    operands = [w for w in words[1:] if not w.startswith("-")]
    if len(operands) < 2:
        return [(words[-1], "copy")]
    target, sources = operands[-1], operands[:-1]
    if target.endswith("/") or target in (".", "..") or len(sources) > 1:
        return [(os.path.join(target, os.path.basename(source.rstrip("/"))), "copy") for source in sources]
    return [(target, "copy")]


def _restored(words: list[str]) -> list[tuple[str, str]]:
    """The files a ``git checkout``/``git restore`` rewrites from the index or a commit; a branch
    switch, and a restore of the index alone, name no file."""
    if {"-b", "-B"} & set(words) or ("--staged" in words and "--worktree" not in words):
        return []
    operands = [w for w in words[2:] if not w.startswith("-")]
    if "--" in words:
        operands = words[words.index("--") + 1:]
    return [(w, "restore") for w in operands if _path_like(w)]


def _path_like(word: str) -> bool:
    """Whether a ``git checkout``/``git restore`` operand names a file (a folder or an extension)
    rather than a revision or a branch."""
    return "/" in word or bool(os.path.splitext(word)[1])


def restored_from_revision(words: list[str]) -> bool:
    """Whether a ``git checkout``/``git restore`` takes its files from a revision other than the
    last commit (``git checkout abc123 -- F``, ``git checkout v1 F``, ``git restore --source=v1 F``)."""
    if len(words) < 3 or os.path.basename(words[0]) != "git" or words[1] not in ("checkout", "restore"):
        return False
    if words[1] == "restore":
        source = next((w.split("=", 1)[1] if "=" in w else (words[k + 1] if k + 1 < len(words) else "")
                       for k, w in enumerate(words) if w in ("-s", "--source") or w.startswith("--source=")), None)
        return source not in (None, "HEAD")
    operands = [w for w in words[2:words.index("--") if "--" in words else len(words)] if not w.startswith("-")]
    # before "--" every operand is a revision; without it, the first one is unless it names a file
    revisions = operands if "--" in words else operands[:1] if operands and not _path_like(operands[0]) else []
    return any(revision != "HEAD" for revision in revisions)


def _operands(words: list[str], skip_first_script: bool) -> list[str]:
    """The file operands of sed/perl: the arguments after the script that are not options."""
    operands, script_seen = [], not skip_first_script
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            script_seen = True
            continue
        if word in ("-e", "--expression", "-f"):
            skip_next = True
            continue
        if word.startswith("-"):
            continue
        if not script_seen:
            script_seen = True
            continue
        operands.append(word)
    return operands
