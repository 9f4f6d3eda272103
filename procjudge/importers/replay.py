"""Each step's edits rebuilt as diff lines from what the log showed of its files (:mod:`.edits`):
a ``sed -i``, a patch, a here-document, an editor's replace, insert or create.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

from . import edits as rebuild
from . import sed
from .checks import script_run
from .classify import redirect_targets, restored_from_revision, segments, without_prefixes
from .edits import Edit, words_of
from .steps import Step, repo_relative

# What an editor tool prints when it refused an edit (SWE-agent's and OpenHands' str_replace_editor).
REJECTED = re.compile(r"has introduced new syntax error|have NOT been applied|No replacement was performed"
                      r"|did not appear verbatim|Error: (?:file|The path) .* does not exist"
                      r"|Parameter `\w+` is required for command")


class _Rebuilt:
    """What rebuilding one step found: its edits, the writes it could not rebuild (path, why), and
    its writes (a patch names its files only in its text)."""

    def __init__(self, step: Step) -> None:
        self.edits: list[Edit] = list(step.edits)
        self.unrecovered: list[tuple[str, str]] = list(step.unrecovered)
        self.writes: list[tuple[str, str]] = list(step.writes)


def rebuild_steps(steps: list[Step], submission: str | None, roots: tuple[str, ...]) -> list[Step]:
    """The steps, each with its ``edits`` (and ``unrecovered``) rebuilt from what had been seen of its files."""
    views = rebuild.Views()
    if submission:
        rebuild.seed_from_diff(views, submission)

    def rel(path: str) -> str:
        return repo_relative(os.path.normpath(path), roots)[0] if path else path

    # What was seen of each file the agent changed, as it was before the change, or None where a
    # patch changed it unseen: a ``git checkout F`` puts that back, so later edits apply to it.
    # Kept only in a run that restores a file.
    before: dict[str, dict[int, str] | None] = {}
    restores = any(how == "restore" for step in steps for _, how in step.writes)
    rebuilt = []
    for step in steps:
        if restores:
            _restore_views(step, views, before, rel)
            for path, how in step.writes:
                name = rel(path)
                if name and how != "restore" and name not in before:
                    before[name] = dict(views.lines.get(name, {}))
        found = _rebuilt(step, views, rel, roots)
        if restores and found is not None:
            for edit in found.edits:
                before.setdefault(edit.path, None)
        rebuilt.append(step if found is None else step.but(edits=found.edits, unrecovered=found.unrecovered,
                                                           writes=found.writes))
    return rebuilt


def _restore_views(step: Step, views: rebuild.Views, before: dict[str, dict[int, str] | None], rel: Any) -> None:
    """A ``git checkout``/``git restore`` of files the agent changed: each holds again what was
    seen of it before the change (from another revision, or changed unseen: nothing is known of
    it). Read before the step's other writes, which in one command come after it."""
    restored = [rel(path) for path, how in step.writes if how == "restore" and path]
    if not restored:
        return
    elsewhere = any(restored_from_revision(words_of(without_prefixes(part))) for part in segments(step.command))
    for name in restored:
        if name not in before:
            continue  # never changed: it holds what it held
        seen = before.pop(name)
        if seen is None or elsewhere:
            views.lines.pop(name, None)
        else:
            views.lines[name] = seen


