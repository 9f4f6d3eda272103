"""Which files a folder of runs holds: the walk ``batch``, ``compare``, ``review`` and ``drift`` share.

Like ruff's file discovery:

- a file named on the command line is always read (even when an exclude pattern matches it);
- folders are walked recursively for ``.yaml``, ``.yml`` and ``.json`` files, skipping hidden
  files and folders, virtual environments (any folder holding ``pyvenv.cfg``), ``node_modules``,
  ``__pycache__``, ``site-packages``, and well-known files that are never runs
  (``package.json``, ``tsconfig.json``, lock files, CI and compose configurations);
- ``.gitignore`` files are respected (those of the folder's repository above it and those met on
  the way down), matched with ``pathspec``'s implementation of Git's rules; ``--no-respect-gitignore``
  turns that off;
- ``--exclude`` patterns (gitignore syntax, relative to the folder given) skip more, and
  ``--include`` patterns, when given, keep only the files that match one of them;
- the reports being written (``--output``, or the file standard output is redirected to) and
  JSON reports procjudge wrote earlier (``"schema": "procjudge.…"``) are never read as runs.

The result is sorted and free of duplicates, so the same tree always gives the same order.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .safe_io import is_report

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

RECORD_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".jsonl.zst", ".ndjson.zst")  # many runs a file
RUN_SUFFIXES = (".yaml", ".yml", ".json", *RECORD_SUFFIXES)
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages"})
# Files with run suffixes that are never runs (the default exclude list; --exclude extends it).
DEFAULT_EXCLUDE = (
    "package.json", "package-lock.json", "composer.json", "tsconfig*.json", "jsconfig.json",
    "pnpm-lock.yaml", "yarn.lock", ".pre-commit-config.yaml", "docker-compose*.yml",
    "docker-compose*.yaml", "compose.yaml", "compose.yml", "mkdocs.yml", "mkdocs.yaml",
    ".gitlab-ci.yml", "codecov.yml", ".readthedocs.yaml", "environment.yml", "conda.yaml",
)


class Discovery:
    """The rules of one walk: extra excludes, includes, .gitignore, and files never to read."""

    def __init__(self, exclude: Sequence[str] = (), include: Sequence[str] = (), respect_gitignore: bool = True,
                 skip: Iterable[str] = ()) -> None:
        from pathspec import GitIgnoreSpec

        self.exclude = GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDE, *exclude])
        self.include = GitIgnoreSpec.from_lines(list(include)) if include else None
        self.respect_gitignore = respect_gitignore
        self.skip = {os.path.realpath(path) for path in skip}

    def files(self, targets: Iterable[str]) -> list[str]:
        """Run files under the given folders, files and globs, sorted, without duplicates."""
        found: set[str] = set()
        for target in targets:
            if os.path.isdir(target):
                found.update(self._walk(target))
            elif any(ch in target for ch in "*?[") and not os.path.lexists(target):  # a file named [x].yaml is a file
                found.update(p for p in glob.glob(target, recursive=True)
                             if os.path.isfile(p) and p.endswith(RUN_SUFFIXES) and self._kept(p, p))
            else:
                found.add(target)  # named explicitly: always read (a missing file is reported when read)
        if self.skip:  # realpath costs a system call per path component: only when something is skipped
            found = {p for p in found if os.path.realpath(p) not in self.skip}
        return sorted(found)

    def _kept(self, path: str, relative: str) -> bool:
        relative = relative.replace(os.sep, "/")
        if self.exclude.match_file(relative) or self.exclude.match_file(os.path.basename(path)):
            return False
        return self.include is None or self.include.match_file(relative)

    def _walk(self, top: str) -> Iterable[str]:
        # (folder, spec) of every .gitignore in force: the repository's above `top`, then those met below it
        inherited = _gitignores_above(top) if self.respect_gitignore else []
        specs: dict[str, list[tuple[str, GitIgnoreSpec]]] = {os.path.normpath(top): inherited}
        for root, dirs, files in os.walk(top):
            root = os.path.normpath(root)
            active = specs.pop(root, [])
            if self.respect_gitignore and ".gitignore" in files:
                spec = _read_gitignore(os.path.join(root, ".gitignore"))
                if spec is not None:
                    active = [*active, (root, spec)]
            kept_dirs = []
            for name in sorted(dirs):
                path = os.path.join(root, name)
                relative = os.path.relpath(path, top)
                if (name.startswith(".") or name in SKIPPED_FOLDERS or os.path.exists(os.path.join(path, "pyvenv.cfg"))
                        or _ignored(active, path, folder=True) or self.exclude.match_file(relative.replace(os.sep, "/") + "/")):
                    continue
                kept_dirs.append(name)
                specs[os.path.normpath(path)] = active
            dirs[:] = kept_dirs
            for name in files:
                if name.startswith(".") or not name.endswith(RUN_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                if _ignored(active, path, folder=False) or not self._kept(path, os.path.relpath(path, top)):
                    continue
                if name.endswith(".json") and is_report(path):
                    continue
                yield path


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a gitignore pattern (``!`` alone, a trailing backslash), or None."""
    from pathspec import GitIgnoreSpec

    try:
        GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # noqa: BLE001 - pathspec's GitIgnorePatternError and whatever it raises
        return f"{pattern[:200]!r} is not a gitignore pattern ({str(exc)[:200]})"
    return None


