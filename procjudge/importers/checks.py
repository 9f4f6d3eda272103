"""The checks a shell agent makes besides its test runner, and what they showed.

An agent learns whether its code works in more ways than running the project's tests: it writes
``reproduce_issue.py`` or ``test_fix.py`` and runs it with ``python``, runs ``python -c "..."``
with an assert or a print, runs a script of the project's (``run_tests.sh``, ``./check.py``). Each
of those is a **check**, and its outcome is read from what it printed:

- a command that installs, queries or builds the environment is never a check (``pip install``,
  ``uv``, ``conda``, ``apt``, ``npm install``, ``python setup.py develop``, ``python --version``,
  ``which``), and neither is a script whose text the log showed writing the repository's files
  (``fix.py`` that opens ``django/db/models.py`` for writing): that is an edit;
- a check that could not run validated nothing: the interpreter or the script is not there
  (exit 127, ``can't open file``), or a module the project does not provide is missing;
- otherwise it **failed** when it exited non-zero (the exception it died with, and the frames it
  passed through, are its evidence), when its exit status is not logged and its output ends in a
  traceback, or when it printed a failing verdict in its last lines (``FAIL:``, ``Error:``,
  ``BUG``, ``still reproduced``, a line opened by a cross); it **passed** when it printed a passing
  verdict (``SUCCESS``, ``PASS``, ``OK``, ``fixed``, ``not reproduced``, a line opened by a check
  mark) or, failing both, when it exited 0 (a printed JSON body's ``"error":`` key is data, not
  a verdict; ``SUCCESS: False`` and ``Match: False`` state a failure). How the
  outcome was read is kept beside it (``exit status 1``, ``traceback``, ``printed``, ``exit 0``),
  so a reader can weigh it: a script that printed nothing and exited 0 is the weakest evidence.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..facts import TRACEBACK_FRAME

# Commands that change or inspect the environment, never the code: installers, package queries,
# an interpreter's version. Matched against a simple command with its ``cd X &&``, ``timeout``
# and ``env`` prefixes removed.
_ENVIRONMENT = re.compile(
    r"^(?:sudo\s+)?(?:\S+=\S*\s+)*(?:"
    r"(?:pip[\d.]*|pipx|uv|conda|mamba|micromamba|apt(?:-get)?|apk|yum|dnf|brew|poetry|pdm|hatch|easy_install|gem)\b"
    r"|(?:npm|yarn|pnpm|bun)\s+(?:install|i|ci|add|remove|uninstall|update|upgrade|link)\b"
    r"|(?:cargo|go)\s+(?:install|get|mod)\b"
    r"|python[\d.]*\s+-m\s+(?:pip|ensurepip|venv|virtualenv|site|uv)\b"
    r"|python[\d.]*\s+(?:\S+/)?setup\.py\s+(?:install|develop|build|build_ext|egg_info|sdist|bdist_wheel|clean)\b"
    r"|python[\d.]*\s+(?:-V|--version)\b"
    r"|(?:which|type|whereis|command\s+-v|hash)\s)")


def is_environment(plain: str) -> bool:
    """Whether a simple command installs, removes or queries the environment (``pip install pytest``
    is not a test run however it names the runner)."""
    return _ENVIRONMENT.match(plain) is not None


# A script run: an interpreter and a file, an interpreter's inline code, or an executable script.
_INTERPRETED = re.compile(
    r"^(?:\S+=\S*\s+)*(?P<interpreter>python[\d.]*|node|ruby|perl|php|bash|sh|Rscript)"
    r"(?P<options>(?:\s+-[A-Za-z]+\b(?!\s*['\"]))*)\s+(?P<rest>.+)$", re.DOTALL)
_EXECUTABLE = re.compile(r"^(?:\S+=\S*\s+)*(?P<script>\.{0,2}/\S+\.(?:py|sh|js|rb|pl))(?:\s+(?P<rest>.*))?$", re.DOTALL)
_SCRIPT_FILE = re.compile(r"^\S+\.(?:py|js|mjs|cjs|ts|rb|pl|php|sh|bash|R)$")
# ``python -m X`` runs whose module is a check (a syntax check, doctest, a project's own module)
# unless it serves or formats: those print, they do not test.
_MODULE_NOT_A_CHECK = frozenset({"http.server", "json.tool", "pydoc", "timeit", "cProfile", "pdb", "idlelib", "this",
                                 "pip", "venv", "ensurepip", "site", "virtualenv"})


_VERSION_QUERY = re.compile(r"__version__|\bget_version\(|\bsys\.version|\bversion\(|\bprocess\.version|\bsys\.path\b"
                            r"|\b__file__\b|\bsys\.executable\b|importlib\.metadata")
# Options with which a script prints its usage or version instead of running.
_USAGE = frozenset({"--help", "-h", "--version", "-V", "help"})


@dataclass(frozen=True)
class ScriptRun:
    """A command that runs code to see what it does: its identity (the interpreter and the script,
    or the first words of the inline code) and the script's path, when it runs a file."""

    identity: str
    script: str | None