def _rebuilt(step: Step, views: rebuild.Views, rel: Any, roots: tuple[str, ...]) -> _Rebuilt | None:
    """One step's edits against the views so far (which it updates), or None when it wrote nothing."""
    editor = step.editor
    if editor is not None and REJECTED.search(step.output[:600]):
        return None  # the editor refused the edit: nothing changed
    if not step.writes and not step.test and editor is None:
        first = step.command.strip().split("\n", 1)[0]
        words = words_of(first)
        target = next((w for w in words[1:] if not w.startswith("-") and ("/" in w or "." in w)), None)
        rebuild.observe(views, step.command, step.output, rel(target) if target else None, step.cut)
        return None
    found = _Rebuilt(step)
    try:
        if editor is not None:
            _editor_edit(step, found, editor, views, rel)
            return found
        _sed_edits(step, found, views, rel)
        _patch_edits(step, found, views, rel)
        _heredoc_edits(step, found, views, rel)
        _printed_edits(step, found, views, rel)
        _script_file_edits(step, found, views, rel)
    except rebuild.Unrebuilt as why:
        found.edits = []
        written = [rel(str(editor.get("path") or views.open_file or ""))] if editor is not None else \
            [rel(path) for path, _ in step.writes if path] or [""]
        found.unrecovered = [(path, str(why)) for path in dict.fromkeys(written)]
        if editor is not None:
            return found
    _account(found, rel, roots)
    return found


def _sed_edits(step: Step, found_in: _Rebuilt, views: rebuild.Views, rel: Any) -> None:
    """Each ``sed -i`` of the step's command, rebuilt against the lines seen."""
    for part in segments(step.command):
        words = words_of(part)
        if words and os.path.basename(words[0]) == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            read = functools.partial(_whole_text, step.command[:step.command.find(part)], views=views, rel=rel)
            found, missed = sed.sed_edits(views, words, rel, read)
            found_in.edits += found
            found_in.unrecovered += missed


def _whole_text(before: str, name: str, views: rebuild.Views, rel: Any) -> str | None:
    """The whole text of a file as the log shows it at one point of a command (``before``: the
    command up to there): written by a here-document earlier in it (``cat <<'EOF' > new.py``), else
    seen whole before (every line from the first); None when it is not known."""
    written = [(target[1], body) for opener, body in rebuild.heredoc_bodies(before)
               if (target := _heredoc_target(opener)) is not None and target[0] == name]
    if written:
        appended, body = written[-1]
        return None if appended else body
    lines = views.seen_whole(rel(name))
    return "\n".join(lines) if lines is not None else None


def _patch_edits(step: Step, found: _Rebuilt, views: rebuild.Views, rel: Any) -> None:
    """Each ``git apply`` or ``patch`` of a file whose text the log showed."""
    for part in segments(step.command):
        words = words_of(part)
        applied = (words[:2] == ["git", "apply"] or (words and words[0] == "patch")) and "<<" not in part
        if not applied:
            continue
        source = next((w for w in reversed(words[1:]) if not w.startswith("-") and w != "<"), None)
        if "-i" in words and words.index("-i") + 1 < len(words):
            source = words[words.index("-i") + 1]
        stdin = re.search(r"<\s*(\S+)", part)
        source = stdin.group(1) if stdin else source
        known = views.lines.get(rel(source)) if source else None
        if known:
            found.edits += rebuild.diff_edits(views, "\n".join(known[n] for n in sorted(known)), rel)
        else:  # which files it changed is not known either
            found.unrecovered.append(("", f"`{part.strip()[:60]}`: a patch whose text is not in the log"))


# A simple command that runs Python (``python3 - <<'EOF'``, ``cat <<'EOF' | python``); a path that
# holds the word (``lib/python3.13/site-packages/``) is no run of it.
_PYTHON = re.compile(r"(?:\S*/)?python[\d.]*(?:\s|$)")


