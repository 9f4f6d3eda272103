"""The repository's history an agent read beyond the task's base (``git log --all``, ``git show``
of a later commit), and how much of what it printed reached the submission.
"""

from __future__ import annotations

import re

from .. import diffs
from ..model import HistoryRead
from .classify import segments, without_prefixes
from .edits import words_of
from .steps import Step

_HEAD_RELATIVE = re.compile(r"^(?:HEAD|@)(?:[~^]\d*)*(?::.*)?$|^(?:HEAD|@)\{[^}]*\}$")
_HISTORY_FLAGS = ("--all", "--branches", "--remotes", "--tags", "--glob", "--reflog")


def history_read(command: str) -> tuple[str, str | None] | None:
    """(the simple command, the revision it names) when a command reads the repository history
    beyond the checked-out base: ``git log --all`` (or ``--branches``, ``--remotes``...), the
    reflog, ``git fetch``/``pull``, or ``git show``/``diff``/``checkout``/``restore --source``/
    ``cherry-pick``/``merge`` of a revision that is not HEAD or its ancestors. None otherwise."""
    for part in segments(command):
        words = words_of(without_prefixes(part))
        if len(words) < 2 or words[0] != "git":
            continue
        verb, rest = words[1], [w for w in words[2:]]
        options = [w for w in rest if w.startswith("-")]
        operands = [w for w in rest if not w.startswith("-")]
        if verb == "reflog" or verb in ("fetch", "pull"):
            return part.strip()[:200], None
        if verb == "log" and any(o.split("=")[0] in _HISTORY_FLAGS for o in options):
            return part.strip()[:200], None
        if "--" in rest:
            operands = [w for w in rest[:rest.index("--")] if not w.startswith("-")]
        if verb == "restore":
            operands = _restore_source(rest, options)
        revision = _later_revision(operands) if verb in ("show", "diff", "checkout", "restore", "cherry-pick", "merge",
                                                         "log") else None
        if revision is not None:
            return part.strip()[:200], revision
    return None


def _restore_source(rest: list[str], options: list[str]) -> list[str]:
    """The revision ``git restore --source`` reads from, as the only operand."""
    source = next((o.split("=", 1)[1] for o in options if o.startswith("--source=")), None)
    if source is None and "--source" in rest and rest.index("--source") + 1 < len(rest):
        source = rest[rest.index("--source") + 1]
    return [source] if source else []


def _later_revision(operands: list[str]) -> str | None:
    """The first revision named (ranges and ``REV:path`` included) beyond the checked-out base."""
    for operand in operands:
        for revision in re.split(r"\.\.\.?", operand):
            revision = revision.split(":", 1)[0]
            if _revision_beyond_base(revision):
                return revision
    return None


def _revision_beyond_base(word: str) -> bool:
    """A word that names a commit that may lie beyond the base: a hash, or a remote branch or ref
    (a bare word may be a branch or a file, and is not taken for a revision)."""
    if not word or _HEAD_RELATIVE.match(word) or word in (".", "-"):
        return False
    if re.fullmatch(r"[0-9a-f]{7,40}", word):
        return True
    return word.startswith(("origin/", "upstream/", "refs/"))


def _added_lines(diff: str) -> dict[str, set[str]]:
    """path -> the non-trivial lines a diff adds (stripped, at least 12 characters)."""
    found: dict[str, set[str]] = {}
    for patch in diffs.read(diff):
        for line in patch.added:
            text = line.strip()
            if len(text) >= 12 and re.search(r"[A-Za-z]", text):
                found.setdefault(patch.path, set()).add(text)
    return found


def history_evidence(step: Step, command: str, submission: str | None) -> int:
    """How many non-trivial lines the submitted diff adds that the history read printed: the added
    lines of a commit or diff it showed, or the lines of a file it showed at a revision
    (``git show REV:path``). Lines the submission also removes (moved code) do not count. A
    checkout prints nothing, so it is shown as a read and never counted as evidence."""
    if not submission:
        return 0
    submitted = set().union(*_added_lines(submission).values()) if submission else set()
    removed = {line.strip() for patch in diffs.read(submission) for line in patch.removed}
    whole_file = re.search(r"\bshow\s+\S+:\S", command) is not None
    shown = ({line.strip() for line in step.output.split("\n")} if whole_file
             else {line.strip() for patch in diffs.read(step.output) for line in patch.added})
    return len((shown & submitted) - removed)


_HASH = re.compile(r"\b[0-9a-f]{7,40}\b")


def ancestors_shown(steps: list[Step]) -> frozenset[str]:
    """The commits the log shows to be the checked-out base or its ancestors: the hashes a plain
    ``git log`` (HEAD's history, no ``--all``) or ``git blame`` printed."""
    found: set[str] = set()
    for step in steps:
        if not step.shell or "git" not in step.command:
            continue
        for part in segments(step.command):
            words = words_of(without_prefixes(part))
            if len(words) < 2 or words[0] != "git" or words[1] not in ("log", "blame"):
                continue
            if words[1] == "log" and (any(w.split("=")[0] in _HISTORY_FLAGS for w in words[2:])
                                      or any(_revision_beyond_base(w) for w in words[2:] if not w.startswith("-"))):
                continue  # another branch's history, or from a named revision: not HEAD's ancestry
            found.update(_HASH.findall(step.output[:2_000_000]))
            break
    return frozenset(found)


def _is_ancestor(revision: str | None, ancestors: frozenset[str]) -> bool:
    if not revision or not re.fullmatch(r"[0-9a-f]{7,40}", revision):
        return False
    return any(known.startswith(revision) or revision.startswith(known) for known in ancestors)


def history_reads(group: list[Step], submission: str | None,
                   ancestors: frozenset[str] = frozenset()) -> list[HistoryRead]:
    """The commands that read the repository's history beyond the task's base, each with how many
    lines it printed reached the submission; a commit the log showed in HEAD's own history
    (``ancestors``) is the base's past, not beyond it."""
    reads = []
    for step in group:
        found = history_read(step.command) if step.editor is None else None
        if found is not None and _is_ancestor(found[1], ancestors):
            continue
        if found is not None:
            command, revision = found
            reads.append(HistoryRead(command=command, revision=revision,
                                     lines_in_submission=history_evidence(step, command, submission),
                                     submission_lines=len(set().union(*_added_lines(submission or "").values()))))
    return reads