def _read_gitignore(path: str) -> GitIgnoreSpec | None:
    """A .gitignore's rules; a line that is no pattern is passed over, as Git passes it over."""
    from pathspec import GitIgnoreSpec

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1_000_000).splitlines()
    except OSError:
        return None
    try:
        return GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - one bad line: keep the others
        return GitIgnoreSpec.from_lines([line for line in lines if pattern_problem(line) is None])


def _gitignores_above(top: str) -> list[tuple[str, GitIgnoreSpec]]:
    """The .gitignore files between the repository root (the nearest folder above ``top`` with a
    ``.git``) and ``top``'s parent, outermost first; none when ``top`` is in no repository."""
    folder = os.path.dirname(os.path.abspath(top))
    chain = []
    while True:
        chain.append(folder)
        if os.path.exists(os.path.join(folder, ".git")):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return []
        folder = parent
    found = []
    for folder in reversed(chain):
        spec = _read_gitignore(os.path.join(folder, ".gitignore")) if os.path.isfile(os.path.join(folder, ".gitignore")) else None
        if spec is not None:
            found.append((folder, spec))
    return found


def _ignored(active: list[tuple[str, GitIgnoreSpec]], path: str, folder: bool) -> bool:
    """Whether the .gitignore files in force ignore ``path`` (the last match wins, as in Git,
    and a deeper file's negation can re-include what a shallower one ignored)."""
    verdict = False
    absolute = os.path.abspath(path)
    for base, spec in active:
        relative = os.path.relpath(absolute, os.path.abspath(base)).replace(os.sep, "/")
        if relative.startswith(".."):
            continue
        result = spec.check_file(relative + ("/" if folder else ""))
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def discover(targets: Iterable[str], exclude: Sequence[str] = (), include: Sequence[str] = (),
             respect_gitignore: bool = True, skip: Iterable[str] = ()) -> list[str]:
    """Run files under the given folders, files and globs (see the module docstring)."""
    return Discovery(exclude, include, respect_gitignore, skip).files(targets)


def empty_globs(targets: Iterable[str]) -> list[str]:
    """The globs among the targets that match no file at all (a typo in CI would pass unseen)."""
    return [t for t in targets if not os.path.lexists(t) and any(ch in t for ch in "*?[")
            and not any(os.path.isfile(p) for p in glob.iglob(t, recursive=True))]


def nothing_found(targets: Iterable[str | os.PathLike[str]]) -> str:
    """What a command that found no run file says: every suffix discovery reads."""
    plain = ", ".join(s for s in RUN_SUFFIXES if not s.endswith((".gz", ".zst")))
    return f"no run files ({plain}; the last two also .gz or .zst) found in {' '.join(map(str, targets))}"