def script_run(plain: str, words: list[str]) -> ScriptRun | None:
    """The script a simple command runs (``python reproduce.py``, ``python -c "..."``, ``node -e``,
    ``./check.sh``, ``python -m py_compile x.py``), or None. ``plain`` is the command without its
    prefixes, ``words`` the same split as the shell splits it."""
    if not words or _USAGE & set(words[1:]):
        return None
    if os.path.basename(words[0]) == "java":
        return _java_run(words)
    executable = _EXECUTABLE.match(plain)
    if executable:
        script = executable.group("script")
        return ScriptRun(_identity(script.removeprefix("./"), script, words[1:]), script.removeprefix("./"))
    match = _INTERPRETED.match(plain)
    if match is None:
        return None
    interpreter = re.sub(r"[\d.]+$", "", match.group("interpreter"))
    start = next((k for k, w in enumerate(words) if re.sub(r"[\d.]+$", "", os.path.basename(w)) == interpreter), None)
    if start is None:
        return None
    arguments = words[start + 1:]
    k = 0
    while k < len(arguments) and arguments[k].startswith("-") and arguments[k] not in ("-c", "-e", "-m", "-"):
        k += 1
    if k >= len(arguments):
        return None
    first = arguments[k]
    if first in ("-c", "-e"):
        code = arguments[k + 1] if k + 1 < len(arguments) else ""
        if not code.strip() or _VERSION_QUERY.search(code) and "assert" not in code:
            return None  # nothing, or which version is installed: the environment, not the code
        if re.search(r"\bopen\(", code) and not re.search(r"\bimport\b|\brequire\(", code):
            return None  # prints a file's lines: a read
        shown = " ".join(code.split())
        return ScriptRun(f"{interpreter} {first} {shown[:60]}{'...' if len(shown) > 60 else ''}", None)
    if first == "-m":
        module = arguments[k + 1] if k + 1 < len(arguments) else ""
        if not module or module in _MODULE_NOT_A_CHECK or interpreter != "python":
            return None
        return ScriptRun(_identity(f"python -m {module}", None, arguments[k + 2:]), None)
    if first == "-" or not _SCRIPT_FILE.match(first):
        return None  # a script from stdin (a heredoc) is read by the edit rebuilding; a bare word is no file
    return ScriptRun(_identity(f"{interpreter} {first.removeprefix('./')}", first, arguments[k + 1:]),
                     first.removeprefix("./"))


_JAVA_VALUED = frozenset({"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-opens", "--add-exports",
                          "--add-modules", "--add-reads", "-javaagent", "--source"})


def _java_run(words: list[str]) -> ScriptRun | None:
    """``java [options] Main [args]``, ``java [options] Repro.java`` (a source file run whole) or
    ``java -jar app.jar``: the class, file or jar it runs; None for ``java -version`` and the like."""
    k = 1
    while k < len(words) and words[k].startswith("-") and words[k] != "-jar":
        k += 2 if words[k] in _JAVA_VALUED else 1
    if k < len(words) and words[k] == "-jar":
        k += 1
    if k >= len(words) or not re.fullmatch(r"[\w.$/-]+", words[k]):
        return None
    target = words[k]
    script = target if target.endswith((".java", ".jar")) else None
    return ScriptRun(_identity(f"java {target}", script, words[k + 1:]), script)


