"""procjudge: judge how a coding agent iterates, not just where it ends up.

The library API; the command line is one client of it::

    from procjudge import load_run, judge
    verdict = judge(load_run("run.yaml"))
    print(verdict.process_score, verdict.tier)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .judge import Item, Verdict, judge
from .loading import LoadError, load_run
from .loop import Gate
from .policy import DEFAULT as DEFAULT_POLICY
from .policy import Policy, PolicyError, load_policy

__all__ = [
    "DEFAULT_POLICY", "FramesError", "Gate", "Item", "LoadError", "Policy", "PolicyError", "Verdict", "__version__",
    "frames", "judge", "load_policy", "load_run",
]


def __getattr__(name: str) -> object:
    """``procjudge.frames`` on first use (it brings pandas in only when called)."""
    if name in ("frames", "FramesError"):
        from . import dataframes

        found: object = getattr(dataframes, name)
        return found
    raise AttributeError(f"module 'procjudge' has no attribute {name!r}")
