"""Project configuration: ``[tool.procjudge]`` in ``pyproject.toml``, or a ``procjudge.toml``.

Found as ruff and pytest find theirs: from the working folder upward, the first folder holding a
``procjudge.toml`` (its top level is the table) or a ``pyproject.toml`` with a
``[tool.procjudge]`` table wins; a ``pyproject.toml`` without one is passed over. ``--config
FILE`` names the file instead and ``--isolated`` ignores any.

Precedence, key by key: the command line, then the configuration, then the defaults. The
``[tool.procjudge.policy]`` table holds what a ``--policy`` file holds; a ``--policy`` file is
merged over it (``procjudge policy show --sources`` prints where each value came from).

    [tool.procjudge]
    format = "table"             # the default --format, where the command offers it
    fail_under = -10             # score and batch: any run below it fails
    fail_under_mean = 0          # batch: the mean process score below it fails
    fail_on = ["test_chasing", "checker_tampering"]
    exclude = ["fixtures/", "*.draft.yaml"]
    include = []
    respect_gitignore = true
    jobs = 0

    [tool.procjudge.policy.clamp]
    min = -30
"""

from __future__ import annotations

import math
import os
import sys
from typing import Annotated, Any

import msgspec


class ConfigError(Exception):
    """A configuration file that cannot be read or has a wrong key or value."""


# The bounds of the options, declared once: the command line's options and the configuration's
# keys are both checked against these, so that a value refused on the command line is refused in
# a configuration file too (jobs = 100000 would start 100,000 workers; fail_under = nan would pass
# every run).
MAX_JOBS = 256
Jobs = Annotated[int, msgspec.Meta(ge=0, le=MAX_JOBS)]
Pattern = Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The ``[tool.procjudge]`` table; every key optional."""

    format: str | None = None
    fail_under: float | None = None
    fail_under_mean: float | None = None
    fail_on: list[str] = []
    exclude: list[Pattern] = []
    include: list[Pattern] = []
    respect_gitignore: bool = True
    jobs: Jobs | None = msgspec.field(default=None)
    strict: bool = False  # every warning about an input is an error (exit 2), as --strict
    policy: dict[str, Any] | None = None
    path: str | None = None  # where it was read from (set by procjudge, not by the file)

    def __post_init__(self) -> None:
        for name in ("fail_under", "fail_under_mean"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, got {value} (NaN or infinity would disable the gate)")
        from .discovery import pattern_problem

        for name in ("exclude", "include"):
            for pattern in getattr(self, name):
                problem = pattern_problem(pattern)
                if problem:
                    raise ValueError(f"{name}: {problem}")

    def where(self, key: str) -> str:
        """How a message names a key of this configuration: ``fail_under (from FILE)``."""
        return f"{key} (from {self.path})" if self.path else key


NONE = Config()


def _toml(path: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    from .locate import read_regular

    try:
        data = read_regular(path, 1_000_000)
        document: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
        return document
    except (OSError, ValueError, OverflowError) as exc:  # TOMLDecodeError is a ValueError
        raise ConfigError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None


def find(start: str | None = None) -> str | None:
    """The configuration file that applies in ``start`` (default: the working folder), or None."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        own = os.path.join(folder, "procjudge.toml")
        if os.path.isfile(own):
            return own
        project = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(project):
            try:
                tool = _toml(project).get("tool", {})
                if isinstance(tool, dict) and "procjudge" in tool:
                    return project
            except ConfigError:
                pass  # somebody else's broken pyproject.toml is not ours to report
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load(path: str | None = None, *, isolated: bool = False) -> Config:
    """The configuration in force: from ``path``, else the one found upward; ``NONE`` if isolated."""
    if isolated:
        return NONE
    found = path if path is not None else find()
    if found is None:
        return NONE
    document = _toml(found)
    if os.path.basename(found) == "pyproject.toml":
        tool = document.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{found}: `tool` must be a table ([tool.procjudge]), got {type(tool).__name__}")
        table = tool.get("procjudge", {})
    else:
        table = document
    if not isinstance(table, dict):
        raise ConfigError(f"{found}: [tool.procjudge] must be a table")
    where = "[tool.procjudge]" if os.path.basename(found) == "pyproject.toml" else "(top level)"
    try:
        config = msgspec.convert({**table, "path": found}, Config)
    except msgspec.ValidationError as exc:
        message, _, at = str(exc).replace("`", "").rpartition(" - at ")
        key = at.removeprefix("$").lstrip(".") if message else ""
        message = (message or str(exc)).replace("`", "")
        if message.startswith("Object contains unknown field"):
            import difflib

            name = message.rsplit(" ", 1)[-1]
            close = difflib.get_close_matches(name, [f.name for f in msgspec.structs.fields(Config) if f.name != "path"], n=1)
            message = f"unknown key {name}" + (f" (did you mean {close[0]}?)" if close else "")
        raise ConfigError(f"{found}: {where} {key + ': ' if key else ''}{message}") from None
    return config