def _identity(head: str, script: str | None, rest: list[str]) -> str:
    """A check's name: its command without output plumbing, at most 100 characters."""
    shown = []
    for word in rest:
        if word in ("|", ">", ">>", "2>&1", "&&", "||", ";") or word.startswith((">", "2>", "&>")):
            break
        shown.append(word)
    text = " ".join([head, *shown]).strip()
    return text if len(text) <= 100 else text[:97] + "..."


# --------------------------------------------------------------------------- scripts that edit


_OPENS_FOR_WRITING = re.compile(r"open\([^)]*['\"][wax]b?\+?['\"]|\.write_(?:text|bytes)\(|shutil\.(?:copy\w*|move)\("
                                r"|os\.(?:replace|rename)\(|fileinput\.\w+\([^)]*inplace")
_PATH_LITERAL = re.compile(r"['\"]((?:[\w.-]+/)*[\w.-]+\.(?:py|pyi|txt|rst|md|cfg|toml|ini|json|ya?ml|js|ts|c|h|cpp|go|rs|java|"
                           r"html|css|po|sql))['\"]")


def script_targets(text: str, script: str | None = None) -> list[str]:
    """The files a script's text writes: the path literals of a script that opens a file for
    writing (or copies, moves, rewrites in place), the script itself excepted; [] when it writes
    none."""
    if not _OPENS_FOR_WRITING.search(text):
        return []
    own = os.path.normpath(script) if script else None
    return [path for path in dict.fromkeys(os.path.normpath(p) for p in _PATH_LITERAL.findall(text)) if path != own]


# --------------------------------------------------------------------------- what a check showed


@dataclass(frozen=True)
class Outcome:
    """What a check showed: ``passed`` (None when it could not run), the line that shows it,
    how it was read (``exit status N``, ``traceback``, ``printed``, ``exit 0``, ``no error
    printed``), the source files its traceback passed through (path, line), and why it could not
    run."""

    passed: bool | None
    line: str
    how: str
    frames: tuple[tuple[str, int], ...] = ()
    unavailable: str | None = None


_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning|NotFound|DoesNotExist"
                        r"|NotReady|Invalid\w*|Denied)\b.*|^AssertionError.*|^[\w.]+: .+")
_NOT_FOUND = re.compile(r"can't open file .*\[Errno 2\]|^(?:\S+: )?(?:line \d+: )?\S+: (?:command )?not found|"
                        r"No such file or directory|Cannot find module '(?!\.)|No module named [\w.]+\.__main__"
                        r"|cannot be directly executed", re.MULTILINE)
MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
# A distribution the image lacks, as importlib.metadata and pkg_resources say it ("No package metadata
# was found for The 'safetensors>=0.4.3' distribution was not found and is required by ...")
_MISSING_PACKAGE = re.compile(
    r"(?:PackageNotFoundError: No package metadata was found for (?:The ')?|DistributionNotFound: The ')"
    r"([A-Za-z0-9][\w.-]*)")


