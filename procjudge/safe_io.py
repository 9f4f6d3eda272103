"""Writing files without ever losing one: atomic replacement, and no writing onto an input.

A report is written to a temporary file beside its target and renamed over it only when
complete, so a failure, Ctrl-C or SIGTERM leaves either the old file or the new one, never half a
file; and renaming replaces the directory entry, so a target that is a hard link or a symlink to
an input never truncates that input. Inputs are recognised by device and inode, not by path.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any


class WriteError(Exception):
    """A target that cannot be written: one line saying why."""


def same_file_as(target: str, inputs: Iterable[str]) -> str | None:
    """The input that ``target`` is (same device and inode: a hard link, a symlink, another path
    to it), or None."""
    try:
        mine = os.stat(target)
    except OSError:
        return None
    for path in inputs:
        try:
            theirs = os.stat(path)
        except OSError:
            continue
        if (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino):
            return path
    return None


REPORT_MARKS = (b'"schema": "procjudge.', b'"schema":"procjudge.')


def _head(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(200)
    except OSError:
        return None


def is_report(path: str) -> bool:
    """Whether a file is a JSON report procjudge wrote: its first bytes name a procjudge schema."""
    head = _head(path)
    return head is not None and any(mark in head for mark in REPORT_MARKS)


def is_own_report(path: str) -> bool:
    """Whether an existing file is empty or a report procjudge wrote, so that writing over it
    loses no run."""
    head = _head(path)
    return head is not None and (not head.strip() or any(mark in head for mark in REPORT_MARKS))


def check_target(target: str, inputs: Iterable[str], option: str = "--output", creates_folder: bool = False) -> str | None:
    """Why ``target`` cannot be written (an input, a folder, a missing folder unless the writer
    ``creates_folder``), or None."""
    clash = same_file_as(target, inputs)
    if clash is not None:
        return f"{option} {target} is the input file {clash}; refusing to overwrite it"
    if os.path.isdir(target):
        return f"{option} {target} is a folder; give a file name"
    folder = os.path.dirname(os.path.abspath(target))
    if not creates_folder and not os.path.isdir(folder):
        return f"{option} {target}: the folder {folder} does not exist"
    return None


def _temporary(target: str) -> tuple[int, str]:
    """A new hidden temporary file beside ``target`` (same folder, so a rename or a link is
    atomic): its descriptor and path; WriteError when the folder cannot be written."""
    folder = os.path.dirname(os.path.abspath(target)) or "."
    try:
        return tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    except OSError as exc:
        raise WriteError(f"{target}: cannot write: {exc.strerror or exc}") from None


def write_new(target: str, data: bytes) -> bool:
    """Write ``data`` at ``target`` whole, only where no file is: True when written, False when
    the name is taken (nothing is replaced). A hard link from a temporary file publishes it in one
    step; a file system without hard links gets an exclusive creation instead. Two writers racing
    for one name: one wins, the other is told. WriteError when it cannot be written."""
    fd, temporary = _temporary(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode_for(target))
        try:
            os.link(temporary, target)
            return True
        except FileExistsError:
            return False
        except OSError:
            try:
                exclusive = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode_for(target))
            except FileExistsError:
                return False
            with os.fdopen(exclusive, "wb") as handle:
                handle.write(data)
            return True
    except OSError as exc:
        raise WriteError(f"{target}: cannot write: {exc.strerror or exc}") from None
    finally:
        _remove(temporary)


@contextlib.contextmanager
def atomic_write(target: str, mode: str = "w", newline: str | None = None) -> Iterator[IO[Any]]:
    """A file handle whose content replaces ``target`` only when the block completes; on any
    error or interrupt the temporary file is removed and the target is left as it was."""
    fd, temporary = _temporary(target)
    try:
        opened = os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding="utf-8", newline=newline)
        with opened as handle:
            yield handle
        os.chmod(temporary, mode_for(target))
        os.replace(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise WriteError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _remove(temporary)
        raise


def mode_for(target: str) -> int:
    """The permissions the written file gets: those of the file it replaces, else what creating
    it would give (0666 less the umask), not the temporary file's private 0600."""
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