def _heredoc_edits(step: Step, found: _Rebuilt, views: rebuild.Views, rel: Any) -> None:
    """Each heredoc of the command: a patch applied, a Python script's literal replacements, a
    whole file written by ``cat``/``tee``, or lines ``cat`` adds at a file's end (``>>``)."""
    for opener, body in rebuild.heredoc_bodies(step.command):
        if re.search(r"\bgit\s+apply\b|(?:^|[\s;&|])patch\b", opener):
            found.edits += rebuild.diff_edits(views, body, rel)
            continue
        if any(_PYTHON.match(without_prefixes(part)) for part in segments(opener)):
            targets = [rel(p) for p, how in step.writes if how == "script" and p]
            pairs = rebuild.script_replacements(body)
            if len(set(targets)) == 1 and pairs:
                for old, new in pairs:
                    found.edits += rebuild.replace_text(views, targets[0], old, new, "script")
            else:
                found.unrecovered += [(target, "a script's change that is not a str.replace of literals")
                                     for target in dict.fromkeys(targets)]
            continue
        target = _heredoc_target(opener)
        if target is not None:
            path, appended = target
            if appended:
                found.edits += rebuild.append_text(rel(path), body, "redirect")
            else:
                found.edits += rebuild.write_whole(views, rel(path), body, "redirect")


def _heredoc_target(opener: str) -> tuple[str, bool] | None:
    """The one file a here-document is written into by ``cat`` or ``tee`` (also behind ``cd /app
    &&``: the simple command of its opening line that holds the ``<<``), and whether it is
    appended; None for any other reader (an interpreter, a pipe) or several files."""
    reader = next((part for part in segments(opener) if "<<" in part), opener)
    plain = without_prefixes(reader)
    written, appended = _written_by(reader, plain)
    if re.match(r"^(?:cat|tee)\b", plain) and len(written) == 1:
        return written[0], appended
    return None


def _written_by(part: str, plain: str) -> tuple[list[str], bool]:
    """The files a simple command writes its output into, and whether it appends: its redirections
    (``/dev/null`` aside) and, for ``tee``, the files it names (``tee -a`` appends)."""
    written = [p for p in redirect_targets(part) if p != "/dev/null"]
    appended = ">>" in part
    if plain.startswith("tee"):
        words = words_of(plain.split("<<", 1)[0])
        named = [w for w in words[1:] if not w.startswith("-") and not w.startswith((">", "<")) and w not in written]
        written += [w for w in named if w != "/dev/null"]
        appended = "-a" in words[1:] or "--append" in words[1:]
    return written, appended


# A word that redirects output (``>``, ``>>``, ``1>f``, ``2>&1``, ``&>``); alone, it takes the next word.
_REDIRECT_WORD = re.compile(r"^(?:\d*|&)>>?(&\d+|\S+)?$")


def _redirections_start(words: list[str]) -> int:
    """Where the redirections at the end of a command's words begin (``echo x > f 2>&1``: 2)."""
    end = len(words)
    while end > 1:
        last = _REDIRECT_WORD.match(words[end - 1])
        if last and last.group(1):
            end -= 1
        elif end > 2 and (bare := _REDIRECT_WORD.match(words[end - 2])) and not bare.group(1):
            end -= 2
        else:
            break
    return end


def _printed_edits(step: Step, found: _Rebuilt, views: rebuild.Views, rel: Any) -> None:
    """Each ``echo`` or ``printf`` whose output goes into one file (``printf '...' > F``,
    ``echo "x" >> F``): its text, where the shell that ran it would print the same."""
    for part in segments(step.command):
        plain = without_prefixes(part)
        if not plain.startswith(("echo", "printf")) or "<<" in part:
            continue
        words = words_of(plain)
        cut = _redirections_start(words)
        operator = words[cut] if cut < len(words) else ""
        written = [p for p in redirect_targets(part) if p != "/dev/null"]
        if words[0] not in ("echo", "printf") or len(written) != 1 or not re.match(r"^1?>", operator) \
                or any(_REDIRECT_WORD.match(word) for word in words[1:cut]):
            continue  # a `>` among the words (quoted, or a redirection in the middle): not read
        text = rebuild.printed_text(words[:cut])
        if text is None:
            continue  # named as not rebuilt with the step's other writes
        if operator.lstrip("1").startswith(">>"):
            found.edits += rebuild.append_text(rel(written[0]), text, "redirect")
        else:
            found.edits += rebuild.write_whole(views, rel(written[0]), text, "redirect")