def missing_dependency(text: str, own_modules: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(how, why) when ``text`` says the environment lacks what the program needs: a module the
    project does not provide, a distribution, a system library (the first found, in that order);
    None when it says none of them (a missing module of the project's own is the agent's)."""
    modules = MISSING_MODULE.findall(text)
    if modules and not any(name.split(".")[0] in own_modules for name in modules):
        return "missing module", module_missing(modules[-1])
    package = missing_package(text, own_modules)
    if package is not None:
        return "missing package", f"a package the project does not provide is not installed ({package})"
    library = missing_library(text, own_modules)
    if library is not None:
        return "missing library", f"a system library the environment lacks is missing ({library})"
    return None


def module_missing(name: str) -> str:
    """Why a run that needed the module ``name`` validated nothing."""
    return f"a module the project does not provide is missing ({name})"


# An optional dependency the image lacks, in the words of the library that needs it, on the import
# error it raises: sympy's "LaTeX parsing requires the antlr4 python package, provided by pip ...",
# pandas' "Missing optional dependency 'openpyxl'", "Please install h5netcdf", "pip install foo".
_REQUIRED_PACKAGE = re.compile(
    r"^(?:[\w.]+\.)?(?:ModuleNotFoundError|ImportError): (?:.*?\brequires? (?:the )?['`]?([A-Za-z][\w.-]*?)['`]?"
    r"(?:[<>=!~]=?[\d.]+| (?:python |Python )?(?:package|module|library)\b)"
    r"|Missing optional dependency '([\w.-]+)'|.*?\b[Pp]lease install ['`]?([A-Za-z][\w.-]*)|.*?\bpip install ([A-Za-z][\w.-]*))",
    re.MULTILINE)


def missing_package(text: str, own_modules: frozenset[str] = frozenset()) -> str | None:
    """The last distribution the output says is not installed, unless it is the project's own."""
    tail = text[-20_000:]
    named = _MISSING_PACKAGE.findall(tail)
    if "Error: " in tail:
        named += [next(part for part in match if part) for match in _REQUIRED_PACKAGE.findall(tail)]
    found = [name for name in named if name.replace("-", "_").lower() not in own_modules]
    return found[-1] if found else None


# A system library the image lacks, as Python's loaders and the dynamic linker say it: a wrapper's
# own words (pyzbar: "Unable to find zbar shared library"), dlopen's, ctypes'.
_MISSING_LIBRARY = re.compile(
    r"(?:ImportError|OSError): (?:([\w.+-]+\.so[\w.]*): cannot open shared object file"
    r"|Unable to find (?:the )?'?([\w.+-]+)'? (?:shared )?library|cannot load library '?([\w.+/-]+?)'?[:\s])"
    r"|error while loading shared libraries: ([\w.+-]+\.so[\w.]*)")


def missing_library(text: str, own_modules: frozenset[str] = frozenset()) -> str | None:
    """The system library whose absence stopped a program (``libGL.so.1``, ``zbar``), or None; a
    library named like one of the project's own modules (its unbuilt extension) is not one."""
    found = [next(part for part in match if part) for match in _MISSING_LIBRARY.findall(text[-20_000:])]
    foreign = [name for name in found if os.path.basename(name).split(".")[0].removeprefix("lib") not in own_modules
               and os.path.basename(name).split(".")[0] not in own_modules]
    return foreign[-1] if foreign else None


# Verdicts a check prints about itself, read in its last lines (the last one that says either wins).
# A verdict opens the line: a quoted key there (``"error": "Not found"``, ``"success": false``) is data
# the check printed, not its verdict; "Error handling works" names a feature, not an error.
_FAILING = re.compile(
    r"^[^\w\"']*(?:FAIL(?:ED|URE|S)?|ERROR(?!\s+handl|\s+messages?\s*[:=])|BUG|WRONG|MISMATCH|NOT (?:FIXED|OK)|X )\b"
    r"|\b(?:FAIL(?:ED|URE)?|ERROR)\s*[:!-]|\bError:|\b(?:test|check|assert\w*)s? failed\b"
    r"|\b(?:issue|bug|problem|error)\s+(?:is\s+)?(?:still\s+)?(?:reproduced|present|exists|persists)\b"
    r"|\bstill (?:fails|failing|broken|present|reproduced|happens)\b|\(unexpected\)|\bunexpected(?:ly)? (?:succeeded|passed)\b"
    r"|\bunexpected (?:status|response|result|output|value|exit)"
    r"|\bTotal (?:errors|failures): [1-9]|\b[1-9]\d* (?:tests? )?failed\b|\bCaught (?:exception|error)\b"
    r"|(?-i:\bFAIL(?:ED|URE)?)[.!]*\s*$",  # the verdict in capitals ending the line: "row_insert FAILED"
    re.IGNORECASE)
_PASSING = re.compile(
    r"^[^\w\"']*(?:PASS(?:ED)?|SUCCESS(?:FUL)?|OK|DONE)\b"
    r"|\b(?:SUCCESS|PASS(?:ED)?)\s*[:!-]|\ball (?:\d+ )?(?:tests?|checks?|cases?|assertions?)(?: have)? pass(?:ed)?\b"
    r"|\b(?:issue|bug|problem)\s+(?:is\s+)?(?:fixed|resolved|not reproduced|no longer (?:reproduced|present|occurs))\b"
    r"|\bnot reproduced\b|\b(?:fix|behaviou?r) (?:is )?(?:verified|confirmed|works)\b|\bworks (?:as expected|correctly)\b"
    r"|\bno (?:errors?|failures?|issues?) (?:found|detected|raised)\b|\b0 failed\b"
    r"|(?-i:\bPASS(?:ED)?)[.!]*\s*$",  # "row_insert PASSED"
    re.IGNORECASE)


def traceback_frames(output: str) -> tuple[tuple[str, int], ...]:
    """The (file, line) frames of the last traceback in an output, innermost last."""
    start = output.rfind(_TRACEBACK)
    if start < 0:
        return ()
    return tuple((path, int(line)) for path, line in TRACEBACK_FRAME.findall(output[start:start + 200_000]))


def _exception_line(output: str) -> str | None:
    """The line a traceback ends with (``ValueError: ...``), the last such in the output."""
    start = output.rfind(_TRACEBACK)
    if start < 0:
        return None
    for line in output[start:].split("\n")[1:]:
        if line and not line[0].isspace() and _EXCEPTION.match(line):
            return line.strip()[:300]
    return None


def check_outcome(returncode: int | None, output: str, own_modules: frozenset[str] = frozenset()) -> Outcome:
    """What a check's run showed (see the module's rules). ``own_modules`` are the top-level
    names the project (or the agent) provides: a missing one is the agent's failure, any other the
    environment's."""
    text = output.strip()
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    last = lines[-1][:300] if lines else ""
    if returncode == 127 or (returncode != 0 and _TRACEBACK not in text and len(lines) <= 3
                             and _NOT_FOUND.search(text[-2000:])):
        return Outcome(None, last, f"exit status {returncode}" if returncode is not None else "not found",
                       unavailable="the script or its interpreter was not found")
    dependency = missing_dependency(text[-20_000:], own_modules) if returncode != 0 else None
    if dependency is not None:
        return Outcome(None, last, dependency[0], unavailable=dependency[1])
    exception = _exception_line(text)
    frames = traceback_frames(text) if exception else ()
    if returncode not in (None, 0):
        return _unless_missing(Outcome(False, exception or _build_cause(lines) or _failing_line(lines) or last,
                                       f"exit status {returncode}", frames), own_modules)
    if returncode is None and exception and exception in lines[-3:]:
        return Outcome(False, exception, "traceback", frames)  # no exit status logged: it died of this
    verdict = _printed_verdict(lines)
    if verdict is not None:
        passed, line = verdict
        found = Outcome(passed, line[:300], "printed", () if passed else frames)
        return found if passed else _unless_missing(found, own_modules)
    if returncode is None and exception:
        return Outcome(False, exception, "traceback", frames)
    return Outcome(True, last, "exit 0" if returncode == 0 else "no error printed")


# mini-swe-agent's words for a command it killed at its time limit (its output, and a console's
# rendering of it, begin with them)
KILLED_BY_HARNESS = "timed out and has been killed"


def killed_first(before: str, output: str) -> str:
    """A command's output, led by mini-swe-agent's words when ``before`` (what it wrote ahead of the
    output: "The last command <command>...</command> timed out and has been killed.", in a console
    wrapped at its width) says it killed the command: what the command printed is no outcome of it."""
    if KILLED_BY_HARNESS in " ".join(before.split()):
        return f"The command {KILLED_BY_HARNESS}.\n{output}"
    return output

# A missing module a script caught and printed in its own words (``Error: No module named 'torch'``).
_PRINTED_MISSING = re.compile(r"\bNo module named '?([\w.]+)'?")


def _unless_missing(failed: Outcome, own_modules: frozenset[str]) -> Outcome:
    """A failure whose own line is a missing module the project does not provide (the script
    caught the ImportError and printed it, ``Error importing datasets: No module named 'numpy'``)
    validated nothing: the environment lacks it. Any other failure as it is."""
    missing = _PRINTED_MISSING.search(failed.line or "")
    if missing is None or missing.group(1).split(".")[0] in own_modules:
        return failed
    return Outcome(None, failed.line, "missing module", unavailable=module_missing(missing.group(1)))


_MAVEN_CAUSE = re.compile(r"^\[ERROR\] Failed to execute goal ")


def _failing_line(lines: list[str]) -> str | None:
    """For a check that failed by its exit status and whose last line states a pass, the last line
    that states a failure (read as :func:`_printed_verdict` reads a line): a script printing a
    verdict for each case ends on the last case's "PASS: ..." when an earlier case printed the
    "FAIL: ..." its exit status reports. None when the last line says no pass."""
    last = _printed_verdict(lines[-1:])
    if last is None or not last[0]:
        return None
    for line in reversed(lines[-200:]):
        verdict = _printed_verdict([line])
        if verdict is not None and not verdict[0]:
            return line[:300]
    return None


def _build_cause(lines: list[str]) -> str | None:
    """The line a failed Maven build names its cause in (``[ERROR] Failed to execute goal ...
    checkstyle ... 28 Checkstyle violations``): its last lines are only advice on re-running."""
    for line in reversed(lines[-60:]):
        if _MAVEN_CAUSE.match(line):
            return line[:300]
    return None


# A check mark or a cross opening a line is its verdict, whatever words follow: "✓ Error handling
# implemented" passes, "✗ expected 3, got 4" fails (a mark is no word, so ``\b`` cannot follow it).
_MARK = re.compile(r"^[^\w✓✔✅✗✘❌]*([✓✔✅]|[✗✘❌])")
# A verdict stated as a label's value, which decides the line whatever its label says: "SUCCESS:
# False", "Match: False", "Accuracy requirement: FAILED", "Accuracy (>=0.62): ✗"; and "Match: True".
_VALUE_VERDICT = re.compile(
    r"\b(?P<label>success|pass(?:ed)?|ok|match(?:es|ed)?|correct|valid|met|satisfied|works?|fixed|resolved)"
    r"\s*[:=]\s*(?P<bool>true|false)\b"
    r"|[:=]\s*(?P<word>pass(?:ed)?|fail(?:ed)?)\s*[.!]*$"
    r"|[:=]\s*(?P<mark>[✓✔✅✗✘❌])\s*$",
    re.IGNORECASE)


def _printed_verdict(lines: list[str]) -> tuple[bool, str] | None:
    """(passed, line) of the last of a check's last eight lines that states a verdict; a line that
    says both (``SUCCESS: 0 failed``) passes, one that negates a failure (``no errors found``) too."""
    for line in reversed(lines[-8:]):
        mark = _MARK.match(line)
        if mark is not None:
            return mark.group(1) in "✓✔✅", line
        value = _VALUE_VERDICT.search(line)
        failing = _FAILING.search(line)
        if value is not None:
            stated = (value["bool"] or value["word"] or value["mark"]).lower()
            passed = stated in ("true", "pass", "passed", "✓", "✔", "✅")
            if not passed or failing is None:  # "ok: true" beside a failure the line states is no pass
                return passed, line
        passing = _PASSING.search(line)
        unexpected = re.search(r"\(unexpected\)", line, re.IGNORECASE) is not None
        if passing and (not failing or passing.start() <= failing.start() and not unexpected):
            return True, line
        if failing and _EXPECTED_FAILURE.search(line):
            return True, line  # "ERROR (expected): no attribute 'nonexistent'": the error the check asks for
        if failing:
            return False, line
    return None


# A failure the check says it expected: the error its case asks for, which is the behaviour it checks
# (astropy-14096's reproduction printed "ERROR (expected): 'custom_coord' object has no attribute
# 'nonexistent'" once the fix named the right attribute).
_EXPECTED_FAILURE = re.compile(
    r"^[^\w\"']*(?:FAIL(?:ED|URE)?|ERROR|EXCEPTION)\s*\((?:as )?expected\)"
    r"|\b(?:raised|caught|got|threw|raises)\s+(?:the\s+|an?\s+)?expected\s+(?:error|exception)\b"
    r"|\b(?:error|exception|failure)s?\s+(?:was\s+|is\s+)?(?:raised\s+)?as expected\b",
    re.IGNORECASE)