def _script_file_edits(step: Step, found: _Rebuilt, views: rebuild.Views, rel: Any) -> None:
    """A Python script written before (``cat <<'EOF' > fix.py``, its whole text seen) and run now
    (``python fix.py``) that rewrites one file of the repository: its replacements of literals
    (``content.replace('old', 'new')``), as a script in a here-document is read."""
    targets = list(dict.fromkeys(rel(p) for p, how in step.writes if how == "script" and p))
    if len(targets) != 1 or any(edit.path == targets[0] for edit in found.edits) \
            or any(path == targets[0] for path, _ in found.unrecovered):
        return
    for part in segments(step.command):
        plain = without_prefixes(part)
        run = script_run(plain, words_of(plain))
        if run is None or not run.script or not run.script.endswith(".py"):
            continue
        lines = views.seen_whole(rel(run.script))
        if lines is None:
            return  # not seen whole: what it does is not known
        pairs = rebuild.script_replacements("\n".join(lines))
        for old, new in pairs:
            found.edits += rebuild.replace_text(views, targets[0], old, new, "script")
        return


def _account(found: _Rebuilt, rel: Any, roots: tuple[str, ...]) -> None:
    """The files a patch names only in its text become the step's writes; a write no edit
    rebuilt is named as not rebuilt."""
    written = {rel(path) for path, _ in found.writes if path}
    for edit in found.edits:  # a patch names its files only in its text
        if edit.path not in written:
            written.add(edit.path)
            found.writes.append((edit.path, "create" if edit.created else "patch"))
    covered = {e.path for e in found.edits} | {path for path, _ in found.unrecovered}
    for path, how in found.writes:
        name = rel(path)
        if name and name not in covered and how in ("sed", "script", "redirect", "patch") \
                and not repo_relative(os.path.normpath(path), roots)[1]:
            found.unrecovered.append((name, "a script's change" if how == "script" else
                                     "a redirection whose text is not in the log" if how == "redirect" else
                                     "a patch" if how == "patch" else "an edit that is not rebuilt"))


def _editor_edit(step: Step, found: _Rebuilt, editor: dict[str, Any], views: rebuild.Views, rel: Any) -> None:
    command = str(editor.get("command") or "")
    path = rel(str(editor.get("path") or views.open_file or ""))
    if command in ("view", "open"):
        views.open_file = path
        rebuild.observe_window(views, path, step.output)
        return
    if not path:
        return
    views.open_file = path
    if command == "str_replace":
        old, new = editor.get("old_str"), editor.get("new_str")
        if isinstance(old, str) and isinstance(new, str):
            found.edits += rebuild.replace_text(views, path, old, new, "editor")
    elif command in ("create", "write"):
        text = editor.get("file_text") if command == "create" else editor.get("content")
        found.edits += rebuild.write_whole(views, path, str(text or ""), "editor")
    elif command == "insert":
        text, at = editor.get("new_str") or editor.get("text"), editor.get("insert_line")
        if isinstance(text, str) and isinstance(at, int):
            edits, missed = rebuild.line_edit(views, path, at + 1, at, text, "editor")
            found.edits += edits or [Edit(path, (), tuple(text.split("\n")), "editor", at + 1, views.enclosing_test(path, at))]
    elif command == "append":  # SWE-agent's windowed insert: where it lands is not recorded
        text = str(editor.get("text") or "")
        found.edits.append(Edit(path, (), tuple(text.split("\n")), "editor"))
    elif command == "line_edit":
        first, last, text = editor.get("first"), editor.get("last"), str(editor.get("text") or "")
        if isinstance(first, int) and isinstance(last, int):
            edits, missed = rebuild.line_edit(views, path, first, last, text, "editor")
            found.edits += edits
            if missed:
                found.unrecovered.append((path, missed))
    if command == "line_edit":
        rebuild.observe_window(views, path, step.output)  # the window the editor shows after the edit
